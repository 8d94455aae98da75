"""FIFO: jobs in arrival order, never preempted (the reference point of every comparison).

``fifo`` skips a job that does not fit and goes on (first-fit backfill without reservation, the
Tiresias "fjf" and the Alibaba PAI simulator's own behaviour); ``fifo-strict`` stops at the first
job that does not fit (head-of-line blocking, the Helios/QSSF style). Ties in arrival time go to
the smaller job id (natural order). Needs no size information.
"""

from __future__ import annotations

from .base import Decision, Policy, register_policy

__all__ = ["FIFO"]


@register_policy("fifo", backfill=True)
@register_policy("fifo-strict", backfill=False)
class FIFO(Policy):
    """First in, first out.

    Parameters
    ----------
    backfill : bool
        Skip jobs that do not fit (True, "ff") or stop at the first one (False, "strict").

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> simulate(two_server_instance, FIFO()).completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """

    parameter_constraints = {"backfill": ["boolean"]}
    preemptive = False

    def __init__(self, *, backfill: bool = True):
        self.backfill = backfill

    @property
    def work_conserving(self) -> bool:
        return self.backfill

    def reset(self, cluster, *, seed=None) -> None:
        super().reset(cluster, seed=seed)
        self.decision_ = None   # the last answer (the same every time the view shows the same live waiting set)

    def decide(self, view):
        # Jobs enter the waiting set once, at arrival, in (arrival, id) order: that is FIFO order.
        waiting = view.waiting
        decision = getattr(self, "decision_", None)   # (None before the first reset)
        if decision is None or decision.order is not waiting:   # (a Decision is immutable: reused)
            decision = self.decision_ = Decision(waiting, backfill=self.backfill)
        return decision
