"""The exact preemptive optimum (event-sequence branch and bound) and the configuration-LP bound,
against an independent enumeration oracle (tests/offline/_sequence_oracle.py) and the package's
own checks: every closed optimum equals the oracle's, no lower bound ever exceeds it, every
schedule is exactly feasible, and a tampered starting schedule is refused."""

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.offline import (configuration_lp_bound, exact_preemptive_opt, lower_bounds, offline_opt,
                           schedule_problems, sequence_schedule, slotted_ilp)
from asrpt.offline.exact import _data
from asrpt.testing.strategies import clusters, instances

from ._sequence_oracle import oracle_opt_instance

GANGS = Instance(Cluster.homogeneous(1, 4), tuple(Job(f"s{i}", 0, 2, processing_time=1) for i in range(3))
                 + tuple(Job(f"w{i}", 0, 4, processing_time=10) for i in range(2)))
WORKED = Instance(Cluster.homogeneous(1, 4), (
    Job("A", 0, 2, processing_time=4), Job("B", 0, 4, processing_time=1), Job("C", 1, 1, processing_time=2)))


def tiny(max_jobs=5, **kw):
    return instances(max_jobs=max_jobs, cluster=clusters(max_servers=2, max_gpus_per_server=4),
                     max_processing_time=6, max_gap=4, **kw)


def close_to(exact, approx) -> bool:
    return abs(float(exact) - approx) <= 1e-6 * max(1.0, abs(approx))


# --- pinned ----------------------------------------------------------------------------------


def test_the_grid_is_not_exact_for_gangs_but_the_search_is():
    """Slots of 1 cost 38, slots of 1/2 reach 37, the optimum: refining a grid proves nothing."""
    assert slotted_ilp(GANGS, slot=1).cost == 38
    assert slotted_ilp(GANGS, slot=Fraction(1, 2)).cost == 37
    r = exact_preemptive_opt(GANGS)
    assert (r.lower_bound, r.upper_bound, r.closed, r.stopped) == (37, 37, True, "closed")
    assert schedule_problems(GANGS, r.schedule, exact=True) == []
    assert sorted(r.completion_times.values())[:3] == [1, Fraction(3, 2), Fraction(3, 2)]


def test_the_worked_example_is_9_not_the_cheap_bracket_8_to_9():
    r = offline_opt(WORKED)
    assert r.bounds.best == 8 and r.closed and r.upper_bound == r.lower_bound == 9
    assert r.to_dict()["closed"] is True and "proven" not in r.to_dict()


def test_an_open_bracket_cannot_be_read_as_proven():
    jobs = tuple(Job(f"j{i}", i % 3, 1 + (i * 5) % 8, processing_time=1 + (i * 3) % 7) for i in range(12))
    inst = Instance(Cluster.homogeneous(1, 8), jobs)
    r = offline_opt(inst, time_limit=0.5, ilp_share=0.1)
    d = r.to_dict()
    assert r.lower_bound <= r.upper_bound
    if not r.closed:
        assert d["closed"] is False and d["status"] == "open" and d["proof"] is None
        assert "<= OPT <=" in d["verdict"] and "proven" not in d["verdict"]
    assert schedule_problems(inst, r.schedule, exact=True) == []


def test_sequence_schedule_is_the_lp_of_one_event_order():
    inst = Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=3), Job("b", 1, 1, processing_time=1)))
    assert sequence_schedule(inst, [("r", 0), ("r", 1), ("c", "b"), ("c", "a")])[0] == 6
    assert sequence_schedule(inst, [("r", 0), ("r", 1), ("c", "a"), ("c", "b")])[0] == 7
    assert sequence_schedule(inst, [("r", 0), ("c", "a"), ("r", 1), ("c", "b")]) == (None, None)
    with pytest.raises(ValueError, match="completes before its release"):
        sequence_schedule(inst, [("r", 0), ("c", "b"), ("r", 1), ("c", "a")])


def test_a_tampered_starting_schedule_is_refused():
    good = dict(exact_preemptive_opt(WORKED).schedule)
    bad = {**good, "C": ((Fraction(1, 2), Fraction(5, 2), 1),)}   # before C's arrival at 1
    with pytest.raises(InvalidParameterError, match="job C: starts at 1/2, before its arrival 1"):
        exact_preemptive_opt(WORKED, schedule=bad)
    short = {**good, "A": ((0, 3, 2),)}                            # A needs 4
    with pytest.raises(InvalidParameterError, match="job A: processed 3, needs 4"):
        exact_preemptive_opt(WORKED, schedule=short)


def test_float_instances_are_solved_for_the_binary_numbers_they_are():
    inst = Instance(Cluster.homogeneous(1, 1), (Job("a", 0.1, 1, processing_time=1.1),
                                                Job("b", 0.3, 1, processing_time=0.7)))
    r = exact_preemptive_opt(inst)
    # SRPT is optimal on one machine: b from 0.3 to 0.3 + 0.7, then a, done at 0.1 + 1.1 + 0.7
    exact = (Fraction(0.3) + Fraction(0.7)) + (Fraction(0.1) + Fraction(1.1) + Fraction(0.7))
    assert r.closed and r.upper_bound == r.lower_bound == exact
    assert schedule_problems(inst, r.schedule, exact=True) == []
    o = offline_opt(inst)
    assert o.closed and isinstance(o.upper_bound, float) and o.lower_bound == o.upper_bound


def test_data_too_fine_for_the_lp_is_refused_in_one_line():
    inst = Instance(Cluster.homogeneous(1, 2), (Job("a", 0, 1, processing_time=3), Job("b", 5e-324, 1, processing_time=2)))
    with pytest.raises(InvalidParameterError, match="more than 300 binary digits"):
        exact_preemptive_opt(inst)
    r = offline_opt(inst)   # the bracket still comes, from the other methods
    assert r.lower_bound <= r.upper_bound and any("skipped" in n for n in r.notes)


def test_identical_jobs_complete_in_their_listed_order():
    """Lemma 4's dominance is used: the twin of an earlier identical job waits for it."""
    d = _data(GANGS)
    assert d.twin_before == (None, 0, 1, None, 3)


# --- against the independent oracle ------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(tiny(weighted=True))
def test_the_search_closes_at_the_oracles_optimum(inst):
    r = exact_preemptive_opt(inst, time_limit=None)
    assert r.closed and r.stopped == "closed"
    assert close_to(r.upper_bound, oracle_opt_instance(inst))
    assert schedule_problems(inst, r.schedule, exact=True) == []
    assert sum(Fraction(j.weight) * Fraction(r.completion_times[j.id]) for j in inst.jobs) == r.upper_bound


@settings(max_examples=30, deadline=None)
@given(tiny(weighted=True, exact=True))
def test_no_lower_bound_exceeds_the_optimum(inst):
    opt = oracle_opt_instance(inst)
    cfg = configuration_lp_bound(inst, epsilon=Fraction(1, 4))
    assert float(cfg.value) <= opt * (1 + 1e-9)
    assert float(lower_bounds(inst).best) <= opt * (1 + 1e-9)
    stopped = exact_preemptive_opt(inst, node_limit=3)   # an early stop: an exact bracket around OPT
    assert float(stopped.lower_bound) <= opt * (1 + 1e-9) <= float(stopped.upper_bound) * (1 + 2e-9)


@settings(max_examples=20, deadline=None)
@given(instances(max_jobs=5, cluster=clusters(max_servers=3, max_gpus_per_server=1), max_gpus=1, max_processing_time=5,
                 max_gap=3, weighted=True))
def test_one_gpu_jobs_on_integer_data_the_grid_is_exact(inst):
    """Baptiste et al.'s integer preemption property, checked against the exact search."""
    ilp = slotted_ilp(inst, slot=1)
    assert ilp.exact_grid
    assert ilp.objective == exact_preemptive_opt(inst, time_limit=None).upper_bound


@settings(max_examples=20, deadline=None)
@given(tiny(weighted=True), st.randoms(use_true_random=False))
def test_any_multipliers_give_a_lower_bound(inst, rnd):
    """Lemma E4: weak duality with every configuration priced exactly, for any multipliers (the
    LP's own, perturbed, and random ones), never above the LP's optimum; Farkas with costs 0."""
    from asrpt.offline.exact import _SequenceLP

    d = _data(inst)
    slp = _SequenceLP(d, (("r", 0),))
    ans = slp.lp.solve()
    assert ans.status == "optimal" and float(ans.bound) <= ans.value * (1 + 1e-9) + 1e-9
    y = slp.lp.y
    for _ in range(5):
        trial = [v * (1 + rnd.uniform(-0.5, 0.5)) + rnd.uniform(-1, 1) for v in y]
        assert float(slp.lp.scaled_dual_bound(trial)) <= ans.value * (1 + 1e-9) + 1e-9
        assert slp.lp.dual_bound([Fraction(v) for v in trial]) <= Fraction(ans.value) * (1 + Fraction(1, 10**9)) + Fraction(1, 10**9)
        assert slp.lp.scaled_dual_bound(trial, costs=False) <= 0   # a feasible LP: no Farkas proof


@settings(max_examples=25, deadline=None)
@given(tiny(weighted=True))
def test_area_cuts_hold_on_every_schedule(inst):
    """Lemma C2 on the exact optimum's schedule (and so on every set the separation may pick)."""
    r = exact_preemptive_opt(inst, time_limit=None)
    m = inst.cluster.total_gpus
    jobs = inst.jobs
    for rho in sorted({j.arrival for j in jobs}):
        members = sorted((j for j in jobs if j.arrival >= rho), key=lambda j: r.completion_times[j.id])
        for family, speed in (("area", m), ("wide", 1)):
            sel = [j for j in members if family == "area" or 2 * j.gpus > m]
            for k in range(2, len(sel) + 1):
                part = sel[:k]
                a = [Fraction(j.gpus * j.processing_time) if family == "area" else Fraction(j.processing_time)
                     for j in part]
                lhs = sum(ai * Fraction(r.completion_times[j.id]) for ai, j in zip(a, part))
                rhs = Fraction(rho) * sum(a) + (sum(a) ** 2 + sum(ai * ai for ai in a)) / (2 * speed)
                assert lhs >= rhs


def test_a_callers_horizon_never_makes_a_grid_exact():
    """Found by the referee: a short horizon cut the optimum off, yet the grid optimum (187) was
    reported as OPT while a checked schedule cost 160."""
    inst = Instance(Cluster.homogeneous(1, 2), (
        Job("j0", 1, 1, weight=10, processing_time=3), Job("j1", 0, 1, weight=2, processing_time=4),
        Job("j2", 0, 1, weight=2, processing_time=1), Job("j3", 2, 1, weight=20, processing_time=3),
        Job("j4", 0, 1, weight=1, processing_time=2)))
    assert not slotted_ilp(inst, slot=1, horizon=7).exact_grid and slotted_ilp(inst, slot=1).exact_grid
    r = offline_opt(inst, preemptive=False, horizon=7, slot=1, time_limit=None)
    assert not (r.closed and r.upper_bound > 160)


@pytest.mark.parametrize("scale", [10**6, 10**10])
def test_large_exact_units_still_close(scale):
    """Found by the referee: multipliers of size 1e-18 met an absolute pricing tolerance, no column
    was added, and the search ended unresolved; pricing is now relative to the multipliers."""
    base = [("j0", 0, 1, 17, 13), ("j1", 0, 1, 17, 13), ("j2", 30, 2, 20, 29), ("j3", 13, 2, 17, 13),
            ("j4", 1, 1, 20, 7)]
    inst = Instance(Cluster.homogeneous(1, 2), tuple(Job(i, r * scale, g, weight=w, processing_time=p * scale)
                                                     for i, r, g, w, p in base))
    r = exact_preemptive_opt(inst, time_limit=None)
    assert r.closed and r.upper_bound == Fraction(4805, 2) * scale
    floats = Instance(Cluster.homogeneous(1, 2), (
        Job("j0", 0.0, 1, weight=1.7, processing_time=1.3), Job("j1", 0.0, 1, weight=1.7, processing_time=1.3),
        Job("j2", 3.0, 2, weight=2, processing_time=2.9), Job("j3", 1.3, 2, weight=1.7, processing_time=1.3),
        Job("j4", 0.1, 1, weight=2, processing_time=0.7)))
    f = exact_preemptive_opt(floats, time_limit=None)
    assert f.closed and close_to(f.upper_bound, oracle_opt_instance(floats))


def test_a_nan_in_a_starting_schedule_is_a_parameter_error():
    with pytest.raises(InvalidParameterError, match="schedule: not a schedule"):
        exact_preemptive_opt(WORKED, schedule={"A": ((1, float("nan"), 2),), "B": ((0, 1, 4),), "C": ((1, 3, 1),)})
