"""``asrpt certify`` and ``asrpt worst-case``: JSON payloads match the library, exit statuses (0 when
the certificate holds, 1 when it fails or a violation is found, 2 on bad input), tables print."""

import json
import os
from fractions import Fraction

import pytest

from asrpt.cli import main
from asrpt.instance import Cluster, Instance, Job, Parallelism, load_instance, save_instance
from asrpt.theory import certify_instance

WORKED = "instances/worked-example.json"
SMALL = "instances/small-cluster.json"


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:   # argparse usage errors exit 2 with one line
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def dnn_counterexample(tmp_path):
    jobs = [Job("A", 0, 1, model="gpt2", parallelism=Parallelism(1, 1, 1), iterations=1)]
    jobs += [Job(f"B{i}", Fraction(1, 100), 1, model="resnet18_cifar", parallelism=Parallelism(1, 1, 1),
                 iterations=1) for i in range(2)]
    path = tmp_path / "dnn.json"
    save_instance(Instance(Cluster.homogeneous(1, 1, "A100"), tuple(jobs)), path)
    return str(path)


# --- asrpt certify --------------------------------------------------------------------------------


def test_certify_json_matches_the_library(capsys):
    code, out, err = run(capsys, "certify", WORKED, "--json", "--jobs")
    assert code == 0 and err == ""
    d = json.loads(out)
    for key in ("holds", "total_completion_time", "lower_bound", "bound", "ratio_to_lb", "beta", "rho", "mu",
                "mu_over", "mu_under", "lb1", "lb2", "virtual_total", "inequalities", "covered"):
        assert key in d
    assert (d["holds"], d["total_completion_time"], d["lower_bound"], d["bound"], d["ratio_to_lb"]) == (
        True, 9, 8, 40, 1.125)
    assert (d["beta"], d["rho"], d["mu"]) == (1, 4, 1)
    assert d["inequalities"]["total"] == {"name": "total", "lhs": 9, "rhs": 32, "slack": 23, "holds": True,
                                          "job": None,
                                          "statement": certify_instance(load_instance(WORKED)).inequality("total").statement}
    assert [j["id"] for j in d["jobs"]] == ["A", "B", "C"]


def test_certify_table_and_predictor(capsys):
    code, out, err = run(capsys, "certify", WORKED, "--predictor", "noisy:sigma=1:clip=3", "--jobs")
    assert code == 0 and "Theorem 1 certificate" in out and "per_job_refined" in out
    assert "float arithmetic" in out


def test_certify_exits_1_when_the_certificate_fails(capsys, dnn_counterexample):
    code, out, _ = run(capsys, "certify", dnn_counterexample, "--json")
    assert code == 0  # preemption at once (the theorem's assumption) restores it
    code, out, _ = run(capsys, "certify", dnn_counterexample, "--preemption-point", "iteration", "--json")
    assert code == 1
    d = json.loads(out)
    assert d["holds"] is False and "total" in d["failures"] and d["covered"] is False
    assert d["assumptions"]["(A3)"] is False
    assert d["not_covered"].startswith("not covered: (A3) fails at t = 1/100 for B0")


def test_certify_outside_the_theorem_says_so(capsys):
    code, out, _ = run(capsys, "certify", WORKED, "--strict", "--preemption-cost", "1", "--adaptive", "doubling")
    assert code == 0 and "outside the theorem's assumptions" in out
    assert "not covered: (A1) fails: adaptive='doubling' with 0 re-predictions; (A2) fails: backfill is off" in out


def test_certify_theorem3_table_and_json(capsys):
    from asrpt.theory.robust import certify_robust_instance

    code, out, _ = run(capsys, "certify", WORKED, "--theorem", "3", "--lam", "0.75")
    assert code == 0 and "Theorem 3 certificate" in out and "lam = 3/4" in out and "robust_closed_form" in out
    code, out, _ = run(capsys, "certify", WORKED, "--theorem", "3", "--lam", "0.75", "--json")
    d = json.loads(out)
    cert = certify_robust_instance(load_instance(WORKED), lam=Fraction(3, 4))
    assert d["theorem"] == 3 and d["holds"] and d["robust_ratio_bound"] == cert.robust_ratio_bound == 36
    assert d["total_completion_time"] == pytest.approx(float(cert.total_completion_time))


def test_certify_theorem2_records_the_hysteresis_it_ran(capsys):
    """``--epsilon`` reaches the run (default: the policy's 0.5) and the certificate holds."""
    for argv, epsilon in (((), 0.5), (("--epsilon", "0"), 0), (("--epsilon", "0.9"), 0.9)):
        code, out, _ = run(capsys, "certify", SMALL, "--theorem", "2", "--json", *argv)
        d = json.loads(out)
        assert code == 0 and d["holds"] and d["epsilon"] == epsilon, (argv, d.get("epsilon"))


@pytest.mark.parametrize("argv, message", [
    (["certify", WORKED, "--theorem", "3", "--lam", "1"], "--lam must be in"),
    (["certify", WORKED, "--theorem", "3", "--adaptive", "doubling"], "--theorem 3 runs under its assumptions"),
    (["certify", WORKED, "--epsilon", "0.2"], "--epsilon is Theorem 2's option"),
    (["certify", WORKED, "--theorem", "2", "--epsilon", "1"], "'epsilon' parameter"),
    (["certify", "missing.json"], "no such file"),
    (["certify", WORKED, "--predictor", "psychic"], "unknown predictor"),
    (["certify", WORKED, "--tolerance", "-1"], "'tolerance' parameter"),
    (["certify", WORKED, "--seed", "-3"], "--seed must be >= 0"),
    (["certify", WORKED, "--preemption-cost", "-1"], "not a non-negative number"),
])
def test_certify_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


# --- asrpt worst-case -----------------------------------------------------------------------------


def test_worst_case_json_and_instance_file(capsys, tmp_path):
    path = tmp_path / "w.json"
    code, out, err = run(capsys, "worst-case", "--gpus", "2", "--max-jobs", "3", "--mu", "5/2",
                         "--max-evals", "12", "--budget", "60", "--out", str(path), "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["instance_file"] == str(path) and d["violation"] is False and d["certificate_holds"]
    assert d["cell"] == {"gpus": 2, "max_job_gpus": 2, "mu": 2.5, "max_jobs": 3}
    assert 1 <= d["ratio"] <= d["ratio_upper"] and d["ratio"] <= d["bound"] <= d["cell_bound"]
    inst = load_instance(path, exact=True)
    assert inst.n_jobs == len(d["instance"]["jobs"]) and inst.cluster.total_gpus == 2


def test_worst_case_table_output(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "worst-case", "--gpus", "1", "--max-jobs", "2", "--max-evals", "4")
    assert code == 0 and "ALG / OPT" in out and "OPT (proven)" in out and "saved" not in out
    assert os.listdir(tmp_path) == []             # nothing written unless --out is given
    assert "eval 1" in err


@pytest.mark.parametrize("argv, message", [
    (["worst-case", "--gpus", "80", "--max-jobs", "2"], "'gpus' parameter of worst_case"),
    (["worst-case", "--gpus", "2", "--max-jobs", "2", "--mu", "0.5"], "not a number >= 1"),
    (["worst-case", "--gpus", "2", "--max-jobs", "0"], "not a positive integer"),
    (["worst-case", "--gpus", "2"], "required"),
])
def test_worst_case_bad_input_exits_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and "Traceback" not in err
