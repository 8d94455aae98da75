"""The solver entry point: both backends agree, statuses are mapped, bounds are reported."""

import itertools

import pulp
import pytest

from asrpt.errors import InvalidParameterError
from asrpt.solve import available_solvers, solve

SOLVERS = available_solvers()
VALUES, WEIGHTS = [10, 13, 7, 8, 9, 4], [5, 6, 4, 4, 5, 2]


def knapsack():
    prob = pulp.LpProblem("knap", pulp.LpMaximize)
    values, weights = VALUES, WEIGHTS
    xs = [prob.add_variable(f"x{i}", 0, 1, cat="Binary") for i in range(6)]
    prob += pulp.lpSum(v * x for v, x in zip(values, xs)) + 1
    prob += pulp.lpSum(w * x for w, x in zip(weights, xs)) <= 13
    return prob, xs


@pytest.mark.parametrize("solver", SOLVERS)
def test_optimum_and_bound(solver):
    prob, xs = knapsack()
    res = solve(prob, solver=solver)
    assert res.status == "optimal" and res.solver == solver
    best = max(sum(v for v, b in zip(VALUES, bits) if b)
               for bits in itertools.product([0, 1], repeat=6)
               if sum(w for w, b in zip(WEIGHTS, bits) if b) <= 13)
    assert res.objective == pytest.approx(best + 1)  # brute force, plus the objective's constant
    assert res.bound == pytest.approx(res.objective)
    chosen = [i for i, x in enumerate(xs) if x.value() > 0.5]
    assert sum([5, 6, 4, 4, 5, 2][i] for i in chosen) <= 13


@pytest.mark.parametrize("solver", SOLVERS)
def test_infeasible_and_unbounded(solver):
    prob = pulp.LpProblem("inf", pulp.LpMinimize)
    x = prob.add_variable("x", 0, 1, cat="Integer")
    prob += x
    prob += x >= 2
    assert solve(prob, solver=solver).status == "infeasible"
    assert solve(prob, solver=solver).objective is None


def test_both_solvers_are_here():
    assert SOLVERS == ("highs", "cbc")


def test_bad_parameters():
    prob, _ = knapsack()
    with pytest.raises(InvalidParameterError, match="'solver' parameter of solve must be a str among"):
        solve(prob, solver="gurobi")
    with pytest.raises(InvalidParameterError, match="'time_limit' parameter of solve"):
        solve(prob, time_limit=0)


@pytest.mark.parametrize("solver", SOLVERS)
def test_constant_objective(solver):
    prob = pulp.LpProblem("const", pulp.LpMinimize)
    x = prob.add_variable("x", 0, 3, cat="Integer")
    prob += 0 * x + 7
    prob += x >= 1
    res = solve(prob, solver=solver)
    assert res.status == "optimal" and res.objective == 7.0


def test_highs_presolve_failure_is_retried_without_presolve():
    """A start-time ILP on which HiGHS 1.16's presolve stops with "Solve error"; CBC and brute
    force give 12 (reported by the theory tests)."""
    from asrpt.instance import parse_instance
    from asrpt.offline import offline_opt

    inst = parse_instance({"cluster": {"servers": [{"gpus": 4}]}, "jobs": [
        {"id": "a", "arrival": 0, "gpus": 4, "processing_time": 1},
        {"id": "b", "arrival": 0, "gpus": 1, "processing_time": 3},
        {"id": "c", "arrival": 0, "gpus": 4, "processing_time": 1},
        {"id": "d", "arrival": 1, "gpus": 4, "processing_time": 1}]})
    res = offline_opt(inst, preemptive=False)
    assert res.ilp.status == "optimal" and res.upper_bound == 12 == res.lower_bound and res.closed


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_warm_start_keeps_the_optimum_and_ignores_an_infeasible_start(solver):
    """A feasible start and an infeasible one (x = 9 breaks x + y <= 7) both end at the same
    proven optimum as no start."""
    if solver not in available_solvers():
        pytest.skip(f"{solver} not available")
    values = []
    for start in (None, (3, 4), (9, 9)):
        prob = pulp.LpProblem("warm", pulp.LpMaximize)
        x = prob.add_variable("x", 0, 10, cat="Integer")
        y = prob.add_variable("y", 0, 10, cat="Integer")
        prob += 3 * x + 2 * y
        prob += x + y <= 7
        prob += 2 * x + y <= 10.5
        if start is not None:
            x.varValue, y.varValue = start
        res = solve(prob, solver=solver, warm_start=start is not None)
        assert res.status == "optimal"
        values.append((res.objective, x.value(), y.value()))
    assert values[0] == values[1] == values[2] == (17.0, 3.0, 4.0)
