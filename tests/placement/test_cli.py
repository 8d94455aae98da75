"""``asrpt place``: JSON payload equals the library's answer, the table, one-line errors."""

import json

import pytest

from asrpt.cli import main
from asrpt.dnn.parallel import worker_graph
from asrpt.instance import load_instance
from asrpt.placement import place, validate_placement

INSTANCE = """{"format": "asrpt-instance/1",
 "cluster": {"servers": [{"gpus": 8, "count": 3}], "gpu_type": "A100"},
 "jobs": [{"id": "g", "arrival": 0, "gpus": 16, "model": "gpt2",
           "parallelism": {"dp": 2, "pp": 2, "tp": 4}, "iterations": 10},
          {"id": "a", "arrival": 0, "gpus": 2, "processing_time": 3}]}"""


@pytest.fixture
def instance_file(tmp_path):
    path = tmp_path / "inst.json"
    path.write_text(INSTANCE)
    return str(path)


def run(capsys, *argv):
    code = main(["place", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_equals_the_library(capsys, instance_file):
    code, out, err = run(capsys, instance_file, "--job", "g", "--free", "8,4,6", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    inst = load_instance(instance_file)
    job = inst.job("g")
    W = worker_graph(job, "A100")
    p = place(W, [8, 4, 6], cluster=inst.cluster, job=job)
    assert d["job"] == "g" and d["gpus"] == 16 and d["free"] == [8, 4, 6]
    assert d["cut_bytes"] == pytest.approx(p.cut_bytes) and d["status"] == "optimal"
    assert d["tau"] == pytest.approx(p.tau) and d["tau"] >= d["tau_star"]
    assignment = {tuple(w): h for w, h in d["assignment"]}
    assert len(assignment) == 16 and sorted(d["server_gpus"]) == sorted(map(list, p.server_gpus))
    q = type(p)(assignment, tuple(map(tuple, d["server_gpus"])), d["cut_bytes"],
                d["servers_used"], d["tau"], d["method"], d["status"])
    assert validate_placement(W, [8, 4, 6], q, inst.cluster, job=job) == ()


def test_table_and_options(capsys, instance_file):
    code, out, _ = run(capsys, instance_file, "--job", "g", "--method", "greedy",
                       "--objective", "tau")
    assert code == 0
    assert "method greedy (tau): status heuristic" in out and "iteration time" in out
    assert "server" in out.splitlines()[4]
    code, out, _ = run(capsys, instance_file, "--job", "g", "--free", "4,4,8", "--solver", "cbc",
                       "--time-limit", "5", "--gap", "0")
    assert code == 0 and "status optimal" in out


@pytest.mark.parametrize("argv, message", [
    (["--job", "zz"], "no job 'zz'"),
    (["--job", "a"], "is abstract"),
    (["--job", "g", "--free", "8,4"], "--free lists 2 servers, the cluster has 3"),
    (["--job", "g", "--free", "4,4,4"], "needs 16 GPUs, 12 are free"),
    (["--job", "g", "--free", "4,x"], "is not a list of free GPUs"),
    (["--job", "g", "--gap", "2"], "is not a relative gap"),
    (["--job", "g", "--method", "nope"], "invalid choice"),
])
def test_errors_are_one_line_with_status_2(capsys, instance_file, argv, message):
    with pytest.raises(SystemExit) as exc:
        code = main(["place", instance_file, *argv])
        raise SystemExit(code)
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and message in err and len(err.strip().splitlines()) == 1
