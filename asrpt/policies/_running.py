"""The running-job pass of the remaining-size policies (SRSF/SRTF and A-SRPT) in numpy.

At every decision these policies key every running job by its predicted remaining size, which
moves with time. Where the engine offers its progress as float arrays
(:meth:`~asrpt.state.ClusterView.running_arrays`) and every value involved is a float (or an int
a float holds exactly), the keys are computed as arrays with the same IEEE operations in the same
order as the Python loop, so they are the same numbers; this module owns the pieces both policies
share:

- :class:`JobTable`: per-job arrays (arrival rank, tau*, GPUs, the view, arrival, key), filled as
  the policy first sees each job;
- :func:`float_values`: a job-indexed mapping's values for some jobs as a float64 array, or None
  when a float could not hold one of them exactly;
- :class:`TupleRun` and :class:`ArrayRun`: a sorted run of running entries ``(size, arrival, key,
  index)``, as tuples (the Python path) or as arrays sorted by ``(size, arrival rank)`` (the same
  order: jobs arrive in ``(arrival, key, index)`` order), and :func:`merged`, the run read with a
  sorted list of waiting entries as one priority order of job views (the running jobs ahead of
  every waiting one as a slice, tuples built only for the rest).

Exact runs (Fractions, ints beyond floats) keep the Python path; tests compare both
(tests/policies/test_running_arrays.py).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from operator import itemgetter

import numpy as np

__all__ = ["JobTable", "float_values", "TupleRun", "ArrayRun", "merged"]

_FLOAT_EXACT = 2 ** 53
_INDEX = itemgetter(3)


def _floaty(x) -> bool:
    t = type(x)
    return t is float or (t is int and -_FLOAT_EXACT < x < _FLOAT_EXACT)


class JobTable:
    """Per-job arrays indexed by job index, grown as jobs are added (in arrival order).

    ``rank`` is the order in which jobs were added: for jobs added in the engine's arrival order
    it sorts like ``(arrival, key, index)``. ``exact`` turns on for good once a job's tau* is not a
    float (the arrays are then not used).

    >>> from asrpt.state import job_views
    >>> t = JobTable()
    >>> for job in job_views(two_server_instance):
    ...     t.add(job)
    >>> t.rank[:3].tolist(), t.exact          # abstract jobs: tau* is the int 1
    ([0, 1, 2], True)
    """

    __slots__ = ("rank", "tau_star", "gpus", "views", "arrival", "key", "n", "exact")

    def __init__(self, capacity: int = 64):
        self.n = 0
        self.exact = False
        self._alloc(capacity)

    def _alloc(self, cap: int) -> None:
        old = None if not hasattr(self, "rank") else (self.rank, self.tau_star, self.gpus, self.views,
                                                      self.arrival, self.key)
        self.rank = np.zeros(cap, dtype=np.int64)
        self.tau_star = np.zeros(cap)
        self.gpus = np.zeros(cap)
        self.views = np.empty(cap, dtype=object)
        self.arrival = np.empty(cap, dtype=object)
        self.key = np.empty(cap, dtype=object)
        if old is not None:
            for new, prev in zip((self.rank, self.tau_star, self.gpus, self.views, self.arrival, self.key), old):
                new[:len(prev)] = prev

    def add(self, job) -> None:
        """Record ``job`` (a JobView), ranked after every job added before."""
        i = job.index
        if i >= len(self.rank):
            self._alloc(max(2 * len(self.rank), i + 1))
        if type(job.tau_star) is not float or not _floaty(job.gpus):
            self.exact = True
        self.rank[i] = self.n
        self.n += 1
        self.tau_star[i] = job.tau_star if type(job.tau_star) is float else 0.0
        self.gpus[i] = job.gpus
        self.views[i] = job
        self.arrival[i] = job.arrival
        self.key[i] = job.key


def float_values(mapping, indices: list):
    """``[mapping[i] for i in indices]`` as a float64 array, or None when one of them is not a
    float or an int below 2**53 (a float would not hold it exactly).

    >>> float_values({0: 1.5, 1: 2}, [1, 0]).tolist(), float_values({0: 2 ** 60}, [0])
    ([2.0, 1.5], None)
    """
    values = list(map(mapping.__getitem__, indices))
    types = set(map(type, values))
    if not types <= {float}:
        if not types <= {float, int}:
            return None
        if not all(-_FLOAT_EXACT < v < _FLOAT_EXACT for v in values if type(v) is int):
            return None
    return np.array(values, dtype=np.float64)


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


class ArrayRun:
    """Running entries as arrays, sorted by ``(size, rank)``: the order of the tuples
    ``(size, arrival, key, index)`` (``rank`` from a :class:`JobTable`)."""

    __slots__ = ("size", "rank", "index", "table")

    def __init__(self, size, index, table: JobTable):
        rank = table.rank[index]
        order = np.lexsort((rank, size))
        self.size, self.rank, self.index, self.table = size[order], rank[order], index[order], table

    def __len__(self) -> int:
        return len(self.index)

    def count_below(self, entry) -> int:
        """How many entries sort before the entry ``(size, arrival, key, index)`` of another job."""
        size = entry[0]
        if type(size) is not float:      # not comparable as a float: compare the tuples
            return bisect_left(self.tail(0), entry)
        lo = int(np.searchsorted(self.size, size, side="left"))
        hi = int(np.searchsorted(self.size, size, side="right"))
        if lo == hi:
            return lo
        return lo + int(np.searchsorted(self.rank[lo:hi], self.table.rank[entry[3]]))

    def head(self, k: int, views: dict, skip) -> list:
        index = self.index[:k]
        if skip:
            index = index[~np.isin(index, list(skip))]
        return self.table.views[index].tolist()

    def tail(self, k: int) -> list:
        index = self.index[k:]
        t = self.table
        return list(zip(self.size[k:].tolist(), t.arrival[index].tolist(), t.key[index].tolist(),
                        index.tolist()))


def merged(running, waiting, views: dict, skip=()):
    """Job views in the order of the sorted run ``running`` merged with the sorted list
    ``waiting`` (entries unique, so the merge is the sort of both), leaving out indices in
    ``skip``: the running entries ahead of every waiting one first, as they are."""
    k = running.count_below(waiting[0]) if waiting and len(running) else len(running)
    yield from running.head(k, views, skip)
    tail = heapq.merge(running.tail(k), waiting) if k < len(running) else waiting
    if skip:
        yield from (views[e[3]] for e in tail if e[3] not in skip)
    else:
        yield from map(views.__getitem__, map(_INDEX, tail))
