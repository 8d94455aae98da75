"""``asrpt srpt``, ``asrpt opt`` and ``asrpt bounds``: JSON payloads match the library, tables print,
bad input is one line on stderr with exit status 2 and never a traceback."""

import json

import pytest

from asrpt.cli import main
from asrpt.instance import Cluster, Instance, Job, save_instance
from asrpt.offline import lower_bounds
from asrpt.solve import available_solvers

WORKED = Instance(Cluster.homogeneous(1, 4), (
    Job("A", 0, 2, processing_time=4), Job("B", 0, 4, processing_time=1, predicted_processing_time=2),
    Job("C", 1, 1, processing_time=2)))
TWO_MACHINES = Instance(Cluster.homogeneous(2, 1), tuple(
    Job(i, r, 1, processing_time=p) for i, r, p in [("A", 0, 5), ("B", 5, 1), ("C", 0, 1), ("D", 5, 1), ("E", 0, 1)]))


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, inst in {"worked": WORKED, "two": TWO_MACHINES}.items():
        path = tmp_path / f"{name}.json"
        save_instance(inst, path)
        out[name] = str(path)
    (tmp_path / "bad.json").write_text('{"cluster": ')
    out["bad_json"] = str(tmp_path / "bad.json")
    (tmp_path / "too_big.json").write_text(json.dumps({
        "cluster": {"servers": [{"gpus": 2}]},
        "jobs": [{"id": "a", "arrival": 0, "gpus": 3, "processing_time": 1}]}))
    out["infeasible_job"] = str(tmp_path / "too_big.json")
    (tmp_path / "negative.json").write_text(json.dumps({
        "cluster": {"servers": [{"gpus": 2}]},
        "jobs": [{"id": "a", "arrival": 0, "gpus": 1, "processing_time": -1}]}))
    out["invalid"] = str(tmp_path / "negative.json")
    out["missing"] = str(tmp_path / "nope.json")
    return out


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- asrpt srpt ---------------------------------------------------------------------------------


def test_srpt_json_is_the_virtual_schedule(capsys, files):
    code, out, err = run(capsys, "srpt", files["worked"], "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["total_completion_time"] == 6
    assert d["completion_times"] == {"A": 3.5, "B": 1, "C": 1.5}
    assert d["virtual_sizes"] == {"A": 2, "B": 1, "C": 0.5}
    assert d["finishing_order"] == ["B", "C", "A"] and d["predicted"] is False
    assert d["pieces"][0] == {"job": "B", "start": 0, "end": 1}


def test_srpt_predicted_and_exact(capsys, files):
    code, out, _ = run(capsys, "srpt", files["worked"], "--predicted", "--exact", "--json")
    d = json.loads(out)
    assert code == 0 and d["predicted"] is True
    # B's predicted size is 4*2/4 = 2, a tie with A broken by id (A first); C (1/2) preempts A at t=1
    assert d["virtual_sizes"]["B"] == 2
    assert d["completion_times"] == {"A": 2.5, "B": 4.5, "C": 1.5}


def test_srpt_table(capsys, files):
    code, out, _ = run(capsys, "srpt", files["worked"])
    assert code == 0
    assert out.splitlines()[0].startswith("virtual SRPT of ")
    assert "C~" in out and out.rstrip().endswith("total completion time: 6")


def test_srpt_prints_the_virtual_machine_the_default_policy_uses(capsys, files):
    """Issue 46: `asrpt srpt` printed only the fluid machine while the default A-SRPT guards with
    the envelope; --machine gives each machine, the same numbers as the policy's run."""
    from asrpt.loading import load_instance
    from asrpt.sim import simulate

    for machine, preset in (("envelope", "a-srpt"), ("gang", "a-srpt-gang"), ("fluid", "a-srpt-fluid")):
        code, out, _ = run(capsys, "srpt", "instances/small-cluster.json", "--machine", machine, "--predicted",
                           "--exact", "--json")
        d = json.loads(out)
        run_ = simulate(load_instance("instances/small-cluster.json", exact=True), f'{preset}:adaptive="off"')
        assert code == 0 and d["machine"] == machine
        assert {k: v for k, v in d["completion_times"].items()} == pytest.approx(
            {k: float(v) for k, v in run_.policy_data["virtual_completion_times"].items()})
    code, out, _ = run(capsys, "srpt", "instances/small-cluster.json", "--machine", "envelope", "--predicted")
    assert "the default A-SRPT's guard" in out.splitlines()[0] and out.rstrip().endswith("total completion time: 53.5")


# --- asrpt bounds -------------------------------------------------------------------------------


def test_bounds_json_matches_the_library(capsys, files):
    code, out, err = run(capsys, "bounds", files["worked"], "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    b = lower_bounds(WORKED)
    assert (d["lb1"], d["lb2"], d["lb_mbt"], d["best"]) == (8, 6, float(b.lb_mbt), 8)


def test_bounds_table(capsys, files):
    code, out, _ = run(capsys, "bounds", files["two"])
    assert code == 0 and "lb_mbt" in out and "best" in out and "19" in out


# --- asrpt opt ----------------------------------------------------------------------------------


def test_opt_json_bracket_and_schedule(capsys, files):
    code, out, err = run(capsys, "opt", files["two"], "--json", "--ilp", "always")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["upper_bound"] == d["lower_bound"] == 20 and d["status"] == "closed" and d["closed"] is True
    assert d["verdict"] == "OPT = 20 (proven)" and "proven" not in d
    assert d["completion_times"]["A"] == 5 and sum(d["completion_times"].values()) == 20
    assert d["schedule"]["A"] == [{"start": 0, "end": 5, "gpus": 1}]
    assert d["preemptive"] is True and d["slot"] == 1 and d["ilp"]["status"] == "optimal"


def test_opt_options(capsys, files):
    code, out, _ = run(capsys, "opt", files["worked"], "--no-preemptive", "--slot", "1/2", "--time-limit", "30",
                       "--gap", "0", "--max-slots", "50", "--json")
    d = json.loads(out)
    assert code == 0 and d["preemptive"] is False and d["slot"] == 0.5
    assert d["upper_bound"] == 9 and d["lower_bound"] == 9  # non-preemptive, data on the grid: exact
    assert d["ilp"]["model"] == "start_time" and d["ilp"]["exact_grid"] is True


@pytest.mark.skipif("cbc" not in available_solvers(), reason="CBC binary not available")
def test_opt_with_cbc(capsys, files):
    code, out, _ = run(capsys, "opt", files["worked"], "--solver", "cbc", "--json", "--ilp", "always")
    d = json.loads(out)
    assert code == 0 and d["upper_bound"] == 9 and d["ilp"]["status"] == "optimal"


def test_opt_table(capsys, files):
    code, out, _ = run(capsys, "opt", files["worked"])
    assert code == 0
    assert "lower bound" in out and "upper bound" in out and "[1,5)" in out
    assert "OPT = 9 (proven) by exact arithmetic" in out


def test_opt_infeasible_horizon_is_a_note_not_an_error(capsys, files):
    code, out, err = run(capsys, "opt", files["worked"], "--horizon", "2", "--json", "--ilp", "always")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["ilp"]["status"] == "infeasible" and d["upper_source"] != "ilp" and d["closed"] is True
    assert any("infeasible within the horizon of 2 slots" in n for n in d["notes"])


# --- bad input: one line, exit 2, no traceback ---------------------------------------------------


@pytest.mark.parametrize("command", ["srpt", "opt", "bounds"])
@pytest.mark.parametrize("case, text", [
    ("missing", "no such file"),
    ("bad_json", "invalid JSON"),
    ("infeasible_job", "jobs[0].gpus: 3 exceeds the cluster's 2 GPUs"),
    ("invalid", "jobs[0].processing_time: must be > 0"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, files, command, case, text):
    code, out, err = run(capsys, command, files[case], "--json")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"asrpt {command}: error: ") and text in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv, text", [
    (["opt", "X", "--slot", "0"], "argument --slot: '0' is not a positive number"),
    (["opt", "X", "--slot", "abc"], "argument --slot: 'abc' is not a positive number"),
    (["opt", "X", "--gap", "1"], "argument --gap: '1' is not a relative gap in [0, 1)"),
    (["opt", "X", "--solver", "gurobi"], "argument --solver: invalid choice"),
    (["opt", "X", "--time-limit", "-1"], "argument --time-limit"),
    (["opt", "X", "--horizon", "0"], "argument --horizon"),
    (["srpt"], "the following arguments are required: FILE"),
])
def test_bad_options_exit_2(capsys, argv, text):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and text in err


@pytest.mark.parametrize("command", ["srpt", "opt", "bounds"])
def test_help_documents_every_option(capsys, command):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--json" in out and "FILE" in out and "--exact" in out
    if command == "opt":
        for option in ("--slot", "--solver", "--time-limit", "--gap", "--preemptive", "--no-preemptive", "--horizon"):
            assert option in out
    if command == "srpt":
        assert "--predicted" in out


def test_certify_says_that_it_ignores_weights(capsys, tmp_path):
    """issue 17: Theorem 1 bounds the unweighted sum C_j; weights in the file used to pass silently."""
    path = tmp_path / "w.json"
    save_instance(Instance(Cluster.homogeneous(1, 2), (Job("a", 0, 1, processing_time=2, weight=3),
                                                        Job("b", 0, 2, processing_time=1))), path)
    code = main(["certify", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["holds"] is True
    assert "weights are not used" in err
    save_instance(Instance(Cluster.homogeneous(1, 2), (Job("a", 0, 1, processing_time=2),)), path)
    assert main(["certify", str(path), "--json"]) == 0 and capsys.readouterr().err == ""


@pytest.mark.parametrize("argv, text", [
    (["simulate", "x.json", "--polcy", "fifo"], "asrpt simulate: error: unrecognized argument --polcy: did you mean --policy?"),
    (["generate", "philly", "--n_jobs", "3"], "asrpt generate: error: unrecognized argument --n_jobs: did you mean --n-jobs?"),
    (["generate", "--n_jobs", "3"], "did you mean --n-jobs?"),
    (["opt", "X", "--solver=highs", "--tim-limit", "3"], "did you mean --time-limit?"),
])
def test_a_mistyped_flag_gets_a_suggestion(capsys, argv, text):
    """argparse alone says "unrecognized arguments" or complains about the next positional; the
    CLI names the flag and the closest one the command knows, in one line, exit 2."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and text in err
