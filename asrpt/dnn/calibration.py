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
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Any, Mapping

from .._validation import InstanceOf, validate_params
from ..errors import InvalidParameterError, TraceError

__all__ = [
    "NetworkParams",
    "PerfParams",
    "DEFAULT_NETWORK",
    "perf_params",
    "calibration_data",
    "CALIBRATION_FILE",
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
        Per GPU family, a multiplier on every achieved fraction above (families absent: 1).
    network : tuple of (str, NetworkParams)
        Per GPU family, the network parameters (families absent: :data:`DEFAULT_NETWORK`).
    """

    dense_efficiency: float = 0.5
    conv_efficiency: float = 0.5
    memory_efficiency: float = 0.7
    layer_overhead: float = 2e-5
    iteration_overhead: float = 0.0
    overlap: float = 0.5
    gpu_factor: tuple = ()
    network: tuple = ()

    def __post_init__(self):
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

    def factor(self, family: str) -> float:
        """The efficiency multiplier of a GPU family (1.0 when not fitted)."""
        return dict(self.gpu_factor).get(family, 1.0)

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
                "network": {k: asdict(v) for k, v in self.network}}

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
    return PerfParams.from_dict(calibration_data()["params"])
