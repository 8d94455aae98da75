"""Lower bounds on the offline optimum ``OPT = min sum_j w_j C_j`` of a cluster instance.

This module owns the three cheap lower bounds of model.md section 7 and theory-checks 1.5. OPT is
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

Examples
--------
>>> lower_bounds(two_server_instance).to_dict()
{'lb1': 8, 'lb2': Fraction(7, 2), 'lb_mbt': 6, 'best': 8}
"""

from __future__ import annotations

from dataclasses import dataclass
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
    return exact_sum(j.weight * (j.arrival + p) for j, p in zip(instance.jobs, times))


@validate_params({"instance": [InstanceOf(Instance)]})
def squashed_area_bound(instance: Instance):
    """LB2 = ``w_min * SRPT_1(a, g P / M)``: the virtual single machine's total completion time.

    For unit weights this is exactly the sum of the virtual SRPT completion times (model.md
    section 7); for weighted instances it is scaled by the smallest weight so that it stays a
    valid bound on ``sum w_j C_j`` (see the module docstring).

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
    sizes = virtual_sizes(instance)
    total = srpt_schedule(_arrivals(instance), list(sizes), ids=_ids(instance)).total_completion_time
    w_min = min(_weights(instance))
    return total if w_min == 1 else w_min * total


@validate_params({"instance": [InstanceOf(Instance)]})
def mean_busy_time_bound(instance: Instance):
    """LB_MBT = ``sum_j w_j (M_j^LP + P_j / 2)`` on the squashed instance (theory-checks 1.5).

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
    weights = _weights(instance)
    lp = lp_schedule(_arrivals(instance), list(virtual_sizes(instance)), weights, ids=_ids(instance))
    return exact_sum(w * (m + exact_div(p, 2)) for w, m, p in zip(weights, lp.mean_busy_times(), times))


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
    lb2 = squashed_area_bound(instance)
    lb_mbt = mean_busy_time_bound(instance)
    return Bounds(lb1, lb2, lb_mbt, max(lb1, lb2, lb_mbt))
