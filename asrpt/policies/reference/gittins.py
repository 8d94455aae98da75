"""Plain Tiresias 2D-Gittins: the 2D-LAS queues, the Gittins index inside each queue (the
reference copy of :mod:`asrpt.policies.gittins`).

**Rule.** Queues, demotions, PROMOTEKNOB and the wake-ups are those of 2D-LAS
(:class:`~asrpt.policies.reference.tiresias.ReferenceTiresias`). Inside a queue the jobs are
ordered by the Gittins index of their attained service ``a`` (GPU-seconds since the last counter
reset), highest first, then the earlier arrival, then the smaller id (running or not):

    G(a, Delta) = (hi - lo) / (P[hi] - P[lo] - a (hi - lo) + Delta (n - hi))

over the sorted GPU-time samples ``s_1 <= ... <= s_n`` with prefix sums ``P``, ``lo = #{s <=
a}``, ``hi = #{s <= a + Delta}`` (0 when no sample exceeds ``a``), ``Delta = quantum``. The
samples are ``samples``, or with ``samples=None`` the GPU-times ``g_j N_j tau*_j`` of the
completed jobs, learned online: a completed job's sample is queued, and the queued samples join
the table when they number at least 1/32 of the table (every completion for the first 32).

Examples
--------
With samples {2, 8} and quantum 2, a fresh job beats one with 2 GPU-s attained (both in Q0):

>>> from asrpt.instance import Cluster, Instance, Job
>>> from asrpt.sim import simulate
>>> inst = Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=8),
...                                             Job("b", 2, 1, processing_time=2)))
>>> pol = ReferenceTiresiasGittins(thresholds=(100,), quantum=2, samples=[2, 8])
>>> simulate(inst, pol).completion_times
{'a': 10, 'b': 4}
"""

from __future__ import annotations

import bisect
import itertools

from ..gittins import TiresiasGittins, _check_samples
from ..tiresias import _DEFAULT_THRESHOLDS
from .tiresias import ReferenceTiresias

__all__ = ["ReferenceTiresiasGittins"]

_REBUILD_FRACTION = 32


class ReferenceTiresiasGittins(ReferenceTiresias):
    """Tiresias 2D-Gittins recomputed at every decision (module docstring)."""

    name = "tiresias-gittins"
    parameter_constraints = TiresiasGittins.parameter_constraints

    def __init__(self, *, thresholds=_DEFAULT_THRESHOLDS, promote_knob: float = 0.0,
                 quantum: float = 3250.0, samples=None):
        self.thresholds = thresholds
        self.promote_knob = promote_knob
        self.quantum = quantum
        self.samples = samples

    __eq__ = TiresiasGittins.__eq__          # (samples may be a numpy array)
    __hash__ = ReferenceTiresias.__hash__

    def _validate_params(self) -> None:
        super()._validate_params()
        _check_samples(self.samples, type(self).__name__)

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._learn = self.samples is None
        self._set_table(sorted(_check_samples(self.samples, type(self).__name__)))
        self._queued: list = []            # learned samples not yet in the table
        self.table_size_ = len(self._values)

    def _prepare(self, view) -> None:
        if self._learn:
            for c in view.completed:
                self._queued.append(float(c.job.gpus) * float(c.work) * float(c.job.tau_star))
                if len(self._queued) * _REBUILD_FRACTION >= len(self._values):
                    self._set_table(sorted(self._values + self._queued))
                    self._queued = []
            self.table_size_ = len(self._values)

    def _set_table(self, values: list) -> None:
        """The table's sorted samples and their prefix sums."""
        self._values = values
        self._prefix = [0.0, *itertools.accumulate(values)]

    def _index(self, attained) -> float:
        values, quantum = self._values, float(self.quantum)
        n, a = len(values), float(attained)
        lo = bisect.bisect_right(values, a)
        if lo == n:
            return 0.0
        hi = bisect.bisect_right(values, a + quantum)
        prefix = self._prefix
        k = hi - lo
        denominator = prefix[hi] - prefix[lo] - a * k + quantum * (n - hi)
        return k / denominator if denominator > 0 else 0.0

    def _within_queue_key(self, view, job, service, running: bool) -> tuple:
        return (-self._index(service), job.arrival, job.key)

    def report(self) -> dict:
        return {**super().report(), "table_size": self.table_size_}
