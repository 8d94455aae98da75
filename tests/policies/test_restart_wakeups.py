"""The adaptive step's wake-ups count from when a job's work progresses again.

A job preempted at an iteration boundary a few ulps short of its prediction (a prediction that is
a float mean of whole iteration counts, say) and restarted with a preemption cost makes no progress
for the cost's duration. Its crossing used to be computed as ``now + left * tau`` with a ``left`` of
one ulp: the policy was woken one ulp of the clock later, found the job where it was, and asked
again, about 10**13 times per second of restart (the default A-SRPT with ``group_mean`` on this
instance did not finish). The crossing is now ``resume_time + left * tau``
(:meth:`~asrpt.state.ClusterView.resume_time`)."""

import pytest

from asrpt.policies.asrpt import ASRPT
from asrpt.policies.reference import ReferenceASRPT, ReferenceSRSF
from asrpt.policies.srsf import SRSF
from asrpt.sim import simulate

from ._same_decisions import recording, same_decisions
from .test_running_arrays import dnn_trace

ASRPT_REC, REF_ASRPT_REC = recording(ASRPT), recording(ReferenceASRPT)
SRSF_REC, REF_SRSF_REC = recording(SRSF), recording(ReferenceSRSF)


@pytest.mark.parametrize("policy", [ASRPT, ReferenceASRPT, SRSF, ReferenceSRSF], ids=lambda p: p.__name__)
@pytest.mark.parametrize("adaptive", ["doubling", "conditional"])
def test_a_restart_a_few_ulps_short_of_the_prediction_does_not_wake_the_policy_every_ulp(policy, adaptive):
    """(Each with A-SRPT's default hysteresis, the setting in which the old wake-up looped on this
    instance, for the fast and the reference copy alike.)"""
    times = []

    def observe(view, decision):    # (about 540 passes; the old wake-up went on for ever: fail, not hang)
        times.append(view.now)
        assert len(times) < 2_000, f"{len(times)} passes, the last at t = {view.now!r}"

    res = simulate(dnn_trace(70, 3), policy(predictor="group_mean", adaptive=adaptive, epsilon=0.5), seed=3,
                   preemption_cost=1.5, observer=observe)
    assert all(r.completion is not None for r in res.records)
    assert len(set(times)) > len(times) / 2


def test_resume_time_is_now_or_the_end_of_a_restart_and_no_work_is_done_before_it():
    seen = []

    def observe(view, decision):
        for job in view.running:
            seen.append((view.now, view.resume_time(job), view.attained_work(job), job.id))
        resumes = view.running_resumes()
        if resumes is not None:
            assert resumes.tolist() == [view.resume_time(job) for job in view.running]

    simulate(dnn_trace(40, 5), ASRPT(predictor="group_mean"), seed=5, preemption_cost=2.0, observer=observe)
    assert all(resume == now or now < resume <= now + 2.0 for now, resume, _, _ in seen)
    later = [(now, resume, done, who) for now, resume, done, who in seen if resume > now]
    assert later
    # a restarting job's work done stays put until it resumes
    for now, resume, done, who in later:
        same = [d for n, r, d, w in seen if w == who and now <= n < resume]
        assert all(d == done for d in same)


def test_without_a_preemption_cost_every_job_resumes_now():
    def observe(view, decision):
        assert view.running_resumes() is None
        assert all(view.resume_time(job) == view.now for job in view.running)

    simulate(dnn_trace(30, 2), ASRPT(predictor="group_mean"), seed=2, observer=observe)


@pytest.mark.parametrize("params", [
    {"predictor": "group_mean", "adaptive": "doubling", "kappa": 1.0, "share": 0.25, "epsilon": 0.5},
    {"predictor": "group_mean", "adaptive": "conditional", "epsilon": 0.5},
    {"predictor": "noisy:sigma=1.0", "adaptive": "doubling", "epsilon": 0.0},
], ids=["kappa1", "conditional", "noisy"])
@pytest.mark.parametrize("cost", [1.5, 3.0])
def test_wake_ups_with_a_restart_cost_are_the_reference_policys_decision_for_decision(params, cost):
    """With a preemption cost the fast A-SRPT wakes when the reference does, decision by decision
    (a wake-up counted from now instead of the restart's end asks again early: the records often
    stay the same, the decision log does not; dnn_trace(60, 964) showed it at decision 127)."""
    same_decisions(ASRPT_REC, REF_ASRPT_REC, dnn_trace(60, 964), params, seed=1, preemption_cost=cost)


@pytest.mark.parametrize("adaptive", ["doubling", "conditional"])
def test_srsf_wake_ups_with_a_restart_cost_are_the_references_and_the_trackers(adaptive):
    """The same for SRSF, whose wake-up is also what ``PredictionTracker.next_crossing`` computes
    afresh at that time (the noted crossings and the recomputed one agree)."""
    params = {"predictor": "group_mean", "adaptive": adaptive, "epsilon": 0.5}
    same_decisions(SRSF_REC, REF_SRSF_REC, dnn_trace(60, 964), params, seed=1, preemption_cost=1.5)
    checked = []

    class Checked(SRSF):
        def next_wake(self, view):
            wake = super().next_wake(view)
            assert wake == self.tracker_.next_crossing(view)
            checked.append(wake)
            return wake

    simulate(dnn_trace(60, 964), Checked(**params), seed=1, preemption_cost=1.5)
    assert any(w is not None for w in checked)
