"""Waiting jobs kept in priority order across decisions, updated only for the jobs that changed.

The round-based policies (Themis, Gavel) rank waiting jobs between rounds by keys that do not move
with time (fixed at the round, or the key of a job that arrived since), so the sorted order
survives from one decision to the next: only the jobs that arrived, started, stopped or completed
since the previous decision (the view's deltas, shown once) are removed and re-inserted, each in
O(log W) plus a memmove. A new round re-keys everything (:meth:`WaitingOrder.rebuild`).

With ``track_running=True`` the running jobs are kept the same way (their keys hold within a
round too), so that :meth:`WaitingOrder.order` reads them in key order instead of sorting them at
every decision. They are kept in two parts, updated from the deltas too: the head (the running jobs
that are not stopping, listed first) and the jobs
running on to an iteration boundary (``view.stopping``), merged with the waiting list. After a
round's preemptions every stop is a decision, so a decision costs O(changes x log R) for these two
parts, not O(R) to filter the head and O(S log S) to sort the S stopping jobs.

The order type itself, :class:`~asrpt.order.MergedOrder` (with :func:`~asrpt.order.selects_running`),
lives below the engine in :mod:`asrpt.order`; it is re-exported here.
"""

from __future__ import annotations

import itertools
import operator
from bisect import bisect_left, insort
from operator import attrgetter, itemgetter
from typing import Any, Callable

from ..order import MergedOrder, merged_view_chunks, merged_views, selects_running  # noqa: F401  (re-exported)
from ..state import Decision

_second = itemgetter(1)
_INDEX = attrgetter("index")

__all__ = ["WaitingOrder", "round_order", "merged_views", "merged_view_chunks", "MergedOrder", "selects_running"]


def round_order(policy, view, missing_key: Callable[[Any], Any]):
    """The decision of a round-based policy (Themis, Gavel): its order and wake-up.

    ``policy`` has ``_waiting`` (a :class:`WaitingOrder`), ``_keys`` (index -> key of the
    current round), ``round_end_``, ``_new_round(view)`` (which may return the round's running
    and waiting ``(key, index)`` entries, each sorted: :meth:`WaitingOrder.rebuild_sorted`) and
    ``_total_gpus``. At a new round every
    active job is keyed again and sorted; within a round the keys hold and ``missing_key(job)``
    keys a job that arrived since. The wake-up is the round's end while the demand exceeds the
    cluster. Returns a backfilling :class:`~asrpt.state.Decision`: within a round the order
    lists the running jobs (not stopping) first, so in a :attr:`~asrpt.state.ClusterView.settled`
    view it selects exactly them (the engine finds it, :func:`~asrpt.order.keeps_running_jobs`), and ranks the
    other jobs by the round's keys (a job that arrived since gets its key from ``missing_key``
    once and keeps it); a new round's order merges them with the waiting jobs by the new keys.
    Every decision holds until the round's end (:attr:`~asrpt.state.Decision.stands_until`):
    until then the policy is asked again only when a job arrives or completes, and the waiting
    order takes the starts and stops of the passes in between together (its entries are keyed
    by the round, and sorted).
    """
    if policy.round_end_ is None or view.now >= policy.round_end_:
        runs = policy._new_round(view)
        keys = policy._keys
        waiting = policy._waiting
        if runs is not None:     # the round's running and waiting entries, each sorted
            waiting.rebuild_sorted(*runs)
        else:
            waiting.rebuild(view, lambda j: keys[j.index])
        if waiting.track_running:   # every active job by its key: the merge of the two sorted lists
            order = MergedOrder(waiting.held, waiting.entries, waiting.views)
        else:
            order = sorted(view.active(), key=lambda j: keys[j.index])
    else:
        keys = policy._keys

        def key(j):
            k = keys.get(j.index)
            return k if k is not None else missing_key(j)

        order = policy._waiting.order(view, key)
    wake = policy.round_end_ if policy._waiting.demand > policy._total_gpus else None
    return Decision(order, backfill=True, wake_at=wake, stands_until=policy.round_end_)


class WaitingOrder:
    """Sorted ``(key, index)`` entries of the waiting jobs, and the total GPU demand of the active
    jobs, maintained from the view's deltas. Keys must be unique (they end with the job's id key).

    >>> from asrpt.sim.view import job_views
    >>> a, b, c = job_views(two_server_instance)
    >>> order = WaitingOrder()
    >>> for job in (a, b, c):
    ...     order.note_arrival(job)
    >>> class View:  # what sync reads of a ClusterView
    ...     def is_running(self, job): return job is b
    >>> order.sync(View(), key_of=lambda job: -job.gpus)
    >>> [j.id for j in order.jobs()], order.demand
    (['a', 'c'], 7)
    """

    def __init__(self, *, track_running: bool = False) -> None:
        self.entries: list[tuple[Any, int]] = []
        self._entry: dict[int, tuple[Any, int]] = {}
        self.track_running = track_running
        self.held: list[tuple[Any, int]] = []        # sorted (key, index) of running jobs (tracked)
        self._held_entry: dict[int, tuple[Any, int]] = {}
        # the held jobs in two parts (tracked; None until :meth:`order` splits them): the head,
        # those not stopping as last seen (sorted entries and their views, in the same order),
        # and the stopping ones (index -> entry, and the entries sorted)
        self._head: list | None = None
        self._head_entries: list[tuple[Any, int]] = []
        self._stop: dict[int, tuple[Any, int]] = {}
        self._stop_entries: list[tuple[Any, int]] = []
        self.views: dict[int, Any] = {}
        self.pending: dict[int, Any] = {}
        self.demand = 0

    def note_arrival(self, job) -> None:
        self.views[job.index] = job
        self.pending[job.index] = job
        self.demand += job.gpus

    def note(self, view) -> None:
        """Record the deltas of ``view`` (arrivals, starts, stops, completions)."""
        for job in view.arrived:
            self.note_arrival(job)
        for group in (view.started, view.stopped):
            for job in group:
                self.pending[job.index] = job
        for c in view.completed:
            i = c.job.index
            self.pending.pop(i, None)
            self.discard(i)
            if self._held_entry:
                self._unhold(i)
            if self.views.pop(i, None) is not None:
                self.demand -= c.job.gpus

    def discard(self, i: int) -> None:
        entry = self._entry.pop(i, None)
        if entry is not None:
            del self.entries[bisect_left(self.entries, entry)]

    def _unhold(self, i: int) -> None:
        entry = self._held_entry.pop(i, None)
        if entry is None:
            return
        del self.held[bisect_left(self.held, entry)]
        if self._head is not None:
            if self._stop.pop(i, None) is not None:
                del self._stop_entries[bisect_left(self._stop_entries, entry)]
            else:
                k = bisect_left(self._head_entries, entry)
                del self._head_entries[k]
                del self._head[k]

    def sync(self, view, key_of: Callable) -> None:
        """Re-key the jobs that changed: waiting ones get ``key_of(job)``, the others leave (to
        the running list, keyed too, when running jobs are tracked)."""
        track = self.track_running
        for i, job in self.pending.items():
            self.discard(i)
            if track:
                self._unhold(i)
            entry = (key_of(job), i) if track or not view.is_running(job) else None
            if entry is None:
                continue
            if view.is_running(job):
                self._held_entry[i] = entry
                insort(self.held, entry)
                if self._head is not None:      # into the head (order() moves it if stopping)
                    k = bisect_left(self._head_entries, entry)
                    self._head_entries.insert(k, entry)
                    self._head.insert(k, job)
            else:
                self._entry[i] = entry
                insort(self.entries, entry)
        self.pending.clear()

    def rebuild(self, view, key_of: Callable) -> None:
        """Key every waiting job afresh (a new round), and every running one if tracked."""
        entries = sorted([(key_of(j), j.index) for j in view.waiting])
        held = sorted([(key_of(j), j.index) for j in view.running]) if self.track_running else []
        self.rebuild_sorted(held, entries)

    def rebuild_sorted(self, held: list, entries: list) -> None:
        """:meth:`rebuild` from the round's entries, already sorted: ``held`` those of the running
        jobs (used only if tracked), ``entries`` those of the waiting jobs (the lists are kept)."""
        self.pending.clear()
        self.entries = entries
        self._entry = dict(zip(map(_second, entries), entries))     # index -> entry (built in C)
        if self.track_running:
            self.held = held
            self._held_entry = dict(zip(map(_second, held), held))
            self._head = None       # split again at the next order()

    def order(self, view, key_of: Callable):
        """The round's priority list: running jobs (not stopping) by ``key_of``, then the stopping
        ones merged with the waiting list by key (the waiting list synced first). A sequence read
        lazily (the engine reads a prefix), valid until the next call."""
        # the head: every running job that is not stopping
        stopping = view.stopping
        if not self.track_running:
            held = [j for j in view.running if j not in stopping]
            held.sort(key=key_of)
            self.sync(view, key_of)
            if stopping:
                return MergedOrder(sorted([(key_of(j), j.index) for j in stopping]), self.entries, self.views,
                                   held)
            return MergedOrder((), self.entries, self.views, held)
        self.sync(view, key_of)
        self._split(stopping)
        # (a stopping job's key is its held entry's: both are key_of's within the round)
        return MergedOrder(self._stop_entries, self.entries, self.views, self._head)

    def _split(self, stopping) -> None:
        """Bring the head and the stopping part up to date with ``stopping`` (the view's): move
        the jobs that started stopping out of the head, and the ones selected again before
        their boundary back in (the ones that stopped left both with their held entries, in
        :meth:`sync`); after a rebuild, split the held entries afresh."""
        now = set(map(_INDEX, stopping)) if stopping else ()
        if self._head is None:
            self._resplit(now)
            return
        stop, stop_entries = self._stop, self._stop_entries
        head, head_entries = self._head, self._head_entries
        if stop:
            for i in [i for i in stop if i not in now]:      # selected again: back into the head
                entry = stop.pop(i)
                del stop_entries[bisect_left(stop_entries, entry)]
                k = bisect_left(head_entries, entry)
                head_entries.insert(k, entry)
                head.insert(k, self.views[i])
        if len(now) == len(stop):       # (no job started stopping: stop holds only jobs in now)
            return
        for i in now:
            if i not in stop:       # started stopping: out of the head (held: the view's running
                entry = stop[i] = self._held_entry[i]        # jobs are synced first)
                k = bisect_left(head_entries, entry)
                del head_entries[k]
                del head[k]
                insort(stop_entries, entry)

    def _resplit(self, now) -> None:
        """Split the held entries afresh into the head and the stopping part (``now``)."""
        held = self.held
        if now:
            stopping = list(map(now.__contains__, map(_second, held)))     # (flags read in C)
            self._stop_entries = list(itertools.compress(held, stopping))
            self._head_entries = list(itertools.compress(held, map(operator.not_, stopping)))
        else:
            self._stop_entries, self._head_entries = [], list(held)
        self._stop = dict(zip(map(_second, self._stop_entries), self._stop_entries))
        self._head = list(map(self.views.__getitem__, map(_second, self._head_entries)))

    def jobs(self) -> list:
        """The waiting jobs in key order."""
        views = self.views
        return [views[i] for _, i in self.entries]
