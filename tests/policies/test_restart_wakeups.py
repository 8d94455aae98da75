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

from .test_running_arrays import dnn_trace


@pytest.mark.parametrize("policy", [ASRPT, ReferenceASRPT, SRSF, ReferenceSRSF], ids=lambda p: p.__name__)
@pytest.mark.parametrize("adaptive", ["doubling", "conditional"])
def test_a_restart_a_few_ulps_short_of_the_prediction_does_not_wake_the_policy_every_ulp(policy, adaptive):
    times = []

    def observe(view, decision):    # (543 to 678 passes; the old wake-up went on for ever: fail, not hang)
        times.append(view.now)
        assert len(times) < 2_000, f"{len(times)} passes, the last at t = {view.now!r}"

    res = simulate(dnn_trace(70, 3), policy(predictor="group_mean", adaptive=adaptive), seed=3,
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
