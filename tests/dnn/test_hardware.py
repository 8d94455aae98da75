"""asrpt.dnn.hardware: the GPU table, precisions and bandwidth overrides."""

import pytest

from asrpt.dnn.hardware import (DEFAULT_GPU_TYPE, GPU_TABLE, PRECISIONS, default_precision,
                                gpu_names, gpu_spec, link_bandwidths, precision_info,
                                resolve_gpu_type)
from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Server


def test_table_covers_the_required_gpus():
    names = set(gpu_names())
    assert {"K80", "P100", "T4", "V100-16GB", "V100-32GB", "A100-40GB", "A100-80GB", "H100",
            "H200"} <= names
    assert set(GPU_TABLE) == names


@pytest.mark.parametrize("name, precision, tflops", [
    ("V100", "fp32", 15.7), ("V100", "fp16", 125.0), ("A100", "bf16", 312.0),
    ("A100-40GB", "tf32", 156.0), ("H100", "bf16", 989.4), ("H100", "fp8", 1978.9),
    ("H200", "bf16", 989.4), ("T4", "fp16", 65.0), ("K80", "fp32", 4.37), ("P100", "fp16", 18.7),
])
def test_datasheet_peaks(name, precision, tflops):
    assert gpu_spec(name).peak_tflops[precision] == tflops
    assert gpu_spec(name).peak_flops(precision) == pytest.approx(tflops * 1e12)


def test_memory_and_bandwidths_are_sane():
    assert gpu_spec("H200").memory_bytes == 141 * 10**9
    assert gpu_spec("A100-40GB").memory_bytes == 40 * 2**30
    for spec in GPU_TABLE.values():
        assert spec.intra_bandwidth >= spec.inter_bandwidth / spec.gpus_per_server
        assert spec.default_precision in spec.peak_tflops
        assert spec.source and spec.to_dict()["name"] == spec.name
    assert gpu_spec("T4").inter_bandwidth == 50e9 / 8   # g4dn.12xlarge, the Pollux testbed
    assert gpu_spec("T4").gpus_per_server == 4


def test_names_are_case_insensitive_with_aliases_and_did_you_mean():
    assert gpu_spec("a100").name == "A100-80GB"
    assert gpu_spec(" v100 ").name == "V100-32GB"
    assert gpu_spec("tesla-t4").name == "T4"
    with pytest.raises(InvalidParameterError, match=r"unknown GPU type 'H20O' \(did you mean 'H200'\?\)"):
        gpu_spec("H20O")
    with pytest.raises(InvalidParameterError, match="The 'name' parameter of gpu_spec"):
        gpu_spec(100)


def test_precisions():
    assert precision_info("BF16").name == "bf16"
    assert precision_info("half").name == "fp16"
    assert {p.state_bytes_per_param for p in PRECISIONS.values()} == {16, 17}
    assert precision_info("amp").compute == "fp16" and precision_info("amp").gradient_bytes == 4
    assert precision_info("fp32").activation_bytes == 4
    with pytest.raises(InvalidParameterError, match=r"unknown precision 'fp61' \(did you mean 'fp16'\?\)"):
        precision_info("fp61")
    with pytest.raises(InvalidParameterError, match="GPU V100-32GB has no bf16 peak"):
        gpu_spec("V100").peak_flops("bf16")


def test_default_precision_per_gpu():
    assert [default_precision(g) for g in ("K80", "P100", "T4", "V100", "A100", "H100", "H200")] == \
        ["fp32", "fp32", "fp16", "fp16", "bf16", "bf16", "bf16"]


def test_cluster_overrides_and_gpu_type_resolution():
    c = Cluster((Server(8, "A100"), Server(8)), gpu_type="H100", intra_bandwidth=1e11)
    assert resolve_gpu_type(c, 0) == "A100-80GB"
    assert resolve_gpu_type(c, 1) == "H100"
    assert resolve_gpu_type(c) == "H100"               # mixed: the cluster default
    assert resolve_gpu_type(Cluster.homogeneous(1, 8)) == DEFAULT_GPU_TYPE
    assert link_bandwidths(c, "A100") == (1e11, gpu_spec("A100").inter_bandwidth)
    assert link_bandwidths(None, "T4") == (gpu_spec("T4").intra_bandwidth, 6.25e9)
    assert link_bandwidths(Cluster.homogeneous(1, 8, "V100", inter_bandwidth=5e9)) == (150e9, 5e9)
    with pytest.raises(InvalidParameterError, match="server 5 does not exist"):
        resolve_gpu_type(c, 5)
    with pytest.raises(InvalidParameterError, match="unknown GPU type 'Z1'"):
        resolve_gpu_type(Cluster.homogeneous(1, 8, "Z1"))
