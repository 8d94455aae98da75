"""The event-driven engine: event order, preemption and restart cost, exactness, invariants,
stall detection and the read-only view."""

from fractions import Fraction

import pytest
from hypothesis import given, settings

from asrpt.errors import AsrptError
from asrpt.instance import Cluster, Instance, Job, Server, load_instance
from asrpt.policies.base import Decision, Policy
from asrpt.sim import simulate
from asrpt.engine.records import check_records
from asrpt.sim.view import NotClairvoyantError
from asrpt.testing.strategies import instances


def inst(cluster, *jobs):
    return Instance(cluster, tuple(Job(j[0], j[1], j[2], processing_time=j[3]) for j in jobs))


def test_worked_example_model_md_section_9():
    res = simulate(load_instance("instances/worked-example.json"), "a-srpt", check_invariants=True)
    assert res.completion_times == {"A": 5, "B": 1, "C": 3}
    assert res.summary["total_completion_time"] == 9
    assert res.policy_data["virtual_completion_times"] == {"A": 4, "B": 1, "C": 3}   # the envelope (default)
    gang = simulate(load_instance("instances/worked-example.json"), "a-srpt-gang", check_invariants=True)
    assert gang.completion_times == res.completion_times
    assert gang.policy_data["virtual_completion_times"] == {"A": 5, "B": 1, "C": 3}
    fluid = simulate(load_instance("instances/worked-example.json"), "a-srpt-fluid", check_invariants=True)
    assert fluid.completion_times == res.completion_times
    assert fluid.policy_data["virtual_completion_times"] == {"A": Fraction(7, 2), "B": 1, "C": Fraction(3, 2)}
    a = res.record("A")
    assert a.start == 1 and a.queueing_delay == 1 and a.preemptions == 0 and a.jct == 5


def test_preemption_is_immediate_for_abstract_jobs_and_restart_costs_time():
    i = inst(Cluster((Server(4),)), ("A", 0, 4, 10), ("B", 2, 4, 1))
    res = simulate(i, "a-srpt", check_invariants=True)
    assert res.completion_times == {"A": 11, "B": 3}
    a = res.record("A")
    assert a.preemptions == 1 and [(s.start, s.end) for s in a.segments] == [(0, 2), (3, 11)]
    res = simulate(i, "a-srpt", preemption_cost=Fraction(1, 2), check_invariants=True)
    a = res.record("A")
    assert res.completion_times == {"A": Fraction(23, 2), "B": 3}
    assert a.segments[1].restart == Fraction(1, 2)
    assert res.summary["preemptions"] == 1


def test_completions_and_arrivals_at_the_same_time_come_before_the_decision():
    # A frees the server at t=2 exactly when B arrives: B starts at 2, not later.
    i = inst(Cluster((Server(2),)), ("A", 0, 2, 2), ("B", 2, 2, 1))
    assert simulate(i, "fifo").record("B").start == 2


def test_exact_and_float_runs_agree():
    data = [("a", Fraction(1, 3), 1, Fraction(7, 3)), ("b", 0, 2, Fraction(5, 2)), ("c", 1, 1, Fraction(1, 7)),
            ("d", Fraction(3, 2), 2, 2)]
    exact = inst(Cluster.homogeneous(1, 2), *data)
    floats = inst(Cluster.homogeneous(1, 2), *[(j, float(a), g, float(p)) for j, a, g, p in data])
    for policy in ("a-srpt", "fifo", "sjf"):
        e = simulate(exact, policy).completion_times
        f = simulate(floats, policy).completion_times
        assert all(isinstance(v, (int, Fraction)) for v in e.values())
        assert all(abs(float(e[k]) - f[k]) <= 1e-9 * max(1, f[k]) for k in e)


class _Idle(Policy):
    parameter_constraints: dict = {}
    preemptive = False

    def decide(self, view):
        return Decision(())


def test_a_policy_that_leaves_jobs_waiting_forever_is_reported():
    with pytest.raises(AsrptError, match="simulation stalled at t=0: policy .* left 1 job"):
        simulate(inst(Cluster.homogeneous(1, 1), ("a", 0, 1, 1)), _Idle())


class _Peek(Policy):
    parameter_constraints: dict = {}
    preemptive = False

    def decide(self, view):
        for j in view.waiting:
            view.true_work(j)
        return Decision(view.waiting)


def test_non_clairvoyant_policies_cannot_read_true_sizes():
    with pytest.raises(NotClairvoyantError, match="true sizes are hidden"):
        simulate(inst(Cluster.homogeneous(1, 1), ("a", 0, 1, 1)), _Peek())


class _Twice(Policy):
    parameter_constraints: dict = {}
    preemptive = True

    def decide(self, view):
        jobs = list(view.active())
        return Decision(jobs + jobs)


def test_listing_a_job_twice_is_an_error():
    with pytest.raises(AsrptError, match="listed a job twice"):
        simulate(inst(Cluster.homogeneous(1, 4), ("a", 0, 1, 1)), _Twice())


def test_records_check_catches_over_allocation():
    res = simulate(inst(Cluster.homogeneous(1, 2), ("a", 0, 2, 1), ("b", 0, 2, 1)), "fifo")
    check_records(res.records, (2,))
    with pytest.raises(AssertionError, match="over-allocated"):
        check_records(res.records, (1,))  # the same run on a 1-GPU server would be impossible


@settings(max_examples=30)
@given(instances(max_jobs=7, exact=True, predictions=True))
def test_every_run_satisfies_the_invariants(instance):
    for policy in ("a-srpt", "a-srpt-strict", "a-srpt-no-preemption", "fifo", "fifo-strict", "sjf"):
        res = simulate(instance, policy, check_invariants=True)
        assert res.summary["finished"] == instance.n_jobs
        for r in res.records:
            assert r.completion >= r.arrival + r.processing_time


@settings(max_examples=20)
@given(instances(max_jobs=6))
def test_same_seed_same_records(instance):
    a = simulate(instance, "a-srpt:predictor=\"noisy:sigma=1\"", seed=3)
    b = simulate(instance, "a-srpt:predictor=\"noisy:sigma=1\"", seed=3)
    assert a.records == b.records and a.policy_data == b.policy_data


def test_dnn_jobs_stop_at_their_next_iteration_boundary():
    from asrpt.dnn.perf import best_iteration_time
    from asrpt.instance import Parallelism

    cluster = Cluster.homogeneous(1, 8, "A100")
    a = Job("A", 0, 8, model="gpt2", parallelism=Parallelism(8, 1, 1), iterations=100)
    b = Job("B", 10.1, 8, model="resnet50", parallelism=Parallelism(8, 1, 1), iterations=10)
    tau_a, tau_b = best_iteration_time(a, cluster), best_iteration_time(b, cluster)
    done_at_arrival = 10.1 / tau_a
    boundary = 18 * tau_a
    assert 17 < done_at_arrival < 18 and boundary > 10.1
    for cost in (0, 5):
        res = simulate(Instance(cluster, (a, b)), "a-srpt", preemption_cost=cost, check_invariants=True)
        ra, rb = res.record("A"), res.record("B")
        assert ra.preemptions == 1 and ra.segments[0].end == pytest.approx(boundary)
        assert rb.start == pytest.approx(boundary), "B waits for A's iteration boundary"
        assert rb.completion == pytest.approx(boundary + 10 * tau_b)
        assert ra.segments[1].restart == pytest.approx(cost)
        assert ra.completion == pytest.approx(rb.completion + cost + 82 * tau_a)
        assert ra.beta == 1.0 and ra.processing_time == pytest.approx(100 * tau_a)


class _Flip(Policy):
    """Preempts A for B when B arrives, then changes its mind 0.05 s later (before A's boundary)."""

    parameter_constraints: dict = {}
    preemptive = True

    def decide(self, view):
        jobs = {j.id: j for j in view.active()}
        if "B" in jobs and view.now < 1.05:
            return Decision([jobs["B"]], wake_at=1.05)
        return Decision(sorted(jobs.values(), key=lambda j: j.id))


def test_a_job_selected_again_before_its_boundary_keeps_running():
    from asrpt.dnn.perf import best_iteration_time
    from asrpt.instance import Parallelism

    cluster = Cluster.homogeneous(1, 8, "A100")
    a = Job("A", 0, 8, model="gpt2", parallelism=Parallelism(8, 1, 1), iterations=50)
    b = Job("B", 1.0, 8, model="gpt2", parallelism=Parallelism(8, 1, 1), iterations=2)
    tau = best_iteration_time(a, cluster)
    assert 1.05 < 2 * tau  # A's next boundary after t = 1 is at 2 iterations, after the change of mind
    res = simulate(Instance(cluster, (a, b)), _Flip(), check_invariants=True)
    ra = res.record("A")
    assert ra.preemptions == 0 and len(ra.segments) == 1 and ra.completion == pytest.approx(50 * tau)
    assert res.record("B").start == pytest.approx(50 * tau)


def _spans(res):
    return {r.id: [(s.start, s.end) for s in r.segments] for r in res.records}


def test_gpus_held_by_a_job_left_out_go_to_the_next_jobs():
    """Two 4-GPU servers. At t=11 the order is j4 (8 GPUs), j3 (6), j5: j5, a one-iteration DNN job
    left out, cannot stop before it finishes (t~153), so j4 cannot start; the 6 idle GPUs go to
    j3 instead of staying idle (they used to, for 142 s)."""
    jobs = (Job("j1", 3, 4, processing_time=8), Job("j3", 5, 6, processing_time=9),
            Job("j4", 5, 8, processing_time=5), Job("j5", 5, 2, model="gpt3-6.7b", iterations=1))
    instance = Instance(Cluster.homogeneous(2, 4), jobs)
    for policy in ("srsf", "a-srpt", "a-srpt-fluid"):
        res = simulate(instance, policy, check_invariants=True)
        assert _spans(res)["j3"] == [(11, 20)], policy
        assert res.record("j4").start == res.record("j5").completion
        assert res.summary["preemptions"] == 0


def test_a_job_the_placer_refuses_does_not_hold_the_gpus_it_was_counted_on():
    """Y (2 GPUs) runs on server 0; X (two 3-GPU instances) is selected next but no server pair
    has 3 + 3 free; Z (2 GPUs), left out of the selection, runs on the idle GPUs meanwhile."""
    jobs = (Job("Y", 0, 2, processing_time=10), Job("X", 1, 6, processing_time=11, instances=2),
            Job("Z", 1, 2, processing_time=100))
    res = simulate(Instance(Cluster.homogeneous(2, 4), jobs), "srsf", check_invariants=True)
    assert res.record("Z").start == 1
    # At 10 both X and Z are selected, but Z's GPUs on server 1 leave 4 + 2: X still cannot be
    # placed (the count placer does not move running jobs to defragment) and waits for Z.
    assert res.record("X").start == res.record("Z").completion == 101


def test_a_preemption_undone_in_the_same_pass_is_no_preemption():
    # j3 of the first test is left out at t=15 (A-SRPT's guard, on the gang machine, puts the
    # overdue j4 first) but gets its GPUs back in the same pass: one segment, no preemption, no
    # restart cost.
    jobs = (Job("j1", 3, 4, processing_time=8), Job("j3", 5, 6, processing_time=9),
            Job("j4", 5, 8, processing_time=5), Job("j5", 5, 2, model="gpt3-6.7b", iterations=1))
    res = simulate(Instance(Cluster.homogeneous(2, 4), jobs), "a-srpt-gang:kappa=2", preemption_cost=30,
                   check_invariants=True)
    assert res.policy_data["overdue_at"]["j4"] == 15
    assert _spans(res)["j3"] == [(11, 20)] and res.record("j3").preemptions == 0


def test_a_blocked_selected_job_keeps_its_reservation_from_the_jobs_left_out():
    """Two 4-GPU servers. A (a DNN job, 4 GPUs) runs from t=0; at t=1 X (8 GPUs, short) comes
    first, A is left out and runs on to its iteration boundary, so X is blocked and reserves both
    servers. Z (a DNN job, 2 GPUs), also left out, must not take server 1's idle GPUs (it would
    delay X). The reservation is made when Z first needs it, with and without the checks."""
    jobs = (Job("A", 0, 4, model="gpt3-6.7b", iterations=40), Job("X", 1, 8, processing_time=5),
            Job("Z", 1, 2, model="gpt3-6.7b", iterations=30))
    instance = Instance(Cluster.homogeneous(2, 4), jobs)
    runs = [simulate(instance, "srsf:predictor=oracle", check_invariants=check) for check in (True, False)]
    assert _spans(runs[0]) == _spans(runs[1])
    x, z = runs[0].record("X"), runs[0].record("Z")
    assert x.start > 1, "X waits for A's iteration boundary"
    assert z.start >= x.completion, "Z does not take GPUs that X reserved"


def test_a_job_left_out_starts_on_gpus_a_failed_reservation_leaves():
    """Three 4-GPU servers. At t=1 R2, R and X (two 3-GPU instances) take the whole budget; L,
    left out, runs on to its iteration boundary on server 0. X cannot be placed, nor reserve (once
    L is gone server 0 has 2 GPUs, and only server 2 holds a 3-GPU instance), so Z (4 GPUs, also
    left out) takes server 2's idle GPUs at once: exactly what the idle fill has left (4), which
    is also Z's demand, the least of the waiting jobs. An idle fill that stopped at one GPU less
    would leave Z waiting for L's boundary."""
    m = "gpt3-6.7b"
    jobs = (Job("R2", 0, 2, model=m, iterations=20), Job("L", 0, 2, model=m, iterations=400),
            Job("R", 0, 4, model=m, iterations=20), Job("X", 1, 6, model=m, iterations=5, instances=2),
            Job("Z", 1, 4, model=m, iterations=300))
    instance = Instance(Cluster.homogeneous(3, 4), jobs)
    runs = [simulate(instance, "srsf:predictor=oracle", check_invariants=check) for check in (True, False)]
    assert _spans(runs[0]) == _spans(runs[1])
    assert runs[0].record("Z").start == 1 and runs[0].record("Z").segments[0].servers == ((2, 4),)
    assert runs[0].record("L").segments[0].end > 1, "L runs on to its boundary"
