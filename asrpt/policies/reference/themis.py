"""Plain Themis finish-time fairness with leases, greedy form (the reference copy of
:mod:`asrpt.policies.themis`).

**Rule.** Rounds start as Gavel's do (:mod:`asrpt.policies.reference.gavel`). At a round at time
``t`` with ``J`` active jobs on ``M`` GPUs each job gets

    rho_j = [(t - a_j) + r_j / share_j] / [(t - a_j) + r_j / share_iso_j]

(:func:`~asrpt.policies.themis.finish_time_fairness`): ``r_j = (N^_j - n_j) tau*_j`` the
predicted remaining time (``predictor``, the truth by default), ``share_j = executed_j / (t -
a_j)``, ``share_iso_j = min(1, M / (J g_j))``; ``rho_j = 1`` when nothing is left, ``+inf`` for a
job that has not run. Jobs are ranked by ``(-rho, arrival, id)``; the first ``max(1, ceil((1 -
f) J))`` (``f = fairness_knob``) are offered the GPUs (tier 0), then the running jobs that are
not stopping renew their leases (tier 1), then the rest (tier 2); the key is ``(tier, -rho,
arrival, id)`` and the round's order is every active job by key. Between rounds the running jobs
(not stopping) come first, then the others, each by the round's keys, a job that arrived since
the round started keyed ``(0, -inf, arrival, id)``. While the active jobs ask for more GPUs than
the cluster has, the policy asks to be woken at the round's end.

Examples
--------
>>> from asrpt.sim import simulate
>>> simulate(two_server_instance, ReferenceThemis()).completion_times
{'a': 4, 'b': 1, 'c': 3}
"""

from __future__ import annotations

import math

from ...sizes import exact_div, exact_mul, integral
from ..base import PredictorPolicy
from ..themis import Themis
from ._rounds import round_decision

__all__ = ["ReferenceThemis"]


def _rho(elapsed, executed, remaining, iso_share):
    """Finish-time fairness (exact for ints and Fractions)."""
    if not remaining > 0:
        return 1
    if not executed > 0 or not elapsed > 0:
        return math.inf
    share = exact_div(executed, elapsed)
    return exact_div(elapsed + exact_div(remaining, share), elapsed + exact_div(remaining, iso_share))


class ReferenceThemis(PredictorPolicy):
    """Themis-style finish-time-fair rounds, plainly (module docstring)."""

    name = "themis"
    parameter_constraints = Themis.parameter_constraints
    preemptive = True
    work_conserving = True

    def __init__(self, *, round_length: float = 360.0, fairness_knob: float = 0.8, predictor="oracle"):
        self.round_length = round_length
        self.fairness_knob = fairness_knob
        self.predictor = predictor

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._length = integral(self.round_length)   # (an integral float as an int: exact runs stay exact)
        self.rounds_ = 0
        self.round_end_ = None
        self._keys: dict = {}           # index -> key at the current round

    def _key(self, job) -> tuple:
        key = self._keys.get(job.index)
        return key if key is not None else (0, -math.inf, job.arrival, job.key)

    def _new_round(self, view, jobs: list) -> None:
        self.rounds_ += 1
        now, n = view.now, len(jobs)
        self.round_end_ = now + self._length
        rho = {}
        for job in jobs:
            left = self.tracker_.predicted[job.index] - view.attained_work(job)
            remaining = exact_mul(left, job.tau_star) if left > 0 else 0
            iso = min(1, exact_div(view.total_gpus, n * job.gpus))
            rho[job.index] = _rho(now - job.arrival, view.executed_time(job), remaining, iso)
        ranked = sorted(jobs, key=lambda j: (-rho[j.index], j.arrival, j.key))
        offered = max(1, math.ceil(round((1 - self.fairness_knob) * n, 9)))
        self._keys = {}
        for pos, job in enumerate(ranked):
            if pos < offered:
                tier = 0
            else:   # not offered: a running job renews its lease before a waiting one starts
                tier = 1 if view.is_running(job) and not view.is_stopping(job) else 2
            self._keys[job.index] = (tier, -rho[job.index], job.arrival, job.key)

    def decide(self, view):
        self.tracker_.update(view)
        return round_decision(self, view)

    def report(self) -> dict:
        return {"rounds": self.rounds_, **super().report()}
