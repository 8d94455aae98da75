"""Plain QSSF (Helios): smallest predicted GPU-time first, non-preemptive (the reference copy of
:mod:`asrpt.policies.qssf`).

**Rule.** Each job's GPU-time ``g_j N^_j tau*_j`` is predicted once, when it arrives
(``predictor``, default ``"group_mean"``: the predictor first learns from the jobs completed so
far). At every decision the waiting jobs are listed by that priority, then the smaller GPU
demand, then the earlier arrival, then the smaller job id. Running jobs are never preempted. By
default the engine stops at the first job that does not fit (``backfill=False``, Helios's
head-of-line blocking); ``backfill=True`` (``qssf-ff``) skips it.

Examples
--------
>>> from asrpt.sim import simulate
>>> simulate(two_server_instance, ReferenceQSSF()).completion_times
{'a': 4, 'b': 1, 'c': 3}
"""

from __future__ import annotations

from ...sizes import exact_mul
from ...state import Decision
from ..base import PredictorPolicy
from ..qssf import QSSF

__all__ = ["ReferenceQSSF"]


class ReferenceQSSF(PredictorPolicy):
    """Quasi-shortest-service-first, recomputed at every decision (module docstring)."""

    name = "qssf"
    parameter_constraints = QSSF.parameter_constraints
    preemptive = False

    def __init__(self, *, predictor="group_mean", backfill: bool = False):
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
            gpu_time = exact_mul(job.gpus, exact_mul(first[job.id], job.tau_star))
            return (gpu_time, job.gpus, job.arrival, job.key, job.index)

        return Decision(sorted(view.waiting, key=key), backfill=self.backfill)
