"""The order type the engine reads: :class:`MergedOrder`, sorted runs of ``(key, index)`` entries.

A policy may answer with any iterable of job views; the engine reads a plain one job by job. A
:class:`MergedOrder` (the running jobs' entries, sorted, merged with the waiting jobs' sorted
entries, after an optional head of views) is read by runs instead (:meth:`MergedOrder.chunks`),
and the engine derives from its structure what it may skip: :func:`keeps_running_jobs` says,
from the entries alone, whether in a settled view the greedy selection would take exactly the
running jobs, so that the engine need not read the order at all. No policy tells the engine so:
the answer is computed here, by the engine, from what the order lists.

This module sits below the engine (it imports only :mod:`asrpt.state`); the policies that keep
their orders across passes (:mod:`asrpt.policies._incremental`, :mod:`asrpt.policies._running`)
build its entries.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from operator import attrgetter, itemgetter

__all__ = ["MergedOrder", "merged_views", "merged_view_chunks", "selects_running", "keeps_running_jobs", "run_indices"]


class MergedOrder:
    """``head`` (job views), then two sorted runs of entries merged by ``merge``, read as one
    priority order each time it is iterated (the engine reads a prefix; keys are unique, so the
    merge is the sort): the lazy order of the policies that keep their entries sorted across
    decisions.

    ``merge(a, b, views)`` (``merge(a, b, views, skip)`` where ``skip``, indices to leave out,
    is not empty) gives the merged views as consecutive chunks (default
    :func:`merged_view_chunks`); :meth:`chunks` is the head and those chunks, which the engine
    reads a chunk at a time (a list whose jobs all fit is selected whole,
    :attr:`~asrpt.state.Decision.order`). ``a`` is meant to list the running jobs' entries
    (those the head does not list) and ``b`` the waiting ones': the engine checks that against
    its running set before it relies on it (:func:`keeps_running_jobs`); anything else is
    simply read as the merged order it is. What the type itself requires, as a list requires
    each job once: ``a`` and ``b`` each sorted, with unique keys, and ``views`` mapping each
    index to that job's view. The engine relies on it where it skips reading the order (an
    unsorted run, e.g. keys with a NaN, or a view under another job's index, would make it skip
    an order that reads otherwise); ``check_invariants=True`` reads every such order and raises,
    and the reference engine reads it as listed.

    >>> views = {i: f"j{i}" for i in range(4)}
    >>> order = MergedOrder([(1, 0), (5, 1)], [(2, 2), (9, 3)], views, head=["h"])
    >>> list(order), [list(c) for c in order.chunks()]
    (['h', 'j0', 'j2', 'j1', 'j3'], [['h'], ['j0'], ['j2'], ['j1'], ['j3']])
    """

    __slots__ = ("_a", "_b", "_views", "_head", "_merge", "_skip")

    def __init__(self, a, b, views: dict, head=(), merge=None, skip=()):
        self._a, self._b, self._views, self._head = a, b, views, head
        self._merge = merged_view_chunks if merge is None else merge
        self._skip = skip

    def __len__(self) -> int:
        if self._skip:      # (the head repeats jobs the runs leave out: counted as read)
            return sum(1 for _ in self)
        return len(self._head) + len(self._a) + len(self._b)

    def chunks(self):
        """The order as consecutive iterables of job views (lists where known)."""
        if self._head:
            yield self._head
        if self._skip:
            yield from self._merge(self._a, self._b, self._views, self._skip)
        else:
            yield from self._merge(self._a, self._b, self._views)

    def __iter__(self):
        return itertools.chain.from_iterable(self.chunks())


_second = itemgetter(1)
_INDEX, _GPUS = attrgetter("index"), attrgetter("gpus")


def merged_views(a, b, views: dict):
    """The job views of two sorted runs of unique ``(key, index)`` entries, merged, lazily: run
    by run, each run's end found by bisection (the runs of a priority order are long: queues,
    tiers), so a read costs O(log n) per run plus the entries read. ``a`` is a list or a
    ``SortedList`` (read by slices, it is at most the running jobs); ``b`` a list, read one
    entry at a time (it may be long and only a prefix is read). An iterator whose items come
    from C iterators, a run at a time (the engine reads thousands of waiting jobs a pass in
    overload).

    >>> views = {i: f"j{i}" for i in range(6)}
    >>> list(merged_views([(1, 0), (2, 1), (7, 2)], [(3, 3), (4, 4), (9, 5)], views))
    ['j0', 'j1', 'j3', 'j4', 'j2', 'j5']
    """
    return itertools.chain.from_iterable(merged_view_chunks(a, b, views))


def merged_view_chunks(a, b, views: dict, skip=()):
    """:func:`merged_views` as its runs, each an iterable of views (those of ``a`` lists), less
    the entries whose index is in ``skip``.

    >>> views = {i: f"j{i}" for i in range(4)}
    >>> [list(run) for run in merged_view_chunks([(1, 0), (2, 1)], [(3, 2), (4, 3)], views)]
    [['j0', 'j1'], ['j2', 'j3']]
    >>> [list(run) for run in merged_view_chunks([(1, 0), (2, 1)], [(3, 2), (4, 3)], views, {1, 2})]
    [['j0'], ['j3']]
    """
    if skip:
        a = [e for e in a if e[-1] not in skip]
        b = [e for e in b if e[-1] not in skip]
    if not a:
        return (map(views.__getitem__, map(_second, b)),)
    return _merged_runs(a, b, views)


def _merged_runs(a, b, views: dict):
    """The runs of :func:`merged_views`, each an iterable of views (those of ``a`` lists)."""
    na, nb = len(a), len(b)
    sorted_list = hasattr(a, "bisect_left")     # a SortedList (else a list, bisected from i on)
    getv = views.__getitem__

    def run(entries):
        return list(map(getv, map(_second, entries)))
    i = j = 0
    while i < na and j < nb:
        k = a.bisect_left(b[j]) if sorted_list else bisect_left(a, b[j], i)     # a[i:k] comes before b[j]
        if k > i:
            yield run(a[i:k])
            i = k
            if i == na:
                break
        m = bisect_left(b, a[i], j)     # b[j:m] comes before a[i]
        if m > j:
            yield map(getv, map(_second, itertools.islice(_list_from(b, j), m - j)))
        j = m
    if i < na:
        yield run(a[i:])
    if j < nb:
        yield map(getv, map(_second, _list_from(b, j)))


def _list_from(b: list, j: int):
    """An iterator over ``b[j:]`` without copying or stepping over ``b[:j]`` (a list iterator
    set to position j)."""
    it = iter(b)
    if j:
        it.__setstate__(j)
    return it


def selects_running(running, waiting, views: dict, budget, skip=()) -> bool:
    """Whether the greedy backfilling selection within ``budget`` GPUs over the sorted run
    ``running`` merged with the sorted waiting entries ``waiting`` (the order
    :func:`~asrpt.policies._running.merged` and :func:`merged_views` read, less the indices in
    ``skip``) takes every running job and no waiting one, given a
    :attr:`~asrpt.state.ClusterView.settled` view (no waiting job fits in what the running jobs
    leave of ``budget``, so only waiting entries ahead of a running one are read): it does iff
    each of those needs more GPUs than the running jobs ahead of it leave. The running jobs
    must hold at most ``budget`` GPUs. ``running`` is an
    :class:`~asrpt.policies._running.ArrayRun`, a :class:`~asrpt.policies._running.TupleRun`,
    or a sorted list (or ``SortedList``) of unique entries like ``waiting``'s, each ending with
    the job's index (the ``(key, index)`` entries of the orders above). What
    :func:`keeps_running_jobs` reads after the head.

    >>> from types import SimpleNamespace as Job
    >>> views = {0: Job(gpus=4), 1: Job(gpus=4), 2: Job(gpus=2)}
    >>> run = [(1.0, 0), (5.0, 2)]                           # (key, index) of the running jobs
    >>> selects_running(run, [(2.0, 1)], views, 8)           # job 1 gets 8 - 4 GPUs: fits
    False
    >>> selects_running(run, [(2.0, 1)], views, 7)           # 7 - 4 = 3 GPUs: it does not
    True
    """
    selects_all = getattr(running, "selects_all", None)
    if selects_all is not None:     # an ArrayRun
        return selects_all(waiting, views, budget, skip)
    entries = getattr(running, "entries", running)   # a TupleRun's list, or the entries themselves
    if skip:
        entries = [e for e in entries if e[-1] not in skip]
    if not entries:
        return True
    last = entries[-1]
    ahead = 0       # GPUs of the running entries ahead of the waiting entry read
    pos = 0
    for entry in waiting:
        if entry > last:    # behind every running entry: in a settled view, none fits
            return True
        i = entry[-1]
        if skip and i in skip:
            continue
        k = bisect_left(entries, entry, pos) if type(entries) is list else entries.bisect_left(entry)
        for e in entries[pos:k]:
            ahead += views[e[-1]].gpus
        pos = k
        if views[i].gpus <= budget - ahead:
            return False
    return True


def keeps_running_jobs(order, running, budget, handed=()) -> bool:
    """Whether the greedy backfilling selection over ``order`` within ``budget`` GPUs takes every
    running job and no waiting one, given a :attr:`~asrpt.state.ClusterView.settled` view: what
    the engine checks (only for a :class:`MergedOrder`) before it skips reading an order.

    ``running`` is the engine's running set (index -> job view). The head's jobs come first:
    a running one takes its GPUs, a waiting one that fits means the selection changes. The
    running run's entries (less ``skip``) and the head's running jobs must then be exactly the
    running jobs, each listed once (checked here against ``running``, by index: O(running jobs),
    in C for an array run; O(1) for an array run made, with no head, on an index array in
    ``handed``: the engine's own read-only arrays of this pass's running jobs, each once), and
    :func:`selects_running` reads the waiting entries ahead of them. False for anything else:
    the engine then reads the order.

    >>> from types import SimpleNamespace as Job
    >>> views = {0: Job(index=0, gpus=4), 1: Job(index=1, gpus=4), 2: Job(index=2, gpus=2)}
    >>> running = {0: views[0], 2: views[2]}
    >>> keeps_running_jobs(MergedOrder([(1.0, 0), (5.0, 2)], [(2.0, 1)], views), running, 7)
    True
    >>> keeps_running_jobs(MergedOrder([(1.0, 0)], [(2.0, 1)], views), running, 7)   # job 2 unlisted
    False
    >>> keeps_running_jobs(MergedOrder([(1.0, 0), (5.0, 1)], [], views), running, 7)  # job 1 waits
    False
    """
    if type(order) is not MergedOrder:
        return False
    head = order._head
    head_running = set(map(_INDEX, head))
    if len(head_running) != len(head):
        return False                # a job listed twice in the head
    if running.keys() >= head_running:      # (the usual head: running jobs only; read in C)
        budget -= sum(map(_GPUS, head))
    else:
        head_running.clear()
        for job in head:
            i = job.index
            if i in running:
                head_running.add(i)
                budget -= job.gpus
            elif job.gpus <= budget:
                return False
    a, skip = order._a, order._skip
    own = getattr(a, "running_indices", None)
    given = own() if own is not None else None
    if given is None or skip or head_running or not any(given is h for h in handed):
        indices = given.tolist() if given is not None else run_indices(a)
        listed = set(indices)
        if len(listed) != len(indices):
            return False                # a job listed twice in the running run
        if skip:
            listed.difference_update(skip)
        if (len(listed) + len(head_running) != len(running) or not listed.isdisjoint(head_running)
                or not running.keys() >= listed):
            return False
    return selects_running(a, order._b, order._views, budget, skip)


def run_indices(run) -> list:
    """The job indices of a sorted run's entries, in any order: an array run's own
    (``running_indices()``), else the last field of each entry (a list, a ``SortedList`` or a
    :class:`~asrpt.policies._running.TupleRun`'s ``entries``).

    >>> run_indices([(1.0, 4), (2.0, 7)])
    [4, 7]
    """
    own = getattr(run, "running_indices", None)
    if own is not None:
        return own().tolist()
    return list(map(itemgetter(-1), getattr(run, "entries", run)))
