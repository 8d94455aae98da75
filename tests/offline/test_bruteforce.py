"""Brute-force oracles: the order-preserving greedy, the rigid non-preemptive optimum, 1||sum w C."""

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from asrpt.errors import Infeasible, InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.offline import (bruteforce_rigid_nonpreemptive, bruteforce_weighted_single_machine, greedy_rigid_starts,
                           schedule_problems)
from asrpt.offline.ilp import RigidPiece
from asrpt.single import fcfs_schedule
from asrpt.testing.strategies import clusters, instances, weighted_job_arrays


def _rigid(n_max=5):
    return instances(max_jobs=n_max, cluster=clusters(max_servers=1, max_gpus_per_server=4), max_processing_time=4,
                     max_gap=3, exact=True, weighted=True)


@given(_rigid(), st.data())
def test_greedy_is_feasible_and_order_preserving(inst, data):
    order = data.draw(st.permutations(range(inst.n_jobs)))
    r = [j.arrival for j in inst.jobs]
    p = [j.processing_time for j in inst.jobs]
    g = [j.gpus for j in inst.jobs]
    starts = greedy_rigid_starts(r, p, g, inst.cluster.total_gpus, order)
    assert [starts[j] for j in order] == sorted(starts[j] for j in order)
    schedule = {j.id: (RigidPiece(s, s + j.processing_time, j.gpus),) for j, s in zip(inst.jobs, starts)}
    assert schedule_problems(inst, schedule, preemptive=False) == []


@given(_rigid(), st.data())
def test_greedy_starts_each_job_as_early_as_it_can(inst, data):
    """Moving any job's start earlier (to any earlier candidate at or after its bound) is infeasible."""
    order = data.draw(st.permutations(range(inst.n_jobs)))
    r = [j.arrival for j in inst.jobs]
    p = [j.processing_time for j in inst.jobs]
    g = [j.gpus for j in inst.jobs]
    m = inst.cluster.total_gpus
    starts = greedy_rigid_starts(r, p, g, m, order)
    placed = []
    prev = None
    for j in order:
        bound = r[j] if prev is None else max(r[j], prev)
        candidates = {bound} | {e for _, e, _ in placed if e > bound}
        for t in sorted(c for c in candidates if c < starts[j]):
            points = [t] + [s for s, _, _ in placed if t < s < t + p[j]]
            assert any(sum(gk for s, e, gk in placed if s <= x < e) + g[j] > m for x in points)
        placed.append((starts[j], starts[j] + p[j], g[j]))
        prev = starts[j]


def test_greedy_on_one_machine_in_release_order_is_fcfs():
    r, p = [2, 0, 0], [1, 2, 1]
    starts = greedy_rigid_starts(r, p, [1, 1, 1], 1, [1, 2, 0])
    assert tuple(s + q for s, q in zip(starts, p)) == fcfs_schedule(r, p).completion_times


def test_rigid_bruteforce_pinned():
    # worked example without preemption: B [0,1], A [1,5] with C [1,3] beside it: 1 + 5 + 3 = 9
    inst = Instance(Cluster.homogeneous(1, 4), (
        Job("A", 0, 2, processing_time=4), Job("B", 0, 4, processing_time=1), Job("C", 1, 1, processing_time=2)))
    r = bruteforce_rigid_nonpreemptive(inst)
    assert r.objective == 9 and r.completion_times == {"A": 5, "B": 1, "C": 3}
    assert r.order[0] == "B" and r.starts == {"A": 1, "B": 0, "C": 1}
    empty = bruteforce_rigid_nonpreemptive(Instance(Cluster.homogeneous(1, 1), ()))
    assert empty.objective == 0 and empty.order == ()


@given(weighted_job_arrays(max_jobs=5, exact=True, same_release=True))
def test_weighted_single_machine_bruteforce_matches_explicit_enumeration(arrays):
    _, p, w = arrays
    best = min((sum(w[j] * sum(p[i] for i in order[:k + 1]) for k, j in enumerate(order)))
               for order in itertools.permutations(range(len(p)))) if p else 0
    r = bruteforce_weighted_single_machine(p, w, ids=[f"j{i}" for i in range(len(p))])
    assert r.objective == best
    assert set(r.completion_times) == {f"j{i}" for i in range(len(p))}


def test_weighted_single_machine_pinned_and_ties():
    r = bruteforce_weighted_single_machine([2, 1, 3], [1, 2, 6])
    assert (r.objective, r.order) == (32, (1, 2, 0))
    assert r.starts == {1: 0, 2: 1, 0: 4} and r.completion_times == {1: 1, 2: 4, 0: 6}
    assert bruteforce_weighted_single_machine([1, 1], [1, 1], ids=["b", "a"]).order == ("a", "b")
    assert bruteforce_weighted_single_machine([Fraction(1, 2)], [2]).objective == 1


@pytest.mark.parametrize("call, error, message", [
    (lambda: greedy_rigid_starts([0], [1], [3], 2, [0]), Infeasible, "job 0 needs 3 GPUs, more than the 2 available"),
    (lambda: greedy_rigid_starts([0, 0], [1, 1], [1, 1], 2, [0, 0]), InvalidParameterError,
     "'order' parameter of greedy_rigid_starts must be a permutation of 0..1"),
    (lambda: greedy_rigid_starts([0, 0], [1, 1], [1, 1], 2, [0.0, 1.0]), InvalidParameterError, "permutation"),
    (lambda: greedy_rigid_starts([0], [1, 1], [1, 1], 2, [0, 1]), InvalidParameterError,
     "'releases' parameter of greedy_rigid_starts must have the length"),
    (lambda: greedy_rigid_starts([0], [1], [1], 0, [0]), InvalidParameterError, "'machines' parameter"),
    (lambda: bruteforce_rigid_nonpreemptive(Instance(Cluster.homogeneous(1, 1), tuple(
        Job(f"j{i}", 0, 1, processing_time=1) for i in range(3))), max_jobs=2), InvalidParameterError,
     "3 jobs exceed max_jobs=2"),
    (lambda: bruteforce_weighted_single_machine([1, 1], [1, 1], max_jobs=1), InvalidParameterError,
     "2 jobs exceed max_jobs=1"),
    (lambda: bruteforce_weighted_single_machine([1], [1, 2]), InvalidParameterError,
     "'weights' parameter of bruteforce_weighted_single_machine must have the length"),
])
def test_raise_paths(call, error, message):
    with pytest.raises(error, match=message):
        call()
