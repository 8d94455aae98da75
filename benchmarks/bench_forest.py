"""Speed of the random-forest predictor (issue 7).

- One prediction of a fitted forest (compiled trees, pooled leaf median): well under a
  millisecond, whatever the number of completed jobs.
- One fit on 4,000 completed jobs (the default training window), with the compiled leaves.
- A-SRPT with the forest on a 20,000-job recurring workload (Philly-calibrated, 8 x 8 A100,
  load 0.9), beside A-SRPT with the group mean: the forest must not make the run impractically
  slow (target: under 3 minutes here, under 10 x the group mean's time).

Run with ``pytest benchmarks/bench_forest.py --benchmark-only -m "slow or not slow"``.
"""

import time

import pytest

from asrpt.predict.forest import RandomForestPredictor
from asrpt.predict.metrics import job_views
from asrpt.sim import simulate
from asrpt.sim.view import CompletedJob
from asrpt.workloads import recurring_workload


@pytest.fixture(scope="module")
def fitted():
    inst = recurring_workload(5000, seed=0)
    views = job_views(inst)
    done = [CompletedJob(v, v.arrival + j.iterations * v.tau_star, j.iterations)
            for v, j in zip(views, inst.jobs)]
    f = RandomForestPredictor().reset()
    f.observe(done[:4500])
    f.predict(views[4500])  # the fit
    return f, views[4500:]


def test_predict_one_job(benchmark, fitted):
    f, probes = fitted
    state = {"i": 0}

    def one():
        state["i"] = (state["i"] + 1) % len(probes)
        return f.predict(probes[state["i"]])

    benchmark(one)
    assert benchmark.stats.stats.median < 1e-3


def test_fit_on_the_training_window(benchmark, fitted):
    f, probes = fitted
    X, y = f._window()

    def fit():
        f.fitted_at_ = -10 ** 9  # force the schedule
        return f._model()

    benchmark.pedantic(fit, rounds=3, iterations=1)
    assert f.n_train_ == 4000 and benchmark.stats.stats.median < 5.0


@pytest.mark.slow
def test_asrpt_with_the_forest_on_20000_jobs(benchmark):
    inst = recurring_workload(20000, seed=0, load=0.9)
    t = time.perf_counter()
    simulate(inst, "a-srpt:predictor=group_mean")
    baseline = time.perf_counter() - t
    res = benchmark.pedantic(simulate, args=(inst, "a-srpt:predictor=forest"), rounds=1, iterations=1)
    forest = benchmark.stats.stats.max
    benchmark.extra_info.update(group_mean_s=baseline, forest_s=forest, jobs=inst.n_jobs)
    assert res.summary["finished"] == 20000
    assert forest < 180 and forest < 10 * baseline
