"""The batch runner: one row per instance, resume after an interruption without losing or
repeating a row, failures and timeouts recorded while the batch goes on, duplicate files solved
once, a locked results file, and the same rows from processes and dask."""

import json
import os

import pytest

from asrpt.batch import read_results, run_batch
from asrpt.batch.runner import ResultsLog, expand_inputs, row_key
from asrpt.batch.tasks import instance_hash
from asrpt.errors import InvalidParameterError
from asrpt.instance import save_instance
from asrpt.workloads.generators import adversarial_instance, generate_files, uniform_instance


class Stop(Exception):
    pass


@pytest.fixture(scope="module")
def instances(tmp_path_factory):
    d = tmp_path_factory.mktemp("inst")
    generate_files("uniform", d, n=8, seed=2, n_jobs=5, cluster="1x4", mu=2)
    return str(d)


def stable(row):
    return {k: v for k, v in row.items() if k not in ("wall_time", "worker")}


def test_one_row_per_instance_with_the_schema(instances, tmp_path):
    out = tmp_path / "r.jsonl"
    s = run_batch(instances, "certify", out=str(out), jobs=2)
    assert (s.inputs, s.done, s.ok, s.skipped, s.failed_total) == (8, 8, 8, 0, 0)
    rows = read_results(out, latest=False)
    assert len(rows) == 8 and len({r["hash"] for r in rows}) == 8
    r = rows[0]
    assert list(r) == ["schema", "path", "hash", "task", "options", "status", "error", "figures",
                       "wall_time", "worker", "asrpt_version"]
    assert r["schema"] == "asrpt-batch-row/1" and r["task"] == "certify" and r["status"] == "ok"
    with open(r["path"], "rb") as fh:
        assert r["hash"] == instance_hash(fh.read())
    assert r["options"]["predictor"] == "instance" and r["figures"]["holds"] is True
    with open(out, "rb") as fh:
        assert all(line.endswith(b"}\n") for line in fh)


def test_interrupted_run_resumes_without_losing_or_repeating_rows(instances, tmp_path):
    out = str(tmp_path / "r.jsonl")
    seen = []

    def stop_after_three(row):
        seen.append(row)
        if len(seen) == 3:
            raise Stop

    with pytest.raises(Stop):
        run_batch(instances, "srpt", out=out, on_row=stop_after_three)
    with open(out, "rb") as fh:
        before = fh.read()
    assert before.count(b"\n") == 1 + 3   # the header, then three rows
    s = run_batch(instances, "srpt", out=out)
    assert (s.skipped, s.done) == (3, 5)
    with open(out, "rb") as fh:
        after = fh.read()
    assert after.startswith(before)
    rows = read_results(out, latest=False)
    assert sorted(r["path"] for r in rows) == expand_inputs(instances)
    assert run_batch(instances, "srpt", out=out).done == 0
    # another option set is another key: everything runs again
    assert run_batch(instances, "srpt", out=out, options={"predicted": True}).done == 8


def test_a_partial_last_row_is_discarded_and_reported(instances, tmp_path):
    out = str(tmp_path / "r.jsonl")
    run_batch(instances, "srpt", out=out)
    with open(out, "rb") as fh:
        lines = fh.read().splitlines(keepends=True)
    with open(out, "wb") as fh:
        fh.writelines(lines[:6])         # the header and five rows
        fh.write(lines[6][:40])          # killed in the middle of a write
    s = run_batch(instances, "srpt", out=out)
    assert s.discarded_bytes == 40 and "partial last row (40 bytes)" in s.notes[0]
    assert (s.skipped, s.done) == (5, 3)
    assert len(read_results(out, latest=False)) == 8


def test_failures_and_timeouts_are_recorded_and_the_batch_goes_on(tmp_path):
    d = tmp_path / "inst"
    generate_files("uniform", d, n=3, seed=1, n_jobs=4)
    (d / "broken.json").write_text('{"cluster": {"servers": [{"gpus": 1}]}, "jobs": [')
    save_instance(uniform_instance(3000, cluster="1x4", seed=1), d / "huge.json")
    out = str(tmp_path / "r.jsonl")
    # the optimum is off: this test is about limits, and certify's own run is what it times
    no_opt = {"opt_time_limit": 0}
    s = run_batch(str(d), "certify", out=out, time_limit=0.5, jobs=2, options=no_opt)
    assert (s.done, s.ok, s.error, s.timeout, s.failed_total) == (5, 3, 1, 1, 2)
    rows = {os.path.basename(r["path"]): r for r in read_results(out)}
    assert rows["broken.json"]["status"] == "error" and "invalid JSON" in rows["broken.json"]["error"]
    assert rows["huge.json"]["status"] == "timeout" and rows["huge.json"]["figures"] is None
    assert "time limit of 0.5 s" in rows["huge.json"]["error"]
    # a rerun skips them; --retry-failed runs them again and appends new rows
    assert run_batch(str(d), "certify", out=out, time_limit=0.5, options=no_opt).skipped == 5
    s = run_batch(str(d), "certify", out=out, time_limit=0.5, retry_failed=True, options=no_opt)
    assert (s.skipped, s.done, s.failed_total) == (3, 2, 2)
    assert len(read_results(out, latest=False)) == 7 and len(read_results(out)) == 5


def test_identical_files_are_solved_once(tmp_path):
    inst = uniform_instance(4, seed=3)
    for name in ("a.json", "b.json"):
        save_instance(inst, tmp_path / name)
    s = run_batch([str(tmp_path / "a.json"), str(tmp_path / "*.json")], "srpt",
                  out=str(tmp_path / "r.jsonl"))
    assert (s.inputs, s.done, s.duplicates) == (2, 1, 1)


def test_inputs_dirs_globs_and_natural_order(tmp_path):
    for i in (10, 9, 1):
        save_instance(uniform_instance(2, seed=i), tmp_path / f"x-{i}.json")
    (tmp_path / "sub").mkdir()
    save_instance(uniform_instance(2, seed=0), tmp_path / "sub" / "y.json")
    names = [os.path.basename(p) for p in expand_inputs(str(tmp_path))]
    assert names == ["x-1.json", "x-9.json", "x-10.json"]
    assert len(expand_inputs(str(tmp_path / "**" / "*.json"))) == 4
    with pytest.raises(InvalidParameterError, match="no instance file matches"):
        expand_inputs(str(tmp_path / "none*.json"))


def test_the_results_file_is_locked_while_a_run_writes_it(tmp_path):
    path = str(tmp_path / "r.jsonl")
    with ResultsLog(path):
        with pytest.raises(InvalidParameterError, match="being written by another asrpt batch"):
            with ResultsLog(path):
                pass
    with ResultsLog(path) as log:   # released
        assert log.rows == []


def test_bad_arguments_fail_before_anything_runs(instances, tmp_path):
    out = tmp_path / "r.jsonl"
    with pytest.raises(InvalidParameterError, match="unknown task"):
        run_batch(instances, "certfy", out=str(out))
    with pytest.raises(InvalidParameterError, match="has no option 'seeds'"):
        run_batch(instances, "certify", out=str(out), options={"seeds": 1})
    with pytest.raises(InvalidParameterError, match="--scheduler needs --executor dask"):
        run_batch(instances, "certify", out=str(out), scheduler="tcp://127.0.0.1:1")
    assert not out.exists()


def test_progress_bar_shows_rate_and_eta(instances, tmp_path, capsys):
    run_batch(instances, "srpt", out=str(tmp_path / "r.jsonl"), progress=True)
    err = capsys.readouterr().err
    assert "batch srpt" in err and "8/8" in err and "inst/s" in err and "ok=8" in err


def test_processes_and_dask_give_identical_rows(instances, tmp_path):
    """The same rows, apart from wall times and worker ids, from worker processes and from an
    existing dask cluster reached through its scheduler address (--scheduler)."""
    distributed = pytest.importorskip("distributed")
    d = tmp_path / "inst"
    d.mkdir()
    for p in expand_inputs(instances)[:4]:
        with open(p, "rb") as fh:
            (d / os.path.basename(p)).write_bytes(fh.read())
    save_instance(adversarial_instance(5, pattern="blocker", seed=1), d / "adv.json")
    (d / "broken.json").write_text("{}")
    options = {"predictor": "noisy:sigma=0.5", "seed": 3}
    rows = {}
    out = str(tmp_path / "processes.jsonl")
    run_batch(str(d), "certify", out=out, options=options, executor="processes", jobs=2)
    rows["processes"] = read_results(out)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0",
                                  silence_logs=50) as cluster:
        out = str(tmp_path / "dask.jsonl")
        run_batch(str(d), "certify", out=out, options=options, executor="dask",
                  scheduler=cluster.scheduler_address)
        rows["dask"] = read_results(out)
    assert all(r["worker"].startswith("tcp://") for r in rows["dask"])
    for name in rows:
        rows[name] = sorted((stable(r) for r in rows[name]), key=lambda r: row_key(r) + (r["path"],))
    assert len(rows["processes"]) == 6 and sum(r["status"] == "ok" for r in rows["processes"]) == 5
    assert rows["processes"] == rows["dask"]


def test_parquet_results_when_pyarrow_is_installed(instances, tmp_path):
    pytest.importorskip("pyarrow")
    out = str(tmp_path / "r.parquet")
    run_batch(instances, "srpt", out=out)
    rows = read_results(out)
    assert len(rows) == 8 and rows[0]["figures"]["n_jobs"] == 5
    assert os.path.exists(out + ".jsonl")
    assert run_batch(instances, "srpt", out=out).skipped == 8


def test_parquet_without_pyarrow_is_a_clear_error(instances, tmp_path):
    try:
        import pyarrow  # noqa: F401
        pytest.skip("pyarrow is installed")
    except ImportError:
        pass
    with pytest.raises(InvalidParameterError, match="Parquet results need pyarrow"):
        run_batch(instances, "srpt", out=str(tmp_path / "r.parquet"))


def test_rows_are_plain_json_lines(instances, tmp_path):
    out = tmp_path / "r.jsonl"
    run_batch(os.path.join(instances, "uniform-0000[0-2].json"), "opt", out=str(out))
    header, *lines = out.read_text().splitlines()
    assert json.loads(header)["schema"] == "asrpt-batch-results/1"
    for line in lines:
        row = json.loads(line)
        assert row["figures"]["lower_bound"] <= row["figures"]["upper_bound"]


@pytest.mark.parametrize("content", [
    b'{"cluster": {"servers": [{"gpus": 1}]}, "jobs": []}\n',   # an instance file
    b"notes\nlast line without newline",                          # a text file
    b'{"hash": "h", "task": "srpt", "options": {}}\n',           # rows, but no header
])
def test_an_out_that_is_not_a_results_file_is_refused_and_left_untouched(instances, tmp_path, content):
    out = tmp_path / "precious.txt"
    out.write_bytes(content)
    with pytest.raises(InvalidParameterError, match="not an asrpt batch results file"):
        run_batch(instances, "srpt", out=str(out))
    assert out.read_bytes() == content
    assert os.listdir(tmp_path) == ["precious.txt"]   # no lock file, nothing else


def test_a_device_as_out_is_refused(instances):
    with pytest.raises(InvalidParameterError, match="not a regular file"):
        run_batch(instances, "srpt", out="/dev/full")


def test_files_of_older_versions_without_header_are_resumed(instances, tmp_path):
    out = tmp_path / "r.jsonl"
    run_batch(instances, "srpt", out=str(out))
    header, *rows = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(rows))                   # as written before headers existed
    assert run_batch(instances, "srpt", out=str(out)).skipped == 8


def test_a_user_policy_file_is_part_of_the_resume_key(tmp_path):
    """Editing a policy file makes its rows stale (the resume key named only the spec, so a rerun
    said "skipped" and kept the old results, issue 46); rows record the file's hash."""
    d = tmp_path / "inst"
    d.mkdir()
    for k in range(2):
        save_instance(uniform_instance(n_jobs=5, seed=k), d / f"u{k}.json")
    policy = tmp_path / "mine.py"
    source = ("from asrpt.policies.fifo import FIFO\n\n\nclass Mine(FIFO):\n"
              "    backfill_note = {!r}\n")
    policy.write_text(source.format("first"))
    out = str(tmp_path / "r.jsonl")
    options = {"policy": f"{policy}:Mine"}
    assert run_batch(str(d), "simulate", out=out, options=options).done == 2
    assert run_batch(str(d), "simulate", out=out, options=options).skipped == 2
    policy.write_text(source.format("second"))
    again = run_batch(str(d), "simulate", out=out, options=options)
    assert (again.skipped, again.done) == (0, 2)
    with open(out, encoding="utf-8") as fh:
        rows = [r for r in map(json.loads, fh) if "task" in r]      # (the first line is the file's header)
    assert len(rows) == 4 and all(str(policy) in r["sources"] for r in rows)
    assert len({json.dumps(r["sources"]) for r in rows}) == 2
    assert run_batch(str(d), "simulate", out=out, options={"policy": "fifo"}).done == 2   # (no sources)
