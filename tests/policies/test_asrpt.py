"""A-SRPT (proofs/model.md, Definition 4): the worked example, the incremental order against a plain sort of
the virtual machine's priority keys, the options, and the adaptive step."""

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from asrpt.instance import Cluster, Instance, Job, Server
from asrpt.policies import asrpt as asrpt_module
from asrpt.policies.asrpt import ASRPT
from asrpt.policies import Decision, make_policy
from asrpt.sim import simulate
from asrpt.single import srpt_schedule
from asrpt.single.gang import gang_schedule
from asrpt.single.virtual import virtual_sizes
from asrpt.sizes import predicted_processing_times
from asrpt.testing.strategies import gang_instances, instances


def _srsf_key(policy, view, j):
    """Predicted remaining GPU-time, scaled by ``1 - epsilon`` for a running job not stopping."""
    left = max(policy.tracker_.predicted[j.index] - view.attained_work(j), 0)
    size = left * j.tau_star * j.gpus
    if policy.epsilon and view.is_running(j) and not view.is_stopping(j):
        size = size * (1 - policy.epsilon)
    return (size, j.arrival, j.key)


class _Checked(ASRPT):
    """A-SRPT that compares its incremental order with a full sort at every decision."""

    def decide(self, view):
        decision = super().decide(view)
        order = list(decision.order)
        m = self.machine_
        active = list(view.active())
        if self.order == "virtual" and self.virtual == "fluid":
            reference = sorted(active, key=lambda j: m.priority_key(j.index))
        elif self.order == "virtual":
            def key(j):
                c = m.completion_time(j.index)
                return (0, c, j.key) if c is not None else (1, m.remaining(j.index), j.key)
            reference = sorted(active, key=key)
        else:
            reference = sorted(active, key=lambda j: _srsf_key(self, view, j))
            if self.order == "guarded":
                pred = self.tracker_.predicted

                def ctilde(j):      # the envelope's max(C^f, a + P^) from the current prediction, else C~
                    c = m.completion_time(j.index)
                    if c is None or self.virtual != "envelope":
                        return c
                    return max(c, j.arrival + pred[j.index] * j.tau_star)

                def overdue(j):
                    c = ctilde(j)
                    return c is not None and view.now >= asrpt_module.deadline(j.arrival, c, self._kappa)
                admitted, budget = [], max(1, int(self.share * view.total_gpus))
                for j in sorted(filter(overdue, active), key=lambda j: (ctilde(j), j.key)):
                    if j.gpus <= budget or not admitted:
                        admitted.append(j)
                        budget -= j.gpus
                        if budget <= 0:
                            break
                reference = admitted + [j for j in reference if j not in admitted]
        if not self.preemption:
            reference = [j for j in reference if not view.is_running(j)]
        assert [j.id for j in order] == [j.id for j in reference], view.now
        return Decision(order, decision.backfill, decision.wake_at)


@settings(max_examples=40)
@given(instances(max_jobs=8, exact=True, predictions=True))
def test_incremental_order_equals_the_virtual_machine_priority_order(instance):
    for kwargs in ({}, {"epsilon": 0}, {"adaptive": "off"}, {"preemption": False}, {"backfill": False},
                   {"kappa": 1, "share": 0.25}, {"kappa": 1.5, "adaptive": "off"}, {"virtual": "gang"},
                   {"virtual": "gang", "kappa": 1, "adaptive": "off"},
                   {"order": "virtual", "virtual": "gang"}, {"order": "actual"}, {"order": "guarded", "virtual": "fluid"},
                   {"virtual": "fluid", "order": "virtual"}, {"virtual": "fluid", "order": "virtual", "adaptive": "off"},
                   {"virtual": "fluid", "order": "virtual", "preemption": False}):
        simulate(instance, _Checked(**kwargs), check_invariants=True)


@settings(max_examples=30)
@given(instances(max_jobs=8, exact=True, predictions=True))
def test_static_virtual_machine_is_srpt_on_the_virtual_sizes(instance):
    """With static predictions, C~ recorded by the run equals single-machine SRPT on p~ (CHK-18's
    virtual side): the virtual machine is exact and independent of the real schedule."""
    res = simulate(instance, "a-srpt-fluid:adaptive=off")
    sizes = virtual_sizes(instance, predicted=True)
    expected = srpt_schedule([j.arrival for j in instance.jobs], sizes, ids=[j.id for j in instance.jobs])
    assert res.policy_data["virtual_completion_times"] == {
        j.id: c for j, c in zip(instance.jobs, expected.completion_times)}
    assert res.policy_data["virtual_sizes"] == {j.id: s for j, s in zip(instance.jobs, sizes)}


@given(instances(max_jobs=8, exact=True, predictions=True))
def test_static_gang_machine_is_gang_srpt_on_the_predicted_times(instance):
    """The gang virtual machine: C~ recorded by the run equals gang-capped SRPT on the
    predicted times P^_j with caps g_j, independent of the real schedule."""
    res = simulate(instance, "a-srpt-gang:adaptive=off")
    times = predicted_processing_times(instance)
    expected = gang_schedule([j.arrival for j in instance.jobs], times, [j.gpus for j in instance.jobs],
                             instance.cluster.total_gpus, ids=[j.id for j in instance.jobs])
    assert res.policy_data["virtual_completion_times"] == {j.id: c for j, c in zip(instance.jobs, expected)}
    assert all(res.policy_data["virtual_completion_times"][j.id] >= j.arrival + p
               for j, p in zip(instance.jobs, times))


def test_virtually_finished_jobs_come_first_by_virtual_completion():
    # One 2-GPU server. A (2 GPUs, P=10) is predicted to take 2: its virtual size is 2*2/2 = 2, so
    # the virtual machine finishes it at C~ = 2 while it really runs until 10. B (2 GPUs, P=1,
    # virtual size 1) arrives at 3.
    inst = Instance(Cluster((Server(2),)), (
        Job("A", 0, 2, processing_time=10, predicted_processing_time=2),
        Job("B", 3, 2, processing_time=1)))
    res = simulate(inst, "a-srpt:adaptive=off", check_invariants=True)
    # A is virtually done at C~ = 2 < 3, so at t = 3 it outranks B (r~ 0 < 1): no preemption.
    assert res.policy_data["virtual_completion_times"] == {"A": 2, "B": 4}
    assert res.completion_times == {"A": 10, "B": 11} and res.summary["preemptions"] == 0
    # With the truth (oracle predictor) A's virtual size is 10 and B's 1: B preempts A at 3.
    oracle = simulate(inst, "a-srpt:adaptive=off:predictor=oracle", check_invariants=True)
    assert oracle.completion_times == {"A": 11, "B": 4} and oracle.summary["preemptions"] == 1


def test_doubling_adaptive_step_happens_exactly_when_work_reaches_the_prediction():
    inst = Instance(Cluster((Server(2),)), (
        Job("A", 0, 2, processing_time=10, predicted_processing_time=2),
        Job("B", 3, 2, processing_time=1)))
    res = simulate(inst, "a-srpt:adaptive=doubling", check_invariants=True)
    # A (virtual size 2) doubles when its real work reaches the prediction. t=2: 2 -> 4 (virtual
    # remaining 2). t=3: B arrives with virtual size 1, A's virtual remaining is also 1: the tie goes
    # to the id, A keeps running. t=4: A's work reaches 4 -> 8; its virtual remaining is now 4 and
    # B's 1, so B preempts A and runs 4-5. A resumes at 5 and reaches 8 at t=9 (-> 16), done at 11.
    assert res.policy_data["predictions"]["A"] == 16 and res.policy_data["adaptive_updates"] == 3
    assert res.completion_times == {"A": 11, "B": 5} and res.record("A").preemptions == 1
    assert res.policy_data["initial_predictions"]["A"] == 2


def test_repredict_uses_the_predictor_given_the_work_done():
    # The constant predictor says 1 second, and at least twice the work done when asked again:
    # re-predictions at t = 1 (-> 2), 2 (-> 4) and 4 (-> 8); A completes at 5.
    inst = Instance(Cluster((Server(1),)), (Job("A", 0, 1, processing_time=5),))
    res = simulate(inst, "a-srpt:adaptive=repredict:predictor=\"constant:processing_time=1\"",
                   check_invariants=True)
    assert res.completion_times == {"A": 5} and res.policy_data["adaptive_updates"] == 3
    assert res.policy_data["predictions"]["A"] == 8


def test_options_are_validated():
    with pytest.raises(Exception, match="The 'order' parameter of ASRPT must be a str among"):
        make_policy("a-srpt:order=fastest")
    with pytest.raises(Exception, match="unknown predictor 'orcale' \\(did you mean 'oracle'"):
        simulate(Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=1),)), "a-srpt:predictor=orcale")


class _Sized(ASRPT):
    """Records the size of A-SRPT's per-decision structures against the number of active jobs."""

    def decide(self, view):
        decision = super().decide(view)
        active = len(view.waiting) + len(view.running)
        if self.virtual == "fluid":
            assert len(self._stored) + len(self._done_order) == active
        assert len(self._waiting) == len(view.waiting)
        assert len(self._done_order) <= active and len(self._overdue) <= active
        assert not self._stopped  # every stopped job is keyed again by the end of the decision
        return decision


@settings(max_examples=20)
@given(instances(min_jobs=4, max_jobs=10))
def test_per_decision_state_is_bounded_by_active_jobs_not_finished_ones(instance):
    """A-SRPT's orders hold only active jobs, so a decision never scans finished jobs
    (its cost does not grow with the number of jobs already done)."""
    simulate(instance, _Sized())
    simulate(instance, _Sized(virtual="fluid", order="virtual"))


class _WakesAtEveryVirtualCompletion(ASRPT):
    """A-SRPT as it was before it read its machine ahead: it wakes at the machine's next
    completion (the gang machine's, or the envelope's fluid machine's), to learn the job's
    deadline then."""

    def _next_deadline(self, view, wake):
        m = self.machine_
        if self._gang:
            finish = m.next_completion()
        else:
            finish = None if m.running is None else m.now + m.remaining(m.running)
        if finish is not None and finish > view.now and (wake is None or finish < wake):
            wake = finish
        return wake


@settings(max_examples=60, deadline=None)
@given(gang_instances(max_jobs=9, max_mu=4, arrivals="bunched") | gang_instances(max_jobs=9, max_mu=4),
       st.sampled_from([1, 2, 4, 16]),
       st.sampled_from([0.25, 1]), st.sampled_from(["doubling", "off"]), st.sampled_from([1, 2, 16]),
       st.sampled_from(["gang", "envelope"]))
def test_reading_ahead_for_deadlines_makes_the_same_run(inst, kappa, share, adaptive, read_ahead, virtual):
    """Waking at the first deadline of the jobs the virtual machine finishes (read ahead) instead of
    at every virtual completion changes no decision: the same completions, virtual completions
    and overdue times, exactly. (Only the passes differ: the virtual completions' are gone, and a
    deadline asked for may still bring a pass after its job completed for real.)"""
    params = dict(kappa=kappa, share=share, adaptive=adaptive, virtual=virtual)
    with pytest.MonkeyPatch.context() as patch:    # (a short read stops early: its horizon counts)
        patch.setattr(asrpt_module, "_READ_AHEAD", read_ahead)
        ahead = simulate(inst, ASRPT(**params))
    every = simulate(inst, _WakesAtEveryVirtualCompletion(**params))
    assert ahead.records == every.records           # every job's segments: starts, ends, servers
    assert ahead.policy_data == every.policy_data
    assert dict(ahead.summary, decision_passes=0, wall_time=0) == dict(every.summary, decision_passes=0, wall_time=0)


@pytest.mark.parametrize("read_ahead", [1, 2, 16])
def test_a_short_read_ahead_wakes_at_its_horizon(read_ahead):  # (the gang machine)
    """One GPU, kappa = 2: j1 finishes virtually at 3.5, after j2 (1) and j0 (2.5), and its
    deadline is 2 + 2 (3.5 - 2) = 5. A read that stops after one completion must wake at the
    next one, or j1's deadline passes unseen."""
    jobs = (Job(id="j0", arrival=0, gpus=1, processing_time=1, predicted_processing_time=Fraction(3, 2)),
            Job(id="j1", arrival=2, gpus=1, processing_time=4, predicted_processing_time=1),
            Job(id="j2", arrival=0, gpus=1, processing_time=1, predicted_processing_time=1))
    inst = Instance(cluster=Cluster(servers=(Server(gpus=1),)), jobs=jobs)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(asrpt_module, "_READ_AHEAD", read_ahead)
        ahead = simulate(inst, ASRPT(kappa=2, adaptive="off", virtual="gang"))
    every = simulate(inst, _WakesAtEveryVirtualCompletion(kappa=2, adaptive="off", virtual="gang"))
    assert ahead.policy_data["overdue_at"] == every.policy_data["overdue_at"] == {"j1": 5}
    assert ahead.policy_data["virtual_completion_times"] == {"j0": Fraction(5, 2), "j1": Fraction(7, 2), "j2": 1}
    assert ahead.records == every.records


def test_the_read_ahead_reaches_every_deadline_before_the_wake_up():
    """One GPU, kappa = 4: k finishes virtually at 1 (deadline 4) but runs on for real; j arrives
    at 2 and finishes virtually at 2.25, so its deadline, 3, comes before k's. The read must
    reach j's virtual completion although the wake-up (4) is far: it stops reading only where
    no deadline can come before the wake-up."""
    jobs = (Job(id="k", arrival=0, gpus=1, processing_time=10, predicted_processing_time=1),
            Job(id="j", arrival=2, gpus=1, processing_time=10, predicted_processing_time=Fraction(1, 4)))
    inst = Instance(cluster=Cluster(servers=(Server(gpus=1),)), jobs=jobs)
    ahead = simulate(inst, ASRPT(kappa=4, adaptive="off", virtual="gang"))
    every = simulate(inst, _WakesAtEveryVirtualCompletion(kappa=4, adaptive="off", virtual="gang"))
    assert ahead.policy_data["overdue_at"] == every.policy_data["overdue_at"] == {"k": 4, "j": 3}
    assert ahead.records == every.records
