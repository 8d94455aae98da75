"""Trace importers: windows, filters, malformed rows (reported with their line), format detection."""

import csv
import gzip
import os

import pytest

from asrpt.errors import TraceError
from asrpt.instance import Cluster
from asrpt.traces import (alibaba_cluster, detect_format, read_alibaba_pods, read_helios, read_pai,
                          read_philly, read_trace, shared_path)
from asrpt.traces.philly import gang_instances

PHILLY = shared_path("traces", "philly-pollux-processed", "philly.csv")
PEER = shared_path("peer-alibaba", "philly-40000-2000.csv")
PODS = shared_path("traces", "alibaba-pai-gpu-v2023-openb", "openb_pod_list_default.csv")
needs = pytest.mark.skipif(not os.path.exists(PHILLY), reason="shared traces not present")


def write(path, header, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return str(path)


@needs
def test_philly_window_reproduces_the_peer_input_exactly():
    inst, report = read_philly(PHILLY, start=40000, limit=2000, cluster=Cluster.homogeneous(16, 8), gang="server")
    with open(PEER) as fh:
        peer = list(csv.DictReader(fh))
    assert report.rows == 82247 and report.jobs == 2000 and report.filtered["outside the window"] == 80247
    for job, p in zip(inst.jobs, peer):
        assert job.id == p["philly_row"] and job.meta["row"] == int(p["philly_row"])
        assert job.arrival == int(p["submit_time"]) and job.processing_time == int(p["duration"])
        assert (job.instances or 1) == int(p["num_inst"]) and job.gpus == int(p["num_inst"]) * int(p["num_gpu"])
        assert job.user == p["user"]


@needs
def test_bundled_sample_is_the_same_window():
    from importlib import resources

    sample = str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
    a, _ = read_philly(sample, limit=2000)
    b, _ = read_philly(PHILLY, start=40000, limit=2000)
    assert a.jobs == b.jobs


def test_philly_malformed_rows_are_reported_with_their_line(tmp_path):
    path = write(tmp_path / "p.csv", ["timestamp", "duration", "num_gpus", "gpu_time", "cluster", "extra"], [
        ["2017-10-01 00:00:00", "10.0", "2", "20.0", "vc1", "x"],
        ["2017-10-01 00:00:05", "-3", "1", "-3", "vc1", "x"],
        ["yesterday", "10", "1", "10", "vc1", "x"],
        ["2017-10-01 00:00:09", "10", "1", "99", "vc2", "x"],
        ["2017-10-01 00:00:09", "30", "4", "120", "vc2"],
        ["2017-10-01 00:00:10", "5", "1", "5", "vc2", "x"],
    ])
    inst, report = read_philly(path, cluster=Cluster.homogeneous(1, 4))
    assert [j.id for j in inst.jobs] == ["0", "5"] and [j.arrival for j in inst.jobs] == [0, 10]
    assert [(p.line, p.message.split(" ")[0]) for p in report.malformed] == [
        (3, "duration"), (4, "bad"), (5, "gpu_time"), (6, "5")]
    assert report.ignored_columns == ("extra",)
    assert "4 malformed (first: " in report.summary() and f"{path}:3:" in report.summary()


def test_philly_filters_are_counted(tmp_path):
    path = write(tmp_path / "p.csv", ["timestamp", "duration", "num_gpus", "gpu_time", "cluster"], [
        ["2017-10-01 00:00:00", "100", "16", "1600", "a"],
        ["2017-10-01 00:01:00", "30", "1", "30", "a"],
        ["2017-10-01 00:02:00", "100", "1", "100", "a"]])
    inst, report = read_philly(path, cluster=Cluster.homogeneous(1, 8), min_duration=60)
    assert [j.id for j in inst.jobs] == ["2"]
    assert report.filtered == {"needs more than the cluster's 8 GPUs": 1, "duration below 60 s": 1}
    assert report.jobs + sum(report.filtered.values()) + len(report.malformed) == report.rows


def test_gang_instances_rule():
    assert [gang_instances(n, 8) for n in (1, 8, 12, 16, 24, 32, 64, 128)] == [1, 1, 2, 2, 3, 4, 8, 16]


def test_missing_files_and_headers(tmp_path):
    with pytest.raises(TraceError, match="no such file"):
        read_philly(tmp_path / "none.csv")
    bad = write(tmp_path / "bad.csv", ["timestamp", "num_gpus"], [["x", "1"]])
    with pytest.raises(TraceError, match="header lacks column\\(s\\) duration, gpu_time, cluster"):
        read_philly(bad)
    instance_file = tmp_path / "inst.json"     # (asrpt run --trace on an instance file)
    instance_file.write_text('{"cluster": {"servers": [8]}, "jobs": []}')
    with pytest.raises(TraceError, match="this is JSON \\(an instance file\\?\\), not a CSV trace"):
        read_philly(instance_file)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(TraceError, match="empty file"):
        read_pai(str(empty), Cluster.homogeneous(1, 8))
    with pytest.raises(TraceError, match="not a known trace format"):
        detect_format(bad)


def test_gzip_and_detection(tmp_path):
    path = tmp_path / "p.csv.gz"
    with gzip.open(path, "wt", newline="") as fh:
        fh.write("job_id,user,submit_time,duration,num_inst,num_gpu,num_cpu,other\n0,u,0,10,2,4,0,z\n1,u,3,5,1,1,6,z\n")
    assert detect_format(str(path)) == "pai"
    inst, report = read_pai(str(path), Cluster.homogeneous(2, 8))
    assert [(j.id, j.gpus, j.instances, j.processing_time) for j in inst.jobs] == [("0", 8, 2, 10), ("1", 1, 1, 5)]
    assert report.ignored_columns == ("other",) and "ignored them" in report.notes[0]


def test_pai_rows_that_do_not_fit_are_filtered(tmp_path):
    path = write(tmp_path / "pai.csv", ["job_id", "user", "submit_time", "duration", "num_inst", "num_gpu", "num_cpu"], [
        ["a", "u", "0", "10", "1", "16", "0"], ["b", "u", "0", "10", "4", "8", "0"], ["c", "u", "0", "x", "1", "1", "0"],
        ["c", "u", "0", "4", "1", "1", "0"], ["c", "u", "1", "4", "1", "1", "0"]])
    inst, report = read_pai(path, Cluster.homogeneous(2, 8))
    assert [j.id for j in inst.jobs] == ["c"]
    assert report.filtered == {"an instance needs more than a server's 8 GPUs": 1, "needs more than the cluster's 16 GPUs": 1}
    assert [p.line for p in report.malformed] == [4, 6]
    assert detect_format(path) == "pai"


@pytest.mark.skipif(not os.path.exists(PODS), reason="shared traces not present")
def test_alibaba_pods_counts_and_censoring():
    inst, report = read_alibaba_pods(PODS)
    assert report.rows == 8152
    assert report.filtered == {"not a GPU job": 1088, "never scheduled": 861, "censored: running at trace end": 4149}
    assert report.jobs == 2054 and not report.malformed
    assert inst.cluster.total_gpus == 6212 and inst.cluster.n_servers == 1213
    kept, report2 = read_alibaba_pods(PODS, censored="keep")
    assert report2.jobs == 2054 + 4149 and sum(j.meta.get("censored", False) for j in kept.jobs) == 4149
    dropped, report3 = read_alibaba_pods(PODS, sharing="drop")
    assert report3.filtered["GPU-sharing pod"] > 0
    assert detect_format(PODS) == "alibaba"
    assert alibaba_cluster().total_gpus == 6212


def test_helios_schema_on_a_hand_written_file(tmp_path):
    path = write(tmp_path / "cluster_log.csv",
                 ["job_id", "user", "vc", "gpu_num", "cpu_num", "node_num", "state", "submit_time", "start_time",
                  "end_time", "duration", "queue"], [
        ["j1", "u1", "vcA", "8", "32", "1", "COMPLETED", "2020-04-01 00:00:10", "2020-04-01 00:01:00", "2020-04-01 01:01:00", "3600", "50"],
        ["j2", "u2", "vcA", "0", "4", "1", "COMPLETED", "2020-04-01 00:00:20", "2020-04-01 00:00:20", "2020-04-01 00:10:20", "600", "0"],
        ["j3", "u1", "vcB", "2", "8", "1", "CANCELLED", "2020-04-01 00:00:30", "", "", "", ""],
        ["j4", "u3", "vcB", "1", "8", "1", "FAILED", "2020-04-01 00:00:00", "2020-04-01 00:00:05", "2020-04-01 00:00:45", "", "5"],
        ["j5", "u3", "vcB", "x", "8", "1", "FAILED", "2020-04-01 00:00:00", "", "", "1", "5"],
    ])
    inst, report = read_helios(path, Cluster.homogeneous(2, 8))
    assert [(j.id, j.arrival, j.gpus, j.processing_time, j.user) for j in inst.jobs] == [
        ("j4", 0.0, 1, 40.0, "u3"), ("j1", 10.0, 8, 3600.0, "u1")]
    assert inst.jobs[1].meta == {"vc": "vcA", "state": "COMPLETED", "submitted": 1585699210.0}
    assert inst.jobs[1].group is None
    assert report.filtered == {"not a GPU job": 1, "did not run": 1} and [p.line for p in report.malformed] == [6]
    assert detect_format(path) == "helios"
    inst2, _ = read_trace(path, cluster=Cluster.homogeneous(2, 8), limit=1)
    assert [j.id for j in inst2.jobs] == ["j4"]


PHILLY_HEADER = ["timestamp", "duration", "num_gpus", "gpu_time", "cluster"]


def test_a_file_whose_rows_are_all_malformed_is_an_error(tmp_path):
    path = write(tmp_path / "p.csv", PHILLY_HEADER, [["soon", "1", "1", "1", "vc"], ["x", "y", "1", "1", "vc"]])
    with pytest.raises(TraceError, match=r"none of the 2 rows .* could be read \(first: .*p.csv:2: "):
        read_philly(path)


def test_a_header_with_a_utf8_bom_is_recognised(tmp_path):
    path = tmp_path / "p.csv"
    path.write_bytes("\ufeff".encode() + b"timestamp,duration,num_gpus,gpu_time,cluster\n0,10,1,10,vc\n")
    inst, report = read_philly(str(path), cluster=Cluster.homogeneous(1, 4))
    assert report.jobs == 1 and detect_format(str(path)) == "philly"


def test_nan_values_are_malformed_rows_with_file_and_line(tmp_path):
    path = write(tmp_path / "p.csv", PHILLY_HEADER, [
        ["0", "10", "1", "10", "vc"], ["1", "10", "1", "nan", "vc"], ["nan", "10", "1", "10", "vc"],
        ["2", "1e13", "1", "1e13", "vc"]])
    inst, report = read_philly(path, cluster=Cluster.homogeneous(1, 4))
    assert report.jobs == 1
    assert [p.line for p in report.malformed] == [3, 4, 5]
    assert str(report.malformed[2]).startswith(f"{path}:5: processing_time: must be <= 1e+12")
