"""``asrpt predict-eval`` and ``asrpt workload``: JSON payloads that match the library, every
kind of WORKLOAD, and one-line errors with exit status 2."""

import json
import os

import pytest

from asrpt.cli import main
from asrpt.instance import load_instance
from asrpt.predict.metrics import replay_predictions, run_predictions
from asrpt.sim import simulate
from asrpt.workloads import recurring_workload

BUNDLED_PHILLY = os.path.join(os.path.dirname(__file__), "..", "..", "asrpt", "data", "philly-40000-20000.csv.gz")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_of_a_run_matches_the_library(capsys):
    code, out, err = run(capsys, "predict-eval", "recurring:n_jobs=120:cluster=\"2x8\"", "--seed", "3",
                         "--predictor", "forest:n_estimators=5:min_train=20", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["mode"] == "run" and d["workload"]["jobs"] == 120 and d["workload"]["gpus"] == 16
    assert d["workload"]["source"] == 'recurring:n_jobs=120:cluster="2x8":seed=3'
    (e,) = d["results"]
    inst = recurring_workload(120, cluster="2x8", seed=3)
    res = simulate(inst, 'a-srpt:predictor="forest:n_estimators=5:min_train=20"', seed=3)   # the default policy
    acc = run_predictions(res).accuracy()
    assert e["initial"]["mae"] == pytest.approx(acc.mae)
    assert e["initial"]["distortion"]["mu"] == pytest.approx(acc.distortion.mu)
    assert e["final"]["n"] == 120 and e["summary"]["mean_jct"] == pytest.approx(res.summary["mean_jct"])
    assert e["adaptive_updates"] == res.policy_data["adaptive_updates"]
    assert set(e["initial"]) == {"n", "mae", "mape", "r2_log", "mean_abs_log", "median_abs_log", "distortion"}
    assert set(e["initial"]["distortion"]) >= {"mu_over", "mu_under", "mu", "ratio_percentiles"}
    log = run_predictions(res, status_of={j.id: j.status for j in inst.jobs})
    s = log.scores()
    assert e["scores"]["spearman"] == pytest.approx(s.spearman)
    assert e["scores"]["r2_log_succeeded"] == pytest.approx(s.r2_log_succeeded)
    assert e["scores"]["n_succeeded"] == sum(j.status == "succeeded" for j in inst.jobs) < 120
    assert e["scores"]["coverage_80"] is None and e["band_coverage"] is None   # the forest has no band


def test_several_predictors_one_table_without_mape(capsys):
    code, out, err = run(capsys, "predict-eval", "recurring:n_jobs=200:cluster=\"2x8\"", "--replay",
                         "--predictor", "hierarchy,group_mean,helios")
    assert code == 0 and "replay" in err
    table, *coverage = out.split("\n\n")
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["predictor", "n", "rho"] and "MAPE" not in out
    assert [ln.split()[0] for ln in lines[1:]] == ["hierarchy", "group_mean", "helios"]
    inst = recurring_workload(200, cluster="2x8", seed=0)
    log = replay_predictions("hierarchy", inst)
    s = log.scores()
    assert lines[1].split()[2] == f"{s.spearman:.3f}" and lines[1].split()[7] == f"{s.coverage_80:.3f}"
    assert lines[2].split()[7] == "-"                        # group_mean has no band
    # Issue 45: where the band holds, by true-work decile and by hierarchy level (predictors with bands)
    assert [c.split(":")[0] for c in coverage] == ["hierarchy", "helios"]
    deciles = coverage[0].splitlines()[2:12]       # (the title line, the header, ten deciles)
    assert [row.split()[2] for row in deciles] == [f"{g['coverage']:.3f}" for g in log.band_coverage("size")]
    assert sum(int(row.split()[1]) for row in deciles) == 200
    lines = coverage[0].splitlines()
    assert lines[12].startswith("hierarchy: the same by predicted-work decile")
    by_pred = lines[14:24]
    assert [row.split()[2] for row in by_pred] == [f"{g['coverage']:.3f}" for g in log.band_coverage("predicted")]
    assert [row.split()[0] for row in by_pred] == [g["group"] for g in log.band_coverage("predicted")]
    assert lines[24] == "hierarchy: the same by the level that predicted the job"


def test_replay_of_an_instance_file_and_the_table(capsys, tmp_path):
    inst = recurring_workload(80, cluster="2x8", seed=1)
    path = tmp_path / "w.json"
    assert main(["workload", "recurring:n_jobs=80:cluster=\"2x8\"", "--seed", "1", "--out", str(path)]) == 0
    capsys.readouterr()
    assert load_instance(path).jobs == inst.jobs
    code, out, _ = run(capsys, "predict-eval", str(path), "--replay", "--predictor", "group_mean", "--json")
    d = json.loads(out)
    (e,) = d["results"]
    assert code == 0 and d["mode"] == "replay" and e["policy"] is None and e["final"] is None
    assert e["initial"]["mape"] == pytest.approx(replay_predictions("group_mean", inst).accuracy().mape)
    code, out, err = run(capsys, "predict-eval", str(path), "--replay")
    assert code == 0 and out.splitlines()[1].startswith("hierarchy") and "within 2x" in out and "replay" in err


def test_qssf_records_its_predictions_which_equal_a_replay_on_its_completions(capsys):
    code, out, _ = run(capsys, "predict-eval", "recurring:n_jobs=60:cluster=\"2x8\"", "--policy", "qssf",
                       "--predictor", "group_mean", "--json")
    (e,) = json.loads(out)["results"]
    assert code == 0 and e["policy"] == "qssf[group_mean]"
    assert e["final"] == e["initial"]  # QSSF never revises a prediction
    inst = recurring_workload(60, cluster="2x8", seed=0)
    res = simulate(inst, "qssf:predictor=group_mean")
    expected = replay_predictions("group_mean", inst, completions=res.completion_times).accuracy()
    assert e["initial"]["mae"] == pytest.approx(expected.mae)


@pytest.mark.skipif(not os.path.exists(BUNDLED_PHILLY), reason="bundled Philly window missing")
def test_trace_jobs_without_groups(capsys):
    code, out, _ = run(capsys, "predict-eval", BUNDLED_PHILLY, "--limit", "150", "--replay",
                       "--predictor", "forest:n_estimators=5:min_train=20", "--json")
    d = json.loads(out)
    assert code == 0 and d["results"][0]["initial"]["n"] == 150 and d["workload"]["trace"]["jobs"] == 150


@pytest.mark.parametrize("argv, text", [
    (["predict-eval", "no-such-file.json"], "no such file, and not a generator spec"),
    (["predict-eval", "recuring"], "not a generator spec"),
    (["predict-eval", "recurring:n_jobs=10", "--predictor", "forrest"], "unknown predictor 'forrest'"),
    (["predict-eval", "recurring:n_jobs=10", "--policy", "fifo"], "policy 'fifo' takes no predictor"),
    (["predict-eval", "recurring:n_jobs=10:load=-1"], "'load' parameter of recurring_workload"),
    (["workload", "recurrin"], "did you mean 'recurring'"),
])
def test_errors_are_one_line_with_status_2(capsys, argv, text):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and text in err and len(err.strip().splitlines()) == 1


def test_workload_stats_side_by_side(capsys):
    code, out, _ = run(capsys, "workload", "recurring", "--jobs", "300", "--cluster", "4x8", "--stats")
    assert code == 0 and "published (philly)" in out and "share of 1-GPU jobs" in out
    code, out, _ = run(capsys, "workload", "recurring:profile=\"helios\"", "--jobs", "200", "--json")
    d = json.loads(out)
    assert d["jobs"] == 200 and d["metadata"]["params"]["profile"] == "helios"
    assert {"statistic": "median GPUs per job", "generated": 1.0, "published": 1} in d["statistics"]
