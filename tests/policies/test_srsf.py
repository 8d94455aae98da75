"""SRSF / SRTF (preemptive shortest remaining size): decisions pinned on hand-worked instances."""

import pytest

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.policies import make_policy
from asrpt.sim import simulate


def inst(cluster, *jobs):
    return Instance(cluster, tuple(Job(j[0], j[1], j[2], processing_time=j[3], **(j[4] if len(j) > 4 else {}))
                                   for j in jobs))


def segments(res):
    return {r.id: [(s.start, s.end) for s in r.segments] for r in res.records}


# One server, 4 GPUs. A (arrives 0, 2 GPUs, P=6), B (1, 4 GPUs, P=2), C (2, 1 GPU, P=3).
THREE = inst(Cluster.homogeneous(1, 4), ("A", 0, 2, 6), ("B", 1, 4, 2), ("C", 2, 1, 3))


def test_srsf_ranks_by_remaining_gpu_time_and_skips_what_does_not_fit():
    # t=0: A alone runs (R_A = 2*6 = 12).
    # t=1: R_A = 2*5 = 10, R_B = 4*2 = 8: B first and takes all 4 GPUs, A is preempted.
    # t=2: R_C = 3, R_B = 4*1 = 4, R_A = 10: C (1 GPU) is selected, B (4) no longer fits and is
    #      skipped, A (2) fits: B is preempted with 1 s left, C and A run.
    # t=5: C done. R_A = 2*2 = 4 = R_B = 4*1: tie to the earlier arrival, A keeps running, B (4)
    #      does not fit beside it. t=7: A done, B runs 7-8.
    res = simulate(THREE, "srsf", check_invariants=True)
    assert res.completion_times == {"A": 7, "B": 8, "C": 5}
    assert segments(res) == {"A": [(0, 1), (2, 7)], "B": [(1, 2), (7, 8)], "C": [(2, 5)]}
    assert res.summary["preemptions"] == 2


def test_srtf_ranks_by_remaining_time():
    # t=1: r_B = 2 < r_A = 5: B preempts A. t=2: r_B = 1 < r_C = 3 < r_A = 5: B keeps all 4 GPUs.
    # t=3: B done; C (3) then A (5) both fit: C 3-6, A 3-8.
    res = simulate(THREE, "srtf", check_invariants=True)
    assert res.completion_times == {"A": 8, "B": 3, "C": 6}
    assert segments(res) == {"A": [(0, 1), (3, 8)], "B": [(1, 3)], "C": [(3, 6)]}


def test_hysteresis_keeps_running_jobs_unless_the_challenger_is_much_smaller():
    # epsilon = 0.5: a running job ranks with half its R.
    # t=1: A running, 10 * 0.5 = 5 < R_B = 8: A stays, B (4 GPUs) does not fit beside it.
    # t=2: C (3) then A (8 * 0.5 = 4) then B (8): C and A run. t=5: C done; A (1) then B: B waits.
    # t=6: A done, B runs 6-8. No preemption at all.
    res = simulate(THREE, "srsf:epsilon=0.5", check_invariants=True)
    assert res.completion_times == {"A": 6, "B": 8, "C": 5}
    assert res.summary["preemptions"] == 0


# One GPU. A (0, P=5, predicted 1), B (0, P=2, predicted 3).
MISPREDICTED = inst(Cluster.homogeneous(1, 1), ("A", 0, 1, 5, {"predicted_processing_time": 1}),
                    ("B", 0, 1, 2, {"predicted_processing_time": 3}))


def test_oracle_srsf_uses_the_true_sizes():
    res = simulate(MISPREDICTED, "srsf")
    assert res.completion_times == {"A": 7, "B": 2}


def test_srsf_pred_doubles_an_outlived_prediction_exactly_when_it_is_reached():
    # Predicted: A 1 < B 3, A runs. The policy wakes at t=1 (A reaches 1): N^_A 1 -> 2, remaining
    # 1 < 3; at t=2: 2 -> 4, remaining 2 < 3; at t=4: 4 -> 8, remaining 4 > 3: B preempts A at
    # exactly t=4 and runs 4-6; A finishes 6-7. Three doublings.
    res = simulate(MISPREDICTED, "srsf-pred", check_invariants=True)
    assert segments(res) == {"A": [(0, 4), (6, 7)], "B": [(4, 6)]}
    assert res.policy_data["adaptive_updates"] == 3
    assert res.policy_data["initial_predictions"] == {"A": 1, "B": 3}
    assert res.policy_data["predictions"] == {"A": 8, "B": 3}


def test_srsf_pred_without_adaptation_floors_the_remaining_size_at_zero():
    # adaptive="off": from t=1 A's predicted remaining is 0, so it is never preempted: A 0-5, B 5-7.
    res = simulate(MISPREDICTED, 'srsf-pred:adaptive="off"', check_invariants=True)
    assert segments(res) == {"A": [(0, 5)], "B": [(5, 7)]}
    assert res.policy_data["adaptive_updates"] == 0 and res.policy_data["predictions"] == {"A": 1, "B": 3}


def test_presets_and_clairvoyance():
    assert make_policy("srtf").key == "time" and make_policy("srsf").key == "gpu_time"
    assert make_policy("srsf-pred").predictor == "instance"
    assert make_policy("srsf").clairvoyant and make_policy("srsf-pred").clairvoyant
    assert not make_policy("srsf-mean").clairvoyant
    assert simulate(THREE, "srsf-mean", check_invariants=True).summary["finished"] == 3


@pytest.mark.parametrize("spec", ["srsf:epsilon=1", 'srsf:key="size"', 'srsf:adaptive="never"'])
def test_bad_parameters_are_rejected(spec):
    with pytest.raises(InvalidParameterError, match="parameter of SRSF must be"):
        make_policy(spec)
