"""Gavel max-min fairness on a homogeneous cluster (Narayanan et al., OSDI'20), non-clairvoyant.

**Rounds.** Every ``round_length`` seconds (default 360 s, Gavel's round) the policy solves the
heterogeneity-agnostic max-min problem, which on one GPU type is

    max min_j g_j X_j / w_j   subject to   sum_j g_j X_j <= M,  0 <= X_j <= 1

(X_j: fraction of time job j runs; w_j = 1 unless ``weighted``). Its closed form is water-filling
(:func:`water_fill`): g_j X_j = min(g_j, lambda w_j) with sum_j min(g_j, lambda w_j) = M (every
X_j = 1 when the jobs fit together). Each job's priority is

    p_j = X_j / (fraction of rounds received),

the fraction received being measured in time, executed_j / (t - a_j) (this equals rounds
received / rounds active when jobs arrive at round boundaries). A job that has not run yet (in
particular a new job) has priority +inf. Jobs are picked by descending priority, larger g_j first
among ties, then earlier arrival, then smaller id, skipping jobs that do not fit, until the GPUs
are full; running jobs left out are preempted. A job picked again keeps its GPUs (lease
extension: no restart).

A round starts at the first decision and afterwards at the first decision at or after the
previous round's end; the policy asks to be woken at the round end whenever the active jobs ask
for more GPUs than the cluster has (otherwise a round would change nothing).

**Between rounds** leases hold: at an arrival or a completion the running jobs are listed first
(none is preempted), then the waiting jobs by the round's priorities, a job that arrived since
the round started counting as new (priority +inf). Idle GPUs are thus filled at once; no round
starts early.

A round costs O(J log J). Between rounds the keys hold, so the waiting jobs stay sorted
from one decision to the next (:mod:`asrpt.policies._incremental`): a decision re-sorts only the
R running jobs and re-inserts the k jobs that changed, O(R log R + k log W) plus the O(A) list
handed to the engine (it was O(A log A) with a key call per job).
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Sequence

from .._validation import Interval, validate_params
from ..errors import InvalidParameterError
from ..sizes import exact_div, exact_mul
from ._incremental import WaitingOrder, round_order
from .base import Decision, Policy, register_policy

__all__ = ["Gavel", "water_fill"]

_INF = math.inf


@validate_params({
    "demands": [list, tuple],
    "capacity": [Interval(Real, 0, None, closed="left")],
    "weights": [None, list, tuple],
})
def water_fill(demands: Sequence, capacity, weights: Sequence | None = None):
    """Max-min fair shares: ``share_j = min(demand_j, level * weight_j)`` with the shares summing
    to ``capacity`` (exact for ints and Fractions).

    Parameters
    ----------
    demands : sequence of number > 0
        GPU demands g_j.
    capacity : number >= 0
        GPUs to share, M.
    weights : sequence of number > 0 or None
        Weights w_j (None: all 1).

    Returns
    -------
    level : number
        The water level lambda (``inf`` when the demands fit together: every share is the full
        demand).
    shares : list
        g_j X_j for each job, in input order.

    Raises
    ------
    InvalidParameterError
        Non-positive demands or weights, or lengths that differ.

    Examples
    --------
    Demands 1, 2 and 4 on 4 GPUs: the 1-GPU job gets its demand, the others 3/2 each.

    >>> level, shares = water_fill([1, 2, 4], 4)
    >>> level, [str(s) for s in shares]
    (Fraction(3, 2), ['1', '3/2', '3/2'])
    """
    n = len(demands)
    w = [1] * n if weights is None else list(weights)
    if len(w) != n or not all(d > 0 for d in demands) or not all(x > 0 for x in w):
        raise InvalidParameterError(
            "water_fill needs positive demands and positive weights of the same length. "
            f"Got demands={list(demands)!r}, weights={weights!r} instead.")
    return _water_fill(demands, capacity, weights)


def _water_fill(demands: Sequence, capacity, weights: Sequence | None):
    """water_fill without validation (the policy's rounds: demands and weights are a valid
    instance's)."""
    n = len(demands)
    w = [1] * n if weights is None else list(weights)
    if weights is None:   # demand_i / 1 is demand_i: sort by it without the exact division
        order = sorted(range(n), key=demands.__getitem__)
    else:
        order = sorted(range(n), key=lambda i: exact_div(demands[i], w[i]))
    left, weight = capacity, sum(w)
    shares: list = [None] * n
    level = _INF
    open_ = True    # level == inf, tested once per change of level (a Fraction's == is slow)
    for i in order:
        if open_ and demands[i] * weight <= left * w[i]:  # demand_i / w_i <= left / weight
            shares[i] = demands[i]
            left -= demands[i]
            weight -= w[i]
            continue
        if open_:
            level = exact_div(left, weight)
            open_ = level == _INF
        shares[i] = level if w[i] == 1 else level * w[i]
    return level, shares


def _water_level(demands: Sequence, capacity):
    """The unweighted water-filling of :func:`_water_fill` as ``(level, full)``: a job's share is
    its demand if that is at most ``full`` (None: no job's is), else ``level``. The loop of
    :func:`_water_fill` gives the jobs in increasing demand their demand while
    ``demand * weight <= left`` holds; jobs of equal demand all pass or all fail (after one
    passes, both sides shrink by the same demand), so the jobs served in full are those up to a
    demand value, and every share is decided by the job's demand alone.

    >>> _water_level([1, 2, 4], 4), _water_level([1, 1], 4)
    ((Fraction(3, 2), 1), (inf, 1))
    """
    left, weight, full = capacity, len(demands), None
    for d in sorted(demands):
        if d * weight > left:
            return exact_div(left, weight), full
        left -= d
        weight -= 1
        full = d
    return _INF, full


@register_policy("gavel")
class Gavel(Policy):
    """Gavel's max-min fairness (LAS) policy with its round mechanism, one GPU type.

    Parameters
    ----------
    round_length : float > 0
        Round length in seconds (default 360, Gavel's).
    weighted : bool
        Use the job weights w_j in the water-filling (default False: equal weights).

    Attributes
    ----------
    rounds_ : int
        Rounds started so far.
    round_end_ : number or None
        When the current round ends.
    level_ : number or None
        The water level lambda of the current round (inf without contention).

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> simulate(two_server_instance, "gavel").completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """

    parameter_constraints = {
        "round_length": [Interval(Real, 0, None, closed="neither")],
        "weighted": ["boolean"],
    }
    preemptive = True
    clairvoyant = False
    work_conserving = True

    def __init__(self, *, round_length: float = 360.0, weighted: bool = False):
        self.round_length = round_length
        self.weighted = weighted

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._total_gpus = cluster.total_gpus
        length = self.round_length  # an integral float as an int, so exact runs stay exact
        self._length = int(length) if isinstance(length, float) and length.is_integer() else length
        self.rounds_ = 0
        self.round_end_ = None
        self.level_ = None
        self._keys: dict[int, tuple] = {}
        self._waiting = WaitingOrder(track_running=True)  # active jobs in key order, kept between decisions

    @staticmethod
    def _new_key(job) -> tuple:
        return (-_INF, -job.gpus, job.arrival, job.key)

    def _new_round(self, view) -> tuple[list, list]:
        self.rounds_ += 1
        now = view.now
        self.round_end_ = now + self._length
        # (job, executed time): the running jobs in one pass, then the waiting ones (one pass too)
        rows = [(j, e) for j, e, _ in view.running_executed()]
        r = len(rows)
        rows += [(j, e) for j, _, e in view.waiting_progress()]
        weighted = self.weighted
        if weighted:
            level, shares = _water_fill([j.gpus for j, _ in rows], self._total_gpus, [j.weight for j, _ in rows])
        else:   # a share is the job's demand up to `full`, else the level: decided by the GPUs alone
            level, full = _water_level([j.gpus for j, _ in rows], self._total_gpus)
        self.level_ = level
        keys = {}
        # (share, GPUs) -> (X_j, float(X_j)): a round has few distinct ones (unweighted, GPUs ->
        # them: the share is the level itself, one object, or the job's own demand)
        fractions: dict = {}
        held: list = []
        waiting: list = []
        for part, out, at in ((rows[:r], held, 0), (rows[r:], waiting, r)):
            append = out.append
            for k, (j, executed) in enumerate(part, at):
                elapsed = now - j.arrival
                if not executed > 0 or not elapsed > 0:
                    key = keys[j.index] = (-_INF, -j.gpus, j.arrival, j.key)
                    append((key, j.index))
                    continue
                if weighted:
                    share = shares[k]
                    pair = (share, j.gpus)
                else:
                    pair = j.gpus
                xs = fractions.get(pair)
                if xs is None:
                    if not weighted:
                        share = level if full is None or j.gpus > full else j.gpus
                    x = exact_div(share, j.gpus)
                    xs = fractions[pair] = (x, float(x))
                if type(elapsed) is float:   # exact_mul(x, elapsed) of a float, without converting x again
                    priority = xs[1] * elapsed / executed   # and exact_div of a float: a float division
                else:
                    priority = exact_div(exact_mul(xs[0], elapsed), executed)  # X_j / (executed / elapsed)
                key = keys[j.index] = (-priority, -j.gpus, j.arrival, j.key)
                append((key, j.index))
        self._keys = keys
        held.sort()
        waiting.sort()
        return held, waiting

    def decide(self, view):
        self._waiting.note(view)
        if not view.running and not view.waiting:
            return Decision(())
        return round_order(self, view, self._new_key)

    def report(self) -> dict:
        return {"rounds": self.rounds_}
