"""The gang-aware virtual machine: an M-GPU fluid relaxation in which job j uses at most g_j GPUs.

The fluid virtual machine of :mod:`asrpt.single.virtual` lets every job use the whole cluster, so
a job can finish virtually in ``g_j P_j / M`` seconds, far sooner than it can finish for real
(``P_j``). This module owns the relaxation that respects gangs:

- the machine has ``M`` units of capacity (GPUs); job j (released at ``a_j``, ``P_j`` seconds of
  processing at full rate, gang size ``g_j <= M``) may be served at any rate ``x_j(t)`` in
  ``[0, g_j]`` GPUs, with ``sum_j x_j(t) <= M``; it completes when it has received ``g_j P_j``
  GPU-seconds;
- every schedule of the real cluster (gangs of exactly ``g_j`` GPUs or nothing, any placement,
  any preemption) is a schedule of this relaxation, so its optimum lower-bounds the cluster's;
- and every job's virtual completion satisfies ``C~_j >= a_j + P_j``.

The machine serves it by **gang-capped SRPT**: at every instant the released unfinished jobs are
ranked by remaining time at full rate ``r_j(t)`` (ties by the tie key), and capacity is handed out
in that order, ``g_j`` GPUs each, the last job served getting what is left (a fractional rate).
With every ``g_j = 1`` this is preemptive SRPT on M identical machines
(:func:`~asrpt.single.rules.multi_srpt_schedule`); with every ``g_j = M`` it is single-machine
SRPT on ``P_j`` (a time-scaled copy of the fluid machine).

Why it is exact and cheap: between two events (releases, completions, resizes) the ranking never
changes (jobs at full rate all lose remaining time at rate 1, the fractional one more slowly, the
unserved ones not at all), so the next event is the completion of the first-ranked job or the
next release, and the state changes only at events. A key consequence (the analogue of the fluid
machine's fact F1, used by the proofs): **once job k is ranked ahead of job j it stays ahead, and
C~_k <= C~_j.** While a job is served below its full rate, the jobs ahead of it hold at least
``M - g_j + 1`` GPUs.

Arithmetic is exact for ints and Fractions (rates are Fractions), floats otherwise. An event costs
O(s + log n), where s <= M is the number of jobs in service.

Examples
--------
>>> m = GangSRPTMachine(4)
>>> m.add("A", 0, 4, 2); m.add("B", 0, 1, 4); m.add("C", 1, 2, 1)
>>> m.run(); m.completion_times()
{'B': 1, 'C': 3, 'A': 5}
"""

from __future__ import annotations

import heapq
from typing import Any, Callable, Hashable, NamedTuple, Sequence

from .._sorted import insort, remove_sorted
from ..errors import InvalidParameterError
from ..instance import id_key
from ..sizes import exact_div, exact_mul
from .srpt import _check_new_job, _check_time

__all__ = ["GangSRPTMachine", "GangPiece", "gang_schedule"]


def _default_tie_key(key: Hashable):
    return id_key(key) if isinstance(key, str) else key


def _check(method: str, name: str, value) -> None:
    _check_time(method, name, value, "GangSRPTMachine")


class _Sink(dict):
    """An entry map that forgets what it is given (the read-ahead probe's: it never looks up)."""

    def __setitem__(self, key, value) -> None:
        """Keep nothing."""

    def __delitem__(self, key) -> None:
        """Nothing was kept."""


class GangPiece(NamedTuple):
    """One interval of the gang machine's schedule: ``rates`` maps each served job to the GPUs it
    received on ``[start, end)``."""

    start: Any
    end: Any
    rates: tuple


class GangSRPTMachine:
    """An incremental gang-capped SRPT machine with ``capacity`` GPUs (module docstring).

    Parameters
    ----------
    capacity : int >= 1
        The cluster's GPU count M.
    start : number
        Initial time.
    tie_key : callable or None
        Maps a job key to its tie-breaking key (default: ``id_key`` for strings, the key itself
        otherwise). Tie keys must be distinct and mutually comparable.
    record : bool
        Keep every interval's rates (:attr:`pieces`), for checks; off by default.

    Examples
    --------
    Two 1-GPU jobs share a 2-GPU machine; a 2-GPU job arriving later waits for the shorter one:

    >>> m = GangSRPTMachine(2, record=True)
    >>> m.add("a", 0, 3, 1); m.add("b", 0, 1, 1); m.add("c", 1, 1, 2)
    >>> m.advance(1); m.rates()
    {'c': 2}
    >>> m.run(); m.completion_times()
    {'b': 1, 'c': 2, 'a': 4}
    """

    def __init__(self, capacity: int, *, start=0, tie_key: Callable[[Hashable], Any] | None = None,
                 record: bool = False):
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise InvalidParameterError(
                f"The 'capacity' parameter of GangSRPTMachine must be an int >= 1. Got {capacity!r} instead.")
        _check("__init__", "start", start)
        self.capacity = capacity
        self.now = start
        self._tie = tie_key if tie_key is not None else _default_tie_key
        self._record = record
        self._pieces: list[GangPiece] = []
        self._size: dict = {}
        self._gpus: dict = {}
        self._tiekey: dict = {}
        self._pending: list = []          # heap (release, tie key, key) of future releases
        self._pending_keys: set = set()
        # sorted Python lists (asrpt._sorted: cheaper than a SortedList at these sizes)
        self._queue: list = []            # (remaining, tie key, key): released, not served
        self._qentry: dict = {}
        self._full: list = []             # (finish, tie key, key): served at full rate; remaining = finish - now
        self._fentry: dict = {}
        self._full_gpus = 0
        self._frac = None                 # [key, remaining, (GPUs, gang)]: the one job served below full rate
        self._done: dict = {}             # key -> completion time, in finishing order
        self._log: list = []              # finished since the last pop_finished()

    # -- reading the state ---------------------------------------------------------------------
    def __contains__(self, key) -> bool:
        return key in self._size

    def __len__(self) -> int:
        return len(self._size)

    def __repr__(self) -> str:
        served = len(self._full) + (self._frac is not None)
        return (f"GangSRPTMachine(capacity={self.capacity}, now={self.now!r}, served={served}, "
                f"queued={len(self._queue)}, pending={len(self._pending_keys)}, done={len(self._done)})")

    def _known(self, method: str, key) -> None:
        if key not in self._size:
            raise InvalidParameterError(
                f"The 'key' parameter of GangSRPTMachine.{method} must be a job added to the machine. "
                f"Got {key!r} instead.")

    def remaining(self, key):
        """Remaining time at full rate at :attr:`now` (the full ``P_j`` before release, 0 once done)."""
        self._known("remaining", key)
        entry = self._fentry.get(key)
        if entry is not None:
            return entry[0] - self.now
        if self._frac is not None and self._frac[0] == key:
            return self._frac[1]
        entry = self._qentry.get(key)
        if entry is not None:
            return entry[0]
        if key in self._done:
            return 0
        return self._size[key]

    def size(self, key):
        """The job's current total time at full rate ``P_j``."""
        self._known("size", key)
        return self._size[key]

    def attained(self, key):
        """Time at full rate the job has received by :attr:`now`."""
        return self._size[key] - self.remaining(key)

    def completion_time(self, key):
        """The virtual completion time ``C~_j``, or None while the job is unfinished."""
        self._known("completion_time", key)
        return self._done.get(key)

    def completion_times(self) -> dict:
        """Completion times of the finished jobs, in finishing order."""
        return dict(self._done)

    def rates(self) -> dict:
        """GPUs each served job receives now (the machine's current allocation)."""
        out = {e[2]: self._gpus[e[2]] for e in self._full}
        if self._frac is not None:
            cap, g = self._frac[2]
            out[self._frac[0]] = exact_mul(exact_div(cap, g), g)
        return out

    def ranked(self) -> list:
        """Released unfinished jobs in rank order (served first)."""
        return list(self.iter_ranked())

    def iter_ranked(self):
        """Iterate over the released unfinished jobs in rank order, lazily (O(1) per job read)."""
        for entry in self._full:
            yield entry[2]
        if self._frac is not None:
            yield self._frac[0]
        for entry in self._queue:
            yield entry[2]

    def pop_finished(self) -> list:
        """Keys of the jobs that finished since the previous call, in finishing order (a job
        reopened by :meth:`resize` and finished again appears again)."""
        out, self._log = self._log, []
        return out

    def next_completion(self):
        """The time the first-ranked job completes if nothing else happens first, or None."""
        return self._full[0][0] if self._full else None

    def upcoming_completions(self, until=None, limit: int = 16) -> tuple:
        """The completions the machine makes after :attr:`now` if no job is added or resized
        first, read ahead without changing the machine: ``(events, horizon)``.

        ``events`` lists ``(time, key)`` in finishing order: every completion before ``horizon``
        and no other. ``horizon`` is ``until`` (None: no bound), or earlier where the read
        stopped: at the next release, or at the first completion time past ``limit`` listed
        completions (a job finishing then is not listed).

        If the machine is next advanced to a time ``t`` (no job added or resized first), the
        completions it records before ``min(t, horizon)`` are the listed ones, bit for bit: the
        read takes the steps of :meth:`advance` in the same order. After any other change, read
        again: even an advance to a time between two events moves the fractional job's remaining
        time, so later float times may differ by rounding.

        >>> m = GangSRPTMachine(4)
        >>> m.add("A", 0, 4, 2); m.add("B", 0, 1, 4); m.add("C", 0, 2, 1)
        >>> m.upcoming_completions()
        ([(1, 'B'), (3, 'C'), (5, 'A')], None)
        >>> m.upcoming_completions(until=4)
        ([(1, 'B'), (3, 'C')], 4)
        >>> m.upcoming_completions(limit=1)
        ([(1, 'B')], 3)
        >>> m.now
        0
        """
        if self._pending:
            release = self._pending[0][0]
            if until is None or release < until:
                until = release
        if not self._full or (until is not None and self._full[0][0] >= until):
            return [], until        # (the common case: nothing to read, nothing copied)
        # A probe sharing the read-only parts: its own lists, sinks for the entry maps.
        probe = object.__new__(GangSRPTMachine)
        probe.__dict__.update(self.__dict__)
        probe._queue, probe._full = self._queue.copy(), self._full.copy()
        probe._frac = None if self._frac is None else list(self._frac)
        probe._qentry = probe._fentry = _Sink()
        probe._done, probe._log, probe._record = {}, [], False
        probe._pending, probe._pending_keys = [], set()     # (the read stops before a release)
        full = probe._full
        while full:
            nxt = full[0][0]
            if until is not None and nxt >= until:
                break
            if len(probe._log) >= limit:
                return [(probe._done[k], k) for k in probe._log], nxt
            probe._step(nxt)
        return [(probe._done[k], k) for k in probe._log], until

    @property
    def pieces(self) -> tuple:
        """The recorded intervals (``record=True``), oldest first."""
        return tuple(self._pieces)

    # -- changing the state --------------------------------------------------------------------
    def add(self, key, release, time, gpus: int) -> None:
        """Add a job released at ``release`` (>= :attr:`now`) needing ``time`` >= 0 seconds at its
        full rate of ``gpus`` GPUs (1 <= gpus <= capacity).

        Raises
        ------
        InvalidParameterError
            Known key, release before now, negative or non-finite numbers, gang size out of range.
        """
        _check_new_job("GangSRPTMachine", key, self._size, release, self.now)
        _check("add", "time", time)
        if time < 0:
            raise InvalidParameterError(
                f"The 'time' parameter of GangSRPTMachine.add must be >= 0. Got {time!r} instead.")
        if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= self.capacity:
            raise InvalidParameterError(
                f"The 'gpus' parameter of GangSRPTMachine.add must be an int in [1, {self.capacity}]. "
                f"Got {gpus!r} instead.")
        self._size[key] = time
        self._gpus[key] = gpus
        self._tiekey[key] = self._tie(key)
        if release == self.now:
            self._release(key)
            self._rebalance()
        else:
            heapq.heappush(self._pending, (release, self._tiekey[key], key))
            self._pending_keys.add(key)

    def resize(self, key, time) -> None:
        """Change a job's total time at :attr:`now` (a new prediction); the remaining time changes
        by the same amount. A finished job given more time is unfinished again; a time equal to
        what it attained completes it now.

        Raises
        ------
        InvalidParameterError
            Unknown key, non-finite time, or a time below what the job attained.
        """
        self._known("resize", key)
        _check("resize", "time", time)
        attained = self.attained(key)
        if time < attained:
            raise InvalidParameterError(
                f"The 'time' parameter of GangSRPTMachine.resize must be >= the attained time {attained!r} "
                f"of job {key!r}. Got {time!r} instead.")
        old = self._size[key]
        self._size[key] = time
        if key in self._pending_keys or time == old:
            return
        rem = time - attained
        if key in self._done:
            del self._done[key]
        elif key in self._fentry:
            remove_sorted(self._full, self._fentry.pop(key))
            self._full_gpus -= self._gpus[key]
        elif self._frac is not None and self._frac[0] == key:
            self._frac = None
        else:
            remove_sorted(self._queue, self._qentry.pop(key))
        if rem == 0:
            self._finish(key)
        else:
            self._enqueue(key, rem)
        self._rebalance()

    def advance(self, t) -> None:
        """Run the machine up to time ``t`` (>= :attr:`now`), applying completions and releases.

        Raises
        ------
        InvalidParameterError
            ``t`` before :attr:`now` or not finite.
        """
        _check("advance", "t", t)
        if t < self.now:
            raise InvalidParameterError(
                f"The 't' parameter of GangSRPTMachine.advance must be >= the machine's time {self.now!r}. "
                f"Got {t!r} instead.")
        self._advance(t)

    def run(self) -> None:
        """Run until every job added so far has finished."""
        self._advance(None)

    # -- internals -----------------------------------------------------------------------------
    def _enqueue(self, key, rem) -> None:
        entry = (rem, self._tiekey[key], key)
        self._qentry[key] = entry
        insort(self._queue, entry)

    def _finish(self, key) -> None:
        self._done[key] = self.now
        self._log.append(key)

    def _release(self, key) -> None:
        if self._size[key] == 0:
            self._finish(key)
        else:
            self._enqueue(key, self._size[key])

    def _elapse(self, t) -> None:
        """Move time to ``t``: full-rate jobs keep their finish times; only the fractional job's
        remaining time changes."""
        dt = t - self.now
        if dt > 0:
            if self._record and (self._full or self._frac is not None):
                self._pieces.append(GangPiece(self.now, t, tuple(self.rates().items())))
            frac = self._frac
            if frac is not None:
                cap, g = frac[2]    # the rate cap / g: a float step without the Fraction, the same value
                frac[1] = frac[1] - ((cap / g) * dt if type(dt) is float else exact_mul(exact_div(cap, g), dt))
        self.now = t

    def _to_full(self, key, rem) -> None:
        entry = (self.now + rem, self._tiekey[key], key)
        self._fentry[key] = entry
        insort(self._full, entry)
        self._full_gpus += self._gpus[key]

    def _rebalance(self) -> None:
        """Hand the capacity out again in rank order (after releases, completions, resizes):
        jobs ranked ahead of the last full-rate ones move in, the last ones move out, and the
        first job that does not fit gets what is left."""
        queue, full, gpus, now = self._queue, self._full, self._gpus, self.now
        if self._frac is not None:
            key, rem, _ = self._frac
            self._frac = None
            self._enqueue(key, rem)
        cap = self.capacity - self._full_gpus
        while queue:
            rem, tie, key = queue[0]
            g = gpus[key]
            if full:
                finish, ftie, fkey = full[-1]
                ahead = (rem, tie) < (finish - now, ftie)
            else:
                ahead = False
            if ahead and g > cap:               # the head outranks the last full-rate job: swap
                full.pop()
                del self._fentry[fkey]
                self._full_gpus -= gpus[fkey]
                cap += gpus[fkey]
                self._enqueue(fkey, finish - now)
                continue
            if not ahead and cap == 0:
                break
            queue.pop(0)
            del self._qentry[key]
            if g <= cap:
                self._to_full(key, rem)
                cap -= g
            else:
                self._frac = [key, rem, (cap, g)]
                break

    def _advance(self, t) -> None:
        pending, full = self._pending, self._full
        while True:
            # the next event: the first full-rate finish or the first release (the finish on a tie)
            nxt = full[0][0] if full else None
            if pending and (nxt is None or pending[0][0] < nxt):
                nxt = pending[0][0]
            if nxt is None or (t is not None and nxt > t):
                if t is not None:
                    self._elapse(t)
                return
            self._step(nxt)

    def _step(self, nxt) -> None:
        """Move to the next event at ``nxt``: its completions, its releases, the new allocation."""
        if nxt < self.now:  # float rounding only
            nxt = self.now
        self._elapse(nxt)
        full = self._full
        while full and full[0][0] <= nxt:   # every full-rate job finishing now
            key = full.pop(0)[2]
            del self._fentry[key]
            self._full_gpus -= self._gpus[key]
            self._finish(key)
        pending = self._pending
        while pending and pending[0][0] <= self.now:
            key = heapq.heappop(pending)[2]
            self._pending_keys.discard(key)
            self._release(key)
        self._rebalance()


def gang_schedule(releases: Sequence, times: Sequence, gpus: Sequence[int], capacity: int, *,
                  ids: Sequence[str] | None = None) -> tuple:
    """Completion times of gang-capped SRPT on ``capacity`` GPUs, in job order.

    Parameters
    ----------
    releases, times : sequences of numbers
        Release times ``a_j`` and full-rate processing times ``P_j``.
    gpus : sequence of int
        Gang sizes ``g_j`` (1 <= g_j <= capacity).
    capacity : int
        The GPU count M.
    ids : sequence of str, optional
        Job ids for tie-breaking (``id_key``), else by index.

    Examples
    --------
    >>> gang_schedule([0, 0, 1], [4, 1, 2], [2, 4, 1], 4, ids=["A", "B", "C"])
    (5, 1, 3)
    """
    if not (len(releases) == len(times) == len(gpus)) or (ids is not None and len(ids) != len(times)):
        raise InvalidParameterError("gang_schedule: releases, times, gpus (and ids) must have the same length")
    keys = list(ids) if ids is not None else list(range(len(times)))
    m = GangSRPTMachine(capacity, start=min(releases, default=0),
                        tie_key=None if ids is not None else (lambda k: k))
    for k, a, p, g in zip(keys, releases, times, gpus):
        m.add(k, a, p, g)
    m.run()
    return tuple(m.completion_time(k) for k in keys)

