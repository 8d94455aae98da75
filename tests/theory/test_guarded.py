"""Theorem 2 (proofs/theorem2.md): guarded A-SRPT's per-instance certificate holds on every
example under the theorem's assumptions, exactly; and the flow-time figures are right."""

import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.instance import load_instance
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
    # completions 5, 1, 3 minus arrivals 0, 0, 1; LB = max(8, 6) = 8 minus 1
    assert (cert.flow_time, cert.flow_lower_bound, cert.virtual_flow_time) == (8, 7, 8)
    assert cert.inequality("gang_machine").holds


def test_a_broken_bound_is_reported():
    # The certificate must be able to fail: a run whose records are not what guarded A-SRPT did
    # (FIFO's, relabelled) against a tiny guard.
    inst = load_instance("instances/worked-example.json")
    res = simulate(inst, "a-srpt:adaptive=off:kappa=1")
    slow = simulate(inst, "fifo-strict")
    fake = type(res)(policy=res.policy, records=tuple(
        dataclasses.replace(r, completion=r.completion + 100) for r in slow.records),
        summary=res.summary, options=res.options, policy_data=res.policy_data, total_gpus=res.total_gpus)
    assert "per_job" in certify_guarded(inst, fake).failures()


def test_other_runs_are_refused():
    inst = load_instance("instances/worked-example.json")
    with pytest.raises(InvalidParameterError, match="not guarded A-SRPT"):
        certify_guarded(inst, simulate(inst, "a-srpt-fluid"))
