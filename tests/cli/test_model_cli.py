"""``asrpt model``: JSON and table output, the zoo list, one-line errors with exit status 2."""

import json

import pytest

from asrpt.cli import main
from asrpt.dnn import get_model, model_names
from asrpt.dnn.perf import best_iteration_time
from asrpt.instance import Cluster, Job, Parallelism


def run(capsys, *argv):
    code = main(["model", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_payload_matches_the_library(capsys):
    code, out, err = run(capsys, "gpt2", "--gpu", "A100", "--parallel", "2,2,2", "--batch", "64",
                         "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["model"] == "gpt2" and d["params"] == get_model("gpt2").params
    assert d["gpu"] == "A100-80GB" and d["precision"] == "bf16"
    assert d["parallelism"] == {"dp": 2, "pp": 2, "tp": 2} and d["gpus"] == 8
    assert d["batch_size"] == 64 and d["micro_batches"] == 8
    assert len(d["stages"]) == 2 and d["memory_per_gpu"] == max(s["memory_per_gpu"]
                                                                 for s in d["stages"])
    job = Job("x", 0, 8, model="gpt2", parallelism=Parallelism(2, 2, 2), batch_size=64,
              iterations=1)
    assert d["iteration_time"] == pytest.approx(
        best_iteration_time(job, Cluster.homogeneous(1, 8, "A100")))
    assert d["flops_per_iteration"] > 0 and d["samples_per_second"] == pytest.approx(
        64 / d["iteration_time"])


def test_human_readable_table(capsys):
    code, out, _ = run(capsys, "resnet50", "--gpu", "V100", "--parallel", "4,1,1",
                       "--precision", "fp32")
    assert code == 0
    assert out.startswith("resnet50 (resnet): 25,557,032 parameters\n")
    assert "V100-32GB, fp32, dp=4 pp=1 tp=1 (4 GPUs on 1 server of 8)" in out
    assert "iteration time:" in out and "stage" in out


def test_list(capsys):
    code, out, _ = run(capsys, "--list", "--json")
    assert code == 0
    d = json.loads(out)
    assert [m["name"] for m in d["models"]] == list(model_names())
    assert {m["name"]: m["params"] for m in d["models"]}["llama-70b"] == get_model("llama-70b").params
    code, out, _ = run(capsys, "--list")
    assert code == 0 and "llama-70b" in out and "68,976,648,192" in out


@pytest.mark.parametrize("argv, message", [
    (["resnet5"], "Unknown model 'resnet5'"),
    (["gpt2", "--gpu", "H20O"], "unknown GPU type 'H20O' (did you mean 'H200'?)"),
    (["gpt2", "--precision", "fp9"], "unknown precision 'fp9'"),
    (["gpt2", "--gpu", "V100", "--precision", "bf16"], "precision bf16 is not supported by V100"),
    (["llama-70b", "--gpu", "A100"], "does not fit in GPU memory"),
    (["gpt2", "--batch", "2", "--parallel", "4,1,1"], "batch size 2 is smaller than dp = 4"),
    ([], "a MODEL is required"),
    (["gpt2", "--list"], "give either MODEL or --list"),
])
def test_errors_are_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("asrpt model: error: ") and message in err
    assert err.count("\n") == 1


def test_bad_parallel_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["model", "gpt2", "--parallel", "2,2"])
    assert exc.value.code == 2
    assert "is not dp,pp,tp" in capsys.readouterr().err


def test_a_parallel_degree_above_the_limit_says_why(capsys):
    """issue 17: argparse used to hide the reason behind "invalid _parallel value"."""
    with pytest.raises(SystemExit) as exc:
        run(capsys, "gpt2", "--parallel", "99999,99999,99999")
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "_parallel" not in err
    assert "dp: must be <= 65536" in err and len(err.strip().splitlines()) == 1
