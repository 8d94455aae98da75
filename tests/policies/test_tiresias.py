"""Tiresias 2D-LAS (Gu et al., NSDI'19): queues, exact demotions, running-first order,
PROMOTEKNOB."""

from fractions import Fraction

import pytest

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.policies import make_policy
from asrpt.policies.tiresias import Tiresias
from asrpt.sim import simulate


def inst(cluster, *jobs):
    return Instance(cluster, tuple(Job(j[0], j[1], j[2], processing_time=j[3]) for j in jobs))


def segments(res, job_id):
    return [(s.start, s.end) for s in res.record(job_id).segments]


def test_default_thresholds_are_the_original_simulators():
    assert Tiresias().thresholds == (3250.0, 7200.0) and Tiresias().promote_knob == 0
    assert not make_policy("tiresias").clairvoyant


def test_demotion_happens_exactly_when_the_threshold_is_crossed():
    # One server, 4 GPUs, T_1 = 8 GPU-s. A (0, 4 GPUs, P=5), B (1, 4 GPUs, P=1).
    # t=0: A runs; the policy asks to be woken when S_A = 4 t reaches 8, at t=2.
    # t=1: B arrives in Q0; A is in Q0 and running (running first): B waits.
    # t=2: S_A = 8 -> A drops to Q1; B (Q0) preempts it and runs 2-3; A resumes 3-6.
    res = simulate(inst(Cluster.homogeneous(1, 4), ("A", 0, 4, 5), ("B", 1, 4, 1)),
                   "tiresias:thresholds=[8]", check_invariants=True)
    assert res.completion_times == {"A": 6, "B": 3}
    assert res.record("B").start == 2 and segments(res, "A") == [(0, 2), (3, 6)]


def test_default_thresholds_on_an_exact_instance_stay_exact():
    # 8 GPUs: A (8 GPUs, P=1000) crosses 3250 GPU-s at t = 3250/8 = 406.25, exactly when B (8 GPUs,
    # arrived at 100 and waiting in Q0) starts; B runs 406.25-416.25 and A ends at 1010.
    res = simulate(inst(Cluster.homogeneous(1, 8), ("A", 0, 8, 1000), ("B", 100, 8, 10)), "tiresias",
                   check_invariants=True)
    assert res.record("B").start == Fraction(1625, 4)
    assert res.completion_times == {"A": 1010, "B": Fraction(1665, 4)}


def test_queues_running_first_within_a_queue_and_greedy_skip():
    # One server, 4 GPUs, thresholds (4, 12). A (0, 4 GPUs, P=5), B (2, 2 GPUs, P=4), C (3, 2, P=2).
    # t=0: A runs. t=1: S_A = 4: A demoted to Q1 (alone, keeps running).
    # t=2: B arrives in Q0: B (2 GPUs) first, A (4) no longer fits: A is preempted (S_A = 8).
    # t=3: C arrives in Q0: B (running) then C: both fit; A (Q1) skipped.
    # t=4: S_B = 2*2 = 4: B demoted to Q1, where it is running and goes before A although A
    #      arrived earlier; B and C keep the 4 GPUs.
    # t=5: C done (A does not fit beside B). t=6: B done; A runs 6-9.
    res = simulate(inst(Cluster.homogeneous(1, 4), ("A", 0, 4, 5), ("B", 2, 2, 4), ("C", 3, 2, 2)),
                   "tiresias:thresholds=[4,12]", check_invariants=True)
    assert res.completion_times == {"A": 9, "B": 6, "C": 5}
    assert segments(res, "A") == [(0, 2), (6, 9)]
    assert segments(res, "B") == [(2, 6)] and segments(res, "C") == [(3, 5)]


# One server, 4 GPUs, T_1 = 4 GPU-s (1 s for a 4-GPU job). A (0, 4 GPUs, P=4), B (1, 4, P=10).
STARVING = inst(Cluster.homogeneous(1, 4), ("A", 0, 4, 4), ("B", 1, 4, 10))


def test_without_promotion_the_demoted_job_waits_for_the_other():
    # t=1: S_A = 4: A in Q1; B (Q0) preempts it. t=2: B in Q1, running first: it keeps the GPUs
    # until it ends at 11; A runs 11-14.
    res = simulate(STARVING, "tiresias:thresholds=[4]", check_invariants=True)
    assert res.completion_times == {"A": 14, "B": 11}
    assert res.policy_data == {"promotions": 0}


def test_promote_knob_returns_a_starving_job_to_q0_on_time():
    # PROMOTEKNOB 1: a Q1 job waiting as long as it has executed since its last reset returns to
    # Q0 with its counters reset.
    # t=1: A (executed 1) demoted and preempted by B; it waited 0 so far: promotion due at t=2.
    # t=2: B demoted (S_B = 4) and A, having waited 1 >= 1 * 1, promoted: A preempts B.
    # t=3: A demoted again, B (waited 1, executed 1 since its reset) promoted: B preempts A.
    # The two alternate every second: A 0-1, 2-3, 4-5, 6-7 (done at 7); B 1-2, 3-4, 5-6, 7-14
    # (B is promoted once more at t=7, alone). Promotions at t = 2, 3, 4, 5, 6, 7.
    res = simulate(STARVING, "tiresias:thresholds=[4]:promote_knob=1", check_invariants=True)
    assert res.completion_times == {"A": 7, "B": 14}
    assert segments(res, "A") == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert segments(res, "B") == [(1, 2), (3, 4), (5, 6), (7, 14)]
    assert res.policy_data == {"promotions": 6}


@pytest.mark.parametrize("thresholds", ["[]", "[5,3]", "[0]", '["x"]', "[1,1]"])
def test_bad_thresholds_are_rejected(thresholds):
    with pytest.raises(InvalidParameterError, match="'thresholds' parameter of Tiresias must be"):
        make_policy(f"tiresias:thresholds={thresholds}")


def test_negative_promote_knob_is_rejected():
    with pytest.raises(InvalidParameterError, match="'promote_knob' parameter of Tiresias"):
        make_policy("tiresias:promote_knob=-1")
