"""Theorem 2 (proofs/theorem2.md): guarded A-SRPT's per-instance certificate holds on every
example under the theorem's assumptions, exactly; and the flow-time figures are right."""

import dataclasses
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job, Server, load_instance
from asrpt.sim import simulate
from asrpt.testing.strategies import gang_instances
from asrpt.theory.guarded import certify_guarded, certify_guarded_instance


@settings(max_examples=60)
@given(gang_instances(max_jobs=9, max_mu=16), st.sampled_from([1, 2, 4]), st.sampled_from([0.25, 0.5, 1]))
def test_theorem2_certificate_holds_under_its_assumptions(inst, kappa, share):
    cert = certify_guarded_instance(inst, kappa=kappa, share=share)
    assert cert.covered and cert.exact
    assert cert.failures() == [], cert.to_dict()
    assert cert.flow_time >= cert.flow_lower_bound


@settings(max_examples=30)
@given(gang_instances(max_jobs=8, max_mu=4, arrivals="bunched"))
def test_theorem2_holds_when_the_guard_fires(inst):
    # kappa = 1: every job is overdue from its virtual completion on, so the guard decides a lot
    cert = certify_guarded_instance(inst, kappa=1, share=0.5)
    assert cert.failures() == []


def test_worked_example_flow_figures():
    inst = load_instance("instances/worked-example.json")
    cert = certify_guarded_instance(inst)
    # completions 5, 1, 3 minus arrivals 0, 0, 1; LB = max(8, 6) = 8 minus 1; the envelope's
    # C~ = 4, 1, 3 (the gang machine's 5, 1, 3)
    assert (cert.flow_time, cert.flow_lower_bound, cert.virtual_flow_time) == (8, 7, 7)
    assert certify_guarded_instance(inst, virtual="gang").virtual_flow_time == 8
    assert cert.inequality("virtual_length").holds


def _relabelled(inst, policy, as_policy):
    """The records of ``policy``'s run presented as a run of ``as_policy`` (its options and record)."""
    res, other = simulate(inst, as_policy), simulate(inst, policy)
    return type(res)(policy=res.policy, records=other.records, summary=res.summary, options=res.options,
                     policy_data=res.policy_data, total_gpus=res.total_gpus)


def test_a_run_that_is_not_guarded_asrpt_is_not_covered_and_says_where():
    # FIFO's schedule (a real one: it passes the audit) presented as guarded A-SRPT's, with the
    # default kappa = 16 (no deadline is reached: only the order check can see it)
    inst = load_instance("instances/worked-example.json")
    cert = certify_guarded(inst, _relabelled(inst, "fifo", "a-srpt:adaptive=off"))
    assert cert.holds and not cert.covered
    assert cert.not_covered == (
        "not covered: (A2) fails at t = 0 for B: B waited though it fits beside the jobs ahead of it in the "
        "guarded order (they hold 0 of 4 GPUs, it needs 4)")
    # with exact data, a record of overdue jobs that the schedule contradicts is refused
    with pytest.raises(InvalidParameterError, match="after its deadline 3, but the run never made it overdue"):
        certify_guarded(inst, _relabelled(inst, "fifo-strict", "a-srpt:adaptive=off:kappa=1"))


def test_a_broken_bound_is_reported():
    # The certificate must be able to fail: a long job ahead of a short one on one GPU, run FIFO,
    # against guarded A-SRPT's bound with kappa = 1 (the short job's bound is 5, FIFO ends it at 101).
    inst = Instance(Cluster((Server(1),)), (Job("A", 0, 1, processing_time=100), Job("B", 1, 1, processing_time=1)))
    cert = certify_guarded(inst, _relabelled(inst, "fifo", "a-srpt:adaptive=off:kappa=1"))
    assert "per_job" in cert.failures() and cert.inequality("per_job").job == "B"
    assert not cert.covered and not cert.assumptions["(A2)"]


def test_other_runs_are_refused():
    inst = load_instance("instances/worked-example.json")
    with pytest.raises(InvalidParameterError, match="not guarded A-SRPT"):
        certify_guarded(inst, simulate(inst, "a-srpt-fluid"))


@settings(max_examples=40)
@given(gang_instances(max_jobs=9, max_mu=16), st.sampled_from([1, 2, 16]))
def test_theorem2_with_the_envelope_machine_and_corollary_2(inst, kappa):
    """Guarded A-SRPT on the envelope machine: covered, every inequality holds (Lemma 7's cost
    and Corollary 2's ratio to max(LB1, LB2) included), C~ recomputed by the envelope."""
    cert = certify_guarded_instance(inst, kappa=kappa, virtual="envelope")
    assert cert.virtual == "envelope" and cert.covered and cert.exact
    assert cert.failures() == [], cert.to_dict()
    assert cert.total_completion_time <= cert.ratio_bound * cert.lower_bound


def test_the_gang_machine_may_break_lemma_7s_cost_and_is_then_not_covered_by_corollary_2():
    """Counterexample 3's instance run by guarded A-SRPT on the gang machine: the virtual cost
    131 exceeds LB1 + LB2, so Corollary 2 has no proof there, yet Theorem 2 holds."""
    inst = Instance(Cluster((Server(6),)), tuple(Job(f"n{i}", 0, 1, processing_time=8) for i in range(5))
                    + (Job("w0", 0, 6, processing_time=7), Job("w1", 7, 6, processing_time=7)))
    cert = certify_guarded_instance(inst, virtual="gang")
    assert cert.covered and cert.holds and cert.virtual_total == 131
    assert not cert.inequality("virtual_cost").holds
    envelope = certify_guarded_instance(inst)
    assert envelope.inequality("virtual_cost").holds and envelope.virtual_total == Fraction(223, 3)


@settings(max_examples=30)
@given(gang_instances(max_jobs=8, max_mu=16), st.sampled_from([1, 16]))
def test_corollary_2_with_the_fluid_machine(inst, kappa):
    """The fluid machine has (V2) and is online, so Theorem 2 covers guarded A-SRPT on it, with
    Corollary 2's constant beta + mu_over (kappa + beta mu_under rho'); it lacks (V1), which the
    certificate reports without needing."""
    cert = certify_guarded_instance(inst, kappa=kappa, virtual="fluid")
    assert cert.virtual == "fluid" and cert.covered and cert.failures() in ([], ["virtual_length"])
    assert cert.ratio_bound == cert.beta + cert.mu_over * (cert.kappa + cert.beta * cert.mu_under * cert.rho_prime)


def test_hysteresis_runs_are_certified_and_the_order_check_reads_epsilon():
    """Theorem 2 allows any order among the jobs that are not overdue, so A-SRPT with SRSF's
    hysteresis (``epsilon``, issue 45) keeps its bound; the certificate rebuilds the order with
    the run's epsilon (the jobs running just before t ranked with their key times 1 - epsilon).
    Read without it, the same runs fail the order premise where epsilon changed the schedule."""
    import dataclasses

    from asrpt.theory.guarded import certify_guarded, run_guarded
    from asrpt.workloads.generators import generate_one

    changed = 0
    for seed in range(12):
        inst = generate_one("heavy_tailed", seed=seed, n_jobs=10, cluster="2x4")
        run = run_guarded(inst, kappa=1, epsilon=0.5)
        cert = certify_guarded(inst, run)
        assert cert.holds and cert.covered, (seed, cert.failures())
        if run.records != run_guarded(inst, kappa=1, epsilon=0).records:
            params = {**run.options["policy_params"], "epsilon": 0.0}     # read as if it had none
            blind = dataclasses.replace(run, options={**run.options, "policy_params": params})
            changed += not certify_guarded(inst, blind).covered
    assert changed, "epsilon changed no schedule: the test shows nothing"


def test_a_run_whose_parameters_are_missing_or_out_of_range_is_refused_not_certified():
    """A referee's cases: an exact epsilon (a Fraction, which the run's record used to drop) was
    read as 0 and an honest run reported not covered; a recorded epsilon that is not a number
    raised TypeError; a recorded kappa below 1 was accepted. The record now keeps a Fraction, so
    the exact run is certified with its own epsilon; a record without one is refused, and so is
    each bad value, in one line."""
    import dataclasses
    from fractions import Fraction

    from asrpt.errors import InvalidParameterError
    from asrpt.theory.guarded import certify_guarded, run_guarded
    from asrpt.workloads.generators import generate_one

    inst = generate_one("heavy_tailed", seed=2, n_jobs=8, cluster="2x4")
    exact = run_guarded(inst, kappa=1, epsilon=Fraction(1, 2))
    assert exact.options["policy_params"]["epsilon"] == Fraction(1, 2)
    cert = certify_guarded(inst, exact)
    assert cert.holds and cert.covered and cert.epsilon == Fraction(1, 2)
    unrecorded = {k: v for k, v in exact.options["policy_params"].items() if k != "epsilon"}
    with pytest.raises(InvalidParameterError, match="does not record its kappa, share and epsilon"):
        certify_guarded(inst, dataclasses.replace(exact, options={**exact.options, "policy_params": unrecorded}))
    run = run_guarded(inst, kappa=1)
    assert certify_guarded(inst, run).covered and certify_guarded(inst, run).epsilon == 0.5
    for key, value in (("epsilon", "0.5"), ("epsilon", [0.5]), ("epsilon", 1.0), ("kappa", 0.5), ("share", 0),
                       ("epsilon", float("nan")), ("kappa", True)):
        params = {**run.options["policy_params"], key: value}
        tampered = dataclasses.replace(run, options={**run.options, "policy_params": params})
        with pytest.raises(InvalidParameterError, match="the policy takes kappa >= 1"):
            certify_guarded(inst, tampered)
