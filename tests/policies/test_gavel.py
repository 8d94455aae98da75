"""Gavel max-min fairness on one GPU type (Narayanan et al., OSDI'20): water-filling, priorities,
the round robin, ties and lease extension."""

import math
from fractions import Fraction

import pytest

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.policies import make_policy
from asrpt.policies.gavel import water_fill
from asrpt.sim import simulate


def inst(cluster, *jobs):
    return Instance(cluster, tuple(Job(j[0], j[1], j[2], processing_time=j[3]) for j in jobs))


def segments(res):
    return {r.id: [(s.start, s.end) for s in r.segments] for r in res.records}


@pytest.mark.parametrize("demands, capacity, weights, level, shares", [
    # min(1, L) + 2 min(2, L) ... : 1 + 2L = 4 with L = 3/2 (the 1-GPU job is capped by its demand).
    ([1, 2, 4], 4, None, Fraction(3, 2), [1, Fraction(3, 2), Fraction(3, 2)]),
    ([4, 4, 4], 4, None, Fraction(4, 3), [Fraction(4, 3)] * 3),
    ([1, 1], 4, None, math.inf, [1, 1]),                       # no contention: full demands
    ([4, 4], 4, [1, 3], 1, [1, 3]),                            # L + 3L = 4
    ([2, 8, 8], 8, [1, 1, 2], 2, [2, 2, 4]),                   # 2 + L + 2L = 8 -> L = 2
])
def test_water_filling_by_hand(demands, capacity, weights, level, shares):
    got_level, got_shares = water_fill(demands, capacity, weights)
    assert got_level == level and got_shares == shares
    assert sum(got_shares) == min(capacity, sum(demands))


def test_water_filling_raise_paths():
    with pytest.raises(InvalidParameterError, match="positive demands"):
        water_fill([1, 0], 4)
    with pytest.raises(InvalidParameterError, match="same length"):
        water_fill([1, 2], 4, [1])
    with pytest.raises(InvalidParameterError, match="'capacity' parameter of water_fill"):
        water_fill([1], -1)


def test_round_robin_of_three_full_cluster_gangs():
    # One server, 4 GPUs, rounds of 2 s; A, B, C (0, 4 GPUs, P=4). Water level 4/3: X = 1/3 each.
    # t=0: all new (+inf): A (id). t=2: A received 2/2 -> p_A = 1/3, B and C +inf: B.
    # t=4: p_A = (1/3)/(2/4) = 2/3, p_B = 1/3, C +inf: C.
    # t=6: p_A = (1/3)/(2/6) = 1, p_B = 2/3, p_C = 1/3: A, which completes at 8.
    # t=8: level 2, X = 1/2: p_B = (1/2)/(2/8) = 2 > p_C = (1/2)/(2/4) = 1: B ends at 10; C at 12.
    res = simulate(inst(Cluster.homogeneous(1, 4), ("A", 0, 4, 4), ("B", 0, 4, 4), ("C", 0, 4, 4)),
                   "gavel:round_length=2", check_invariants=True)
    assert segments(res) == {"A": [(0, 2), (6, 8)], "B": [(2, 4), (8, 10)], "C": [(4, 6), (10, 12)]}
    assert res.policy_data == {"rounds": 6}


def test_larger_gangs_first_among_ties_and_lease_extension():
    # One server, 4 GPUs, rounds of 2 s, restart cost 1 s. A (0, 4 GPUs, P=4), B and C (0, 2 GPUs,
    # P=4). Level 4/3: X_A = 1/3, X_B = X_C = 2/3.
    # t=0: all +inf; the larger gang A goes first and takes the 4 GPUs.
    # t=2: p_A = 1/3, B and C +inf: B and C run, A is preempted.
    # t=4: p_B = p_C = (2/3)/(2/4) = 4/3 > p_A = (1/3)/(2/4) = 2/3: B and C stay on their GPUs
    #      (lease extension: no restart, one segment each) and end at 6.
    # t=6: A restarts (1 s) and ends at 6 + 1 + 2 = 9.
    res = simulate(inst(Cluster.homogeneous(1, 4), ("A", 0, 4, 4), ("B", 0, 2, 4), ("C", 0, 2, 4)),
                   "gavel:round_length=2", preemption_cost=1, check_invariants=True)
    assert segments(res) == {"A": [(0, 2), (6, 9)], "B": [(2, 6)], "C": [(2, 6)]}
    assert res.record("A").preemptions == 1


def test_parameters():
    p = make_policy("gavel")
    assert (p.round_length, p.weighted) == (360.0, False) and not p.clairvoyant
    with pytest.raises(InvalidParameterError, match="'round_length' parameter of Gavel"):
        make_policy("gavel:round_length=-1")


from hypothesis import given, strategies as st  # noqa: E402


@given(st.lists(st.integers(1, 16), min_size=1, max_size=40), st.integers(0, 128))
def test_the_rounds_water_level_gives_water_fills_shares(demands, capacity):
    """The rounds' unweighted water-filling (``_water_level``: a share is the demand up to a
    demand value, else the level) gives ``water_fill``'s level and shares, object for object."""
    from asrpt.policies.gavel import _water_level

    level, shares = water_fill(demands, capacity)
    got_level, full = _water_level(demands, capacity)
    assert got_level == level and type(got_level) is type(level)
    assert shares == [d if full is not None and d <= full else got_level for d in demands]
    assert all(s is level for s, d in zip(shares, demands) if not (full is not None and d <= full))
