"""Exact preemptive SRPT on one machine, as a one-shot function and as an incremental machine.

This module owns the single-machine schedule record (:class:`Piece`, :class:`Schedule`) shared by
every rule in :mod:`asrpt.single`, the one-shot :func:`srpt_schedule` and the incremental
:class:`SRPTMachine` that A-SRPT advances event by event (proofs/model.md, Definition 3). Preemptive
SRPT is optimal for ``1 | r_j, pmtn | sum C_j`` (Schrage 1968).

Conventions, the same in the function and the machine:

- Jobs are indices ``0..n-1`` (keys of any hashable type in the machine). The machine runs at
  unit speed; a job of size ``p`` needs ``p`` time units of it.
- **Ties.** The job with the smallest ``(remaining size, tie key)`` runs, where the tie key is
  ``asrpt.instance.id_key(ids[j])`` when ``ids`` are given and the index ``j`` otherwise. So of two
  jobs with equal remaining size the one with the smaller tie key runs first, also when it arrives
  later (it preempts the running job). Simultaneous events: completions are applied before
  arrivals at the same instant; simultaneous arrivals are taken in tie-key order.
- **Zero sizes** are allowed: such a job completes at its release, takes no machine time and
  leaves no piece. Negative, infinite or NaN sizes are rejected with InvalidParameterError.
- **Exactness.** With ``int`` and :class:`fractions.Fraction` data every time is exact (no
  ``float()`` anywhere); with floats the usual rounding applies. In particular an exact tie of
  remaining sizes may be decided by rounding in a float run, which swaps the two jobs'
  completion times; the sorted completion times and the total are unaffected beyond rounding.
- **Pieces** are maximal: a job's piece ends only when it completes or is preempted, so a schedule
  has at most ``2n - 1`` pieces.

Cost: :func:`srpt_schedule` sorts once by release and keeps one heap of ``(remaining, tie key,
job)``: O(n log n) time, O(n) memory. :class:`SRPTMachine` spends O(log n) per arrival, completion
or resize, never time proportional to the number of finished jobs.

Examples
--------
>>> s = srpt_schedule([0, 0, 1], [2, 1, 0.5])
>>> s.completion_times, s.total_completion_time
((3.5, 1, 1.5), 6.0)
>>> m = SRPTMachine()
>>> m.add("a", 0, 3); m.advance(1); m.add("b", 1, 1)
>>> m.running, m.remaining("a"), m.priority_order()
('b', 2, ['b', 'a'])
"""

from __future__ import annotations

import gc
import heapq
import math
from dataclasses import dataclass
from numbers import Real
from typing import Any, Callable, Hashable, Iterable, NamedTuple, Sequence

import numpy as np

from .._validation import is_number, validate_params
from ..errors import InvalidParameterError
from ..instance import id_key
from ..sizes import exact_div
from ._arrays import IdSequence, NumberSequence, as_list, check_lengths, exact_sum, tie_ranks

__all__ = ["Piece", "Schedule", "srpt_schedule", "SRPTMachine"]


class Piece(NamedTuple):
    """A maximal stretch ``[start, end)`` during which ``job`` runs at rate ``share``.

    ``share`` is the fraction of the machine the job gets (1 for SRPT, FCFS, SPT; ``1/k`` when
    ``k`` jobs share the machine under processor sharing or LAS). A NamedTuple: immutable, cheap
    to build by the million, and unpackable as ``job, start, end, share = piece``.

    >>> p = Piece(0, 1, 3)
    >>> p.share, p.work
    (1, 2)
    """

    job: Any
    start: Any
    end: Any
    share: Any = 1

    @property
    def work(self):
        """Machine time the job received in this piece: ``(end - start) * share``."""
        return (self.end - self.start) * self.share


@dataclass(frozen=True, repr=False)
class Schedule:
    """A single-machine schedule: completion times and pieces, in job-index order.

    Attributes
    ----------
    completion_times : tuple
        ``C_j`` per job index.
    pieces : tuple of Piece
        Maximal processing pieces, in the order they ended.
    releases, sizes : tuple
        The input, as numbers.
    finishing_order : tuple of int
        Job indices in the order they completed (ties as documented by each rule).
    ids : tuple of str or None
        Job ids when given (tie-breaking and :meth:`by_id`).
    rule : str
        The rule that produced it ("srpt", "fcfs", "ps", ...).

    Examples
    --------
    >>> s = srpt_schedule([0, 0], [2, 1], ids=["a", "b"])
    >>> s.by_id(), s.weighted_total([1, 3]), s.remaining_at(2)
    ({'a': 3, 'b': 1}, 6, (1, 0))
    """

    completion_times: tuple
    pieces: tuple
    releases: tuple
    sizes: tuple
    finishing_order: tuple
    ids: tuple | None = None
    rule: str = "srpt"

    def __repr__(self) -> str:
        return (f"Schedule(rule={self.rule!r}, n={self.n}, "
                f"total_completion_time={self.total_completion_time!r})")

    @property
    def n(self) -> int:
        """Number of jobs."""
        return len(self.completion_times)

    @property
    def total_completion_time(self):
        """``sum_j C_j`` (exact for ints and Fractions)."""
        return exact_sum(self.completion_times)

    @property
    def total_flow_time(self):
        """``sum_j (C_j - r_j)``."""
        return exact_sum(c - r for c, r in zip(self.completion_times, self.releases))

    @property
    def flow_times(self) -> tuple:
        """``C_j - r_j`` per job."""
        return tuple(c - r for c, r in zip(self.completion_times, self.releases))

    @property
    def makespan(self):
        """The last completion time (0 for an empty schedule)."""
        return max(self.completion_times, default=0)

    def weighted_total(self, weights: Sequence[Real]):
        """``sum_j w_j C_j`` for the given weights (one per job).

        Raises
        ------
        InvalidParameterError
            ``weights`` is not a sequence of finite numbers of length ``n``.
        """
        if not NumberSequence().is_satisfied_by(weights):
            raise InvalidParameterError(
                "The 'weights' parameter of weighted_total must be a sequence of finite numbers. "
                f"Got {weights!r} instead.")
        check_lengths("weighted_total", "completion_times", self.n, weights=weights)
        return exact_sum(w * c for w, c in zip(as_list(weights), self.completion_times))

    def by_id(self) -> dict:
        """Completion times keyed by job id (by index when the schedule has no ids)."""
        keys = self.ids if self.ids is not None else range(self.n)
        return dict(zip(keys, self.completion_times))

    def attained_at(self, t) -> tuple:
        """Machine time each job has received by time ``t`` (O(number of pieces))."""
        got = [0] * self.n
        for job, start, end, share in self.pieces:
            if start < t:
                got[job] += (min(end, t) - start) * share
        return tuple(got)

    def remaining_at(self, t) -> tuple:
        """Remaining size of each job at time ``t``: its full size before release, 0 once done.

        For SRPT these are the virtual remaining sizes ``r~_j(t)`` (proofs/model.md, Definition 3).
        """
        return tuple(p - a for p, a in zip(self.sizes, self.attained_at(t)))

    def number_present(self, t) -> int:
        """Jobs released by ``t`` and not completed by ``t`` (``N(t)``, which SRPT minimises at
        every t)."""
        return sum(1 for r, c in zip(self.releases, self.completion_times) if r <= t < c)

    def mean_busy_times(self) -> tuple:
        """Mean busy time ``M_j = (1/p_j) * integral of t over j's processing`` per job.

        Exact with ints and Fractions. A zero-size job's mean busy time is its completion time.
        """
        acc = [0] * self.n
        for job, start, end, share in self.pieces:
            acc[job] += (end - start) * (end + start) * share  # no cancellation at large t
        return tuple(exact_div(a, 2 * p) if p != 0 else c
                     for a, p, c in zip(acc, self.sizes, self.completion_times))

    def problems(self, *, machines: int = 1, rel_tol: float = 1e-9) -> list:
        """Check the schedule independently of the rule that made it; return its problems.

        Checks: pieces are non-empty, start no earlier than their job's release and give each job
        exactly its size (exactly for exact data, within ``rel_tol`` with floats); a job's
        completion time is its last piece's end (its release for a zero-size job); a job never
        gets more than one machine (its shares at any time sum to at most 1) and the machines'
        total rate is at most ``machines``; the finishing order is a permutation in time order.

        Parameters
        ----------
        machines : int
            Number of unit-speed machines (1 for the single-machine rules).
        rel_tol : float
            Relative tolerance for float data.

        Returns
        -------
        list of str
            One line per problem; empty for a valid schedule.

        Examples
        --------
        >>> srpt_schedule([0, 1], [2, 1]).problems()
        []
        """
        def close(a, b) -> bool:
            if isinstance(a, float) or isinstance(b, float):
                return abs(a - b) <= rel_tol * max(abs(a), abs(b), 1)
            return a == b

        out = []
        work = [0] * self.n
        last: list = [None] * self.n
        total: list = []
        per_job: list = [[] for _ in range(self.n)]
        for job, start, end, share in self.pieces:
            if not end > start:
                out.append(f"job {job}: empty piece [{start}, {end})")
            if start < self.releases[job] and not close(start, self.releases[job]):
                out.append(f"job {job}: runs at {start}, before its release {self.releases[job]}")
            work[job] += (end - start) * share
            last[job] = end if last[job] is None else max(last[job], end)
            total += [(start, share), (end, -share)]
            per_job[job] += [(start, share), (end, -share)]
        for j in range(self.n):
            if not close(work[j], self.sizes[j]):
                out.append(f"job {j}: received {work[j]}, needs {self.sizes[j]}")
            end = self.releases[j] if self.sizes[j] == 0 else last[j]
            if end is None or not close(self.completion_times[j], end):
                out.append(f"job {j}: completes at {self.completion_times[j]}, its last piece ends at {end}")

        def peaks(events, limit, what):
            rate = 0
            events.sort(key=lambda e: (e[0], e[1]))
            for i, (t, d) in enumerate(events):
                rate += d
                if (i + 1 == len(events) or events[i + 1][0] != t) and rate > limit * (1 + rel_tol):
                    out.append(f"at time {t}: {what} {rate}, more than {limit}")

        peaks(total, machines, "total rate")
        for j in range(self.n):
            peaks(per_job[j], 1, f"job {j} rate")
        order = list(self.finishing_order)
        if sorted(order) != list(range(self.n)):
            out.append("the finishing order is not a permutation of the jobs")
        elif any(self.completion_times[a] > self.completion_times[b] for a, b in zip(order, order[1:])):
            out.append("the finishing order is not in time order")
        return out

    def to_dict(self) -> dict:
        """A JSON-ready dict (numbers as given; the CLI turns Fractions into floats)."""
        name = (lambda j: self.ids[j]) if self.ids is not None else (lambda j: j)
        return {
            "rule": self.rule,
            "total_completion_time": self.total_completion_time,
            "completion_times": {str(k): v for k, v in self.by_id().items()},
            "finishing_order": [name(j) for j in self.finishing_order],
            "pieces": [{"job": name(p.job), "start": p.start, "end": p.end, "share": p.share}
                       for p in self.pieces],
        }


# ---------------------------------------------------------------------------------------------
# One-shot SRPT
# ---------------------------------------------------------------------------------------------

_SCHEDULE_CONSTRAINTS = {
    "releases": [NumberSequence()],
    "sizes": [NumberSequence(0)],
    "ids": [None, IdSequence()],
}


def _prepare(caller: str, releases, sizes, ids):
    """Lists of numbers, the tie ranks, and the length checks every rule shares."""
    check_lengths(caller, "sizes", len(sizes), releases=releases, ids=ids)
    return as_list(releases), as_list(sizes), tie_ranks(len(sizes), ids), (
        tuple(ids) if ids is not None else None)


@validate_params(_SCHEDULE_CONSTRAINTS)
def srpt_schedule(releases: Sequence[Real], sizes: Sequence[Real], *,
                  ids: Sequence[str] | None = None) -> Schedule:
    """Exact preemptive SRPT on one unit-speed machine.

    Event-driven with one heap of ``(remaining, tie key, job)``: O(n log n). The running job is
    preempted only by an arriving job with a smaller ``(size, tie key)``.

    Parameters
    ----------
    releases : sequence of numbers
        Release time ``r_j`` of each job.
    sizes : sequence of numbers >= 0
        Processing time ``p_j`` of each job (zero allowed: the job completes at its release).
    ids : sequence of str, optional
        Job ids; ties (equal remaining sizes, simultaneous events) are broken by
        ``asrpt.instance.id_key(ids[j])``, else by index.

    Returns
    -------
    Schedule
        Completion times, maximal pieces and the finishing order; rule "srpt".

    Raises
    ------
    InvalidParameterError
        Negative or non-finite numbers, sequences of different lengths, duplicate ids.

    Examples
    --------
    >>> s = srpt_schedule([0, 1, 1], [3, 1, 1], ids=["a", "c", "b"])
    >>> s.completion_times, [p[:3] for p in s.pieces]
    ((5, 3, 2), [(0, 0, 1), (2, 1, 2), (1, 2, 3), (0, 3, 5)])
    """
    releases, sizes, ranks, ids = _prepare("srpt_schedule", releases, sizes, ids)
    completion, pieces, finished = _srpt(releases, sizes, ranks if ids is not None else None)
    return Schedule(tuple(completion), tuple(pieces), tuple(releases), tuple(sizes),
                    tuple(finished), ids, "srpt")


def _srpt(releases: list, sizes: list, ranks: list | None) -> tuple[list, list, list]:
    """The SRPT event loop over plain lists (no validation; see :func:`srpt_schedule`).

    One pass over the jobs in release order; before each arrival the machine runs (completing
    jobs and taking the next from the heap) up to the arrival time. ``ranks`` None means ties by
    index. The cyclic garbage collector is paused during the loop: it builds millions of small
    tuples and no cycles, and generational collections would otherwise double the run time.
    """
    n = len(sizes)
    if ranks is None:
        ranks = range(n)
        if n > 1000 and set(map(type, releases)) == {float}:  # same order, a vectorised sort
            order = np.argsort(np.asarray(releases), kind="stable").tolist()
        else:
            order = sorted(range(n), key=releases.__getitem__)  # stable: equal releases by index
    else:
        order = sorted(range(n), key=lambda j: (releases[j], ranks[j]))
    completion: list = [None] * n
    pieces: list = []
    finished: list = []
    add_piece, add_finished = pieces.append, finished.append
    heap: list = []
    push, pop = heapq.heappush, heapq.heappop
    new_piece, piece_type = tuple.__new__, Piece
    cur = -1  # the running job, -1 when idle
    cur_rem = cur_rank = since = t = None
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for k in order:
            ta = releases[k]
            # run up to ta; a completion exactly at ta comes before the arrival
            while cur >= 0:
                finish = t + cur_rem
                if finish > ta:
                    cur_rem -= ta - t
                    break
                if finish < t:  # float rounding only
                    finish = t
                t = finish
                completion[cur] = t
                add_finished(cur)
                add_piece(new_piece(piece_type, (cur, since, t, 1)))
                if heap:
                    cur_rem, cur_rank, cur = pop(heap)
                    since = t
                else:
                    cur = -1
            t = ta
            sk = sizes[k]
            if sk == 0:
                completion[k] = ta
                add_finished(k)
            elif cur < 0:
                cur, cur_rem, cur_rank, since = k, sk, ranks[k], ta
            elif sk < cur_rem or (sk == cur_rem and ranks[k] < cur_rank):
                if ta > since:
                    add_piece(new_piece(piece_type, (cur, since, ta, 1)))
                push(heap, (cur_rem, cur_rank, cur))
                cur, cur_rem, cur_rank, since = k, sk, ranks[k], ta
            else:
                push(heap, (sk, ranks[k], k))
        while cur >= 0:  # no more arrivals: drain
            finish = t + cur_rem
            if finish < t:
                finish = t
            t = finish
            completion[cur] = t
            add_finished(cur)
            add_piece(new_piece(piece_type, (cur, since, t, 1)))
            if heap:
                cur_rem, cur_rank, cur = pop(heap)
                since = t
            else:
                cur = -1
    finally:
        if gc_was_enabled:
            gc.enable()
    return completion, pieces, finished


# ---------------------------------------------------------------------------------------------
# Incremental SRPT
# ---------------------------------------------------------------------------------------------


def _default_tie_key(key: Hashable):
    return id_key(key) if isinstance(key, str) else key


def _check_time(method: str, name: str, value, owner: str = "SRPTMachine") -> None:
    """A finite number for parameter ``name`` of ``owner.method`` (the virtual machines' check)."""
    if not (is_number(value) and math.isfinite(value)):
        raise InvalidParameterError(
            f"The '{name}' parameter of {owner}.{method} must be a finite number. Got {value!r} instead.")


def _check_new_job(owner: str, key, known, release, now) -> None:
    """``owner.add``'s checks on the job's identity and release: a new key, a finite release no
    earlier than the machine's time ``now``."""
    if key in known:
        raise InvalidParameterError(
            f"The 'key' parameter of {owner}.add must be a new job. Got {key!r}, already added.")
    _check_time("add", "release", release, owner)
    if release < now:
        raise InvalidParameterError(
            f"The 'release' parameter of {owner}.add must be >= the machine's time {now!r}. "
            f"Got {release!r} instead.")


class SRPTMachine:
    """An incremental preemptive SRPT machine: add jobs, advance time, read the state.

    It is the virtual single machine (proofs/model.md, Definition 3) as A-SRPT needs it: jobs are
    added as they arrive (or ahead of time, with a future release), time is advanced event by
    event, and at any time the machine says each job's remaining size, its virtual completion time
    once done, and the SRPT priority order of the unfinished jobs. Sizes may be changed later
    (:meth:`resize`, for adaptive predictions). It follows exactly the conventions of
    :func:`srpt_schedule` (ties, zero sizes, completions before arrivals) and produces the same
    completion times and pieces on the same input.

    Parameters
    ----------
    start : number
        The machine's initial time (default 0).
    tie_key : callable or None
        Maps a job key to its tie-breaking key. Default: ``asrpt.instance.id_key`` for string
        keys, the key itself otherwise (so integer keys break ties by index). All keys of one
        machine must give mutually comparable tie keys.

    Attributes
    ----------
    now : number
        The current time.

    Raises
    ------
    InvalidParameterError
        On a non-finite start time.

    Examples
    --------
    >>> m = SRPTMachine()
    >>> m.add("A", 0, 2); m.add("B", 0, 1); m.add("C", 1, 0.5)
    >>> m.advance(1.2)
    >>> m.running, m.completion_time("B"), m.remaining("C"), m.priority_order()
    ('C', 1, 0.30000000000000004, ['C', 'A'])
    >>> m.run(); m.completion_times()
    {'B': 1, 'C': 1.5, 'A': 3.5}
    """

    def __init__(self, *, start: Real = 0, tie_key: Callable[[Hashable], Any] | None = None):
        _check_time("__init__", "start", start)
        self.now = start
        self._tie = tie_key if tie_key is not None else _default_tie_key
        self._seq = 0
        self._size: dict = {}
        self._release: dict = {}
        self._tiekey: dict = {}
        self._pending: list = []        # heap (release, tie key, seq, key): not yet released
        self._pending_keys: set = set()
        self._waiting: list = []        # heap (remaining, tie key, seq, key): present, not running
        self._rem: dict = {}            # remaining of waiting jobs
        self._entry: dict = {}          # key -> seq of its live heap entry
        self._done: dict = {}           # key -> completion time, in finishing order
        self._log: list = []            # finished since the last pop_finished()
        self._cur = None
        self._cur_rem = None
        self._since = None
        self._pieces: list = []

    # -- reading the state ---------------------------------------------------------------------

    def __repr__(self) -> str:
        return (f"SRPTMachine(now={self.now!r}, running={self._cur!r}, "
                f"waiting={len(self._rem)}, pending={len(self._pending_keys)}, done={len(self._done)})")

    def __contains__(self, key: Hashable) -> bool:
        return key in self._size

    def __len__(self) -> int:
        return len(self._size)

    @property
    def running(self):
        """The key of the running job, or None when the machine is idle."""
        return self._cur

    @property
    def n_unfinished(self) -> int:
        """Jobs released and not finished (running or waiting)."""
        return len(self._rem) + (self._cur is not None)

    def _known(self, method: str, key: Hashable) -> None:
        if key not in self._size:
            raise InvalidParameterError(
                f"The 'key' parameter of SRPTMachine.{method} must be a job added to the machine. "
                f"Got {key!r} instead.")

    def remaining(self, key: Hashable):
        """Remaining size of a job at :attr:`now` (its full size before release, 0 once done)."""
        self._known("remaining", key)
        if key == self._cur:
            return self._cur_rem
        if key in self._rem:
            return self._rem[key]
        if key in self._done:
            return 0
        return self._size[key]

    def size(self, key: Hashable):
        """The job's current total size."""
        self._known("size", key)
        return self._size[key]

    def attained(self, key: Hashable):
        """Machine time the job has received by :attr:`now`."""
        return self._size[key] - self.remaining(key)

    def completion_time(self, key: Hashable):
        """The job's virtual completion time ``C~_j``, or None while it is unfinished."""
        self._known("completion_time", key)
        return self._done.get(key)

    def completion_times(self) -> dict:
        """Completion times of the finished jobs, in finishing order."""
        return dict(self._done)

    def pop_finished(self) -> list:
        """Keys of the jobs that finished since the previous call, in finishing order (a job
        reopened by :meth:`resize` and finished again appears again).

        >>> m = SRPTMachine()
        >>> m.add("a", 0, 1); m.add("b", 0, 2); m.advance(3)
        >>> m.pop_finished(), m.pop_finished()
        (['a', 'b'], [])
        """
        out, self._log = self._log, []
        return out

    @property
    def finishing_order(self) -> tuple:
        """Keys of the finished jobs in the order they finished."""
        return tuple(self._done)

    def priority_key(self, key: Hashable) -> tuple:
        """``(remaining, C~ (now for unfinished jobs), tie key)``: A-SRPT's priority list.

        The order of step 3 of A-SRPT in proofs/model.md, Definition 4.

        Finished jobs (remaining 0) sort by their virtual completion time, before every
        unfinished job with a positive remaining size.
        """
        rem = self.remaining(key)
        done = self._done.get(key)
        return (rem, self.now if done is None else done, self._tiekey[key])

    def priority_order(self, keys: Iterable[Hashable] | None = None) -> list:
        """Keys sorted by :meth:`priority_key`; default: the released, unfinished jobs.

        The first of the default order is the running job. Costs O(k log k) for k keys.
        """
        if keys is None:
            keys = list(self._rem)
            if self._cur is not None:
                keys.append(self._cur)
        return sorted(keys, key=self.priority_key)

    def upcoming_completions(self, until=None, limit: int = 16) -> tuple:
        """The completions the machine makes after :attr:`now` if no job is added or resized
        first, read ahead without changing the machine: ``(events, horizon)``.

        The same contract as :meth:`asrpt.single.gang.GangSRPTMachine.upcoming_completions`:
        ``events`` lists ``(time, key)`` in finishing order, every completion before ``horizon``
        and no other; ``horizon`` is ``until`` (None: no bound), or earlier where the read
        stopped (at the next release, or at the first completion past ``limit`` listed ones).
        The times are those :meth:`advance` will record, bit for bit (the same additions in the
        same order), as long as the machine is next advanced from its current state.

        >>> m = SRPTMachine()
        >>> m.add("A", 0, 2); m.add("B", 0, 1); m.add("C", 5, 1)
        >>> m.upcoming_completions()
        ([(1, 'B'), (3, 'A')], 5)
        >>> m.upcoming_completions(until=2), m.upcoming_completions(limit=1)
        (([(1, 'B')], 2), ([(1, 'B')], 3))
        >>> m.now, m.running
        (0, 'B')
        """
        if self._pending:
            release = self._pending[0][0]
            if until is None or release < until:
                until = release
        if self._cur is None:
            return [], until
        entry = self._entry
        queue = None            # a copy of the waiting heap, made only if the read goes past the running job
        events = []
        now, key, rem = self.now, self._cur, self._cur_rem
        while True:
            finish = now + rem
            if finish < now:  # float rounding only, as in _advance
                finish = now
            if until is not None and finish >= until:
                return events, until
            if len(events) >= limit:
                return events, finish
            events.append((finish, key))
            if queue is None:
                queue = list(self._waiting)
            while queue and entry.get(queue[0][3]) != queue[0][2]:     # stale entries, as _top drops them
                heapq.heappop(queue)
            if not queue:
                return events, until
            now = finish
            rem, _, _, key = heapq.heappop(queue)

    @property
    def pieces(self) -> tuple:
        """Processing pieces so far; the running job's open piece ends at :attr:`now`."""
        out = list(self._pieces)
        if self._cur is not None and self.now > self._since:
            out.append(Piece(self._cur, self._since, self.now))
        return tuple(out)

    # -- changing the state --------------------------------------------------------------------

    def add(self, key: Hashable, release: Real, size: Real) -> None:
        """Add a job released at ``release`` (>= :attr:`now`) with ``size`` >= 0.

        A job released now is considered at once (it preempts the running job if its
        ``(size, tie key)`` is smaller); a later release waits for :meth:`advance`.

        Raises
        ------
        InvalidParameterError
            The key is already known, the release is before now, or the size is negative or not
            finite.
        """
        _check_new_job("SRPTMachine", key, self._size, release, self.now)
        _check_time("add", "size", size)
        if size < 0:
            raise InvalidParameterError(
                f"The 'size' parameter of SRPTMachine.add must be >= 0. Got {size!r} instead.")
        self._size[key] = size
        self._release[key] = release
        self._tiekey[key] = self._tie(key)
        if release == self.now:
            self._arrive(key)
        else:
            self._seq += 1
            heapq.heappush(self._pending, (release, self._tiekey[key], self._seq, key))
            self._pending_keys.add(key)

    def advance(self, t: Real) -> None:
        """Run the machine up to time ``t`` (>= :attr:`now`), applying every completion and release
        on the way; O(log n) per event.

        Raises
        ------
        InvalidParameterError
            ``t`` is before :attr:`now` or not finite.
        """
        _check_time("advance", "t", t)
        if t < self.now:
            raise InvalidParameterError(
                f"The 't' parameter of SRPTMachine.advance must be >= the machine's time {self.now!r}. "
                f"Got {t!r} instead.")
        self._advance(t)

    def run(self) -> None:
        """Run until every job added so far has finished; :attr:`now` ends at the last event."""
        self._advance(None)

    def resize(self, key: Hashable, size: Real) -> None:
        """Change a job's total size at :attr:`now` (e.g. a new prediction).

        The remaining size changes by the same amount. A finished job given a larger size becomes
        unfinished again (its completion time is dropped); a size equal to the attained service
        completes the job now. The SRPT order is restored at once (preemptions happen now).

        Raises
        ------
        InvalidParameterError
            Unknown key, non-finite size, or a size below the service already attained.
        """
        self._known("resize", key)
        _check_time("resize", "size", size)
        old = self._size[key]
        attained = old - self.remaining(key)
        if size < attained:
            raise InvalidParameterError(
                f"The 'size' parameter of SRPTMachine.resize must be >= the attained service {attained!r} "
                f"of job {key!r}. Got {size!r} instead.")
        self._size[key] = size
        delta = size - old
        if key in self._pending_keys or delta == 0:
            return
        if key in self._done:
            if size == attained:
                return
            del self._done[key]
            self._enqueue(key, size - attained)
        elif key == self._cur:
            self._cur_rem = self._cur_rem + delta
            if size == attained:
                self._complete_current()
        elif size == attained:  # a waiting job whose new size is already served
            del self._rem[key]
            del self._entry[key]
            self._done[key] = self.now
            self._log.append(key)
        else:
            self._enqueue(key, self._rem[key] + delta)
        self._rebalance()

    # -- internals -----------------------------------------------------------------------------

    def _enqueue(self, key, rem) -> None:
        self._seq += 1
        self._rem[key] = rem
        self._entry[key] = self._seq
        heapq.heappush(self._waiting, (rem, self._tiekey[key], self._seq, key))

    def _top(self):
        """The live top entry of the waiting heap (stale entries dropped), or None."""
        w = self._waiting
        while w:
            rem, tk, seq, key = w[0]
            if self._entry.get(key) == seq:
                return w[0]
            heapq.heappop(w)
        return None

    def _arrive(self, key) -> None:
        size = self._size[key]
        if size == 0:
            self._done[key] = self.now
            self._log.append(key)
            return
        if self._cur is None:  # e.g. right after a completion at this instant
            self._pick()
        if self._cur is not None:
            tk = self._tiekey[key]
            ctk = self._tiekey[self._cur]
            if size < self._cur_rem or (size == self._cur_rem and tk < ctk):
                self._preempt()
            else:
                self._enqueue(key, size)
                return
        self._start(key, size)

    def _start(self, key, rem) -> None:
        self._cur, self._cur_rem, self._since = key, rem, self.now

    def _preempt(self) -> None:
        cur = self._cur
        if self.now > self._since:
            self._pieces.append(Piece(cur, self._since, self.now))
        self._cur = None
        self._enqueue(cur, self._cur_rem)

    def _complete_current(self) -> None:
        cur = self._cur
        if self.now > self._since:
            self._pieces.append(Piece(cur, self._since, self.now))
        self._done[cur] = self.now
        self._log.append(cur)
        self._cur = None
        self._cur_rem = None

    def _pick(self) -> None:
        top = self._top()
        if top is not None:
            heapq.heappop(self._waiting)
            key = top[3]
            rem = self._rem.pop(key)
            del self._entry[key]
            self._start(key, rem)

    def _rebalance(self) -> None:
        if self._cur is None:
            self._pick()
            return
        top = self._top()
        if top is not None:
            ctk = self._tiekey[self._cur]
            if top[0] < self._cur_rem or (top[0] == self._cur_rem and top[1] < ctk):
                self._preempt()
                self._pick()

    def _release_due(self) -> None:
        """Apply every release at :attr:`now` (in tie-key order)."""
        p = self._pending
        while p and p[0][0] <= self.now:
            key = heapq.heappop(p)[3]
            self._pending_keys.discard(key)
            self._arrive(key)

    def _advance(self, t) -> None:
        p = self._pending
        while True:
            if self._cur is None:
                self._pick()
            next_release = p[0][0] if p else None
            if self._cur is None:
                if next_release is None or (t is not None and next_release > t):
                    break
                self.now = next_release
                self._release_due()
                continue
            finish = self.now + self._cur_rem
            if finish < self.now:  # float rounding only
                finish = self.now
            horizon = next_release
            if t is not None and (horizon is None or t < horizon):
                horizon = t
            if horizon is None or finish <= horizon:
                self.now = finish
                self._complete_current()
                self._release_due()
                continue
            self._cur_rem = self._cur_rem - (horizon - self.now)
            self.now = horizon
            if next_release is not None and horizon == next_release:
                self._release_due()
                continue
            break
        if t is not None and t > self.now:
            self.now = t

