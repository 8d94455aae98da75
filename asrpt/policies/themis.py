"""Themis finish-time fairness in a greedy Themis-style form (Mahajan et al., NSDI'20).

**Rounds.** Allocations are leases of ``round_length`` seconds (default 360 s, the round of the
Gavel and ElasticFlow proxies). A round starts at the first decision, and afterwards at the first
decision at or after the previous round's end; the policy asks the engine to wake it at the round
end (``Decision.wake_at``) whenever the active jobs ask for more GPUs than the cluster has (with
no contention a round would change nothing, and an idle cluster must not be woken forever).

**Finish-time fairness.** At a round at time t, with J active jobs and M GPUs, each job gets

    rho_j = [(t - a_j) + r_j / share_j] / [(t - a_j) + r_j / share_iso_j]

- r_j: remaining time (N^_j - n_j) tau*_j from ``predictor`` (default ``"oracle"``: the true
  remaining work, like Gavel's FTF policy, which is given the remaining steps; this baseline is
  clairvoyant by default). With another predictor an overdue job has r_j = 0 (rho_j = 1);
- share_j: the fraction of its time in the system that j has held its gang,
  executed_j / (t - a_j) (Gavel's "fraction of rounds received", measured in time): T_sh is the
  finish time if j keeps getting what it got so far. A job that has never run has share 0 and
  rho_j = +inf;
- share_iso_j = min(1, M / (J g_j)): its share of a cluster split evenly among the J jobs.

**Allocation.** Jobs are sorted by rho, worst (largest) first, ties to the earlier arrival, then
the smaller id. The worst ceil((1 - f) J) jobs (at least one; f = ``fairness_knob``, default 0.8) are offered
the GPUs first, in rho order, and may take them from anyone; the GPUs they leave go to the other
jobs in rho order, where a running job renews its lease before a waiting job is started (Themis
offers only the expired leases: jobs that are not offered are not preempted to serve each other).
With f = 0 every job is offered and the order is plain rho order. The engine fills the GPUs
greedily in that order (a job that does not fit is skipped) and preempts the running jobs left
out.

**Between rounds** the leases hold. At an arrival or a completion the policy lists the running
jobs first (none is preempted before its lease ends), then the waiting jobs in the round's
order; a job that arrived after the round started is ranked as it would have been at the round
(it has never run: rho = +inf, offered, after earlier never-run jobs). So GPUs freed by a
completion, or left idle, go at once to waiting jobs in that order (first fit), and an arrival
starts at once if it fits in the idle GPUs, else waits for the next round. Neither starts a new
round early.

Cost: as for Gavel (:mod:`asrpt.policies.gavel`), O(J log J) a round and, between rounds, an
incremental waiting order (:mod:`asrpt.policies._incremental`). Where every value is a float (or
an int a float holds), a round's rho values and sort are computed in numpy from the engine's
arrays (the same IEEE operations: the same order as the Python round, which exact runs take),
and the jobs are keyed by their places in that order, ints that stand for the Python round's
tuples (``Themis._round_arrays``).
"""

from __future__ import annotations

import math
from itertools import compress
from numbers import Real
from operator import not_

import numpy as np

from .._validation import Interval, validate_params
from ..sizes import exact_div, exact_mul, floaty
from ._incremental import WaitingOrder, round_order
from ._running import JobTable, running_inputs
from .base import Decision, PredictorPolicy, register_policy

__all__ = ["Themis", "finish_time_fairness"]

_INF = math.inf
# a numpy round's key spacing (_round_arrays): the slot after the never-run offered jobs holds
# the arrivals of the round, fewer than the jobs an instance may have
_SLOT = 1 << 32


def _rho(elapsed, executed, remaining, iso_share):
    """finish_time_fairness without validation (the policy's inner loop)."""
    if not remaining > 0:
        return 1
    if not executed > 0 or not elapsed > 0:
        return _INF
    if type(remaining) is float:
        # every quotient below is then a float division (exact_div's, or a float by a Fraction:
        # float by float): the same operations without the calls
        return (elapsed + remaining / (executed / elapsed)) / (elapsed + remaining / iso_share)
    share = exact_div(executed, elapsed)
    shared = elapsed + exact_div(remaining, share)
    isolated = elapsed + exact_div(remaining, iso_share)
    return exact_div(shared, isolated)


@validate_params({
    "elapsed": [Interval(Real, 0, None, closed="left")],
    "executed": [Interval(Real, 0, None, closed="left")],
    "remaining": [Interval(Real, 0, None, closed="left")],
    "iso_share": [Interval(Real, 0, 1, closed="right")],
})
def finish_time_fairness(elapsed, executed, remaining, iso_share):
    """rho = [elapsed + remaining / share] / [elapsed + remaining / iso_share], share =
    executed / elapsed (exact for ints and Fractions).

    ``remaining`` is in seconds of dedicated running. A job with no remaining time has rho 1; one
    that has never run (share 0) and has time left has rho = inf.

    Parameters
    ----------
    elapsed : number >= 0
        Time since arrival, t - a_j.
    executed : number >= 0
        Seconds the job has held its gang.
    remaining : number >= 0
        Remaining dedicated running time r_j.
    iso_share : number in (0, 1]
        share_iso_j = min(1, M / (J g_j)).

    Returns
    -------
    number

    Raises
    ------
    InvalidParameterError
        A negative time, or an isolated share outside (0, 1].

    Examples
    --------
    A job 10 s old that ran 5 s, with 10 s left and an isolated share of 1/2:
    T_sh = 10 + 10 / (1/2) = 30, T_iso = 10 + 10 / (1/2) = 30, so rho = 1.

    >>> finish_time_fairness(10, 5, 10, 0.5)
    1.0
    >>> from fractions import Fraction
    >>> finish_time_fairness(10, 2, 10, Fraction(1, 2))  # share 1/5: T_sh = 60, T_iso = 30
    2
    """
    return _rho(elapsed, executed, remaining, iso_share)


@register_policy("themis")
class Themis(PredictorPolicy):
    """Themis-style finish-time-fair rounds with leases (greedy form).

    Parameters
    ----------
    round_length : float > 0
        Lease (round) length in seconds (default 360).
    fairness_knob : float in [0, 1]
        f: the worst ceil((1 - f) J) jobs by rho (at least one) are offered the GPUs first
        (default 0.8; 0: plain rho order; 1: only the single worst job may preempt).
    predictor : str or Predictor
        Source of the remaining work (default ``"oracle"``: clairvoyant).

    Attributes
    ----------
    tracker_ : PredictionTracker
    rounds_ : int
        Rounds started so far.
    round_end_ : number or None
        When the current round's leases expire.

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> simulate(two_server_instance, "themis").completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """

    parameter_constraints = {
        "round_length": [Interval(Real, 0, None, closed="neither")],
        "fairness_knob": [Interval(Real, 0, 1, closed="both")],
        "predictor": "no_validation",
    }
    preemptive = True
    work_conserving = True

    def __init__(self, *, round_length: float = 360.0, fairness_knob: float = 0.8, predictor="oracle"):
        self.round_length = round_length
        self.fairness_knob = fairness_knob
        self.predictor = predictor

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._total_gpus = cluster.total_gpus
        self.rounds_ = 0
        self.round_end_ = None
        length = self.round_length  # an integral float as an int, so exact runs stay exact
        self._length = int(length) if isinstance(length, float) and length.is_integer() else length
        self._keys: dict[int, tuple] = {}   # job index -> its key at the current round
        self._waiting = WaitingOrder(track_running=True)  # active jobs in key order, kept between decisions
        self._table = JobTable()            # per-job arrays for the numpy round (_round_arrays)
        self._arrival_base = None           # a numpy round's int keys: _missing_key's base (else None)

    def _new_round(self, view) -> tuple[list, list]:
        self.rounds_ += 1
        now = view.now
        self.round_end_ = now + self._length
        runs = self._round_arrays(view, now)
        return runs if runs is not None else self._round_tuples(view, now)

    def _round_arrays(self, view, now):
        """:meth:`_round_tuples` in numpy (the same IEEE operations, so the same order), or None
        where the values are not all floats (exact runs: the caller keys the jobs in Python).
        The jobs are sorted by (-rho, arrival rank), the table's order of (arrival, key).

        The keys are ints that stand for the Python round's tuples ``(tier, -rho, arrival, id
        key)``: the k-th job in the round's order gets ``k * _SLOT`` (no tuples to build, and
        ints compare at once). A job that arrives during the round, keyed ``(0, -inf, arrival,
        id key)`` by the Python round, comes after every job keyed at the round that is offered
        and has never run (their arrivals and id keys come first in the engine's arrival order,
        which is the table's rank) and before every other one (-inf, tier 0), in its arrival
        order: :meth:`_missing_key` gives it its rank in the slot between those two places."""
        table = self._table
        if table.arrival_exact or not floaty(now):
            return None
        got = running_inputs(view, table, self.tracker_)
        executed_now = view.running_executed_arrays() if got is not None else None
        if executed_now is None:
            return None
        idx, done, _, stopping, preds = got
        executed = executed_now[1]
        state = np.where(stopping, 1, 2)
        # the waiting jobs' (index, done, executed): the engine's float64 copies, else made
        # from waiting_progress
        waiting = view.waiting_arrays() if view.waiting else None
        if waiting is None and view.waiting:
            rows = view.waiting_progress()
            w_done = np.array([d for _, d, _ in rows])
            w_executed = np.array([e for _, _, e in rows])
            if w_done.dtype.kind not in "fi" or w_executed.dtype.kind not in "fi":
                return None     # (an exact value: ints beyond int64, Fractions)
            waiting = (np.fromiter((j.index for j, _, _ in rows), dtype=np.intp, count=len(rows)),
                       w_done.astype(float), w_executed.astype(float))
        if waiting is not None:
            w_idx, w_done, w_executed = waiting
            idx = np.concatenate((idx, w_idx))
            done = np.concatenate((done, w_done))
            executed = np.concatenate((executed, w_executed))
            state = np.concatenate((state, np.zeros(len(w_idx), dtype=state.dtype)))
        n = len(idx)
        tau_star, gpus, rank = table.columns(idx)
        left = preds[idx] - done
        remaining = left * tau_star
        # share_iso = min(1, M / (J g)): the float of the exact quotient, as float(exact_div(...))
        iso = np.minimum(self._total_gpus / (n * gpus), 1.0)
        elapsed = now - table.arrival_f[idx]
        with np.errstate(divide="ignore", invalid="ignore"):
            neg = -((elapsed + remaining / (executed / elapsed)) / (elapsed + remaining / iso))
        neg[~((executed > 0) & (elapsed > 0))] = -_INF     # never ran: rho = inf
        overdue = ~((left > 0) & (remaining > 0))             # nothing left: rho = 1
        neg[overdue] = -1.0
        ranked = np.lexsort((rank, neg))
        offered = max(1, math.ceil(round((1 - self.fairness_knob) * n, 9)))
        rest = ranked[offered:]
        renewing = state[rest] == 2
        ranked = np.concatenate((ranked[:offered], rest[renewing], rest[~renewing]))
        never = int(np.count_nonzero(neg[ranked[:offered]] == -_INF))   # offered, never run: first in tier 0
        self._arrival_base = (never - 1) * _SLOT + 1 - table.n      # + a later arrival's rank (>= table.n)
        keys_in_order = list(range(0, n * _SLOT, _SLOT))
        jobs = idx[ranked].tolist()
        self._keys = dict(zip(jobs, keys_in_order))
        entries = list(zip(keys_in_order, jobs))
        held = (state[ranked] != 0).tolist()
        return list(compress(entries, held)), list(compress(entries, map(not_, held)))

    def _round_tuples(self, view, now) -> tuple[list, list]:
        """The round's keys in Python: ``(held, waiting)`` entries, each sorted (round_order)."""
        self._arrival_base = None
        n = len(view.running) + len(view.waiting)
        pred = self.tracker_.predicted
        total = self._total_gpus
        isos: dict = {}     # GPUs -> (iso, float(iso)): a round has few distinct GPU counts
        # (job, attained work, executed time, state: 2 running, 1 stopping, 0 waiting), the
        # running jobs in one pass
        rows = [(jv, done, executed, 1 if stopping else 2) for (jv, done, _, stopping), (_, executed, _)
                in zip(view.running_progress(), view.running_executed())]
        rows += [(jv, view.attained_work(jv), view.executed_time(jv), 0) for jv in view.waiting]
        ranked = []
        append = ranked.append
        for jv, done, executed, state in rows:
            left = pred[jv.index] - done
            if not left > 0:    # nothing left (an overdue prediction): rho = 1, as _rho gives
                append(((-1, jv.arrival, jv.key), jv.index, state))
                continue
            remaining = exact_mul(left, jv.tau_star)
            shares = isos.get(jv.gpus)
            if shares is None:
                iso = exact_div(total, n * jv.gpus)
                if iso > 1:
                    iso = 1
                shares = isos[jv.gpus] = (iso, float(iso))
            # (a float remaining divides by the float of the share: what dividing by a Fraction does)
            rho = _rho(now - jv.arrival, executed, remaining, shares[1] if type(remaining) is float else shares[0])
            append(((-rho, jv.arrival, jv.key), jv.index, state))
        ranked.sort()
        offered = max(1, math.ceil(round((1 - self.fairness_knob) * n, 9)))
        # keys (tier, -rho, arrival, id key): the offered jobs (tier 0) in rho order, then the
        # others with a running job renewing its lease (tier 1) before a waiting or stopping one
        # (tier 2); the running and the waiting entries come out sorted, tier by tier
        keys = {}
        held: list = []
        waiting: list = []
        for k, i, state in ranked[:offered]:
            key = keys[i] = (0,) + k
            (held if state else waiting).append((key, i))
        rest = ranked[offered:]
        for k, i, state in rest:
            if state == 2:
                key = keys[i] = (1,) + k
                held.append((key, i))
        for k, i, state in rest:
            if state != 2:
                key = keys[i] = (2,) + k
                (held if state else waiting).append((key, i))
        self._keys = keys
        return held, waiting

    def decide(self, view):
        self.tracker_.update(view)
        self._waiting.note(view)
        add = self._table.add
        for job in view.arrived:
            add(job)
        if not view.running and not view.waiting:
            return Decision(())
        return round_order(self, view, self._missing_key)

    def _missing_key(self, job):
        """The key of a job that arrived during the round (it has never run: rho = +inf,
        offered): ``(0, -inf, arrival, id key)``, or its int stand-in after a numpy round
        (:meth:`_round_arrays`)."""
        base = self._arrival_base
        if base is None:
            return (0, -_INF, job.arrival, job.key)
        return base + int(self._table.rank[job.index])

    def report(self) -> dict:
        return {"rounds": self.rounds_, **super().report()}
