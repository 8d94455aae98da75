"""Shortest job first, non-preemptive (with true sizes the "SJF-GT" comparator; PAI's SJF).

Jobs wait in order of their (predicted or true) size and are never preempted:

- ``key="gpu_time"`` (default): g_j x processing time, the GPU-time of QSSF and Tiresias's SRSF
  metric;
- ``key="duration"``: the processing time alone (the Alibaba PAI simulator's SJF).

The size comes from ``predictor`` (``"oracle"`` by default: SJF-GT; any other predictor gives the
SJF-GT-PRED ablation). Ties go to the earlier arrival, then the smaller job id. ``backfill``
chooses "ff" (skip and go on) or "strict" (head-of-line) scans. The waiting jobs are kept in a
sorted Python list (a job enters it once, at arrival, and leaves it when it starts), so a decision
costs a bisection and a move of n pointers (in C) per change, plus the part of the list the engine
scans: cheaper than a ``SortedList`` up to tens of thousands of waiting jobs.
"""

from __future__ import annotations

from operator import itemgetter

from .._sorted import insort, remove_sorted
from .._validation import Options
from .base import Decision, PredictorPolicy, register_policy

__all__ = ["SJF"]

_VIEW = itemgetter(4)


@register_policy("sjf")
@register_policy("sjf-strict", backfill=False)
@register_policy("sjf-duration", key="duration")
class SJF(PredictorPolicy):
    """Shortest (predicted) job first, non-preemptive.

    Parameters
    ----------
    key : {"gpu_time", "duration"}
    predictor : str or Predictor
    backfill : bool

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> simulate(two_server_instance, SJF()).completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """

    parameter_constraints = {"key": [Options(str, {"gpu_time", "duration"})],
                             "predictor": "no_validation",
                             "backfill": ["boolean"]}
    preemptive = False

    def __init__(self, *, key: str = "gpu_time", predictor="oracle", backfill: bool = True):
        self.key = key
        self.predictor = predictor
        self.backfill = backfill

    @property
    def work_conserving(self) -> bool:
        return self.backfill

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._queue: list = []              # sorted (size, arrival, id key, index, view) of waiting jobs
        self._entry: dict[int, tuple] = {}

    def decide(self, view):
        self.tracker_.update(view)
        pred = self.tracker_.predicted
        queue, entry = self._queue, self._entry
        for job in view.started:            # started by the previous decision: no longer waiting
            remove_sorted(queue, entry.pop(job.index))
        for job in view.arrived:
            t = pred[job.index] * job.tau_star
            e = ((job.gpus * t if self.key == "gpu_time" else t), job.arrival, job.key, job.index, job)
            entry[job.index] = e
            insort(queue, e)
        return Decision(map(_VIEW, queue), backfill=self.backfill)
