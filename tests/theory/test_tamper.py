"""A certificate cannot be fooled by a tampered record (issue 43).

Every field of every record a certificate reads (the job records, their segments, and A-SRPT's
record of its virtual run) is changed one at a time after an honest run; each certificate must
refuse the run with a one-line error naming the job and the field, never report it as holding.
The honest run itself must pass, so each test can fail both ways.
"""

from dataclasses import replace
from fractions import Fraction

import pytest

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job, Parallelism, Server, load_instance
from asrpt.policies.asrpt import ASRPT
from asrpt.sim import simulate
from asrpt.theory.certificate import certify, run_asrpt
from asrpt.theory.guarded import certify_guarded, run_guarded

WORKED = "instances/worked-example.json"

#: Job record field -> a tampered value (from the honest record)
JOB_FIELDS = {
    "id": lambda r: r.id + "x",
    "arrival": lambda r: r.arrival + 1,
    "gpus": lambda r: r.gpus + 1,
    "weight": lambda r: r.weight + 1,
    "start": lambda r: r.start + Fraction(1, 2),
    "completion": lambda r: r.completion * 100,
    "preemptions": lambda r: r.preemptions + 1,
    "work": lambda r: r.work * 2,
    "tau_star": lambda r: 1.0 if r.tau_star is None else r.tau_star / 2,
    "processing_time": lambda r: r.processing_time * 2,
    "beta": lambda r: r.beta * 3,
}
#: Segment field -> a tampered value (of the record's last segment)
SEGMENT_FIELDS = {
    "start": lambda s: s.start - Fraction(1, 2),
    "end": lambda s: s.end + 1,
    "servers": lambda s: ((s.servers[0][0], s.servers[0][1] + 1),) + s.servers[1:],
    "restart": lambda s: Fraction(1, 2),
}
#: A-SRPT's virtual-run record field -> a tampered value
RUN_FIELDS = {
    "virtual": lambda run: "gang" if run.virtual == "fluid" else "fluid",
    "completion_times": lambda run: {k: v * 100 for k, v in run.completion_times.items()},
    "sizes": lambda run: {k: v * 2 for k, v in run.sizes.items()},
    "initial_predictions": lambda run: {k: v * 3 for k, v in run.initial_predictions.items()},
    "predictions": lambda run: {k: v * 3 for k, v in run.predictions.items()},
    "adaptive_updates": lambda run: run.adaptive_updates + 2,
}


def _with_record(result, index, **changes):
    records = list(result.records)
    records[index] = replace(records[index], **changes)
    return replace(result, records=tuple(records))


def _with_run(result, **changes):
    run = replace(result.policy_record, **changes)
    return replace(result, policy_record=run, policy_data=run.to_dict())


def _runs():
    inst = load_instance(WORKED)
    return [("theorem 1", certify, inst, run_asrpt(inst)),
            ("theorem 2", certify_guarded, inst, run_guarded(inst, kappa=1))]


@pytest.mark.parametrize("name, check, inst, result", _runs(), ids=lambda x: x if isinstance(x, str) else "")
def test_the_honest_run_passes(name, check, inst, result):
    cert = check(inst, result)
    assert cert.holds and cert.covered and cert.not_covered == ""


@pytest.mark.parametrize("field", sorted(JOB_FIELDS))
@pytest.mark.parametrize("name, check, inst, result", _runs(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_tampered_job_record_is_refused(name, check, inst, result, field):
    for index, rec in enumerate(result.records):
        bad = _with_record(result, index, **{field: JOB_FIELDS[field](rec)})
        with pytest.raises(InvalidParameterError, match=f"{rec.id}|{field}"):
            check(inst, bad)


@pytest.mark.parametrize("field", sorted(SEGMENT_FIELDS))
@pytest.mark.parametrize("name, check, inst, result", _runs(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_tampered_segment_is_refused(name, check, inst, result, field):
    for index, rec in enumerate(result.records):
        seg = replace(rec.segments[-1], **{field: SEGMENT_FIELDS[field](rec.segments[-1])})
        bad = _with_record(result, index, segments=rec.segments[:-1] + (seg,))
        with pytest.raises(InvalidParameterError, match=rec.id):
            check(inst, bad)


@pytest.mark.parametrize("field", sorted(RUN_FIELDS))
@pytest.mark.parametrize("name, check, inst, result", _runs(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_tampered_virtual_run_record_is_refused(name, check, inst, result, field):
    bad = _with_run(result, **{field: RUN_FIELDS[field](result.policy_record)})
    with pytest.raises(InvalidParameterError):
        check(inst, bad)


def test_a_tampered_overdue_record_is_refused():
    # J0 and J3 finish after their deadlines (kappa = 1; J0 and J3 are under-predicted)
    inst = Instance(Cluster((Server(4),)), tuple(
        Job(n, a, g, processing_time=p, predicted_processing_time=q)
        for n, a, g, p, q in [("J0", 1, 1, 3, 1), ("J1", 3, 4, 4, 6), ("J2", 3, 2, 1, 4), ("J3", 0, 4, 4, 5)]))
    result = run_guarded(inst, kappa=1, virtual="gang")
    assert certify_guarded(inst, result).covered
    run = result.policy_record
    assert set(run.overdue_at) == {"J0", "J3"}
    late = {k: v + 1 for k, v in run.overdue_at.items()}
    with pytest.raises(InvalidParameterError, match="became overdue at"):
        certify_guarded(inst, _with_run(result, overdue_at=late))
    with pytest.raises(InvalidParameterError, match="never made it overdue"):
        certify_guarded(inst, _with_run(result, overdue_at={}))


def test_virtual_completions_scaled_by_100_are_refused_from_json_too():
    """The issue's attack: every C~_j x 100 after the run, on a result read back from JSON (no
    typed record, only policy_data)."""
    inst = load_instance(WORKED)
    for check, result in ((certify, run_asrpt(inst)), (certify_guarded, run_guarded(inst))):
        data = dict(result.policy_data)
        data["virtual_completion_times"] = {k: v * 100 for k, v in data["virtual_completion_times"].items()}
        bad = replace(result, policy_data=data, policy_record=None)
        with pytest.raises(InvalidParameterError, match="virtual completion C~ = "):
            check(inst, bad)


def test_dnn_segment_iteration_time_is_audited():
    """DNN jobs: a segment's tau below the best iteration time on its GPU counts, or one that
    does not add up to the job's iterations, is refused."""
    inst = Instance(Cluster.homogeneous(1, 2, "A100"), (
        Job("A", 0, 1, model="resnet18_cifar", parallelism=Parallelism(1, 1, 1), iterations=50),
        Job("B", Fraction(1, 10), 2, model="resnet18_cifar", parallelism=Parallelism(2, 1, 1), iterations=20)))
    result = run_asrpt(inst)
    assert certify(inst, result).covered
    for index, rec in enumerate(result.records):
        seg = rec.segments[-1]
        for tau in (seg.tau / 2, seg.tau * 2):
            bad = _with_record(result, index, segments=rec.segments[:-1] + (replace(seg, tau=tau),))
            with pytest.raises(InvalidParameterError, match=rec.id):
                certify(inst, bad)


def test_overfilled_servers_are_refused():
    """Two jobs' segments on the same server above its GPUs: the audit sweeps every server."""
    inst = Instance(Cluster((Server(2),)), (Job("A", 0, 2, processing_time=2), Job("B", 0, 2, processing_time=2)))
    result = run_asrpt(inst)
    b = result.records[1]
    moved = replace(b, start=0, completion=2, segments=(replace(b.segments[0], start=0, end=2),))
    with pytest.raises(InvalidParameterError, match="server 0 holds 4 GPUs"):
        certify(inst, replace(result, records=(result.records[0], moved)))


# --- broken premises: "not covered", with where and when ----------------------------------------

def _yarn_instance():
    return Instance(Cluster((Server(4), Server(4))), (
        Job("A", 0, 3, processing_time=10), Job("B", 0, 3, processing_time=10), Job("C", 1, 2, processing_time=1)))


def test_a_placer_that_cannot_place_breaks_a4_not_the_theorem():
    inst = _yarn_instance()
    cert = certify(inst, run_asrpt(inst, placement="yarn"))
    assert not cert.covered and "per_job" in cert.failures()
    assert cert.not_covered == "not covered: (A4) fails at t = 1 for C: C waited with 2 GPUs idle (it needs 2)"
    guarded = certify_guarded(inst, simulate(inst, ASRPT(adaptive="off"), preemption_point="immediate",
                                             placement="yarn"))
    assert guarded.not_covered.startswith("not covered: (A4) fails at t = 1 for C")
    assert certify(inst, run_asrpt(inst)).covered


def test_theorem_1_names_the_virtual_machine_it_is_stated_for():
    inst = _yarn_instance()
    run = simulate(inst, ASRPT(adaptive="off", virtual="gang", order="virtual"), preemption_point="immediate")
    cert = certify(inst, run)
    assert cert.not_covered == ("not covered: (A2) fails: the run followed the gang virtual machine, the theorem "
                                "is stated for fluid")


# --- floats ---------------------------------------------------------------------------------------

def test_float_virtual_completions_inflated_are_refused():
    """With float data a C~ record may differ from the recomputation by a near-tie (two jobs whose
    order a rounding flipped swap their completions); anything else is refused, however well it
    satisfies the proofs' properties (every C~ x 100 does)."""
    inst = Instance(Cluster((Server(2),)), (Job("A", 0.0, 2, processing_time=3.3, predicted_processing_time=3.3),
                                            Job("B", 0.1, 1, processing_time=0.7, predicted_processing_time=0.7),
                                            Job("C", 0.2, 1, processing_time=0.7, predicted_processing_time=0.7)))
    for check, result in ((certify, run_asrpt(inst)), (certify_guarded, run_guarded(inst, kappa=1))):
        assert check(inst, result).covered
        run = result.policy_record
        bad = _with_run(result, completion_times={k: v * 100 for k, v in run.completion_times.items()},
                        **({"overdue_at": {}} if run.overdue_at is not None else {}))
        with pytest.raises(InvalidParameterError, match="beyond a near-tie of floats"):
            check(inst, bad)


def test_a_remaining_time_below_rounding_still_wakes_the_guard():
    """Floats: at 0.45 j3's fluid remaining time (5.5e-17) is below now's rounding, so its virtual
    completion reads as "now" after the decision's advance; the policy wakes just after, and j3 is
    overdue at its deadline (within rounding), not at the next event (0.85)."""
    spec = [("j0", 0.45, 2, 1.1, 0.55), ("j1", 0, 2, 2.8, 5.6), ("j2", 0, 1, 2.1, 1.05), ("j3", 0.05, 2, 0.8, 0.4),
            ("j4", 0.15, 1, 0.7, 0.7)]
    inst = Instance(Cluster((Server(2),)), tuple(Job(n, a, g, processing_time=p, predicted_processing_time=q)
                                                 for n, a, g, p, q in spec))
    result = run_guarded(inst, kappa=1, share=0.5)
    assert result.policy_record.overdue_at["j3"] == pytest.approx(0.45, rel=1e-12)
    cert = certify_guarded(inst, result)
    assert cert.covered and cert.holds
