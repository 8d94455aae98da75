"""``asrpt validate`` and the CLI's error contract: one line on stderr, exit 2, no traceback."""

import json
import subprocess
import sys

import pytest

from asrpt.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_valid_file(capsys):
    code, out, err = run(capsys, "validate", "instances/small-cluster.json")
    assert code == 0 and out.strip() == "instances/small-cluster.json: valid (8 jobs, 2 servers, 8 GPUs)"


def test_problems_are_listed_with_locations_and_exit_1(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cluster": {"servers": [{"gpus": 4}, {"gpus": 4}]}, "jobs": [
        {"id": "a", "arrival": 0, "gpus": 2, "processing_time": 5},
        {"id": "a", "arival": 0, "gpus": 9, "processing_time": 5}]}))
    code, out, err = run(capsys, "validate", str(bad))
    assert code == 1 and err.strip() == f"{bad}: 4 problems"
    assert out.splitlines() == [
        f"{bad}: jobs[1].arival: unknown field (did you mean 'arrival'?)",
        f"{bad}: jobs[1].arrival: is required",
        f"{bad}: jobs[1].id: duplicate id 'a' (also jobs[0])",
        f"{bad}: jobs[1].gpus: 9 exceeds the cluster's 8 GPUs"]
    code, out, _ = run(capsys, "validate", str(bad), "--json")
    d = json.loads(out)
    assert code == 1 and d["valid"] is False and len(d["problems"]) == 4


def test_malformed_json_is_a_problem_not_a_crash(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out, _ = run(capsys, "validate", str(bad))
    assert code == 1 and "invalid JSON at line 1 column 2" in out


@pytest.mark.parametrize("argv, text", [
    (["validate", "no-such-file.json"], "asrpt validate: error: no-such-file.json: no such file"),
    (["srpt", "no-such-file.json"], "asrpt srpt: error: no-such-file.json: no such file"),
    (["simulate", "instances/small-cluster.json", "--policy", "fifi"], "unknown policy 'fifi' (did you mean 'fifo'?)"),
    (["simulate", "instances/small-cluster.json", "--cluster", "8y8"], "'8y8' is not a cluster spec"),
    (["validate"], "the following arguments are required: FILE"),
    (["nonsense"], "invalid choice: 'nonsense'"),
])
def test_bad_input_is_one_line_and_exit_2(argv, text):
    proc = subprocess.run([sys.executable, "-m", "asrpt", *argv], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert text in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_simulate_table_names_each_rows_predictor_and_job_model(capsys):
    """Issue 46: a comparison never hides that a baseline is clairvoyant: every row names its
    predictor and the job model, and rows that use different predictors get a note."""
    code, out, err = run(capsys, "simulate", "instances/small-cluster.json", "--policy", "a-srpt,fifo,srsf")
    header, *rows = out.splitlines()
    assert code == 0 and header.split()[:3] == ["policy", "predictor", "jobs"]
    assert [r.split()[:3] for r in rows] == [["a-srpt", "instance", "abstract"], ["fifo", "none", "abstract"],
                                             ["srsf", "oracle", "abstract"]]
    assert "note: the rows use different predictors (instance: a-srpt; oracle: srsf)" in err
    code, out, err = run(capsys, "simulate", "instances/small-cluster.json", "--policy", "a-srpt,srsf",
                         "--predictor", "instance")
    assert code == 0 and "different predictors" not in err
    assert [r.split()[1] for r in out.splitlines()[1:]] == ["instance", "instance"]
