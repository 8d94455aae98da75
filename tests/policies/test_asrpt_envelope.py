"""A-SRPT guided by the envelope virtual machine (``virtual="envelope"``, ``a-srpt``, the default):
``C~_j = max(C^f_j, a_j + P^_j)`` with ``C^f`` the fluid machine's completion
(:func:`asrpt.single.envelope.envelope_schedule`, the batch version)."""

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job, Server
from asrpt.policies import POLICIES, make_policy
from asrpt.policies.asrpt import ASRPT
from asrpt.sim import simulate
from asrpt.single.envelope import envelope_schedule
from asrpt.sizes import predicted_processing_times
from asrpt.state import Predictor
from asrpt.testing.strategies import gang_instances, instances

from .test_asrpt import _Checked


def _expected(instance):
    times = predicted_processing_times(instance)
    c = envelope_schedule([j.arrival for j in instance.jobs], times, [j.gpus for j in instance.jobs],
                          instance.cluster.total_gpus, ids=[j.id for j in instance.jobs])
    return {j.id: x for j, x in zip(instance.jobs, c)}, {j.id: p for j, p in zip(instance.jobs, times)}


def test_preset_and_validation():
    assert make_policy("a-srpt").get_params()["virtual"] == "envelope"      # the default since issue 43
    assert POLICIES["a-srpt-gang"][1] == {"virtual": "gang"}
    assert POLICIES["a-srpt-virtual"][1] == {"order": "virtual", "virtual": "gang"}
    inst = Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=1),))
    with pytest.raises(InvalidParameterError, match="virtual='envelope' needs order 'guarded' or 'actual'"):
        simulate(inst, "a-srpt:order=virtual")
    with pytest.raises(InvalidParameterError, match="virtual='envelope' needs order"):
        ASRPT(virtual="envelope", order="virtual").reset(inst.cluster)
    with pytest.raises(Exception, match="The 'virtual' parameter of ASRPT must be a str among"):
        simulate(inst, "a-srpt:virtual=envelop")


@settings(max_examples=40, deadline=None)
@given(instances(max_jobs=8, exact=True, predictions=True), st.sampled_from(["guarded", "actual"]),
       st.sampled_from([1, 2, 16]))
def test_static_envelope_is_the_batch_envelope_on_the_predicted_times(instance, order, kappa):
    """With static predictions, the recorded C~ equals envelope_schedule on P^ exactly, whatever
    the real schedule (order, kappa), and the recorded sizes are P^."""
    res = simulate(instance, ASRPT(virtual="envelope", order=order, kappa=kappa, adaptive="off"),
                   check_invariants=True)
    expected, times = _expected(instance)
    data = res.policy_data
    assert data["virtual"] == "envelope"
    assert data["virtual_completion_times"] == expected
    assert data["virtual_sizes"] == times
    assert all(data["virtual_completion_times"][j.id] >= j.arrival + times[j.id] for j in instance.jobs)
    assert ("overdue_at" in data) == (order == "guarded")


@settings(max_examples=60, deadline=None)
@given(gang_instances(max_jobs=9, max_mu=4, arrivals="bunched") | gang_instances(max_jobs=9, max_mu=4),
       st.sampled_from([1, 2, 16]), st.sampled_from([0.25, 1]))
def test_static_guard_wakes_at_each_deadline_exactly(inst, kappa, share):
    """Every job still running or waiting at its deadline ``a + kappa (C~ - a)`` becomes overdue
    at that instant exactly (the policy is woken there), and none before it."""
    res = simulate(inst, ASRPT(virtual="envelope", kappa=kappa, share=share, adaptive="off"),
                   check_invariants=True)
    expected, _ = _expected(inst)
    overdue = res.policy_data["overdue_at"]
    assert len(res.records) == inst.n_jobs
    for r in res.records:
        d = r.arrival + kappa * (expected[r.id] - r.arrival)
        if r.completion > d:
            assert overdue.get(r.id) == d, (r.id, d, overdue)
        elif r.completion < d:
            assert r.id not in overdue


def test_kappa_one_guard_fires_on_the_envelope_example():
    """The example of envelope_schedule (6 GPUs): five 1-GPU jobs of length 8 and two 6-GPU jobs
    of length 7, at 0 and 7. C~ = 8 for the narrow jobs, 41/3 and 62/3 for the wide ones. The
    ranking runs the narrow jobs first (0-8), then w0 (8-15) and w1 (15-22): with kappa = 1 both
    wide jobs are overdue from their C~ on, which the policy must see at C~ exactly."""
    jobs = tuple(Job(f"n{i}", 0, 1, processing_time=8) for i in range(5)) + (
        Job("w0", 0, 6, processing_time=7), Job("w1", 7, 6, processing_time=7))
    inst = Instance(Cluster((Server(6),)), jobs)
    res = simulate(inst, "a-srpt:kappa=1", check_invariants=True)
    data = res.policy_data
    assert data["virtual_completion_times"] == {**{f"n{i}": 8 for i in range(5)},
                                                "w0": Fraction(41, 3), "w1": Fraction(62, 3)}
    assert data["overdue_at"] == {"w0": Fraction(41, 3), "w1": Fraction(62, 3)}
    assert res.completion_times == {**{f"n{i}": 8 for i in range(5)}, "w0": 15, "w1": 22}
    # kappa = 2: w0's deadline 82/3 > 15 and w1's 7 + 2 (62/3 - 7) = 103/3 > 22: no overdue job.
    assert simulate(inst, "a-srpt:kappa=2").policy_data["overdue_at"] == {}


@settings(max_examples=30, deadline=None)
@given(instances(max_jobs=8, exact=True, predictions=True))
def test_incremental_order_equals_a_full_sort(instance):
    """Adaptive (doubling, repredict) and static runs: the guarded order with the envelope's C~
    (moved by every new prediction) equals a full sort at every decision (test_asrpt's check,
    which recomputes C~ from the fluid machine and the current predictions)."""

    for kwargs in ({}, {"epsilon": 0}, {"adaptive": "off"}, {"kappa": 1, "share": 0.25}, {"kappa": 1.5},
                   {"kappa": 2, "adaptive": "repredict"}, {"preemption": False}, {"backfill": False},
                   {"order": "actual"}):
        simulate(instance, _Checked(virtual="envelope", **kwargs), check_invariants=True)


@settings(max_examples=30, deadline=None)
@given(instances(max_jobs=8, predictions=True) | gang_instances(max_jobs=9, max_mu=4, exact=False),
       st.sampled_from([1, 2, 16]), st.sampled_from(["doubling", "repredict", "conditional"]))
def test_adaptive_runs_complete_every_job_and_are_deterministic(instance, kappa, adaptive):
    spec = ASRPT(virtual="envelope", kappa=kappa, adaptive=adaptive)
    res = simulate(instance, spec, check_invariants=True)
    assert len(res.records) == instance.n_jobs and all(r.completion is not None for r in res.records)
    again = simulate(instance, ASRPT(**spec.get_params()))
    assert again.records == res.records and again.policy_data == res.policy_data
    data = res.policy_data
    for j in instance.jobs:     # C~ >= a + P^ for the final prediction P^ (tau* = 1: abstract jobs)
        assert data["virtual_completion_times"][j.id] >= j.arrival + data["virtual_sizes"][j.id]
        assert data["virtual_sizes"][j.id] == data["predictions"][j.id]


class _ByCompletions(Predictor):
    """Predicts ``before[id]`` until a job has completed, ``after[id]`` from then on; every job is
    every other's sibling, so a completion re-predicts the waiting jobs that did no work."""

    name = "by-completions"
    parameter_constraints = {"before": "no_validation", "after": "no_validation"}

    def __init__(self, *, before=None, after=None):
        self.before = before
        self.after = after

    def predict(self, job, *, attained=0, truth=None):
        return (self.after if self.n_observed_ else self.before)[job.id]

    def sibling_keys(self, job):
        return ("all",)


# One server of 4 GPUs, no preemption, static predictions, kappa = 2. S (1 GPU, true 2, P^ 1) and
# Z (3 GPUs, true 4, P^ 4) start at 0; W (1 GPU, true 1, P^ 3) arrives at 1/2 and waits until S
# completes at 2. Fluid sizes g P^ / 4: S 1/4 (0-1/4), Z 3, W 3/4 (1/2-5/4): the fluid machine
# finishes W at 5/4, so C~_W = max(5/4, 1/2 + 3) = 7/2, deadline 1/2 + 2 (7/2 - 1/2) = 13/2. S's
# completion at 2 re-predicts W (a sibling that did no work): P^ 1 or 5.
_SHIFT = Instance(Cluster((Server(4),)), (
    Job("S", 0, 1, processing_time=2), Job("Z", 0, 3, processing_time=4),
    Job("W", Fraction(1, 2), 1, processing_time=1)))


def _shift(after_w):
    predictor = _ByCompletions(before={"S": 1, "Z": 4, "W": 3}, after={"S": 1, "Z": 4, "W": after_w})
    return simulate(_SHIFT, _Checked(virtual="envelope", predictor=predictor, kappa=2, adaptive="off",
                                     preemption=False), check_invariants=True)


def test_a_new_prediction_of_a_job_the_fluid_machine_finished_moves_its_deadline():
    # P^_W 3 -> 1 at t = 2: the fluid machine keeps W finished (its size stays the 3/4 served),
    # but C~_W = max(5/4, 1/2 + 1) = 3/2, so the deadline moves from 13/2 to 1/2 + 2 * 1 = 5/2:
    # W (running 2-3 on S's GPU) is overdue at 5/2, the old deadline's heap entry is void.
    res = _shift(1)
    assert res.completion_times == {"S": 2, "Z": 4, "W": 3}
    assert res.policy_data["virtual_completion_times"]["W"] == Fraction(3, 2)
    assert res.policy_data["virtual_sizes"]["W"] == 1
    assert res.policy_data["overdue_at"] == {"W": Fraction(5, 2)}


def test_a_new_prediction_that_reopens_a_fluid_job_moves_its_deadline_later():
    # P^_W 3 -> 5 at t = 2: fluid size 5/4 > 3/4 served, the job reopens; the fluid machine ran
    # Z 5/4-2 (remaining 2) and now runs W's 1/2 first (2-5/2): C~_W = max(5/2, 1/2 + 5) = 11/2,
    # deadline 21/2. W completes at 3: not overdue.
    res = _shift(5)
    assert res.policy_data["virtual_completion_times"]["W"] == Fraction(11, 2)
    assert res.policy_data["overdue_at"] == {}
