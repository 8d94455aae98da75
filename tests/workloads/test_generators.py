"""Instance generator families (asrpt.workloads.generators) and their hypothesis strategies:
seeded and byte-identical, recorded in the metadata, each family's defining property, and
one-line errors for bad parameters."""

import os
import statistics
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis.errors import InvalidArgument

from asrpt.errors import InvalidParameterError, TraceError
from asrpt.instance import dumps_instance, load_instance
from asrpt.sizes import processing_times
from asrpt.testing import strategies as S
from asrpt.theory import certify_instance
from asrpt.workloads import recurring_workload
from asrpt.workloads.generators import (ADVERSARIAL_PATTERNS, FAMILIES, adversarial_instance,
                                        bursty_instance, dnn_instance, family_names,
                                        generate, generate_files, generate_one, get_family,
                                        heavy_tailed_instance, instance_seed, philly_instance,
                                        recurring_instance, regenerate, starvation_instance,
                                        uniform_instance)

# Small, fast parameters for every family (the recurring, philly and dnn ones warm caches once).
SMALL = {
    "uniform": {"n_jobs": 5},
    "heavy_tailed": {"n_jobs": 6},
    "bursty": {"n_jobs": 7},
    "adversarial": {"n_jobs": 4},
    "philly": {"n_jobs": 5, "cluster": "2x8"},
    "recurring": {"n_jobs": 6, "cluster": "2x8"},
    "dnn": {"n_jobs": 3, "cluster": "1x8", "models": ["gpt2", "resnet50", "bert-base"]},
    "starvation": {"n_jobs": 12},
}


def distortion(inst):
    """max(1, max f) / min(1, min f) over the jobs' prediction factors (1 without predictions)."""
    fs = [Fraction(j.predicted_processing_time) / Fraction(j.processing_time)
          for j in inst.jobs if j.predicted_processing_time is not None]
    return max(fs + [Fraction(1)]) / min(fs + [Fraction(1)])


def test_registry_lists_every_family():
    assert family_names() == ("adversarial", "bursty", "dnn", "heavy_tailed", "philly",
                              "recurring", "starvation", "uniform")
    assert set(SMALL) == set(FAMILIES)
    assert get_family("heavy-tailed") is FAMILIES["heavy_tailed"]


@pytest.mark.parametrize("family", sorted(SMALL))
def test_same_call_same_bytes_recorded_and_regenerated(family):
    a = generate_one(family, seed=11, **SMALL[family])
    b = generate_one(family, seed=11, **SMALL[family])
    assert dumps_instance(a) == dumps_instance(b)
    other = generate_one(family, seed=12, **SMALL[family])
    assert dumps_instance(other) != dumps_instance(a)
    meta = a.metadata
    assert meta["family"] == family and meta["seed"] == 11
    assert meta["generator"] == f"asrpt.workloads.generators.{FAMILIES[family].function.__name__}"
    # every parameter is recorded, defaults included
    assert set(meta["params"]) == set(FAMILIES[family].defaults) - {"seed"}
    assert dumps_instance(regenerate(a)) == dumps_instance(a)


def test_series_files_are_byte_identical_across_two_calls(tmp_path):
    for family in ("uniform", "heavy_tailed", "adversarial", "philly"):
        one = generate_files(family, tmp_path / "a", n=3, seed=5, **SMALL[family])
        two = generate_files(family, tmp_path / "b", n=3, seed=5, **SMALL[family])
        for p, q in zip(one, two):
            assert os.path.basename(p) == os.path.basename(q)
            with open(p, "rb") as f, open(q, "rb") as g:
                assert f.read() == g.read()
        inst = load_instance(one[2])
        assert inst.metadata["series"] == {"seed": 5, "index": 2}
        assert inst.metadata["seed"] == instance_seed(5, 2)
        with open(one[2], encoding="utf-8") as fh:
            assert dumps_instance(regenerate(inst)) == fh.read()


def test_series_member_does_not_depend_on_the_series_length():
    short = generate("uniform", n=2, seed=3, n_jobs=4)
    long = generate("uniform", n=5, seed=3, n_jobs=4)
    assert long[:2] == short
    assert len({instance_seed(3, i) for i in range(100)} | {instance_seed(4, i) for i in range(100)}) == 200


def test_generate_files_is_idempotent_and_refuses_to_overwrite_other_content(tmp_path):
    paths = generate_files("uniform", tmp_path, n=2, seed=1, n_jobs=3)
    mtime = os.stat(paths[0]).st_mtime_ns
    assert generate_files("uniform", tmp_path, n=2, seed=1, n_jobs=3) == paths
    assert os.stat(paths[0]).st_mtime_ns == mtime  # same bytes: left alone
    with pytest.raises(InvalidParameterError, match="exists with other content"):
        generate_files("uniform", tmp_path, n=2, seed=2, n_jobs=3)
    generate_files("uniform", tmp_path, n=2, seed=2, n_jobs=3, force=True)
    assert load_instance(paths[1]).metadata["series"]["seed"] == 2
    seen = []
    generate_files("uniform", tmp_path / "p", n=3, seed=0, progress=lambda d, n: seen.append((d, n)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


# ---------------------------------------------------------------------------------------------
# Each family's defining property
# ---------------------------------------------------------------------------------------------

def test_uniform_ranges_demands_weights_and_prediction_distortion():
    inst = uniform_instance(60, cluster="2x4", min_processing_time=2, max_processing_time=7,
                            max_gap=3, max_job_gpus=6, max_weight=3, mu=4, seed=2)
    gaps = [b.arrival - a.arrival for a, b in zip(inst.jobs, inst.jobs[1:])]
    assert inst.jobs[0].arrival == 0 and all(0 <= g <= 3 and isinstance(g, int) for g in gaps)
    assert {j.processing_time for j in inst.jobs} == set(range(2, 8))
    assert {j.gpus for j in inst.jobs} == set(range(1, 7))
    assert {j.weight for j in inst.jobs} == {1, 2, 3}
    assert 1 < distortion(inst) <= 4
    assert all(isinstance(j.predicted_processing_time, (int, Fraction)) for j in inst.jobs)
    pow2 = uniform_instance(40, cluster="1x8", gpu_choice="pow2", integer=False, seed=1)
    assert {j.gpus for j in pow2.jobs} == {1, 2, 4, 8}
    assert all(isinstance(j.processing_time, float) for j in pow2.jobs)
    assert all(j.predicted_processing_time is None for j in pow2.jobs)


def test_changing_one_aspect_leaves_the_others_draws_alone():
    a = uniform_instance(20, seed=4)
    b = uniform_instance(20, seed=4, mu=8, max_gap=9)
    assert [j.processing_time for j in a.jobs] == [j.processing_time for j in b.jobs]
    assert [j.gpus for j in a.jobs] == [j.gpus for j in b.jobs]


def test_heavy_tailed_pareto_tail_and_lognormal_median():
    """Pareto(alpha=1.5, min 1): P(P > 10) = 10^-1.5 = 0.0316; with 20,000 draws the empirical
    share is within 0.004 (about 3 standard deviations). Log-normal: the sample median of 20,000
    draws is within 3 % of the median parameter."""
    pareto = heavy_tailed_instance(20000, cluster="1x1", alpha=1.5, scale=1.0, seed=0)
    sizes = [j.processing_time for j in pareto.jobs]
    assert min(sizes) >= 1.0
    assert abs(sum(s > 10 for s in sizes) / len(sizes) - 10 ** -1.5) < 0.004
    logn = heavy_tailed_instance(20000, cluster="1x1", distribution="lognormal", scale=50.0, seed=0)
    assert statistics.median(j.processing_time for j in logn.jobs) == pytest.approx(50.0, rel=0.03)


def test_heavy_tailed_load_clip_and_integer_mode():
    inst = heavy_tailed_instance(40, cluster="2x4", load=0.5, max_processing_time=20.0, seed=3)
    span = inst.jobs[-1].arrival - inst.jobs[0].arrival
    work = sum(j.gpus * j.processing_time for j in inst.jobs)
    assert work / (8 * span) == pytest.approx(0.5, rel=1e-12)
    assert inst.metadata["offered_load"] == pytest.approx(0.5, rel=1e-12)
    assert max(j.processing_time for j in inst.jobs) <= 20.0
    arrivals = [j.arrival for j in inst.jobs]
    assert arrivals == sorted(arrivals) and arrivals[0] == 0
    ints = heavy_tailed_instance(30, integer=True, mu=2, seed=3)
    assert all(isinstance(j.arrival, int) and isinstance(j.processing_time, int) and
               j.processing_time >= 1 for j in ints.jobs)
    assert 1 < distortion(ints) <= 2


def test_bursty_batches_and_poisson_bursts():
    inst = bursty_instance(14, burst_size=4, burst_gap=30, seed=1)
    times = [j.arrival for j in inst.jobs]
    groups = [times[i:i + 4] for i in range(0, 14, 4)]
    assert all(len(set(g)) == 1 for g in groups) and len({g[0] for g in groups}) == 4
    assert inst.metadata["bursts"] == 4 and [len(g) for g in groups] == [4, 4, 4, 2]
    poisson = bursty_instance(200, mode="poisson", burst_size=5, burst_gap=100, burst_width=2,
                              integer=False, seed=2)
    t = [j.arrival for j in poisson.jobs]
    assert t == sorted(t) and t[0] == 0.0
    gaps = [b - a for a, b in zip(t, t[1:])]
    # within bursts gaps are short (mean 0.4), between bursts long (mean 100): bimodal
    assert sum(g < 5 for g in gaps) > 0.6 * len(gaps) and sum(g > 20 for g in gaps) >= 20
    assert 25 <= poisson.metadata["bursts"] <= 60


@pytest.mark.parametrize("pattern, kwargs", [
    ("blocker", {"gpus": 4, "mu": 4}),
    ("blocker", {"gpus": 8, "mu": 4}),
    ("gang", {"gpus": 4, "mu": 1}),
    ("mispredict", {"gpus": 1, "mu": 100}),
])
def test_adversarial_patterns_are_hard_for_asrpt_and_within_the_theorem(pattern, kwargs):
    """A-SRPT's sum C_j over the lower bound, mean over 6 seeds: above 1.25 on every pattern
    (uniform instances of the same size give about 1.1), and Theorem 1's certificate holds."""
    ratios = []
    for seed in range(6):
        inst = adversarial_instance(5, pattern=pattern, seed=seed, **kwargs)
        assert inst.cluster.n_servers == 1 and inst.cluster.total_gpus == kwargs["gpus"]
        assert distortion(inst) <= kwargs["mu"]
        cert = certify_instance(inst)
        assert cert.holds and cert.ratio_to_lb <= cert.ratio_bound
        assert inst.metadata["cell_bound"] >= float(cert.ratio_bound) - 1e-9
        ratios.append(float(cert.ratio_to_lb))
    assert statistics.mean(ratios) > 1.25
    assert tuple(inst.metadata["pattern_source"]) == ADVERSARIAL_PATTERNS[pattern][1]
    uniform = [float(certify_instance(uniform_instance(5, cluster="1x4", max_processing_time=6,
                                                       seed=s)).ratio_to_lb) for s in range(6)]
    assert statistics.mean(ratios) > statistics.mean(uniform)


def test_starvation_places_one_wide_job_in_a_narrow_stream_at_the_load():
    inst = starvation_instance(201, cluster="2x4", load=0.6, wide_after=50, seed=3)
    wide = [j for j in inst.jobs if j.id == "wide"]
    narrow = [j for j in inst.jobs if j.id != "wide"]
    assert len(wide) == 1 and wide[0].gpus == 4 and wide[0].processing_time == 100
    assert len(narrow) == 200 and {j.gpus for j in narrow} == {1} and {j.processing_time for j in narrow} == {50}
    assert [j.id for j in inst.jobs].index("wide") == 50 and wide[0].arrival == narrow[50].arrival
    span = narrow[-1].arrival - narrow[0].arrival
    assert 200 * 50 / (8 * span) == pytest.approx(0.6) == inst.metadata["offered_load"]
    assert [j.id for j in starvation_instance(11, wide_after=10).jobs][-1] == "wide"
    exact = starvation_instance(30, integer=True, mu=4, seed=1)
    assert all(isinstance(j.arrival, int) and isinstance(j.processing_time, int) for j in exact.jobs)
    assert 1 < distortion(exact) <= 4


def test_starvation_srsf_runs_the_wide_job_past_the_bound_guarded_asrpt_is_proven_to_meet():
    """The family's defining property, exactly (integer mode): under SRSF the wide job, here the
    first to arrive, completes only near the end of the stream (10,857 s), long after
    Theorem 2's bound for it (d_j + P_j + mu_under rho'_j C~_j, a function of the instance that
    does not grow with the stream: 3,850 s), which guarded A-SRPT's certificate proves and checks
    for its own run."""
    from asrpt.sim import simulate
    from asrpt.theory.guarded import certify_guarded, run_guarded

    inst = starvation_instance(1500, integer=True, wide_after=0, seed=0)
    run = run_guarded(inst, kappa=2)
    cert = certify_guarded(inst, run)
    assert cert.holds and cert.covered
    mine = next(r for r in run.records if r.id == "wide")
    bound = mine.completion + cert.per_job_slack["wide"]
    assert "wide" in run.policy_data["overdue_at"]           # the guard did something
    srsf = next(r for r in simulate(inst, "srsf").records if r.id == "wide")
    assert srsf.completion > bound > mine.completion


def test_adversarial_search_reuses_the_worst_case_search():
    inst = adversarial_instance(3, pattern="search", gpus=2, mu=1, evals=6, seed=1)
    s = inst.metadata["search"]
    assert s["evaluations"] <= 6 and 1 <= s["ratio"] <= s["ratio_upper"] <= s["bound"]
    assert inst.n_jobs <= 3 and inst.cluster.total_gpus == 2
    with pytest.raises(InvalidParameterError, match="at most 8 for the search"):
        adversarial_instance(9, pattern="search")


def test_philly_windows_follow_the_trace_and_samples_resample_it():
    a = philly_instance(30, cluster="2x8", seed=7)
    arrivals = [j.arrival for j in a.jobs]
    assert arrivals[0] == 0.0 and arrivals == sorted(arrivals)
    assert all(j.processing_time == j.meta["trace_duration"] and j.gpus <= 16 for j in a.jobs)
    assert a.metadata["first_row"] == int(a.jobs[0].id)
    loaded = philly_instance(30, cluster="2x8", load=0.7, max_duration=3600.0, seed=7)
    assert [j.id for j in loaded.jobs] == [j.id for j in a.jobs]
    assert max(j.processing_time for j in loaded.jobs) <= 3600.0
    assert loaded.metadata["offered_load"] == pytest.approx(0.7, rel=1e-9)
    s = philly_instance(30, cluster="2x8", mode="sample", seed=7)
    assert [j.id for j in s.jobs] == [f"j{i}" for i in range(30)]
    assert all("row" in j.meta for j in s.jobs)
    dnn = philly_instance(5, cluster="2x8", dnn=True, seed=7)
    assert not dnn.is_abstract and dnn.metadata["model_assignment"]["seed"] == 7
    with pytest.raises(InvalidParameterError, match="exceeds the"):
        philly_instance(10 ** 6)
    with pytest.raises(TraceError):
        philly_instance(3, trace="/no/such/philly.csv")


def test_recurring_is_the_recurring_workload():
    inst = recurring_instance(12, cluster="2x8", load=0.6, seed=3)
    ref = recurring_workload(12, cluster="2x8", load=0.6, seed=3, max_duration=86400.0)
    assert inst.jobs == ref.jobs and inst.cluster == ref.cluster
    assert inst.metadata["recurring_params"]["n_jobs"] == 12
    assert inst.metadata["calibration"] == ref.metadata["calibration"]


def test_dnn_mixes_models_and_parallel_configurations():
    inst = dnn_instance(30, cluster="2x8", seed=5)
    assert len({j.model for j in inst.jobs}) >= 5
    kinds = {("dp" if j.parallelism.tp == 1 and j.parallelism.pp == 1 else "tp/pp") for j in inst.jobs}
    assert kinds == {"dp", "tp/pp"}
    assert all(j.gpus in (1, 2, 4, 8, 16) for j in inst.jobs)
    sizes = processing_times(inst)
    span = inst.jobs[-1].arrival
    assert sum(j.gpus * p for j, p in zip(inst.jobs, sizes)) / (16 * span) == pytest.approx(0.9, rel=1e-6)
    pred = dnn_instance(5, cluster="1x8", models=["gpt2"], mu=2, seed=1)
    assert all(j.predicted_iterations is not None for j in pred.jobs)


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, message", [
    (lambda: generate_one("bursti"), r"unknown generator family 'bursti' \(did you mean 'bursty'\?\)"),
    (lambda: generate_one("uniform", n_job=3), r"family 'uniform' has no parameter 'n_job' \(did you mean 'n_jobs'\?\)"),
    (lambda: uniform_instance(0), r"The 'n_jobs' parameter of uniform_instance must be an int in \[1, inf\)"),
    (lambda: uniform_instance(3, cluster="2y4"), r"The 'cluster' parameter of uniform_instance must be a cluster spec"),
    (lambda: uniform_instance(3, min_processing_time=5, max_processing_time=2), "exceeds max_processing_time"),
    (lambda: uniform_instance(3, min_processing_time=1.2, max_processing_time=1.8), "no integer processing time"),
    (lambda: heavy_tailed_instance(3, distribution="cauchy"), r"The 'distribution' parameter"),
    (lambda: bursty_instance(3, mu=0.5), r"The 'mu' parameter of bursty_instance must be a float in \[1, inf\)"),
    (lambda: adversarial_instance(1), r"The 'n_jobs' parameter of adversarial_instance"),
    (lambda: recurring_instance(3, profile="philly2"), r"The 'profile' parameter of recurring_instance"),
    (lambda: dnn_instance(3, models=["gpt3"]), r"must be a non-empty list of zoo models. Got 'gpt3' \(did you mean"),
    (lambda: dnn_instance(3, models=["llama-70b"], cluster="1x1"), "fits one GPU"),
    (lambda: regenerate({"x": 1}), "has no family"),
    (lambda: starvation_instance(5, load=1.2), r"The 'load' parameter of starvation_instance"),
    (lambda: starvation_instance(5, cluster="2x4", wide_gpus=8), "exceeds the largest server"),
    (lambda: starvation_instance(5, wide_after=5), "wide_after=5 exceeds the 4 narrow jobs"),
    (lambda: starvation_instance(5, integer=True, narrow_processing_time=2.5), "integer=True takes integer sizes"),
])
def test_bad_parameters_raise_one_line(call, message):
    with pytest.raises(InvalidParameterError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

@settings(max_examples=15)
@given(S.heavy_tailed_instances(max_jobs=5, cluster="1x4", integer=True))
def test_heavy_tailed_strategy_gives_family_instances(inst):
    assert inst.metadata["family"] == "heavy_tailed" and 1 <= inst.n_jobs <= 5
    assert regenerate(inst) == inst


@settings(max_examples=15)
@given(S.adversarial_instances(max_jobs=5, gpus=4, mu=4))
def test_adversarial_strategy_draws_patterns_within_mu(inst):
    assert inst.metadata["params"]["pattern"] in ("blocker", "gang", "mispredict")
    assert distortion(inst) <= 4 and 2 <= inst.n_jobs <= 5


@pytest.mark.parametrize("strategy", [S.uniform_instances(max_jobs=3), S.bursty_instances(max_jobs=3),
                                      S.philly_instances(max_jobs=3, cluster="2x8"),
                                      S.recurring_instances(max_jobs=3, cluster="2x8"),
                                      S.dnn_mix_instances(max_jobs=2, cluster="1x8")])
def test_every_family_strategy_draws_valid_instances(strategy):
    @settings(max_examples=4, deadline=None)
    @given(strategy)
    def check(inst):
        assert inst.n_jobs >= 1 and inst.metadata["family"] in FAMILIES

    check()


@pytest.mark.parametrize("make, message", [
    (lambda: S.family_instances("nope"), "unknown generator family"),
    (lambda: S.family_instances("uniform", min_jobs=3, max_jobs=2), "min_jobs=3 <= max_jobs=2"),
    (lambda: S.adversarial_instances(min_jobs=1), "need 2 <= min_jobs=1"),
    (lambda: S.uniform_instances(n_jobs=3), "n_jobs and seed are drawn"),
    (lambda: S.uniform_instances(sizes=3), "has no parameter 'sizes'"),
    (lambda: S.bursty_instances(mode="flood"), "The 'mode' parameter of bursty_instance"),
    (lambda: S.uniform_instances(cluster="x"), "is not a cluster spec"),
    (lambda: S.adversarial_instances(pattern="search"), "runs hypothesis itself"),
])
def test_strategy_arguments_are_checked_at_once(make, message):
    with pytest.raises(InvalidArgument, match=message):
        make()


@settings(max_examples=5)
@given(S.family_instances("uniform", min_jobs=3, max_jobs=3, cluster="1x2"))
def test_bounds_on_job_count_are_respected(inst):
    assert inst.n_jobs == 3 and inst.cluster.total_gpus == 2
