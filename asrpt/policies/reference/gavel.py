"""Plain Gavel max-min fairness with rounds, one GPU type (the reference copy of
:mod:`asrpt.policies.gavel`).

**Rule.** A round starts at the first decision and then at the first decision at or after the
previous round's end (``round_length`` later). At a round every active job gets its share of
the water-filling ``g_j X_j = min(g_j, lambda w_j)`` with ``sum_j g_j X_j = M``
(:func:`~asrpt.policies.gavel.water_fill`; ``w_j = 1`` unless ``weighted``) and the key
``(-p_j, -g_j, arrival, id)`` with priority ``p_j = X_j (t - a_j) / executed_j``, or ``p_j = +inf``
for a job that has not run yet (or arrived now). The round's order is every active job by key.
Between rounds the leases hold: the running jobs (not stopping) come first, then the other
active jobs, each group by the round's keys, a job that arrived since the round started keyed
``(-inf, -g_j, arrival, id)``. While the active jobs ask for more GPUs than the cluster has, the
policy asks to be woken at the round's end.

Examples
--------
>>> from asrpt.sim import simulate
>>> simulate(two_server_instance, ReferenceGavel()).completion_times
{'a': 4, 'b': 1, 'c': 3}
"""

from __future__ import annotations

import math

from ...sizes import exact_div, exact_mul, integral
from ...state import Policy
from ..gavel import Gavel, water_fill
from ._rounds import round_decision

__all__ = ["ReferenceGavel"]


class ReferenceGavel(Policy):
    """Gavel's max-min fairness rounds, plainly (module docstring)."""

    name = "gavel"
    parameter_constraints = Gavel.parameter_constraints
    preemptive = True
    clairvoyant = False
    work_conserving = True

    def __init__(self, *, round_length: float = 360.0, weighted: bool = False):
        self.round_length = round_length
        self.weighted = weighted

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._length = integral(self.round_length)   # (an integral float as an int: exact runs stay exact)
        self.rounds_ = 0
        self.round_end_ = None
        self.level_ = None
        self._keys: dict = {}           # index -> key at the current round

    def _key(self, job) -> tuple:
        key = self._keys.get(job.index)
        return key if key is not None else (-math.inf, -job.gpus, job.arrival, job.key)

    def _new_round(self, view, jobs: list) -> None:
        self.rounds_ += 1
        now = view.now
        self.round_end_ = now + self._length
        weights = [j.weight for j in jobs] if self.weighted else None
        self.level_, shares = water_fill([j.gpus for j in jobs], view.total_gpus, weights)
        self._keys = {}
        for job, share in zip(jobs, shares):
            executed, elapsed = view.executed_time(job), now - job.arrival
            if executed > 0 and elapsed > 0:
                x = exact_div(share, job.gpus)
                priority = exact_div(exact_mul(x, elapsed), executed)
                self._keys[job.index] = (-priority, -job.gpus, job.arrival, job.key)

    def decide(self, view):
        return round_decision(self, view)

    def report(self) -> dict:
        return {"rounds": self.rounds_}
