"""Issue 14: status-aware history, the key hierarchy and bursts, sibling re-prediction, calibrated
bands, the helios synthetic predictor and the headline scores."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt.errors import InvalidInstance, InvalidParameterError
from asrpt.instance import Cluster, Instance, Job, instance_to_dict, parse_instance
from asrpt.predict import DEFAULT_PREDICTOR, PREDICTORS, make_predictor
from asrpt.predict.base import ErrorBands, HeliosPredictor, PredictionTracker, helios_ratio
from asrpt.predict.hierarchy import HierarchyPredictor
from asrpt.predict.metrics import PredictionLog, coverage, replay_predictions, spearman
from asrpt.sim import simulate
from asrpt.sim.view import CompletedJob, JobView
from asrpt.workloads import recurring_workload


def view(i, group=None, user="u", gpus=1, arrival=None):
    return JobView(index=i, id=f"j{i}", key=(i,), arrival=i if arrival is None else arrival, gpus=gpus,
                   weight=1, is_abstract=True, tau_star=1, user=user, group=group)


# -- status ------------------------------------------------------------------------------------

def test_status_round_trips_and_is_validated():
    job = Job("a", 0, 1, processing_time=5, status="failed")
    inst = Instance(Cluster.homogeneous(1, 8), (job,))
    d = instance_to_dict(inst)
    assert d["jobs"][0]["status"] == "failed" and parse_instance(d).jobs[0].status == "failed"
    with pytest.raises(InvalidInstance, match="status.*must be one of succeeded, failed, killed"):
        Job("a", 0, 1, processing_time=5, status="crashed")


def test_recurring_jobs_carry_their_failure_status():
    inst = recurring_workload(300, seed=0)
    statuses = {j.status for j in inst.jobs}
    failed = [j for j in inst.jobs if j.status == "failed"]
    assert statuses == {"succeeded", "failed"} and 0.1 < len(failed) / 300 < 0.3
    # failed runs are the short startup failures (about 60 s)
    assert max(j.iterations for j in failed) < min(j.iterations for j in inst.jobs if j.status == "succeeded") * 50


# -- the hierarchy -----------------------------------------------------------------------------

def test_failed_runs_stay_out_of_the_history():
    runs = [(1000.0, "succeeded"), (60.0, "failed"), (1100.0, "succeeded"), (50.0, "killed"), (1200.0, "succeeded")]
    p = HierarchyPredictor().reset()
    p.observe([CompletedJob(view(i, "g"), 10 + i, w, st) for i, (w, st) in enumerate(runs)])
    assert p.failure_probability(view(9, "g")) < 0.5
    assert p.predict(view(9, "g")) == pytest.approx(1100.0)
    # without the status the failures drag the median down
    q = HierarchyPredictor().reset()
    q.observe([CompletedJob(view(i, "g"), 10 + i, w) for i, (w, _) in enumerate(runs)])
    assert q.predict(view(9, "g")) == pytest.approx(1000.0)


def test_a_key_that_mostly_fails_is_predicted_at_its_failure_time():
    p = HierarchyPredictor(failure_prior=0.5).reset()
    p.observe([CompletedJob(view(0, "g", user="a"), 1, 1000.0, "succeeded")]
              + [CompletedJob(view(i, "g", user="a"), i, 60.0, "failed") for i in range(1, 8)])
    assert p.failure_probability(view(9, "g", user="a")) > 0.5
    assert p.predict(view(9, "g", user="a")) == pytest.approx(60.0)


def test_levels_fall_back_from_group_to_burst_to_user_gpus_to_global():
    p = HierarchyPredictor(burst_gap=60).reset()
    # a burst of the user's 4-GPU jobs, 10 s apart; an old 4-GPU job of the user long before
    old = view(0, None, user="vc", gpus=4, arrival=0)
    burst = [view(i, None, user="vc", gpus=4, arrival=10000 + 10 * i) for i in range(1, 4)]
    for v in [old] + burst:
        p.predict(v)
    p.observe([CompletedJob(old, 100, 100.0, "succeeded")])
    assert p.level_of(burst[1]) == "user_gpus" and p.predict(burst[1]) == pytest.approx(100.0)
    p.observe([CompletedJob(burst[0], 10030, 5000.0, "succeeded")])
    assert p.level_of(burst[1]) == "burst" and p.predict(burst[1]) == pytest.approx(5000.0)
    assert p.sibling_keys(burst[1]) == (("burst", "vc", 4, 1),)
    late = view(9, None, user="vc", gpus=4, arrival=50000)   # a new burst: no sibling completed
    assert p.level_of(late) == "user_gpus"
    assert p.level_of(view(10, None, user="other", gpus=2)) == "global"
    assert p.level_of(view(11, "g1", user="vc", gpus=4)) == "user_gpus"
    p.observe([CompletedJob(view(11, "g1", user="vc", gpus=4), 20, 7.0, "succeeded")])
    assert p.level_of(view(12, "g1", user="other", gpus=8)) == "group"


def test_repredicting_given_work_done_uses_the_runs_that_outlived_it():
    p = HierarchyPredictor(repredict="level").reset()
    p.observe([CompletedJob(view(i, "g"), i, w, "succeeded") for i, w in enumerate((10.0, 20.0, 400.0, 800.0))])
    assert p.predict(view(9, "g"), attained=30.0) == pytest.approx(math.sqrt(400.0 * 800.0))
    assert p.predict(view(9, "g"), attained=1000.0) == pytest.approx(2000.0)  # outlived every run: doubling
    assert p.predict(view(9, "g"), attained=399.9) > 399.9 * 1.049


def test_hierarchy_sizes_better_than_the_group_mean_on_the_recurring_generator():
    # (its rank correlation is not better here: see docs/prediction.md)
    inst = recurring_workload(600, seed=1)
    h = replay_predictions("hierarchy", inst).scores()
    g = replay_predictions("group_mean", inst).scores()
    assert h.median_abs_log < g.median_abs_log - 0.1 and h.within_2x > g.within_2x
    assert 0.65 <= h.coverage_80 <= 0.95 and g.coverage_80 is None  # group_mean has no band


@pytest.mark.slow
def test_residual_model_fits_and_is_gated_by_validation():
    inst = recurring_workload(300, seed=0)
    p = make_predictor('hierarchy:residual="gbm":min_train=60:refit_every=60')
    replay_predictions(p, inst)
    assert p.n_fits_ >= 2 and p.model_ is not None
    assert isinstance(p.uses_residual("seen"), bool)


def test_residual_option_is_validated():
    with pytest.raises(InvalidParameterError, match="residual"):
        make_predictor('hierarchy:residual="forest"').reset()


def test_default_predictor_is_registered():
    assert DEFAULT_PREDICTOR == "hierarchy" and DEFAULT_PREDICTOR in PREDICTORS


# -- siblings through the tracker and the engine ------------------------------------------------

class _View:
    """The parts of a ClusterView the tracker reads."""

    def __init__(self, completed=(), arrived=(), attained=None):
        self.completed, self.arrived, self._attained = list(completed), list(arrived), attained or {}

    def attained_work(self, job):
        return self._attained.get(job.index, 0)


def test_tracker_repredicts_waiting_siblings_when_one_completes():
    t = PredictionTracker(HierarchyPredictor(), seed=0)
    jobs = [view(i, "g") for i in range(3)]
    t.update(_View(arrived=jobs))
    assert t.predicted[1] == pytest.approx(3600.0)
    t.update(_View(completed=[CompletedJob(jobs[0], 5, 100.0, "succeeded")], attained={2: 1.0}))
    assert [j.id for j in t.revised] == ["j1"]            # j2 has started: adaptive rules own it
    assert t.predicted[1] == pytest.approx(100.0) and t.predicted[2] == pytest.approx(3600.0)
    assert t.initial_by_id["j1"] == pytest.approx(3600.0) and t.latest_by_id["j1"] == pytest.approx(100.0)
    off = PredictionTracker(HierarchyPredictor(), seed=0, siblings=False)
    off.update(_View(arrived=jobs))
    off.update(_View(completed=[CompletedJob(jobs[0], 5, 100.0, "succeeded")]))
    assert off.revised == [] and off.predicted[1] == pytest.approx(3600.0)


@pytest.mark.parametrize("policy", ["a-srpt", "srsf"])
def test_runs_with_the_default_predictor_use_sibling_updates(policy):
    inst = recurring_workload(150, cluster="2x8", seed=2)
    res = simulate(inst, f"{policy}:predictor=hierarchy", seed=0)
    pd = res.policy_data
    assert len(res.records) == 150
    assert any(pd["predictions"][k] != pd["initial_predictions"][k] for k in pd["predictions"])


# -- bands and the helios predictor ------------------------------------------------------------

def test_error_bands_condition_on_survival():
    b = ErrorBands(min_errors=3)
    for r in (0.25, 0.5, 1.0, 2.0, 4.0):
        b.add("seen", 100.0, 100.0 * r)
    lo, mid, hi = b.quantiles("seen", 100.0)
    assert lo < mid < hi and mid == pytest.approx(100.0)
    lo2, mid2, hi2 = b.quantiles("seen", 100.0, attained=150.0)
    assert 150.0 < lo2 <= mid2 <= hi2 <= 400.0
    assert b.quantiles("seen", 100.0, attained=1000.0) == (2000.0, 2000.0, 2000.0)
    assert len(ErrorBands().quantiles("x", 10.0)) == 3  # prior band without errors


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(-3, 3), st.integers(0, 3)), min_size=1, max_size=120),
       st.sampled_from([0.005, 0.05, 0.3]), st.integers(1, 3), st.randoms(use_true_random=False))
def test_adaptive_bands_account_exactly_for_every_band_they_issued(errors, gamma, bins, rnd):
    """Adaptive calibration (ErrorBands(adapt=gamma)): whatever the errors and in whatever order
    the feedback comes back (shuffled here, as completions reorder submissions), each cell's count
    of truths above its issued bands is exactly 0.1 n + (h - 0.9) / gamma, and below them
    0.1 n + (0.1 - l) / gamma: the identity its long-run calibration rests on."""
    b = ErrorBands(min_errors=1, adapt=gamma, bins=bins)
    b.add("a", 1.0, 1.0)
    pending, outcome = [], {}
    for e, k in errors:
        stratum, value = "ab"[k % 2], 10.0 * (1 + k)
        issued = b.issue(stratum, value)
        assert issued is not None and issued[1] <= issued[2]
        pending.append((stratum, value, value * math.exp(e), issued))
        if rnd.random() < 0.5:                       # feedback comes back later, out of order
            rnd.shuffle(pending)
            pending.append(pending.pop())
            stratum_, v, t, iss = pending.pop()
            b.add(stratum_, v, t, issued=iss)
            outcome.setdefault(iss[0], []).append((t > iss[2], t < iss[1]))
    for stratum_, v, t, iss in pending:
        b.add(stratum_, v, t, issued=iss)
        outcome.setdefault(iss[0], []).append((t > iss[2], t < iss[1]))
    cells = b.cells()
    assert set(cells) == set(outcome)
    for cell, c in cells.items():
        n = c["n"]
        assert n == len(outcome[cell])
        above = sum(a for a, _ in outcome[cell])
        below = sum(w for _, w in outcome[cell])
        assert above == pytest.approx(0.1 * n + (c["high_level"] - 0.9) / gamma, abs=1e-6)
        assert below == pytest.approx(0.1 * n + (0.1 - c["low_level"]) / gamma, abs=1e-6)


def test_adaptive_bands_widen_after_misses_and_off_they_are_the_plain_quantiles():
    plain, adaptive = ErrorBands(min_errors=3), ErrorBands(min_errors=3, adapt=0.05)
    for k in range(30):                                   # errors spread over [1/4, 4]
        for b in (plain, adaptive):
            b.add("s", 100.0, 100.0 * 4 ** (k / 14.5 - 1))
    assert adaptive.quantiles("s", 100.0) == plain.quantiles("s", 100.0)   # nothing heard yet
    assert plain.issue("s", 100.0) is None                                 # (no adaptation: nothing to issue)
    missed = 0
    for _ in range(20):                                   # then truths 3.9x the prediction
        issued = adaptive.issue("s", 100.0)
        missed += 390.0 > issued[2]
        adaptive.add("s", 100.0, 390.0, issued=issued)
        plain.add("s", 100.0, 390.0)
    cell = adaptive.cells()["s"]
    assert missed > 2 and cell["n"] == 20 and cell["high_level"] > 0.9
    lo, mid, hi = adaptive.quantiles("s", 100.0)
    assert hi > plain.quantiles("s", 100.0)[2] and lo <= mid <= hi
    with pytest.raises(InvalidParameterError, match="adapt must be a number in"):
        ErrorBands(adapt=1.0)
    with pytest.raises(InvalidParameterError, match="bins must be an int >= 1"):
        ErrorBands(bins=0)


def test_hierarchy_bands_are_calibrated_online_by_default_and_can_be_turned_off():
    inst = recurring_workload(300, cluster="2x8", seed=3)
    on = replay_predictions("hierarchy", inst)
    off = replay_predictions("hierarchy:band_adapt=0", inst)
    assert on.predicted == off.predicted                   # the bands alone differ
    assert on.low != off.low or on.high != off.high
    p = HierarchyPredictor().reset()
    assert p.bands_.adapt == 0.005 and p.bands_.bins == 5
    assert HierarchyPredictor(band_adapt=0).reset().bands_.adapt == 0


def test_helios_reproduces_the_published_error_distribution():
    p = HeliosPredictor(seed=0).reset()
    err = sorted(abs(p.ratio(f"j{i}") - 1.0) for i in range(4000))
    share = lambda x: sum(e <= x for e in err) / len(err)  # noqa: E731
    assert share(0.1) == pytest.approx(0.1, abs=0.02) and share(0.5) == pytest.approx(0.5, abs=0.03)
    assert share(1.0) == pytest.approx(0.7, abs=0.03) and share(10.0) == pytest.approx(0.9, abs=0.02)
    assert helios_ratio(0.95, 0.0) > 11  # large errors only overestimate
    inst = recurring_workload(400, seed=0)
    s = replay_predictions("helios", inst).scores()
    assert 0.7 <= s.coverage_80 <= 0.9


# -- scores ------------------------------------------------------------------------------------

def test_scores_and_their_validation():
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert coverage([1, 2], [1, 3], [1, 4]) == 0.5
    with pytest.raises(InvalidParameterError, match="low > high"):
        coverage([1], [2], [1])
    log = PredictionLog(("a", "b", "c"), (100, 200, 60), (100, 200, 1000), ("succeeded", "succeeded", "failed"))
    s = log.scores()
    assert s.n == 3 and s.n_succeeded == 2 and s.r2_log_succeeded == pytest.approx(1.0) and s.r2_log < 1
    assert s.within_2x == pytest.approx(2 / 3)


@pytest.mark.parametrize("seed", range(5))
def test_key_stats_read_in_place_are_the_sorted_medians(seed):
    """The recent window kept sorted and the survival history sorted on read give the medians of
    ``sorted(recent)`` and of the runs past a level, after random runs (ties, failures, a window
    that overflows), whenever they are read."""
    import random
    from collections import deque

    from asrpt.predict.hierarchy import _median, _Stats

    rng = random.Random(seed)
    st, recent, every = _Stats(7), deque(maxlen=7), []
    for _ in range(60):
        value = float(rng.choice([0.5, 1.0, 1.0, 2.0, 3.5, rng.uniform(0, 5)]))
        failed = rng.random() < 0.2
        st.add(value, failed)
        if not failed:
            recent.append(value)
            every.append(value)
            assert st.median() == _median(sorted(recent))
        if rng.random() < 0.4:
            level = rng.uniform(-1, 6)
            above = sorted(v for v in every if v > level)
            assert st.median_above(level) == (_median(above) if above else None)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-4, 4), min_size=25, max_size=80), st.floats(-6, 6), st.floats(0.01, 50),
       st.sampled_from([0.0, 0.01, 0.3]))
def test_bands_are_ordered_positive_and_above_the_work_done_whatever_the_levels(errors, shift, attained, gamma):
    """However far the adaptive levels drift (a stream of truths all above, or all below, the
    bands), every band is finite, positive, ordered in its levels and above the work done."""
    b = ErrorBands(min_errors=3, adapt=gamma)
    for e in errors[:20]:
        b.add("s", 10.0, 10.0 * math.exp(e))
    for e in errors[20:]:                       # then every truth shifted by e^shift
        b.add("s", 10.0, 10.0 * math.exp(e + shift), issued=b.issue("s", 10.0))
    levels = (0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99)
    for att in (0, attained):
        band = b.quantiles("s", 10.0, levels, attained=att)
        assert all(math.isfinite(x) and x > 0 for x in band)
        assert list(band) == sorted(band)
        assert att == 0 or min(band) > att


def test_referee_cases_bands_stay_finite_ordered_and_refuse_a_nonpositive_prediction():
    """A referee's cases against the adaptive bands: a level driven past errors of +-345 (log)
    overflowed math.exp; a cell whose truths sat inside the stratum's band pushed its 10% level
    above the median's and the band came out inverted; a prediction of 0 gave a math domain
    error. Now: finite, ordered, and a one-line refusal."""
    import random

    b = ErrorBands(min_errors=1, adapt=0.95)
    b.add("s", 1.0, 1e-150)
    b.add("s", 1.0, 1e150)
    issued = b.issue("s", 1.0)
    b.add("s", 1.0, issued[2] * 2, issued=issued)
    assert all(math.isfinite(x) and x > 0 for x in b.quantiles("s", 1.0))
    rng = random.Random(0)
    m, plain = ErrorBands(adapt=0.005, bins=5), ErrorBands()
    for _ in range(20000):
        p = rng.choice([1.0, 1000.0])
        e = rng.gauss(0, 1.5) if p == 1.0 else rng.gauss(2.0, 0.05)
        m.add("s", p, p * math.exp(e), issued=m.issue("s", p))
        plain.add("s", p, p * math.exp(e))
    assert m.cells()[m.cell("s", 1000.0)]["low_level"] > 0.5           # the drift that inverted bands
    lo, mid, hi = m.quantiles("s", 1000.0, (0.1, 0.5, 0.9))
    assert lo <= mid <= hi
    # the 10% level stops at the median's: the median stays the errors' own
    assert lo == mid == plain.quantiles("s", 1000.0, (0.5,))[0]
    with pytest.raises(InvalidParameterError, match="the predicted value must be > 0, got 0"):
        m.quantiles("s", 0)


def test_capped_repredict_is_the_level_rule_capped_by_the_band_median_given_the_work_done():
    """repredict="capped": the re-prediction given the work done is the level's (the median of
    the runs that outlived it) capped by the band's median given the same survival, and still
    above the work done."""
    runs = [1000.0, 1100.0, 1200.0, 50_000.0]          # one long run in the group's history
    level, capped = HierarchyPredictor(repredict="level").reset(), HierarchyPredictor().reset()  # capped: the default
    for p in (level, capped):
        p.observe([CompletedJob(view(i, "g"), 10 + i, w, "succeeded") for i, w in enumerate(runs)])
        p.observe([CompletedJob(view(10 + i, "h"), 20 + i, 900.0 + 10 * i, "succeeded") for i in range(30)])
    job = view(99, "g")
    assert level.predict(job) == capped.predict(job)                  # at submission: the same
    for done in (500.0, 1150.0, 1300.0):
        a, b = level.predict(job, attained=done), capped.predict(job, attained=done)
        band = capped.quantiles(job, attained=done, levels=(0.5,))[0]
        assert b == pytest.approx(max(min(a, band), 1.05 * done)) and b > done
    # past the group's short runs the level says 50,000 (its one long run), the band far less
    assert level.predict(job, attained=1300.0) == pytest.approx(50_000.0)
    assert capped.predict(job, attained=1300.0) < 10_000.0
    with pytest.raises(InvalidParameterError, match="repredict"):
        HierarchyPredictor(repredict="band").reset()
