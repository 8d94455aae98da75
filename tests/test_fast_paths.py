"""The fast paths of the PAI reader, the instance checks, the per-job CSV, the indented JSON, the
engine's smallest waiting demand, the slot builders (asrpt._slots) and the run summary, each
against its slow twin (issue 18): same jobs, same reports, same problems, same bytes, same
objects, same answers, on random and boundary inputs."""

from __future__ import annotations

import csv
import io
import json
import os
import random
from fractions import Fraction

import pytest

from asrpt._json import dumps_indented, jsonable
from asrpt.instance import Cluster, Instance, Job, Server, _instance_problems_by_job, _no_instance_problems, id_key
from asrpt.engine.core import _Smallest
from asrpt.engine.records import ROW_COLUMNS, JobRecord, Segment, SimResult
from asrpt.state import _id_key
from asrpt.traces.base import TraceReport, abstract_job, read_csv_rows, trace_status
from asrpt.traces.pai import PAI_COLUMNS, _number, read_pai


def _read_pai_reference(path, cluster):
    """The PAI reader as it was before its fast path: a dict per row, every job through
    ``abstract_job`` and the instance through ``Instance`` (the slow twin)."""
    source = os.fspath(path)
    header, rows = read_csv_rows(source, PAI_COLUMNS)
    report = TraceReport(source, ignored_columns=tuple(c for c in header if c not in PAI_COLUMNS + ("status",)))
    jobs, seen, cpu_rows = [], set(), 0
    M, G = cluster.total_gpus, cluster.max_server_gpus
    for line, row in report.readable_rows(rows):
        job_id = row["job_id"].strip()
        try:
            submit = _number(row["submit_time"])
            duration = _number(row["duration"])
            n_inst, per = int(row["num_inst"]), int(row["num_gpu"])
            cpus = float(row["num_cpu"] or 0)
        except ValueError as exc:
            report.bad(line, f"not a number: {exc}")
            continue
        if not job_id:
            report.bad(line, "empty job_id")
        elif job_id in seen:
            report.bad(line, f"duplicate job_id {job_id!r}")
        elif submit < 0 or duration <= 0:
            report.bad(line, f"submit_time {submit} or duration {duration} out of range")
        elif n_inst < 1 or per < 1:
            report.bad(line, f"num_inst {n_inst} and num_gpu {per} must be >= 1")
        elif n_inst * per > M:
            report.filtered[f"needs more than the cluster's {M} GPUs"] += 1
        elif per > G:
            report.filtered[f"an instance needs more than a server's {G} GPUs"] += 1
        else:
            job = abstract_job(report, line, job_id, submit, n_inst * per, duration, instances=n_inst,
                               user=row["user"].strip() or None, status=trace_status(row.get("status")))
            if job is None:
                continue
            if cpus:
                cpu_rows += 1
            seen.add(job_id)
            jobs.append(job)
    if cpu_rows:
        report.notes.append(f"{cpu_rows} rows ask for CPUs; asrpt schedules GPUs only and ignored them")
    report.jobs = len(jobs)
    report.check_readable()
    return Instance(cluster, tuple(jobs), {"source": "pai", "file": os.path.basename(source)}), report


_TIMES = ["0", "1", "17", " 3 ", "2.5", "1e3", "1e12", "1e13", "-1", "0.0", "x", "", "nan", "inf", "1e-300",
          "123456789012345678901"]
_COUNTS = ["1", "2", "4", "8", "3", "0", "-1", "16", "2.0", "", " 1"]
_CPUS = ["0", "", "0.0", "6", "x", " 0"]
_IDS = ["{k}", "j{k}", " {k} ", "", "dup", "a,b", "é{k}", "x" * 300, "tab\t{k}"]
_USERS = ["u", "", " ", "b436b2", "ü", "v" * 300]
_STATUSES = ["Terminated", "Failed", "", "Running", "Pass"]


def _random_pai(rng, path, status: bool) -> None:
    header = list(PAI_COLUMNS) + (["status"] if status else []) + ["extra"]
    rng.shuffle(header)
    lines = [",".join(header)]
    for k in range(rng.randrange(1, 120)):
        r = rng.random()
        if r < 0.03:
            lines.append("")
            continue
        if r < 0.06:
            lines.append("1,2")
            continue
        values = {"job_id": rng.choice(_IDS[:3] if rng.random() < 0.8 else _IDS).format(k=k),
                  "user": rng.choice(_USERS), "submit_time": rng.choice(_TIMES[:7] if rng.random() < 0.8 else _TIMES),
                  "duration": rng.choice(_TIMES[1:7] if rng.random() < 0.8 else _TIMES),
                  "num_inst": rng.choice(_COUNTS[:3] if rng.random() < 0.8 else _COUNTS),
                  "num_gpu": rng.choice(_COUNTS[:4] if rng.random() < 0.8 else _COUNTS),
                  "num_cpu": rng.choice(_CPUS), "status": rng.choice(_STATUSES), "extra": "z"}
        out = io.StringIO()
        csv.writer(out, lineterminator="").writerow([values[c] for c in header])
        lines.append(out.getvalue())
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\n".join(lines) + "\n")


@pytest.mark.parametrize("seed", range(12))
def test_read_pai_equals_its_reference(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / f"pai{seed}.csv"
    _random_pai(rng, path, status=seed % 2 == 0)
    cluster = rng.choice([Cluster.homogeneous(2, 8), Cluster.from_spec("8,8,4"), Cluster.homogeneous(1, 4096)])
    try:
        want = _read_pai_reference(path, cluster)
    except Exception as exc:   # the same error, with the same message
        with pytest.raises(type(exc)) as info:
            read_pai(path, cluster)
        assert str(info.value) == str(exc)
        return
    got = read_pai(path, cluster)
    assert got[0] == want[0] and got[1].to_dict() == want[1].to_dict()
    assert got[0].n_jobs >= 1 and got[1].malformed   # rows of both kinds
    for a, b in zip(got[0].jobs, want[0].jobs):
        assert all(type(getattr(a, f)) is type(getattr(b, f)) for f in ("id", "arrival", "gpus", "processing_time",
                                                                           "instances", "user", "status", "meta"))


@pytest.mark.parametrize("seed", range(6))
def test_instance_checks_at_once_agree_with_job_by_job(seed):
    rng = random.Random(seed)
    for _ in range(300):
        cluster = Cluster(tuple(Server(rng.choice([1, 2, 4, 8]))
                                for _ in range(rng.randrange(1, 5))))
        jobs = []
        for k in range(rng.randrange(0, 6)):
            inst = rng.choice([None, 1, 2, 3, 4])
            per = rng.choice([1, 2, 3, 4, 8])
            gpus = per * (inst or rng.randrange(1, 4))
            jobs.append(Job(rng.choice([str(k), str(k), "same"]), 0, gpus, processing_time=1, instances=inst))
        assert _no_instance_problems(cluster, jobs) == (not _instance_problems_by_job(cluster, jobs))


def test_digit_ids_key_as_id_key():
    for text in ["0", "7", "40123", "007", "0x1", "j9", "9j", "", "²", "١٢", "1 2", "-3", "+4"]:
        assert _id_key(text) == id_key(text), text


def _random_record(rng, k):
    kind = rng.random()
    if kind < 0.6:
        t = [rng.randrange(0, 10**6) for _ in range(3)]
    elif kind < 0.8:    # floats of every size str writes in plain or exponent form (1e-05, 1e+16)
        t = [rng.random() * 10.0 ** rng.randrange(-8, 20) for _ in range(3)]
    else:
        t = [Fraction(rng.randrange(1, 1000), rng.choice([1, 3, 7])) for _ in range(3)]
    a, s, c = sorted(t)
    ran = rng.random() < 0.9
    segments = tuple(Segment(s, c, tuple((h, rng.choice([1, 4, 8])) for h in rng.sample(range(8), rng.randrange(1, 3))))
                     for _ in range(rng.choice([1, 1, 1, 2]))) if ran else ()
    job_id = rng.choice([str(k), f"j{k}", f"a,{k}", f'q"{k}', f" {k} "])
    weight = rng.choice([1, 2, 0.5, Fraction(1, 3)])
    p_star = rng.choice([c - s if ran else 5, 7, 2.5])
    return JobRecord(job_id, a, 4, weight, s if ran else None, c if ran else None, rng.randrange(3), 5,
                     None, p_star, rng.choice([1.0, 1.25]), segments)


@pytest.mark.parametrize("seed", range(4))
def test_jobs_csv_equals_the_csv_module(seed):
    rng = random.Random(seed)
    records = tuple(_random_record(rng, k) for k in range(400))
    want = io.StringIO()
    writer = csv.writer(want, lineterminator="\n")
    writer.writerow(ROW_COLUMNS)
    writer.writerows([r.row_values() for r in records])
    result = SimResult("fifo", records, {})
    assert result.jobs_csv() == want.getvalue()
    assert 20 < sum(r._plain_csv_line() is not None for r in records) < 380   # both paths are exercised
    assert [r.to_row() for r in records] == [dict(zip(ROW_COLUMNS, r.row_values())) for r in records]
    assert SimResult("fifo", (), {}).jobs_csv() == "job_id\n"


def test_smallest_agrees_with_a_sorted_list():
    rng = random.Random(5)
    s, ref = _Smallest(), []
    for _ in range(5000):
        if ref and rng.random() < 0.5:
            g = rng.choice(ref)
            ref.remove(g)
            s.remove(g)
        else:
            g = rng.choice([1, 1, 2, 4, 8, 16, 3])
            ref.append(g)
            s.add(g)
        assert bool(s) == bool(ref)
        if ref:
            assert s.smallest() == min(ref)


def _random_json(rng, depth=0):
    r = rng.random()
    if depth < 4 and r < 0.3:
        return {rng.choice(["a", "b", "é", "\n", 'q"', "k%d" % rng.randrange(9)]): _random_json(rng, depth + 1)
                for _ in range(rng.randrange(0, 5))}
    if depth < 4 and r < 0.45:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    if depth < 4 and r < 0.5:
        return tuple(_random_json(rng, depth + 1) for _ in range(rng.randrange(0, 3)))
    return rng.choice([0, -3, 10**30, 1.5, -0.0, 1e300, 3.14159, None, True, False, "s", "ünï", "\u2028", "",
                       "a\\b", Fraction(1, 3), Fraction(4, 2), float("inf")])


def test_dumps_indented_equals_the_json_module():
    rng = random.Random(3)
    for _ in range(3000):
        x = jsonable(_random_json(rng))
        assert dumps_indented(x) == json.dumps(x, indent=2, allow_nan=False)
        assert dumps_indented(x, indent=4) == json.dumps(x, indent=4, allow_nan=False)
    odd = {1: 2, 2.5: [3], None: {"x": ()}, False: "f"}
    assert dumps_indented(odd) == json.dumps(odd, indent=2, allow_nan=False)
    for bad in ({"n": float("nan")}, [float("inf")], {(1, 2): 3}):   # the json module's own errors
        with pytest.raises((ValueError, TypeError)) as want:
            json.dumps(bad, indent=2, allow_nan=False)
        with pytest.raises(type(want.value), match=".*"):
            dumps_indented(bad)


def _walk(free, per, count):
    """count_allocation's general walk over servers in id order (the slow twin of its first_fit path)."""
    remaining, out = count, []
    for h in range(len(free)):
        k = free[h] // per
        if k:
            k = min(k, remaining)
            out.append((h, k * per))
            remaining -= k
            if not remaining:
                break
    return None if remaining else tuple(out)


def test_first_fit_allocation_equals_the_general_walk():
    from asrpt.placement.placers import count_allocation

    rng = random.Random(0)
    for _ in range(20000):
        free = [rng.randrange(0, 9) for _ in range(rng.randrange(1, 8))]
        per, count = rng.choice([1, 2, 3, 4, 8]), rng.randrange(0, 12)
        assert count_allocation("first_fit", free, per, count) == _walk(free, per, count)


def _slot_values(obj):
    return [getattr(obj, name) for name in type(obj).__slots__]


def test_slot_builders_equal_the_constructors():
    """The objects asrpt._slots builds (the engine's and the readers' bulk constructors) are the
    ones the dataclass constructors make: same class, same slot values, still frozen."""
    import dataclasses

    from asrpt._slots import slot_builder
    from asrpt.state import Allocation, CompletedJob, JobView, _COMPLETED_BUILD, job_views

    rng = random.Random(7)
    for k in range(300):
        job_id = rng.choice([str(k), f"j{k}"])
        arrival, p = rng.choice([0, 5, 2.5]), rng.choice([1, 7, 0.5])
        instances, user, status = rng.choice([None, 1, 2]), rng.choice([None, "u1"]), rng.choice([None, "failed"])
        gpus = 2 * (instances or 1)
        fast = Job._abstract(job_id, arrival, gpus, p, instances, user, status)
        slow = Job(job_id, arrival, gpus, processing_time=p, instances=instances, user=user, status=status)
        assert type(fast) is Job and _slot_values(fast) == _slot_values(slow) and fast == slow
        seg = Segment._of(arrival, arrival + p, ((k % 4, gpus),), None, 0)
        assert type(seg) is Segment and seg == Segment(arrival, arrival + p, ((k % 4, gpus),))
        rec = JobRecord._of(job_id, arrival, gpus, 1, arrival, arrival + p, 0, p, None, p, 1.0, (seg,))
        assert type(rec) is JobRecord and rec == JobRecord(job_id, arrival, gpus, 1, arrival, arrival + p, 0, p,
                                                           None, p, 1.0, (seg,))
        alloc = Allocation._of(((0, gpus),), rng.choice([None, 0.5]))
        assert type(alloc) is Allocation and alloc == Allocation(alloc.servers, alloc.tau)
        for obj in (fast, seg, rec, alloc):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(obj, type(obj).__slots__[0], 3)
    inst = Instance(Cluster.homogeneous(2, 8), tuple(
        Job(f"j{k}", k, 1 + k % 3, processing_time=k + 1, weight=1 + k % 2, user=f"u{k % 3}", meta={"m": k})
        for k in range(50)))
    for i, (view, job) in enumerate(zip(job_views(inst), inst.jobs)):
        want = JobView(i, job.id, id_key(job.id), job.arrival, job.gpus, job.weight, True, 1, None,
                       None, None, job.parallelism, None, None, job.user, None, None, job.meta, None)
        assert type(view) is JobView and _slot_values(view) == _slot_values(want)
        done = _COMPLETED_BUILD(view, 9, 3, None)
        assert type(done) is CompletedJob and _slot_values(done) == _slot_values(CompletedJob(view, 9, 3, None))
    with pytest.raises(TypeError):
        slot_builder(SimResult)   # no slots: refused


def _summarize_reference(records, total_gpus):
    """summarize as it was, a generator per figure (the slow twin of its list passes)."""
    from asrpt.engine.metrics import percentile

    done = [r for r in records if r.completion is not None]
    jcts = sorted([r.completion - r.arrival for r in done])
    n = len(done)
    out = {"jobs": len(records), "finished": n}
    out["total_completion_time"] = sum((r.completion for r in done), 0)
    out["total_weighted_completion_time"] = sum((r.weight * r.completion for r in done), 0)
    out["total_weighted_flow_time"] = sum((r.weight * (r.completion - r.arrival) for r in done), 0)
    out["mean_jct"] = sum(jcts, 0) / n if n else None
    out["median_jct"] = percentile(jcts, 50)
    out["p95_jct"] = percentile(jcts, 95)
    out["p99_jct"] = percentile(jcts, 99)
    out["max_jct"] = jcts[-1] if jcts else None
    delays = [None if r.start is None else r.start - r.arrival for r in done]
    out["mean_queueing_delay"] = sum(delays, 0) / n if n else None
    makespan = max(r.completion for r in done) - min(r.arrival for r in records) if done else 0
    out["makespan"] = makespan
    held = sum((r.gpus * (s.end - s.start) for r in records for s in r.segments), 0)
    out["gpu_utilization"] = float(held) / (total_gpus * float(makespan)) if makespan else None
    out["preemptions"] = sum(r.preemptions for r in records)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_summarize_equals_its_reference(seed):
    from asrpt.engine.metrics import summarize

    rng = random.Random(50 + seed)
    for size in (0, 1, 7, 400):
        records = tuple(_random_record(rng, k) for k in range(size))
        got, want = summarize(records, 16), _summarize_reference(records, 16)
        assert got == want and [type(v) for v in got.values()] == [type(v) for v in want.values()]


def test_best_iteration_times_equal_the_checked_function_job_by_job():
    """sizes.best_iteration_times (each configuration computed once, no per-job argument checks)
    gives what best_iteration_time gives job by job, abstract jobs None."""
    from asrpt.dnn.perf import best_iteration_time
    from asrpt.instance import Parallelism
    from asrpt.sizes import best_iteration_times

    cluster = Cluster((Server(8, "V100"), Server(8, "V100"), Server(4, "A100")))
    jobs = (Job("a", 0, 8, model="resnet50", parallelism=Parallelism(8, 1, 1), iterations=10),
            Job("b", 1, 4, model="resnet50", iterations=3),
            Job("c", 2, 2, processing_time=5),
            Job("d", 3, 8, model="resnet50", parallelism=Parallelism(8, 1, 1), iterations=7, batch_size=64),
            Job("e", 4, 4, model="resnet50", iterations=99))
    inst = Instance(cluster, jobs)
    want = tuple(None if j.is_abstract else best_iteration_time(j, cluster) for j in jobs)
    assert best_iteration_times(inst) == want
    assert want[2] is None and want[1] == want[4] and want[0] != want[3]


def test_job_views_are_made_once_per_instance():
    """job_views keeps an instance's views on it: a second call returns a new list of the same
    view objects, and another instance of equal jobs gets views of its own."""
    from asrpt.state import job_views

    inst = Instance(Cluster.homogeneous(1, 4), (Job("a", 0, 2, processing_time=5), Job("b", 1, 4, processing_time=2)))
    first, second = job_views(inst), job_views(inst)
    assert first is not second and len(first) == len(second) == 2
    assert all(x is y for x, y in zip(first, second))
    second.pop()
    assert len(job_views(inst)) == 2
    other = job_views(Instance(inst.cluster, inst.jobs))
    assert [(v.index, v.id, v.gpus, v.arrival) for v in other] == [(v.index, v.id, v.gpus, v.arrival) for v in first]
    assert not any(x is y for x, y in zip(other, first))
