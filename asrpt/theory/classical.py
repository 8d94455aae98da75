"""Classical single-machine rules used by the theory checks that asrpt.single does not provide.

This module owns five rules, each a function over plain arrays returning a
:class:`~asrpt.single.srpt.Schedule` with asrpt.single's conventions (jobs are indices, ties by
``id_key(ids[j])`` when ids are given, else by index; exact with ints and Fractions; zero-size
jobs complete at their release):

- :func:`wsrpt_schedule`: preemptive weighted SRPT on one machine (largest ``w_j / remaining_j``
  first), 2-competitive for ``1 | r_j, pmtn | sum w_j C_j`` with tight ratio 1.2259
  (proofs/classical.md, Result 8);
- :func:`psw_schedule`: the Phillips-Stein-Wein conversion: non-preemptive, in the order of the
  preemptive SRPT completion times, each job as soon as it is released and the machine is free;
  ``C_j <= 2 C_j^SRPT`` for every job (proofs/classical.md, Result 5);
- :func:`spjf_schedule`: shortest *predicted* job first, all jobs at time 0, non-preemptive;
  ``SPJF <= OPT + (n - 1) eta`` with ``eta = sum_j |x_j - y_j|`` (proofs/classical.md, Result 12);
- :func:`prr_schedule`: preferential round robin PRR(lambda), all jobs at time 0: rate lambda to
  the SPJF job and ``(1 - lambda) / k`` to each of the ``k`` unfinished jobs (the same Result 12);
- :func:`sprpt_schedule`: preemptive SRPT on *predicted* remaining sizes ``y_j - attained_j``
  (which go negative once a job outlives its prediction), the negative control of
  proofs/classical.md, Counterexample 2.

Each preemptive rule changes its choice only at releases and completions: between two events
the running job's key only improves (its remaining size, or predicted remaining size, shrinks)
and the others' keys stay, so an event-driven loop is exact.

Examples
--------
>>> wsrpt_schedule([0, 1], [4, 1], [1, 1]).completion_times
(5, 2)
>>> sprpt_schedule([0, 2], [4, 1], [1, 1]).completion_times   # job 0 outlived its prediction
(4, 5)
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Real
from typing import Callable, Sequence

from .._validation import Interval, validate_params
from ..single._arrays import IdSequence, NumberSequence, as_list, check_lengths, tie_ranks
from ..single.srpt import Piece, Schedule, srpt_schedule
from ..sizes import exact_div

__all__ = ["wsrpt_schedule", "psw_schedule", "spjf_schedule", "prr_schedule", "sprpt_schedule"]


def _prepare(caller, releases, sizes, ids, **others):
    check_lengths(caller, "sizes", len(sizes), releases=releases, ids=ids, **others)
    return as_list(releases), as_list(sizes), tie_ranks(len(sizes), ids), (
        tuple(ids) if ids is not None else None)


def _preemptive(releases: list, sizes: list, ranks: list, key: Callable) -> tuple[list, list, list]:
    """One machine; at every release and completion run the released unfinished job with the
    smallest ``(key(j, attained_j), rank_j)``. ``key`` must only improve for the running job."""
    n = len(sizes)
    order = sorted(range(n), key=lambda j: (releases[j], ranks[j]))
    completion: list = [None] * n
    attained: list = [0] * n
    pieces: list = []
    finished: list = []
    active: list = []
    t = releases[order[0]] if n else 0
    i = 0
    while i < n or active:
        while i < n and releases[order[i]] <= t:
            j = order[i]
            i += 1
            if sizes[j] == 0:
                completion[j] = releases[j]
                finished.append(j)
            else:
                active.append(j)
        if not active:
            t = releases[order[i]]
            continue
        j = min(active, key=lambda k: (key(k, attained[k]), ranks[k]))
        end = t + sizes[j] - attained[j]
        nxt = releases[order[i]] if i < n else None
        if nxt is not None and nxt < end:
            end = nxt
        if end > t:
            if pieces and pieces[-1].job == j and pieces[-1].end == t:
                pieces[-1] = Piece(j, pieces[-1].start, end)
            else:
                pieces.append(Piece(j, t, end))
            attained[j] = attained[j] + (end - t)
        t = end
        if attained[j] == sizes[j]:
            completion[j] = t
            finished.append(j)
            active.remove(j)
    finished.sort(key=lambda j: completion[j])  # stable: same-instant order as found
    return completion, pieces, finished


def _schedule(completion, pieces, releases, sizes, finished, ids, rule) -> Schedule:
    return Schedule(tuple(completion), tuple(sorted(pieces, key=lambda p: p.end)), tuple(releases),
                    tuple(sizes), tuple(finished), ids, rule)


@validate_params({"releases": [NumberSequence()], "sizes": [NumberSequence(0)],
                  "weights": [NumberSequence(0, strict=True)], "ids": [None, IdSequence()]})
def wsrpt_schedule(releases: Sequence[Real], sizes: Sequence[Real], weights: Sequence[Real], *,
                   ids: Sequence[str] | None = None) -> Schedule:
    """Weighted SRPT on one machine: preemptive, largest ``w_j / remaining_j`` first.

    Parameters
    ----------
    releases : sequence of numbers
        Release times.
    sizes : sequence of numbers >= 0
        Processing times.
    weights : sequence of numbers > 0
        Weights.
    ids : sequence of str, optional
        Job ids (ties), else indices.

    Returns
    -------
    Schedule
        Rule ``"wsrpt"``.

    Raises
    ------
    InvalidParameterError
        Bad numbers or lengths that differ.

    Examples
    --------
    >>> s = wsrpt_schedule([0, 0, 2], [3, 2, 1], [1, 3, 1])
    >>> s.completion_times, s.weighted_total([1, 3, 1])
    ((6, 2, 3), 15)
    """
    releases, sizes, ranks, ids_t = _prepare("wsrpt_schedule", releases, sizes, ids, weights=weights)
    w = as_list(weights)
    completion, pieces, finished = _preemptive(
        releases, sizes, ranks, lambda j, a: -exact_div(w[j], sizes[j] - a))
    return _schedule(completion, pieces, releases, sizes, finished, ids_t, "wsrpt")


@validate_params({"releases": [NumberSequence()], "sizes": [NumberSequence(0)], "ids": [None, IdSequence()]})
def psw_schedule(releases: Sequence[Real], sizes: Sequence[Real], *,
                 ids: Sequence[str] | None = None) -> Schedule:
    """Phillips-Stein-Wein: non-preemptive, in the order of the preemptive SRPT completion times.

    Each job starts when it is released and the previous job in that order is done, so
    ``C_j <= max_{k <= j} r_k + sum_{k <= j} p_k <= 2 C_j^SRPT`` (every job before j in the order
    is released and processed by ``C_j^SRPT``).

    Parameters
    ----------
    releases : sequence of numbers
        Release times.
    sizes : sequence of numbers >= 0
        Processing times.
    ids : sequence of str, optional
        Job ids (ties), else indices.

    Returns
    -------
    Schedule
        Rule ``"psw"``.

    Raises
    ------
    InvalidParameterError
        Bad numbers or lengths that differ.

    Examples
    --------
    >>> psw_schedule([0, 1], [4, 1]).completion_times     # SRPT finishes job 1 first, at 2
    (6, 2)
    """
    releases, sizes, _, ids_t = _prepare("psw_schedule", releases, sizes, ids)
    srpt = srpt_schedule(releases, sizes, ids=ids)
    completion: list = [None] * len(sizes)
    pieces = []
    t = None
    for j in srpt.finishing_order:
        start = releases[j] if t is None or releases[j] > t else t
        completion[j] = start + sizes[j]
        if sizes[j] > 0:
            pieces.append(Piece(j, start, completion[j]))
            t = completion[j]
        elif t is None or start > t:
            t = start
    finished = sorted(srpt.finishing_order, key=lambda j: completion[j])
    return _schedule(completion, pieces, releases, sizes, finished, ids_t, "psw")


@validate_params({"sizes": [NumberSequence(0)], "predicted": [NumberSequence(0)], "ids": [None, IdSequence()]})
def spjf_schedule(sizes: Sequence[Real], predicted: Sequence[Real], *,
                  ids: Sequence[str] | None = None) -> Schedule:
    """Shortest predicted job first, all jobs released at 0, non-preemptive.

    Parameters
    ----------
    sizes : sequence of numbers >= 0
        True processing times x_j.
    predicted : sequence of numbers >= 0
        Predictions y_j.
    ids : sequence of str, optional
        Job ids (ties), else indices.

    Returns
    -------
    Schedule
        Rule ``"spjf"``.

    Raises
    ------
    InvalidParameterError
        Bad numbers or lengths that differ.

    Examples
    --------
    >>> spjf_schedule([1, 5], [6, 2]).completion_times
    (6, 5)
    """
    _, sizes, ranks, ids_t = _prepare("spjf_schedule", [0] * len(sizes), sizes, ids, predicted=predicted)
    y = as_list(predicted)
    order = sorted(range(len(sizes)), key=lambda j: (y[j], ranks[j]))
    completion: list = [None] * len(sizes)
    pieces, t = [], 0
    for j in order:
        if sizes[j] > 0:
            pieces.append(Piece(j, t, t + sizes[j]))
        t = t + sizes[j]
        completion[j] = t
    return _schedule(completion, pieces, [0] * len(sizes), sizes, order, ids_t, "spjf")


@validate_params({"sizes": [NumberSequence(0)], "predicted": [NumberSequence(0)],
                  "lam": [Interval(Real, 0, 1, closed="neither")], "ids": [None, IdSequence()]})
def prr_schedule(sizes: Sequence[Real], predicted: Sequence[Real], lam: Real, *,
                 ids: Sequence[str] | None = None) -> Schedule:
    """Preferential round robin PRR(lambda) (Purohit, Svitkina, Kumar 2018), all jobs at time 0.

    At every instant the unfinished job with the smallest prediction (ties by tie key) gets rate
    ``lambda``, and every one of the ``k`` unfinished jobs (that one included) gets
    ``(1 - lambda) / k`` on top; rates change only at completions.

    Parameters
    ----------
    sizes : sequence of numbers >= 0
        True processing times.
    predicted : sequence of numbers >= 0
        Predictions.
    lam : number in (0, 1)
        The share of the SPJF job.
    ids : sequence of str, optional
        Job ids (ties), else indices.

    Returns
    -------
    Schedule
        Rule ``"prr"``; pieces carry each job's share.

    Raises
    ------
    InvalidParameterError
        Bad numbers, lengths that differ, or ``lam`` outside (0, 1).

    Examples
    --------
    >>> from fractions import Fraction
    >>> prr_schedule([1, 1], [1, 2], Fraction(1, 2)).completion_times
    (Fraction(4, 3), 2)
    """
    _, sizes, ranks, ids_t = _prepare("prr_schedule", [0] * len(sizes), sizes, ids, predicted=predicted)
    y = as_list(predicted)
    n = len(sizes)
    completion: list = [None] * n
    remaining = list(sizes)
    unfinished = [j for j in range(n) if sizes[j] > 0]
    finished = [j for j in range(n) if sizes[j] == 0]
    for j in finished:
        completion[j] = 0
    pieces: list = []
    t = 0
    while unfinished:
        k = len(unfinished)
        first = min(unfinished, key=lambda j: (y[j], ranks[j]))
        base = exact_div(1 - lam, k)
        rate = {j: base + (lam if j == first else 0) for j in unfinished}
        dt = min(exact_div(remaining[j], rate[j]) for j in unfinished)
        end = t + dt
        done = []
        for j in sorted(unfinished, key=ranks.__getitem__):
            pieces.append(Piece(j, t, end, rate[j]))
            remaining[j] = remaining[j] - rate[j] * dt
            if remaining[j] == 0 or exact_div(remaining[j], rate[j]) == 0:
                done.append(j)
        if not done:  # float rounding: finish the job that defined dt
            done = [min(unfinished, key=lambda j: (exact_div(remaining[j], rate[j]), ranks[j]))]
        for j in done:
            completion[j] = end.numerator if isinstance(end, Fraction) and end.denominator == 1 else end
            remaining[j] = 0
            unfinished.remove(j)
            finished.append(j)
        t = end
    return Schedule(tuple(completion), tuple(pieces), tuple([0] * n), tuple(sizes), tuple(finished),
                    ids_t, "prr")


@validate_params({"releases": [NumberSequence()], "sizes": [NumberSequence(0)],
                  "predicted": [NumberSequence(0)], "ids": [None, IdSequence()]})
def sprpt_schedule(releases: Sequence[Real], sizes: Sequence[Real], predicted: Sequence[Real], *,
                   ids: Sequence[str] | None = None) -> Schedule:
    """SRPT on predicted remaining sizes ("SPRPT"): run the job with the smallest ``y_j - attained_j``.

    A job that outlives its prediction gets a negative key and keeps the machine until it ends:
    the failure mode that makes SPRPT's flow time unbounded at fixed distortion
    (proofs/classical.md, Counterexample 2).

    Parameters
    ----------
    releases : sequence of numbers
        Release times.
    sizes : sequence of numbers >= 0
        True processing times.
    predicted : sequence of numbers >= 0
        Predicted processing times.
    ids : sequence of str, optional
        Job ids (ties), else indices.

    Returns
    -------
    Schedule
        Rule ``"sprpt"``.

    Raises
    ------
    InvalidParameterError
        Bad numbers or lengths that differ.

    Examples
    --------
    >>> sprpt_schedule([0, 1], [3, 1], [1, 1]).completion_times
    (3, 4)
    """
    releases, sizes, ranks, ids_t = _prepare("sprpt_schedule", releases, sizes, ids, predicted=predicted)
    y = as_list(predicted)
    completion, pieces, finished = _preemptive(releases, sizes, ranks, lambda j, a: y[j] - a)
    return _schedule(completion, pieces, releases, sizes, finished, ids_t, "sprpt")
