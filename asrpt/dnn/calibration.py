"""Calibration of the performance model against real measurements, and the fitted values.

This module owns the free parameters of :mod:`asrpt.dnn.perf` (:class:`PerfParams`), the values
fitted to public measurements (shipped in ``asrpt/dnn/data/calibration.json``, read by
:func:`perf_params`), the loaders of those measurements, and the fit itself.

The measurements (nobody on the team made them; see each folder's ``SOURCE.txt``):

- **Pollux** (Qiao et al., OSDI'21) profiles, ``pollux-throughput-profiles/<job>/``:
  ``placements.csv`` (a digit string of GPUs per server, per-GPU batch, step and sync time) and
  ``scalability.csv`` (6-16 servers, up to 64 GPUs), measured on AWS g4dn.12xlarge servers
  (4 x T4, 50 Gb/s network), pure data parallelism (PyTorch DDP, fp32).
- **Gavel** (Narayanan et al., OSDI'20) ``simulation_throughputs.json``: steps/s per model and
  batch size on K80, P100 and V100, for 1-8 GPUs, consolidated and "_unconsolidated".

How each measured job maps to the zoo, and which rows are used, is in :data:`JOB_MAP` and in
``docs/performance-model.md``. The fit minimises squared log errors of the iteration time with
:func:`scipy.optimize.least_squares` on a deterministic training split (by placement for Pollux,
by batch size for Gavel), and reports the median and worst relative error per job on the held-out
rows.

Examples
--------
>>> p = perf_params()
>>> 0 < p.dense_efficiency <= 1 and p.network_for("T4").inter_efficiency > 0
True
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Mapping, Sequence

import numpy as np

from .._validation import InstanceOf, Integral, Interval, validate_params
from ..errors import InvalidParameterError, TraceError

__all__ = [
    "NetworkParams",
    "PerfParams",
    "DEFAULT_NETWORK",
    "perf_params",
    "calibration_data",
    "CALIBRATION_FILE",
    "JOB_MAP",
    "UNMAPPED",
    "FREE_PARAMETERS",
    "Measurement",
    "default_traces_dir",
    "load_pollux",
    "load_gavel",
    "fit",
    "evaluate",
    "predict",
]

CALIBRATION_FILE = os.path.join(os.path.dirname(__file__), "data", "calibration.json")


@dataclass(frozen=True)
class NetworkParams:
    """Achieved fractions of the nominal link bandwidths and the per-step latencies.

    Attributes
    ----------
    intra_efficiency : float
        Achieved / nominal intra-server bandwidth (NCCL bus bandwidth over the link rate).
    inter_efficiency : float
        Achieved / nominal inter-server bandwidth.
    alpha_intra : float
        Seconds per collective step over intra-server links.
    alpha_inter : float
        Seconds per collective step that crosses servers.
    """

    intra_efficiency: float = 0.8
    inter_efficiency: float = 0.8
    alpha_intra: float = 5e-6
    alpha_inter: float = 2e-5

    def __post_init__(self):
        for name in ("intra_efficiency", "inter_efficiency"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 < v <= 10):
                raise InvalidParameterError(f"NetworkParams.{name} must be in (0, 10], got {v!r}")
        for name in ("alpha_intra", "alpha_inter"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 <= v < 1):
                raise InvalidParameterError(f"NetworkParams.{name} must be in [0, 1), got {v!r}")


#: Network parameters for GPU families without a fitted entry: NCCL reaches about 80% of the
#: link rate in bus bandwidth on NVLink and InfiniBand (nccl-tests all_reduce_perf on DGX
#: systems), with a few microseconds per ring step.
DEFAULT_NETWORK = NetworkParams()


@dataclass(frozen=True)
class PerfParams:
    """The free parameters of the performance model (see ``docs/performance-model.md``).

    Attributes
    ----------
    dense_efficiency : float
        Largest achieved fraction of peak FLOP/s for matrix layers (linear, attention, mlp,
        embedding, block, matmul).
    conv_efficiency : float
        The same for convolutions.
    memory_efficiency : float
        Achieved fraction of the memory bandwidth for memory-bound layers (norms, activations,
        pooling, adds) and the optimizer step.
    layer_overhead : float
        Seconds per layer and pass (kernel launches, framework): with it the efficiency of a
        layer grows with its work, ``e(W) = e_max * W / (W + peak * e_max * layer_overhead)``.
    iteration_overhead : float
        Seconds per iteration outside the layers (data loading, Python, zeroing gradients).
    overlap : float
        Fraction of the last micro-batch's backward pass that the data-parallel all-reduce can
        hide behind (gradient bucketing, as in PyTorch DDP).
    gpu_factor : tuple of (str, float)
        Per GPU family (``"T4"``) or family and precision (``"T4/fp16"``, which takes
        precedence), a multiplier on every achieved fraction above (absent: 1).
    network : tuple of (str, NetworkParams)
        Per GPU family, the network parameters (families absent: :data:`DEFAULT_NETWORK`).
    kernels : tuple of (str, KernelParams)
        Per GPU name, the fitted roofline kernel model (:mod:`asrpt.dnn.roofline`) that replaces
        the efficiencies above for that GPU (the shipped H200 fit, also applied to the H100).
    """

    dense_efficiency: float = 0.5
    conv_efficiency: float = 0.5
    memory_efficiency: float = 0.7
    layer_overhead: float = 2e-5
    iteration_overhead: float = 0.0
    overlap: float = 0.5
    gpu_factor: tuple = ()
    network: tuple = ()
    kernels: tuple = ()

    def __post_init__(self):
        from .roofline import KernelParams

        object.__setattr__(self, "kernels", tuple(sorted(
            (str(k), v if isinstance(v, KernelParams) else KernelParams.from_dict(v))
            for k, v in dict(self.kernels).items())))
        object.__setattr__(self, "gpu_factor", tuple(sorted(
            (str(k), float(v)) for k, v in dict(self.gpu_factor).items())))
        object.__setattr__(self, "network", tuple(sorted(
            (str(k), v if isinstance(v, NetworkParams) else NetworkParams(**v))
            for k, v in dict(self.network).items())))
        for name in ("dense_efficiency", "conv_efficiency", "memory_efficiency"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 < v <= 1):
                raise InvalidParameterError(f"PerfParams.{name} must be in (0, 1], got {v!r}")
        for name in ("layer_overhead", "iteration_overhead"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 <= v < 10):
                raise InvalidParameterError(f"PerfParams.{name} must be in [0, 10), got {v!r}")
        if not (isinstance(self.overlap, (int, float)) and 0 <= self.overlap <= 1):
            raise InvalidParameterError(f"PerfParams.overlap must be in [0, 1], got {self.overlap!r}")
        for fam, v in self.gpu_factor:
            if not 0 < v <= 10:
                raise InvalidParameterError(f"PerfParams.gpu_factor[{fam!r}] must be in (0, 10], got {v!r}")

    def factor(self, family: str, precision: str | None = None) -> float:
        """The efficiency multiplier of a GPU family at a precision: the ``"family/precision"``
        entry, else the ``"family"`` entry, else 1.0 (not fitted)."""
        factors = dict(self.gpu_factor)
        if precision is not None and f"{family}/{precision}" in factors:
            return factors[f"{family}/{precision}"]
        return factors.get(family, 1.0)

    def kernel_model(self, gpu: str):
        """The :class:`~asrpt.dnn.roofline.KernelParams` of a GPU name, or None."""
        return dict(self.kernels).get(gpu)

    def network_for(self, family: str) -> NetworkParams:
        """The network parameters of a GPU family (:data:`DEFAULT_NETWORK` when not fitted)."""
        return dict(self.network).get(family, DEFAULT_NETWORK)

    def to_dict(self) -> dict:
        """JSON-ready dict (the ``params`` block of ``calibration.json``)."""
        return {"dense_efficiency": self.dense_efficiency,
                "conv_efficiency": self.conv_efficiency,
                "memory_efficiency": self.memory_efficiency,
                "layer_overhead": self.layer_overhead,
                "iteration_overhead": self.iteration_overhead,
                "overlap": self.overlap,
                "gpu_factor": dict(self.gpu_factor),
                "network": {k: asdict(v) for k, v in self.network},
                **({"kernels": {k: v.to_dict() for k, v in self.kernels}} if self.kernels
                   else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PerfParams":
        """Inverse of :meth:`to_dict`."""
        data = dict(data)
        data["network"] = {k: NetworkParams(**v) for k, v in dict(data.get("network", {})).items()}
        return cls(**data)


@lru_cache(maxsize=None)
def calibration_data() -> Mapping[str, Any]:
    """The shipped ``calibration.json`` (parameters, data split, held-out errors), read once.

    Returns
    -------
    dict

    Raises
    ------
    TraceError
        If the file is missing or malformed (a broken installation).

    Examples
    --------
    >>> sorted(calibration_data())[:3]
    ['errors', 'fit', 'format']
    """
    try:
        with open(CALIBRATION_FILE, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise TraceError(f"{CALIBRATION_FILE}: cannot read the shipped calibration: {exc}") from None


@lru_cache(maxsize=None)
def perf_params() -> PerfParams:
    """The fitted :class:`PerfParams` shipped with asrpt (``asrpt/dnn/data/calibration.json``).

    Returns
    -------
    PerfParams

    Raises
    ------
    TraceError
        If the shipped file is missing or malformed.

    Examples
    --------
    >>> perf_params() is perf_params()
    True
    """
    from dataclasses import replace

    from .roofline import shipped_kernel_params

    return replace(PerfParams.from_dict(calibration_data()["params"]),
                   kernels=dict(shipped_kernel_params()))


# ---------------------------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------------------------

#: How each measured job maps to the zoo: (zoo model, layer-graph overrides, precision, note).
#: Jobs absent here (Pollux deepspeech2, ncf, yolov3; Gavel A3C, CycleGAN, LM, Recommendation,
#: Transformer) have no zoo model and are left out of the fit.
JOB_MAP: Mapping[str, tuple] = {
    "pollux/imagenet": ("resnet50", (), "amp",
                        "ResNet-50 on ImageNet (224x224); the AdaptDL example trains with apex "
                        "AMP: fp16 math on the T4's tensor cores, fp32 weights and gradients"),
    "pollux/cifar10": ("resnet18_cifar", (), "fp32",
                       "ResNet-18 on CIFAR-10 (kuangliu/pytorch-cifar), fp32"),
    "pollux/bert": ("bert-base", (("seq_len", 384),), "fp32",
                    "BERT-base fine-tuned on SQuAD v1.1, max_seq_length 384 (AdaptDL example, "
                    "no --fp16)"),
    "gavel/ResNet-18": ("resnet18_cifar", (), "fp32",
                        "ResNet-18 on CIFAR-10 (Gavel image_classification), fp32"),
    "gavel/ResNet-50": ("resnet50", (), "fp32", "ResNet-50 on ImageNet, fp32"),
}

#: Measured jobs without a zoo model, left out (named in the report).
UNMAPPED = ("pollux/deepspeech2", "pollux/ncf", "pollux/yolov3", "gavel/A3C", "gavel/CycleGAN",
            "gavel/LM", "gavel/Recommendation", "gavel/Transformer")

_GAVEL_GPU = {"k80": "K80", "p100": "P100", "v100": "V100-16GB"}


@dataclass(frozen=True)
class Measurement:
    """One measured iteration time of a data-parallel job.

    Attributes
    ----------
    source : str
        ``"pollux"`` or ``"gavel"``.
    job : str
        ``"pollux/imagenet"``, ``"gavel/ResNet-50"``, ... (a key of :data:`JOB_MAP`).
    profile : str
        ``"placements"``, ``"scalability"`` (Pollux), ``"single"``, ``"consolidated"`` or
        ``"unconsolidated"`` (Gavel).
    model : str
        The zoo model standing for the job.
    overrides : tuple
        Layer-graph overrides, e.g. ``(("seq_len", 384),)``.
    gpu_type : str
    precision : str
    local_batch : int
        Samples per GPU and iteration.
    counts : tuple of int
        GPUs used on each server.
    time : float
        Measured seconds per iteration.
    sync_time : float or None
        Measured exposed gradient synchronisation (Pollux only).
    held_out : bool
        In the evaluation split (never used by the fit).
    fitted : bool
        Whether the row is eligible for the fit (Gavel multi-GPU rows are only reported).
    """

    source: str
    job: str
    profile: str
    model: str
    overrides: tuple
    gpu_type: str
    precision: str
    local_batch: int
    counts: tuple
    time: float
    sync_time: float | None
    held_out: bool
    fitted: bool = True

    @property
    def gpus(self) -> int:
        return sum(self.counts)

    @property
    def servers_per_type(self) -> int:
        """GPUs per server of the measured testbed."""
        return 4 if self.source == "pollux" else 8


def default_traces_dir() -> str | None:
    """The shared traces folder, ``$ASRPT_SHARED/traces`` (:func:`asrpt.shared_data.shared_path`);
    None when it does not exist.

    Returns
    -------
    str or None

    Examples
    --------
    >>> default_traces_dir() is None or os.path.isdir(default_traces_dir())
    True
    """
    from ..shared_data import shared_path

    path = shared_path("traces")
    return path if os.path.isdir(path) else None


def _traces(root: str | None) -> str:
    root = root or default_traces_dir()
    if root is None or not os.path.isdir(root):
        raise TraceError(f"traces folder not found ({root!r}); set ASRPT_SHARED to the shared data folder")
    return root


def _spread(replicas: int, nodes: int) -> tuple:
    """``replicas`` GPUs over ``nodes`` servers as evenly as possible (larger counts first)."""
    base, extra = divmod(replicas, nodes)
    return tuple(base + (1 if i < extra else 0) for i in range(nodes))


def _read_csv(path: str) -> list[dict]:
    import csv

    try:
        with open(path, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc}") from None


@validate_params({"root": [str, None]})
def load_pollux(root: str | None = None) -> list[Measurement]:
    """The Pollux profiles of the jobs in :data:`JOB_MAP`, with the held-out split.

    Placements (``placements.csv``: a digit per server, e.g. ``"1124"``) and the scalability
    runs (``scalability.csv``: replicas spread evenly over nodes) on 4-GPU T4 servers, fp32. The
    split is by placement: sorting a job's distinct placements (resp. (nodes, replicas) pairs),
    every third one, starting with the third, is held out with all its batch sizes.

    Parameters
    ----------
    root : str or None
        The traces folder (default: :func:`default_traces_dir`).

    Returns
    -------
    list of Measurement

    Raises
    ------
    TraceError
        If the folder or a file is missing or malformed.

    Examples
    --------
    >>> root = default_traces_dir()
    >>> rows = load_pollux(root) if root else []
    >>> root is None or sorted({r.job for r in rows}) == ['pollux/bert', 'pollux/cifar10',
    ...                                                    'pollux/imagenet']
    True
    """
    base = os.path.join(_traces(root), "pollux-throughput-profiles")
    out: list[Measurement] = []
    for job, (model, overrides, prec, _) in JOB_MAP.items():
        src, name = job.split("/")
        if src != "pollux":
            continue
        try:
            rows = _read_csv(os.path.join(base, name, "placements.csv"))
            keys = sorted({r["placement"] for r in rows}, key=lambda p: (len(p), p))
            held = {p for i, p in enumerate(keys) if i % 3 == 2}
            for r in rows:
                counts = tuple(int(ch) for ch in r["placement"] if ch != "0")
                out.append(Measurement("pollux", job, "placements", model, overrides, "T4", prec,
                                       int(r["local_bsz"]), counts, float(r["step_time"]),
                                       float(r["sync_time"]), r["placement"] in held))
            rows = _read_csv(os.path.join(base, name, "scalability.csv"))
            pairs = sorted({(int(r["num_nodes"]), int(r["num_replicas"])) for r in rows})
            held2 = {p for i, p in enumerate(pairs) if i % 3 == 2}
            for r in rows:
                nodes, reps = int(r["num_nodes"]), int(r["num_replicas"])
                out.append(Measurement("pollux", job, "scalability", model, overrides, "T4",
                                       prec, int(r["local_bsz"]), _spread(reps, nodes),
                                       float(r["step_time"]), float(r["sync_time"]),
                                       (nodes, reps) in held2))
        except (KeyError, ValueError) as exc:
            raise TraceError(f"{base}/{name}: malformed profile: {exc!r}") from None
    return out


@validate_params({"root": [str, None]})
def load_gavel(root: str | None = None) -> list[Measurement]:
    """Gavel's measured throughputs of the jobs in :data:`JOB_MAP` (fp32 on K80, P100, V100).

    A value is read as steps per second summed over the job's workers (per-worker iteration
    time = scale factor / value): the only reading under which multi-GPU ResNet-50 values are
    physically possible. Single-GPU rows (``profile="single"``) are fitted, holding out the third
    smallest batch size of each model; multi-GPU rows (``"consolidated"``: one server;
    ``"unconsolidated"``: one GPU per server) are only reported (``fitted=False``): some exceed
    linear scaling or their consolidated counterparts (see the SOURCE.txt caveat).

    Parameters
    ----------
    root : str or None
        The traces folder (default: :func:`default_traces_dir`).

    Returns
    -------
    list of Measurement

    Raises
    ------
    TraceError
        If the file is missing or malformed.

    Examples
    --------
    >>> root = default_traces_dir()
    >>> rows = load_gavel(root) if root else []
    >>> root is None or {r.gpu_type for r in rows} == {"K80", "P100", "V100-16GB"}
    True
    """
    import ast
    import re

    path = os.path.join(_traces(root), "gavel-measured-throughputs", "simulation_throughputs.json")
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise TraceError(f"{path}: cannot read: {exc}") from None
    out: list[Measurement] = []
    pattern = re.compile(r"^(.*) \(batch size (\d+)\)$")
    batches: dict[str, set] = {}
    parsed = []
    for key, entries in data.items():
        gpu_key, _, kind = key.partition("_")
        gpu = _GAVEL_GPU.get(gpu_key)
        if gpu is None:
            continue
        for job_key, value in entries.items():
            try:
                name_batch, sf = ast.literal_eval(job_key)
                thr = float(value["null"])
            except (ValueError, SyntaxError, KeyError, TypeError) as exc:
                raise TraceError(f"{path}: malformed entry {job_key!r}: {exc!r}") from None
            m = pattern.match(name_batch)
            if m is None:
                continue
            job = f"gavel/{m.group(1)}"
            if job not in JOB_MAP or thr <= 0:
                continue
            batch = int(m.group(2))
            batches.setdefault(job, set()).add(batch)
            parsed.append((job, gpu, kind, batch, int(sf), thr))
    for job, gpu, kind, batch, sf, thr in parsed:
        model, overrides, prec, _ = JOB_MAP[job]
        bs = sorted(batches[job])
        held = bs.index(batch) % 2 == 1
        if sf == 1:
            profile, counts, fitted = "single", (1,), kind != "unconsolidated"
            if kind == "unconsolidated":
                continue  # identical to the consolidated single-GPU value
        elif kind == "unconsolidated":
            profile, counts, fitted = "unconsolidated", (1,) * sf, False
        else:
            profile, counts, fitted = "consolidated", (sf,), False
        out.append(Measurement("gavel", job, profile, model, overrides, gpu, prec, batch, counts,
                               sf / thr, None, held or not fitted, fitted))
    return out


# ---------------------------------------------------------------------------------------------
# Prediction (vectorised over rows) and the fit
# ---------------------------------------------------------------------------------------------

#: The fitted parameters, in the order of the fit vector; every one is fitted in log space.
FREE_PARAMETERS = ("dense_efficiency", "conv_efficiency", "memory_efficiency", "layer_overhead",
                   "iteration_overhead", "overlap", "gpu_factor.T4", "gpu_factor.T4/fp16",
                   "gpu_factor.K80", "gpu_factor.P100", "network.T4.inter_efficiency", "network.T4.alpha_inter",
                   "network.T4.intra_efficiency", "network.T4.alpha_intra")

_BOUNDS = {"dense_efficiency": (0.02, 1.0), "conv_efficiency": (0.02, 1.0),
           "memory_efficiency": (0.02, 1.0), "layer_overhead": (1e-7, 5e-3),
           "iteration_overhead": (1e-5, 0.5), "overlap": (1e-3, 1.0),
           "gpu_factor.T4": (0.1, 3.0), "gpu_factor.T4/fp16": (0.02, 3.0),
           "gpu_factor.K80": (0.1, 3.0),
           "gpu_factor.P100": (0.1, 3.0), "network.T4.inter_efficiency": (1e-3, 1.0),
           "network.T4.alpha_inter": (1e-7, 0.05), "network.T4.intra_efficiency": (1e-3, 1.0),
           "network.T4.alpha_intra": (1e-7, 0.05)}


def _params_from_vector(x, base: PerfParams | None = None) -> PerfParams:
    v = dict(zip(FREE_PARAMETERS, (float(a) for a in x)))
    base = base or PerfParams()
    factors = dict(base.gpu_factor)
    nets = dict(base.network)
    t4 = nets.get("T4", DEFAULT_NETWORK)
    for fam in ("T4", "T4/fp16", "K80", "P100"):
        factors[fam] = v[f"gpu_factor.{fam}"]
    nets["T4"] = NetworkParams(v["network.T4.intra_efficiency"], v["network.T4.inter_efficiency"],
                               v["network.T4.alpha_intra"], v["network.T4.alpha_inter"])
    del t4
    return PerfParams(v["dense_efficiency"], v["conv_efficiency"], v["memory_efficiency"],
                      v["layer_overhead"], v["iteration_overhead"], v["overlap"], factors, nets,
                      base.kernels)


def _vector_from_params(p: PerfParams) -> list[float]:
    net = p.network_for("T4")
    values = {"dense_efficiency": p.dense_efficiency, "conv_efficiency": p.conv_efficiency,
              "memory_efficiency": p.memory_efficiency, "layer_overhead": p.layer_overhead,
              "iteration_overhead": p.iteration_overhead, "overlap": p.overlap,
              "gpu_factor.T4": p.factor("T4"), "gpu_factor.T4/fp16": p.factor("T4", "fp16"),
              "gpu_factor.K80": p.factor("K80"),
              "gpu_factor.P100": p.factor("P100"),
              "network.T4.inter_efficiency": net.inter_efficiency,
              "network.T4.alpha_inter": net.alpha_inter,
              "network.T4.intra_efficiency": net.intra_efficiency,
              "network.T4.alpha_intra": net.alpha_intra}
    return [min(max(values[k], _BOUNDS[k][0]), _BOUNDS[k][1]) for k in FREE_PARAMETERS]


class _Design:
    """Row-independent precomputation for fast, vectorised predictions of data-parallel rows.

    Mirrors :func:`asrpt.dnn.perf._evaluate` for pp = tp = 1 (one micro-batch): compute
    F + B, the optimizer step, and the ring all-reduce of the gradients with ``segments`` = the
    number of servers used, exposed beyond ``overlap`` x B. ``tests/dnn/test_calibration.py``
    checks it against :func:`asrpt.dnn.perf.iteration_time` row by row.
    """

    def __init__(self, rows: Sequence[Measurement]):
        from .hardware import gpu_spec, link_bandwidths, precision_info
        from .tables import _table
        from .zoo import layer_graph

        self.rows = list(rows)
        keys: dict = {}
        self.ckey = np.empty(len(rows), dtype=int)
        for i, r in enumerate(rows):
            k = (r.model, r.overrides, r.gpu_type, r.precision, r.local_batch)
            self.ckey[i] = keys.setdefault(k, len(keys))
        self.comp = []
        tables = {}
        for (model, overrides, gpu, prec, b) in keys:
            tkey = (model, overrides)
            if tkey not in tables:
                tables[tkey] = _table(layer_graph(model, **dict(overrides)))
            t = tables[tkey]
            spec = gpu_spec(gpu)
            pr = precision_info(prec)
            self.comp.append(dict(
                fwd=t.fwd * b, bwd=t.bwd * b, conv=t.conv,
                mem=((t.inp + t.out) * b + t.params) * pr.activation_bytes,
                peak=spec.peak_flops(pr.name), hbm=spec.memory_bandwidth, family=spec.family,
                precision=pr.compute,
                params=float(t.params.sum()), state=pr.state_bytes_per_param,
                grad=float(t.params.sum()) * pr.gradient_bytes))
        self.d = np.array([r.gpus for r in rows], dtype=float)
        self.n = np.array([len(r.counts) for r in rows], dtype=float)
        self.family = [gpu_spec(r.gpu_type).family for r in rows]
        bw = [link_bandwidths(None, r.gpu_type) for r in rows]
        self.intra = np.array([b[0] for b in bw])
        self.inter = np.array([b[1] for b in bw])
        self.log_time = np.log(np.array([r.time for r in rows]))

    def predict(self, p: PerfParams) -> np.ndarray:
        FB = np.empty(len(self.comp))
        Bk = np.empty(len(self.comp))
        OPT = np.empty(len(self.comp))
        GRAD = np.empty(len(self.comp))
        for j, c in enumerate(self.comp):
            g = p.factor(c["family"], c["precision"])
            eff = np.where(c["conv"], p.conv_efficiency, p.dense_efficiency) * g
            hbm = c["hbm"] * p.memory_efficiency * g
            tf = np.maximum(c["fwd"] / (c["peak"] * eff), c["mem"] / hbm) + p.layer_overhead
            tb = np.maximum(c["bwd"] / (c["peak"] * eff), 2.0 * c["mem"] / hbm) + p.layer_overhead
            FB[j] = tf.sum() + tb.sum()
            Bk[j] = tb.sum()
            OPT[j] = 2.0 * c["params"] * c["state"] / hbm
            GRAD[j] = c["grad"]
        fb, bk, opt, grad = FB[self.ckey], Bk[self.ckey], OPT[self.ckey], GRAD[self.ckey]
        nets = [p.network_for(f) for f in self.family]
        e_in = np.array([n.intra_efficiency for n in nets])
        e_out = np.array([n.inter_efficiency for n in nets])
        a_in = np.array([n.alpha_intra for n in nets])
        a_out = np.array([n.alpha_inter for n in nets])
        d, n = self.d, self.n
        bw_in = self.intra * e_in
        bw = np.where(n > 1, np.minimum(bw_in, self.inter * e_out), bw_in)
        lat = 2 * (d - 1) * a_in + np.where(n > 1, 2 * (n - 1) * a_out, 0.0)
        dp = np.where(d > 1, lat + 2 * (d - 1) / np.maximum(d, 1) * grad / bw, 0.0)
        exposed = np.maximum(0.0, dp - p.overlap * bk)
        return fb + exposed + opt + p.iteration_overhead


def _errors(rows: Sequence[Measurement], pred: np.ndarray, held_out: bool | None) -> dict:
    """Per job (and GPU): rows, median and worst relative error |pred - time| / time."""
    out: dict = {}
    groups: dict = {}
    for i, r in enumerate(rows):
        if held_out is not None and r.held_out != held_out:
            continue
        groups.setdefault((r.job, r.gpu_type, r.profile if not r.fitted else "fitted"), []).append(i)
    for (job, gpu, prof), idx in sorted(groups.items()):
        rel = np.abs(pred[idx] - np.array([rows[i].time for i in idx])) / np.array(
            [rows[i].time for i in idx])
        label = f"{job} [{gpu}]" + ("" if prof == "fitted" else f" ({prof}, not fitted)")
        out[label] = {"rows": len(idx), "median": round(float(np.median(rel)), 4),
                      "worst": round(float(np.max(rel)), 4)}
    return out


@validate_params({"rows": "no_validation", "start": [InstanceOf(PerfParams), None],
                  "max_nfev": [Interval(Integral, 1, None, closed="left")]})
def fit(rows: Sequence[Measurement], start: PerfParams | None = None,
        max_nfev: int = 400) -> dict:
    """Fit :data:`FREE_PARAMETERS` to the training rows; report errors on the held-out rows.

    Least squares on log iteration time (``scipy.optimize.least_squares``, trust-region
    reflective, bounds :data:`_BOUNDS`, parameters in log space); each (job, GPU) group weighs
    the same whatever its number of rows.

    Parameters
    ----------
    rows : sequence of Measurement
        From :func:`load_pollux` and :func:`load_gavel`.
    start : PerfParams or None
        Starting point (default: the shipped values).
    max_nfev : int
        Function-evaluation budget.

    Returns
    -------
    dict
        ``params`` (:class:`PerfParams`), ``train`` and ``held_out`` error tables (per job and
        GPU: rows, median and worst relative error), ``cost``, ``nfev``.

    Raises
    ------
    InvalidParameterError
        If no row is eligible for the fit.

    Examples
    --------
    >>> root = default_traces_dir()
    >>> rows = [r for r in load_pollux(root) if r.job == "pollux/cifar10"] if root else []
    >>> root is None or fit(rows[::50], max_nfev=3)["params"].dense_efficiency > 0
    True
    """
    from scipy.optimize import least_squares

    design = _Design(rows)
    train = np.array([r.fitted and not r.held_out for r in rows])
    if not train.any():
        raise InvalidParameterError("fit: no training rows")
    groups: dict = {}
    for i, r in enumerate(rows):
        if train[i]:
            groups.setdefault((r.job, r.gpu_type), []).append(i)
    weight = np.zeros(len(rows))
    for idx in groups.values():
        weight[idx] = 1.0 / math.sqrt(len(idx))
    w = weight[train]
    base = start or perf_params()
    lo = np.log([_BOUNDS[k][0] for k in FREE_PARAMETERS])
    hi = np.log([_BOUNDS[k][1] for k in FREE_PARAMETERS])
    x0 = np.clip(np.log(_vector_from_params(base)), lo + 1e-9, hi - 1e-9)

    def residuals(z):
        pred = design.predict(_params_from_vector(np.exp(z), base))
        return w * (np.log(pred[train]) - design.log_time[train])

    res = least_squares(residuals, x0, bounds=(lo, hi), method="trf", x_scale=1.0,
                        max_nfev=max_nfev)
    params = _params_from_vector(np.exp(res.x), base)
    pred = design.predict(params)
    return {"params": params, "train": _errors(rows, pred, False),
            "held_out": _errors(rows, pred, True), "cost": float(res.cost),
            "nfev": int(res.nfev)}


@validate_params({"rows": "no_validation", "params": [InstanceOf(PerfParams), None]})
def evaluate(rows: Sequence[Measurement], params: PerfParams | None = None) -> dict:
    """Median and worst relative error per job and GPU, on held-out and on training rows.

    Parameters
    ----------
    rows : sequence of Measurement
    params : PerfParams or None
        Default: the shipped values.

    Returns
    -------
    dict
        ``{"held_out": {...}, "train": {...}}``, each ``label -> {rows, median, worst}``.

    Raises
    ------
    TraceError
        If a model of the rows cannot be built.

    Examples
    --------
    >>> root = default_traces_dir()
    >>> root is None or evaluate(load_pollux(root))["held_out"]["pollux/imagenet [T4]"]["median"] < 0.2
    True
    """
    design = _Design(rows)
    pred = design.predict(params or perf_params())
    return {"held_out": _errors(rows, pred, True), "train": _errors(rows, pred, False)}


@validate_params({"rows": "no_validation", "params": [InstanceOf(PerfParams), None]})
def predict(rows: Sequence[Measurement], params: PerfParams | None = None) -> np.ndarray:
    """Predicted seconds per iteration of each row (the vectorised data-parallel model).

    Parameters
    ----------
    rows : sequence of Measurement
    params : PerfParams or None

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    TraceError
        If a model of the rows cannot be built.

    Examples
    --------
    >>> row = Measurement("pollux", "pollux/imagenet", "placements", "resnet50", (), "T4",
    ...                   "fp32", 32, (2, 2), 0.3, None, False)
    >>> float(predict([row])[0]) > 0
    True
    """
    return _Design(rows).predict(params or perf_params())


def _main(argv=None) -> int:  # pragma: no cover - regenerates the shipped file
    """``python -m asrpt.dnn.calibration [--write]``: refit and print (or write) the values."""
    import argparse
    import datetime
    import sys

    ap = argparse.ArgumentParser(prog="python -m asrpt.dnn.calibration")
    ap.add_argument("--write", action="store_true", help=f"write {CALIBRATION_FILE}")
    ap.add_argument("--traces", default=None)
    ap.add_argument("--max-nfev", type=int, default=400)
    args = ap.parse_args(argv)
    rows = load_pollux(args.traces) + load_gavel(args.traces)
    out = fit(rows, start=PerfParams(), max_nfev=args.max_nfev)
    report = {
        "format": "asrpt-calibration/1",
        "params": out["params"].to_dict(),
        "fit": {
            "method": "scipy.optimize.least_squares (trf) on log iteration time, parameters in "
                      "log space, each (job, GPU) group weighted equally",
            "free_parameters": list(FREE_PARAMETERS),
            "bounds": {k: list(v) for k, v in _BOUNDS.items()},
            "split": "Pollux: sorted distinct placements (and (nodes, replicas) pairs) of each "
                     "job, every third held out; Gavel single-GPU: every second batch size "
                     "of each model held out; Gavel multi-GPU rows reported, never fitted",
            "rows": {"train": sum(r.fitted and not r.held_out for r in rows),
                     "held_out": sum(r.held_out for r in rows)},
            "jobs": {k: {"model": v[0], "overrides": dict(v[1]), "precision": v[2],
                         "note": v[3]}
                     for k, v in JOB_MAP.items()},
            "left_out": list(UNMAPPED),
            "cost": out["cost"], "nfev": out["nfev"],
            "date": datetime.date.today().isoformat(),
        },
        "errors": {"held_out": out["held_out"], "train": out["train"]},
    }
    text = json.dumps(report, indent=1, sort_keys=False) + "\n"
    if args.write:
        with open(CALIBRATION_FILE, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_main())
