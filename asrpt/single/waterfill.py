"""Water-filling: the prediction-free (non-clairvoyant) rule on the gang-capped fluid machine.

The machine is the relaxation of :mod:`asrpt.single.gang`: ``M`` units of capacity (GPUs), job j
(released at ``a_j``, ``q_j`` seconds of processing at its full rate, gang size ``g_j <= M``) may
be served at any rate of ``[0, g_j]`` GPUs with the rates summing to at most ``M``. Water-filling
uses no size at all: at every instant each released unfinished job gets ``min(g_j, L)`` GPUs, the
level ``L`` chosen so that the capacity is used up (or every job is at its cap). It is processor
sharing (round robin with an infinitesimal quantum) generalized to gangs: with every ``g_j = 1``
and one GPU it is :func:`~asrpt.single.rules.ps_schedule`.

What it is for: it is the robust half of the time-shared combination of
:mod:`asrpt.theory.robust` (Theorem 3 in ``proofs/theorem3.md``), because its cost is bounded
whatever the predictions are. Its two facts, both checked per instance there:

- **Lemma 6** (the waiting bound). Run at speed ``s`` (job j progresses at ``s x_j`` seconds of
  processing per second, ``x_j = min(g_j, L)/g_j``), every job satisfies
  ``C_j <= a_j + (q_j + sum_k min(A_k, A_j) / M) / s`` with areas ``A_k = g_k q_k``, the sum over
  the jobs present at some time in ``[a_j, C_j)``: while j is below its cap the capacity is used
  up and no job gets more GPUs than j, and while j is at its cap it runs at full rate.
- **Lemma 5** (rigid realization). Its shares are fractional, but any shares ``x_j`` with
  ``sum_j g_j x_j <= M`` fit, as rigid gangs, into one time slice at a third of their length:
  the strict list schedule by non-increasing gang (:func:`strict_list_makespan`) of lengths
  ``x_j / 3`` ends by 1.

Between two releases or completions the shares do not change (they depend only on the set of
jobs present), so the schedule is exact and event-driven: O(A log A) per event for A jobs present.
Arithmetic is exact for ints and Fractions, floats otherwise.

Examples
--------
Two 1-GPU jobs and a 2-GPU job on 2 GPUs share the level 2/3:

>>> s = waterfill_schedule([0, 0, 0], [1, 1, 2], [1, 1, 2], 2, record=True)
>>> s.completion_times
(Fraction(3, 2), Fraction(3, 2), 3)
>>> s.pieces[0].shares
((0, Fraction(2, 3)), (1, Fraction(2, 3)), (2, Fraction(1, 3)))
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from fractions import Fraction
from numbers import Real
from typing import Any, NamedTuple, Sequence

from .._validation import Interval, validate_params
from ..errors import InvalidParameterError
from ..sizes import exact_div, exact_mul
from ._arrays import IdSequence, NumberSequence, as_list, check_lengths, tie_ranks

__all__ = ["WaterfillPiece", "WaterfillSchedule", "water_shares", "waterfill_schedule",
           "strict_list_makespan"]

_FLOAT_TOL = 1e-12


def _norm(x):
    return x.numerator if isinstance(x, Fraction) and x.denominator == 1 else x


class WaterfillPiece(NamedTuple):
    """One interval of a water-filling schedule: ``shares`` pairs each served job (by index, in
    tie order) with its fraction of full rate ``x_j = min(g_j, L) / g_j`` on ``[start, end)``."""

    start: Any
    end: Any
    shares: tuple


@dataclass(frozen=True)
class WaterfillSchedule:
    """The result of :func:`waterfill_schedule`.

    Attributes
    ----------
    completion_times : tuple
        ``C_j`` in job order.
    pieces : tuple of WaterfillPiece
        The intervals and their shares (empty unless ``record=True``).
    speed : number
        The speed the machine ran at.
    capacity : int
        The GPU count M.
    """

    completion_times: tuple
    pieces: tuple
    speed: Any
    capacity: int

    @property
    def total_completion_time(self):
        """``sum_j C_j`` (exact for exact inputs)."""
        from ._arrays import exact_sum

        return exact_sum(self.completion_times)


def water_shares(gpus: Sequence[int], capacity: int) -> list:
    """Each job's fraction of full rate under water-filling: ``min(g_j, L) / g_j``.

    ``L`` is the level at which ``sum_j min(g_j, L) = capacity``; if the gangs fit together every
    share is 1.

    Examples
    --------
    >>> water_shares([1, 1, 2], 2)
    [Fraction(2, 3), Fraction(2, 3), Fraction(1, 3)]
    >>> water_shares([1, 3], 8)
    [1, 1]
    """
    if sum(gpus) <= capacity:
        return [1] * len(gpus)
    order = sorted(range(len(gpus)), key=gpus.__getitem__)
    left, count = capacity, len(gpus)
    level = None
    for i in order:
        if gpus[i] * count <= left:      # g_i <= left / count: capped at its gang
            left -= gpus[i]
            count -= 1
        else:
            level = exact_div(left, count)
            break
    return [1 if level is None or g <= level else exact_div(level, g) for g in gpus]


@validate_params({"releases": [NumberSequence()], "sizes": [NumberSequence(0)], "gpus": "no_validation",
                  "capacity": [Interval(int, 1, None, closed="left")],
                  "speed": [Interval(Real, 0, 1, closed="right")], "ids": [None, IdSequence()],
                  "record": [bool]})
def waterfill_schedule(releases: Sequence[Real], sizes: Sequence[Real], gpus: Sequence[int], capacity: int,
                       *, speed: Real = 1, ids: Sequence[str] | None = None,
                       record: bool = False) -> WaterfillSchedule:
    """Water-filling on ``capacity`` GPUs at ``speed`` (module docstring).

    Parameters
    ----------
    releases, sizes : sequences of numbers
        Release times ``a_j`` and full-rate processing times ``q_j >= 0``.
    gpus : sequence of int
        Gang sizes ``1 <= g_j <= capacity``.
    capacity : int >= 1
        The GPU count M.
    speed : number in (0, 1]
        Processing per second at full rate (the robust copy of Theorem 3 runs at ``(1 - lam) / 3``).
    ids : sequence of str, optional
        Job ids: the order of simultaneous completions and of the pieces' shares, else by index.
    record : bool
        Keep the pieces (for the checks of Lemma 5 and the combination).

    Raises
    ------
    InvalidParameterError
        Non-finite or negative numbers, sequences of different lengths, a gang outside
        ``[1, capacity]``.

    Examples
    --------
    >>> waterfill_schedule([0, 1], [2, 1], [2, 2], 2).completion_times
    (3, 3)
    >>> waterfill_schedule([0], [2], [1], 4, speed=0.5).completion_times
    (4.0,)
    """
    check_lengths("waterfill_schedule", "sizes", len(sizes), releases=releases, gpus=gpus, ids=ids)
    releases, sizes, gpus = as_list(releases), as_list(sizes), as_list(gpus)
    for i, g in enumerate(gpus):
        if isinstance(g, bool) or not isinstance(g, int) or not 1 <= g <= capacity:
            raise InvalidParameterError(
                f"waterfill_schedule: gpus[{i}] = {g!r} must be an int in [1, {capacity}] (the capacity)")
    n = len(sizes)
    ranks = tie_ranks(n, ids)
    exact = not (isinstance(speed, float) or any(isinstance(x, float) for x in releases + sizes))
    # a job of size 0 completes at its release; the others enter in release order
    completion: list = [releases[j] if sizes[j] == 0 else None for j in range(n)]
    arrivals = sorted((j for j in range(n) if sizes[j] != 0), key=lambda j: (releases[j], ranks[j]))
    pieces: list = []
    remaining = list(sizes)
    present: list = []          # (g_j, rank, j), sorted: water_shares' order without a sort per event
    t = releases[arrivals[0]] if arrivals else 0
    i, n_in = 0, len(arrivals)
    while i < n_in or present:
        if not present:
            t = max(t, releases[arrivals[i]])
        while i < n_in and releases[arrivals[i]] <= t:
            bisect.insort(present, (gpus[arrivals[i]], ranks[arrivals[i]], arrivals[i]))
            i += 1
        shares = water_shares([g for g, _, _ in present], capacity)
        rates = [exact_mul(speed, x) for x in shares]
        finish = [exact_div(remaining[j], r) for (_, _, j), r in zip(present, rates)]
        dt = min(finish)
        t_next = releases[arrivals[i]] if i < n_in else None
        if t_next is not None and t_next < t + dt:
            end, done = t_next, ()
        else:
            end = t + dt
            cut = dt if exact else dt * (1 + _FLOAT_TOL)
            done = {k for k, f in enumerate(finish) if f <= cut}
        if record and end > t:
            served = sorted(((ranks[j], j, x) for (_, _, j), x in zip(present, shares)))
            pieces.append(WaterfillPiece(t, end, tuple((j, x) for _, j, x in served)))
        span = end - t
        for k, ((_, _, j), r) in enumerate(zip(present, rates)):
            if k in done:
                remaining[j] = 0
                completion[j] = end
            else:
                remaining[j] = remaining[j] - exact_mul(r, span)
        if done:
            present = [e for k, e in enumerate(present) if k not in done]
        t = end
    return WaterfillSchedule(tuple(_norm(c) for c in completion), tuple(pieces), speed, capacity)


def strict_list_makespan(widths: Sequence[int], lengths: Sequence[Real], capacity: int) -> Any:
    """Makespan of the strict list schedule of rigid tasks by non-increasing width (Lemma 5).

    Tasks (all released at 0) are taken in order of non-increasing width, ties by index; each
    starts at the earliest time, no earlier than the previous task's start, at which its width
    fits in the GPUs left free. Before the last start more than half the GPUs are busy, so the
    makespan is at most ``2 W / M + max length`` for total area ``W``: at most 1 for lengths
    ``x_j / 3`` with ``sum_j g_j x_j <= M``, which is how water-filling's fractional shares are
    realized by rigid gangs in one time slice.

    Examples
    --------
    Water-filling gives three 3-GPU gangs on 5 GPUs the share 5/9 each; they can only run one
    after the other, so the shares need 5/3 of a slice, but a third of them fits:

    >>> from fractions import Fraction
    >>> water_shares([3, 3, 3], 5)
    [Fraction(5, 9), Fraction(5, 9), Fraction(5, 9)]
    >>> strict_list_makespan([3, 3, 3], [Fraction(5, 9)] * 3, 5), strict_list_makespan([3, 3, 3], [Fraction(5, 27)] * 3, 5)
    (Fraction(5, 3), Fraction(5, 9))
    >>> strict_list_makespan([2, 1], [1, 1], 3)
    1
    """
    if len(widths) != len(lengths):
        raise InvalidParameterError("strict_list_makespan: widths and lengths must have the same length")
    tasks = sorted((k for k in range(len(widths)) if lengths[k] > 0), key=lambda k: (-widths[k], k))
    running: list = []          # (end, width)
    used, t, makespan = 0, 0, 0
    for k in tasks:
        g = widths[k]
        if g > capacity:
            raise InvalidParameterError(f"strict_list_makespan: width {g} exceeds the capacity {capacity}")
        running.sort()
        while running and running[0][0] <= t:
            used -= running.pop(0)[1]
        while used + g > capacity:
            end, w = running.pop(0)
            t = max(t, end)
            used -= w
            while running and running[0][0] <= t:
                used -= running.pop(0)[1]
        end = t + lengths[k]
        running.append((end, g))
        used += g
        makespan = max(makespan, end)
    return _norm(makespan)
