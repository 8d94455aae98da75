"""Theorem 3 (proofs/theorem3.md): the time-shared combination of A-SRPT and water-filling, its
per-instance certificate, and its robustness when the predictions mislead."""

from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job, load_instance
from asrpt.testing.strategies import gang_instances
from asrpt.theory.guarded import certify_guarded_instance
from asrpt.theory.robust import certify_robust, certify_robust_instance, run_robust

LAMS = st.sampled_from([Fraction(1, 2), Fraction(3, 4), Fraction(9, 10), Fraction(1, 10)])


@settings(max_examples=60, deadline=None)
@given(gang_instances(max_jobs=8, max_mu=16), LAMS)
def test_theorem3_certificate_holds(inst, lam):
    cert = certify_robust_instance(inst, lam=lam)
    assert cert.exact and cert.covered
    assert cert.failures() == [], cert.to_dict()
    assert cert.ratio_to_lb <= cert.robust_ratio_bound
    assert cert.flow_time >= cert.flow_lower_bound


@settings(max_examples=30, deadline=None)
@given(gang_instances(max_jobs=7, max_mu=64, arrivals="bunched"), st.sampled_from(["fifo", "sjf", "srsf"]))
def test_the_robust_bound_holds_whatever_the_consistent_policy(inst, policy):
    cert = certify_robust_instance(inst, lam=Fraction(1, 2), policy=policy)
    assert not cert.covered
    assert cert.failures() == [], cert.to_dict()
    assert "consistent_closed_form" not in [q.name for q in cert.inequalities]


def _stepped_completions(inst, run, steps=20000):
    """The combination integrated by brute force on a uniform grid (floats): job j's progress is
    lam * [running in the copy at t * lam] / size + s * share_j(t) / q_j."""
    horizon = float(max(max(run.consistent_completions.values()), max(run.robust_completions.values())))
    dt = horizon / steps
    lam, s = float(run.lam), float(run.speed)
    done = {j.id: 0.0 for j in inst.jobs}
    out = {}
    for step in range(steps):
        t = (step + 0.5) * dt
        for idx, (job, rec) in enumerate(zip(inst.jobs, run.copy.records)):
            if job.id in out:
                continue
            rate = 0.0
            for seg in rec.segments:
                if (seg.start + seg.restart) / lam <= t < seg.end / lam:
                    rate += lam / ((seg.tau or 1) * rec.work)
            for piece in run.waterfill.pieces:
                if piece.start <= t < piece.end:
                    rate += sum(s * float(x) for k, x in piece.shares if k == idx) / float(run.sizes[job.id])
            done[job.id] += rate * dt
            if done[job.id] >= 1 - 1e-12:
                out[job.id] = t
    return out


def test_combined_completions_agree_with_a_stepped_integration():
    inst = load_instance("instances/worked-example.json")
    run = run_robust(inst, lam=Fraction(3, 5))
    stepped = _stepped_completions(inst, run)
    horizon = float(max(run.robust_completions.values()))
    for job_id, c in run.completion_times.items():
        assert float(c) == pytest.approx(stepped[job_id], abs=3 * horizon / 20000)


def _misleading():
    # one long job predicted tiny, six short ones predicted huge, all at 0 on one GPU: A-SRPT with
    # these predictions runs the long one first and every short job waits behind it
    jobs = [Job("long", 0, 1, processing_time=1000, predicted_processing_time=1)]
    jobs += [Job(f"s{i}", 0, 1, processing_time=1, predicted_processing_time=10_000) for i in range(6)]
    return Instance(Cluster.homogeneous(1, 1), tuple(jobs))


def test_misleading_predictions_are_capped():
    inst = _misleading()
    alone = certify_guarded_instance(inst)
    combined = certify_robust_instance(inst, lam=Fraction(1, 2))
    alone_ratio = alone.total_completion_time / alone.lower_bound
    assert combined.failures() == []
    assert alone_ratio > 6                              # 7021 / 1027
    assert combined.ratio_to_lb < 3 < alone_ratio       # the water-filling copy finishes the short jobs
    assert combined.ratio_to_lb <= combined.robust_ratio_bound == 18


@pytest.mark.parametrize("field", ["completion_times", "robust_completions", "consistent_completions", "sizes"])
def test_a_tampered_combination_is_refused(field):
    """Every number of the combination is recomputed from the instance and the (audited)
    consistent copy; a run whose numbers differ is refused, never certified."""
    inst = load_instance("instances/worked-example.json")
    run = run_robust(inst)
    assert certify_robust(inst, run).holds
    late = replace(run, **{field: {k: v + 1000 for k, v in getattr(run, field).items()}})
    with pytest.raises(InvalidParameterError, match=f"the run's {field} of job"):
        certify_robust(inst, late)
    copy = run.copy
    moved = replace(copy, records=(replace(copy.records[0], completion=copy.records[0].completion + 1),)
                    + copy.records[1:])
    with pytest.raises(InvalidParameterError, match="consistent copy"):
        certify_robust(inst, replace(run, copy=moved))


def test_other_instances_are_refused():
    inst = load_instance("instances/worked-example.json")
    other = inst.replace_jobs(replace(j, id=j.id + "x") for j in inst.jobs)
    with pytest.raises(InvalidParameterError, match="not the instance's"):
        certify_robust(other, run_robust(inst))


@pytest.mark.parametrize("lam", [0, 1, -0.5, 2])
def test_lam_outside_the_open_interval_is_refused(lam):
    with pytest.raises(InvalidParameterError, match="lam"):
        run_robust(load_instance("instances/worked-example.json"), lam=lam)


def test_the_robust_copy_is_online_with_a_stretch_bound():
    """The robust copy uses q_j = stretch * P*_j with the stretch fixed in advance: it does not
    depend on the consistent copy (any policy gives the same robust completions), and the robust
    ratio bound is 9 stretch / (1 - lam)."""
    inst = load_instance("instances/worked-example.json")
    a, b = run_robust(inst), run_robust(inst, policy="fifo")
    assert a.robust_completions == b.robust_completions and a.sizes == {"A": 4, "B": 1, "C": 2}
    wider = run_robust(inst, stretch=2)
    assert wider.sizes == {"A": 8, "B": 2, "C": 4}
    cert = certify_robust(inst, wider)
    assert cert.holds and cert.robust_ratio_bound == 36 and cert.beta == 2 and cert.assumed == ()
    with pytest.raises(InvalidParameterError, match="stretch"):
        run_robust(inst, stretch=Fraction(1, 2))
