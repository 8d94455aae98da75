"""The A-SRPT ablation presets, each pinned on a tiny instance where it decides differently from
plain ``a-srpt`` (predictor "instance", envelope virtual machine, guarded order, backfill, preemption,
doubling, the simulator's default placement), and the reference model's order (``a-srpt-fluid``,
``a-srpt-virtual``)."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt.instance import Cluster, Instance, Job
from asrpt.policies import POLICIES, make_policy
from asrpt.sim import simulate
from asrpt.testing.strategies import instances


def segments(res):
    return {r.id: [(s.start, s.end) for s in r.segments] for r in res.records}


def test_presets_set_one_option_each():
    plain = make_policy("a-srpt").get_params()
    changed = {"a-srpt-oracle": {"predictor": "oracle"}, "a-srpt-mean": {"predictor": "group_mean"},
               "a-srpt-static": {"adaptive": "off"}, "a-srpt-no-preemption": {"preemption": False},
               "a-srpt-srsf-order": {"order": "actual"}, "a-srpt-strict": {"backfill": False},
               "a-srpt-consolidate": {"placement": "best_fit"},
               "a-srpt-virtual": {"order": "virtual", "virtual": "gang"}, "a-srpt-gang": {"virtual": "gang"},
               "a-srpt-fluid": {"virtual": "fluid", "order": "virtual"}}
    for name, diff in changed.items():
        assert POLICIES[name][1] == diff
        assert make_policy(name).get_params() == {**plain, **diff}


# One GPU (M = 1, so virtual sizes equal predicted sizes). A (0, P=4, predicted 1),
# B (0, P=2, predicted 3/2).
UNDER = Instance(Cluster.homogeneous(1, 1), (
    Job("A", 0, 1, processing_time=4, predicted_processing_time=1),
    Job("B", 0, 1, processing_time=2, predicted_processing_time=Fraction(3, 2))))


def test_plain_a_srpt_doubles_predictions_on_time():
    # Virtual sizes A 1, B 3/2: A runs. t=1: A reaches 1 -> 2 (virtual remaining 1 < 3/2), keeps
    # running. t=2: A reaches 2 -> 4 (virtual remaining 2 > 3/2): B preempts A and runs 2-4 (at
    # t=3.5 B reaches 3/2 -> 3; its virtual remaining 3/2 < 2, it keeps running). A ends 4-6.
    # Virtual machine: A 0-2, B 2-5 (resized), A 5-7.
    # (Without hysteresis: epsilon=0.)
    res = simulate(UNDER, "a-srpt:epsilon=0", check_invariants=True)
    assert segments(res) == {"A": [(0, 2), (4, 6)], "B": [(2, 4)]}
    assert res.policy_data["adaptive_updates"] == 3
    assert res.policy_data["virtual_completion_times"] == {"A": 7, "B": 5}


def test_hysteresis_keeps_an_overrun_job_that_still_ranks_within_its_factor():
    # The default epsilon = 1/2: at t=2 A's new remaining 2 counts as 2 x (1 - 1/2) = 1 < B's 3/2,
    # so A keeps running to its end at 4; B runs 4-6 (at 5.5 it reaches 3/2 -> 3).
    res = simulate(UNDER, "a-srpt", check_invariants=True)
    assert res.options["policy_params"]["epsilon"] == 0.5
    assert segments(res) == {"A": [(0, 4)], "B": [(4, 6)]}
    assert res.policy_data["adaptive_updates"] == 3


def test_oracle_ablation_uses_the_true_sizes():
    # Virtual sizes 4 and 2: B 0-2, A 2-6.
    res = simulate(UNDER, "a-srpt-oracle", check_invariants=True)
    assert segments(res) == {"A": [(2, 6)], "B": [(0, 2)]}
    assert res.policy_data["adaptive_updates"] == 0


def test_static_ablation_never_revises_a_prediction():
    # A is virtually done at 1 and stays first: A 0-4, B 4-6.
    res = simulate(UNDER, "a-srpt-static", check_invariants=True)
    assert segments(res) == {"A": [(0, 4)], "B": [(4, 6)]}
    assert res.policy_data["virtual_completion_times"] == {"A": 1, "B": Fraction(5, 2)}


# One GPU, no predictions in the instance. X (0, P=4), Y (0, P=2).
NO_PRED = Instance(Cluster.homogeneous(1, 1), (Job("X", 0, 1, processing_time=4), Job("Y", 0, 1, processing_time=2)))


def test_mean_ablation_starts_from_the_prior():
    # Plain a-srpt falls back to the truth (Y, P=2, first: Y 0-2, X 2-6). The group-mean
    # predictor has seen nothing yet: both get the 3600 s prior, the tie goes to the id: X 0-4,
    # Y 4-6.
    assert simulate(NO_PRED, "a-srpt").completion_times == {"X": 6, "Y": 2}
    res = simulate(NO_PRED, "a-srpt-mean", check_invariants=True)
    assert res.completion_times == {"X": 4, "Y": 6}
    assert res.policy_data["initial_predictions"] == {"X": 3600.0, "Y": 3600.0}


# One GPU, truth as predictions. A (0, P=4), B (1, P=1).
LATE = Instance(Cluster.homogeneous(1, 1), (Job("A", 0, 1, processing_time=4), Job("B", 1, 1, processing_time=1)))


def test_no_preemption_ablation():
    # a-srpt preempts A at 1 for B (virtual remaining 3 > 1); without preemption B waits until 4.
    assert segments(simulate(LATE, "a-srpt")) == {"A": [(0, 1), (2, 5)], "B": [(1, 2)]}
    res = simulate(LATE, "a-srpt-no-preemption", check_invariants=True)
    assert segments(res) == {"A": [(0, 4)], "B": [(4, 5)]} and res.summary["preemptions"] == 0


# One server, 2 GPUs (M = 2), truth as predictions. A (0, 2 GPUs, P=3): virtual size 3;
# B (0, 1 GPU, P=4): 2; D (0, 1 GPU, P=6): 3. The virtual machine runs B 0-2, A 2-5, D 5-8.
GANGS = Instance(Cluster.homogeneous(1, 2), (
    Job("A", 0, 2, processing_time=3), Job("B", 0, 1, processing_time=4), Job("D", 0, 1, processing_time=6)))


def test_virtual_order_on_the_gang_instance():
    # The fluid machine of the reference model. t=0: B (2), A (3), D (3, after A by id): B runs, A
    # does not fit beside it and is skipped, D fills the other GPU. t=4: B done; the virtual
    # machine has served A for 2 of its 3: A (1) before D (3): A takes both GPUs and D is
    # preempted. A 4-7, D resumes 7-9.
    res = simulate(GANGS, "a-srpt-fluid", check_invariants=True)
    assert segments(res) == {"A": [(4, 7)], "B": [(0, 4)], "D": [(0, 4), (7, 9)]}
    assert res.policy_data["virtual_completion_times"] == {"A": 5, "B": 2, "D": 8}


def test_gang_machine_respects_gangs_on_the_gang_instance():
    # Gang machine (2 GPUs, A at most 2, B and D at most 1), by remaining time at full rate:
    # A (3) before B (4) before D (6). A takes both GPUs 0-3; then B 3-7 and D 3-9 side by side.
    # Every C~_j >= a_j + P_j. The default (guarded) order ranks by predicted remaining GPU-time:
    # B 4, A 6, D 6 (D after A by id): B and D run, A waits; no job is overdue (A's deadline is
    # 2 * 3 = 6, and A starts at 4 when B ends), so the run equals SRSF-PRED: A 6-9 behind D.
    res = simulate(GANGS, "a-srpt-gang:kappa=2", check_invariants=True)
    assert res.policy_data["virtual_completion_times"] == {"A": 3, "B": 7, "D": 9}
    assert segments(res) == {"A": [(6, 9)], "B": [(0, 4)], "D": [(0, 6)]}
    assert res.policy_data["overdue_at"] == {"A": 6}
    virtual = simulate(GANGS, "a-srpt-virtual", check_invariants=True)    # the virtual order, gang machine
    assert segments(virtual) == {"A": [(0, 3)], "B": [(3, 7)], "D": [(3, 9)]}


# One 2-GPU server, truth as predictions. W (2 GPUs, P=2) and S1, S2 (1 GPU, P=3) at 0; S3, S4
# (1 GPU, P=3) at 3. The gang machine finishes W at 2 (2 < 3), so with kappa = 2 W's deadline is
# 2 * 2 = 4.
GUARD = Instance(Cluster.homogeneous(1, 2), (
    Job("W", 0, 2, processing_time=2), Job("S1", 0, 1, processing_time=3), Job("S2", 0, 1, processing_time=3),
    Job("S3", 3, 1, processing_time=3), Job("S4", 3, 1, processing_time=3)))


def test_guard_runs_an_overdue_job_first():
    # By GPU-time the 1-GPU jobs (3) beat W (4): S1, S2 0-3, then S3, S4 from 3. At W's deadline 4
    # it is overdue and first: it preempts S3 and S4 and runs 4-6; they resume 6-8. Without the
    # guard (SRSF order) W waits until 6.
    res = simulate(GUARD, "a-srpt-gang:kappa=2", check_invariants=True)
    assert res.completion_times == {"W": 6, "S1": 3, "S2": 3, "S3": 8, "S4": 8}
    assert res.policy_data["overdue_at"] == {"W": 4}
    srsf = simulate(GUARD, "a-srpt-srsf-order", check_invariants=True)
    assert srsf.completion_times == {"W": 8, "S1": 3, "S2": 3, "S3": 6, "S4": 6}
    assert srsf.completion_times == simulate(GUARD, "srsf").completion_times


def test_srsf_order_ablation_ranks_by_predicted_remaining_gpu_time():
    # order="actual": t=0 as above (R: B 4, A 6, D 6). t=4: R_D = 1 * 2 = 2 < R_A = 2 * 3 = 6: D
    # keeps running, A (2 GPUs) waits until 6: D 0-6, A 6-9. The same as SRSF-PRED.
    res = simulate(GANGS, "a-srpt-srsf-order", check_invariants=True)
    assert segments(res) == {"A": [(6, 9)], "B": [(0, 4)], "D": [(0, 6)]}
    assert simulate(GANGS, "srsf-pred").completion_times == res.completion_times


def test_strict_ablation_does_not_backfill():
    # backfill=False: at t=0 A does not fit beside B and the scan stops: D waits. t=4: A 4-7;
    # D 7-13.
    res = simulate(GANGS, "a-srpt-strict", check_invariants=True)
    assert segments(res) == {"A": [(4, 7)], "B": [(0, 4)], "D": [(7, 13)]}


def test_consolidate_ablation_pins_the_best_fit_placer():
    # Two servers of 2 GPUs. A (1 GPU) then B (2 GPUs), both at 0. Best fit puts B whole on the
    # empty server; spreading would split it. "best_fit" is also the simulator's default, so the
    # preset equals plain a-srpt unless a run picks another placement.
    inst = Instance(Cluster.homogeneous(2, 2), (Job("A", 0, 1, processing_time=1), Job("B", 0, 2, processing_time=1)))
    res = simulate(inst, "a-srpt-consolidate", check_invariants=True)
    assert res.record("B").segments[0].servers == ((1, 2),)
    assert res.records == simulate(inst, "a-srpt").records
    spread = simulate(inst, 'a-srpt:placement="spread"', check_invariants=True)
    assert spread.record("B").segments[0].servers == ((0, 1), (1, 1))


# With the default kappa = 16: W (2 GPUs, P = 1) at 0 on a 2-GPU server, and pairs of 1-GPU jobs
# with P = 3/2 (GPU-time 3/2 < 2) arriving every 3/2 s until 21. W finishes virtually at 1, so
# its deadline is 16: there the guard runs it; by GPU-time alone it waits for the stream to end.
STREAM = Instance(Cluster.homogeneous(1, 2), (Job("W", 0, 2, processing_time=1),) + tuple(
    Job(f"s{k}{x}", Fraction(3 * k, 2), 1, processing_time=Fraction(3, 2)) for k in range(15) for x in "ab"))


def test_gang_guard_fires_at_sixteen_times_the_virtual_flow_time():
    res = simulate(STREAM, "a-srpt-gang", check_invariants=True)
    assert res.policy_data["overdue_at"] == {"W": 16}
    assert res.record("W").completion == 17
    assert simulate(STREAM, "a-srpt-srsf-order").record("W").completion == Fraction(47, 2)


def test_the_envelope_does_not_protect_a_wide_job_against_a_narrow_stream():
    """The mirror image of the gang machine's Counterexample 3 (proofs/theorem2.md): the envelope
    ranks by GPU-time (W's 2 against the pairs' 3/2 each), so in its fluid machine the stream keeps
    W waiting as it does in the cluster; C~_W comes after the stream and the default guard never
    fires. W waits for the whole stream, as under SRSF (the gang machine's guard runs it at 16)."""
    res = simulate(STREAM, "a-srpt", check_invariants=True)
    assert res.policy_data["overdue_at"] == {}
    assert res.policy_data["virtual_completion_times"]["W"] > 16
    assert res.completion_times == simulate(STREAM, "a-srpt-srsf-order").completion_times


# Nine jobs on 4 GPUs (found by a random search: 1 of 466 instances where the default envelope guard
# changes a decision under the doubling step): j7 (4 GPUs, P = 35, predicted 2) becomes overdue at 45.
FIRES = Instance(Cluster.homogeneous(1, 4), tuple(
    Job(n, a, g, processing_time=p, predicted_processing_time=q) for n, a, g, p, q in [
        ("j0", 8, 1, 30, 14), ("j1", 0, 1, 35, 27), ("j2", 3, 1, 29, 7), ("j3", 0, 1, 32, 22), ("j4", 10, 1, 32, 1),
        ("j5", 0, 1, 12, 1), ("j6", 9, 2, 2, 1), ("j7", 1, 4, 35, 2), ("j8", 5, 1, 30, 2)]))


def test_default_envelope_guard_fires():
    res = simulate(FIRES, "a-srpt", check_invariants=True)
    assert res.policy_data["overdue_at"] == {"j7": 45}
    assert res.records != simulate(FIRES, "a-srpt-srsf-order").records


@pytest.mark.parametrize("name", ["a-srpt-oracle", "a-srpt-static", "a-srpt-mean", "a-srpt-no-preemption",
                                  "a-srpt-srsf-order", "a-srpt-strict"])
def test_each_ablation_differs_from_plain_a_srpt_on_one_of_the_instances(name):
    differs = [simulate(inst, name).records != simulate(inst, "a-srpt").records
               for inst in (UNDER, NO_PRED, LATE, GANGS, GUARD, STREAM, FIRES)]
    assert any(differs)


@settings(max_examples=25, deadline=None)
@given(instances(min_jobs=2, max_jobs=9), st.sampled_from(["doubling", "repredict", "conditional"]))
def test_srsf_order_ablation_is_srsf_decision_for_decision(instance, adaptive):
    """A-SRPT's ``order="actual"`` and SRSF share one adaptive rule (the tracker's ``overrun`` and
    ``next_crossing``) and one hysteresis (A-SRPT's default epsilon, given to SRSF), so on noisy
    predictions they complete every job at the same time."""
    predictor = '"noisy:sigma=1.0"'
    a = simulate(instance, f"a-srpt-srsf-order:predictor={predictor}:adaptive={adaptive}")
    b = simulate(instance, f"srsf:predictor={predictor}:adaptive={adaptive}:epsilon=0.5")
    assert a.completion_times == b.completion_times


def test_srsf_order_ablation_is_srsf_on_a_learned_predictor():
    """The same on a recurring workload with the default learned predictor, which re-predicts
    waiting siblings (a stale key in SRSF before the shared rule)."""
    from asrpt.workloads import recurring_workload

    inst = recurring_workload(300, load=0.9, cluster="4x8", seed=1)
    a = simulate(inst, 'a-srpt-srsf-order:predictor="hierarchy"')
    b = simulate(inst, 'srsf:predictor="hierarchy":epsilon=0.5')
    assert a.completion_times == b.completion_times
