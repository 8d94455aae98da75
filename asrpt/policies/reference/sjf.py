"""Plain SJF: shortest predicted job first, non-preemptive (the reference copy of
:mod:`asrpt.policies.sjf`).

**Rule.** Each job's size is predicted once, when it arrives (``predictor``: the truth with the
default ``"oracle"``): its predicted processing time ``P^_j = N^_j tau*_j``. At every decision
the waiting jobs are listed by

- ``key="gpu_time"``: ``g_j P^_j``, or ``key="duration"``: ``P^_j``,

then earlier arrival, then smaller job id. Running jobs are never preempted; ``backfill`` chooses
skip-and-go-on (True) or head-of-line (False). A prediction the tracker revises later (a sibling
completed) does not move a job: its size is the one of its submission.

Examples
--------
>>> from asrpt.sim import simulate
>>> simulate(two_server_instance, ReferenceSJF()).completion_times
{'a': 4, 'b': 1, 'c': 3}
"""

from __future__ import annotations

from ...sizes import exact_mul
from ...state import Decision
from ..base import PredictorPolicy
from ..sjf import SJF

__all__ = ["ReferenceSJF"]


class ReferenceSJF(PredictorPolicy):
    """Shortest (predicted) job first, non-preemptive, recomputed at every decision."""

    name = "sjf"
    parameter_constraints = SJF.parameter_constraints
    preemptive = False

    def __init__(self, *, key: str = "gpu_time", predictor="oracle", backfill: bool = True):
        self.key = key
        self.predictor = predictor
        self.backfill = backfill

    @property
    def work_conserving(self) -> bool:
        return self.backfill

    def decide(self, view):
        tracker = self.tracker_
        tracker.update(view)
        first = tracker.initial_by_id          # every job's prediction at its arrival

        def key(job):
            size = exact_mul(first[job.id], job.tau_star)
            if self.key == "gpu_time":
                size = exact_mul(job.gpus, size)
            return (size, job.arrival, job.key, job.index)

        return Decision(sorted(view.waiting, key=key), backfill=self.backfill)
