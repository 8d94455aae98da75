"""Classical single-machine rules, for comparison with SRPT, and SRPT on m identical machines.

This module owns the stateless rules; each is a function over plain arrays returning a
:class:`~asrpt.single.srpt.Schedule` with the same conventions as
:func:`~asrpt.single.srpt.srpt_schedule` (jobs are indices; ties by ``id_key(ids[j])`` when ids
are given, else by index; completions before arrivals at the same instant; zero-size jobs
complete at their release; exact with ints and Fractions):

- non-preemptive, work-conserving list rules: :func:`fcfs_schedule` (release order),
  :func:`spt_schedule` (shortest first) and :func:`wspt_schedule` (Smith's rule, largest
  ``w_j / p_j`` first). Without release dates SPT and WSPT are optimal for ``1 || sum C_j`` and
  ``1 || sum w_j C_j``; with release dates they are the usual heuristics;
- :func:`lp_schedule`: preemptive fixed-ratio Smith (largest *original* ``w_j / p_j`` first among
  released jobs), Goemans' LP schedule, whose mean busy times give the LB_MBT lower bound;
- :func:`las_schedule`: preemptive least-attained-service (jobs with equal attained service
  share the machine equally);
- :func:`ps_schedule`: processor sharing (round robin with an infinitesimal quantum);
- :func:`multi_srpt_schedule`: preemptive SRPT on ``m`` identical unit-speed machines (one job
  per machine, migration allowed), for small instances.

Shared rules (PS, LAS) produce pieces with ``share = 1/k``; they cost O(n^2) pieces in the worst
case and are meant for instances of up to a few thousand jobs.

Examples
--------
>>> ps_schedule([0, 0], [1, 3]).completion_times
(2, 4)
>>> wspt_schedule([3, 1], [1, 1]).completion_times
(4, 1)
"""

from __future__ import annotations

import heapq
from operator import itemgetter
from numbers import Integral, Real
from typing import Sequence

from .._validation import Interval, validate_params
from ..sizes import exact_div
from ._arrays import IdSequence, NumberSequence, as_list, check_lengths
from .srpt import Piece, Schedule, _prepare

__all__ = [
    "fcfs_schedule",
    "spt_schedule",
    "wspt_schedule",
    "lp_schedule",
    "las_schedule",
    "ps_schedule",
    "multi_srpt_schedule",
]

_RELEASES_SIZES_IDS = {
    "releases": [NumberSequence()],
    "sizes": [NumberSequence(0)],
    "ids": [None, IdSequence()],
}


_RANK = itemgetter(1)  # heap entries are (key, rank, job): shared pieces are listed in tie-key order


def _build(completion, pieces, finished, releases, sizes, ids, rule) -> Schedule:
    return Schedule(tuple(completion), tuple(pieces), tuple(releases), tuple(sizes),
                    tuple(finished), ids, rule)


def _release_order(releases: list, ranks: list) -> list:
    return sorted(range(len(releases)), key=lambda j: (releases[j], ranks[j]))


# ---------------------------------------------------------------------------------------------
# Non-preemptive list rules
# ---------------------------------------------------------------------------------------------


def _list_schedule(releases: list, sizes: list, keys: list, ranks: list):
    """Non-preemptive, work-conserving: whenever the machine is free, start the released job with
    the smallest ``(key, rank)``; idle only when nothing is released."""
    n = len(sizes)
    order = _release_order(releases, ranks)
    completion: list = [None] * n
    pieces: list = []
    finished: list = []
    heap: list = []
    t = releases[order[0]] if n else 0
    i = 0
    zero: list = []  # zero-size jobs complete at their release, whatever the machine does
    while i < n or heap:
        while i < n and releases[order[i]] <= t:
            j = order[i]
            if sizes[j] == 0:
                completion[j] = releases[j]
                zero.append(j)
            else:
                heapq.heappush(heap, (keys[j], ranks[j], j))
            i += 1
        if not heap:
            if i == n:
                break
            t = releases[order[i]]
            continue
        _, _, j = heapq.heappop(heap)
        end = t + sizes[j]
        pieces.append(Piece(j, t, end))
        completion[j] = end
        finished.append(j)
        t = end
    if zero:  # merge in time order; completions come before releases at the same instant
        seq = {j: (0, pos) for pos, j in enumerate(finished)}
        seq.update({j: (1, pos) for pos, j in enumerate(zero)})
        finished = sorted(finished + zero, key=lambda j: (completion[j], seq[j]))
    return completion, pieces, finished


@validate_params(_RELEASES_SIZES_IDS)
def fcfs_schedule(releases: Sequence[Real], sizes: Sequence[Real], *,
                  ids: Sequence[str] | None = None) -> Schedule:
    """First come, first served: non-preemptive, in order of release (ties by tie key).

    Parameters
    ----------
    releases : sequence of numbers
        Release times.
    sizes : sequence of numbers >= 0
        Processing times.
    ids : sequence of str, optional
        Job ids for tie-breaking (``id_key``), else ties by index.

    Returns
    -------
    Schedule
        Rule "fcfs".

    Raises
    ------
    InvalidParameterError
        Negative or non-finite numbers, sequences of different lengths, duplicate ids.

    Examples
    --------
    >>> fcfs_schedule([0, 1, 1], [3, 2, 1]).completion_times
    (3, 5, 6)
    """
    releases, sizes, ranks, ids = _prepare("fcfs_schedule", releases, sizes, ids)
    out = _list_schedule(releases, sizes, list(releases), ranks)
    return _build(*out, releases, sizes, ids, "fcfs")


@validate_params({
    "sizes": [NumberSequence(0)],
    "releases": [None, NumberSequence()],
    "ids": [None, IdSequence()],
})
def spt_schedule(sizes: Sequence[Real], *, releases: Sequence[Real] | None = None,
                 ids: Sequence[str] | None = None) -> Schedule:
    """Shortest processing time first, non-preemptive (optimal for ``1 || sum C_j``).

    With release dates the machine starts, whenever it is free, the shortest released job.

    Parameters
    ----------
    sizes : sequence of numbers >= 0
        Processing times.
    releases : sequence of numbers, optional
        Release times (all 0 by default).
    ids : sequence of str, optional
        Job ids for tie-breaking, else ties by index.

    Returns
    -------
    Schedule
        Rule "spt".

    Raises
    ------
    InvalidParameterError
        Negative or non-finite numbers, sequences of different lengths, duplicate ids.

    Examples
    --------
    >>> spt_schedule([3, 1, 2]).completion_times
    (6, 1, 3)
    """
    releases = [0] * len(sizes) if releases is None else releases
    releases, sizes, ranks, ids = _prepare("spt_schedule", releases, sizes, ids)
    out = _list_schedule(releases, sizes, sizes, ranks)
    return _build(*out, releases, sizes, ids, "spt")


@validate_params({
    "sizes": [NumberSequence(0)],
    "weights": [NumberSequence(0, strict=True)],
    "releases": [None, NumberSequence()],
    "ids": [None, IdSequence()],
})
def wspt_schedule(sizes: Sequence[Real], weights: Sequence[Real], *,
                  releases: Sequence[Real] | None = None,
                  ids: Sequence[str] | None = None) -> Schedule:
    """Smith's rule: non-preemptive, largest ``w_j / p_j`` first (optimal for ``1 || sum w_j C_j``).

    Ratios are compared exactly (as ``p_j / w_j``, smallest first) with ints and Fractions;
    zero-size jobs come first. With release dates the machine starts, whenever it is free, the
    released job of largest ratio.

    Parameters
    ----------
    sizes : sequence of numbers >= 0
        Processing times.
    weights : sequence of numbers > 0
        Weights.
    releases : sequence of numbers, optional
        Release times (all 0 by default).
    ids : sequence of str, optional
        Job ids for tie-breaking, else ties by index.

    Returns
    -------
    Schedule
        Rule "wspt"; use ``weighted_total(weights)`` for its cost.

    Raises
    ------
    InvalidParameterError
        Negative sizes, non-positive weights, sequences of different lengths, duplicate ids.

    Examples
    --------
    >>> s = wspt_schedule([2, 1, 3], [1, 2, 6])
    >>> s.finishing_order, s.weighted_total([1, 2, 6])
    ((1, 2, 0), 32)
    """
    check_lengths("wspt_schedule", "sizes", len(sizes), weights=weights)
    releases = [0] * len(sizes) if releases is None else releases
    releases, sizes, ranks, ids = _prepare("wspt_schedule", releases, sizes, ids)
    keys = [exact_div(p, w) for p, w in zip(sizes, as_list(weights))]
    out = _list_schedule(releases, sizes, keys, ranks)
    return _build(*out, releases, sizes, ids, "wspt")


# ---------------------------------------------------------------------------------------------
# Preemptive fixed priority (the LP schedule)
# ---------------------------------------------------------------------------------------------


def _fixed_priority(releases: list, sizes: list, keys: list, ranks: list):
    """Preemptive: at every instant run the released unfinished job of smallest ``(key, rank)``."""
    n = len(sizes)
    order = _release_order(releases, ranks)
    completion: list = [None] * n
    pieces: list = []
    finished: list = []
    rem = list(sizes)
    heap: list = []
    cur = -1
    since = None
    t = releases[order[0]] if n else 0
    i = 0
    while True:
        while i < n and releases[order[i]] <= t:
            k = order[i]
            i += 1
            if sizes[k] == 0:
                completion[k] = t
                finished.append(k)
                continue
            entry = (keys[k], ranks[k], k)
            if cur >= 0 and entry < (keys[cur], ranks[cur], cur):
                if t > since:
                    pieces.append(Piece(cur, since, t))
                heapq.heappush(heap, (keys[cur], ranks[cur], cur))
                cur, since = k, t
            elif cur >= 0:
                heapq.heappush(heap, entry)
            else:
                heapq.heappush(heap, entry)
        if cur < 0:
            if heap:
                cur = heapq.heappop(heap)[2]
                since = t
            elif i < n:
                t = releases[order[i]]
                continue
            else:
                break
        finish = t + rem[cur]
        if i < n and releases[order[i]] < finish:
            ta = releases[order[i]]
            rem[cur] = rem[cur] - (ta - t)
            t = ta
        else:
            t = max(finish, t)
            rem[cur] = 0
            completion[cur] = t
            finished.append(cur)
            pieces.append(Piece(cur, since, t))
            cur = -1
    return completion, pieces, finished


@validate_params({
    "releases": [NumberSequence()],
    "sizes": [NumberSequence(0)],
    "weights": [NumberSequence(0, strict=True)],
    "ids": [None, IdSequence()],
})
def lp_schedule(releases: Sequence[Real], sizes: Sequence[Real], weights: Sequence[Real], *,
                ids: Sequence[str] | None = None) -> Schedule:
    """Goemans' LP schedule: preemptive, largest *original* ratio ``w_j / p_j`` first.

    Among released unfinished jobs the one with the smallest ``p_j / w_j`` runs (ties by tie key);
    an arrival with a better ratio preempts. Its mean busy times minimise ``sum w_j M_j`` over all
    single-machine schedules, preemptive or processor-sharing (Goemans 1996),
    which is what the LB_MBT lower bound uses. For unit weights it is preemptive SPT by original
    size, which differs from SRPT.

    Parameters
    ----------
    releases : sequence of numbers
        Release times.
    sizes : sequence of numbers >= 0
        Processing times.
    weights : sequence of numbers > 0
        Weights.
    ids : sequence of str, optional
        Job ids for tie-breaking, else ties by index.

    Returns
    -------
    Schedule
        Rule "lp"; ``mean_busy_times()`` gives ``M_j^LP``.

    Raises
    ------
    InvalidParameterError
        Negative sizes, non-positive weights, sequences of different lengths, duplicate ids.

    Examples
    --------
    >>> s = lp_schedule([0, 1], [4, 2], [1, 1])
    >>> s.completion_times, s.mean_busy_times()
    ((6, 3), (Fraction(7, 2), 2))
    """
    check_lengths("lp_schedule", "sizes", len(sizes), weights=weights)
    releases, sizes, ranks, ids = _prepare("lp_schedule", releases, sizes, ids)
    keys = [exact_div(p, w) for p, w in zip(sizes, as_list(weights))]
    out = _fixed_priority(releases, sizes, keys, ranks)
    return _build(*out, releases, sizes, ids, "lp")


# ---------------------------------------------------------------------------------------------
# Shared machine: LAS and processor sharing
# ---------------------------------------------------------------------------------------------


def _float_tie(a, b) -> bool:
    """With floats, ``a`` and ``b`` closer than a relative 1e-12 count as the same instant (exact
    numbers never do): LAS changes discontinuously at ties, so rounding must not decide them."""
    if not (isinstance(a, float) or isinstance(b, float)):
        return False
    return abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b))


@validate_params(_RELEASES_SIZES_IDS)
def las_schedule(releases: Sequence[Real], sizes: Sequence[Real], *,
                 ids: Sequence[str] | None = None) -> Schedule:
    """Preemptive least attained service (foreground-background).

    At every instant the jobs with the least attained service share the machine equally; a new
    arrival (attained 0) takes the machine alone unless the running jobs are also at 0. A group
    that catches up with the next attained level merges with it. Levels are set exactly at merges
    and completions, and with floats an arrival within a relative 1e-12 of a completion or merge
    counts as simultaneous (the completion first), and so do a completion and a merge whose
    levels are that close (the completion, then the merge), so float runs follow the exact run's
    ties.

    Parameters
    ----------
    releases : sequence of numbers
        Release times.
    sizes : sequence of numbers >= 0
        Processing times.
    ids : sequence of str, optional
        Job ids for tie-breaking (order of simultaneous completions), else by index.

    Returns
    -------
    Schedule
        Rule "las"; pieces carry ``share = 1/k``.

    Raises
    ------
    InvalidParameterError
        Negative or non-finite numbers, sequences of different lengths, duplicate ids.

    Examples
    --------
    >>> las_schedule([0, 1], [3, 1]).completion_times
    (4, 2)
    """
    releases, sizes, ranks, ids = _prepare("las_schedule", releases, sizes, ids)
    n = len(sizes)
    order = _release_order(releases, ranks)
    completion: list = [None] * n
    pieces: list = []
    finished: list = []
    groups: list = []  # stack of [level, heap of (size, rank, job)]; groups[-1] has the lowest level
    t = releases[order[0]] if n else 0
    i = 0
    while i < n or groups:
        while i < n and releases[order[i]] <= t:
            k = order[i]
            i += 1
            if sizes[k] == 0:
                completion[k] = t
                finished.append(k)
            elif groups and groups[-1][0] == 0:
                heapq.heappush(groups[-1][1], (sizes[k], ranks[k], k))
            else:
                groups.append([0, [(sizes[k], ranks[k], k)]])
        if not groups:
            if i == n:
                break
            t = releases[order[i]]
            continue
        level, heap = groups[-1]
        k = len(heap)
        target, kind = heap[0][0], "done"
        if len(groups) > 1 and groups[-2][0] < target and not _float_tie(groups[-2][0], target):
            target, kind = groups[-2][0], "merge"
        t_end = t + (target - level) * k
        if i < n and releases[order[i]] < t_end and not _float_tie(releases[order[i]], t_end):
            t_end = releases[order[i]]
            new_level = level + exact_div(t_end - t, k)
            kind = "arrival"
        else:
            if i < n and releases[order[i]] < t_end:  # a float tie: the completion/merge comes first
                t_end = releases[order[i]]
            new_level = target
        if t_end > t:
            share = exact_div(1, k)
            pieces.extend(Piece(j, t, t_end, share) for _, _, j in sorted(heap, key=_RANK))
        t = t_end
        groups[-1][0] = new_level
        if kind == "done":
            while heap and heap[0][0] == new_level:
                j = heapq.heappop(heap)[2]
                completion[j] = t
                finished.append(j)
            if not heap:
                groups.pop()
        if len(groups) > 1 and (groups[-2][0] == groups[-1][0] or _float_tie(groups[-2][0], groups[-1][0])):
            top = groups.pop()
            merged = groups[-1][1] + top[1]
            heapq.heapify(merged)
            groups[-1][1] = merged
    return _build(completion, pieces, finished, releases, sizes, ids, "las")


@validate_params(_RELEASES_SIZES_IDS)
def ps_schedule(releases: Sequence[Real], sizes: Sequence[Real], *,
                ids: Sequence[str] | None = None) -> Schedule:
    """Processor sharing: all released unfinished jobs share the machine equally.

    This is round robin with an infinitesimal quantum. With all releases 0 its total completion
    time is ``2 * SPT - sum p`` (proofs/classical.md, Result 9). Internally a virtual clock counts
    the service each present job has received; completions set it exactly.

    Parameters
    ----------
    releases : sequence of numbers
        Release times.
    sizes : sequence of numbers >= 0
        Processing times.
    ids : sequence of str, optional
        Job ids for tie-breaking (order of simultaneous completions), else by index.

    Returns
    -------
    Schedule
        Rule "ps"; pieces carry ``share = 1/k``.

    Raises
    ------
    InvalidParameterError
        Negative or non-finite numbers, sequences of different lengths, duplicate ids.

    Examples
    --------
    >>> ps_schedule([0, 0, 0], [1, 2, 3]).completion_times
    (3, 5, 6)
    """
    releases, sizes, ranks, ids = _prepare("ps_schedule", releases, sizes, ids)
    n = len(sizes)
    order = _release_order(releases, ranks)
    completion: list = [None] * n
    pieces: list = []
    finished: list = []
    heap: list = []  # (virtual finish, rank, job)
    v = 0  # service received by every present job since the last idle period
    t = releases[order[0]] if n else 0
    i = 0
    while i < n or heap:
        while i < n and releases[order[i]] <= t:
            k = order[i]
            i += 1
            if sizes[k] == 0:
                completion[k] = t
                finished.append(k)
            else:
                heapq.heappush(heap, (v + sizes[k], ranks[k], k))
        if not heap:
            if i == n:
                break
            t = releases[order[i]]
            v = 0
            continue
        k = len(heap)
        target = heap[0][0]
        t_end = t + (target - v) * k
        if i < n and releases[order[i]] < t_end:
            t_end = releases[order[i]]
            v = v + exact_div(t_end - t, k)
            done = False
        else:
            v = target
            done = True
        if t_end > t:
            share = exact_div(1, k)
            pieces.extend(Piece(j, t, t_end, share) for _, _, j in sorted(heap, key=_RANK))
        t = t_end
        if done:
            while heap and heap[0][0] == v:
                j = heapq.heappop(heap)[2]
                completion[j] = t
                finished.append(j)
    return _build(completion, pieces, finished, releases, sizes, ids, "ps")


# ---------------------------------------------------------------------------------------------
# SRPT on m identical machines
# ---------------------------------------------------------------------------------------------


@validate_params({
    "releases": [NumberSequence()],
    "sizes": [NumberSequence(0)],
    "machines": [Interval(Integral, 1, None, closed="left")],
    "ids": [None, IdSequence()],
})
def multi_srpt_schedule(releases: Sequence[Real], sizes: Sequence[Real], machines: int, *,
                        ids: Sequence[str] | None = None) -> Schedule:
    """Preemptive SRPT on ``machines`` identical unit-speed machines (jobs need one machine).

    At every instant the (at most ``machines``) released unfinished jobs with the smallest
    ``(remaining, tie key)`` run, one per machine, migration allowed. Not optimal for ``m >= 2``
    (proofs/classical.md, Result 10: the pinned instance costs 21 against an optimum of 20).
    O(n^2 log n); meant for small instances.

    Parameters
    ----------
    releases : sequence of numbers
        Release times.
    sizes : sequence of numbers >= 0
        Processing times.
    machines : int >= 1
        Number of machines ``m``.
    ids : sequence of str, optional
        Job ids for tie-breaking, else by index.

    Returns
    -------
    Schedule
        Rule "srpt-m"; each piece is on one machine (``share`` 1).

    Raises
    ------
    InvalidParameterError
        Negative or non-finite numbers, sequences of different lengths, duplicate ids,
        ``machines < 1``.

    Examples
    --------
    >>> s = multi_srpt_schedule([0, 5, 0, 5, 0], [5, 1, 1, 1, 1], 2)
    >>> s.completion_times, s.total_completion_time
    ((6, 6, 1, 7, 1), 21)
    """
    releases, sizes, ranks, ids = _prepare("multi_srpt_schedule", releases, sizes, ids)
    n = len(sizes)
    order = _release_order(releases, ranks)
    completion: list = [None] * n
    pieces: list = []
    finished: list = []
    rem = list(sizes)
    present: list = []
    open_since: dict = {}  # running job -> start of its open piece
    t = releases[order[0]] if n else 0
    i = 0
    while i < n or present:
        while i < n and releases[order[i]] <= t:
            k = order[i]
            i += 1
            if sizes[k] == 0:
                completion[k] = t
                finished.append(k)
            else:
                present.append(k)
        if not present:
            if i == n:
                break
            t = releases[order[i]]
            continue
        present.sort(key=lambda j: (rem[j], ranks[j]))
        running = present[:machines]
        chosen = set(running)
        for j in [j for j in open_since if j not in chosen]:  # preempted: close the piece
            if t > open_since[j]:
                pieces.append(Piece(j, open_since[j], t))
            del open_since[j]
        for j in running:
            open_since.setdefault(j, t)
        dt = rem[running[0]]  # the smallest remaining size among the running jobs
        complete = True
        if i < n and releases[order[i]] - t < dt:
            dt = releases[order[i]] - t
            complete = False
        t = t + dt
        for j in running:
            rem[j] = rem[j] - dt
        if complete:
            rem[running[0]] = 0  # the smallest: exactly done, also with floats
        for j in sorted((j for j in running if rem[j] <= 0), key=lambda j: ranks[j]):
            rem[j] = 0
            completion[j] = t
            finished.append(j)
            present.remove(j)
            pieces.append(Piece(j, open_since.pop(j), t))
    return _build(completion, pieces, finished, releases, sizes, ids, "srpt-m")
