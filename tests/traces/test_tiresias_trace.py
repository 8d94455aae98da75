"""The Tiresias simulator's job CSV and cluster spec (issue 19), and clusters with switches."""

import pytest

from asrpt.errors import InvalidInstance, TraceError
from asrpt.instance import Cluster, Instance, Job, instance_to_dict, parse_instance
from asrpt.traces import detect_format, read_trace, read_tiresias
from asrpt.traces.tiresias import read_tiresias_cluster

HEADER = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"


def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_integer_times_truncated_durations_and_stable_arrival_order(tmp_path):
    p = write(tmp_path, HEADER + "0,1,5,10,resnet50,12.9,0\n1,2,0,10,vgg16,7,0\n2,1,5,10,resnet50,3,0\n")
    inst, report = read_tiresias(p, Cluster.homogeneous(1, 8))
    assert [(j.id, j.arrival, j.gpus, j.processing_time) for j in inst.jobs] == [
        ("1", 0, 2, 7), ("0", 5, 1, 12), ("2", 5, 1, 3)]
    assert all(isinstance(j.arrival, int) and isinstance(j.processing_time, int) for j in inst.jobs)
    assert report.ignored_columns == ("iterations", "model_name", "interval") and not report.notes


def test_bad_rows_are_reported_with_their_line_and_never_become_jobs(tmp_path):
    p = write(tmp_path, HEADER + "0,1,1.5,1,m,5,0\n1,x,0,1,m,5,0\n2,1,0,1,m,abc,0\n3,1,0,1,m,0.4,0\n"
                                 "4,64,0,1,m,5,0\n5,1,0,1,m,5,0\n5,1,0,1,m,5,0\n")
    inst, report = read_tiresias(p, Cluster.homogeneous(1, 8))
    assert [j.id for j in inst.jobs] == ["5"]
    messages = [(m.line, m.message) for m in report.malformed]
    assert messages[0] == (2, "submit_time '1.5' is not a whole number of seconds")
    assert [line for line, _ in messages] == [2, 3, 4, 8]
    assert report.filtered["duration truncates to 0 s"] == 1
    assert sum(report.filtered.values()) == 2


def test_the_format_is_detected_from_its_header(tmp_path):
    p = write(tmp_path, HEADER + "0,1,0,1,resnet50,5,0\n")
    assert detect_format(p) == "tiresias"
    inst, report = read_trace(p, cluster=Cluster.homogeneous(2, 4))
    assert inst.metadata["source"] == "tiresias" and report.jobs == 1


def test_cluster_spec_files(tmp_path):
    head = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n"
    c = read_tiresias_cluster(write(tmp_path, head + "2,3,4,40,256\n"))
    assert (c.n_switches, c.servers_per_switch, c.server_gpus) == (2, 3, (4,) * 6)
    with pytest.raises(TraceError, match="positive integers"):
        read_tiresias_cluster(write(tmp_path, head + "0,3,4,40,256\n", "b.csv"))
    with pytest.raises(TraceError, match="exactly one data row"):
        read_tiresias_cluster(write(tmp_path, head, "c.csv"))


def test_switched_clusters_parse_validate_and_round_trip():
    c = Cluster.from_spec("4x32x4")
    assert (c.total_gpus, c.n_servers, c.n_switches, c.switch_of(0), c.switch_of(127)) == (512, 128, 4, 0, 3)
    assert Cluster.from_spec("64x8").n_switches == 1
    with pytest.raises(InvalidInstance, match="must divide the 5 servers"):
        Cluster(Cluster.homogeneous(5, 4).servers, servers_per_switch=2)
    with pytest.raises(InvalidInstance):
        Cluster.from_spec("0x2x4")
    inst = Instance(c, (Job("a", 0, 1, processing_time=1),))
    data = instance_to_dict(inst)
    assert data["cluster"]["servers_per_switch"] == 32
    assert parse_instance(data).cluster == c
    data["cluster"]["servers_per_switch"] = 3
    with pytest.raises(InvalidInstance, match="servers_per_switch"):
        parse_instance(data)
