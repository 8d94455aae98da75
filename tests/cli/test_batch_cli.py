"""``asrpt batch``: results rows and exit statuses, task options from the command line, and a
run killed with SIGKILL that resumes without losing or repeating a row."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from asrpt.batch import read_results
from asrpt.batch.tasks import TASKS
from asrpt.cli import main
from asrpt.cli.batch import parse_option
from asrpt.workloads.generators import generate_files


def run(capsys, *argv):
    code = main(["batch", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def inst_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("inst")
    generate_files("uniform", d, n=5, seed=3, n_jobs=4, cluster="1x4")
    return str(d)


def test_batch_writes_rows_and_a_summary(capsys, inst_dir, tmp_path):
    out = tmp_path / "r.jsonl"
    code, text, err = run(capsys, inst_dir, "--task", "certify", "--out", str(out), "--jobs", "2",
                          "-o", "predictor=noisy:sigma=0.5", "-o", "seed=4")
    assert code == 0 and err == ""
    assert text.startswith(f"batch certify on 5 instance file(s), processes x 2: results in {out}")
    rows = read_results(out)
    assert len(rows) == 5 and {r["status"] for r in rows} == {"ok"}
    assert rows[0]["options"]["predictor"] == "noisy:sigma=0.5" and rows[0]["options"]["seed"] == 4
    code, text, _ = run(capsys, inst_dir, "--task", "certify", "--out", str(out), "--json",
                        "-o", "predictor=noisy:sigma=0.5", "-o", "seed=4")
    d = json.loads(text)
    assert code == 0 and d["skipped"] == 5 and d["done"] == 0 and d["rate"] is None


def test_failures_give_exit_status_1(capsys, tmp_path):
    (tmp_path / "bad.json").write_text("[]")
    generate_files("uniform", tmp_path, n=1, seed=0)
    code, text, _ = run(capsys, str(tmp_path), "--task", "srpt", "--out", str(tmp_path / "r.jsonl"))
    assert code == 1 and "1 instance(s) failed or timed out" in text
    assert {r["status"] for r in read_results(tmp_path / "r.jsonl")} == {"ok", "error"}


def test_exact_flag_and_list_tasks(capsys, inst_dir, tmp_path):
    assert run(capsys, inst_dir, "--task", "srpt", "--exact", "--out", str(tmp_path / "r.jsonl"))[0] == 0
    assert read_results(tmp_path / "r.jsonl")[0]["options"]["exact"] is True
    code, text, _ = run(capsys, "--list-tasks")
    assert code == 0 and text.count("options:") == len(TASKS) == 8 and 'predictor="instance"' in text


@pytest.mark.parametrize("argv, message", [
    (["--task", "srpt", "--out", "r.jsonl"], "give instance directories"),
    (["{d}", "--out", "r.jsonl"], "--task is required"),
    (["{d}", "--task", "srpt"], "--out RESULTS is required"),
    (["{d}", "--task", "sprt", "--out", "r.jsonl"], "unknown task 'sprt' (did you mean 'srpt'?)"),
    (["{d}", "--task", "srpt", "--out", "r.jsonl", "-o", "predict=true"], "has no option 'predict'"),
    (["{d}", "--task", "srpt", "--out", "r.jsonl", "--scheduler", "x"], "--scheduler needs --executor dask"),
    (["nothing/here", "--task", "srpt", "--out", "r.jsonl"], "no instance file matches"),
])
def test_bad_input_is_one_line_exit_2(capsys, inst_dir, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *[a.format(d=inst_dir) for a in argv])
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
    assert not (tmp_path / "r.jsonl").exists()


def test_parse_option():
    assert parse_option("backfill=false") == ("backfill", False)
    assert parse_option("slot=1/2") == ("slot", "1/2")
    assert parse_option("preemption-cost=2.5") == ("preemption_cost", 2.5)
    assert parse_option('policy="fifo"') == ("policy", "fifo")


def test_a_killed_run_resumes_without_losing_or_repeating_rows(tmp_path):
    """SIGKILL `asrpt batch` once some rows exist, rerun the same command: every instance
    appears exactly once, and the rows written before the kill are unchanged."""
    inst = tmp_path / "inst"
    generate_files("uniform", inst, n=40, seed=1, n_jobs=150, cluster="1x4")
    out = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-c", "import sys; from asrpt.cli import main; sys.exit(main(sys.argv[1:]))",
           "batch", str(inst), "--task", "certify", "--out", str(out), "--jobs", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if out.exists() and out.read_bytes().count(b"\n") >= 5:
                break
            if proc.poll() is not None:
                break
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)   # the runner and its workers, at any moment
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    before = out.read_bytes()
    complete = before[:before.rfind(b"\n") + 1]
    n_before = complete.count(b"\n")
    assert 5 <= n_before < 40, "the kill came after every row was written: make instances bigger"
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    after = out.read_bytes()
    assert after.startswith(complete)            # rows written before the kill are unchanged
    rows = read_results(out, latest=False)
    paths = sorted(r["path"] for r in rows)
    assert len(rows) == 40 and len(set(paths)) == 40   # every instance exactly once
    assert {r["status"] for r in rows} == {"ok"}
    if len(before) > len(complete):
        assert "discarded a partial last row" in done.stderr


def test_help_texts_name_every_task():
    import asrpt.cli.batch as batch_cli
    from asrpt.batch.tasks import task_names

    for name in task_names():
        assert name in batch_cli.__doc__, name


def test_certify_robust_task_from_the_command_line(capsys, inst_dir, tmp_path):
    out = str(tmp_path / "robust.jsonl")
    code, _, _ = run(capsys, inst_dir, "--task", "certify-robust", "-o", "lam=0.75", "--exact", "--out", out,
                     "--no-progress")
    rows = read_results(out)
    assert code == 0 and len(rows) == 5
    assert all(r["figures"]["holds"] and r["figures"]["robust_ratio_bound"] == 36 for r in rows)
