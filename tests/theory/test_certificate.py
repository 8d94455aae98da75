"""Theorem 1's certificate (asrpt.theory.certificate): the worked example of proofs/theorem1.md,
the certificate on generated instances (abstract and DNN jobs, 1-64 GPUs, bunched and spread
arrivals, exact and noisy predictions with mu up to 100), CHK-18, the lemmas' inequalities, the
DNN iteration-boundary counterexample, the settings outside the theorem and the raise paths.

Tolerance: exact instances are compared exactly (Fractions); float runs with the certificate's
relative tolerance 1e-9. A float copy of an exact instance agrees with it except where the exact
run meets a tie that rounding may break the other way (``_tie``); on dyadic data it agrees always.
"""

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job, Parallelism, Server, load_instance
from asrpt.offline.bounds import release_bound, squashed_area_bound
from asrpt.sim import simulate
from asrpt.single import srpt_schedule
from asrpt.testing.strategies import dnn_instances, gang_instances
from asrpt.theory import certify, certify_instance, run_asrpt

WORKED = "instances/worked-example.json"
ALL = ("per_job", "total", "lemma2", "theorem", "lemma3", "lemma3_premise", "running",
       "per_job_refined")


def _dnn_boundary_instance(k: int) -> Instance:
    """One GPU: a one-iteration gpt2 job at 0, then k one-iteration resnet18_cifar jobs at 0.01."""
    jobs = [Job("A", 0, 1, model="gpt2", parallelism=Parallelism(1, 1, 1), iterations=1)]
    jobs += [Job(f"B{i}", Fraction(1, 100), 1, model="resnet18_cifar",
                 parallelism=Parallelism(1, 1, 1), iterations=1) for i in range(k)]
    return Instance(Cluster.homogeneous(1, 1, "A100"), tuple(jobs))


# --- the worked example (proofs/theorem1.md, Proposition 1) -------------------------------------


def test_model_md_section_9_certificate():
    cert = certify_instance(load_instance(WORKED))
    assert cert.exact and cert.covered and cert.holds and cert.failures() == []
    assert (cert.total_completion_time, cert.lb1, cert.lb2, cert.lower_bound) == (9, 8, 6, 8)
    assert cert.virtual_total == 6
    assert (cert.beta, cert.rho, cert.mu, cert.mu_over, cert.mu_under) == (1, 4, 1, 1, 1)
    assert cert.inequality("total").rhs == 32          # 8 + 4 * 6
    assert cert.ratio_bound == 5 and cert.bound == 40 and cert.ratio_to_lb == Fraction(9, 8)
    rows = {j.id: (j.completion, j.bound, j.rho, j.virtual_completion) for j in cert.jobs}
    assert rows == {"A": (5, 4 + Fraction(4, 3) * Fraction(7, 2), Fraction(4, 3), Fraction(7, 2)),
                    "B": (1, 1 + 4 * 1, 4, 1),
                    "C": (3, 1 + 2 + Fraction(3, 2), 1, Fraction(3, 2))}
    assert cert.inequality("per_job").job == "C" and cert.inequality("per_job").slack == Fraction(3, 2)
    assert all(j.blocked == 0 and j.restart == 0 for j in cert.jobs)


def test_certificate_serialises_with_every_inequality():
    d = certify_instance(load_instance(WORKED)).to_dict(jobs=True)
    assert set(d["inequalities"]) == set(ALL)
    assert d["holds"] is True and d["failures"] == [] and len(d["jobs"]) == 3
    assert d["inequalities"]["total"]["slack"] == 23


# --- the certificate on generated instances ------------------------------------------------------


@settings(max_examples=60)
@given(gang_instances(max_mu=100), st.sampled_from(["best_fit", "first_fit", "spread"]))
def test_certificate_holds_on_gang_instances_exactly(inst, placement):
    """Abstract jobs, M in 1..64, g_j in 1..M, bunched or spread arrivals, mu <= 100, exact data:
    every inequality of the proof holds exactly, and the run is covered by the theorem."""
    cert = certify_instance(inst, placement=placement)
    note(cert.to_dict())
    assert cert.exact and cert.covered
    assert cert.failures() == []
    assert cert.mu <= 100
    assert all(j.blocked == 0 for j in cert.jobs)


@settings(max_examples=30)
@given(gang_instances(max_jobs=10, min_gpus=32, max_gpus=64, arrivals="bunched", max_mu=100))
def test_certificate_holds_on_large_clusters_with_bunched_arrivals(inst):
    cert = certify_instance(inst)
    assert cert.covered and cert.failures() == []


@settings(max_examples=40)
@given(gang_instances(max_mu=1, exact=False), st.floats(0.1, 2.5), st.integers(0, 10**6))
def test_certificate_holds_with_noisy_predictions(inst, sigma, seed):
    """The noisy predictor with clip 10 (mu <= 100); float predictions, tolerance 1e-9."""
    cert = certify_instance(inst, predictor=f"noisy:sigma={sigma}:clip=10:seed={seed}")
    assert not cert.exact and cert.covered
    assert cert.mu <= 100 * (1 + 1e-9)
    assert cert.failures() == []


def _in_floats(inst: Instance) -> Instance:
    return inst.replace_jobs(
        Job(j.id, float(j.arrival), j.gpus, processing_time=float(j.processing_time),
            predicted_processing_time=None if j.predicted_processing_time is None
            else float(j.predicted_processing_time)) for j in inst.jobs)


def _dyadic(inst: Instance) -> Instance:
    """``inst`` with data floats hold exactly: M rounded up to a power of two (servers of up to
    8 GPUs), arrivals and processing times to quarters, predictions to 1/64 (at least 1/64)."""
    m = 1 << (inst.cluster.total_gpus - 1).bit_length()
    q = lambda x, d: Fraction(round(Fraction(x) * d), d)
    return Instance(Cluster.homogeneous(m // min(8, m), min(8, m)), tuple(
        Job(j.id, q(j.arrival, 4), j.gpus, processing_time=q(j.processing_time, 4),
            predicted_processing_time=None if j.predicted_processing_time is None
            else max(Fraction(1, 64), q(j.predicted_processing_time, 64))) for j in inst.jobs))


def _tie(inst: Instance) -> str | None:
    """Where the exact run meets a tie that a float run may break the other way, else None.

    Two kinds: ``"virtual"``, a tie of the fluid machine, and ``"events"``, an event of the
    cluster at the same instant as another (a completion at an arrival or at another
    completion: in floats the two may come an ulp apart, in either order). For the first,
    preemptive SRPT on the virtual sizes is replayed arrival by arrival: a tie is two unfinished
    jobs with equal remaining virtual work at an arrival, unless both are untouched twins (same
    gang, size and prediction: a float run computes them alike). Between arrivals no tie can
    form (only the job in service moves, away from the others), and where no arrival meets one
    every SRPT choice is unique, so the replay needs no tie-break.
    """
    result = run_asrpt(inst)
    arrivals = [j.arrival for j in inst.jobs]
    completions = [r.completion for r in result.records]
    sizes = result.policy_record.sizes
    jobs = {j.id: j for j in inst.jobs}
    twin = lambda j: (j.gpus, j.processing_time, j.predicted_processing_time)
    remaining: dict = {}
    now = min(arrivals)
    for t in sorted(set(arrivals)):
        budget = t - now
        while budget > 0 and remaining:
            k = min(remaining, key=remaining.get)
            served = min(budget, remaining[k])
            budget -= served
            remaining[k] -= served
            if remaining[k] == 0:
                del remaining[k]
        now = t
        remaining.update({j.id: sizes[j.id] for j in inst.jobs if j.arrival == t})
        for a, b in itertools.combinations(remaining, 2):
            untouched_twins = (remaining[a] == sizes[a] and remaining[b] == sizes[b]
                               and twin(jobs[a]) == twin(jobs[b]))
            if remaining[a] == remaining[b] and not untouched_twins:
                return "virtual"
    if len(set(completions)) < len(completions) or set(completions) & set(arrivals):
        return "events"
    return None


_NAMES = ("total_completion_time", "lb1", "lb2", "virtual_total", "mu", "bound")


@settings(max_examples=15)
@given(gang_instances(max_jobs=6, max_mu=16))
def test_float_run_agrees_with_exact_run(inst):
    """The same instance in floats: its certificate holds, and agrees with the exact one to
    1e-9 unless the exact run meets a tie (:func:`_tie`) that rounding may break the other way,
    giving a different, equally valid A-SRPT run."""
    exact, approx = certify_instance(inst), certify_instance(_in_floats(inst))
    assert exact.exact and not approx.exact and approx.failures() == []
    differ = [n for n in _NAMES if float(getattr(approx, n)) != pytest.approx(float(getattr(exact, n)), rel=1e-9)]
    note(f"differ: {differ}")
    assert not differ or _tie(inst)


def test_float_run_may_order_a_completion_and_an_arrival_the_other_way():
    """A found counterexample (one GPU): j1 completes exactly when j2 arrives at 8/3. In floats
    the completion comes an ulp late, j2 (ahead in the virtual order: j1 was predicted at
    129/64) preempts j1 with an ulp of work left, and j1 completes after j2, one unit later."""
    F = Fraction
    spec = [("j0", F(2, 3), 1), ("j1", F(5, 3), F(129, 64)), ("j2", F(8, 3), 1)]
    inst = Instance(Cluster.homogeneous(1, 1), tuple(
        Job(n, a, 1, processing_time=1, predicted_processing_time=p) for n, a, p in spec))
    exact, approx = certify_instance(inst), certify_instance(_in_floats(inst))
    assert exact.total_completion_time == 8 and approx.total_completion_time == pytest.approx(9)
    assert exact.failures() == [] and approx.failures() == []
    assert _tie(inst) == "events"


@settings(max_examples=30)
@given(gang_instances(max_jobs=6, max_mu=16).map(_dyadic))
def test_float_run_equals_exact_run_on_dyadic_data(inst):
    """Where every number of the run is a float exactly (power-of-two M, dyadic times), the
    float run is the exact run: the same completion times and the same certificate."""
    approx_inst = _in_floats(inst)
    exact, approx = certify_instance(inst), certify_instance(approx_inst)
    assert exact.failures() == [] and approx.failures() == []
    assert run_asrpt(approx_inst).completion_times == run_asrpt(inst).completion_times
    for name in _NAMES:
        assert float(getattr(approx, name)) == pytest.approx(float(getattr(exact, name)), rel=1e-12)


def test_float_run_may_break_an_exact_tie_the_other_way():
    """A found counterexample: at 11/6, j2 has 2/3 virtual work left and j3 arrives with 8/12;
    exactly a tie (j2 stays ahead, TCT 68/3), in floats 8/12 < 2 - (11/6 - 1/2) puts j3 first
    and the 12-GPU j2 waits for it (TCT 28.5). Both certificates hold; the tie is detected."""
    F = Fraction
    spec = [("j0", 0, 1, 1), ("j1", 0, 1, 1), ("j2", F(1, 2), 12, 2), ("j3", F(11, 6), 1, 8),
            ("j4", F(11, 6), 1, 1), ("j5", F(11, 6), 1, 1)]
    inst = Instance(Cluster.homogeneous(6, 2), tuple(Job(n, a, g, processing_time=p) for n, a, g, p in spec))
    exact, approx = certify_instance(inst), certify_instance(_in_floats(inst))
    assert exact.total_completion_time == F(68, 3) and approx.total_completion_time == pytest.approx(28.5)
    assert exact.failures() == [] and approx.failures() == []
    assert _tie(inst) == "virtual"
    shorter = inst.replace_jobs(Job(j.id, j.arrival, j.gpus, processing_time=7 if j.id == "j3" else j.processing_time)
                                for j in inst.jobs)   # 7/12 < 2/3: no tie, j3 first in both
    assert _tie(shorter) != "virtual"
    assert float(certify_instance(shorter).total_completion_time) == pytest.approx(
        certify_instance(_in_floats(shorter)).total_completion_time, rel=1e-9)


@settings(max_examples=25)
@given(dnn_instances(max_mu=16))
def test_certificate_on_dnn_jobs_fails_only_where_a_job_was_blocked(inst):
    """DNN jobs (measured beta): every inequality the proof needs beyond instant preemption holds,
    and the certificate of proofs/theorem1.md, Proposition 1, can fail only where some job was blocked (X_j > 0),
    i.e. waited behind a job stopping at its iteration boundary (see proofs/theorem1.md)."""
    cert = certify_instance(inst, preemption_point="iteration")
    note(cert.to_dict(jobs=True))
    # the late preemption breaks premise (A3) exactly where a job was blocked
    assert cert.assumptions["(A3)"] == all(j.blocked == 0 for j in cert.jobs)
    for name in ("lemma2", "lemma3", "running", "per_job_refined"):
        assert cert.inequality(name).holds, name
    for job in cert.jobs:
        if not job.holds:
            assert job.blocked > 0
    if not cert.inequality("total").holds:
        assert not cert.inequality("lemma3_premise").holds


@settings(max_examples=25)
@given(dnn_instances(max_mu=16))
def test_certificate_holds_on_dnn_jobs_under_the_theorems_assumptions(inst):
    """DNN jobs with preemption taking effect at once (the default of certify_instance): the
    run is covered by Theorem 1 and every inequality holds, with no blocked time."""
    cert = certify_instance(inst)
    note(cert.to_dict(jobs=True))
    assert cert.covered and cert.holds and not cert.failures()
    assert all(j.blocked == 0 for j in cert.jobs)


def test_regression_dnn_iteration_boundary_preemption_breaks_theorem_1():
    """Minimal counterexample to Theorem 1 for DNN jobs that stop at iteration boundaries
    (proofs/theorem1.md, Counterexample 1): on one GPU, a
    one-iteration gpt2 job (4.5 s) starts at 0; two 0.03 s jobs arriving at 0.01 cannot preempt
    it mid-iteration. With M = 1, LB2 = OPT (SRPT is optimal), and ALG > 2 OPT = beta (1 + rho mu)
    OPT. The refined inequalities with the measured blocked time X_j still hold."""
    cert = certify_instance(_dnn_boundary_instance(2), preemption_point="iteration")
    assert not cert.covered and not cert.assumptions["(A3)"]
    assert cert.not_covered.startswith("not covered: (A3) fails at t = 1/100 for B0")
    assert (cert.beta, cert.rho, cert.mu, cert.ratio_bound) == (1, 1, 1, 2)
    assert cert.lower_bound == cert.lb2
    assert cert.ratio_to_lb > 2.9
    assert set(cert.failures()) == {"per_job", "total", "theorem", "lemma3_premise"}
    assert cert.inequality("per_job_refined").holds and cert.inequality("lemma3").holds
    blocked = {j.id: j.blocked for j in cert.jobs}
    assert blocked["A"] == 0 and blocked["B0"] > 4 and blocked["B1"] > 4


def test_dnn_blocking_grows_with_the_number_of_small_jobs():
    ratios = [certify_instance(_dnn_boundary_instance(k), preemption_point="iteration").ratio_to_lb
              for k in (1, 2, 4)]
    assert ratios[0] < ratios[1] < ratios[2] and ratios[2] > 4


def test_immediate_preemption_restores_the_theorem_for_dnn_jobs():
    """The same instances under the theorem's assumption that preemption takes effect at once
    (simulate(..., preemption_point="immediate"), the default of certify_instance): every
    inequality holds and nothing is blocked."""
    for k in (1, 2, 4):
        cert = certify_instance(_dnn_boundary_instance(k))
        assert cert.covered and cert.holds and not cert.failures()
        assert all(j.blocked == 0 for j in cert.jobs)


# --- CHK-18 and the lemmas' inequalities --------------------------------------------------------


@settings(max_examples=40)
@given(gang_instances(max_jobs=8))
def test_chk18_exact_predictions_virtual_cost_equals_lb2(inst):
    """CHK-18: with exact predictions A-SRPT's virtual cost sum C~_j is exactly LB2 (the squashed
    area bound), and mu = 1."""
    for predictor in ("instance", "oracle"):
        cert = certify_instance(inst, predictor=predictor)
        assert cert.mu == 1 and cert.exact
        assert cert.virtual_total == cert.lb2 == squashed_area_bound(inst)
        assert cert.inequality("lemma2").slack == 0


@settings(max_examples=30)
@given(gang_instances(max_jobs=7, max_mu=100))
def test_lemma2_virtual_cost_is_srpt_on_predicted_sizes_within_mu_over_lb2(inst):
    cert = certify_instance(inst)
    sizes = [j.gpus * (j.predicted_processing_time or j.processing_time) / inst.cluster.total_gpus
             for j in inst.jobs]
    srpt = srpt_schedule([j.arrival for j in inst.jobs], sizes, ids=[j.id for j in inst.jobs])
    assert cert.virtual_total == srpt.total_completion_time
    assert cert.virtual_total <= cert.mu_over * cert.lb2


@settings(max_examples=30)
@given(gang_instances(max_jobs=7, max_mu=100))
def test_lemma1_and_quantities_from_the_run(inst):
    """LB1 and LB2 are the offline module's bounds (unit weights); rho_j and beta as defined."""
    cert = certify_instance(inst)
    m = inst.cluster.total_gpus
    assert cert.lb1 == release_bound(inst) and cert.lb2 == squashed_area_bound(inst)
    assert cert.rho == max(Fraction(m, m - j.gpus + 1) for j in inst.jobs)
    assert cert.beta == 1
    assert cert.total_completion_time >= cert.lower_bound


@settings(max_examples=30)
@given(gang_instances(max_jobs=8, max_mu=100))
def test_lemma3_waiting_bound_per_job(inst):
    """Lemma 3: W_j <= beta mu_under rho_j C~_j for every job, with no blocked time (abstract jobs
    stop at once)."""
    cert = certify_instance(inst)
    for job in cert.jobs:
        assert job.blocked == 0
        assert job.waiting <= job.waiting_bound
        assert job.waiting == job.completion - job.arrival - job.processing_time


# --- outside the theorem: what is recorded --------------------------------------------------------


def test_adaptive_run_uses_final_predictions_and_is_not_covered():
    inst = Instance(Cluster((Server(2),)), (
        Job("A", 0, 2, processing_time=10, predicted_processing_time=2), Job("B", 3, 2, processing_time=1)))
    cert = certify(inst, run_asrpt(inst, adaptive="doubling"))
    assert cert.predictions == "final" and not cert.covered
    assert not cert.assumptions["(A1)"]
    static = certify_instance(inst)
    assert static.predictions == "initial" and static.mu_under == 5 and static.covered


def test_preemption_cost_and_strict_allocation_are_flagged():
    inst = load_instance(WORKED)
    # a cost that no preemption pays leaves the run as it is: still covered
    assert certify_instance(inst, preemption_cost=1).covered
    preempted = Instance(Cluster((Server(1),)), (Job("j0", 0, 1, processing_time=2),
                                                 Job("j1", Fraction(1, 2), 1, processing_time=1)))
    costly = certify_instance(preempted, preemption_cost=1)
    assert not costly.covered and not costly.assumptions["(A3)"]
    assert costly.not_covered == ("not covered: (A3) fails at t = 3/2 for j0: preemption cost 1: j0 restarted, "
                                  "holding GPUs without progress")
    strict = certify_instance(inst, backfill=False)
    assert not strict.covered and not strict.assumptions["(A2)"]
    assert "backfill is off" in strict.not_covered


def test_strict_allocation_creates_blocked_time():
    """Without backfilling a small job waits behind a big one that does not fit, while the jobs
    ahead of it hold fewer than M - g_j + 1 GPUs: X_j > 0, Lemma 3's premise fails."""
    inst = Instance(Cluster((Server(4),)), (
        Job("A", 0, 2, processing_time=4), Job("B", 1, 4, processing_time=1),
        Job("C", 1, 1, processing_time=10)))
    cert = certify_instance(inst, backfill=False)
    assert cert.job("C").blocked > 0 and not cert.inequality("lemma3_premise").holds
    assert certify_instance(inst).job("C").blocked == 0


# --- raise paths ------------------------------------------------------------------------------


def test_certify_rejects_runs_without_asrpt_data():
    inst = load_instance(WORKED)
    with pytest.raises(InvalidParameterError, match="policy_data lacks virtual_completion_times"):
        certify(inst, simulate(inst, "fifo"))


def test_certify_rejects_a_run_of_another_instance():
    inst = load_instance(WORKED)
    other = inst.replace_jobs(Job(j.id, j.arrival + 1, j.gpus, processing_time=j.processing_time)
                              for j in inst.jobs)
    with pytest.raises(InvalidParameterError, match="has arrival = 0, but the instance gives 1"):
        certify(other, run_asrpt(inst))
    with pytest.raises(InvalidParameterError, match="records"):
        certify(inst.replace_jobs(inst.jobs[:2]), run_asrpt(inst))
    longer = inst.replace_jobs(Job(j.id, j.arrival, j.gpus, processing_time=j.processing_time + 1)
                               for j in inst.jobs)
    with pytest.raises(InvalidParameterError, match="has work = 4, but the instance gives 5"):
        certify(longer, run_asrpt(inst))


@pytest.mark.parametrize("call, message", [
    (lambda inst: certify(inst, "run"), "'result' parameter of certify"),
    (lambda inst: certify(inst, run_asrpt(inst), tolerance=-1), "'tolerance' parameter of certify"),
    (lambda inst: certify("inst", run_asrpt(inst)), "'instance' parameter of certify"),
    (lambda inst: run_asrpt(inst, adaptive="sometimes"), "'adaptive' parameter of run_asrpt"),
    (lambda inst: run_asrpt(inst, preemption_cost=-1), "'preemption_cost' parameter of run_asrpt"),
    (lambda inst: certify_instance(inst, backfill="yes"), "'backfill' parameter of certify_instance"),
    (lambda inst: run_asrpt(inst, predictor="psychic"), "unknown predictor"),
    (lambda inst: certify_instance(inst).inequality("nope"), "no inequality 'nope'"),
    (lambda inst: certify_instance(inst).job("Z"), "no job with id 'Z'"),
])
def test_invalid_parameters_raise_one_line(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call(load_instance(WORKED))
