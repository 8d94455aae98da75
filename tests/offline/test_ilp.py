"""The slotted and start-time ILPs, and offline_opt around them: CHK-01, CHK-12, CHK-13, the pinned
two-machine case (SRPT 21, OPT 20), schedule validity, solver cross-check, time limits, infeasible
horizons. The exact optimum itself is tested in test_exact.py."""

import json
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from asrpt.cli._common import jsonable
from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.offline import (auto_slot, bruteforce_rigid_nonpreemptive, lower_bounds, offline_opt,
                           schedule_problems, slotted_ilp, start_time_ilp)
from asrpt.single import multi_srpt_schedule, srpt_schedule
from asrpt.solve import available_solvers
from asrpt.testing.strategies import clusters, instances, single_machine_instances

WORKED = Instance(Cluster.homogeneous(1, 4), (
    Job("A", 0, 2, processing_time=4), Job("B", 0, 4, processing_time=1), Job("C", 1, 1, processing_time=2)))
TWO_MACHINES = Instance(Cluster.homogeneous(2, 1), tuple(
    Job(i, r, 1, processing_time=p) for i, r, p in
    [("A", 0, 5), ("B", 5, 1), ("C", 0, 1), ("D", 5, 1), ("E", 0, 1)]))


def tiny_rigid(max_jobs=4, max_gpus=4, max_processing_time=4, max_gap=3, **kw):
    return instances(max_jobs=max_jobs, cluster=clusters(max_servers=1, max_gpus_per_server=max_gpus),
                     max_processing_time=max_processing_time, max_gap=max_gap, **kw)


# --- pinned -------------------------------------------------------------------------------------


def test_worked_example_bracket_is_closed_at_9():
    r = offline_opt(WORKED)
    assert r.upper_bound == r.lower_bound == 9 and r.closed and r.proof == "exact"
    assert r.status == "closed" and r.verdict == "OPT = 9 (proven)" and r.gap == 0
    assert dict(r.completion_times) == {"A": 5, "B": 1, "C": 3}
    assert schedule_problems(WORKED, r.schedule) == []
    assert r.bounds.best == 8  # the cheap bounds alone left it open


def test_chk11_pinned_two_machines_opt_20_srpt_21():
    r = offline_opt(TWO_MACHINES, ilp="always")
    assert r.upper_bound == r.lower_bound == 20 and r.closed
    assert r.ilp.exact_grid  # one GPU per job, integer data: integer preemption points suffice
    assert schedule_problems(TWO_MACHINES, r.schedule) == []
    srpt2 = multi_srpt_schedule([j.arrival for j in TWO_MACHINES.jobs],
                                [j.processing_time for j in TWO_MACHINES.jobs], 2)
    assert srpt2.total_completion_time == 21 > r.upper_bound


def test_slotted_ilp_docstring_case_and_pieces():
    inst = Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=3),
                                                Job("b", 1, 1, processing_time=1)))
    r = slotted_ilp(inst)
    assert r.objective == r.cost == 6 and r.exact_grid and r.bound == pytest.approx(6)
    assert [tuple(p) for p in r.schedule["a"]] == [(0, 1, 1), (2, 4, 1)]
    assert r.to_dict()["completion_times"] == {"a": 4, "b": 2}


# --- CHK-01: SRPT is the exact optimum on one machine --------------------------------------------


@given(single_machine_instances(max_jobs=5, max_processing_time=4, max_gap=3))
def test_chk01_srpt_equals_the_slotted_ilp(inst):
    srpt = srpt_schedule([j.arrival for j in inst.jobs], [j.processing_time for j in inst.jobs]).total_completion_time
    r = slotted_ilp(inst)
    assert r.status == "optimal" and r.exact_grid
    assert r.objective == srpt and r.cost == srpt
    opt = offline_opt(inst)
    assert opt.lower_bound == opt.upper_bound == srpt and opt.closed


# --- CHK-12: refining the grid never hurts -------------------------------------------------------


@given(tiny_rigid(max_jobs=3, max_gpus=3, max_processing_time=3, max_gap=2, exact=True))
def test_chk12_slot_refinement_is_monotone(inst):
    coarse = slotted_ilp(inst, slot=1)
    fine = slotted_ilp(inst, slot=Fraction(1, 2))
    finer = slotted_ilp(inst, slot=Fraction(1, 6))
    assert fine.objective <= coarse.objective
    assert finer.objective <= fine.objective
    assert lower_bounds(inst).best <= finer.cost <= finer.objective


# --- CHK-13: start-time ILP == brute force -----------------------------------------------------


@given(tiny_rigid(weighted=True))
def test_chk13_start_time_ilp_equals_brute_force(inst):
    r = start_time_ilp(inst)
    assert r.status == "optimal" and r.exact_grid
    assert r.objective == bruteforce_rigid_nonpreemptive(inst).objective
    assert schedule_problems(inst, r.schedule, preemptive=False) == []
    opt = offline_opt(inst, preemptive=False)
    assert opt.lower_bound == opt.upper_bound == r.objective and opt.closed and opt.proof in ("exact", "mip")


@given(tiny_rigid(weighted=True))
def test_preemption_never_hurts(inst):
    assert slotted_ilp(inst).objective <= start_time_ilp(inst).objective


def test_a_model_highs_presolve_calls_infeasible_is_solved():
    """HiGHS 1.16's presolve declared this start-time ILP infeasible (found by hypothesis in the
    test above); asked again without presolve, it is solved, to the brute force's optimum."""
    jobs = (Job("j0", 0, 1, weight=5, processing_time=4), Job("j1", 1, 1, weight=1, processing_time=1),
            Job("j2", 2, 1, weight=4, processing_time=3), Job("j3", 3, 1, weight=2, processing_time=1))
    inst = Instance(Cluster.from_spec("1x1"), jobs)
    r = start_time_ilp(inst)
    assert r.status == "optimal" and r.objective == bruteforce_rigid_nonpreemptive(inst).objective == 71


# --- feasibility of what the ILPs return ---------------------------------------------------------


@given(tiny_rigid(exact=True, weighted=True), st.sampled_from([1, Fraction(1, 2), Fraction(2, 3), 2]))
def test_schedules_are_feasible_for_any_slot(inst, slot):
    """Data off the grid are rounded up: the read schedule is still feasible and its cost is an
    upper bound no smaller than any lower bound (a certified bug otherwise)."""
    lb = lower_bounds(inst).best
    for preemptive, model in ((True, slotted_ilp), (False, start_time_ilp)):
        r = model(inst, slot=slot)
        assert r.status == "optimal"
        assert schedule_problems(inst, r.schedule, preemptive=preemptive) == []
        weights = {j.id: j.weight for j in inst.jobs}
        assert r.cost == sum(weights[k] * c for k, c in r.completion_times.items())
        assert lb <= r.cost <= r.objective


@given(tiny_rigid())
def test_float_instances_give_feasible_schedules(inst):
    floats = inst.replace_jobs(Job(j.id, float(j.arrival) + 0.1, j.gpus, processing_time=float(j.processing_time) * 1.1)
                               for j in inst.jobs)
    r = offline_opt(floats, slot=0.5)
    assert schedule_problems(floats, r.schedule) == []
    assert r.lower_bound <= r.upper_bound * (1 + 1e-9)  # float mode: both sides carry rounding


def test_exact_grid_flags():
    assert slotted_ilp(WORKED).exact_grid is False  # M = 4
    single = Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=2, weight=3),
                                                  Job("b", 1, 1, processing_time=1, weight=3)))
    assert slotted_ilp(single).exact_grid is True  # one GPU per job, grid data
    assert slotted_ilp(single, slot=Fraction(2, 3)).exact_grid is False  # off the grid
    unequal = single.replace_jobs([Job("a", 0, 1, processing_time=2, weight=1), Job("b", 1, 1, processing_time=1, weight=3)])
    assert slotted_ilp(unequal).exact_grid is True  # weights do not matter (Baptiste et al.)
    machines = Instance(Cluster.homogeneous(1, 3), (Job("a", 0, 1, processing_time=2, weight=2),
                                                    Job("b", 1, 1, processing_time=1)))
    assert slotted_ilp(machines).exact_grid is True
    assert slotted_ilp(machines.replace_jobs([Job("a", 0, 2, processing_time=2)])).exact_grid is False
    assert start_time_ilp(WORKED).exact_grid is True
    assert start_time_ilp(WORKED, slot=Fraction(3, 2)).exact_grid is False


# --- solvers, limits, infeasible horizons --------------------------------------------------------


ONE_JOB = Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=1),))  # every deadline tight
WEIGHTED = Instance(Cluster.homogeneous(1, 4), (
    Job("a", 0, 2, processing_time=3, weight=2), Job("b", 1, 4, processing_time=1, weight=5),
    Job("c", 1, 3, processing_time=2), Job("d", 2, 1, processing_time=4, weight=3)))


@pytest.mark.skipif("cbc" not in available_solvers(), reason="CBC binary not available")
@pytest.mark.parametrize("inst", [WORKED, TWO_MACHINES, ONE_JOB, WEIGHTED],
                         ids=["worked", "two-machines", "one-job", "weighted"])
def test_cbc_cross_checks_highs(inst):
    for model in (slotted_ilp, start_time_ilp):
        h, c = model(inst, solver="highs"), model(inst, solver="cbc")
        assert c.status == h.status == "optimal"
        assert c.objective == h.objective and c.solve.solver == "cbc"


def test_infeasible_horizon_is_reported_and_the_bracket_stays_valid():
    r = offline_opt(WORKED, horizon=2, ilp="always")
    assert r.ilp.status == "infeasible" and r.ilp.objective is None and r.ilp.cost is None
    assert any("infeasible within the horizon" in note for note in r.notes)
    assert r.upper_source != "ilp" and schedule_problems(WORKED, r.schedule) == []
    assert r.closed and r.upper_bound == 9  # the exact search does not need the ILP
    assert slotted_ilp(WORKED, horizon=2).status == "infeasible"
    assert start_time_ilp(WORKED, horizon=3).status == "infeasible"


def test_time_limit_keeps_a_valid_bracket():
    jobs = tuple(Job(f"j{i}", i % 3, 1 + (i * 5) % 8, processing_time=1 + (i * 3) % 7) for i in range(12))
    inst = Instance(Cluster.homogeneous(1, 8), jobs)
    r = offline_opt(inst, time_limit=0.05)
    assert r.status in ("open", "closed") and r.closed == (r.lower_bound == r.upper_bound)
    assert r.lower_bound <= r.upper_bound
    assert schedule_problems(inst, r.schedule) == []


def test_gap_is_passed_through():
    r = offline_opt(WORKED, gap=0.5)
    assert r.lower_bound <= r.upper_bound


def test_empty_instance():
    r = offline_opt(Instance(Cluster.homogeneous(1, 2), ()))
    assert (r.lower_bound, r.upper_bound, r.status) == (0, 0, "closed")
    assert start_time_ilp(Instance(Cluster.homogeneous(1, 2), ())).objective == 0


def test_to_dict_is_json_ready():
    d = offline_opt(WORKED).to_dict()
    text = json.dumps(jsonable(d))
    assert '"upper_bound": 9' in text and '"closed": true' in text and "proven" not in d
    assert d["schedule"]["A"][0]["gpus"] == 2 and set(d["bounds"]) == {"lb1", "lb2", "lb_mbt", "best"}
    assert start_time_ilp(WORKED).to_dict()["model"] == "start_time"


# --- automatic slot ------------------------------------------------------------------------------


def test_auto_slot():
    assert auto_slot(WORKED) == 1
    halves = WORKED.replace_jobs([Job("a", Fraction(1, 2), 1, processing_time=Fraction(3, 2)),
                                  Job("b", 0, 1, processing_time=1)])
    assert auto_slot(halves) == Fraction(1, 2)
    assert auto_slot(WORKED, max_slots=3) == 3
    assert auto_slot(WORKED.replace_jobs([Job("a", 0, 1, processing_time=1000)])) == 1000  # the gcd
    big = WORKED.replace_jobs([Job("a", 0, 1, processing_time=1000), Job("b", 0, 1, processing_time=1)])
    assert auto_slot(big) == 6  # horizon 1001 > 200 slots: coarsened by ceil(1001 / 200)
    flt = WORKED.replace_jobs([Job("a", 0.5, 1, processing_time=1.25)])
    assert auto_slot(flt) == 0.25 and isinstance(auto_slot(flt), float)
    assert auto_slot(Instance(Cluster.homogeneous(1, 1), ())) == 1


# --- raise paths ---------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: slotted_ilp(WORKED, slot=0), "'slot' parameter of slotted_ilp must be a float in \\(0, inf\\)"),
    (lambda: slotted_ilp(WORKED, solver="gurobi"), "'solver' parameter of slotted_ilp must be a str among"),
    (lambda: start_time_ilp(WORKED, gap=1), "'gap' parameter of start_time_ilp"),
    (lambda: start_time_ilp(WORKED, time_limit=0), "'time_limit' parameter of start_time_ilp"),
    (lambda: slotted_ilp(WORKED, horizon=0), "'horizon' parameter of slotted_ilp"),
    (lambda: offline_opt("x"), "'instance' parameter of offline_opt"),
    (lambda: offline_opt(WORKED, preemptive="yes"), "'preemptive' parameter of offline_opt must be a bool"),
    (lambda: offline_opt(WORKED, max_slots=0), "'max_slots' parameter of offline_opt"),
    (lambda: auto_slot(WORKED, max_slots=0), "'max_slots' parameter of auto_slot"),
    (lambda: schedule_problems(WORKED, [1]), "'schedule' parameter of schedule_problems"),
])
def test_invalid_parameters(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call()


def test_schedule_problems_reports_each_kind():
    bad = {"A": [(0, 2, 2), (1, 3, 2)], "B": [(0, 1, 4)], "Z": [(0, 1, 1)]}
    problems = schedule_problems(WORKED, bad, preemptive=False)
    text = "\n".join(problems)
    assert "job A: 2 pieces in a non-preemptive schedule" in text
    assert "job A: pieces overlap or are out of order at 1" in text
    assert "job C: no pieces" in text and "job Z: not in the instance" in text
    assert "at time 0: 6 GPUs busy, more than the 4 of the cluster" in text
    assert schedule_problems(WORKED, {"A": [(0, 4, 2)], "B": [(4, 5, 4)], "C": [(1, 2, 1), (2, 3, 1)]}) == []
    assert "job C: processed 1, needs 2" in schedule_problems(WORKED, {"A": [(0, 4, 2)], "B": [(4, 5, 4)], "C": [(1, 2, 1)]})


# --- slow: bigger searches (run with -m slow; HYPOTHESIS_PROFILE=deep for the long version) ------


@pytest.mark.slow
@given(instances(min_jobs=3, max_jobs=6, cluster=clusters(min_servers=2, max_servers=3, max_gpus_per_server=1),
                 max_processing_time=5, max_gap=4))
def test_chk10_srpt_on_m_machines_within_five_quarters_of_a_feasible_schedule(inst):
    """CHK-10 (Sitters): SRPT_m sum C <= 5/4 OPT <= 5/4 UB for any feasible UB; a violation is a
    certified bug. The search is steered towards large ratios."""
    from hypothesis import target

    srpt = multi_srpt_schedule([j.arrival for j in inst.jobs], [j.processing_time for j in inst.jobs],
                               inst.cluster.total_gpus).total_completion_time
    ub = slotted_ilp(inst).cost
    target(float(Fraction(srpt) / ub), label="srpt_m/ub")
    assert srpt <= Fraction(5, 4) * ub


@pytest.mark.slow
@given(instances(min_jobs=4, max_jobs=6, cluster=clusters(max_servers=1, max_gpus_per_server=4), max_processing_time=5,
                 max_gap=3, weighted=True))
def test_chk13_larger_instances(inst):
    r = start_time_ilp(inst)
    assert r.objective == bruteforce_rigid_nonpreemptive(inst).objective
    assert lower_bounds(inst).best <= slotted_ilp(inst).cost <= r.objective


@pytest.mark.slow
@pytest.mark.skipif("cbc" not in available_solvers(), reason="CBC binary not available")
@given(tiny_rigid(weighted=True))
def test_cbc_agrees_with_highs_on_random_instances(inst):
    for model in (slotted_ilp, start_time_ilp):
        assert model(inst, solver="cbc").objective == model(inst, solver="highs").objective
