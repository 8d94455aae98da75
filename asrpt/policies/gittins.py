"""Tiresias 2D-Gittins: the 2D-LAS queues with the Gittins index inside each queue
(Gu et al., NSDI'19).

Queues, demotions, PROMOTEKNOB and the exact wake-ups are those of
:class:`~asrpt.policies.tiresias.Tiresias`. Within a queue, jobs are ordered by the Gittins index
of their attained service a = S_j (GPU-seconds since the last counter reset), highest first, ties
to the earlier arrival, then the smaller job id (the original simulator sorts each queue by
(rank, -submit time) descending):

    G(a, Delta) = P(S - a <= Delta | S > a) / E[min(S - a, Delta) | S > a]

where S is a job's total GPU-time drawn from an empirical distribution and Delta is the service
quantum (``quantum``, default 3250 GPU-s: the original simulator's fixed ``gittins_delta``). The
index is 0 beyond the support (no sample exceeds a).

**The distribution.** ``samples`` is a list of GPU-time samples (a training split: the policy
knows the distribution of sizes, not any job's own), used as is. With ``samples=None`` the
distribution is learned online from completed jobs (GPU-time = g_j x work x tau*_j, revealed at
completion). Cold start: until the first job completes there are no samples, every index is 0
and the order inside a queue is by arrival (2D-LAS without the running-first rule). The learned
table is rebuilt when the completions not yet in it reach 1/32 of those in it (at every
completion for the first 32), so a completion costs O(1) amortized and the table lags the true
history by at most about 3%.

**Computing the index.** With the samples sorted (s_1 <= ... <= s_n) and prefix sums P,
lo = #{s <= a} and hi = #{s <= a + Delta}:

    G(a, Delta) = (hi - lo) / (P[hi] - P[lo] - a (hi - lo) + Delta (n - hi))

(the conditioning count n - lo cancels), two binary searches: O(log n) per index.

Indices are computed at decision points (arrivals, completions, queue jumps); between them the
order is not revised as running jobs' indices drift (as in the original simulator, whose events
are the same).
"""

from __future__ import annotations

import itertools
import math
import operator
from bisect import bisect_left, bisect_right
from numbers import Real

import numpy as np

from .._validation import Interval, validate_params
from ..errors import InvalidParameterError
from ._running import _MAX, JobTable, SortedArrayRun
from .base import register_policy
from .tiresias import _DEFAULT_THRESHOLDS, Tiresias

__all__ = ["TiresiasGittins", "gittins_index"]

_REBUILD_FRACTION = 32
_FIELDS = operator.attrgetter("gpus", "index")


class _QueueIndexRun(SortedArrayRun):
    """The running jobs' 2D-Gittins entries as arrays, in the order of their tuples ``((queue,
    -index, arrival, key), index)``: by (queue, -index, arrival rank), sorted at the first read
    (a decision whose order nobody reads costs no sort and no tuple per job). A waiting entry
    of the same form falls among them by bisection on its queue's slice of the negated indices,
    then on the ranks among equal indices. :meth:`selects_all` answers at once where the first
    waiting entry's queue is beyond every running job's.

    >>> from types import SimpleNamespace as Job
    >>> t = JobTable()
    >>> for i in range(4):                   # jobs 0-2 run, job 3 waits
    ...     t.add(Job(index=i, tau_star=1.0, gpus=1, arrival=0.0, key=(i,)))
    >>> run = _QueueIndexRun(np.array([1, 0, 0]), np.array([-0.5, -0.25, -0.5]), np.array([0, 1, 2]), t)
    >>> index, locate = run._locator(())
    >>> index.tolist(), locate(((0, -0.3, 0.0, (3,)), 3)), locate(((1, -0.5, 0.0, (3,)), 3))
    ([2, 1, 0], 1, 3)
    """

    __slots__ = ("table", "_parts", "_located")

    def __init__(self, queue, negative, index, table: JobTable):   # numpy arrays, in running order
        self.table = table
        self._parts = (queue, negative, index)
        self._located = self._held = None

    def __len__(self) -> int:
        return len(self._parts[2])

    def running_indices(self):
        """The entries' job indices (an int array, in running order: no sort)."""
        return self._parts[2]

    def _behind(self, first) -> bool:
        return first[0][0] > _MAX(self._parts[0])

    def _locator(self, skip) -> tuple:
        located = self._located if not skip else None
        if located is None:
            queue, negative, index = self._parts
            rank = self.table.rank[index]
            order = np.lexsort((rank, negative, queue))
            if skip:
                order = order[~np.isin(index[order], list(skip))]
            queue, negative, index, rank = queue[order], negative[order], index[order], rank[order]
            located = (index, self._locate(queue, negative, rank))
            if not skip:
                self._located = located
        return located

    def _locate(self, queue, negative, rank):
        n = len(queue)
        if not n:
            return None
        top = int(queue[-1])
        starts = queue.searchsorted(np.arange(top + 2)).tolist()    # each queue's slice
        neg = negative.tolist()
        rank_of = self.table.rank

        def locate(entry):
            key = entry[0]
            q = key[0]
            if q > top:
                return n
            lo, hi = starts[q], starts[q + 1]
            x = key[1]
            k = bisect_left(neg, x, lo, hi)
            if k < hi and neg[k] == x:      # equal indices: by (arrival, key), the rank
                k += int(rank[k:bisect_right(neg, x, k, hi)].searchsorted(rank_of[entry[-1]]))
            return k
        return locate


class _EmpiricalGittins:
    """Sorted GPU-time samples and their prefix sums; ``index(a, quantum)`` in O(log n)."""

    __slots__ = ("values", "prefix", "pending", "_values_array", "_prefix_array")

    def __init__(self, samples=()):
        self.values: list[float] = sorted(float(s) for s in samples)
        self.prefix: list[float] = [0.0, *itertools.accumulate(self.values)]
        self.pending: list[float] = []
        self._values_array = self._prefix_array = None   # numpy copies for indices(), made on use

    def __len__(self) -> int:
        return len(self.values)

    def add(self, sample: float) -> None:
        """Queue a sample; the table is rebuilt once enough have been queued."""
        self.pending.append(float(sample))
        if len(self.pending) * _REBUILD_FRACTION >= len(self.values):
            self.values = sorted(self.values + self.pending)  # two sorted runs: linear merge
            self.prefix = [0.0, *itertools.accumulate(self.values)]
            self.pending = []
            self._values_array = None

    def indices(self, attained, quantum: float):
        """:meth:`index` of each of the float64 array ``attained``, as a float64 array (the same
        operations: the same numbers)."""
        values = self._arrays()
        prefix = self._prefix_array
        n = len(self.values)
        lo = values.searchsorted(attained, side="right")
        hi = values.searchsorted(attained + quantum, side="right")
        k = hi - lo
        denominator = prefix[hi] - prefix[lo] - attained * k + quantum * (n - hi)
        out = np.zeros(len(attained))
        # (beyond the support, lo == hi == n: the denominator is exactly 0, so `denominator > 0`
        # is index()'s `lo < n` test too)
        np.divide(k, denominator, out=out, where=denominator > 0)
        return out

    def _arrays(self):
        if self._values_array is None:
            self._values_array = np.array(self.values, dtype=float)
            self._prefix_array = np.array(self.prefix, dtype=float)
        return self._values_array

    def index(self, attained, quantum) -> float:
        values = self.values
        n = len(values)
        a = float(attained)
        lo = bisect_right(values, a)
        if lo == n:
            return 0.0
        hi = bisect_right(values, a + quantum)
        prefix = self.prefix
        k = hi - lo
        denominator = prefix[hi] - prefix[lo] - a * k + quantum * (n - hi)
        return k / denominator if denominator > 0 else 0.0


def _check_samples(samples, owner: str) -> list:
    if samples is None:
        return []
    try:
        values = [float(v) for v in np.asarray(samples, dtype=float).ravel()]
    except (TypeError, ValueError):
        values = []
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise InvalidParameterError(
            f"The 'samples' parameter of {owner} must be a non-empty sequence of positive finite "
            f"GPU-times or None. Got {samples!r} instead.")
    return values


@validate_params({
    "samples": [list, tuple, np.ndarray],
    "attained": [Interval(Real, 0, None, closed="left")],
    "quantum": [Interval(Real, 0, None, closed="neither")],
})
def gittins_index(samples, attained, *, quantum=3250.0) -> float:
    """The Gittins index G(a, Delta) of a job with attained service ``attained`` over the
    empirical distribution ``samples`` of total GPU-time (module docstring).

    Parameters
    ----------
    samples : sequence of float
        GPU-time samples (positive).
    attained : float >= 0
        Attained service a, in GPU-seconds.
    quantum : float > 0
        The service quantum Delta, in GPU-seconds.

    Returns
    -------
    float
        P(S - a <= Delta | S > a) / E[min(S - a, Delta) | S > a]; 0 when no sample exceeds a.

    Raises
    ------
    InvalidParameterError
        Empty samples, or samples that are not positive finite numbers.

    Examples
    --------
    Samples {1, 2, 4}, a = 1, Delta = 2: given S > 1, S - 1 is 1 or 3 (prob. 1/2 each), so
    P(S - 1 <= 2) = 1/2 and E[min(S - 1, 2)] = (1 + 2) / 2; the index is 1/3.

    >>> gittins_index([1, 2, 4], 1, quantum=2)
    0.3333333333333333
    >>> gittins_index([1, 2, 4], 4, quantum=2)
    0.0
    """
    return _EmpiricalGittins(_check_samples(samples, "gittins_index")).index(attained, quantum)


@register_policy("tiresias-gittins")
class TiresiasGittins(Tiresias):
    """Tiresias 2D-Gittins: 2D-LAS queues, Gittins-index order inside each queue.

    Parameters
    ----------
    thresholds : sequence of float
        Queue thresholds in GPU-seconds (default ``(3250.0, 7200.0)``, see
        :class:`~asrpt.policies.tiresias.Tiresias`).
    promote_knob : float >= 0
        PROMOTEKNOB (0: disabled).
    quantum : float > 0
        The Gittins quantum Delta in GPU-seconds (default 3250, the original simulator's).
    samples : sequence of float or None
        Empirical GPU-time distribution (the training split); None learns it online from
        completed jobs (module docstring for the cold start).

    Attributes
    ----------
    thresholds_ : tuple
    promotions_ : int
    table_size_ : int
        Samples in the Gittins table in use.

    Examples
    --------
    With samples {2, 8} and quantum 2, a fresh job (index 1/4: it ends within the quantum with
    probability 1/2, expected service 2) beats one with 2 GPU-s attained (index 0: given S > 2,
    S = 8), both in Q0:

    >>> from asrpt.instance import Cluster, Instance, Job
    >>> from asrpt.sim import simulate
    >>> inst = Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=8),
    ...                                             Job("b", 2, 1, processing_time=2)))
    >>> pol = TiresiasGittins(thresholds=(100,), quantum=2, samples=[2, 8])
    >>> simulate(inst, pol).completion_times
    {'a': 10, 'b': 4}
    """

    parameter_constraints = {
        **Tiresias.parameter_constraints,
        "quantum": [Interval(Real, 0, None, closed="neither")],
        "samples": [None, list, tuple, np.ndarray],
    }

    def __init__(self, *, thresholds=_DEFAULT_THRESHOLDS, promote_knob: float = 0.0,
                 quantum: float = 3250.0, samples=None):
        super().__init__(thresholds=thresholds, promote_knob=promote_knob)
        self.quantum = quantum
        self.samples = samples

    def __eq__(self, other: object) -> bool:  # samples may be a numpy array
        if type(self) is not type(other):
            return False
        a, b = self.get_params(), other.get_params()  # type: ignore[attr-defined]
        sa, sb = a.pop("samples"), b.pop("samples")
        same = (sa is None and sb is None) or (sa is not None and sb is not None
                                               and np.array_equal(np.asarray(sa), np.asarray(sb)))
        return same and a == b

    __hash__ = Tiresias.__hash__

    def _validate_params(self) -> None:
        super()._validate_params()
        _check_samples(self.samples, type(self).__name__)

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._learn = self.samples is None
        self._table = _EmpiricalGittins(_check_samples(self.samples, type(self).__name__))
        self._quantum = float(self.quantum)
        self._th_array = np.array(self.thresholds_, dtype=float)
        self._jobs = JobTable()   # GPUs, arrival rank ((arrival, key) order), arrival and key by index

        self.table_size_ = len(self._table)

    def _prepare(self, view) -> None:
        add = self._jobs.add
        for job in view.arrived:            # (in the engine's (arrival, key) order)
            add(job)
        if self._learn and view.completed:
            for c in view.completed:
                self._table.add(float(c.job.gpus) * float(c.work) * float(c.job.tau_star))
            self.table_size_ = len(self._table)

    def _keys_version_now(self):
        # the index of a waiting job changes only when the table is rebuilt (it then grows)
        return len(self._table)

    def _within_queue_key(self, view, job, service, running: bool) -> tuple:
        return (-self._table.index(service, self._quantum), job.arrival, job.key)

    def _running_entries(self, view):
        """The running jobs' entries (:meth:`Tiresias._running_entries`), with the
        services, queues and Gittins indices computed in numpy where every executed time is a
        float: the same IEEE operations in the same order as ``exact_mul``, ``_queue`` and
        ``_EmpiricalGittins.index`` (so the same keys; tests/policies/test_tiresias_incremental.py),
        kept as a :class:`_QueueIndexRun` (sorted by (queue, -index, arrival rank), the order of
        the entries' tuples, when first read; no tuple per job). The executed
        times come from the engine's arrays where it offers them
        (:meth:`~asrpt.state.ClusterView.running_executed_arrays`), the jobs' fields from the
        policy's :class:`~asrpt.policies._running.JobTable`."""
        got = view.running_executed_arrays()
        t = self._jobs
        if got is not None:
            index_array, executed_array = got
            if not len(index_array):
                return []
            gpu_array = t.gpus[index_array]
        else:
            progress = view.running_executed()
            if not progress:
                return []
            jobs, executed, _ = zip(*progress)
            if set(map(type, executed)) != {float}:
                return super()._running_entries(view)
            gpus, indices = zip(*map(_FIELDS, jobs))
            index_array = np.array(indices)
            gpu_array = np.array(gpus, dtype=float)
            executed_array = np.array(executed)
        service = gpu_array * executed_array                                    # exact_mul
        q = np.searchsorted(self._th_array, service + 1e-9 * np.maximum(1.0, service),
                            side="right")                                      # _queue
        negative = -self._table.indices(service, self._quantum)
        return _QueueIndexRun(q, negative, index_array, t)

    def report(self) -> dict:
        return {**super().report(), "table_size": self.table_size_}
