"""Themis finish-time fairness, greedy form (Mahajan et al., NSDI'20): rho, rounds and leases, the
fairness knob."""

from fractions import Fraction

import pytest

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.policies import make_policy
from asrpt.policies.themis import finish_time_fairness
from asrpt.sim import simulate


def inst(cluster, *jobs):
    return Instance(cluster, tuple(Job(j[0], j[1], j[2], processing_time=j[3]) for j in jobs))


def segments(res):
    return {r.id: [(s.start, s.end) for s in r.segments] for r in res.records}


def test_rho_by_hand():
    # elapsed 2, ran 2 (share 1), 2 s left, isolated share 1/2: T_sh = 2 + 2 = 4,
    # T_iso = 2 + 2 / (1/2) = 6 -> rho = 2/3.
    assert finish_time_fairness(2, 2, 2, Fraction(1, 2)) == Fraction(2, 3)
    # elapsed 4, ran 3 (share 3/4), 1 s left, isolated share 1: (4 + 4/3) / (4 + 1) = 16/15.
    assert finish_time_fairness(4, 3, 1, 1) == Fraction(16, 15)
    assert finish_time_fairness(3, 0, 1, 1) == float("inf")   # never ran
    assert finish_time_fairness(0, 0, 1, 1) == float("inf")   # just arrived
    assert finish_time_fairness(5, 2, 0, 1) == 1              # nothing left (overdue prediction)


@pytest.mark.parametrize("args, name", [((-1, 0, 1, 1), "elapsed"), ((1, 0, 1, 0), "iso_share"),
                                        ((1, 0, 1, 1.5), "iso_share"), ((1, 0, -1, 1), "remaining")])
def test_rho_raise_paths(args, name):
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of finish_time_fairness"):
        finish_time_fairness(*args)


def test_two_gangs_take_turns_round_by_round():
    # One server, 2 GPUs, rounds of 2 s. A, B (0, 2 GPUs, P=3).
    # t=0: both never ran (rho inf): earlier id A runs; the GPUs are contended: wake at 2.
    # t=2: rho_A = (2 + 1/1) / (2 + 1/(1/2)) = 3/4, rho_B = inf: B is offered and preempts A.
    # t=4: rho_A = rho_B = (4 + 1/(1/2)) / (4 + 1/(1/2)) = 1: tie to A (id): A runs, done at 5.
    # t=5 (between rounds): A's GPUs go to B at once: B 5-6.
    res = simulate(inst(Cluster.homogeneous(1, 2), ("A", 0, 2, 3), ("B", 0, 2, 3)),
                   "themis:round_length=2", check_invariants=True)
    assert segments(res) == {"A": [(0, 2), (4, 5)], "B": [(2, 4), (5, 6)]}
    assert res.policy_data["rounds"] == 3


# One server, 2 GPUs, rounds of 2 s. A, B (0, 1 GPU, P=4); C, D (1, 1 GPU, P=1).
FOUR = inst(Cluster.homogeneous(1, 2), ("A", 0, 1, 4), ("B", 0, 1, 4), ("C", 1, 1, 1), ("D", 1, 1, 1))


def test_only_the_worst_jobs_are_offered_the_others_renew_their_leases():
    # f = 0.8. t=0: A and B run (no contention, no wake-up).
    # t=1 (between rounds): C and D arrive; leases hold, they wait; wake at the round end, 2.
    # t=2: J = 4, share_iso = min(1, 2 / 4) = 1/2: rho_A = rho_B = (2 + 2) / (2 + 4) = 2/3,
    #      rho_C = rho_D = inf. ceil(0.2 * 4) = 1 job is offered: C. The rest in rho order with
    #      running jobs renewing first: A, B, then D. C and A run, B is preempted, D waits.
    # t=3 (between rounds): C done; B comes before D in the round's order: B runs 3-5.
    # t=4: A done; round with B and D: D (inf) is offered, B keeps running: both end at 5.
    res = simulate(FOUR, "themis:round_length=2", check_invariants=True)
    assert res.completion_times == {"A": 4, "B": 5, "C": 3, "D": 5}
    assert segments(res)["B"] == [(0, 2), (3, 5)] and res.summary["preemptions"] == 1


def test_fairness_knob_zero_offers_everyone_plain_rho_order():
    # f = 0: at t=2 the order is C, D (inf) then A, B (2/3): C and D preempt A and B, end at 3;
    # A and B resume 3-5.
    res = simulate(FOUR, "themis:round_length=2:fairness_knob=0", check_invariants=True)
    assert res.completion_times == {"A": 5, "B": 5, "C": 3, "D": 3}
    assert res.summary["preemptions"] == 2


def test_arrival_between_rounds_uses_idle_gpus_at_once():
    # 4 GPUs, rounds of 100 s. A (0, 2 GPUs, P=10); B (1, 2 GPUs, P=1) starts at 1 on the idle
    # GPUs without waiting for the next round.
    res = simulate(inst(Cluster.homogeneous(1, 4), ("A", 0, 2, 10), ("B", 1, 2, 1)), "themis:round_length=100",
                   check_invariants=True)
    assert res.record("B").start == 1 and res.policy_data["rounds"] == 1


def test_parameters_and_clairvoyance():
    p = make_policy("themis")
    assert (p.round_length, p.fairness_knob, p.predictor) == (360.0, 0.8, "oracle")
    assert p.clairvoyant and not make_policy("themis:predictor=group_mean").clairvoyant
    for spec in ("themis:fairness_knob=1.5", "themis:round_length=0"):
        with pytest.raises(InvalidParameterError, match="parameter of Themis must be"):
            make_policy(spec)
