"""``asrpt generate``: N files per call, byte-identical for the same call, family options from
the generator's parameters, one-line errors with exit status 2."""

import json
import os

import pytest

from asrpt.cli import main
from asrpt.instance import load_instance
from asrpt.workloads.generators import family_names, regenerate


def run(capsys, *argv):
    code = main(["generate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def read_all(directory):
    out = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as fh:
            out[name] = fh.read()
    return out


@pytest.mark.parametrize("family, options", [
    ("uniform", ["--n-jobs", "4", "--cluster", "1x4", "--mu", "4"]),
    ("heavy_tailed", ["--distribution", "lognormal", "--sigma", "2", "--no-integer"]),
    ("bursty", ["--mode", "poisson", "--burst-size", "3"]),
    ("adversarial", ["--pattern", "gang", "--gpus", "8"]),
    ("philly", ["--n-jobs", "6", "--cluster", "2x8", "--mode", "sample", "--load", "0.8"]),
    ("dnn", ["--n-jobs", "3", "--cluster", "1x8", "--models", "gpt2,resnet50"]),
])
def test_the_same_call_writes_byte_identical_files(capsys, tmp_path, family, options):
    for d in ("a", "b"):
        code, out, err = run(capsys, family, "--n", "3", "--seed", "7", "--out", str(tmp_path / d), *options)
        assert code == 0 and err == ""
        assert out == f"wrote 3 {family} instance file(s) to {tmp_path / d} (seed 7)\n"
    a, b = read_all(tmp_path / "a"), read_all(tmp_path / "b")
    assert a == b and list(a) == [f"{family}-0000{i}.json" for i in range(3)]
    inst = load_instance(tmp_path / "a" / f"{family}-00001.json")
    meta = inst.metadata
    assert meta["family"] == family and meta["series"] == {"seed": 7, "index": 1}
    assert set(meta["params"]) >= {"n_jobs"}
    assert regenerate(inst) == inst


def test_options_reach_the_generator_and_json_output(capsys, tmp_path):
    code, out, _ = run(capsys, "uniform", "--n", "2", "--out", str(tmp_path), "--n-jobs", "3",
                       "--max-job-gpus", "none", "--gpu-choice", "pow2", "--no-integer", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["family"] == "uniform" and d["n"] == 2 and len(d["files"]) == 2
    assert d["params"]["n_jobs"] == 3 and d["params"]["integer"] is False
    assert d["params"]["gpu_choice"] == "pow2" and d["params"]["max_job_gpus"] is None
    inst = load_instance(d["files"][0])
    assert inst.n_jobs == 3 and inst.metadata["params"]["integer"] is False


def test_list_and_help(capsys):
    code, out, _ = run(capsys, "--list")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == list(family_names())
    with pytest.raises(SystemExit) as info:
        main(["generate", "heavy_tailed", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "--alpha ALPHA" in out and "Pareto tail index. (default: 1.5)" in out


@pytest.mark.parametrize("argv, message", [
    (["uniform", "--out", "{d}", "--n-jobs", "0"], "The 'n_jobs' parameter of uniform_instance"),
    (["uniform", "--out", "{d}", "--cluster", "2y4"], "must be a cluster spec"),
    (["uniform", "--out", "{d}", "--seed", "-1"], "--seed must be >= 0"),
    (["dnn", "--out", "{d}", "--models", "gpt3"], "did you mean"),
    ([], "choose a FAMILY"),
])
def test_bad_input_is_one_line_exit_2(capsys, tmp_path, argv, message):
    code, out, err = run(capsys, *[a.format(d=tmp_path) for a in argv])
    assert code == 2 and out == ""
    assert err.startswith("asrpt generate: error:") and message in err and err.count("\n") == 1


def test_usage_errors_exit_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        main(["generate", "unifrm", "--out", str(tmp_path)])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["generate", "uniform", "--out", str(tmp_path), "--mu", "four"])
    assert info.value.code == 2 and "'four' is not a number" in capsys.readouterr().err


def test_different_content_needs_force(capsys, tmp_path):
    assert run(capsys, "uniform", "--out", str(tmp_path), "--seed", "1")[0] == 0
    code, _, err = run(capsys, "uniform", "--out", str(tmp_path), "--seed", "2")
    assert code == 2 and "exists with other content" in err
    assert run(capsys, "uniform", "--out", str(tmp_path), "--seed", "2", "--force")[0] == 0
