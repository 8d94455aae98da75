"""Plain FIFO: every waiting job, oldest first (the reference copy of :mod:`asrpt.policies.fifo`).

**Rule.** At every decision list the waiting jobs by ``(arrival, id)`` (the smaller job id, in
natural order, first among equal arrivals; then the instance order). Running jobs are never
preempted. ``backfill=True`` (``fifo``) lets the engine skip a job that does not fit and go on;
``backfill=False`` (``fifo-strict``) stops at the first one.

Examples
--------
>>> from asrpt.sim import simulate
>>> simulate(two_server_instance, ReferenceFIFO()).completion_times
{'a': 4, 'b': 1, 'c': 3}
"""

from __future__ import annotations

from ...state import Decision, Policy
from ..fifo import FIFO

__all__ = ["ReferenceFIFO"]


class ReferenceFIFO(Policy):
    """First in, first out, recomputed at every decision (module docstring)."""

    name = "fifo"
    parameter_constraints = FIFO.parameter_constraints
    preemptive = False

    def __init__(self, *, backfill: bool = True):
        self.backfill = backfill

    @property
    def work_conserving(self) -> bool:
        return self.backfill

    def decide(self, view):
        order = sorted(view.waiting, key=lambda job: (job.arrival, job.key, job.index))
        return Decision(order, backfill=self.backfill)
