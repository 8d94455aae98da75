"""The random-forest predictor: interface, cold start, no look-ahead, determinism, the compiled
forest against scikit-learn, re-prediction given the work done, and a learnable workload."""

import math

import numpy as np
import pytest

from asrpt.errors import InvalidParameterError, NotFittedError
from asrpt.instance import Cluster, Instance, Job
from asrpt.predict import GroupMeanPredictor, Predictor, make_predictor
from asrpt.predict.base import PREDICTORS, register_predictor
from asrpt.predict.forest import CONDITIONAL_FEATURES, FEATURES, RandomForestPredictor
from asrpt.predict.metrics import job_views, replay_predictions
from asrpt.sim import simulate
from asrpt.sim.view import CompletedJob, JobView
from asrpt.workloads import recurring_workload

SMALL = dict(n_estimators=8, min_train=20, retrain_every=20)


def view(i, *, group=None, user=None, arrival=None, tau=1.0, gpus=1, meta=None):
    return JobView(index=i, id=f"j{i}", key=(i,), arrival=i if arrival is None else arrival, gpus=gpus,
                   weight=1, is_abstract=True, tau_star=tau, group=group, user=user, meta=meta or {})


def done(v, completion, work):
    return CompletedJob(v, completion, work)


def history(n, seed=0):
    """n completed abstract jobs of 4 groups (works 10, 30, 100, 300 with 10% noise)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        g = i % 4
        v = view(i, group=f"g{g}", user=f"u{g % 2}", arrival=float(i))
        out.append(done(v, float(i) + 0.5, float(10 * 3.1623 ** g * math.exp(0.1 * rng.standard_normal()))))
    return out


def test_registered_and_round_trips():
    p = make_predictor("forest:n_estimators=7:seed=3")
    assert isinstance(p, RandomForestPredictor) and p.n_estimators == 7 and p.seed == 3
    assert type(p)(**p.get_params()) == p and not p.clairvoyant
    assert len(CONDITIONAL_FEATURES) == len(FEATURES) + 3


@pytest.mark.parametrize("spec, text", [
    ("forest:n_estimators=0", "'n_estimators' parameter of RandomForestPredictor"),
    ("forest:max_features=1.5", "'max_features'"),
    ("forest:min_train=1", "'min_train'"),
    ("forest:leaf=\"mode\"", "'leaf'"),
    ("forest:growth=1", "'growth'"),
])
def test_bad_parameters_are_rejected_when_work_starts(spec, text):
    with pytest.raises(InvalidParameterError, match=text):
        make_predictor(spec)


def test_not_fitted_errors():
    p = RandomForestPredictor()
    with pytest.raises(NotFittedError):
        p.predict(view(0))
    with pytest.raises(NotFittedError):
        p.training_data()
    p.reset()
    with pytest.raises(NotFittedError, match="no forest fitted yet"):
        p.feature_importances()


def test_cold_start_is_the_group_mean_chain_exactly():
    """Below min_train completions the forest answers what GroupMeanPredictor answers: the prior,
    then group, user and global fallbacks."""
    f = RandomForestPredictor(min_train=30, prior=600.0).reset()
    g = GroupMeanPredictor(prior=600.0).reset()
    jobs = history(29)
    probes = [view(100, group="g1", user="u1", tau=2.0), view(101, group="new", user="u0"),
              view(102, group="new", user="nobody", tau=4.0), view(103)]
    assert [f.predict(v) for v in probes] == [g.predict(v) for v in probes] == [300.0, 600.0, 150.0, 600.0]
    for k in range(0, 29, 7):
        f.observe(jobs[k:k + 7])
        g.observe(jobs[k:k + 7])
        assert [f.predict(v) for v in probes] == [g.predict(v) for v in probes]
        assert f.forest_ is None and f.n_fits_ == 0
    f.observe(history(30)[29:])
    f.predict(probes[0])
    assert f.n_fits_ == 1 and f.fitted_at_ == 30
    assert set(f.feature_importances()) == set(FEATURES)


def test_retraining_schedule_doubles_then_steps():
    f = RandomForestPredictor(n_estimators=3, min_train=10, retrain_every=25).reset()
    jobs = history(200)
    fits = []
    for i, c in enumerate(jobs):
        f.observe([c])
        f.predict(view(1000, group="g0"))
        fits.append(f.fitted_at_)
    assert sorted(set(fits)) == [0, 10, 20, 40, 65, 90, 115, 140, 165, 190]


# -- no look-ahead ------------------------------------------------------------------------------

def test_training_rows_use_only_jobs_completed_by_the_jobs_arrival():
    """B arrives at 5, before A completes (at 10): B's training row must not count A."""
    a = view(0, group="g", user="u", arrival=0.0)
    b = view(1, group="g", user="u", arrival=5.0)
    c = view(2, group="g", user="u", arrival=12.0)
    f = RandomForestPredictor().reset()
    f.observe([done(a, 10.0, 100.0), done(b, 11.0, 50.0), done(c, 13.0, 70.0)])
    X, y = f.training_data()
    count, median = FEATURES.index("group_count"), FEATURES.index("group_median")
    assert X[:, count].tolist() == [0.0, 0.0, 2.0]        # c arrived after a and b completed
    assert X[2, median] == pytest.approx((math.log(100) + math.log(50)) / 2)
    assert y.tolist() == pytest.approx([math.log(100), math.log(50), math.log(70)])
    # codes of a category first completed later are unknown (-1) at an earlier arrival
    assert X[:, FEATURES.index("group")].tolist() == [-1.0, -1.0, 0.0]
    assert X[0, FEATURES.index("user")] == -1.0


def test_trains_only_on_matured_cohorts():
    """100 jobs predicted at arrival (0..99); 0-59 and the short 80-89 completed, 60-79 and 90-99
    still pending. With maturity 0.1 the cutoff is the 10 % quantile of the pending arrivals (62):
    the short late jobs 80-89 stay out of the training set until their cohort has completed."""
    views = [view(i, group=f"g{i % 3}", arrival=float(i)) for i in range(100)]
    done_ids = list(range(60)) + list(range(80, 90))
    for maturity, rows in ((0.1, 60), (1.0, 70), (0.0, 60)):
        f = RandomForestPredictor(n_estimators=3, min_train=20, maturity=maturity).reset()
        for v in views:
            f.predict(v)
        f.observe([done(views[i], 100.0 + i, 10.0) for i in done_ids])
        f.predict(views[0])
        assert f.n_train_ == rows, maturity
    f = RandomForestPredictor(n_estimators=3, min_train=65).reset()  # too few mature rows: all
    for v in views:
        f.predict(v)
    f.observe([done(views[i], 100.0 + i, 10.0) for i in done_ids])
    f.predict(views[0])
    assert f.n_train_ == 70


def test_order_of_a_batch_does_not_matter():
    jobs = history(60)
    f1 = RandomForestPredictor(**SMALL).reset()
    f1.observe(jobs)
    f2 = RandomForestPredictor(**SMALL).reset()
    f2.observe(list(reversed(jobs)))
    assert np.array_equal(f1.training_data()[0], f2.training_data()[0])
    probe = view(500, group="g2", user="u0")
    assert f1.predict(probe) == f2.predict(probe)


class _Spy(RandomForestPredictor):
    """Records, at each job's first prediction (its submission), the completion times of
    everything observed so far (a re-prediction given the work done also asks the base forest,
    later, and is not a submission)."""

    log: list = []

    def observe(self, completed):
        super().observe(completed)
        self._seen = getattr(self, "_seen", []) + [c.completion for c in completed]

    def predict(self, job, *, attained=0, truth=None):
        asked = self.__dict__.setdefault("_asked", set())
        if not attained and job.id not in asked:
            asked.add(job.id)
            _Spy.log.append((job.arrival, max(getattr(self, "_seen", []), default=-math.inf)))
        return super().predict(job, attained=attained, truth=truth)


class _Peeking(Predictor):
    """A deliberately leaky predictor: the mean work of the job's group over the *whole*
    instance, future jobs included (it reads the instance behind the simulator's back)."""

    parameter_constraints: dict = {}
    instance = None

    def predict(self, job, *, attained=0, truth=None):
        works = [j.iterations for j in self.instance.jobs if j.group == job.group]
        base = sum(works) / len(works)
        return base if base > attained else 2 * attained


def _predictions_before_the_change(spec, inst, changed):
    """Initial predictions of A-SRPT on ``inst`` and on ``inst`` with ``changed`` jobs' work x3,
    for the jobs that arrived before any changed job completed (in either run)."""
    altered = inst.replace_jobs(
        Job(**{**{f: getattr(j, f) for f in j.__dataclass_fields__},
               "iterations": j.iterations * 3 if j.id in changed else j.iterations}) for j in inst.jobs)
    runs = []
    for instance in (inst, altered):
        _Peeking.instance = instance
        runs.append(simulate(instance, f"a-srpt:predictor={spec}"))
    first_change = min(r.record(i).completion for r in runs for i in changed)
    early = [j.id for j in inst.jobs if j.arrival < first_change]
    return [[r.policy_data["initial_predictions"][i] for i in early] for r in runs], early


def test_no_leakage_perturbing_the_future_leaves_past_predictions_unchanged():
    """Jobs still running change their true work; every prediction made before the first of them
    completes must be the same bit for bit. The check has teeth: a predictor that reads future
    jobs fails it."""
    inst = recurring_workload(240, seed=11, cluster="2x8", load=0.9)
    changed = {j.id for j in inst.jobs[100:140]}
    spec = '"forest:n_estimators=8:min_train=20:retrain_every=20"'
    (a, b), early = _predictions_before_the_change(spec, inst, changed)
    assert len(early) > 90 and a == b
    register_predictor("_test_peeking")(_Peeking)
    try:
        (a, b), _ = _predictions_before_the_change("_test_peeking", inst, changed)
        assert a != b
    finally:
        PREDICTORS.pop("_test_peeking", None)


def test_no_leakage_every_observed_job_completed_before_the_prediction():
    register_predictor("_test_spy")(_Spy)
    try:
        _Spy.log.clear()
        inst = recurring_workload(150, seed=4, cluster="2x8", load=0.9)
        simulate(inst, 'a-srpt:predictor="_test_spy:n_estimators=5:min_train=20"')
        assert len(_Spy.log) == 150
        assert all(seen <= arrival for arrival, seen in _Spy.log)
        assert sum(seen > -math.inf for _, seen in _Spy.log) > 100
    finally:
        PREDICTORS.pop("_test_spy", None)


# -- determinism ---------------------------------------------------------------------------------

def test_same_seed_same_predictions_bit_for_bit_and_another_seed_differs():
    inst = recurring_workload(200, seed=6, cluster="2x8", load=0.9)
    spec = 'a-srpt:predictor="forest:n_estimators=8:min_train=20:retrain_every=30:seed={}":adaptive="repredict"'
    r1, r2, r3 = (simulate(inst, spec.format(s)) for s in (1, 1, 2))
    assert r1.policy_data == r2.policy_data and r1.records == r2.records
    assert r1.policy_data["initial_predictions"] != r3.policy_data["initial_predictions"]


# -- the compiled forest -------------------------------------------------------------------------

def test_compiled_mean_forest_equals_scikit_learn():
    f = RandomForestPredictor(leaf="mean", **SMALL).reset()
    f.observe(history(80))
    probes = [view(200 + k, group=f"g{k % 5}", user="u0", meta={"submitted": 1.5e9 + 3600 * k})
              for k in range(10)]
    for v in probes:
        value = f.predict(v)
        x = f._features(v)
        expected = math.exp(x[FEATURES.index("group_median")] + f.forest_.predict(x[None, :])[0])
        assert value == pytest.approx(expected, rel=1e-12)


def test_median_leaf_is_the_pooled_weighted_median():
    f = RandomForestPredictor(**SMALL).reset()
    f.observe(history(80))
    f.predict(view(299))  # the lazy fit
    X, y = f.training_data()
    r = y - X[:, FEATURES.index("group_median")]
    leaves = f.forest_.apply(X.astype(np.float32))
    for v in (view(300, group="g1", user="u1"), view(301, group="zz")):
        x = f._features(v)
        reached = f.forest_.apply(x[None, :].astype(np.float32))[0]
        values, weights = [], []
        for t, leaf in enumerate(reached):
            members = r[leaves[:, t] == leaf]
            values += list(members)
            weights += [1 / len(members)] * len(members)
        order = np.argsort(values, kind="stable")
        cum = np.cumsum(np.asarray(weights)[order])
        med = np.asarray(values)[order][np.searchsorted(cum, cum[-1] / 2)]
        assert f.predict(v) == pytest.approx(math.exp(x[FEATURES.index("group_median")] + med), rel=1e-12)


# -- re-prediction given the work done --------------------------------------------------------------

def test_repredict_exceeds_the_work_done_in_every_mode():
    probe = view(500, group="g3", user="u1")
    cold = RandomForestPredictor(min_train=50).reset()
    assert cold.predict(probe, attained=5000.0) == 10000.0           # prior 3600 < 5000: doubling
    for levels in (0, 8):
        f = RandomForestPredictor(attained_levels=levels, **SMALL).reset()
        f.observe(history(100))
        base = f.predict(probe)
        for attained in (1.0, base / 2, base, 3 * base, 1e6):
            value = f.predict(probe, attained=attained)
            assert value > attained
            if levels == 0:
                assert value == (base if base > attained else 2 * attained)
            else:
                assert value >= 1.05 * attained or value == (base if base > attained else 2 * attained)
        if levels:
            assert f.conditional_forest_ is not None


def test_conditional_forest_learns_residual_life():
    """Groups whose runs are either 10 s or 1000 s: a job that has run 20 s is a long one."""
    rng = np.random.default_rng(1)
    jobs = [done(view(i, group="g", user="u", arrival=float(i)), float(i) + 0.1,
                 float(10 if rng.random() < 0.5 else 1000)) for i in range(200)]
    f = RandomForestPredictor(n_estimators=20, min_train=50).reset()
    f.observe(jobs)
    probe = view(999, group="g", user="u")
    assert 700 < f.predict(probe, attained=20.0) < 1400


# -- what the forest gets --------------------------------------------------------------------------

def test_jobs_without_group_get_no_group_history_and_abstract_jobs_work():
    cluster = Cluster.homogeneous(1, 8)
    jobs = tuple(Job(f"t{i}", float(i * 10), 1, processing_time=float(50 + i), user="vc1",
                     meta={"submitted": 1.5e9 + i}) for i in range(60))
    inst = Instance(cluster, jobs)
    log = replay_predictions("forest:n_estimators=5:min_train=20", inst)
    assert all(p > 0 for p in log.predicted)
    f = RandomForestPredictor(n_estimators=5, min_train=20).reset()
    views = job_views(inst)
    f.observe([done(v, v.arrival + 1, 50.0) for v in views])
    X, _ = f.training_data()
    assert set(X[:, FEATURES.index("group_count")]) == {0.0}
    assert X[-1, FEATURES.index("user_count")] == 59.0
    assert set(X[:, FEATURES.index("model")]) == {-1.0} and set(X[:, FEATURES.index("dp")]) == {-1.0}


def test_hour_and_weekday_from_the_submission_epoch():
    f = RandomForestPredictor().reset()
    x = f._features(view(0, meta={"submitted": 1506902400.0 + 86400 * 2 + 3600 * 13.5, "lr": 1e-3}))
    assert x[FEATURES.index("hour")] == 13.5 and x[FEATURES.index("weekday")] == 2.0   # Wednesday
    assert x[FEATURES.index("log10_lr")] == pytest.approx(-3)


def test_regression_forest_beats_group_mean_on_a_learnable_workload():
    """A workload whose groups drift strongly (AR(1) correlation 0.95, sd 1) with little noise:
    the last and recent runs say more than the mean. Pinned seed and margin: the forest's mean
    absolute log error is at least 20 % below the group mean's, and its R^2 (log) higher."""
    inst = recurring_workload(1500, seed=3, sigma_drift=1.0, drift_corr=0.95, sigma_within=0.1,
                              fail_fraction=0.0, one_off_fraction=0.0, mean_group_size=30)
    forest = replay_predictions("forest", inst).accuracy()
    mean = replay_predictions("group_mean", inst).accuracy()
    assert forest.mean_abs_log <= 0.8 * mean.mean_abs_log
    assert forest.median_abs_log <= 0.8 * mean.median_abs_log
    assert forest.r2_log > mean.r2_log
