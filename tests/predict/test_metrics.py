"""Prediction accuracy and distortion (proofs/model.md, Definition 6): values, exactness, the pairs taken
from a run and from a replay, and the one-line errors."""

import math
from fractions import Fraction

import numpy as np
import pytest
from sklearn.metrics import mean_absolute_error, mean_absolute_percentage_error, r2_score

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.predict import Predictor, register_predictor
from asrpt.predict.base import PREDICTORS
from asrpt.predict.metrics import (accuracy, distortion, job_views, mae, mape, r2_log,
                                   replay_predictions, run_predictions)
from asrpt.sim import simulate
from asrpt.workloads import recurring_workload


def test_accuracy_measures_agree_with_scikit_learn():
    rng = np.random.default_rng(0)
    true = rng.lognormal(5, 1, 200)
    pred = true * rng.lognormal(0, 0.5, 200)
    assert mae(true, pred) == pytest.approx(mean_absolute_error(true, pred), rel=1e-12)
    assert mape(true, pred) == pytest.approx(mean_absolute_percentage_error(true, pred), rel=1e-12)
    assert r2_log(true, pred) == pytest.approx(r2_score(np.log(true), np.log(pred)), rel=1e-12)
    a = accuracy(list(true), list(pred))
    logs = np.abs(np.log(pred / true))
    assert a.n == 200 and a.mean_abs_log == pytest.approx(logs.mean())
    assert a.median_abs_log == pytest.approx(np.median(logs))


def test_distortion_is_exact_and_is_the_product_of_over_and_under():
    d = distortion([Fraction(3), 4, 5], [Fraction(1), 6, 5])
    assert (d.mu_over, d.mu_under, d.mu) == (Fraction(3, 2), 3, Fraction(9, 2))
    assert type(d.mu) is Fraction and d.ratio_percentiles[50] == 1
    assert d.share_over == pytest.approx(1 / 3) and d.share_within_2x == pytest.approx(2 / 3)
    perfect = distortion([7, 8, 9], [7, 8, 9])
    assert (perfect.mu_over, perfect.mu_under, perfect.mu) == (1, 1, 1)
    # only over-estimates: mu_under stays at its floor of 1 (and vice versa)
    assert distortion([1, 2], [3, 2]).mu_under == 1 and distortion([3, 2], [1, 2]).mu_over == 1
    assert set(d.to_dict()["ratio_percentiles"]) == {"p1", "p5", "p25", "p50", "p75", "p95", "p99"}


@pytest.mark.parametrize("true, pred, text", [
    ([1, 2], [1], "2 true values but 1 predictions"),
    ([], [], "no \\(true, predicted\\) pairs"),
    ([1, 0], [1, 1], "values must be finite numbers > 0, got 0"),
    ([1, 2], [1, -3], "got -3"),
    ([1, float("nan")], [1, 1], "got nan"),
])
def test_bad_pairs_raise_one_line(true, pred, text):
    for f in (mae, mape, r2_log, distortion, accuracy):
        with pytest.raises(InvalidParameterError, match=text):
            f(true, pred)


def test_r2_log_is_none_without_variance_and_negative_when_worse_than_the_mean():
    assert r2_log([5, 5, 5], [1, 2, 3]) is None
    assert r2_log([1, 10, 100], [100, 10, 1]) < 0


def test_run_predictions_reads_what_a_srpt_recorded():
    inst = recurring_workload(60, seed=2, cluster="2x8")
    res = simulate(inst, 'a-srpt:predictor="noisy:sigma=0.5:seed=3":adaptive="doubling"')
    initial = run_predictions(res)
    assert initial.ids == tuple(r.id for r in res.records)
    assert initial.true == tuple(j.iterations for j in inst.jobs)
    noisy = PREDICTORS["noisy"][0](sigma=0.5, seed=3)
    assert initial.predicted == pytest.approx([j.iterations * noisy.factor(j.id) for j in inst.jobs])
    final = run_predictions(res, which="final")
    assert all(f >= i for f, i in zip(final.predicted, initial.predicted))  # doubling only grows
    with pytest.raises(InvalidParameterError, match="recorded no 'initial_predictions'"):
        run_predictions(simulate(inst, "fifo"))


def test_replay_observes_completions_before_same_instant_arrivals_and_never_the_future():
    cluster = Cluster.homogeneous(1, 4)
    jobs = (Job("a", 0, 1, processing_time=5, group="g"), Job("b", 5, 1, processing_time=9, group="g"),
            Job("c", 6, 1, processing_time=1, group="g"), Job("d", 20, 1, processing_time=1, group="g"))
    log = replay_predictions("group_mean:prior=100", Instance(cluster, jobs))
    # a: prior; b arrives as a completes (observed first): 5; c: b still running: 5;
    # d: a, b (5 + 9 = 14 <= 20) and c (7) done: mean 5
    assert log.predicted == (100.0, 5.0, 5.0, 5.0)
    # given completion times: c never completes, b completes at 30
    log = replay_predictions("group_mean:prior=100", Instance(cluster, jobs),
                             completions={"a": 5, "b": 30})
    assert log.predicted == (100.0, 5.0, 5.0, 5.0)
    assert replay_predictions("oracle", Instance(cluster, jobs)).accuracy().distortion.mu == 1


class _Recorder(Predictor):
    """Records the views the engine hands to predictors."""

    parameter_constraints: dict = {}
    seen: dict = {}

    def predict(self, job, *, attained=0, truth=None):
        self._check_fitted()
        _Recorder.seen[job.id] = job
        return 1.0


def test_job_views_are_the_engines_views():
    if "_test_recorder" not in PREDICTORS:
        register_predictor("_test_recorder")(_Recorder)
    try:
        inst = recurring_workload(30, seed=5, cluster="2x8")
        simulate(inst, "a-srpt:predictor=_test_recorder")
        mine = {v.id: v for v in job_views(inst)}
        fields = ("index", "id", "key", "arrival", "gpus", "weight", "is_abstract", "tau_star",
                  "predicted_work", "instances", "model", "parallelism", "batch_size", "precision",
                  "user", "group", "dataset", "meta")
        for job_id, v in _Recorder.seen.items():
            assert all(getattr(v, f) == getattr(mine[job_id], f) for f in fields), job_id
        assert len(_Recorder.seen) == 30
    finally:
        PREDICTORS.pop("_test_recorder", None)


def test_replay_log_accuracy_round_trip():
    inst = recurring_workload(80, seed=3, cluster="2x8")
    log = replay_predictions("noisy:sigma=0.3:seed=1", inst)
    a = log.accuracy()
    assert a.n == 80 and 0 < a.distortion.mu_over and a.distortion.mu >= 1
    assert set(log.to_dict()) == {j.id for j in inst.jobs}
    assert math.isfinite(a.to_dict()["distortion"]["mu"])
