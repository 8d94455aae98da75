"""Instance checks for DNN jobs: models, GPU types, precisions, configurations and memory.

This module owns what the loaders of :mod:`asrpt.loading` ask about DNN jobs once the generic
checks of :mod:`asrpt.instance` have passed: every problem is returned as a
:class:`~asrpt.errors.Problem` with its JSON location, never raised.

- ``jobs[i].model``: not a zoo model (with a did-you-mean);
- ``cluster.gpu_type`` / ``cluster.servers[h].gpu_type``: not in the GPU table (did-you-mean);
- ``jobs[i].precision``: unknown, or run by no GPU type of the cluster;
- ``jobs[i].parallelism``: more pipeline stages than layers, or a configuration that fits in the
  memory of no GPU type of the cluster with enough GPUs;
- ``jobs[i].batch_size``: a global batch smaller than dp (the model's default batch when the
  job gives none).

Checks are cached per distinct (model, dp, pp, tp, batch, precision) and cluster, so an instance
of 80,000 DNN jobs drawn from a few hundred configurations validates in about the time of those
few hundred. It assumes the jobs already passed the generic field checks of
:mod:`asrpt.instance`.

Examples
--------
>>> from asrpt.instance import Cluster, Job, Parallelism
>>> jobs = [Job("a", 0, 8, model="resnet5", iterations=10),
...         Job("b", 0, 8, model="resnet50", parallelism=Parallelism(8, 1, 1), iterations=10,
...             batch_size=4)]
>>> for p in instance_problems(Cluster.homogeneous(2, 8, "A100"), jobs):
...     print(p)
jobs[0].model: unknown model 'resnet5' (did you mean 'resnet50'?)
jobs[1].batch_size: batch size 4 is smaller than dp = 8: every data-parallel replica needs at least one sample
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from .._validation import InstanceOf, validate_params
from ..errors import AsrptError, Infeasible, InvalidParameterError, Problem, did_you_mean
from ..instance import Cluster
from .hardware import DEFAULT_GPU_TYPE, GPU_TABLE, PRECISIONS, gpu_spec, precision_info

__all__ = ["instance_problems", "job_problems"]


@lru_cache(maxsize=1)
def _model_names() -> tuple[str, ...]:
    from .parallel import _zoo_model_names

    return _zoo_model_names()


def _gpu_problems(cluster: Cluster) -> list[Problem]:
    problems = []
    known = list(GPU_TABLE) + ["A100", "V100"]
    if cluster.gpu_type is not None:
        try:
            gpu_spec(cluster.gpu_type)
        except InvalidParameterError:
            problems.append(Problem("cluster.gpu_type", f"unknown GPU type {cluster.gpu_type!r}"
                                    f"{did_you_mean(cluster.gpu_type, known)}"))
    seen = set()
    for h, s in enumerate(cluster.servers):
        if s.gpu_type is None or s.gpu_type in seen:
            continue
        seen.add(s.gpu_type)
        try:
            gpu_spec(s.gpu_type)
        except InvalidParameterError:
            problems.append(Problem(f"cluster.servers[{h}].gpu_type",
                                    f"unknown GPU type {s.gpu_type!r}"
                                    f"{did_you_mean(s.gpu_type, known)}"))
    return problems


class _ClusterToken:
    """A cluster hashed by the identity of its cached summary (hashing a Cluster walks all its
    servers; this is O(1))."""

    __slots__ = ("cluster", "info")

    def __init__(self, cluster: Cluster):
        from .perf import _cluster_info

        self.cluster = cluster
        self.info = _cluster_info(cluster)

    def __hash__(self):
        return id(self.info)

    def __eq__(self, other):
        return isinstance(other, _ClusterToken) and other.info is self.info


@lru_cache(maxsize=65536)
def _config_problems(model: str, dp: int, pp: int, tp: int, batch: int | None,
                     precision: str | None, token: _ClusterToken,
                     seq_len: int | None = None) -> tuple[tuple[str, str], ...]:
    """(field, message) pairs for one distinct configuration on one cluster."""
    from . import perf
    from .parallel import _job_configuration, _table

    cluster = token.cluster

    out: list[tuple[str, str]] = []
    table = _table(model if seq_len is None else (model, seq_len))
    if pp > table.n_layers:
        out.append(("parallelism", f"pp = {pp} exceeds the {table.n_layers} layers of {model}"))
    eff_batch = table.default_batch_size if batch is None else batch
    if eff_batch < dp:
        what = (f"batch size {batch}" if batch is not None
                else f"the default batch size of {model} ({eff_batch})")
        out.append(("batch_size", f"{what} is smaller than dp = {dp}: every data-parallel "
                                  "replica needs at least one sample"))
    if precision is not None:
        types = {gpu_spec(s.gpu_type or cluster.gpu_type or DEFAULT_GPU_TYPE).name
                 for s in cluster.servers}
        compute = precision_info(precision).compute
        if not any(compute in GPU_TABLE[t].peak_tflops for t in types):
            out.append(("precision", f"{precision} is not supported by the cluster's GPUs "
                                     f"({', '.join(sorted(types))})"))
    if out:
        return tuple(out)
    job = _ConfigJob(model, dp, pp, tp, batch, precision, seq_len)
    try:
        _job_configuration(job)
        perf.best_iteration_time(job, cluster)
    except Infeasible as exc:
        msg = str(exc)
        prefix = "job '?': "
        msg = msg[len(prefix):] if msg.startswith(prefix) else msg
        out.append(("parallelism", msg))
    except AsrptError as exc:
        out.append(("parallelism", str(exc)))
    return tuple(out)


class _ConfigJob:
    """A stand-in job carrying only what the performance model reads."""

    __slots__ = ("id", "model", "parallelism", "batch_size", "precision", "gpus", "seq_len")

    def __init__(self, model, dp, pp, tp, batch, precision, seq_len=None):
        from ..instance import Parallelism

        self.id = "?"
        self.model = model
        self.parallelism = Parallelism(dp, pp, tp)
        self.batch_size = batch
        self.precision = precision
        self.gpus = dp * pp * tp
        self.seq_len = seq_len


@validate_params({"job": "no_validation", "cluster": [InstanceOf(Cluster)]})
def job_problems(job, cluster: Cluster) -> list[tuple[str, str]]:
    """Problems of one DNN job on ``cluster`` as ``(field, message)`` pairs (empty if none).

    Parameters
    ----------
    job : asrpt.instance.Job
        A DNN job (abstract jobs have no DNN problems).
    cluster : asrpt.instance.Cluster
        Its cluster (GPU types are assumed known; see :func:`instance_problems`).

    Returns
    -------
    list of (str, str)

    Raises
    ------
    InvalidParameterError
        For a cluster that is not a Cluster.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Parallelism
    >>> job = Job("j", 0, 8, model="llama-70b", parallelism=Parallelism(8, 1, 1), iterations=1)
    >>> [f for f, _ in job_problems(job, Cluster.homogeneous(1, 8, "A100"))]
    ['parallelism']
    """
    return _job_problems(job, cluster)


def _job_problems(job, cluster: Cluster, _token=None) -> list[tuple[str, str]]:
    model = getattr(job, "model", None)
    if model is None:
        return []
    if model not in _model_names():
        return [("model", f"unknown model {model!r}{did_you_mean(model, _model_names())}")]
    out: list[tuple[str, str]] = []
    precision = getattr(job, "precision", None)
    if precision is not None:
        try:
            precision = precision_info(precision).name
        except InvalidParameterError:
            return [("precision", f"unknown precision {precision!r}"
                                  f"{did_you_mean(precision, PRECISIONS)}; known: "
                                  f"{', '.join(PRECISIONS)}")]
    seq_len = getattr(job, "seq_len", None)
    if seq_len is not None:
        from .zoo import get_model

        spec = get_model(model)
        if "seq_len" not in spec.overrides:
            return [("seq_len", f"{model} takes no sequence length (it is not a transformer)")]
        limit = spec.config.get("max_positions")
        if limit is not None and seq_len > limit:
            return [("seq_len", f"{seq_len} exceeds the {limit} positions of {model}")]
    par = job.parallelism
    if par is None:
        return out
    return list(_config_problems(model, par.dp, par.pp, par.tp, job.batch_size, precision,
                                 _token if _token is not None else _ClusterToken(cluster),
                                 seq_len))


@validate_params({"cluster": [InstanceOf(Cluster)], "jobs": "no_validation"})
def instance_problems(cluster: Cluster, jobs: Sequence) -> list[Problem]:
    """Every problem of the DNN jobs of an instance, with its location.

    Parameters
    ----------
    cluster : asrpt.instance.Cluster
    jobs : sequence of asrpt.instance.Job
        The instance's jobs, in file order (abstract jobs are skipped).

    Returns
    -------
    list of Problem
        Locations such as ``jobs[3].model`` or ``cluster.gpu_type``.

    Raises
    ------
    InvalidParameterError
        For a cluster that is not a Cluster.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job
    >>> [str(p) for p in instance_problems(Cluster.homogeneous(1, 8, "H20"),
    ...                                    [Job("a", 0, 1, model="gpt2", iterations=5)])]
    ["cluster.gpu_type: unknown GPU type 'H20' (did you mean 'H200'?)"]
    """
    dnn = [(i, j) for i, j in enumerate(jobs) if getattr(j, "model", None) is not None]
    if not dnn:
        return []
    problems = _gpu_problems(cluster)
    if problems:
        return problems
    token = _ClusterToken(cluster)
    for i, job in dnn:
        for fld, msg in _job_problems(job, cluster, token):
            problems.append(Problem(f"jobs[{i}].{fld}", msg))
    return problems
