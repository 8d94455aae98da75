"""Iteration time: tau(job, placement), the best iteration time tau*, and their fast paths.

This module owns the performance model's formula (``docs/performance-model.md``): given a DNN
job's plan (:mod:`asrpt.dnn.parallel`: stages, per-stage compute, bytes per collective) and a
placement of its workers on servers, it prices

- compute: each stage's forward and backward time per micro-batch on its GPUs;
- tensor-parallel all-reduces (per layer, on the critical path), pipeline sends/receives between
  consecutive stages, and the data-parallel ring all-reduce of each stage's gradients, each
  collective with an alpha-beta cost at the bandwidth of its slowest link (intra-server if all its
  members share a server, else inter-server);
- the 1F1B pipeline: ``(m - 1) * max_s u_s + sum_s u_s`` for per-micro-batch stage cycles u_s
  (``(m + pp - 1) u`` for balanced stages: the bubble);
- the data-parallel all-reduce overlapping the last backward pass (fraction ``overlap``) and the
  pipeline drain; the optimizer step and a per-iteration overhead.

Every collective's cost depends on the placement only through which worker-graph edges it cuts,
and never decreases when more of them are cut, so tau is non-decreasing in the set of cut edges.
tau* (:func:`best_iteration_time`) is the best of a documented family of consolidated packings
(fewest servers, tensor groups kept whole where they fit, :func:`consolidated_assignment`), and
every placement is reported at ``max(model time, tau*)``: by construction tau >= tau* (so the
placement stretch is >= 1 and the lower bounds built on tau* stay valid) and tau == tau* for the
consolidated packing.

Assignments map each worker ``(r, s, k)`` to a server index of the cluster; an object with an
``assignment`` attribute (a placement) is accepted too. Jobs are :class:`asrpt.instance.Job` or
any object with ``id``, ``gpus``, ``model``, ``parallelism``, ``batch_size`` and ``precision``
(the simulator's job views).

Examples
--------
>>> from asrpt.instance import Cluster, Job, Parallelism
>>> cluster = Cluster.homogeneous(4, 8, "A100", inter_bandwidth=12.5e9)
>>> job = Job("j", 0, 16, model="resnet50", parallelism=Parallelism(16, 1, 1), iterations=100)
>>> t_star = best_iteration_time(job, cluster)
>>> spread = {(r, 0, 0): r % 4 for r in range(16)}
>>> iteration_time(job, consolidated_assignment(job, cluster), cluster) == t_star
True
>>> iteration_time(job, spread, cluster) >= t_star
True
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Mapping, Sequence

import networkx as nx
import numpy as np

from .._validation import InstanceOf, validate_params
from ..errors import Infeasible, InvalidParameterError
from ..instance import Cluster
from .calibration import PerfParams, perf_params
from .hardware import gpu_spec, precision_info, resolve_gpu_type
from .parallel import (_JOB, JobPlan, _job_configuration, _job_precision, _model_ref,
                       _plan_cached)

__all__ = [
    "IterationBreakdown",
    "iteration_time",
    "iteration_breakdown",
    "best_iteration_time",
    "best_gpu_type",
    "consolidated_assignment",
    "iteration_time_for_counts",
    "CountTimes",
    "packing_assignment",
    "cut_bytes",
    "clear_caches",
]


class _AssignmentLike:
    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(getattr(value, "assignment", value), Mapping)

    def __str__(self) -> str:
        return "a mapping (r, s, k) -> server index, or an object with such an 'assignment'"


_CLUSTER = [InstanceOf(Cluster)]


# ---------------------------------------------------------------------------------------------
# Cluster summaries
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _ClusterInfo:
    server_gpus: tuple
    server_types: tuple          # canonical GPU name per server
    types: tuple                 # distinct, in first-appearance order
    intra: Mapping[str, float]   # nominal, per type (cluster override applied)
    inter: Mapping[str, float]
    max_server_gpus: int


_CLUSTER_INFO: dict[int, tuple[Any, _ClusterInfo]] = {}


def _cluster_info(cluster: Cluster) -> _ClusterInfo:
    import weakref

    hit = _CLUSTER_INFO.get(id(cluster))
    if hit is not None and hit[0]() is cluster:
        return hit[1]
    from .hardware import link_bandwidths

    types = tuple(resolve_gpu_type(cluster, h) for h in range(cluster.n_servers))
    distinct = tuple(dict.fromkeys(types))
    intra, inter = {}, {}
    for t in distinct:
        intra[t], inter[t] = link_bandwidths(cluster, t)
    info = _ClusterInfo(cluster.server_gpus, types, distinct, intra, inter, cluster.max_server_gpus)
    if len(_CLUSTER_INFO) > 256:
        _CLUSTER_INFO.clear()
    _CLUSTER_INFO[id(cluster)] = (weakref.ref(cluster), info)
    return info


# ---------------------------------------------------------------------------------------------
# The formula
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IterationBreakdown:
    """The terms of one iteration time (seconds).

    Attributes
    ----------
    tau : float
        The iteration time: ``max(model_time, tau_star)``.
    model_time : float
        ``pipeline + dp_exposed + optimizer + overhead``.
    tau_star : float
        The job's best iteration time on the cluster.
    pipeline : float
        The 1F1B pipeline: ``(m - 1) * max_s u_s + sum_s u_s``.
    compute : float
        The same with every communication term set to zero (compute and bubble only).
    stage_cycle : tuple of float
        u_s, seconds per micro-batch of each stage: compute + tensor-parallel all-reduces + the
        send/receive to the next stage.
    tp_time, pp_time, dp_time : tuple of float
        Per stage: tensor-parallel seconds per micro-batch, pipeline link seconds per
        micro-batch (to the next stage), data-parallel all-reduce seconds per iteration.
    dp_exposed : float
        The part of the data-parallel all-reduces not hidden by the backward pass and the drain.
    optimizer : float
        The optimizer step.
    overhead : float
        Fixed per-iteration overhead.
    servers : int
        Servers the placement uses.
    """

    tau: float
    model_time: float
    tau_star: float
    pipeline: float
    compute: float
    stage_cycle: tuple
    tp_time: tuple
    pp_time: tuple
    dp_time: tuple
    dp_exposed: float
    optimizer: float
    overhead: float
    servers: int

    def to_dict(self) -> dict:
        return asdict(self)


def _segments(A: np.ndarray, axis: int) -> np.ndarray:
    """Arcs a ring along ``axis`` is cut into: the number of cut ring edges, at least 1."""
    if A.shape[axis] == 1:
        return np.ones(np.delete(A.shape, axis), dtype=int)
    cut = (A != np.roll(A, -1, axis=axis)).sum(axis=axis)
    return np.maximum(cut, 1)


def _allreduce(size_bytes: float, n_members: int, segments: int, count: float, bw_in: float,
               bw_cross: float, a_in: float, a_cross: float) -> float:
    """Ring all-reduce of ``size_bytes`` (summed over ``count`` collectives) among n members cut
    into ``segments`` arcs: 2(n-1) steps at a_in plus 2(segments-1) at a_cross per collective,
    2(n-1)/n x size bytes at the slowest link."""
    if n_members <= 1 or count == 0:
        return 0.0
    lat = 2 * (n_members - 1) * a_in
    bw = bw_in
    if segments > 1:
        lat += 2 * (segments - 1) * a_cross
        bw = min(bw_in, bw_cross)
    return count * lat + 2 * (n_members - 1) / n_members * size_bytes / bw


def _evaluate(plan: JobPlan, A: np.ndarray, info: _ClusterInfo, params: PerfParams,
              tau_star: float) -> IterationBreakdown:
    c = plan.config
    d, p, t, m = c.dp, c.pp, c.tp, c.micro_batches
    used = set(A.ravel().tolist())   # (not np.unique: its first call imports numpy.ma, 0.1 s)
    types = {info.server_types[h] for h in used}
    # compute per stage: the slowest GPU type among the stage's workers
    if len(types) == 1:
        (gt,) = types
        F, B = plan.compute_on(gt)
    else:
        tmap = np.array([info.server_types[h] for h in range(len(info.server_types))], dtype=object)
        F, B = [0.0] * p, [0.0] * p
        for s in range(p):
            for gt in set(tmap[A[:, s, :]].ravel().tolist()):
                f, b = plan.compute_on(gt)
                F[s], B[s] = max(F[s], f[s]), max(B[s], b[s])
    ref = gpu_spec(plan.gpu_type)
    net = params.network_for(ref.family)
    bw_in = min(info.intra[x] for x in types) * net.intra_efficiency
    bw_out = min(info.inter[x] for x in types) * net.inter_efficiency
    conc = min(t, info.max_server_gpus)           # tensor ranks sharing a server's NICs
    a_in, a_out = net.alpha_intra, net.alpha_inter

    seg_tp = _segments(A, 2).max(axis=0) if t > 1 else np.ones(p, dtype=int)   # per stage
    seg_dp = _segments(A, 0).max(axis=1) if d > 1 else np.ones(p, dtype=int)   # per stage
    tp_time = tuple(2.0 * _allreduce(plan.tp_bytes[s], t, int(seg_tp[s]), plan.tp_allreduces[s],
                                     bw_in, bw_out, a_in, a_out) for s in range(p))
    pp_time = []
    for s in range(p - 1):
        cross = bool((A[:, s, :] != A[:, s + 1, :]).any())
        bw = min(bw_in, bw_out / conc) if cross else bw_in
        alpha = a_out if cross else a_in
        pp_time.append(2.0 * (alpha + plan.boundary_bytes[s] / bw))
    pp_time.append(0.0)
    dp_time = tuple(_allreduce(plan.grad_bytes[s], d, int(seg_dp[s]), 1.0, bw_in, bw_out / conc,
                               a_in, a_out) for s in range(p))
    cycle = [F[s] + B[s] + tp_time[s] + pp_time[s] for s in range(p)]
    pipeline = (m - 1) * max(cycle) + sum(cycle)
    bare = [F[s] + B[s] for s in range(p)]
    compute = (m - 1) * max(bare) + sum(bare)
    exposed, drain = 0.0, 0.0
    for s in range(p):
        exposed = max(exposed, max(0.0, dp_time[s] - params.overlap * B[s]) - drain)
        drain += B[s] + 0.5 * (tp_time[s] + pp_time[s])
    prec = precision_info(plan.precision)
    slow_hbm = min(gpu_spec(x).memory_bandwidth * params.factor(gpu_spec(x).family, prec.compute)
                   for x in types)
    kps = [params.kernel_model(x) for x in types]
    if all(k is not None for k in kps):
        # kernel model: fused AdamW as one pass over parameters and states (asrpt.dnn.roofline)
        from .roofline import optimizer_time

        optimizer = max(optimizer_time(max(plan.stage_params), prec.activation_bytes < 4,
                                       gpu_spec(x).memory_bandwidth, k)
                        for x, k in zip(types, kps))
        overhead = max(k.iteration_overhead for k in kps)
    else:
        optimizer = 2.0 * max(plan.stage_params) * prec.state_bytes_per_param / (
            slow_hbm * params.memory_efficiency)
        overhead = params.iteration_overhead
    model_time = pipeline + exposed + optimizer + overhead
    return IterationBreakdown(
        tau=max(model_time, tau_star), model_time=model_time, tau_star=tau_star,
        pipeline=pipeline, compute=compute, stage_cycle=tuple(cycle), tp_time=tp_time,
        pp_time=tuple(pp_time), dp_time=dp_time, dp_exposed=exposed, optimizer=optimizer,
        overhead=overhead, servers=int(len(used)))


# ---------------------------------------------------------------------------------------------
# Canonical packings
# ---------------------------------------------------------------------------------------------

_ORDERS = {"rsk": (0, 1, 2), "srk": (1, 0, 2), "skr": (1, 2, 0)}


@lru_cache(maxsize=512)
def _sequence(shape: tuple, order: str) -> np.ndarray:
    """Flat worker indices (into a C-ordered (d, p, t) array) in the given axis order; a
    trailing ``"~"`` reverses the stage axis (fill from the last stage)."""
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    if order.endswith("~"):
        idx = idx[:, ::-1, :]
    return idx.transpose(_ORDERS[order.rstrip("~")]).ravel()


def _units(shape: tuple) -> list[tuple[str, int]]:
    d, p, t = shape
    cands = [("rsk", 1), ("rsk", t), ("rsk", t * p), ("srk", 1), ("srk", t), ("srk", t * d),
             ("skr", 1), ("skr", d), ("skr", d * t)]
    if p > 1:
        cands += [(o + "~", u) for o, u in cands]
    return list(dict.fromkeys(cands))


def _pack(shape: tuple, order: str, unit: int, servers: Sequence[int],
          caps: Sequence[int]) -> np.ndarray | None:
    """Assign workers, taken in ``order`` in groups of ``unit``, to ``servers`` (capacities
    ``caps``): each group goes whole to the first server with room for it; groups that fit
    nowhere are then split over the remaining slots in server order. None if slots run out."""
    g = int(np.prod(shape))
    if sum(caps) < g:
        return None
    seq = _sequence(shape, order)
    flat = np.empty(g, dtype=np.int64)
    left = list(caps)
    pending = []
    for start in range(0, g, unit):
        for i, room in enumerate(left):
            if room >= unit:
                flat[seq[start:start + unit]] = servers[i]
                left[i] -= unit
                break
        else:
            pending.append(start)
    if pending:
        rest = np.concatenate([seq[s:s + unit] for s in pending])
        pos = 0
        for i, room in enumerate(left):
            if pos >= len(rest):
                break
            take = min(room, len(rest) - pos)
            flat[rest[pos:pos + take]] = servers[i]
            left[i] -= take
            pos += take
    return flat.reshape(shape)


@lru_cache(maxsize=512)
def _distinct_units(shape: tuple) -> tuple[tuple[str, int], ...]:
    """:func:`_units` without the candidates that walk the same worker sequence in the same
    groups as an earlier one (they pack identically): with unit axes many orders coincide (a
    data-parallel ``(d, 1, 1)`` job has 3 distinct candidates of 9)."""
    seen, out = set(), []
    for order, unit in _units(shape):
        key = (_sequence(shape, order).tobytes(), unit)
        if key not in seen:
            seen.add(key)
            out.append((order, unit))
    return tuple(out)


def _packings(shape: tuple, servers: Sequence[int], caps: Sequence[int]):
    """The distinct canonical packings on ``servers`` (capacities ``caps``), in the order of
    :func:`_units`, each once (an assignment equal to an earlier one is skipped: it would price
    the same)."""
    seen = set()
    for order, unit in _distinct_units(shape):
        A = _pack(shape, order, unit, servers, caps)
        if A is None:
            continue
        key = A.tobytes()
        if key in seen:
            continue
        seen.add(key)
        yield A


def _best_packing(plan: JobPlan, info: _ClusterInfo, params: PerfParams, servers: Sequence[int],
                  caps: Sequence[int]) -> tuple[float, np.ndarray | None]:
    c = plan.config
    shape = (c.dp, c.pp, c.tp)
    best, best_A = math.inf, None
    for A in _packings(shape, servers, caps):   # a repeated packing never beats its first (strict <)
        tau = _evaluate(plan, A, info, params, 0.0).model_time
        if tau < best:
            best, best_A = tau, A
    return best, best_A


def _plan_on(job, gpu_type: str, params: PerfParams) -> JobPlan:
    return _plan_cached(_model_ref(job), _job_configuration(job), gpu_type, _job_precision(job),
                        params, None, True)


def _job_key(job) -> tuple:
    par = job.parallelism
    return (job.model, par.dp, par.pp, par.tp, getattr(job, "batch_size", None),
            _job_precision(job), getattr(job, "seq_len", None))


@lru_cache(maxsize=8192)
def _tau_star_cached(key: tuple, info: _ClusterInfo, params: PerfParams, job) -> tuple:
    """(tau*, gpu type, assignment) of a job on an empty cluster."""
    g = key[1] * key[2] * key[3]
    best = (math.inf, None, None)
    errors = []
    for gt in info.types:
        ids = [h for h in range(len(info.server_gpus)) if info.server_types[h] == gt]
        if sum(info.server_gpus[h] for h in ids) < g:
            continue
        try:
            plan = _plan_on(job, gt, params)
        except Infeasible as exc:
            errors.append((gpu_spec(gt).memory_bytes, str(exc)))
            continue
        ids.sort(key=lambda h: (-info.server_gpus[h], h))
        caps_all = [info.server_gpus[h] for h in ids]
        m0 = next(i + 1 for i in range(len(ids)) if sum(caps_all[:i + 1]) >= g)
        for extra in range(0, 3):
            mm = m0 + extra
            if mm > len(ids):
                break
            tau, A = _best_packing(plan, info, params, ids[:mm], caps_all[:mm])
            if tau < best[0]:
                best = (tau, gt, A)
    if best[1] is None:
        jid = getattr(job, "id", "?")
        if errors:  # the GPU type with the most memory tells the most
            raise Infeasible(f"job {jid!r}: {max(errors)[1]}")
        raise Infeasible(f"job {jid!r} needs {g} GPUs of one type; no GPU type in the cluster "
                         f"has that many ({', '.join(info.types)})")
    return best


def _tau_star(job, cluster: Cluster, params: PerfParams) -> tuple:
    info = _cluster_info(cluster)
    return _tau_star_cached(_job_key(job), info, params, _KeyedJob(job))


class _KeyedJob:
    """A job wrapper hashed by its performance-relevant fields, so caches are shared by jobs
    that differ only in id, arrival or iterations."""

    __slots__ = ("job", "key")

    def __init__(self, job):
        self.job = job
        self.key = _job_key(job)

    def __getattr__(self, name):
        return getattr(self.job, name)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _KeyedJob) and self.key == other.key


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def _as_array(plan: JobPlan, assignment, info: _ClusterInfo, job) -> np.ndarray:
    mapping = getattr(assignment, "assignment", assignment)
    c = plan.config
    shape = (c.dp, c.pp, c.tp)
    A = np.empty(shape, dtype=np.int64)
    H = len(info.server_gpus)
    try:
        for r in range(c.dp):
            for s in range(c.pp):
                for k in range(c.tp):
                    A[r, s, k] = mapping[(r, s, k)]
    except KeyError as exc:
        raise InvalidParameterError(
            f"job {getattr(job, 'id', '?')!r}: the assignment has no server for worker "
            f"{exc.args[0]} (it must map all {c.gpus} workers (r, s, k))") from None
    except (TypeError, ValueError, OverflowError):
        raise InvalidParameterError(
            f"job {getattr(job, 'id', '?')!r}: server indices must be ints") from None
    if len(mapping) != c.gpus:
        raise InvalidParameterError(
            f"job {getattr(job, 'id', '?')!r}: the assignment maps {len(mapping)} workers, "
            f"the job has {c.gpus}")
    if A.min() < 0 or A.max() >= H:
        raise InvalidParameterError(
            f"job {getattr(job, 'id', '?')!r}: server index {int(A.max() if A.max() >= H else A.min())} "
            f"is not one of the cluster's {H} servers")
    counts = np.bincount(A.ravel(), minlength=H)
    over = np.nonzero(counts > np.array(info.server_gpus))[0]
    if len(over):
        h = int(over[0])
        raise InvalidParameterError(
            f"job {getattr(job, 'id', '?')!r}: the assignment puts {int(counts[h])} workers on "
            f"server {h}, which has {info.server_gpus[h]} GPUs")
    return A


@validate_params({"job": _JOB, "assignment": [_AssignmentLike()], "cluster": _CLUSTER,
                  "params": [InstanceOf(PerfParams), None]})
def iteration_breakdown(job, assignment, cluster: Cluster,
                        params: PerfParams | None = None) -> IterationBreakdown:
    """The iteration time of a placement with each of its terms.

    Parameters
    ----------
    job : asrpt.instance.Job or a job view
        A DNN job.
    assignment : mapping or placement
        ``(r, s, k) -> server index`` for every worker, or an object with ``.assignment``.
    cluster : asrpt.instance.Cluster
    params : PerfParams or None
        Default: the shipped calibration.

    Returns
    -------
    IterationBreakdown

    Raises
    ------
    InvalidParameterError
        An assignment missing a worker, naming an unknown server or over-filling one.
    Infeasible
        When the job fits on no GPU type of the cluster.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Parallelism
    >>> job = Job("j", 0, 2, model="resnet50", parallelism=Parallelism(2, 1, 1), iterations=1)
    >>> b = iteration_breakdown(job, {(0, 0, 0): 0, (1, 0, 0): 1}, Cluster.homogeneous(2, 8, "V100"))
    >>> b.servers, b.tau > b.compute, b.dp_time[0] > 0
    (2, True, True)
    """
    params = params or perf_params()
    tau_star, gt, _ = _tau_star(job, cluster, params)
    plan = _plan_on(job, gt, params)
    info = _cluster_info(cluster)
    A = _as_array(plan, assignment, info, job)
    return _evaluate(plan, A, info, params, tau_star)


@validate_params({"job": _JOB, "assignment": [_AssignmentLike()], "cluster": _CLUSTER,
                  "params": [InstanceOf(PerfParams), None]})
def iteration_time(job, assignment, cluster: Cluster, params: PerfParams | None = None) -> float:
    """tau(job, placement): seconds per iteration of a job whose workers sit on given servers.

    Parameters
    ----------
    job : asrpt.instance.Job or a job view
        A DNN job.
    assignment : mapping or placement
        ``(r, s, k) -> server index`` for every worker, or an object with ``.assignment``.
    cluster : asrpt.instance.Cluster
    params : PerfParams or None
        Default: the shipped calibration.

    Returns
    -------
    float
        ``max(model time, tau*)``: never below :func:`best_iteration_time`, equal to it for
        :func:`consolidated_assignment`, non-decreasing in the set of cut worker-graph edges.

    Raises
    ------
    InvalidParameterError
        An assignment missing a worker, naming an unknown server or over-filling one.
    Infeasible
        When the job fits on no GPU type of the cluster.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Parallelism
    >>> job = Job("j", 0, 2, model="bert-large", parallelism=Parallelism(2, 1, 1),
    ...           iterations=1, batch_size=16)
    >>> c = Cluster.homogeneous(2, 8, "V100", inter_bandwidth=1.25e9)  # 10 Gb/s Ethernet
    >>> near = iteration_time(job, {(0, 0, 0): 0, (1, 0, 0): 0}, c)
    >>> far = iteration_time(job, {(0, 0, 0): 0, (1, 0, 0): 1}, c)
    >>> near == best_iteration_time(job, c) < far
    True
    """
    return iteration_breakdown(job, assignment, cluster, params).tau


@validate_params({"job": _JOB, "cluster": _CLUSTER, "params": [InstanceOf(PerfParams), None]})
def best_iteration_time(job, cluster: Cluster, params: PerfParams | None = None) -> float:
    """tau*: the job's iteration time consolidated on the cluster (empty), at its best.

    The best, over the GPU types of the cluster with enough GPUs (and memory), of the canonical
    packings of :func:`consolidated_assignment`: the workers in replica-, stage- or rank-major
    order, in whole tensor groups, replicas, stages or data-parallel rings where they fit, on the
    fewest servers (largest first) or one or two more.

    Parameters
    ----------
    job : asrpt.instance.Job or a job view
        A DNN job.
    cluster : asrpt.instance.Cluster
    params : PerfParams or None

    Returns
    -------
    float
        Seconds per iteration.

    Raises
    ------
    Infeasible
        When no GPU type of the cluster has enough GPUs, or the configuration does not fit in
        their memory.
    InvalidParameterError
        Unknown model, precision, or pp larger than the number of layers.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Parallelism
    >>> job = Job("j", 0, 8, model="resnet50", parallelism=Parallelism(8, 1, 1), iterations=1)
    >>> a100 = best_iteration_time(job, Cluster.homogeneous(2, 8, "A100"))
    >>> v100 = best_iteration_time(job, Cluster.homogeneous(2, 8, "V100"))
    >>> a100 < v100
    True
    """
    return float(_tau_star(job, cluster, params or perf_params())[0])


def _best_iteration_times(jobs, cluster: Cluster) -> list:
    """tau* of each DNN job of ``jobs`` on ``cluster`` (None for abstract ones), as
    :func:`best_iteration_time` gives it with the shipped parameters: for jobs an
    :class:`~asrpt.instance.Instance` already checked, so without checking each argument again,
    and each distinct configuration (:func:`_job_key`) computed once."""
    params = perf_params()
    taus: dict = {}
    out = []
    for job in jobs:
        if job.is_abstract:
            out.append(None)
            continue
        key = _job_key(job)
        tau = taus.get(key)
        if tau is None:
            tau = taus[key] = float(_tau_star(job, cluster, params)[0])
        out.append(tau)
    return out


@validate_params({"job": _JOB, "cluster": _CLUSTER, "params": [InstanceOf(PerfParams), None]})
def best_gpu_type(job, cluster: Cluster, params: PerfParams | None = None) -> str:
    """The GPU type on which tau* is attained (the job's reference type in the cluster).

    Parameters
    ----------
    job : asrpt.instance.Job or a job view
    cluster : asrpt.instance.Cluster
    params : PerfParams or None

    Returns
    -------
    str

    Raises
    ------
    Infeasible
        As :func:`best_iteration_time`.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Server
    >>> c = Cluster((Server(8, "V100"), Server(8, "H100")))
    >>> best_gpu_type(Job("j", 0, 4, model="resnet50", iterations=1), c)
    'H100'
    """
    return _tau_star(job, cluster, params or perf_params())[1]


@validate_params({"job": _JOB, "cluster": _CLUSTER, "params": [InstanceOf(PerfParams), None]})
def consolidated_assignment(job, cluster: Cluster,
                            params: PerfParams | None = None) -> dict:
    """The canonical consolidated placement attaining tau*: ``(r, s, k) -> server index``.

    Parameters
    ----------
    job : asrpt.instance.Job or a job view
    cluster : asrpt.instance.Cluster
    params : PerfParams or None

    Returns
    -------
    dict

    Raises
    ------
    Infeasible
        As :func:`best_iteration_time`.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Parallelism
    >>> job = Job("j", 0, 4, model="resnet50", parallelism=Parallelism(2, 1, 2), iterations=1)
    >>> sorted(set(consolidated_assignment(job, Cluster.homogeneous(3, 8)).values()))
    [0]
    """
    _, _, A = _tau_star(job, cluster, params or perf_params())
    d, p, t = A.shape
    return {(r, s, k): int(A[r, s, k]) for r in range(d) for s in range(p) for k in range(t)}


@lru_cache(maxsize=65536)
def _counts_cached(kjob: _KeyedJob, servers: tuple, info: _ClusterInfo, params: PerfParams,
                   tau_star: float, gt: str) -> tuple[float, Any]:
    plan = _plan_on(kjob, gt, params)
    c = plan.config
    if sum(n for _, n in servers) != c.gpus:
        raise InvalidParameterError(
            f"job {getattr(kjob, 'id', '?')!r}: the servers hold {sum(n for _, n in servers)} "
            f"GPUs, the job has {c.gpus} workers")
    order = sorted(servers, key=lambda hn: (-hn[1], hn[0]))
    tau, A = _best_packing(plan, info, params, [h for h, _ in order], [n for _, n in order])
    return max(tau, tau_star), A


def _normalise_servers(servers, info: _ClusterInfo, job) -> tuple:
    if isinstance(servers, Mapping):
        items = servers.items()
    else:
        items = servers
    out = []
    for item in items:
        try:
            h, n = item
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"job {getattr(job, 'id', '?')!r}: servers must be (server, gpus) pairs, got "
                f"{item!r}") from None
        if not (isinstance(h, (int, np.integer)) and 0 <= h < len(info.server_gpus)):
            raise InvalidParameterError(f"job {getattr(job, 'id', '?')!r}: no server {h!r}")
        if not (isinstance(n, (int, np.integer)) and 0 <= n <= info.server_gpus[h]):
            raise InvalidParameterError(
                f"job {getattr(job, 'id', '?')!r}: server {h} has {info.server_gpus[h]} GPUs, "
                f"asked for {n!r}")
        if n:
            out.append((int(h), int(n)))
    return tuple(sorted(out))


@validate_params({"job": _JOB, "servers": "no_validation", "cluster": _CLUSTER,
                  "params": [InstanceOf(PerfParams), None]})
def iteration_time_for_counts(job, servers, cluster: Cluster,
                              params: PerfParams | None = None) -> float:
    """tau for a placement given only by GPU counts per server (the simulator's fast path).

    The workers are packed on those servers by the best canonical packing (as in
    :func:`consolidated_assignment`, with the counts as capacities); the result is cached per
    (job configuration, counts, cluster).

    Parameters
    ----------
    job : asrpt.instance.Job or a job view
    servers : sequence of (server, gpus) pairs, or a mapping server -> gpus
        GPUs of the job on each server; they must add up to the job's GPUs.
    cluster : asrpt.instance.Cluster
    params : PerfParams or None

    Returns
    -------
    float
        Seconds per iteration, at least :func:`best_iteration_time`.

    Raises
    ------
    InvalidParameterError
        Counts that do not add up to the job's GPUs or exceed a server.
    Infeasible
        As :func:`best_iteration_time`.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Parallelism
    >>> c = Cluster.homogeneous(2, 8, "A100", inter_bandwidth=1.25e9)
    >>> job = Job("j", 0, 8, model="resnet50", parallelism=Parallelism(8, 1, 1), iterations=1)
    >>> iteration_time_for_counts(job, [(0, 8)], c) == best_iteration_time(job, c)
    True
    >>> iteration_time_for_counts(job, {0: 4, 1: 4}, c) > best_iteration_time(job, c)
    True
    """
    params = params or perf_params()
    tau_star, gt, _ = _tau_star(job, cluster, params)
    info = _cluster_info(cluster)
    key = _normalise_servers(servers, info, job)
    types = {info.server_types[h] for h, _ in key}
    if types != {gt}:
        # another GPU type: price the canonical packing on those servers directly
        plan = _plan_on(job, gt, params)
        order = sorted(key, key=lambda hn: (-hn[1], hn[0]))
        if sum(n for _, n in key) != plan.config.gpus:
            raise InvalidParameterError(
                f"job {getattr(job, 'id', '?')!r}: the servers hold {sum(n for _, n in key)} "
                f"GPUs, the job has {plan.config.gpus} workers")
        shape = (plan.config.dp, plan.config.pp, plan.config.tp)
        best = math.inf
        for A in _packings(shape, [h for h, _ in order], [n for _, n in order]):
            best = min(best, _evaluate(plan, A, info, params, tau_star).tau)
        return float(best)
    if len(info.types) == 1:
        # one GPU type: tau depends on how many GPUs each server holds, not on which servers
        # (the packing and the model see servers only as equal or not), so the cache is keyed
        # by the counts, largest first, on servers 0, 1, ... (same order, same packing)
        key = tuple(enumerate(sorted((n for _, n in key), reverse=True)))
    return float(_counts_cached(_KeyedJob(job), key, info, params, tau_star, gt)[0])


class CountTimes:
    """:func:`iteration_time_for_counts` on one cluster, memoized for a simulator's placer.

    ``times(job, servers)`` is ``iteration_time_for_counts(job, servers, cluster, params)``, the
    same float, remembered by what the value depends on: the job's performance fields (model,
    configuration, batch, precision, sequence length) and, on a one-type cluster, the GPU counts
    largest first, or for a data-parallel-only job (pp = tp = 1) the number of servers alone (the
    servers themselves otherwise). A hit costs two dictionary lookups instead of
    the validated call's argument binding, checks and cache keys (a busy run asks hundreds of
    thousands of times for a few thousand distinct values). ``servers`` must be what a placer
    gives an :class:`~asrpt.state.Allocation`: ``(server, gpus)`` pairs in server order, no zero
    counts; a miss goes through the validated function, so bad counts still raise there.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Parallelism
    >>> c = Cluster.homogeneous(2, 8, "A100", inter_bandwidth=1.25e9)
    >>> job = Job("j", 0, 8, model="resnet50", parallelism=Parallelism(8, 1, 1), iterations=1)
    >>> times = CountTimes(c)
    >>> times(job, ((0, 4), (1, 4))) == iteration_time_for_counts(job, ((0, 4), (1, 4)), c)
    True
    >>> times(job, ((0, 2), (1, 6))) == times(job, ((0, 6), (1, 2))), len(times)  # one entry: two servers
    (True, 1)
    """

    __slots__ = ("cluster", "params", "_by_counts", "_values", "_jobs")

    def __init__(self, cluster: Cluster, params: PerfParams | None = None):
        if not isinstance(cluster, Cluster):
            raise InvalidParameterError(f"CountTimes needs a Cluster, got {type(cluster).__name__}")
        self.cluster = cluster
        self.params = params
        self._by_counts = len(_cluster_info(cluster).types) == 1
        self._values: dict = {}
        self._jobs: dict = {}     # id(job) -> (job, its performance key): the job is kept alive

    def __len__(self) -> int:
        return len(self._values)

    def __call__(self, job, servers) -> float:
        hit = self._jobs.get(id(job))
        if hit is None or hit[0] is not job:
            key = _job_key(job)
            hit = self._jobs[id(job)] = (job, key, key[2] == 1 and key[3] == 1)
        if self._by_counts:
            if hit[2]:
                # data parallel only (pp = tp = 1): every canonical packing fills the servers in
                # turn, so the ring is cut once per server and tau depends on how many servers
                # hold the job, not on their counts (keyed -servers, apart from the counts)
                place = -len(servers)
            elif len(servers) == 1:
                place = servers[0][1]
            else:
                place = tuple(sorted([g for _, g in servers], reverse=True))
        else:
            place = tuple(servers)
        key = (hit[1], place)
        tau = self._values.get(key)
        if tau is None:
            tau = self._values[key] = iteration_time_for_counts(job, servers, self.cluster, self.params)
        return tau


@validate_params({"job": _JOB, "servers": "no_validation", "cluster": _CLUSTER,
                  "params": [InstanceOf(PerfParams), None]})
def packing_assignment(job, servers, cluster: Cluster, params: PerfParams | None = None) -> dict:
    """The worker assignment :func:`iteration_time_for_counts` prices for given counts.

    Parameters
    ----------
    job : asrpt.instance.Job or a job view
    servers : sequence of (server, gpus) pairs, or a mapping server -> gpus
    cluster : asrpt.instance.Cluster
    params : PerfParams or None

    Returns
    -------
    dict
        ``(r, s, k) -> server index``.

    Raises
    ------
    InvalidParameterError
        Counts that do not add up to the job's GPUs or exceed a server.
    Infeasible
        As :func:`best_iteration_time`.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Parallelism
    >>> c = Cluster.homogeneous(2, 4, "A100")
    >>> job = Job("j", 0, 4, model="resnet50", parallelism=Parallelism(2, 1, 2), iterations=1)
    >>> a = packing_assignment(job, [(0, 2), (1, 2)], c)
    >>> a[(0, 0, 0)] == a[(0, 0, 1)] != a[(1, 0, 0)]
    True
    """
    params = params or perf_params()
    tau_star, gt, _ = _tau_star(job, cluster, params)
    info = _cluster_info(cluster)
    key = _normalise_servers(servers, info, job)
    plan = _plan_on(job, gt, params)
    if sum(n for _, n in key) != plan.config.gpus:
        raise InvalidParameterError(
            f"job {getattr(job, 'id', '?')!r}: the servers hold {sum(n for _, n in key)} GPUs, "
            f"the job has {plan.config.gpus} workers")
    order = sorted(key, key=lambda hn: (-hn[1], hn[0]))
    _, A = _best_packing(plan, info, params, [h for h, _ in order], [n for _, n in order])
    d, p, t = A.shape
    return {(r, s, k): int(A[r, s, k]) for r in range(d) for s in range(p) for k in range(t)}


@validate_params({"graph": [InstanceOf(nx.Graph)], "assignment": [_AssignmentLike()]})
def cut_bytes(graph, assignment) -> float:
    """Bytes per iteration on worker-graph edges whose ends sit on different servers.

    Parameters
    ----------
    graph : networkx.Graph
        A worker graph (:func:`asrpt.dnn.parallel.worker_graph`).
    assignment : mapping or placement
        ``(r, s, k) -> server index``.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If a worker of the graph has no server.

    Examples
    --------
    >>> from asrpt.dnn.parallel import Configuration, plan_for, uniform_layer_graph, worker_graph_for
    >>> W = worker_graph_for(plan_for(uniform_layer_graph(2, params=100), Configuration(2, 1, 1, 2), "V100"))
    >>> cut_bytes(W, {(0, 0, 0): 0, (1, 0, 0): 0}), cut_bytes(W, {(0, 0, 0): 0, (1, 0, 0): 1})
    (0.0, 800.0)
    """
    mapping = getattr(assignment, "assignment", assignment)
    total = 0.0
    try:
        for u, v, b in graph.edges(data="bytes"):
            if mapping[u] != mapping[v]:
                total += b
    except KeyError as exc:
        raise InvalidParameterError(f"the assignment has no server for worker {exc.args[0]}") from None
    return float(total)


def clear_caches() -> None:
    """Forget every cached plan, worker graph, tau* and count-placement time.

    Examples
    --------
    >>> clear_caches()
    """
    from . import parallel

    _tau_star_cached.cache_clear()
    _counts_cached.cache_clear()
    _sequence.cache_clear()
    _distinct_units.cache_clear()
    _CLUSTER_INFO.clear()
    parallel._plan_cached.cache_clear()
    parallel._compute_on.cache_clear()
    parallel._worker_graph_cached.cache_clear()
    parallel._table_for_name.cache_clear()
    parallel._table_for_ref.cache_clear()
