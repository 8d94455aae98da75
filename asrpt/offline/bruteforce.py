"""Exact brute-force oracles for tiny instances, used to test the ILPs and rules.

This module owns:

- :func:`greedy_rigid_starts`: the *order-preserving greedy* for non-preemptive rigid jobs on
  ``m`` GPUs: jobs are placed in the given order, each at the earliest time ``t >= max(r_j,
  start of the previous job)`` at which ``g_j`` GPUs stay free on ``[t, t + p_j)``. Started from
  the start order of an optimal schedule it starts every job no later than that schedule does,
  so the best order gives the exact optimum of ``P | r_j, size_j | sum w_j C_j`` (GPUs as a
  cumulative resource: a job may use any g_j GPUs);
- :func:`bruteforce_rigid_nonpreemptive`: that optimum, over all ``n!`` orders;
- :func:`bruteforce_weighted_single_machine`: ``1 || sum w_j C_j`` over all ``n!`` orders (the
  oracle for Smith's rule, proofs/classical.md, Result 3).

Costs are exact for ints and Fractions. Permutations are tried in tie-key order (``id_key`` of
the ids, else index) and only a strictly better one replaces the incumbent, so the reported
optimal order is deterministic.

Examples
--------
>>> bruteforce_weighted_single_machine([3, 1], [1, 1]).objective
5
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Sequence

from .._validation import InstanceOf, Interval, is_integer, validate_params
from ..errors import Infeasible, InvalidParameterError
from ..instance import Instance
from ..single._arrays import IdSequence, NumberSequence, as_list, check_lengths, exact_sum, tie_ranks
from ..sizes import processing_times

__all__ = [
    "BruteForceResult",
    "greedy_rigid_starts",
    "bruteforce_rigid_nonpreemptive",
    "bruteforce_weighted_single_machine",
]


@dataclass(frozen=True)
class BruteForceResult:
    """The optimum found by enumeration.

    Attributes
    ----------
    objective : number
        ``sum_j w_j C_j`` of the best order (exact for exact data).
    order : tuple
        The best order (ids when given, else indices).
    starts, completion_times : dict
        Start and completion time per job (keyed like ``order``).
    """

    objective: Any
    order: tuple
    starts: dict
    completion_times: dict


def _check_gpus(gpus: list, machines: int) -> None:
    for j, g in enumerate(gpus):
        if g > machines:
            raise Infeasible(f"job {j} needs {g} GPUs, more than the {machines} available")


def _greedy(releases: list, sizes: list, gpus: list, machines: int, order) -> list:
    """Order-preserving greedy over plain lists (see the module docstring)."""
    starts: list = [None] * len(sizes)
    placed: list = []  # (start, end, gpus)
    prev = None
    for j in order:
        t0 = releases[j] if prev is None or releases[j] >= prev else prev
        p, g = sizes[j], gpus[j]
        if p == 0 or g == 0:
            start = t0
        else:
            candidates = sorted({t0} | {e for _, e, _ in placed if e > t0})
            start = None
            for t in candidates:
                end = t + p
                points = [t] + [s for s, _, _ in placed if t < s < end]
                if all(sum(gk for s, e, gk in placed if s <= x < e) + g <= machines for x in points):
                    start = t
                    break
            assert start is not None  # the last completion time is always feasible
            placed.append((start, start + p, g))
        starts[j] = start
        prev = start
    return starts


@validate_params({
    "releases": [NumberSequence()],
    "sizes": [NumberSequence(0)],
    "gpus": [NumberSequence(0)],
    "machines": [Interval(Integral, 1, None, closed="left")],
    "order": [NumberSequence(0)],
})
def greedy_rigid_starts(releases: Sequence[Real], sizes: Sequence[Real], gpus: Sequence[int],
                        machines: int, order: Sequence[int]) -> tuple:
    """Start times of the order-preserving greedy for non-preemptive rigid jobs.

    Parameters
    ----------
    releases, sizes : sequence of numbers
        Release and processing times.
    gpus : sequence of int
        GPUs each job needs (at most ``machines``).
    machines : int
        GPUs in all (a cumulative resource).
    order : sequence of int
        A permutation of the job indices; jobs start in this order.

    Returns
    -------
    tuple
        Start time per job index.

    Raises
    ------
    InvalidParameterError
        Bad numbers, lengths that differ, or ``order`` not a permutation.
    Infeasible
        A job needs more GPUs than there are.

    Examples
    --------
    >>> greedy_rigid_starts([0, 0, 0], [2, 2, 1], [2, 1, 1], 2, [0, 1, 2])
    (0, 2, 2)
    """
    n = len(sizes)
    check_lengths("greedy_rigid_starts", "sizes", n, releases=releases, gpus=gpus, order=order)
    order = as_list(order)
    if not all(is_integer(j) for j in order) or sorted(order) != list(range(n)):
        raise InvalidParameterError(
            f"The 'order' parameter of greedy_rigid_starts must be a permutation of 0..{n - 1}. "
            f"Got {order!r} instead.")
    gpus = as_list(gpus)
    _check_gpus(gpus, machines)
    return tuple(_greedy(as_list(releases), as_list(sizes), gpus, machines, order))


@validate_params({"instance": [InstanceOf(Instance)], "max_jobs": [Interval(Integral, 0, None, closed="left")]})
def bruteforce_rigid_nonpreemptive(instance: Instance, *, max_jobs: int = 8) -> BruteForceResult:
    """Exact non-preemptive optimum ``P | r_j, size_j | sum w_j C_j`` by enumerating all orders.

    Every permutation is placed by the order-preserving greedy on the cluster's M GPUs (a job may
    use any g_j GPUs). ``n!`` orders: meant for ``n <= 7``.

    Parameters
    ----------
    instance : Instance
        The instance (processing times from :mod:`asrpt.sizes`; weights used).
    max_jobs : int
        Refuse larger instances (the enumeration grows as ``n!``).

    Returns
    -------
    BruteForceResult
        Keyed by job id.

    Raises
    ------
    InvalidParameterError
        More than ``max_jobs`` jobs.

    Examples
    --------
    >>> r = bruteforce_rigid_nonpreemptive(two_server_instance)
    >>> r.objective, r.completion_times
    (8, {'a': 4, 'b': 1, 'c': 3})
    """
    n = instance.n_jobs
    if n > max_jobs:
        raise InvalidParameterError(
            f"bruteforce_rigid_nonpreemptive enumerates n! orders; {n} jobs exceed max_jobs={max_jobs}.")
    releases = [j.arrival for j in instance.jobs]
    sizes = list(processing_times(instance))
    gpus = [j.gpus for j in instance.jobs]
    weights = [j.weight for j in instance.jobs]
    ids = [j.id for j in instance.jobs]
    machines = instance.cluster.total_gpus
    ranks = tie_ranks(n, ids)
    base = sorted(range(n), key=ranks.__getitem__)
    best = None
    for perm in itertools.permutations(base):
        starts = _greedy(releases, sizes, gpus, machines, perm)
        cost = exact_sum(w * (s + p) for w, s, p in zip(weights, starts, sizes))
        if best is None or cost < best[0]:
            best = (cost, perm, starts)
    if best is None:
        return BruteForceResult(0, (), {}, {})
    cost, perm, starts = best
    return BruteForceResult(cost, tuple(ids[j] for j in perm),
                            {ids[j]: starts[j] for j in range(n)},
                            {ids[j]: starts[j] + sizes[j] for j in range(n)})


@validate_params({
    "sizes": [NumberSequence(0)],
    "weights": [NumberSequence(0)],
    "ids": [None, IdSequence()],
    "max_jobs": [Interval(Integral, 0, None, closed="left")],
})
def bruteforce_weighted_single_machine(sizes: Sequence[Real], weights: Sequence[Real], *,
                                       ids: Sequence[str] | None = None,
                                       max_jobs: int = 9) -> BruteForceResult:
    """Exact ``1 || sum w_j C_j`` by enumerating all ``n!`` orders (all jobs released at 0).

    Parameters
    ----------
    sizes : sequence of numbers >= 0
        Processing times.
    weights : sequence of numbers >= 0
        Weights.
    ids : sequence of str, optional
        Job ids (enumeration order and result keys), else indices.
    max_jobs : int
        Refuse larger inputs.

    Returns
    -------
    BruteForceResult

    Raises
    ------
    InvalidParameterError
        Bad numbers, lengths that differ, or more than ``max_jobs`` jobs.

    Examples
    --------
    >>> r = bruteforce_weighted_single_machine([2, 1, 3], [1, 2, 6])
    >>> r.objective, r.order
    (32, (1, 2, 0))
    """
    n = len(sizes)
    check_lengths("bruteforce_weighted_single_machine", "sizes", n, weights=weights, ids=ids)
    if n > max_jobs:
        raise InvalidParameterError(
            f"bruteforce_weighted_single_machine enumerates n! orders; {n} jobs exceed max_jobs={max_jobs}.")
    sizes, weights = as_list(sizes), as_list(weights)
    keys = list(ids) if ids is not None else list(range(n))
    ranks = tie_ranks(n, ids)
    base = sorted(range(n), key=ranks.__getitem__)
    best = None
    for perm in itertools.permutations(base):
        t, cost, ends = 0, 0, {}
        for j in perm:
            t = t + sizes[j]
            ends[j] = t
            cost = cost + weights[j] * t
        if best is None or cost < best[0]:
            best = (cost, perm, ends)
    if best is None:
        return BruteForceResult(0, (), {}, {})
    cost, perm, ends = best
    return BruteForceResult(exact_sum([cost]), tuple(keys[j] for j in perm),
                            {keys[j]: ends[j] - sizes[j] for j in range(n)},
                            {keys[j]: ends[j] for j in range(n)})
