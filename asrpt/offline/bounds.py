"""Lower bounds on the offline optimum ``OPT = min sum_j w_j C_j`` of a cluster instance.

This module owns three cheap lower bounds (LB1 and LB2: proofs/lemma1-lower-bounds.md). OPT is
taken over every cluster schedule of the rigid jobs: job j holds g_j GPUs (any GPUs, any servers)
whenever it runs, needs at least ``P_j`` time on them in total (``P_j`` from
:mod:`asrpt.sizes`: the given processing time of abstract jobs, ``P*_j = N_j tau*_j`` of DNN
jobs), cannot start before its arrival ``a_j``, and may be preempted and migrated. A slower
placement only lengthens a job, so the bounds hold for placement-aware schedules too; they also
hold for non-preemptive schedules (a restriction).

- **LB1** (height / release bound): ``sum_j w_j (a_j + P_j)``, since ``C_j >= a_j + P_j``.
- **LB2** (squashed-area bound): run every job on one machine at rate (its GPUs)/M; this squashed
  schedule has rates summing to at most 1 and completes no job later than the cluster schedule.
  Preemptive SRPT on releases ``a_j`` and sizes ``p~_j = g_j P_j / M`` minimises ``sum C_j`` over
  all such single-machine schedules (processor sharing included), so ``sum_j C_j >= SRPT_1``.
  **Weights.** SRPT's total is a bound on ``sum C_j`` only; for ``sum w_j C_j`` the single-machine
  problem is NP-hard and SRPT is not optimal. We therefore define
  ``LB2 = w_min * SRPT_1(a, p~)``, valid because ``sum w_j C_j >= w_min sum C_j``. It equals the
  classical LB2 for unit weights and for equal weights; for unequal weights it is weak on purpose
  and LB_MBT is the bound to use.
- **LB_MBT** (mean busy time, weighted): ``sum_j w_j (M_j^LP + P_j / 2)`` where ``M_j^LP`` is
  job j's mean busy time in Goemans' LP schedule on the squashed instance (preemptive, fixed
  priority ``w_j / p~_j``, :func:`asrpt.single.rules.lp_schedule`). The squashed schedule has the
  same mean busy times as the cluster schedule, the LP schedule minimises ``sum w_j M_j`` over
  all single-machine schedules, and ``C_j >= M_j + P_j / 2`` because j runs for at least ``P_j``
  before ``C_j``.

None dominates the others, so ``OPT >= max(LB1, LB2, LB_MBT)``. Arithmetic is exact for int and
Fraction instances.

**Float instances: bounds that hold in floating point.** Computing these formulas in floats at
realistic magnitudes (Unix-time arrivals near 1.7e9 s, sub-second jobs) loses every digit that
matters: ``end*end - start*start`` alone cancels catastrophically, and a "bound" above OPT was
the result. When any arrival, processing time or weight is a float, the bounds are therefore
computed so that each returned float is provably <= the exact bound of the instance as given
(each float read as the exact binary number it is):

1. time is shifted by the first arrival ``t0``, exactly (``a_j - t0`` as a rational); every
   objective is translation invariant (``sum w_j C_j`` moves by ``t0 sum w_j``);
2. the shifted arrivals and the squashed sizes are rounded *down* to a binary grid of step
   ``q = 2^(floor(log2 T) - 62)``, ``T`` the largest possible makespan: the single-machine SRPT
   total and the LP schedule's weighted mean busy time can only decrease when releases and sizes
   decrease (a schedule of the larger data, truncated, serves the smaller), so the grid instance's
   values are lower bounds;
3. SRPT and the LP schedule run on that grid in exact integer arithmetic (priorities ``p / w``
   compared as exact rationals), mean busy times are rounded down to the grid, every sum is
   formed exactly, and the total is rounded toward minus infinity once, at the end.

The loss against the exact bound is below ``n q`` plus one rounding (relative ~1e-16), and the
work stays O(n log n) on integers.

Examples
--------
>>> lower_bounds(two_server_instance).to_dict()
{'lb1': 8, 'lb2': Fraction(7, 2), 'lb_mbt': 6, 'best': 8}
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .._validation import InstanceOf, validate_params
from ..instance import Instance
from ..single._arrays import exact_sum
from ..single.rules import lp_schedule
from ..single.srpt import srpt_schedule
from ..single.virtual import virtual_sizes
from ..sizes import exact_div, processing_times

__all__ = ["Bounds", "release_bound", "squashed_area_bound", "mean_busy_time_bound", "lower_bounds"]


def _arrivals(instance: Instance) -> list:
    return [j.arrival for j in instance.jobs]


def _weights(instance: Instance) -> list:
    return [j.weight for j in instance.jobs]


def _ids(instance: Instance) -> list:
    return [j.id for j in instance.jobs]


@validate_params({"instance": [InstanceOf(Instance)]})
def release_bound(instance: Instance):
    """LB1 = ``sum_j w_j (a_j + P_j)``: no job completes before its arrival plus its length.

    Parameters
    ----------
    instance : Instance
        The cluster instance.

    Returns
    -------
    number
        Exact for int/Fraction instances (0 for an instance without jobs).

    Raises
    ------
    InvalidParameterError
        ``instance`` is not an Instance.

    Examples
    --------
    >>> release_bound(two_server_instance)
    8
    """
    times = processing_times(instance)
    if _any_float(instance, times):
        parts = [_dyadic([j.arrival for j in instance.jobs]), _dyadic(times),
                 _dyadic([j.weight for j in instance.jobs])]
        if any(x is None for x in parts):
            return _round_down(sum(Fraction(j.weight) * (Fraction(j.arrival) + Fraction(p))
                                   for j, p in zip(instance.jobs, times)))
        (arr, ea), (pt, ep), (wt, ew) = parts
        return _round_down(Fraction(sum(w * a for w, a in zip(wt, arr)), 1 << (ew + ea))
                           + Fraction(sum(w * p for w, p in zip(wt, pt)), 1 << (ew + ep)))
    return exact_sum(j.weight * (j.arrival + p) for j, p in zip(instance.jobs, times))


@validate_params({"instance": [InstanceOf(Instance)]})
def squashed_area_bound(instance: Instance):
    """LB2 = ``w_min * SRPT_1(a, g P / M)``: the virtual single machine's total completion time.

    For unit weights this is exactly the sum of the virtual SRPT completion times
    (proofs/lemma1-lower-bounds.md, Lemma 1); for weighted instances it is scaled by the smallest
    weight so that it stays a valid bound on ``sum w_j C_j`` (see the module docstring).

    Parameters
    ----------
    instance : Instance
        The cluster instance.

    Returns
    -------
    number
        Exact for int/Fraction instances.

    Raises
    ------
    InvalidParameterError
        ``instance`` is not an Instance.

    Examples
    --------
    >>> squashed_area_bound(two_server_instance)
    Fraction(7, 2)
    """
    if not instance.jobs:
        return 0
    times = processing_times(instance)
    if _any_float(instance, times):
        return _sound_bounds(instance, times)[0]
    sizes = virtual_sizes(instance)
    total = srpt_schedule(_arrivals(instance), list(sizes), ids=_ids(instance)).total_completion_time
    w_min = min(_weights(instance))
    return total if w_min == 1 else w_min * total


@validate_params({"instance": [InstanceOf(Instance)]})
def mean_busy_time_bound(instance: Instance):
    """LB_MBT = ``sum_j w_j (M_j^LP + P_j / 2)`` on the squashed instance (Goemans' mean busy
    times).

    Parameters
    ----------
    instance : Instance
        The cluster instance.

    Returns
    -------
    number
        Exact for int/Fraction instances.

    Raises
    ------
    InvalidParameterError
        ``instance`` is not an Instance.

    Examples
    --------
    >>> mean_busy_time_bound(two_server_instance)
    6
    """
    if not instance.jobs:
        return 0
    times = processing_times(instance)
    if _any_float(instance, times):
        return _sound_bounds(instance, times)[1]
    weights = _weights(instance)
    lp = lp_schedule(_arrivals(instance), list(virtual_sizes(instance)), weights, ids=_ids(instance))
    return exact_sum(w * (m + exact_div(p, 2)) for w, m, p in zip(weights, lp.mean_busy_times(), times))


def _any_float(instance: Instance, times) -> bool:
    return any(type(x) is float for x in times) or any(
        type(j.arrival) is float or type(j.weight) is float for j in instance.jobs)


def _round_down(x: Fraction) -> float:
    """The largest float <= x (x is within the float range by the instance limits)."""
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


def _dyadic(values) -> tuple[list[int], int] | None:
    """``(ints, e)`` with ``values[i] == ints[i] / 2**e`` exactly, or None when a value is not a
    binary fraction (a Fraction such as 1/3)."""
    ratios = [x.as_integer_ratio() for x in values]
    exps = []
    for _, d in ratios:
        if d & (d - 1):
            return None
        exps.append(d.bit_length() - 1)
    e = max(exps, default=0)
    return [n << (e - k) for (n, _), k in zip(ratios, exps)], e


def _floor_scaled(num: int, shift: int) -> int:
    """floor(num / 2**shift) for any integer shift."""
    return num >> shift if shift >= 0 else num << -shift


def _sound_bounds(instance: Instance, times) -> tuple[float, float]:
    """(LB2, LB_MBT) of a float instance, each a float <= the exact bound (module docstring)."""
    jobs = instance.jobs
    n = len(jobs)
    m = instance.cluster.total_gpus
    ids = _ids(instance)
    parts = [_dyadic([j.arrival for j in jobs]), _dyadic(times), _dyadic([j.weight for j in jobs])]
    if any(x is None for x in parts):
        return _sound_bounds_rational(instance, times)
    (arr, ea), (pt, ep), (wt, ew) = parts
    t0 = min(arr)
    shifted = [a - t0 for a in arr]
    # a float estimate of the largest makespan fixes the grid; any grid would be sound
    # (int / int: a subnormal arrival makes ea 1074 and max(shifted) too large for float())
    horizon = max(shifted) / (1 << ea) + math.fsum(
        j.gpus * float(p) for j, p in zip(jobs, times)) / m
    k = (math.frexp(horizon)[1] - 62) if horizon > 0 else 0
    a_int = [_floor_scaled(a, ea + k) for a in shifted]
    den = m << (ep + k) if ep + k >= 0 else m
    mul = 1 if ep + k >= 0 else 1 << -(ep + k)
    s_int = [(j.gpus * p * mul) // den for j, p in zip(jobs, pt)]
    q = Fraction(2) ** k
    srpt_total = srpt_schedule(a_int, s_int, ids=ids).total_completion_time
    lb2 = Fraction(min(wt), 1 << ew) * (Fraction(n * t0, 1 << ea) + q * srpt_total)
    lp = lp_schedule(a_int, s_int, wt, ids=ids)  # integer weights: exact priorities p / w
    acc = [0] * n
    for job, start, end, share in lp.pieces:
        acc[job] += (end - start) * (end + start) * share
    busy = [acc[i] // (2 * s_int[i]) if s_int[i] else lp.completion_times[i] for i in range(n)]
    sw = sum(wt)
    swb = sum(w * b for w, b in zip(wt, busy))
    swp = sum(w * p for w, p in zip(wt, pt))
    lb_mbt = (Fraction(sw * t0, 1 << (ew + ea)) + Fraction(swb, 1 << ew) * q
              + Fraction(swp, 1 << (ew + ep + 1)))
    return _round_down(lb2), _round_down(lb_mbt)


def _sound_bounds_rational(instance: Instance, times) -> tuple[float, float]:
    """:func:`_sound_bounds` for data mixing floats with non-binary Fractions (slower)."""
    jobs = instance.jobs
    m = instance.cluster.total_gpus
    arrivals = [Fraction(j.arrival) for j in jobs]
    weights = [Fraction(j.weight) for j in jobs]
    ptimes = [Fraction(p) for p in times]
    t0 = min(arrivals)
    shifted = [a - t0 for a in arrivals]
    squashed = [j.gpus * p / m for j, p in zip(jobs, ptimes)]
    horizon = max(shifted) + sum(squashed)
    k = (horizon.numerator.bit_length() - horizon.denominator.bit_length() - 62) if horizon else 0
    q = Fraction(2) ** k
    a_int = [math.floor(a / q) for a in shifted]
    s_int = [math.floor(p / q) for p in squashed]
    ids = _ids(instance)
    srpt_total = srpt_schedule(a_int, s_int, ids=ids).total_completion_time
    n = len(jobs)
    lb2 = min(weights) * (n * t0 + q * srpt_total)
    lp = lp_schedule(a_int, s_int, weights, ids=ids)
    acc = [0] * n
    for job, start, end, share in lp.pieces:
        acc[job] += (end - start) * (end + start) * share
    busy = [acc[i] // (2 * s_int[i]) if s_int[i] else lp.completion_times[i] for i in range(n)]
    lb_mbt = sum(w * (t0 + q * b + p / 2) for w, b, p in zip(weights, busy, ptimes))
    return _round_down(lb2), _round_down(lb_mbt)


@dataclass(frozen=True)
class Bounds:
    """The three lower bounds on OPT and their maximum.

    Attributes
    ----------
    lb1 : number
        Release (height) bound.
    lb2 : number
        Squashed-area bound (``w_min`` times the virtual SRPT total).
    lb_mbt : number
        Mean-busy-time bound.
    best : number
        ``max(lb1, lb2, lb_mbt)``.
    """

    lb1: Any
    lb2: Any
    lb_mbt: Any
    best: Any

    def to_dict(self) -> dict:
        """``{"lb1", "lb2", "lb_mbt", "best"}`` (numbers as computed)."""
        return {"lb1": self.lb1, "lb2": self.lb2, "lb_mbt": self.lb_mbt, "best": self.best}


@validate_params({"instance": [InstanceOf(Instance)]})
def lower_bounds(instance: Instance) -> Bounds:
    """All three lower bounds and their maximum, ``OPT >= best``.

    Parameters
    ----------
    instance : Instance
        The cluster instance.

    Returns
    -------
    Bounds

    Raises
    ------
    InvalidParameterError
        ``instance`` is not an Instance.

    Examples
    --------
    >>> b = lower_bounds(two_server_instance)
    >>> b.best == max(b.lb1, b.lb2, b.lb_mbt)
    True
    """
    lb1 = release_bound(instance)
    times = processing_times(instance)
    if instance.jobs and _any_float(instance, times):
        lb2, lb_mbt = _sound_bounds(instance, times)
    else:
        lb2 = squashed_area_bound(instance)
        lb_mbt = mean_busy_time_bound(instance)
    return Bounds(lb1, lb2, lb_mbt, max(lb1, lb2, lb_mbt))
