"""The instance format's limits (docs/instance-format.md, Limits): each is enforced with a located
one-line error, and save_instance leaves no temporary file behind (issue 17)."""

import json
import os

import pytest

from asrpt.errors import InvalidInstance
from asrpt.instance import (LIMITS, Cluster, Instance, Job, Parallelism, Server, load_instance, loads_instance,
                            save_instance)

BASE = {"cluster": {"servers": [{"gpus": 8}]},
        "jobs": [{"id": "a", "arrival": 0, "gpus": 1, "processing_time": 1}]}


def with_job(**fields):
    return json.dumps({**BASE, "jobs": [{**BASE["jobs"][0], **fields}]})


@pytest.mark.parametrize("text, where", [
    ('{"cluster": {"servers": [{"gpus": 8, "count": 10000000}]}, "jobs": []}', "cluster.servers[0].count: must be <= 100000"),
    ('{"cluster": {"servers": [{"gpus": 8, "count": 60000}, {"gpus": 8, "count": 60000}]}, "jobs": []}',
     "cluster.servers[1].count: brings the cluster to 120000 servers"),
    ('{"cluster": {"servers": [{"gpus": 70000}]}, "jobs": []}', "cluster.servers[0].gpus: must be <= 65536"),
    (with_job(arrival=1e17), "jobs[0].arrival: must be <= 1e+12"),
    (with_job(processing_time=1e308), "jobs[0].processing_time: must be <= 1e+12"),
    (with_job(weight=1e308), "jobs[0].weight: must be <= 1e+09"),
    (with_job(weight=1e-12), "jobs[0].weight: must be >= 1e-09"),
    (with_job(id="\ud800"), "jobs[0].id: must be valid Unicode"),
    (with_job(id="x" * 300), "jobs[0].id: must be at most 256 characters"),
    (with_job(id="a\nb"), "jobs[0].id: must not contain control characters"),
    (with_job(arrival=1663189205.9748902, processing_time=0.01), "jobs[0].processing_time: 0.01 s is below the float resolution"),
    (with_job(meta={"x": float("nan")}), "jobs[0].meta.x: must hold finite numbers only"),
    (json.dumps({**BASE, "metadata": {"a": [1, float("inf")]}}), "metadata.a[1]: must hold finite numbers only"),
    (json.dumps({**BASE, "metadata": json.loads("[" * 500 + "]" * 500)}), "JSON nested deeper than 32 levels"),
    (json.dumps({**BASE, "metadata": json.loads("[" * 40 + "]" * 40)}), "JSON nested deeper than 32 levels"),
    (with_job(arrival="1/" + "3" * 40), "jobs[0].arrival: must be a number"),
    (with_job(model="gpt2", iterations=10**13, processing_time=None), "jobs[0].iterations: must be <= 1e+12"),
])
def test_each_limit_is_a_located_error(text, where):
    with pytest.raises(InvalidInstance) as exc:
        loads_instance(text, source="x.json")
    assert str(exc.value).startswith(f"x.json: {where}"), str(exc.value)
    assert "\n" not in str(exc.value)


def test_long_number_literals_name_line_and_column():
    text = '{"cluster": {"servers": [{"gpus": 8}]},\n "jobs": [{"id": "a", "arrival": 1' + "0" * 4300 + "}]}"
    with pytest.raises(InvalidInstance, match=r"x.json: line 2 column 34: an integer of 4301 digits"):
        loads_instance(text, source="x.json")


def test_dataclasses_enforce_the_same_limits():
    with pytest.raises(InvalidInstance, match="at most 100000 servers"):
        Cluster.from_spec("99999999x8")
    with pytest.raises(InvalidInstance, match="dp: must be <= 65536"):
        Parallelism(99999, 99999, 99999)
    with pytest.raises(InvalidInstance, match=r"dp\*pp\*tp: 4096\*4096\*1 exceeds 65536"):
        Parallelism(4096, 4096, 1)
    with pytest.raises(InvalidInstance, match="meta.x: must hold finite numbers only"):
        Job("a", 0, 1, processing_time=1, meta={"x": float("nan")})
    with pytest.raises(InvalidInstance, match=r"metadata\.m\[0\].*: is nested deeper than 32 levels"):
        Instance(Cluster.homogeneous(1, 1), (), {"m": json.loads("[" * 40 + "]" * 40)})


def test_a_server_holds_up_to_the_parallel_degree_limit():
    """65,536 GPUs a server (the largest dp*pp*tp): the Alibaba PAI simulator's flat node of 6,500
    GPUs is one server; one more GPU is refused, in files, dataclasses and cluster specs alike."""
    assert LIMITS["server_gpus"] == LIMITS["parallel_degree"] == 65536
    for gpus in (6500, 65536):
        text = json.dumps({"cluster": {"servers": [{"gpus": gpus, "count": 2}]},
                           "jobs": [{"id": "a", "arrival": 0, "gpus": 2 * gpus, "processing_time": 1}]})
        assert loads_instance(text).cluster.total_gpus == 2 * gpus
        assert Cluster.from_spec(f"2x{gpus}").max_server_gpus == Cluster.from_spec(f"1x2x{gpus}").max_server_gpus == gpus
    with pytest.raises(InvalidInstance, match=r"x.json: cluster.servers\[0\].gpus: must be <= 65536"):
        loads_instance('{"cluster": {"servers": [{"gpus": 65537}]}, "jobs": []}', source="x.json")
    with pytest.raises(InvalidInstance, match="gpus: must be <= 65536"):
        Server(65537)
    for spec in ("1x65537", "2x2x65537"):
        with pytest.raises(InvalidInstance, match="at most 100000 servers of at most 65536 GPUs"):
            Cluster.from_spec(spec)
    with pytest.raises(InvalidInstance, match="65536"):
        Cluster.from_spec("8,65537")


def test_the_limits_accept_realistic_data():
    inst = loads_instance(with_job(arrival=1663189205.9748902, processing_time=0.5, weight=1e6,
                                   meta={"nested": json.loads("[" * 20 + "]" * 20)}))
    assert inst.jobs[0].processing_time == 0.5 and LIMITS["nesting"] == 32


def test_files_that_are_not_regular_or_too_big_are_refused(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InvalidInstance, match="is not a regular file"):
        load_instance(fifo)       # returns at once instead of blocking on the FIFO
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(LIMITS["file_bytes"] + 1)
    with pytest.raises(InvalidInstance, match="bytes, more than 16777216"):
        load_instance(big)


def test_a_bom_is_ignored(tmp_path):
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(BASE).encode())
    assert load_instance(p).n_jobs == 1


def test_save_instance_leaves_no_temporary_file(tmp_path):
    inst = loads_instance(json.dumps(BASE))
    with pytest.raises(OSError):
        save_instance(inst, tmp_path / "missing-dir" / "x.json")
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        save_instance(inst, tmp_path / "d")    # never renamed over: directories (and devices) stay
    (tmp_path / "d").rmdir()
    save_instance(inst, tmp_path / "x.json")
    assert os.listdir(tmp_path) == ["x.json"]
