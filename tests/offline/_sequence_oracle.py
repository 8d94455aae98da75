"""An independent oracle for the continuous preemptive optimum of P | size_j, r_j, pmtn | sum w_j C_j.

Written for tests, from the textbook method and not from :mod:`asrpt.offline`: plain, slow and
exact by enumeration, for tiny instances (n <= 5 jobs).

Model
-----
M identical GPUs form one pool (migration allowed). Job j has a release r_j, a width g_j
(1 <= g_j <= M: it holds exactly g_j GPUs whenever it runs, at rate 1), a processing time
p_j > 0 and a weight w_j > 0. Jobs may be preempted anywhere in continuous time. Minimise
sum_j w_j C_j.

Method
------
An *event sequence* orders the release events and the n completion events: releases in sorted
order of r (equal releases merged into one event), each job's completion after its release. Every
such sequence is enumerated by recursion: the next event is either the next release or the
completion of a released, uncompleted job.

For a fixed sequence e_1..e_K with times t_1 <= ... <= t_K (e_1 is always the first release),
the jobs available between events k-1 and k form a fixed set A_k (released at or before event
k-1, not completed at or before event k-1). The LP has the variables t_k (a release event's time
is pinned to its r) and, for each interval k and each *configuration* S (a nonempty subset of A_k
whose widths sum to <= M), the time x_{k,S} >= 0 spent running exactly S. Constraints:

- sum_S x_{k,S} <= t_k - t_{k-1} and t_k >= t_{k-1};
- for every job j, sum of x_{k,S} over the intervals k of j (after its release event, up to and
  including its completion event) and the configurations S containing j equals p_j.

Objective: sum_j w_j t_{c(j)}, c(j) the completion event of j. Any schedule is a feasible point
of the LP of its own event order, with the same cost; any feasible LP point gives a schedule (run
each interval's configurations one after another on any free GPUs of the pool) in which j
completes no later than t_{c(j)}. So OPT is the minimum over the sequences of the LP
optima (infeasible sequences skipped). Each LP is solved by :func:`scipy.optimize.linprog` with
``method="highs"``: the value is a float, good to solver tolerance (about 1e-9 relative).
:func:`rational_guess` turns such a float into a nearby small-denominator Fraction; it is a
*guess*, for tests that compare against exact solvers within 1e-6 relative, not a proof.

>>> value, seq = oracle_opt([0, 1], [1, 1], [3, 1], [1, 1], 1)   # single-machine SRPT: 2 + 4
>>> round(value, 9), seq
(6.0, (('r', 0), ('r', 1), ('c', 1), ('c', 0)))
>>> rational_guess(2 / 3)
Fraction(2, 3)
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from typing import Sequence

import numpy as np
from scipy.optimize import linprog

__all__ = ["MAX_JOBS", "event_sequences", "sequence_lp", "oracle_opt", "oracle_opt_instance",
           "rational_guess"]

MAX_JOBS = 5
"""The largest n the oracle accepts (the number of sequences grows factorially)."""


def _check(releases, widths, sizes, weights, m) -> int:
    n = len(releases)
    if not (len(widths) == len(sizes) == len(weights) == n):
        raise ValueError("releases, widths, sizes and weights must have the same length")
    if n > MAX_JOBS:
        raise ValueError(f"the oracle is for tiny instances: n = {n} > {MAX_JOBS}")
    if int(m) != m or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    for j in range(n):
        if int(widths[j]) != widths[j] or not 1 <= widths[j] <= m:
            raise ValueError(f"job {j}: width {widths[j]!r} is not an integer in [1, {m}]")
        if not sizes[j] > 0:
            raise ValueError(f"job {j}: processing time {sizes[j]!r} must be > 0")
        if not weights[j] > 0:
            raise ValueError(f"job {j}: weight {weights[j]!r} must be > 0")
        if not releases[j] >= 0:
            raise ValueError(f"job {j}: release {releases[j]!r} must be >= 0")
    return n


def event_sequences(releases: Sequence) -> list[tuple]:
    """Every event sequence of jobs with these releases, in a fixed (deterministic) order.

    An event is ``("r", time)`` (every job released at ``time``; equal releases share one event)
    or ``("c", j)`` (job j completes).

    >>> event_sequences([0, 0])
    [(('r', 0), ('c', 0), ('c', 1)), (('r', 0), ('c', 1), ('c', 0))]
    >>> event_sequences([0, 2])
    [(('r', 0), ('r', 2), ('c', 0), ('c', 1)), (('r', 0), ('r', 2), ('c', 1), ('c', 0)), (('r', 0), ('c', 0), ('r', 2), ('c', 1))]
    """
    n = len(releases)
    times = sorted(set(releases))
    groups = [tuple(j for j in range(n) if releases[j] == t) for t in times]
    out: list[tuple] = []

    def rec(prefix: list, next_group: int, active: list) -> None:
        if next_group == len(groups) and not active:
            out.append(tuple(prefix))
            return
        if next_group < len(groups):   # the next release
            prefix.append(("r", times[next_group]))
            rec(prefix, next_group + 1, sorted(active + list(groups[next_group])))
            prefix.pop()
        for j in active:               # or the completion of a released, uncompleted job
            prefix.append(("c", j))
            rec(prefix, next_group, [i for i in active if i != j])
            prefix.pop()

    rec([], 0, [])
    return out


def _configurations(available: Sequence[int], widths, m) -> list[tuple[int, ...]]:
    """Every nonempty subset of ``available`` whose widths sum to at most m."""
    out = []
    for size in range(1, len(available) + 1):
        for s in combinations(available, size):
            if sum(widths[j] for j in s) <= m:
                out.append(s)
    return out


def sequence_lp(seq: tuple, releases, widths, sizes, weights, m) -> float | None:
    """The LP optimum of one event sequence (a float), or None when the sequence is infeasible.

    >>> sequence_lp((("r", 0), ("c", 0), ("c", 1)), [0, 0], [1, 1], [1, 2], [1, 1], 1)
    4.0
    >>> sequence_lp((("r", 0), ("c", 0), ("r", 1), ("c", 1)), [0, 1], [1, 1], [10, 1], [1, 1], 1) is None
    True
    """
    n = len(releases)
    K = len(seq)
    # Which jobs are available in each interval k = 1..K-1 (between events k-1 and k, 0-based).
    released: set[int] = set()
    done: set[int] = set()
    completion_event = [None] * n
    available_per_interval: list[list[int]] = []
    for k, (kind, val) in enumerate(seq):
        if k > 0:
            available_per_interval.append(sorted(released - done))
        if kind == "r":
            released |= {j for j in range(n) if releases[j] == val}
        else:
            done.add(val)
            completion_event[val] = k
    assert seq[0][0] == "r" and len(done) == n and all(c is not None for c in completion_event)

    # Columns: t_0..t_{K-1}, then one x per (interval, configuration).
    columns: list[tuple[int, tuple[int, ...]]] = []
    for k, avail in enumerate(available_per_interval, start=1):
        for s in _configurations(avail, widths, m):
            columns.append((k, s))
    nv = K + len(columns)

    c = np.zeros(nv)
    for j in range(n):
        c[completion_event[j]] += float(weights[j])

    a_ub, b_ub = [], []
    for k in range(1, K):
        # sum_S x_{k,S} - (t_k - t_{k-1}) <= 0
        row = np.zeros(nv)
        row[k], row[k - 1] = -1.0, 1.0
        for i, (kk, _s) in enumerate(columns):
            if kk == k:
                row[K + i] = 1.0
        a_ub.append(row)
        b_ub.append(0.0)
        # t_{k-1} - t_k <= 0
        row = np.zeros(nv)
        row[k], row[k - 1] = -1.0, 1.0
        a_ub.append(row)
        b_ub.append(0.0)

    a_eq, b_eq = [], []
    for j in range(n):
        row = np.zeros(nv)
        for i, (_k, s) in enumerate(columns):
            if j in s:
                row[K + i] = 1.0
        a_eq.append(row)
        b_eq.append(float(sizes[j]))

    bounds = []
    for kind, val in seq:
        bounds.append((float(val), float(val)) if kind == "r" else (0.0, None))
    bounds += [(0.0, None)] * len(columns)

    res = linprog(c, A_ub=np.array(a_ub) if a_ub else None, b_ub=np.array(b_ub) if b_ub else None,
                  A_eq=np.array(a_eq), b_eq=np.array(b_eq), bounds=bounds, method="highs")
    if res.status == 2:   # infeasible
        return None
    if res.status != 0:
        raise RuntimeError(f"linprog failed on sequence {seq}: {res.message}")
    return float(res.fun)


def oracle_opt(releases, widths, sizes, weights, m) -> tuple[float, tuple]:
    """OPT of P | size_j, r_j, pmtn | sum w_j C_j (a float) and a sequence that attains it.

    The sequence is a tuple of ``("r", time)`` / ``("c", job_index)`` events; among sequences
    whose values agree within 1e-9 relative, the first in :func:`event_sequences`' order wins.

    >>> value, seq = oracle_opt([0, 0, 0], [1, 1, 2], [1, 1, 1], [1, 1, 1], 2)
    >>> round(value, 9)
    4.0
    """
    n = _check(releases, widths, sizes, weights, m)
    if n == 0:
        return 0.0, ()
    best_value, best_seq = None, None
    for seq in event_sequences(list(releases)):
        v = sequence_lp(seq, releases, widths, sizes, weights, m)
        if v is None:
            continue
        if best_value is None or v < best_value - 1e-9 * max(1.0, abs(best_value)):
            best_value, best_seq = v, seq
    if best_value is None:   # cannot happen: completing jobs in release order is always feasible
        raise RuntimeError("no feasible event sequence")
    return best_value, best_seq


def oracle_opt_instance(instance) -> float:
    """:func:`oracle_opt`'s value for an :class:`asrpt.instance.Instance` (jobs in file order;
    processing times from :func:`asrpt.sizes.processing_times`, M the cluster's total GPUs)."""
    from asrpt.sizes import processing_times

    jobs = instance.jobs
    value, _seq = oracle_opt([j.arrival for j in jobs], [j.gpus for j in jobs],
                             list(processing_times(instance)), [j.weight for j in jobs],
                             instance.cluster.total_gpus)
    return value


def rational_guess(x: float, max_den: int = 1000) -> Fraction:
    """The Fraction with denominator at most ``max_den`` nearest to ``x``: a GUESS at the exact
    value behind a float LP optimum, not a proof. Use it only in tests that compare against an
    exact solver within 1e-6 relative (and check the guess is that close to ``x``).

    >>> rational_guess(36.99999999998), rational_guess(5.5000000001), rational_guess(0.1 + 0.2)
    (Fraction(37, 1), Fraction(11, 2), Fraction(3, 10))
    """
    return Fraction(x).limit_denominator(max_den)
