"""The GPU table: peak throughput per precision, memory, and the two bandwidth tiers.

This module owns the hardware facts the performance model starts from (:mod:`asrpt.dnn.perf`):

- :class:`GPUSpec`, one frozen record per GPU model: dense peak TFLOP/s per precision (no
  structured sparsity), memory capacity and bandwidth, the intra-server link bandwidth per GPU
  (NVLink or PCIe, bytes/s **per direction**) and the default inter-server bandwidth per server
  (all NICs of a typical server of that GPU, bytes/s per direction);
- :class:`Precision`, the bytes per element each training precision uses (activations,
  gradients on the wire) and the bytes of model state per parameter under Adam;
- :func:`gpu_spec` (case-insensitive, with aliases and a did-you-mean), :func:`gpu_names`,
  :func:`precision_info`, :func:`default_precision`, :func:`resolve_gpu_type` and
  :func:`link_bandwidths`, which applies a cluster's own ``intra_bandwidth`` /
  ``inter_bandwidth`` over the table's defaults.

Numbers are datasheet values (cited per entry in :data:`GPU_TABLE`'s ``source``); they are
nominal, not achieved: the achieved fractions are fitted in :mod:`asrpt.dnn.calibration`.
It assumes nothing about jobs or placements.

Examples
--------
>>> spec = gpu_spec("h200")
>>> spec.name, spec.peak_tflops["bf16"], spec.memory_bytes // 10**9
('H200', 989.4, 141)
>>> default_precision("V100"), precision_info("bf16").activation_bytes
('fp16', 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from .._validation import InstanceOf, Interval, Integral, validate_params
from ..instance import Cluster
from ..errors import InvalidParameterError, did_you_mean

__all__ = [
    "GPUSpec",
    "Precision",
    "GPU_TABLE",
    "PRECISIONS",
    "DEFAULT_GPU_TYPE",
    "gpu_spec",
    "gpu_names",
    "precision_info",
    "default_precision",
    "resolve_gpu_type",
    "link_bandwidths",
]

GB = 10**9
GiB = 2**30

#: The GPU type assumed when neither the cluster nor its servers name one.
DEFAULT_GPU_TYPE = "H200"


@dataclass(frozen=True)
class Precision:
    """Bytes per element for one training precision.

    Attributes
    ----------
    name : str
        ``fp32``, ``tf32``, ``fp16``, ``bf16``, ``fp8``, ``amp`` or ``amp-bf16``.
    activation_bytes : int
        Bytes per activation element (stashed activations, pipeline and tensor-parallel traffic).
    gradient_bytes : int
        Bytes per gradient element on the wire (data-parallel all-reduce).
    state_bytes_per_param : int
        Bytes of model state per parameter with Adam: weights, gradients, optimizer moments and,
        for reduced precisions, an fp32 master copy. fp32/tf32: 4 + 4 + 8 = 16; fp16/bf16
        (mixed precision, Micikevicius et al. 2018; ZeRO paper's "16 bytes per parameter"):
        2 + 2 + 4 (master) + 8 = 16; fp8 (Transformer Engine keeps bf16 weights and gradients
        plus an fp8 weight copy): 1 + 2 + 2 + 4 + 8 = 17; amp (PyTorch/apex automatic mixed
        precision: fp32 weights and gradients, fp16 compute): 4 + 4 + 8 = 16; ``amp-bf16``
        (PyTorch autocast to bf16, ``torch.autocast(dtype=torch.bfloat16)``, what the shared H200
        sweep ran): the same 16, bf16 compute, 4-byte (fp32) gradients on the wire.
    compute : str
        The peak the math runs at (a key of :attr:`GPUSpec.peak_tflops`): the name itself, except
        ``amp`` which computes in fp16 and ``amp-bf16`` in bf16.
    weight_cache_bytes : int
        Bytes per parameter of low-precision weight copies held during the forward and backward
        passes, memory only (not optimizer traffic): PyTorch autocast casts every weight once
        per step and caches the copy until the autocast region exits, so ``amp`` holds a 2-byte
        fp16 copy of each fp32 weight and ``amp-bf16`` a bf16 one (the shared H200 sweep
        measures it: its bf16-autocast runs hold 1.7-2.1 bytes per parameter more than its fp32
        runs). 0 for the others: fp16/bf16
        keep their working weights in that precision already; fp8's copy is in its state bytes.
    """

    name: str
    activation_bytes: int
    gradient_bytes: int
    state_bytes_per_param: int
    compute: str = ""
    weight_cache_bytes: int = 0

    def __post_init__(self):
        if not self.compute:
            object.__setattr__(self, "compute", self.name)


PRECISIONS: Mapping[str, Precision] = MappingProxyType({
    "fp32": Precision("fp32", 4, 4, 16),
    "tf32": Precision("tf32", 4, 4, 16),
    "fp16": Precision("fp16", 2, 2, 16),
    "bf16": Precision("bf16", 2, 2, 16),
    "fp8": Precision("fp8", 1, 2, 17),
    "amp": Precision("amp", 2, 4, 16, "fp16", 2),
    "amp-bf16": Precision("amp-bf16", 2, 4, 16, "bf16", 2),
})

_PRECISION_ALIASES = {"float32": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
                      "single": "fp32", "mixed": "amp", "autocast-bf16": "amp-bf16",
                      "bf16-autocast": "amp-bf16"}


@dataclass(frozen=True)
class GPUSpec:
    """One GPU model: peak dense throughput per precision, memory and default bandwidths.

    Attributes
    ----------
    name : str
        Canonical name (``"A100-80GB"``).
    family : str
        Chip family used to look up calibrated factors (``"A100"``).
    peak_tflops : Mapping[str, float]
        Dense peak TFLOP/s per precision (no sparsity). A precision the GPU cannot run (e.g.
        bf16 before Ampere) is absent.
    memory_bytes : int
        Device memory in bytes.
    memory_bandwidth : float
        Device memory bandwidth, bytes/s.
    intra_bandwidth : float
        Intra-server link bandwidth per GPU, bytes/s per direction (NVLink or PCIe).
    inter_bandwidth : float
        Default network bandwidth per server, bytes/s per direction (all NICs of the reference
        server together).
    default_precision : str
        The precision jobs on this GPU train in unless they say otherwise.
    gpus_per_server : int
        GPUs in the reference server the bandwidth defaults come from.
    interconnect : str
        The intra-server link, in words.
    source : str
        Where the numbers come from.
    """

    name: str
    family: str
    peak_tflops: Mapping[str, float]
    memory_bytes: int
    memory_bandwidth: float
    intra_bandwidth: float
    inter_bandwidth: float
    default_precision: str
    gpus_per_server: int
    interconnect: str
    source: str = field(default="", compare=False)

    def __post_init__(self):
        object.__setattr__(self, "peak_tflops", MappingProxyType(dict(self.peak_tflops)))

    def peak_flops(self, precision: str) -> float:
        """Dense peak FLOP/s at ``precision`` (InvalidParameterError if the GPU lacks it).

        >>> gpu_spec("V100").peak_flops("fp16")
        125000000000000.0
        """
        p = precision_info(precision).compute
        if p not in self.peak_tflops:
            have = ", ".join(sorted(self.peak_tflops))
            raise InvalidParameterError(
                f"GPU {self.name} has no {p} peak in the GPU table (it supports {have})")
        return float(self.peak_tflops[p]) * 1e12

    def to_dict(self) -> dict:
        """A JSON-ready dict of every field."""
        return {"name": self.name, "family": self.family, "peak_tflops": dict(self.peak_tflops),
                "memory_bytes": self.memory_bytes, "memory_bandwidth": self.memory_bandwidth,
                "intra_bandwidth": self.intra_bandwidth, "inter_bandwidth": self.inter_bandwidth,
                "default_precision": self.default_precision,
                "gpus_per_server": self.gpus_per_server, "interconnect": self.interconnect,
                "source": self.source}


def _gbps(gigabits: float) -> float:
    return gigabits * 1e9 / 8


_PCIE3_X16 = 15.75 * GB   # PCIe 3.0 x16: 8 GT/s x 16 lanes x 128/130, per direction
_PCIE4_X16 = 31.5 * GB

_ENTRIES = [
    GPUSpec(
        "K80", "K80", {"fp32": 4.37}, 12 * GiB, 240 * GB, _PCIE3_X16, _gbps(10),
        "fp32", 8, "PCIe 3.0 x16",
        "NVIDIA Tesla K80 datasheet (2014): 8.73 TFLOP/s fp32 (boost), 24 GB, 480 GB/s per board "
        "of two GK210 dies; one CUDA device is one die, hence half of each. No native fp16 math. "
        "Network: 10 Gb/s (AWS p2.8xlarge, 8 dies)."),
    GPUSpec(
        "P100", "P100", {"fp32": 9.3, "fp16": 18.7}, 16 * GiB, 732 * GB, _PCIE3_X16, _gbps(10),
        "fp32", 4, "PCIe 3.0 x16",
        "NVIDIA Tesla P100 PCIe datasheet (2016): 9.3 TFLOP/s fp32, 18.7 fp16, 16 GB HBM2 at "
        "732 GB/s. Network: 10 Gb/s Ethernet."),
    GPUSpec(
        "T4", "T4", {"fp32": 8.1, "fp16": 65.0}, 16 * GiB, 320 * GB, _PCIE3_X16, _gbps(50),
        "fp16", 4, "PCIe 3.0 x16",
        "NVIDIA T4 datasheet (2018): 8.1 TFLOP/s fp32, 65 fp16 (tensor cores, mixed), 16 GB GDDR6 "
        "at 320 GB/s, PCIe 3.0 x16. Server: AWS g4dn.12xlarge (4 x T4, 50 Gb/s network), the "
        "Pollux testbed."),
    GPUSpec(
        "V100-16GB", "V100", {"fp32": 15.7, "fp16": 125.0}, 16 * GiB, 900 * GB, 150 * GB,
        _gbps(400), "fp16", 8, "NVLink 2",
        "NVIDIA Tesla V100 SXM2 datasheet (2017): 15.7 TFLOP/s fp32, 125 tensor fp16, 16 GB HBM2 "
        "at 900 GB/s, NVLink 300 GB/s total (150 per direction). Server: DGX-1 (8 GPUs, 4 x "
        "100 Gb/s EDR InfiniBand)."),
    GPUSpec(
        "V100-32GB", "V100", {"fp32": 15.7, "fp16": 125.0}, 32 * GiB, 900 * GB, 150 * GB,
        _gbps(400), "fp16", 8, "NVLink 2",
        "NVIDIA Tesla V100 SXM2 32GB datasheet (2018): as V100-16GB with 32 GB HBM2."),
    GPUSpec(
        "A100-40GB", "A100",
        {"fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0}, 40 * GiB, 1555 * GB,
        300 * GB, _gbps(1600), "bf16", 8, "NVLink 3",
        "NVIDIA A100 SXM4 datasheet (2020): 19.5 TFLOP/s fp32, 156 tf32, 312 fp16/bf16 (dense), "
        "40 GB HBM2 at 1,555 GB/s, NVLink 600 GB/s total (300 per direction). Server: DGX A100 "
        "(8 GPUs, 8 x 200 Gb/s HDR InfiniBand)."),
    GPUSpec(
        "A100-80GB", "A100",
        {"fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0}, 80 * GiB, 2039 * GB,
        300 * GB, _gbps(1600), "bf16", 8, "NVLink 3",
        "NVIDIA A100 SXM4 80GB datasheet (2020): as A100-40GB with 80 GB HBM2e at 2,039 GB/s."),
    GPUSpec(
        "H100", "H100",
        {"fp32": 66.9, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9},
        80 * GiB, 3350 * GB, 450 * GB, _gbps(3200), "bf16", 8, "NVLink 4",
        "NVIDIA H100 SXM5 datasheet (2022): 67 TFLOP/s fp32, 494.7 tf32, 989.4 fp16/bf16, "
        "1,978.9 fp8 (dense; the datasheet's larger figures are with sparsity), 80 GB HBM3 at "
        "3.35 TB/s, NVLink 900 GB/s total (450 per direction). Server: DGX H100 (8 GPUs, 8 x "
        "400 Gb/s NDR InfiniBand)."),
    GPUSpec(
        "H200", "H200",
        {"fp32": 66.9, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9},
        141 * GB, 4800 * GB, 450 * GB, _gbps(3200), "bf16", 8, "NVLink 4",
        "NVIDIA H200 SXM datasheet (2024): H100 SXM compute, 141 GB HBM3e at 4.8 TB/s, NVLink "
        "900 GB/s total. Server: DGX H200 (8 GPUs, 8 x 400 Gb/s NDR InfiniBand)."),
]

#: Canonical name -> spec.
GPU_TABLE: Mapping[str, GPUSpec] = MappingProxyType({s.name: s for s in _ENTRIES})

_ALIASES = {
    "v100": "V100-32GB", "a100": "A100-80GB", "h100-sxm": "H100", "h100-80gb": "H100",
    "h200-sxm": "H200", "tesla-k80": "K80", "tesla-p100": "P100", "tesla-t4": "T4",
    "tesla-v100": "V100-32GB", "a100-sxm4-40gb": "A100-40GB", "a100-sxm4-80gb": "A100-80GB",
}
_LOOKUP = {**{k.lower(): k for k in GPU_TABLE}, **_ALIASES}


def _known_gpu_names() -> list[str]:
    return sorted(GPU_TABLE) + ["A100", "V100"]


@validate_params({"name": [str]})
def gpu_spec(name: str) -> GPUSpec:
    """The :class:`GPUSpec` of GPU ``name`` (case-insensitive; ``A100`` means the 80 GB part).

    Parameters
    ----------
    name : str
        A name from :func:`gpu_names` or an alias (``A100``, ``V100``, ``tesla-t4``, ...).

    Returns
    -------
    GPUSpec

    Raises
    ------
    InvalidParameterError
        For an unknown name, with a did-you-mean and the list of known names.

    Examples
    --------
    >>> gpu_spec("a100").name, gpu_spec("T4").inter_bandwidth
    ('A100-80GB', 6250000000.0)
    >>> gpu_spec("H20O")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: unknown GPU type 'H20O' (did you mean 'H200'?); known: ...
    """
    key = _LOOKUP.get(name.strip().lower())
    if key is None:
        known = _known_gpu_names()
        raise InvalidParameterError(
            f"unknown GPU type {name!r}{did_you_mean(name, known, cutoff=0.5)}; known: {', '.join(known)}")
    return GPU_TABLE[key]


def gpu_names() -> tuple[str, ...]:
    """The canonical GPU names in the table, oldest first.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> gpu_names()[:3]
    ('K80', 'P100', 'T4')
    """
    return tuple(s.name for s in _ENTRIES)


@validate_params({"name": [str]})
def precision_info(name: str) -> Precision:
    """The :class:`Precision` record of ``name`` (``fp32``, ``tf32``, ``fp16``, ``bf16``, ``fp8``,
    ``amp``, ``amp-bf16``).

    Parameters
    ----------
    name : str
        A precision name, case-insensitive; ``float32``, ``half``, ``bfloat16`` are accepted.

    Returns
    -------
    Precision

    Raises
    ------
    InvalidParameterError
        For an unknown precision (with a did-you-mean).

    Examples
    --------
    >>> precision_info("BF16").state_bytes_per_param
    16
    >>> p = precision_info("autocast-bf16")
    >>> p.name, p.compute, p.gradient_bytes, p.weight_cache_bytes
    ('amp-bf16', 'bf16', 4, 2)
    """
    key = name.strip().lower()
    key = _PRECISION_ALIASES.get(key, key)
    if key not in PRECISIONS:
        raise InvalidParameterError(
            f"unknown precision {name!r}{did_you_mean(key, PRECISIONS, cutoff=0.5)}; "
            f"known: {', '.join(PRECISIONS)}")
    return PRECISIONS[key]


@validate_params({"gpu_type": [str]})
def default_precision(gpu_type: str) -> str:
    """The precision a job trains in on ``gpu_type`` unless it says otherwise.

    bf16 on A100/H100/H200 (native bf16 tensor cores), fp16 (mixed precision) on V100 and T4,
    fp32 on K80 and P100 (no tensor cores).

    Parameters
    ----------
    gpu_type : str
        A GPU name or alias.

    Returns
    -------
    str

    Raises
    ------
    InvalidParameterError
        For an unknown GPU type.

    Examples
    --------
    >>> [default_precision(g) for g in ("K80", "T4", "A100")]
    ['fp32', 'fp16', 'bf16']
    """
    return gpu_spec(gpu_type).default_precision


@validate_params({"cluster": [InstanceOf(Cluster)],
                  "server": [Interval(Integral, 0, None, closed="left"), None]})
def resolve_gpu_type(cluster, server: int | None = None) -> str:
    """The canonical GPU type of a server (its own type, else the cluster's, else the default).

    With ``server=None``: the cluster's GPU type when every server has the same one, else
    the cluster default (``cluster.gpu_type`` or :data:`DEFAULT_GPU_TYPE`).

    Parameters
    ----------
    cluster : asrpt.instance.Cluster
        The cluster.
    server : int or None
        A server index.

    Returns
    -------
    str
        A canonical name from :data:`GPU_TABLE`.

    Raises
    ------
    InvalidParameterError
        When the type named by the cluster is unknown, or ``server`` is out of range.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Server
    >>> resolve_gpu_type(Cluster((Server(8, "A100"), Server(4)), gpu_type="V100"), 1)
    'V100-32GB'
    >>> resolve_gpu_type(Cluster.homogeneous(2, 8))
    'H200'
    """
    default = cluster.gpu_type or DEFAULT_GPU_TYPE
    if server is None:
        types = {s.gpu_type or default for s in cluster.servers}
        name = types.pop() if len(types) == 1 else default
        return gpu_spec(name).name
    if server >= len(cluster.servers):
        raise InvalidParameterError(
            f"server {server} does not exist (the cluster has {len(cluster.servers)} servers)")
    return gpu_spec(cluster.servers[server].gpu_type or default).name


@validate_params({"cluster": [InstanceOf(Cluster), None], "gpu_type": [str, None]})
def link_bandwidths(cluster=None, gpu_type: str | None = None) -> tuple[float, float]:
    """Nominal ``(intra, inter)`` bandwidths in bytes/s: the cluster's, else the GPU type's.

    ``intra`` is per GPU and direction inside a server; ``inter`` per server and direction
    between servers. A cluster's ``intra_bandwidth`` / ``inter_bandwidth`` override the table.

    Parameters
    ----------
    cluster : asrpt.instance.Cluster or None
        Supplies overrides (and the GPU type when ``gpu_type`` is None).
    gpu_type : str or None
        The GPU type whose defaults apply.

    Returns
    -------
    tuple of float

    Raises
    ------
    InvalidParameterError
        For an unknown GPU type.

    Examples
    --------
    >>> from asrpt.instance import Cluster
    >>> link_bandwidths(Cluster.homogeneous(2, 8, "A100", inter_bandwidth=25e9))
    (300000000000.0, 25000000000.0)
    """
    if gpu_type is None:
        gpu_type = resolve_gpu_type(cluster) if cluster is not None else DEFAULT_GPU_TYPE
    spec = gpu_spec(gpu_type)
    intra = spec.intra_bandwidth
    inter = spec.inter_bandwidth
    if cluster is not None:
        if cluster.intra_bandwidth is not None:
            intra = float(cluster.intra_bandwidth)
        if cluster.inter_bandwidth is not None:
            inter = float(cluster.inter_bandwidth)
    return float(intra), float(inter)
