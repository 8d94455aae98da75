"""The running-job pass of the remaining-size policies (SRSF/SRTF and A-SRPT) in numpy.

At every decision these policies key every running job by its predicted remaining size, which
moves with time. Where the engine offers its progress as float arrays
(:meth:`~asrpt.state.ClusterView.running_arrays`) and every value involved is a float (or an int
a float holds exactly), the keys are computed as arrays with the same IEEE operations in the same
order as the Python loop, so they are the same numbers; this module owns the pieces both policies
share:

- :class:`JobTable`: per-job arrays (arrival rank, tau*, GPUs, the view, arrival, key), filled as
  the policy first sees each job;
- :class:`RunningLeft` and :class:`SortedCrossings`: the predicted remaining work and the crossing
  times noted at the decision, from arrays, read by the tracker's ``noted_crossing``;
- :class:`TupleRun` and :class:`ArrayRun`: a sorted run of running entries ``(size, arrival, key,
  index)``, as tuples (the Python path) or as arrays sorted by ``(size, arrival rank)`` (the same
  order: jobs arrive in ``(arrival, key, index)`` order), and :func:`merged`, the run read with a
  sorted list of waiting entries as one priority order of job views (for arrays: slices of one
  list of views between the waiting entries read, found by bisection; no tuple per running job);
- :class:`SortedArrayRun`, the base of the array runs: that merge and the keep check
  (``selects_all``), for any run that can say where a waiting entry falls among its entries
  (2D-Gittins's :class:`~asrpt.policies.gittins._QueueIndexRun` is another).

Exact runs (Fractions, ints beyond floats) keep the Python path; tests compare both
(tests/policies/test_running_arrays.py).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from itertools import chain
from operator import itemgetter

import numpy as np

from ..sizes import floaty

__all__ = ["JobTable", "RunningLeft", "SortedCrossings", "TupleRun", "SortedArrayRun", "ArrayRun", "merged",
           "merged_chunks", "running_inputs", "crossings"]

_INDEX = itemgetter(3)
_LAST = itemgetter(-1)
_MAX = np.maximum.reduce


class JobTable:
    """Per-job arrays indexed by job index, grown as jobs are added (in arrival order): one float64
    row each for tau*, the GPU count and the rank (``cols``, gathered at once by
    :meth:`columns`), and object arrays of the views, arrivals and keys.

    ``rank`` is the order in which jobs were added: for jobs added in the engine's arrival order
    it sorts like ``(arrival, key, index)``. ``exact`` turns on for good once a job's tau* is not a
    float (the arrays are then not used). ``arrival_f`` holds the arrivals as float64, exact
    unless ``arrival_exact`` is on (an arrival that is not :func:`~asrpt.sizes.floaty`).

    >>> from asrpt.state import job_views
    >>> t = JobTable()
    >>> for job in job_views(two_server_instance):
    ...     t.add(job)
    >>> t.rank[:3].tolist(), t.exact          # abstract jobs: tau* is the int 1
    ([0.0, 1.0, 2.0], True)
    """

    __slots__ = ("cols", "views", "arrival", "key", "n", "exact", "arrival_f", "arrival_exact")

    def __init__(self, capacity: int = 64):
        self.n = 0
        self.exact = self.arrival_exact = False
        self.cols = np.zeros((3, 0))
        self.arrival_f = np.zeros(0)
        self.views = self.arrival = self.key = np.empty(0, dtype=object)
        self._grow(capacity)

    def _grow(self, cap: int) -> None:
        cols = np.zeros((3, cap))
        cols[:, :self.cols.shape[1]] = self.cols
        self.cols = cols
        arrival_f = np.zeros(cap)
        arrival_f[:len(self.arrival_f)] = self.arrival_f
        self.arrival_f = arrival_f
        objects = []
        for prev in (self.views, self.arrival, self.key):
            new = np.empty(cap, dtype=object)
            new[:len(prev)] = prev
            objects.append(new)
        self.views, self.arrival, self.key = objects

    @property
    def tau_star(self):
        return self.cols[0]

    @property
    def gpus(self):
        return self.cols[1]

    @property
    def rank(self):
        return self.cols[2]

    def columns(self, index):
        """``(tau_star, gpus, rank)`` of the jobs ``index`` (an int array), in one gather."""
        return self.cols.take(index, axis=1)

    def add(self, job) -> None:
        """Record ``job`` (a JobView), ranked after every job added before."""
        i = job.index
        if i >= self.cols.shape[1]:
            self._grow(max(2 * self.cols.shape[1], i + 1))
        if type(job.tau_star) is not float or not floaty(job.gpus):
            self.exact = True
        self.cols[:, i] = (job.tau_star if type(job.tau_star) is float else 0.0, job.gpus, self.n)
        self.n += 1
        self.views[i] = job
        self.arrival[i] = job.arrival
        if floaty(job.arrival):
            self.arrival_f[i] = job.arrival
        else:
            self.arrival_exact = True
        self.key[i] = job.key


class RunningLeft:
    """Predicted remaining work by job index: the running jobs' from arrays (``index``,
    ``left``, at the decision), the others' from the dict ``rest`` (what
    :meth:`~asrpt.predict.base.PredictionTracker.noted_crossing` reads with ``get``)."""

    __slots__ = ("index", "left", "rest")

    def __init__(self, index, left, rest: dict):
        self.index, self.left, self.rest = index, left, rest

    def get(self, i, default=None):
        pos = (self.index == i).nonzero()[0]
        if len(pos):
            return self.left[pos[0]].item()
        return self.rest.get(i, default)


class SortedCrossings:
    """``(time, index)`` entries in ascending order of time, from arrays, read as
    :meth:`~asrpt.predict.base.PredictionTracker.noted_crossing` reads a heap: ``noted[0]``,
    ``popleft()``, truth. Sorted only if more than the first entry is read (the first is the
    minimum, found once at construction: :meth:`after` reads it too).

    Equal times come in array order (the heap of tuples would give the smallest index first):
    the reader returns the time of the first entry it accepts, so the order among equal times
    changes nothing it returns, and no pass looks for ties.

    >>> c = SortedCrossings(np.array([5.0, 2.0, 2.0]), np.array([7, 9, 3]))
    >>> c[0], c.after(1.0), c.after(2.0)
    ((2.0, 9), True, False)
    >>> c.popleft(); c[0], len(c)
    ((2.0, 3), 2)
    """

    __slots__ = ("when", "who", "pos", "sorted", "first")

    def __init__(self, when, who):
        self.when, self.who, self.pos, self.sorted = when, who, 0, False
        self.first = int(when.argmin()) if len(when) else None     # (the first minimum)

    def after(self, now) -> bool:
        """Whether every time is after ``now`` (true of none)."""
        return self.first is None or bool(self.when[self.first] > now)

    def __len__(self) -> int:
        return len(self.when) - self.pos

    def __getitem__(self, k: int) -> tuple:
        if k != 0:
            raise IndexError("only the first entry is read")
        p = self.pos if self.sorted else self.first
        return self.when[p].item(), self.who[p].item()

    def popleft(self) -> None:
        if not self.sorted:
            # (stable: the first minimum, the entry read so far, stays first)
            order = self.when.argsort(kind="stable")
            self.when, self.who, self.sorted = self.when[order], self.who[order], True
        self.pos += 1


class TupleRun:
    """A sorted list of entries ``(size, arrival, key, index)`` (the Python path)."""

    __slots__ = ("entries",)

    def __init__(self, entries: list):
        self.entries = entries

    def __len__(self) -> int:
        return len(self.entries)

    def count_below(self, entry) -> int:
        return bisect_left(self.entries, entry)

    def head(self, k: int, views: dict, skip) -> list:
        if skip:
            return [views[e[3]] for e in self.entries[:k] if e[3] not in skip]
        return [views[e[3]] for e in self.entries[:k]]

    def tail(self, k: int) -> list:
        return self.entries[k:]


class SortedArrayRun:
    """A run of running entries kept as arrays in priority order, read with a sorted list of
    waiting entries (tuples ending with the job's index) as one order: the merge and the
    keep check shared by the array runs. A subclass defines ``_locator(skip)``, where a waiting
    entry falls among its entries: ``(index, locate)``, the running indices in order (less
    ``skip``) and a function ``locate(entry)``, how many of them sort below the waiting ``entry``
    (all of them: it is behind every one; None where there is no running entry), and
    ``running_indices()``, the entries' job indices in any order (what the engine checks
    against its running set, :func:`~asrpt.order.keeps_running_jobs`). ``table`` is
    the policy's :class:`JobTable` (views, GPUs). (Not an ``abc.ABC``: the merge (``merged_chunks``)
    and Tiresias ask ``isinstance`` of it at every pass, four times slower through ``ABCMeta``.)
    A subclass sets ``_held`` to None when it makes a run (:meth:`_held_upto`'s memo)."""

    __slots__ = ("_held",)

    def _held_upto(self, index):
        """The GPUs the running entries ``index`` (in order) hold up to each position, from 0:
        a float64 array of ``len(index) + 1`` (exact: sums of ints below 2**53), computed once
        for the ``index`` :meth:`_locator` gives (the keep check and the merge of one pass share
        it)."""
        held = self._held
        if held is None or held[0] is not index:
            upto = np.zeros(len(index) + 1)
            np.add.accumulate(self.table.gpus.take(index), out=upto[1:])
            held = self._held = (index, upto)
        return held[1]

    def _behind(self, first) -> bool:
        """Whether the waiting entry ``first`` sorts behind every running entry, answered
        without sorting the run where it can be (False: not known)."""
        return False

    def selects_all(self, waiting, views: dict, budget, skip=()) -> bool:
        """:func:`~asrpt.policies._incremental.selects_running` for this run: the waiting
        entries ahead of a running one are placed by :meth:`_locator`, the GPUs ahead of each
        by a cumulative sum."""
        if not len(self) or not waiting:
            return True
        if not skip and self._behind(waiting[0]):
            return True     # (the common case for SRSF and A-SRPT)
        index, locate = self._locator(skip)
        n = len(index)
        if not n:
            return True
        ahead = None
        for entry in waiting:
            k = locate(entry)
            if k == n:      # behind every running entry (in settled views, none fits)
                return True
            i = entry[-1]
            if skip and i in skip:
                continue
            if ahead is None:
                ahead = self._held_upto(index)
            if views[i].gpus <= budget - ahead[k]:
                return False
        return True

    def _chunks(self, waiting, views: dict, skip):
        """The views of this run merged with the sorted waiting entries, as chunks: before each
        waiting entry every running one that sorts below it, as slices of one list of views
        (read in C; Python runs once per waiting entry read, not once per job)."""
        index, locate = self._locator(skip)
        run = self.table.views[index].tolist()      # (each chunk is a list: a slice)
        n = len(run)
        if not waiting:
            yield run
            return
        pos = 0
        it = iter(waiting)
        for entry in it:
            if pos < n:
                k = locate(entry)
                if k > pos:
                    yield run[pos:k]
                    pos = k
            i = entry[-1]
            if not (skip and i in skip):
                yield (views[i],)
            if pos >= n:
                break
        if pos < n:
            yield run[pos:]
        if skip:
            yield (views[e[-1]] for e in it if e[-1] not in skip)
        else:
            yield map(views.__getitem__, map(_LAST, it))


class ArrayRun(SortedArrayRun):
    """Running entries as arrays, sorted by ``(size, rank)``: the order of the tuples
    ``(size, arrival, key, index)`` (``rank`` from a :class:`JobTable`).

    The run is sorted at the first read of ``size``, ``rank`` or ``index``, and :meth:`of_left`
    makes the run of the remaining-size policies' keys without even computing them: a decision
    whose order the engine does not read (:func:`~asrpt.order.keeps_running_jobs`) costs
    nothing here, and :meth:`selects_all` answers without sorting where the first waiting entry
    is larger than every running one (the common case).

    >>> from asrpt.state import job_views
    >>> t = JobTable()
    >>> for job in job_views(two_server_instance):
    ...     t.add(job)
    >>> run = ArrayRun(np.array([5.0, 1.0, 5.0]), np.array([2, 0, 1]), t)
    >>> run.index.tolist(), run.size.tolist()        # equal sizes: by rank
    ([0, 1, 2], [1.0, 5.0, 5.0])
    """

    # _keys: None (of_left, keys not computed yet), (size, index, rank) unsorted, or False (sorted
    # into _size, _rank, _index)
    __slots__ = ("_size", "_rank", "_index", "_given", "table", "_left", "_keys", "_size_list")

    def __init__(self, size, index, table: JobTable, rank=None):
        self.table, self._left, self._index, self._given = table, None, index, index
        self._keys = (size, index, rank)
        self._size_list = self._held = None

    @classmethod
    def of_left(cls, left, index, table: JobTable, positive: bool = False) -> "ArrayRun":
        """The run keyed ``max(left, 0) * tau* * gpus`` (the predicted remaining GPU-time) for the
        running jobs ``index`` with predicted remaining work ``left`` (float64 arrays, never
        changed afterwards), computed at the first read: the same numbers as
        ``ArrayRun(np.maximum(left, 0.0) * tau_star * gpus, index, table, rank)`` made now
        (``left`` is never -0.0: a difference ``x - y``). ``positive=True`` says every ``left``
        is > 0 (the maximum is then skipped: it is ``left`` itself).

        >>> from types import SimpleNamespace as Job
        >>> t = JobTable()
        >>> for i in range(2):                   # tau* 0.5 s, 4 GPUs each
        ...     t.add(Job(index=i, tau_star=0.5, gpus=4, arrival=0.0, key=(i,)))
        >>> run = ArrayRun.of_left(np.array([3.0, -1.0]), np.array([0, 1]), t)
        >>> len(run), run.index.tolist(), run.size.tolist()
        (2, [1, 0], [0.0, 6.0])
        """
        run = cls.__new__(cls)
        run.table, run._left, run._index, run._keys = table, (left, index, positive), index, None
        run._given = index
        run._size_list = run._held = None
        return run

    @classmethod
    def _of_sorted(cls, size, index, rank, table: JobTable) -> "ArrayRun":
        """The run of entries already sorted by ``(size, rank)``."""
        run = cls.__new__(cls)
        run.table, run._left, run._keys, run._size_list, run._held = table, None, False, None, None
        run._size, run._rank, run._index = size, rank, index
        run._given = index
        return run

    def _unsorted(self) -> tuple:
        """``(size, index, rank)`` in the running order (the keys computed here for a run
        :meth:`of_left` made)."""
        keys = self._keys
        if keys is None:
            left, index, positive = self._left
            self._left = None
            tau_star, gpus, rank = self.table.columns(index)
            keys = ((left if positive else np.maximum(left, 0.0)) * tau_star * gpus, index, rank)
        elif keys[2] is None:
            keys = (keys[0], keys[1], self.table.rank[keys[1]])
        self._keys = keys
        return keys

    def _sort(self) -> None:
        size, index, rank = self._unsorted()
        # by (size, rank) as complex numbers, which numpy sorts by real part, then imaginary
        # part: lexsort's order (the ranks are distinct, so any sort gives it), a quarter faster
        key = np.empty(len(size), dtype=complex)
        key.real, key.imag = size, rank
        order = key.argsort()
        self._size, self._rank, self._index = size[order], rank[order], index[order]
        self._keys = False          # (sorted)

    def _sorted(name: str):  # type: ignore[misc]   (a class-body helper: the three sorted arrays)
        def read(self):
            if self._keys is not False:
                self._sort()
            return getattr(self, name)
        return property(read)

    size, rank, index = _sorted("_size"), _sorted("_rank"), _sorted("_index")
    del _sorted

    def __len__(self) -> int:
        return len(self._index)

    def running_indices(self):
        """The entries' job indices (an int array, in any order: the array the run was made
        with, no sort)."""
        return self._given

    def _largest_size(self) -> float:
        """The run's largest size, without sorting it."""
        if self._keys is False:
            return self._size[-1].item()
        return _MAX(self._unsorted()[0]).item()     # (ndarray.max without its Python wrapper)

    def _behind(self, first) -> bool:
        return first[0] > self._largest_size()

    def _locator(self, skip) -> tuple:
        """The entries' indices (less ``skip``) and :meth:`_locate` of the run they make."""
        if self._keys is not False:
            self._sort()
        run = self
        if skip:    # (the kept entries, still sorted, as a run of their own)
            keep = ~np.isin(self._index, list(skip))
            run = ArrayRun._of_sorted(self._size[keep], self._index[keep], self._rank[keep], self.table)
        return run._index, (run._locate if len(run._index) else None)

    def _locate(self, entry) -> int:
        """How many entries sort below a waiting entry ``(size, arrival, key, index)``: by
        bisection on the sizes (in numpy for a float, which a float64 holds; else on the sizes as
        Python numbers, listed once), then on the ranks among equal sizes (read on a tie only)."""
        size, sizes = entry[0], self._size
        if type(size) is float:
            k = int(sizes.searchsorted(size))
            if k < len(sizes) and sizes[k] == size:  # equal sizes: by (arrival, key, index), the rank
                k += int(self._rank[k:int(sizes.searchsorted(size, "right"))].searchsorted(self.table.rank[entry[3]]))
            return k
        size_list = self._size_list
        if size_list is None:
            size_list = self._size_list = sizes.tolist()
        k = bisect_left(size_list, size)
        if k < len(size_list) and size_list[k] == size:
            k += int(self._rank[k:bisect_right(size_list, size, k)].searchsorted(self.table.rank[entry[3]]))
        return k


def running_inputs(view, table: JobTable, tracker):
    """The inputs of both policies' numpy pass: ``(index, done, tau, stopping, predictions)``,
    the engine's running arrays (:meth:`~asrpt.state.ClusterView.running_arrays`) and the
    tracker's float64 predictions, or None where floats cannot hold them all exactly (the
    table's, the engine's or the tracker's values; the caller then takes its Python path)."""
    if table.exact:
        return None
    got = view.running_arrays()
    if got is None:
        return None
    preds = tracker.prediction_array()
    if preds is None:
        return None
    return (*got, preds)


def crossings(now, left, tau, index, resume=None) -> "SortedCrossings":
    """When each running job with predicted work ``left`` > 0 reaches its prediction,
    ``now + left * tau`` (``resume + left * tau`` with the jobs' resume times,
    :meth:`~asrpt.state.ClusterView.running_resumes`, where some restart after a preemption),
    for the tracker's ``noted_crossing``."""
    start = now if resume is None else resume
    pos = left > 0
    if np.count_nonzero(pos) == len(index):    # (the usual case: nothing to leave out)
        return SortedCrossings(start + left * tau, index)
    return SortedCrossings((start if resume is None else start[pos]) + left[pos] * tau[pos], index[pos])


def merged(running, waiting, views: dict, skip=()):
    """An iterator over the job views in the order of the sorted run ``running`` merged with the
    sorted list ``waiting`` (entries unique, so the merge is the sort of both), leaving out
    indices in ``skip``: the running entries ahead of every waiting one first, as they are.

    >>> views = {0: "a", 1: "b", 2: "c"}
    >>> list(merged(TupleRun([(1.0, 0, (), 0), (5.0, 0, (), 2)]), [(2.0, 0, (), 1)], views))
    ['a', 'b', 'c']
    """
    return chain.from_iterable(merged_chunks(running, waiting, views, skip))


def merged_chunks(running, waiting, views: dict, skip=()):
    """:func:`merged` as consecutive chunks of views (for an :class:`ArrayRun`, the slices of
    its running views between the waiting entries read are lists; the merge order of
    :class:`~asrpt.policies._incremental.MergedOrder`).

    >>> views = {0: "a", 1: "b", 2: "c"}
    >>> [list(c) for c in merged_chunks(TupleRun([(1.0, 0, (), 0), (5.0, 0, (), 2)]), [(2.0, 0, (), 1)], views)]
    [['a', 'b', 'c']]
    """
    if isinstance(running, SortedArrayRun):
        return running._chunks(waiting, views, skip)
    return (_merged_tuples(running, waiting, views, skip),)


def _merged_tuples(running, waiting, views: dict, skip):
    k = running.count_below(waiting[0]) if waiting and len(running) else len(running)
    yield from running.head(k, views, skip)
    tail = heapq.merge(running.tail(k), waiting) if k < len(running) else waiting
    if skip:
        yield from (views[e[3]] for e in tail if e[3] not in skip)
    else:
        yield from map(views.__getitem__, map(_INDEX, tail))
