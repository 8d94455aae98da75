"""Parallel configurations, pipeline stages, memory per GPU and the worker graph.

This module owns the step from a layer graph (:mod:`asrpt.dnn.layers`, built by
:mod:`asrpt.dnn.zoo`) and a parallel configuration (dp, pp, tp) to the job's *plan*: which layers
form each pipeline stage, what each GPU computes per micro-batch, how much memory it needs and
how many bytes it exchanges. From the plan it builds the **worker graph** of ``docs/design.md``,
which placement reads, and :mod:`asrpt.dnn.perf` prices a placement of it.

- :class:`Configuration`: dp x pp x tp GPUs, the global batch, the micro-batches (default
  rule: 1 without pipelining, else ``min(4 * pp, per-replica batch)``).
- :func:`partition_stages`: the exact min-max contiguous partition of a chain (proofs/classical.md,
  Result 14; O(k L log L): the classical O(k L^2) recurrence with a binary search for the crossing
  point).
- :func:`layer_times`: seconds per layer and micro-batch on one GPU (a per-layer roofline with a
  fitted efficiency, see :class:`asrpt.dnn.calibration.PerfParams`).
- :func:`stage_partition`: the pipeline stages of a layer graph: contiguous ranges of ``order``
  minimising the slowest stage among the partitions that fit in GPU memory; :class:`Infeasible`
  when none fits.
- :func:`job_plan` / :func:`plan_for`: the cached :class:`JobPlan` of a job.
- :func:`worker_graph`: the g-vertex worker graph, cached and frozen.
- :func:`uniform_layer_graph`: a synthetic chain of identical layers (examples, tests).

Memory per GPU of stage s (documented in ``docs/performance-model.md``): model state
``params_s * (state_bytes + weight_cache_bytes) / tp`` (16 bytes per parameter with Adam, plus
2 for the fp16 weight cache of ``amp`` or a graph's own ``weight_cache_bytes``, see
:class:`~asrpt.dnn.hardware.Precision`) plus stashed activations ``act_elems_s * micro-batch *
activation_bytes / tp`` (or a layer's ``stash_bytes`` per sample) for each of the
``min(pp - s, m)`` micro-batches in flight under 1F1B; it must fit in
:data:`MEMORY_USABLE_FRACTION` of the GPU's memory. Tensor parallelism divides every layer's
parameters, work and activations by tp (Megatron-LM with sequence parallelism).

Assumptions: layer graphs are not mutated after they are passed here (plans are cached by model
name, and by object identity for graphs passed directly); worker graphs are returned frozen.

Examples
--------
>>> G = uniform_layer_graph(8, fwd_flops=1e9, params=10**6, out_elems=1000)
>>> plan = plan_for(G, Configuration(dp=2, pp=2, tp=2, batch_size=16), gpu_type="A100")
>>> plan.partition.bounds, plan.config.micro_batches
((0, 4, 8), 8)
>>> W = worker_graph_for(plan)
>>> W.number_of_nodes(), sorted({k for *_, k in W.edges(data="kind")})
(8, ['dp', 'pp', 'tp'])
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Sequence

import networkx as nx
import numpy as np

from .._validation import InstanceOf, Integral, Interval, Real, validate_params
from ..errors import Infeasible, InvalidParameterError
from ..instance import Cluster, Parallelism
from .calibration import PerfParams, perf_params
from .roofline import conv_peak_flops, kernel_costs
# the layer tables (their own module; _build_table and _table_for_ref are read through this one
# by kernel_fit.py and perf.py's cache reset)
from .tables import (CONV_TYPES, TP_ALLREDUCES, _LayerTable, _build_table, _model_ref,  # noqa: F401
                     _table, _table_for_name, _table_for_ref, _zoo_layer_graph)
from .hardware import (DEFAULT_GPU_TYPE, GPUSpec, Precision, gpu_spec, precision_info,
                       resolve_gpu_type)

__all__ = [
    "Configuration",
    "JobPlan",
    "StagePartition",
    "MEMORY_USABLE_FRACTION",
    "TP_ALLREDUCES",
    "CONV_TYPES",
    "default_micro_batches",
    "partition_stages",
    "layer_times",
    "stage_partition",
    "plan_for",
    "job_plan",
    "job_configuration",
    "job_layer_graph",
    "worker_graph",
    "worker_graph_for",
    "uniform_layer_graph",
]

#: Fraction of a GPU's memory usable by the model (the rest: CUDA context, allocator
#: fragmentation, communication buffers, temporaries).
MEMORY_USABLE_FRACTION = 0.9

_POS_INT = [Interval(Integral, 1, None, closed="left")]


class _JobLike:
    """Constraint: a DNN job (an asrpt Job or a view with ``model`` and ``parallelism``)."""

    def is_satisfied_by(self, value: Any) -> bool:
        return getattr(value, "model", None) is not None and hasattr(value, "parallelism")

    def __str__(self) -> str:
        return "a DNN job (an asrpt.instance.Job or a job view with 'model' and 'parallelism')"


_JOB = [_JobLike()]


# ---------------------------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------------------------


@validate_params({"pp": _POS_INT, "replica_batch": _POS_INT})
def default_micro_batches(pp: int, replica_batch: int) -> int:
    """The default number of micro-batches per iteration: 1 when ``pp == 1``, else
    ``min(4 * pp, replica_batch)``.

    Four micro-batches per stage keep the 1F1B bubble ``(pp - 1) / (m + pp - 1)`` under 20%
    (Narayanan et al., SC'21, use m >= 4 pp as a rule of thumb); a micro-batch holds at least one
    sample.

    Parameters
    ----------
    pp : int
        Pipeline stages.
    replica_batch : int
        Samples per data-parallel replica and iteration.

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        For a non-positive argument.

    Examples
    --------
    >>> default_micro_batches(1, 64), default_micro_batches(4, 64), default_micro_batches(8, 6)
    (1, 16, 6)
    """
    return 1 if pp == 1 else min(4 * pp, replica_batch)


@dataclass(frozen=True)
class Configuration:
    """A parallel configuration: ``dp * pp * tp`` GPUs, a global batch, its micro-batches.

    Each of the ``dp`` replicas processes ``ceil(batch_size / dp)`` samples per iteration (the
    slowest replica sets the pace), split into ``micro_batches`` micro-batches (default:
    :func:`default_micro_batches`).

    Parameters
    ----------
    dp, pp, tp : int
        Data, pipeline and tensor parallel degrees.
    batch_size : int
        Global batch (samples per iteration), at least ``dp``.
    micro_batches : int or None
        Micro-batches per replica and iteration, at most the per-replica batch.

    Raises
    ------
    InvalidParameterError
        For non-positive degrees, ``batch_size < dp`` or too many micro-batches.

    Examples
    --------
    >>> c = Configuration(dp=4, pp=2, tp=1, batch_size=30)
    >>> c.gpus, c.replica_batch, c.micro_batches, c.micro_batch_size
    (8, 8, 8, 1.0)
    """

    dp: int
    pp: int
    tp: int
    batch_size: int
    micro_batches: int | None = None

    def __post_init__(self):
        for name in ("dp", "pp", "tp", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InvalidParameterError(
                    f"The '{name}' parameter of Configuration must be an int in [1, inf). "
                    f"Got {v!r} instead.")
            object.__setattr__(self, name, int(v))
        if self.batch_size < self.dp:
            raise InvalidParameterError(
                f"batch size {self.batch_size} is smaller than dp = {self.dp}: every data-parallel "
                "replica needs at least one sample")
        m = self.micro_batches
        if m is None:
            m = default_micro_batches(self.pp, self.replica_batch)
        elif isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m <= self.replica_batch:
            raise InvalidParameterError(
                f"The 'micro_batches' parameter of Configuration must be an int in "
                f"[1, {self.replica_batch}] (the per-replica batch). Got {m!r} instead.")
        object.__setattr__(self, "micro_batches", int(m))

    @property
    def gpus(self) -> int:
        """g = dp * pp * tp."""
        return self.dp * self.pp * self.tp

    @property
    def replica_batch(self) -> int:
        """Samples per replica and iteration, ``ceil(batch_size / dp)``."""
        return -(-self.batch_size // self.dp)

    @property
    def micro_batch_size(self) -> float:
        """Samples per micro-batch (average; a float when the split is uneven)."""
        return self.replica_batch / self.micro_batches

    @property
    def micro_batch_samples(self) -> int:
        """Samples in the largest micro-batch, ``ceil(replica_batch / micro_batches)``."""
        return -(-self.replica_batch // self.micro_batches)

    @property
    def parallelism(self) -> Parallelism:
        return Parallelism(self.dp, self.pp, self.tp)

    def describe(self) -> str:
        """``"dp=2 pp=4 tp=8, batch 512, 16 micro-batches"``."""
        return (f"dp={self.dp} pp={self.pp} tp={self.tp}, batch {self.batch_size}, "
                f"{self.micro_batches} micro-batch{'es' if self.micro_batches != 1 else ''}")


# ---------------------------------------------------------------------------------------------
# Min-max contiguous partition (proofs/classical.md, Result 14)
# ---------------------------------------------------------------------------------------------


def _minmax_partition(prefix: Sequence[Sequence], k: int, limit: Sequence[Sequence] | None = None,
                      cap: Any = None) -> tuple[tuple[int, ...], Any]:
    """Exact min over contiguous partitions of positions 0..L-1 into k non-empty parts of the max
    part cost, the cost of part number s (0-based) covering [i, j) being
    ``prefix[s][j] - prefix[s][i]`` (non-decreasing prefixes). With ``limit``/``cap``, part s may
    cover [i, j) only if ``limit[s][j] - limit[s][i] <= cap``.

    B(j, s) = min_i max(B(i, s-1), cost_s(i, j)); B(., s-1) is non-decreasing in i (a feasible
    partition of the first i+1 positions, minus the last one, is one of the first i) and
    cost_s(i, j) non-increasing, so the minimum sits at their crossing: a binary search.
    Returns ((0, b1, ..., L), bottleneck); bottleneck is inf when nothing is feasible.
    """
    L = len(prefix[0]) - 1
    inf = math.inf
    INF = inf

    def lowest_start(s: int, j: int, lo: int) -> int:
        # smallest i >= lo with limit[s][j] - limit[s][i] <= cap (limit non-decreasing)
        if limit is None:
            return lo
        target = limit[s][j] - cap
        i = bisect_left(limit[s], target, lo, j)
        return i

    P0 = prefix[0]
    best = [INF] * (L + 1)
    for j in range(1, L - k + 2):
        if limit is None or limit[0][j] - limit[0][0] <= cap:
            best[j] = P0[j] - P0[0]
    choice: list[list[int]] = [[0] * (L + 1)]
    for s in range(1, k):
        P = prefix[s]
        new = [INF] * (L + 1)
        arg = [0] * (L + 1)
        for j in range(s + 1, L - (k - 1 - s) + 1):
            lo = lowest_start(s, j, s)
            hi = j - 1
            if lo > hi:
                continue
            Pj = P[j]
            # first i in [lo, hi] with best[i] >= Pj - P[i]  (g(i) = best[i] - (Pj - P[i]) rises)
            a, b = lo, hi + 1
            while a < b:
                mid = (a + b) // 2
                if best[mid] >= Pj - P[mid]:
                    b = mid
                else:
                    a = mid + 1
            cand = []
            if a <= hi:
                cand.append((max(best[a], Pj - P[a]), a))
            if a - 1 >= lo:
                cand.append((max(best[a - 1], Pj - P[a - 1]), a - 1))
            if not cand:
                continue
            val, i = min(cand, key=lambda vi: (vi[0], -vi[1]))
            new[j] = val
            arg[j] = i
        best = new
        choice.append(arg)
    if best[L] == INF:
        return tuple(range(k + 1)), inf
    bounds = [L]
    j = L
    for s in range(k - 1, 0, -1):
        j = choice[s][j]
        bounds.append(j)
    bounds.append(0)
    return tuple(reversed(bounds)), best[L]


@validate_params({"times": "no_validation", "k": _POS_INT})
def partition_stages(times: Sequence, k: int) -> tuple[tuple[int, ...], Any]:
    """Exact min-max partition of a chain into ``k`` contiguous non-empty stages.

    B(j, s) = min over s-1 <= i < j of max(B(i, s-1), T(i+1..j)), B(j, 1) = T(1..j), evaluated
    in O(k L log L) by binary search for the crossing of the two monotone terms. Exact for ints
    and Fractions (prefix sums are exact); floats are summed in order.

    Parameters
    ----------
    times : sequence of non-negative numbers
        Per-layer costs t_1..t_L, in chain order.
    k : int
        Number of stages, ``1 <= k <= L``.

    Returns
    -------
    bounds : tuple of int
        ``(0, b_1, ..., b_{k-1}, L)``: stage s covers positions ``bounds[s]..bounds[s+1]-1``.
    bottleneck : number
        The largest stage sum, minimal over all contiguous partitions.

    Raises
    ------
    InvalidParameterError
        If ``k`` exceeds the number of layers, or a time is negative or not a number.

    Examples
    --------
    >>> partition_stages([4, 1, 1, 1, 1, 4], 3)
    ((0, 1, 5, 6), 4)
    >>> partition_stages([1, 2, 3], 1)
    ((0, 3), 6)
    """
    ts = list(times)
    L = len(ts)
    if k > L:
        raise InvalidParameterError(
            f"cannot cut {L} layer{'s' if L != 1 else ''} into {k} non-empty stages")
    prefix = [0]
    for i, t in enumerate(ts):
        if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) and not hasattr(t, "denominator"):
            raise InvalidParameterError(f"times[{i}] must be a number, got {t!r}")
        if not t >= 0 or (isinstance(t, (float, np.floating)) and not math.isfinite(t)):
            raise InvalidParameterError(f"times[{i}] must be a finite non-negative number, got {t!r}")
        prefix.append(prefix[-1] + t)
    return _minmax_partition([prefix] * k, k)


# ---------------------------------------------------------------------------------------------
# Layer tables and per-layer times
# ---------------------------------------------------------------------------------------------


def _zoo_model_names() -> tuple[str, ...]:
    from .zoo import model_names

    return tuple(model_names())


def _layer_costs(table: _LayerTable, samples: float, tp: int, spec: GPUSpec, prec: Precision,
                 params: PerfParams) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward seconds per layer for ``samples`` samples on one GPU of ``tp``
    (GPU time; :func:`_host_costs` gives the host time of GPUs with a kernel model)."""
    kp = params.kernel_model(spec.name)
    if kp is not None:
        t_f, t_b, _, _ = kernel_costs(table.types, table.klass, table.fwd, table.bwd, table.inp,
                                      table.out, table.act, table.params, table.score, samples,
                                      tp, spec.peak_flops(prec.name), spec.memory_bandwidth,
                                      prec.activation_bytes, kp, misaligned=table.misaligned,
                                      channels=table.channels, ew=table.ew,
                                      conv_peak=conv_peak_flops(spec, prec.name),
                                      core_fwd=table.core_fwd, core_bwd=table.core_bwd)
        return t_f, t_b
    g = params.factor(spec.family, prec.compute)
    peak = spec.peak_flops(prec.name)
    eff = np.where(table.conv, params.conv_efficiency, params.dense_efficiency) * g
    hbm = spec.memory_bandwidth * params.memory_efficiency * g
    b = prec.activation_bytes
    scale = samples / tp
    mem_f = ((table.inp + table.out) * scale + table.params / tp) * b
    t_f = np.maximum(table.fwd * scale / (peak * eff), mem_f / hbm) + params.layer_overhead
    t_b = np.maximum(table.bwd * scale / (peak * eff), 2.0 * mem_f / hbm) + params.layer_overhead
    return t_f, t_b


def _host_costs(table: _LayerTable, spec: GPUSpec, params: PerfParams) -> tuple:
    """Host seconds per layer, forward and backward (zeros without a kernel model)."""
    from .roofline import HOST_OPS

    kp = params.kernel_model(spec.name)
    if kp is None:
        z = np.zeros(table.n_layers)
        return z, z
    ops = np.array([float(HOST_OPS.get(t, 1)) for t in table.types])
    return ops * kp.host_fwd, ops * kp.host_bwd


def _stage_pass(t: np.ndarray, h: np.ndarray, lo: int, hi: int) -> float:
    """A stage's pass: the larger of its GPU time and its host time (the host runs ahead)."""
    return max(float(t[lo:hi].sum()), float(h[lo:hi].sum()))


@validate_params({"model": [str, InstanceOf(nx.DiGraph)],
                  "samples": [Interval(Real, 0, None, closed="neither"),
                              Interval(Integral, 1, None, closed="left")],
                  "gpu_type": [str], "precision": [str, None], "tp": _POS_INT,
                  "params": [InstanceOf(PerfParams), None]})
def layer_times(model, samples, gpu_type: str, precision: str | None = None, tp: int = 1,
                params: PerfParams | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Seconds per layer for the forward and the backward pass of ``samples`` samples on one GPU.

    On GPUs with a kernel model (:mod:`asrpt.dnn.roofline`: the H200 and H100) the GPU time of
    its per-operator-class roofline (host time not included). Otherwise a roofline per layer:
    ``max(W / (peak * e), M / (bw * e_mem)) + overhead``, with W the FLOPs
    and M the bytes moved (inputs, output and weights; twice for backward) of this GPU's 1/tp
    share, ``e`` the fitted efficiency of the layer's class (convolution or dense), ``e_mem`` that
    of memory-bound work, both times the GPU family's fitted factor, and a fitted per-layer
    overhead. Equivalently the efficiency grows with the work: ``e(W) = e W / (W + peak e o)``.

    Parameters
    ----------
    model : str or networkx.DiGraph
        A zoo name or a layer graph.
    samples : float
        Samples per pass (a micro-batch).
    gpu_type : str
        GPU name.
    precision : str or None
        Training precision (default: the GPU's).
    tp : int
        Tensor-parallel degree.
    params : PerfParams or None
        Model parameters (default: the shipped calibration).

    Returns
    -------
    fwd, bwd : numpy.ndarray
        Seconds per layer, in ``order``.

    Raises
    ------
    InvalidParameterError
        Unknown model, GPU or precision, or a precision the GPU lacks.

    Examples
    --------
    >>> G = uniform_layer_graph(3, fwd_flops=1e12, params=0, out_elems=1)
    >>> f, b = layer_times(G, 1, "V100", "fp32")
    >>> bool(b[0] > f[0] > 1e12 / 15.7e12)
    True
    """
    spec = gpu_spec(gpu_type)
    prec = precision_info(precision or spec.default_precision)
    return _layer_costs(_table(model), float(samples), tp, spec, prec, params or perf_params())


# ---------------------------------------------------------------------------------------------
# Stages and plans
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StagePartition:
    """Pipeline stages of a layer graph and what each GPU of a stage holds.

    Attributes
    ----------
    bounds : tuple of int
        ``(0, b_1, ..., L)``: stage s holds the layers of order ``bounds[s]..bounds[s+1]-1``.
    stage_time : tuple of float
        Seconds per micro-batch of each stage (forward + backward + tensor-parallel all-reduces
        inside a server), the quantity whose maximum the partition minimises.
    state_memory : tuple of float
        Bytes of model state (weights, gradients, optimizer) per GPU of each stage.
    activation_memory : tuple of float
        Bytes of stashed activations per GPU of each stage (all micro-batches in flight).
    capacity : float
        Usable bytes per GPU.
    """

    bounds: tuple
    stage_time: tuple
    state_memory: tuple
    activation_memory: tuple
    capacity: float

    @property
    def memory(self) -> tuple:
        """Bytes per GPU of each stage (state + activations)."""
        return tuple(a + b for a, b in zip(self.state_memory, self.activation_memory))

    @property
    def bottleneck(self) -> float:
        return max(self.stage_time)


def _inflight(pp: int, m: int) -> list[int]:
    return [min(pp - s, m) for s in range(pp)]


def _tp_comm_per_layer(table: _LayerTable, samples: float, tp: int, prec: Precision,
                       intra_bw: float, alpha: float) -> np.ndarray:
    """Seconds per micro-batch (forward + backward) of each layer's tensor-parallel all-reduces
    inside one server."""
    if tp == 1:
        return np.zeros(table.n_layers)
    size = table.tp_allreduces * table.out * samples * prec.activation_bytes
    per = table.tp_allreduces * 2 * (tp - 1) * alpha + 2 * (tp - 1) / tp * size / intra_bw
    return 2.0 * per


def _weight_cache(table: _LayerTable, prec: Precision) -> float:
    """Bytes per parameter of cached low-precision weight copies: the graph's own
    ``weight_cache_bytes`` (a measured model that ran under autocast), else the precision's."""
    if table.weight_cache_bytes is not None:
        return table.weight_cache_bytes
    return float(prec.weight_cache_bytes)


def _stash_bytes(table: _LayerTable, prec: Precision) -> np.ndarray:
    """Bytes per sample each layer keeps for its backward pass: a layer's ``stash_bytes`` where
    the graph gives one (tensors of mixed dtypes, counted from what the framework saves), else
    ``act_elems`` x the precision's activation bytes."""
    base = table.act * prec.activation_bytes
    if table.stash is None:
        return base
    return np.where(np.isnan(table.stash), base, table.stash)


def _partition(table: _LayerTable, config: Configuration, spec: GPUSpec, prec: Precision,
               params: PerfParams, intra_bw: float, label: str) -> StagePartition:
    pp, tp, m = config.pp, config.tp, config.micro_batches
    L = table.n_layers
    if pp > L:
        raise InvalidParameterError(
            f"{label}: pp = {pp} exceeds the {L} layers of {table.name}")
    t_f, t_b = _layer_costs(table, config.micro_batch_size, tp, spec, prec, params)
    net = params.network_for(spec.family)
    cost = t_f + t_b + _tp_comm_per_layer(table, config.micro_batch_size, tp, prec,
                                          intra_bw * net.intra_efficiency, net.alpha_intra)
    state = table.params * (prec.state_bytes_per_param + _weight_cache(table, prec)) / tp
    act = _stash_bytes(table, prec) * config.micro_batch_samples / tp
    inflight = _inflight(pp, m)
    capacity = spec.memory_bytes * MEMORY_USABLE_FRACTION
    P = np.concatenate([[0.0], np.cumsum(cost)]).tolist()
    PS = np.concatenate([[0.0], np.cumsum(state)])
    PA = np.concatenate([[0.0], np.cumsum(act)])
    limits = [(PS + f * PA).tolist() for f in inflight]
    bounds, bott = _minmax_partition([P] * pp, pp)
    mem = _stage_sums(limits, bounds)
    if max(mem) > capacity:
        bounds2, bott2 = _minmax_partition([P] * pp, pp, limits, capacity)
        if bott2 == math.inf:
            worst = int(np.argmax(mem))
            raise Infeasible(
                f"{label} does not fit in GPU memory: the compute-balanced stages need "
                f"{_gb(max(mem))} per GPU (stage {worst}) and no partition into {pp} stage"
                f"{'s' if pp > 1 else ''} fits; each {spec.name} has {_gb(capacity)} usable of "
                f"{_gb(spec.memory_bytes)}")
        bounds = bounds2
    stage_time = tuple(float(P[bounds[s + 1]] - P[bounds[s]]) for s in range(pp))
    st = _stage_sums([PS.tolist()] * pp, bounds)
    ac = [float(PA[bounds[s + 1]] - PA[bounds[s]]) * inflight[s] for s in range(pp)]
    return StagePartition(tuple(bounds), stage_time, tuple(st), tuple(ac), capacity)


def _stage_sums(prefixes, bounds) -> list[float]:
    return [float(prefixes[s][bounds[s + 1]] - prefixes[s][bounds[s]]) for s in range(len(bounds) - 1)]


def _gb(x: float) -> str:
    return f"{x / 1e9:.1f} GB"


@validate_params({"model": [str, InstanceOf(nx.DiGraph)], "config": [InstanceOf(Configuration)],
                  "gpu_type": [str], "precision": [str, None],
                  "params": [InstanceOf(PerfParams), None]})
def stage_partition(model, config: Configuration, gpu_type: str, precision: str | None = None,
                    params: PerfParams | None = None) -> StagePartition:
    """The pipeline stages of ``model`` under ``config`` on ``gpu_type``.

    The layers, in ``order``, are cut into ``config.pp`` contiguous stages minimising the slowest
    stage's time per micro-batch (:func:`partition_stages`, exact); if that partition does not fit
    in memory, the exact min-max partition among those that fit (the same recurrence, restricted
    to stages within memory) is used.

    Parameters
    ----------
    model : str or networkx.DiGraph
        A zoo name or a layer graph.
    config : Configuration
        The parallel configuration.
    gpu_type : str
        GPU name.
    precision : str or None
        Training precision (default: the GPU's).
    params : PerfParams or None
        Model parameters (default: the shipped calibration).

    Returns
    -------
    StagePartition

    Raises
    ------
    Infeasible
        When no partition fits in GPU memory (naming the memory needed and available).
    InvalidParameterError
        When pp exceeds the number of layers, or for an unknown GPU or precision.

    Examples
    --------
    >>> G = uniform_layer_graph(6, fwd_flops=1e9, params=10**9, out_elems=10)
    >>> stage_partition(G, Configuration(1, 3, 1, 8), "H100").bounds
    (0, 2, 4, 6)
    >>> stage_partition(G, Configuration(1, 1, 1, 8), "H100")
    Traceback (most recent call last):
    ...
    asrpt.errors.Infeasible: model uniform (dp=1 pp=1 tp=1, batch 8, 1 micro-batch, bf16) does not fit in GPU memory: ...
    """
    spec = gpu_spec(gpu_type)
    prec = precision_info(precision or spec.default_precision)
    _check_precision(spec, prec)
    table = _table(model)
    from .hardware import link_bandwidths

    intra, _ = link_bandwidths(None, spec.name)
    label = f"model {table.name} ({config.describe()}, {prec.name})"
    return _partition(table, config, spec, prec, params or perf_params(), intra, label)


def _check_precision(spec: GPUSpec, prec: Precision) -> None:
    if prec.compute not in spec.peak_tflops:
        have = ", ".join(sorted(spec.peak_tflops))
        raise InvalidParameterError(
            f"precision {prec.name} is not supported by {spec.name} (it supports {have})")


@dataclass(frozen=True, eq=False)
class JobPlan:
    """Everything per stage the performance model needs for one job on one GPU type.

    Times are seconds per micro-batch on one GPU of the stage; bytes are per GPU.

    Attributes
    ----------
    job_id : str or None
    model : str
        The model's name.
    config : Configuration
    gpu_type : str
        The GPU type the stages were balanced for.
    precision : str
    partition : StagePartition
    fwd_time, bwd_time : tuple of float
        Compute per micro-batch and stage (no communication).
    tp_allreduces : tuple of float
        Tensor-parallel all-reduces per micro-batch and stage (forward; backward has as many).
    tp_bytes : tuple of float
        Bytes all-reduced by those, summed, per micro-batch and stage (forward).
    boundary_bytes : tuple of float
        Activation bytes per GPU sent from stage s to s+1 per micro-batch (forward; the
        gradient coming back has the same size), for s = 0..pp-2.
    grad_bytes : tuple of float
        Gradient bytes per GPU of each stage (what the data-parallel all-reduce reduces).
    stage_params : tuple of float
        Parameters per GPU of each stage.
    flops_per_iteration : float
        FLOPs of one iteration of the whole job (all GPUs, forward and backward).
    params_total : int
        Parameters of the model.
    """

    job_id: str | None
    model: str
    config: Configuration
    gpu_type: str
    precision: str
    partition: StagePartition
    fwd_time: tuple
    bwd_time: tuple
    tp_allreduces: tuple
    tp_bytes: tuple
    boundary_bytes: tuple
    grad_bytes: tuple
    stage_params: tuple
    flops_per_iteration: float
    params_total: int
    _table: _LayerTable = field(repr=False)
    _params: PerfParams = field(repr=False)
    _explicit_precision: bool = field(default=True, repr=False)

    @property
    def memory(self) -> tuple:
        """Bytes per GPU of each stage."""
        return self.partition.memory

    def compute_on(self, gpu_type: str) -> tuple[tuple, tuple]:
        """Forward and backward seconds per micro-batch and stage on another GPU type (same
        stages; same precision, or that GPU's default one when the job did not choose and the
        GPU lacks the plan's).

        Raises
        ------
        InvalidParameterError
            When the job chose a precision the GPU does not run.
        """
        if gpu_spec(gpu_type).name == self.gpu_type:
            return self.fwd_time, self.bwd_time
        return _compute_on(self, gpu_spec(gpu_type).name)


@lru_cache(maxsize=4096)
def _compute_on(plan: JobPlan, gpu_type: str) -> tuple[tuple, tuple]:
    spec = gpu_spec(gpu_type)
    prec = precision_info(plan.precision)
    if not plan._explicit_precision and prec.compute not in spec.peak_tflops:
        prec = precision_info(spec.default_precision)
    _check_precision(spec, prec)
    c = plan.config
    t_f, t_b = _layer_costs(plan._table, c.micro_batch_size, c.tp, spec, prec, plan._params)
    h_f, h_b = _host_costs(plan._table, spec, plan._params)
    b = plan.partition.bounds
    return (tuple(_stage_pass(t_f, h_f, b[s], b[s + 1]) for s in range(c.pp)),
            tuple(_stage_pass(t_b, h_b, b[s], b[s + 1]) for s in range(c.pp)))


def _make_plan(model, config: Configuration, gpu_type: str, precision: str | None,
               params: PerfParams, job_id: str | None) -> JobPlan:
    spec = gpu_spec(gpu_type)
    prec = precision_info(precision or spec.default_precision)
    _check_precision(spec, prec)
    table = _table(model)
    from .hardware import link_bandwidths

    intra, _ = link_bandwidths(None, spec.name)
    who = f"job {job_id!r}: " if job_id is not None else ""
    label = f"{who}model {table.name} ({config.describe()}, {prec.name})"
    part = _partition(table, config, spec, prec, params, intra, label)
    b = part.bounds
    pp, tp = config.pp, config.tp
    mb = config.micro_batch_size
    t_f, t_b = _layer_costs(table, mb, tp, spec, prec, params)
    h_f, h_b = _host_costs(table, spec, params)
    seg = lambda arr, s: float(arr[b[s]:b[s + 1]].sum())  # noqa: E731
    tp_bytes_l = table.tp_allreduces * table.out * mb * prec.activation_bytes
    stage_params = tuple(seg(table.params, s) / tp for s in range(pp))
    flops = float((table.fwd + table.bwd).sum()) * config.replica_batch * config.dp
    return JobPlan(
        job_id=job_id, model=table.name, config=config, gpu_type=spec.name, precision=prec.name,
        partition=part,
        fwd_time=tuple(_stage_pass(t_f, h_f, b[s], b[s + 1]) for s in range(pp)),
        bwd_time=tuple(_stage_pass(t_b, h_b, b[s], b[s + 1]) for s in range(pp)),
        tp_allreduces=tuple(seg(table.tp_allreduces, s) if tp > 1 else 0.0 for s in range(pp)),
        tp_bytes=tuple(seg(tp_bytes_l, s) if tp > 1 else 0.0 for s in range(pp)),
        boundary_bytes=tuple(float(table.cut[b[s + 1] - 1]) * mb * prec.activation_bytes / tp
                             for s in range(pp - 1)),
        grad_bytes=tuple(p * prec.gradient_bytes for p in stage_params),
        stage_params=stage_params,
        flops_per_iteration=flops,
        params_total=int(table.params.sum()),
        _table=table, _params=params, _explicit_precision=precision is not None)


@lru_cache(maxsize=8192)
def _plan_cached(model: str, config: Configuration, gpu_type: str, precision: str | None,
                 params: PerfParams, job_id: str | None, adapt: bool = False) -> JobPlan:
    if not adapt:
        return _make_plan(model, config, gpu_type, precision, params, job_id)
    # Jobs: when the default micro-batches do not fit, accumulate gradients over more, smaller
    # micro-batches (doubling, down to one sample each) before giving up.
    first = None
    cfg = config
    while True:
        try:
            return _make_plan(model, cfg, gpu_type, precision, params, job_id)
        except Infeasible as exc:
            first = first or exc
            if cfg.micro_batches >= cfg.replica_batch:
                if cfg is config:
                    raise
                raise Infeasible(f"{exc} (even with {cfg.micro_batches} micro-batches of one "
                                 "sample)") from None
            cfg = replace(cfg, micro_batches=min(2 * cfg.micro_batches, cfg.replica_batch))


@validate_params({"model": [str, InstanceOf(nx.DiGraph)], "config": [InstanceOf(Configuration)],
                  "gpu_type": [str], "precision": [str, None],
                  "params": [InstanceOf(PerfParams), None], "job_id": [str, None]})
def plan_for(model, config: Configuration, gpu_type: str = DEFAULT_GPU_TYPE,
             precision: str | None = None, params: PerfParams | None = None,
             job_id: str | None = None) -> JobPlan:
    """The :class:`JobPlan` of ``model`` under ``config`` on ``gpu_type`` (cached for zoo names).

    Parameters
    ----------
    model : str or networkx.DiGraph
        A zoo name or a layer graph.
    config : Configuration
    gpu_type : str
        GPU name (the stages are balanced for it).
    precision : str or None
        Default: the GPU's default precision.
    params : PerfParams or None
        Default: the shipped calibration.
    job_id : str or None
        Named in error messages.

    Returns
    -------
    JobPlan

    Raises
    ------
    Infeasible
        When the configuration does not fit in GPU memory.
    InvalidParameterError
        Unknown model, GPU or precision; pp larger than the number of layers.

    Examples
    --------
    >>> G = uniform_layer_graph(4, fwd_flops=1e9, params=1000, out_elems=10)
    >>> p = plan_for(G, Configuration(dp=2, pp=2, tp=1, batch_size=8), "V100")
    >>> p.precision, p.stage_params, p.flops_per_iteration
    ('fp16', (2000.0, 2000.0), 96000000000.0)
    """
    params = params or perf_params()
    gpu = gpu_spec(gpu_type).name
    if isinstance(model, str):
        return _plan_cached(model, config, gpu, precision, params, job_id)
    return _make_plan(model, config, gpu, precision, params, job_id)


# ---------------------------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------------------------


@validate_params({"job": _JOB})
def job_layer_graph(job) -> nx.DiGraph:
    """The zoo layer graph of a DNN job (InvalidParameterError for an abstract job).

    Parameters
    ----------
    job : asrpt.instance.Job or a view with ``model``
        A DNN job.

    Returns
    -------
    networkx.DiGraph

    Raises
    ------
    InvalidParameterError
        For an abstract job or an unknown model.
    """
    model = getattr(job, "model", None)
    if model is None:
        raise InvalidParameterError(f"job {getattr(job, 'id', '?')!r} is abstract (no model)")
    if getattr(job, "seq_len", None) is not None:
        from .zoo import layer_graph

        return layer_graph(model, seq_len=int(job.seq_len))
    return _zoo_layer_graph(model)


@validate_params({"job": _JOB})
def job_configuration(job) -> Configuration:
    """The :class:`Configuration` of a DNN job: its parallelism and global batch (the model's
    ``default_batch_size`` when the job gives none).

    Parameters
    ----------
    job : asrpt.instance.Job or a view with ``model``, ``parallelism``, ``batch_size``
        A DNN job.

    Returns
    -------
    Configuration

    Raises
    ------
    InvalidParameterError
        For an abstract job, an unknown model or a batch smaller than dp.

    Examples
    --------
    >>> from asrpt.instance import Job, Parallelism
    >>> job_configuration(Job("a", 0, 4, model="resnet50", parallelism=Parallelism(4, 1, 1),
    ...                       iterations=10, batch_size=128)).replica_batch
    32
    """
    return _job_configuration(job)


def _job_configuration(job) -> Configuration:
    model = getattr(job, "model", None)
    if model is None:
        raise InvalidParameterError(f"job {getattr(job, 'id', '?')!r} is abstract (no model)")
    par = getattr(job, "parallelism", None) or Parallelism(int(job.gpus), 1, 1)
    batch = getattr(job, "batch_size", None)
    if batch is None:
        batch = _table_for_name(model).default_batch_size
    try:
        return Configuration(par.dp, par.pp, par.tp, int(batch))
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"job {getattr(job, 'id', '?')!r}: {exc}") from None


@validate_params({"job": _JOB, "gpu_type": [str, None], "cluster": [InstanceOf(Cluster), None],
                  "params": [InstanceOf(PerfParams), None]})
def job_plan(job, gpu_type: str | None = None, cluster=None,
             params: PerfParams | None = None) -> JobPlan:
    """The :class:`JobPlan` of a DNN job on ``gpu_type`` (default: the cluster's GPU type, else
    :data:`~asrpt.dnn.hardware.DEFAULT_GPU_TYPE`). Cached per (model, configuration, batch,
    precision, GPU type).

    The micro-batches follow :func:`default_micro_batches`; when the stages do not fit in
    memory they are doubled (gradient accumulation over smaller micro-batches) until they fit or
    hold one sample each.

    Parameters
    ----------
    job : asrpt.instance.Job or a view with ``model``, ``parallelism``, ``batch_size``, ``precision``
        A DNN job.
    gpu_type : str or None
    cluster : asrpt.instance.Cluster or None
    params : PerfParams or None

    Returns
    -------
    JobPlan

    Raises
    ------
    Infeasible
        When the configuration does not fit in GPU memory (naming the job).
    InvalidParameterError
        Abstract job, unknown model/GPU/precision, pp larger than the layer count.

    Examples
    --------
    >>> from asrpt.instance import Job, Parallelism
    >>> job = Job("a", 0, 8, model="resnet50", parallelism=Parallelism(8, 1, 1), iterations=10)
    >>> job_plan(job, "A100").config.describe()
    'dp=8 pp=1 tp=1, batch 256, 1 micro-batch'
    """
    if gpu_type is None:
        gpu_type = resolve_gpu_type(cluster) if cluster is not None else DEFAULT_GPU_TYPE
    config = _job_configuration(job)
    params = params or perf_params()
    return _plan_cached(_model_ref(job), config, gpu_spec(gpu_type).name, _job_precision(job),
                        params, None, True)


def _job_precision(job) -> str | None:
    p = getattr(job, "precision", None)
    return None if p is None else precision_info(p).name


# ---------------------------------------------------------------------------------------------
# The worker graph
# ---------------------------------------------------------------------------------------------


def _ring_edges(members: list, volume: float):
    """Ring all-reduce edges among ``members`` (in order): each carries 2(n-1)/n x volume in one
    direction; two members share one edge carrying both directions."""
    n = len(members)
    if n < 2:
        return []
    per = 2 * (n - 1) / n * volume
    if n == 2:
        return [(members[0], members[1], 2 * per)]
    return [(members[i], members[(i + 1) % n], per) for i in range(n)]


@lru_cache(maxsize=1024)
def _worker_graph_cached(plan: JobPlan, job_id: str | None) -> nx.Graph:
    c = plan.config
    d, p, t, m = c.dp, c.pp, c.tp, c.micro_batches
    W = nx.Graph()
    W.graph.update(job=job_id, model=plan.model, parallelism=(d, p, t), micro_batches=m,
                   batch_size=c.batch_size, precision=plan.precision, gpu_type=plan.gpu_type,
                   stage_bounds=plan.partition.bounds)
    mem = plan.memory
    for s in range(p):
        ct = m * (plan.fwd_time[s] + plan.bwd_time[s])
        attrs = {"stage": s, "compute_time": ct, "memory": mem[s], "group": ("stage", s)}
        W.add_nodes_from((((r, s, k), {"replica": r, "rank": k, **attrs})
                          for r in range(d) for k in range(t)))
    edges = []
    for s in range(p):
        if t > 1:
            vol = 2 * m * plan.tp_bytes[s]       # forward and backward all-reduces
            for r in range(d):
                for u, v, b in _ring_edges([(r, s, k) for k in range(t)], vol):
                    edges.append((u, v, {"bytes": b, "kind": "tp"}))
        if s < p - 1:
            b = 2 * m * plan.boundary_bytes[s]   # activations forward, gradients backward
            for r in range(d):
                for k in range(t):
                    edges.append(((r, s, k), (r, s + 1, k), {"bytes": b, "kind": "pp"}))
        if d > 1:
            for k in range(t):
                for u, v, b in _ring_edges([(r, s, k) for r in range(d)], plan.grad_bytes[s]):
                    edges.append((u, v, {"bytes": b, "kind": "dp"}))
    W.add_edges_from(edges)
    return nx.freeze(W)


@validate_params({"plan": [InstanceOf(JobPlan)], "job_id": [str, None]})
def worker_graph_for(plan: JobPlan, job_id: str | None = None) -> nx.Graph:
    """The worker graph of a :class:`JobPlan` (cached, frozen; see ``docs/design.md``).

    Nodes ``(r, s, k)`` (replica, stage, tensor rank) carry ``replica``, ``stage``, ``rank``,
    ``compute_time`` (seconds of compute per iteration: ``m`` micro-batches forward and
    backward), ``memory`` (bytes) and ``group`` (``("stage", s)``: workers of a stage are
    interchangeable). Edges carry ``bytes`` per iteration (both directions) and ``kind``:

    - ``tp``: a ring over the tensor ranks of each (r, s); each edge carries
      ``2 (t-1)/t`` times the bytes all-reduced per iteration (forward and backward);
    - ``pp``: ``(r, s, k) - (r, s+1, k)`` carries the boundary activations forward and their
      gradients backward for every micro-batch;
    - ``dp``: a ring over the replicas of each (s, k) carrying ``2 (d-1)/d`` times the stage's
      gradient bytes per GPU.

    A two-member ring is one edge carrying both directions. Cutting a ring into n contiguous arcs
    cuts n edges, whose bytes are what crosses the cut.

    Parameters
    ----------
    plan : JobPlan
    job_id : str or None
        Stored as the graph attribute ``job``.

    Returns
    -------
    networkx.Graph
        Frozen (``networkx.freeze``): copy it to modify it.

    Raises
    ------
    InvalidParameterError
        For a bad argument.

    Examples
    --------
    >>> G = uniform_layer_graph(4, fwd_flops=1e9, params=1000, out_elems=10)
    >>> W = worker_graph_for(plan_for(G, Configuration(3, 2, 1, 12), "A100"), "j1")
    >>> W.graph["job"], W.number_of_edges(), W.nodes[(0, 1, 0)]["group"]
    ('j1', 9, ('stage', 1))
    """
    return _worker_graph_cached(plan, job_id)


@validate_params({"job": _JOB, "gpu_type": [str, None], "cluster": [InstanceOf(Cluster), None]})
def worker_graph(job, gpu_type: str | None = None, cluster=None) -> nx.Graph:
    """The worker graph of a DNN job (cached per job id, model, configuration, batch, precision
    and GPU type; frozen).

    Parameters
    ----------
    job : asrpt.instance.Job or a view with ``id``, ``model``, ``parallelism``, ``batch_size``
        A DNN job.
    gpu_type : str or None
        Default: the cluster's GPU type, else :data:`~asrpt.dnn.hardware.DEFAULT_GPU_TYPE`.
    cluster : asrpt.instance.Cluster or None

    Returns
    -------
    networkx.Graph
        See :func:`worker_graph_for`.

    Raises
    ------
    Infeasible
        When the configuration does not fit in GPU memory (naming the job, the configuration,
        the memory needed and the GPU's).
    InvalidParameterError
        Abstract job, unknown model/GPU/precision, pp larger than the layer count.

    Examples
    --------
    >>> from asrpt.instance import Job, Parallelism
    >>> job = Job("j", 0, 8, model="resnet50", parallelism=Parallelism(4, 1, 2), iterations=10)
    >>> W = worker_graph(job, "A100")
    >>> W.number_of_nodes(), W.graph["parallelism"], W.graph["precision"]
    (8, (4, 1, 2), 'bf16')
    """
    try:
        plan = job_plan(job, gpu_type, cluster)
    except Infeasible as exc:
        raise Infeasible(f"job {getattr(job, 'id', '?')!r}: {exc}") from None
    return _worker_graph_cached(plan, getattr(job, "id", None))


# ---------------------------------------------------------------------------------------------
# Synthetic graphs
# ---------------------------------------------------------------------------------------------


@validate_params({"n_layers": _POS_INT,
                  "fwd_flops": [Interval(Real, 0, None, closed="left"),
                                Interval(Integral, 0, None, closed="left")],
                  "params": [Interval(Integral, 0, None, closed="left")],
                  "out_elems": [Interval(Integral, 0, None, closed="left")],
                  "layer_type": [str], "name": [str],
                  "default_batch_size": _POS_INT})
def uniform_layer_graph(n_layers: int, fwd_flops: float = 1e9, params: int = 10**6,
                        out_elems: int = 10**4, layer_type: str = "block", name: str = "uniform",
                        default_batch_size: int = 32) -> nx.DiGraph:
    """A chain of ``n_layers`` identical layers following the layer-graph schema.

    Parameters
    ----------
    n_layers : int
    fwd_flops : float
        Forward FLOPs per sample and layer (backward is twice that).
    params : int
        Parameters per layer.
    out_elems : int
        Output (and stashed) activation elements per sample and layer.
    layer_type : str
        Node ``type``.
    name : str
        Graph ``name``.
    default_batch_size : int

    Returns
    -------
    networkx.DiGraph

    Raises
    ------
    InvalidParameterError
        For a negative size.

    Examples
    --------
    >>> G = uniform_layer_graph(3, params=5)
    >>> [G.nodes[n]["order"] for n in G], G.graph["name"], G.edges["l0", "l1"]["elems"]
    ([0, 1, 2], 'uniform', 10000)
    """
    G = nx.DiGraph(name=name, family="synthetic", reference="", head="", tied_embeddings=False,
                   default_batch_size=default_batch_size, input={})
    for i in range(n_layers):
        G.add_node(f"l{i}", type=layer_type, order=i, fwd_flops=float(fwd_flops),
                   bwd_flops=2.0 * fwd_flops, params=int(params), out_elems=int(out_elems),
                   act_elems=int(out_elems))
        if i:
            G.add_edge(f"l{i - 1}", f"l{i}", elems=int(out_elems))
    return G
