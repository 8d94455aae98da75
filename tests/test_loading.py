"""asrpt.loading: the loaders every command uses check DNN jobs, while asrpt.instance (the data
model, which imports no dnn) checks their fields only."""

import json

import pytest

import asrpt
from asrpt import instance, loading
from asrpt.batch.tasks import WorkItem, execute, instance_hash, normalize_options
from asrpt.cli import main
from asrpt.errors import InvalidInstance
from asrpt.instance import Cluster, Instance, Job, Parallelism
from asrpt.traces.detect import read_trace

BAD_MODEL = {"cluster": {"servers": [{"gpus": 8}], "gpu_type": "A100"},
             "jobs": [{"id": "a", "arrival": 0, "gpus": 1, "model": "resnet5", "iterations": 10}]}
MESSAGE = "jobs[0].model: unknown model 'resnet5' (did you mean 'resnet50'?)"


def test_the_data_model_reads_the_fields_and_the_loaders_ask_the_zoo():
    assert instance.parse_instance(BAD_MODEL).jobs[0].model == "resnet5"
    for parse in (loading.parse_instance, asrpt.parse_instance):
        with pytest.raises(InvalidInstance) as info:
            parse(BAD_MODEL, source="x.json")
        assert str(info.value) == f"x.json: {MESSAGE}"
    problems, inst = loading.instance_problems(BAD_MODEL)
    assert [str(p) for p in problems] == [MESSAGE] and inst is None
    assert asrpt.load_instance is loading.load_instance


def test_generic_problems_come_first_and_alone():
    data = json.loads(json.dumps(BAD_MODEL))
    data["jobs"][0]["gpus"] = 9
    problems, _ = loading.instance_problems(data)
    assert [str(p) for p in problems] == ["jobs[0].gpus: 9 exceeds the cluster's 8 GPUs"]


def test_check_instance_returns_a_good_instance_and_rejects_a_bad_one():
    job = Job("a", 0, 8, model="llama-70b", parallelism=Parallelism(8, 1, 1), iterations=1)
    on_h200 = Instance(Cluster.homogeneous(1, 8, "H200"), (Job("b", 0, 1, model="gpt2", iterations=2),))
    assert loading.check_instance(on_h200) is on_h200
    with pytest.raises(InvalidInstance, match=r"^jobs\[0\]\.parallelism: .*does not fit in GPU memory"):
        loading.check_instance(Instance(Cluster.homogeneous(1, 8, "A100"), (job,)))


def test_every_loading_path_rejects_a_bad_dnn_job_with_the_one_line_error(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(BAD_MODEL))
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out.strip() == f"{path}: {MESSAGE}"
    for command in ("simulate", "srpt", "bounds", "certify"):
        assert main([command, str(path)]) == 2
        assert capsys.readouterr().err.strip() == f"asrpt {command}: error: {path}: {MESSAGE}"
    with pytest.raises(InvalidInstance, match=r"unknown model 'resnet5'"):
        read_trace(str(path))
    data = path.read_bytes()
    row = execute(WorkItem(str(path), instance_hash(data), "srpt", normalize_options("srpt"), data))
    assert row["status"] == "error" and row["error"] == f"InvalidInstance: {path}: {MESSAGE}"


def test_an_instance_moved_onto_another_cluster_is_checked_there(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"cluster": {"servers": [{"gpus": 8}], "gpu_type": "H200"},
                                "jobs": [{"id": "a", "arrival": 0, "gpus": 8, "model": "llama-1b",
                                          "parallelism": {"dp": 8}, "batch_size": 8,
                                          "iterations": 1}]}))
    assert read_trace(str(path))[0].n_jobs == 1
    with pytest.raises(InvalidInstance, match=r"jobs\[0\]\.parallelism: .*does not fit in GPU memory"):
        read_trace(str(path), cluster=Cluster.homogeneous(1, 8, "V100-16GB"))
