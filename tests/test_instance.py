"""The instance model and file format: parsing, every error path, round trips, fuzzing."""

import json
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from asrpt.errors import InvalidInstance
from asrpt.instance import (Cluster, Instance, Job, Parallelism, Server, dumps_instance, id_key,
                            instance_problems, instance_to_dict, load_instance, loads_instance,
                            parse_instance, parse_number, save_instance)
from asrpt.testing.strategies import instances

MINIMAL = {"cluster": {"servers": [{"gpus": 4}, {"gpus": 4}]},
           "jobs": [{"id": "a", "arrival": 0, "gpus": 2, "processing_time": 5},
                    {"id": "b", "arrival": 1.5, "gpus": 8, "processing_time": 1, "weight": 2}]}


def messages(data, **kw):
    problems, inst = instance_problems(data, **kw)
    assert (inst is None) == bool(problems)
    return [str(p) for p in problems]


def test_minimal_form_is_accepted_as_written():
    inst = parse_instance(MINIMAL)
    assert inst.cluster.total_gpus == 8 and inst.cluster.n_servers == 2
    assert [j.id for j in inst.jobs] == ["a", "b"]
    assert inst.jobs[1].weight == 2 and inst.jobs[0].weight == 1
    assert inst.is_abstract


def test_issue_example_error_message():
    data = {"cluster": {"servers": [{"gpus": 8}]},
            "jobs": [{"id": str(i), "arrival": 0, "gpus": 1, "processing_time": 1} for i in range(3)]
            + [{"id": "3", "arrival": 0, "gpus": 9, "processing_time": 1}]}
    assert messages(data) == ["jobs[3].gpus: 9 exceeds the cluster's 8 GPUs"]


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["jobs"][1].update(id="a"), "jobs[1].id: duplicate id 'a' (also jobs[0])"),
    (lambda d: d["jobs"][0].update(arrival=-1), "jobs[0].arrival: must be >= 0, got -1"),
    (lambda d: d["jobs"][0].update(processing_time=0), "jobs[0].processing_time: must be > 0, got 0"),
    (lambda d: d["jobs"][0].update(processing_time=float("inf")), "jobs[0].processing_time: must be finite"),
    (lambda d: d["jobs"][0].update(arrival=float("nan")), "jobs[0].arrival: must be finite"),
    (lambda d: d["jobs"][0].pop("gpus"), "jobs[0].gpus: is required"),
    (lambda d: d["jobs"][0].pop("processing_time"), "jobs[0].processing_time: is required"),
    (lambda d: d["jobs"][0].update(gpus=2.0), "jobs[0].gpus: must be an integer, got 2.0"),
    (lambda d: d["jobs"][0].update(gpus=True), "jobs[0].gpus: must be an integer, got true"),
    (lambda d: d["jobs"][0].update(arrival="soon"), 'jobs[0].arrival: must be a number, got "soon"'),
    (lambda d: d["jobs"][0].update(id=7), "jobs[0].id: must be a string, got 7"),
    (lambda d: d["jobs"][0].update(arival=0), "jobs[0].arival: unknown field (did you mean 'arrival'?)"),
    (lambda d: d["jobs"][0].update(wieght=2), "jobs[0].wieght: unknown field (did you mean 'weight'?)"),
    (lambda d: d["jobs"][0].update(colour="red"), "jobs[0].colour: unknown field"),
    (lambda d: d.update(jobz=[]), "jobz: unknown field (did you mean 'jobs'?)"),
    (lambda d: d["cluster"]["servers"][0].update(gpu=4), "cluster.servers[0].gpu: unknown field (did you mean 'gpus'?)"),
    (lambda d: d["cluster"]["servers"][0].update(gpus=0), "cluster.servers[0].gpus: must be >= 1, got 0"),
    (lambda d: d["cluster"].update(servers=[]), "cluster.servers: must be a non-empty list"),
    (lambda d: d.pop("cluster"), "cluster: is required"),
    (lambda d: d.update(jobs={}), "jobs: must be a list"),
    (lambda d: d["jobs"].append(3), "jobs[2]: must be an object, got 3"),
    (lambda d: d["jobs"][0].update(weight=0), "jobs[0].weight: must be > 0, got 0"),
    (lambda d: d["jobs"][0].update(iterations=10), "jobs[0].iterations: only DNN jobs (with 'model') take this field"),
    (lambda d: d["jobs"][0].update(instances=3), "jobs[0].instances: 3 instances do not divide gpus = 2"),
    (lambda d: d["jobs"][1].update(instances=1), "jobs[1].instances: an instance of 8 GPUs does not fit the largest server (4 GPUs)"),
    (lambda d: d.update(format="other/2"), "format: unsupported format"),
    (lambda d: d["jobs"][0].update(meta=[1]), "jobs[0].meta: must be an object"),
    (lambda d: d["cluster"].update(inter_bandwidth=-5), "cluster.inter_bandwidth: must be > 0, got -5"),
])
def test_each_problem_is_reported_with_location_and_reason(mutate, expected):
    data = json.loads(json.dumps(MINIMAL))
    mutate(data)
    found = messages(data)
    assert any(m.startswith(expected) for m in found), found


def test_all_problems_are_collected_not_just_the_first():
    data = json.loads(json.dumps(MINIMAL))
    data["jobs"][0].update(arrival=-1, gpus=99)
    data["jobs"][1].update(id="a")
    assert len(messages(data)) == 3


def test_instances_split_into_whole_servers():
    data = {"cluster": {"servers": [{"gpus": 8}, {"gpus": 8}, {"gpus": 4}]},
            "jobs": [{"id": "a", "arrival": 0, "gpus": 16, "instances": 2, "processing_time": 1},
                     {"id": "b", "arrival": 0, "gpus": 12, "instances": 3, "processing_time": 1},
                     {"id": "c", "arrival": 0, "gpus": 18, "instances": 3, "processing_time": 1}]}
    assert messages(data) == ["jobs[2].instances: 3 instances of 6 GPUs do not fit the cluster's servers"]


def test_rationals_and_exact_mode():
    text = json.dumps({"cluster": {"servers": [{"gpus": 1}]},
                       "jobs": [{"id": "a", "arrival": 0.1, "gpus": 1, "processing_time": "1/3"}]})
    inst = loads_instance(text)
    assert inst.jobs[0].arrival == 0.1 and inst.jobs[0].processing_time == Fraction(1, 3)
    exact = loads_instance(text, exact=True)
    assert exact.jobs[0].arrival == Fraction(1, 10)
    assert parse_number("4/2") == 2 and isinstance(parse_number("4/2"), int)
    with pytest.raises(ValueError):
        parse_number(True)
    with pytest.raises(ValueError):
        parse_number("1/0")


def test_dataclasses_validate_themselves():
    with pytest.raises(InvalidInstance, match="gpus: must be >= 1"):
        Server(0)
    with pytest.raises(InvalidInstance, match="processing_time: is required"):
        Job("a", 0, 1)
    with pytest.raises(InvalidInstance, match="dp: must be >= 1"):
        Parallelism(0, 1, 1)
    with pytest.raises(InvalidInstance, match="duplicate id"):
        Instance(Cluster.homogeneous(1, 2), (Job("a", 0, 1, processing_time=1),) * 2)
    with pytest.raises(InvalidInstance, match="servers: must list at least one server"):
        Cluster(())


def test_cluster_specs():
    assert Cluster.from_spec("64x8").total_gpus == 512
    assert Cluster.from_spec("8, 8,4").server_gpus == (8, 8, 4)
    for bad in ("", "0x8", "8x", "a,b", "-1"):
        with pytest.raises(InvalidInstance, match="is not a cluster spec"):
            Cluster.from_spec(bad)


def test_id_key_is_a_natural_total_order():
    ids = ["j10", "j9", "j09", "a", "b2", "b10", "10", "9"]
    ordered = sorted(ids, key=id_key)
    assert ordered.index("j9") < ordered.index("j10") and ordered.index("9") < ordered.index("10")
    assert len({id_key(i) for i in ids}) == len(ids)  # distinct ids, distinct keys ("j9" vs "j09")


def test_files(tmp_path):
    inst = parse_instance(MINIMAL)
    path = tmp_path / "inst.json"
    save_instance(inst, path)
    assert load_instance(path) == inst
    assert path.read_text() == dumps_instance(inst)  # deterministic bytes
    with pytest.raises(InvalidInstance, match="no such file"):
        load_instance(tmp_path / "missing.json")
    with pytest.raises(InvalidInstance, match="is a directory"):
        load_instance(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InvalidInstance, match="invalid JSON at line 1 column 2"):
        load_instance(bad)
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InvalidInstance, match="cannot read"):
        load_instance(binary)


def test_save_compresses_server_runs_and_keeps_metadata():
    inst = Instance(Cluster((Server(8), Server(8), Server(4, "T4"))), (Job("a", 0, 1, processing_time=1),),
                    {"family": "uniform", "seed": 3})
    d = instance_to_dict(inst)
    assert d["cluster"]["servers"] == [{"gpus": 8, "count": 2}, {"gpus": 4, "gpu_type": "T4"}]
    assert d["metadata"] == {"family": "uniform", "seed": 3}
    assert parse_instance(d) == inst


@given(instances(max_jobs=8, weighted=True, predictions=True))
def test_round_trip_load_save_load_is_identity(inst):
    again = loads_instance(dumps_instance(inst))
    assert again == inst
    assert loads_instance(dumps_instance(again)) == again


@given(instances(max_jobs=6, exact=True, predictions=True))
def test_round_trip_exact(inst):
    assert loads_instance(dumps_instance(inst), exact=True) == inst


# --- fuzzing: every input is either loaded or rejected with InvalidInstance -----------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


def _loads_or_rejects(text):
    try:
        inst = loads_instance(text)
    except InvalidInstance as exc:
        assert exc.problems and str(exc)
        return None
    assert isinstance(inst, Instance)
    return inst


@given(json_values)
def test_fuzz_random_json_is_loaded_or_rejected(value):
    _loads_or_rejects(json.dumps(value))


@given(st.text(max_size=40))
def test_fuzz_random_text_is_loaded_or_rejected(text):
    _loads_or_rejects(text)


FIELDS = ["id", "arrival", "gpus", "processing_time", "weight", "instances", "model", "iterations",
          "parallelism", "predicted_processing_time", "meta", "servers", "count", "gpu_type", "cluster"]


@st.composite
def mutated_instances(draw):
    data = instance_to_dict(draw(instances(max_jobs=4)))
    for _ in range(draw(st.integers(1, 4))):
        target = draw(st.sampled_from(["top", "cluster", "server", "job"]))
        cluster = data.get("cluster")
        servers = cluster.get("servers") if isinstance(cluster, dict) else None
        jobs = data.get("jobs")
        if target == "top":
            obj = data
        elif target == "cluster" and isinstance(cluster, dict):
            obj = cluster
        elif target == "server" and isinstance(servers, list) and servers and isinstance(servers[0], dict):
            obj = servers[0]
        elif target == "job" and isinstance(jobs, list) and jobs and isinstance(jobs[0], dict):
            obj = jobs[draw(st.integers(0, len(jobs) - 1))]
            if not isinstance(obj, dict):
                continue
        else:
            continue
        key = draw(st.sampled_from(FIELDS + list(obj)))
        if draw(st.booleans()) and key in obj:
            del obj[key]
        else:
            obj[key] = draw(json_values)
    return data


@given(mutated_instances())
def test_fuzz_mutated_valid_instances_are_loaded_or_rejected(data):
    inst = _loads_or_rejects(json.dumps(data))
    if inst is not None:  # whatever was accepted round-trips
        assert loads_instance(dumps_instance(inst)) == inst


def test_loading_checks_each_job_once_and_builds_the_same_objects(monkeypatch):
    """issue 17: the loader validated every job twice (the JSON fields, then Job.__post_init__)."""
    import asrpt.instance as mod

    text = json.dumps({"cluster": {"servers": [{"gpus": 8, "count": 2}]}, "metadata": {"a": [1, {"b": 2}]},
                       "jobs": [{"id": "a", "arrival": 0.5, "gpus": 2, "processing_time": "7/2",
                                 "meta": {"row": [3, 4]}, "user": "u"},
                                {"id": "b", "arrival": 1, "gpus": 4, "model": "gpt2", "iterations": 3},
                                {"id": "c", "arrival": 2, "model": "gpt2", "iterations": 2,
                                 "parallelism": {"dp": 2, "pp": 2}}]})
    calls = []
    real = mod._check_job_fields
    monkeypatch.setattr(mod, "_check_job_fields", lambda *a, **k: calls.append(1) or real(*a, **k))
    loaded = loads_instance(text)
    assert len(calls) == 3
    monkeypatch.undo()
    built = Instance(Cluster.homogeneous(2, 8), (
        Job("a", 0.5, 2, processing_time=Fraction(7, 2), meta={"row": [3, 4]}, user="u"),
        Job("b", 1, 4, model="gpt2", iterations=3),
        Job("c", 2, 4, model="gpt2", iterations=2, parallelism=Parallelism(2, 2, 1))),
        metadata={"a": [1, {"b": 2}]})
    assert loaded == built and loaded.jobs == built.jobs
    assert loaded.jobs[1].parallelism == Parallelism(4, 1, 1)
    with pytest.raises(TypeError):
        loaded.jobs[0].meta["row"] = 1  # frozen, as a constructed Job's
    assert loaded.job("c").gpus == 4 and dumps_instance(loaded) == dumps_instance(built)


def test_an_instance_pickles_without_its_memos():
    """Instances go to process pools and Dask workers: metadata and job meta pickle (read-only
    either way), the memos kept on the instance (jobs by id, the simulator's job views) stay
    behind, and the copy runs the same simulation."""
    import pickle

    from asrpt.sim import simulate

    jobs = (Job("a", 0, 2, model="gpt2", parallelism=Parallelism(2, 1, 1), iterations=50,
                meta={"row": 7, "tags": ["x", {"y": 1}]}),
            Job("b", Fraction(1, 2), 1, processing_time=3))
    inst = Instance(Cluster.homogeneous(2, 2, "A100"), jobs, metadata={"source": {"name": "t"}})
    result = simulate(inst, "a-srpt", seed=0)
    assert inst.job("a").meta["tags"][1]["y"] == 1
    copy = pickle.loads(pickle.dumps(inst))
    assert copy == inst and copy.metadata == {"source": {"name": "t"}}
    assert "_job_views" not in copy.__dict__ and "_jobs_by_id" not in copy.__dict__
    with pytest.raises(TypeError):
        copy.jobs[0].meta["row"] = 8
    assert simulate(copy, "a-srpt", seed=0).completion_times == result.completion_times
    assert pickle.loads(pickle.dumps(result)).completion_times == result.completion_times
