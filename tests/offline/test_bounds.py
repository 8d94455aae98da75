"""Lower bounds LB1, LB2, LB_MBT: pinned values, CHK-14 (every LB <= OPT), weights, exactness."""

from fractions import Fraction

import pytest
from hypothesis import given

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.offline import (bruteforce_rigid_nonpreemptive, lower_bounds, mean_busy_time_bound, offline_opt,
                           release_bound, slotted_ilp, squashed_area_bound)
from asrpt.single import srpt_schedule, wspt_schedule
from asrpt.testing.strategies import clusters, instances, single_machine_instances

WORKED = Instance(Cluster.homogeneous(1, 4), (
    Job("A", 0, 2, processing_time=4), Job("B", 0, 4, processing_time=1), Job("C", 1, 1, processing_time=2)))


def test_model_md_section_9_values():
    b = lower_bounds(WORKED)
    assert (b.lb1, b.lb2, b.best) == (8, 6, 8)
    # LP schedule on (0, 2), (0, 1), (1, 1/2) with unit weights: B [0,1], C [1,1.5], A [1.5,3.5]
    # M_B = 1/2, M_C = 5/4, M_A = 5/2 -> (1/2 + 1/2) + (5/4 + 1) + (5/2 + 2)
    assert b.lb_mbt == Fraction(31, 4)
    assert b.to_dict() == {"lb1": 8, "lb2": 6, "lb_mbt": Fraction(31, 4), "best": 8}
    assert offline_opt(WORKED).upper_bound == 9 >= b.best


def test_pinned_two_machines_bounds_are_below_20():
    inst = Instance(Cluster.homogeneous(2, 1), tuple(
        Job(i, r, 1, processing_time=p) for i, r, p in [("A", 0, 5), ("B", 5, 1), ("C", 0, 1), ("D", 5, 1), ("E", 0, 1)]))
    b = lower_bounds(inst)
    assert b.lb1 == 5 + 6 + 1 + 6 + 1
    assert max(b.lb1, b.lb2, b.lb_mbt) == b.best <= 20


# --- CHK-14: every bound is at most OPT ----------------------------------------------------------


def tiny_rigid(**kw):
    return instances(max_jobs=4, cluster=clusters(max_servers=1, max_gpus_per_server=4), max_processing_time=4,
                     max_gap=3, **kw)


@given(tiny_rigid(weighted=True))
def test_chk14_bounds_below_the_preemptive_optimum(inst):
    """Certification rule: LB > UB for a feasible schedule's cost UB is a certified bug. The slotted ILP
    on the integer grid gives such a UB (the true OPT can only be smaller)."""
    b = lower_bounds(inst)
    ub = slotted_ilp(inst).cost
    assert b.lb1 <= ub and b.lb2 <= ub and b.lb_mbt <= ub and b.best <= ub


@given(tiny_rigid(weighted=True))
def test_chk14_bounds_below_the_nonpreemptive_optimum(inst):
    b = lower_bounds(inst)
    assert b.best <= bruteforce_rigid_nonpreemptive(inst).objective


@given(single_machine_instances(max_jobs=6))
def test_lb2_is_opt_on_one_machine(inst):
    """M = 1, g = 1, unit weights: the squashed instance is the instance; LB2 = SRPT = OPT."""
    b = lower_bounds(inst)
    srpt = srpt_schedule([j.arrival for j in inst.jobs], [j.processing_time for j in inst.jobs])
    assert b.lb2 == srpt.total_completion_time == b.best


@given(tiny_rigid(weighted=True, exact=True))
def test_weighted_lb2_is_min_weight_times_virtual_srpt(inst):
    m = inst.cluster.total_gpus
    srpt = srpt_schedule([j.arrival for j in inst.jobs], [Fraction(j.gpus * j.processing_time, 1) / m for j in inst.jobs],
                         ids=[j.id for j in inst.jobs]).total_completion_time
    assert squashed_area_bound(inst) == min(j.weight for j in inst.jobs) * srpt


def test_weighted_lb2_scales_and_unweighted_srpt_total_is_not_a_weighted_bound():
    # one machine, a: (0, p=2, w=1), b: (0, p=1, w=10): SRPT runs b first, so sum w C = 10 + 3 = 13
    inst = Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=2, weight=1),
                                                Job("b", 0, 1, processing_time=1, weight=10)))
    assert squashed_area_bound(inst) == 1 * (1 + 3)
    # b: (0, p=1, w=1), a: (0, p=2, w=10): OPT runs a first (cost 20 + 3 = 23); SRPT's weighted total is
    # 1 + 30 = 31 > OPT, so "sum w_j C~_j" would not be a lower bound; w_min * sum C~ = 4 is
    inst = Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=2, weight=10),
                                                Job("b", 0, 1, processing_time=1, weight=1)))
    opt = wspt_schedule([2, 1], [10, 1]).weighted_total([10, 1])
    assert opt == 23 and squashed_area_bound(inst) == 4 <= opt
    assert srpt_schedule([0, 0], [2, 1]).weighted_total([10, 1]) == 31 > opt


@given(tiny_rigid(weighted=True))
def test_lb_mbt_matches_the_eastman_even_isaacs_form_without_releases(inst):
    """g = 1, r = 0: LB_MBT = Z*_1(p/m) + ((m - 1) / (2m)) sum w p."""
    m = inst.cluster.total_gpus
    jobs = [Job(j.id, 0, 1, weight=j.weight, processing_time=j.processing_time) for j in inst.jobs]
    flat = inst.replace_jobs(jobs)
    squashed = [Fraction(j.processing_time, m) for j in jobs]
    weights = [j.weight for j in jobs]
    z1 = wspt_schedule(squashed, weights).weighted_total(weights)
    assert mean_busy_time_bound(flat) == z1 + Fraction(m - 1, 2 * m) * sum(w * j.processing_time for w, j in zip(weights, jobs))


@given(tiny_rigid(exact=True, weighted=True))
def test_bounds_are_exact_for_exact_instances(inst):
    b = lower_bounds(inst)
    for value in (b.lb1, b.lb2, b.lb_mbt, b.best):
        assert not isinstance(value, float)


def test_release_bound_and_empty_instance():
    assert release_bound(WORKED) == 8
    empty = Instance(Cluster.homogeneous(1, 1), ())
    assert lower_bounds(empty).to_dict() == {"lb1": 0, "lb2": 0, "lb_mbt": 0, "best": 0}


@pytest.mark.parametrize("func", [release_bound, squashed_area_bound, mean_busy_time_bound, lower_bounds])
def test_invalid_instance_parameter(func):
    with pytest.raises(InvalidParameterError, match=f"'instance' parameter of {func.__name__} must be an instance of"):
        func({"jobs": []})
