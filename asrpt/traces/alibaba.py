"""Alibaba PAI 2023 ("openb", cluster-trace-gpu-v2023) pod list and node list.

The pod list holds Kubernetes pods, training and otherwise; asrpt keeps the **GPU pods**
(``num_gpu >= 1``) as jobs: id ``name``, arrival ``creation_time``, ``gpus = num_gpu``, processing time
``deletion_time - scheduled_time``. What happens to the other rows, all counted in the report:

- ``num_gpu == 0``: filtered ("not a GPU job");
- never scheduled (``Pending``, empty ``scheduled_time``): filtered ("never scheduled");
- **censoring**: a pod still ``Running`` at the end of the trace has ``deletion_time`` set to the
  end of observation (alibaba/clusterdata issue #218), so its duration is only a lower bound.
  ``censored="drop"`` (default) filters these pods ("censored: running at trace end");
  ``"keep"`` keeps them with the observed duration and ``meta["censored"] = True``;
- GPU-sharing pods (``gpu_milli < 1000``) are kept as whole-GPU jobs with ``meta["gpu_milli"]``
  (``sharing="whole"``, default) or filtered (``sharing="drop"``);
- ``Failed`` pods are kept (they held GPUs for their whole run); ``meta["phase"]`` records it.

The node list gives real heterogeneous servers (:func:`alibaba_cluster`): one server per GPU node
with its GPU count and model code (G1/G2/G3 are undisclosed internal types).
"""

from __future__ import annotations

import os

from .._validation import Options, validate_params
from ..instance import Cluster, Instance, Server
from .base import TraceReport, abstract_job, read_csv_rows, shared_path

__all__ = ["read_alibaba_pods", "alibaba_cluster", "ALIBABA_POD_COLUMNS", "DEFAULT_PODS", "DEFAULT_NODES"]

ALIBABA_POD_COLUMNS = ("name", "num_gpu", "gpu_milli", "pod_phase", "creation_time", "deletion_time",
                       "scheduled_time")
_USED = ALIBABA_POD_COLUMNS
DEFAULT_PODS = shared_path("traces", "alibaba-pai-gpu-v2023-openb", "openb_pod_list_default.csv")
DEFAULT_NODES = shared_path("traces", "alibaba-pai-gpu-v2023-openb", "openb_node_list_gpu_node.csv")


def alibaba_cluster(path: str | os.PathLike = DEFAULT_NODES) -> Cluster:
    """One server per GPU node of an openb node list (columns ``sn``, ``gpu``, ``model``).

    Raises
    ------
    TraceError
        Missing file or header; a malformed row (its line is named).
    """
    from ..errors import TraceError

    source = os.fspath(path)
    _, rows = read_csv_rows(source, ("sn", "gpu", "model"))
    servers = []
    for line, row in rows:
        if "__error__" in row:
            raise TraceError(f"{source}:{line}: {row['__error__']}")
        try:
            gpus = int(row["gpu"])
        except ValueError:
            raise TraceError(f"{source}:{line}: gpu {row['gpu']!r} is not an integer") from None
        if gpus > 0:
            servers.append(Server(gpus, row["model"].strip() or None))
    if not servers:
        raise TraceError(f"{source}: no GPU node")
    return Cluster(tuple(servers))


@validate_params({"path": [str, os.PathLike], "cluster": [None, Cluster],
                  "censored": [Options(str, {"drop", "keep"})], "sharing": [Options(str, {"whole", "drop"})]})
def read_alibaba_pods(path: str | os.PathLike = DEFAULT_PODS, *, cluster: Cluster | None = None,
                      censored: str = "drop", sharing: str = "whole") -> tuple[Instance, TraceReport]:
    """Read the GPU pods of an openb pod list (see the module docstring for every rule).

    ``cluster`` defaults to :func:`alibaba_cluster` of the node list beside the pod list (or a
    cluster big enough for the largest pod, 8-GPU servers, when there is none).

    Raises
    ------
    TraceError
        Missing file or a header without the required columns.
    """
    source = os.fspath(path)
    header, rows = read_csv_rows(source, ALIBABA_POD_COLUMNS)
    report = TraceReport(source, ignored_columns=tuple(c for c in header if c not in _USED))
    raw = []
    for line, row in report.readable_rows(rows):
        try:
            gpus = int(row["num_gpu"])
            milli = int(row["gpu_milli"] or 0)
        except ValueError as exc:
            report.bad(line, f"not an integer: {exc}")
            continue
        if gpus <= 0:
            report.filtered["not a GPU job"] += 1
            continue
        phase = row["pod_phase"].strip()
        if not row["scheduled_time"].strip():
            report.filtered["never scheduled"] += 1
            continue
        try:
            created, scheduled, deleted = (float(row[c]) for c in ("creation_time", "scheduled_time", "deletion_time"))
        except ValueError as exc:
            report.bad(line, f"not a number: {exc}")
            continue
        if phase == "Running":
            if censored == "drop":
                report.filtered["censored: running at trace end"] += 1
                continue
        duration = deleted - scheduled
        if duration <= 0 or scheduled < created:
            report.bad(line, f"run [{scheduled:g}, {deleted:g}] is empty or starts before creation {created:g}")
            continue
        if 0 < milli < 1000 and sharing == "drop":
            report.filtered["GPU-sharing pod"] += 1
            continue
        meta = {"phase": phase, "trace_start": scheduled}
        if 0 < milli < 1000:
            meta["gpu_milli"] = milli
        if phase == "Running":
            meta["censored"] = True
        raw.append((row["name"].strip(), created, gpus, duration, meta, line))
    if cluster is None:
        if os.path.exists(os.path.join(os.path.dirname(source), "openb_node_list_gpu_node.csv")):
            cluster = alibaba_cluster(os.path.join(os.path.dirname(source), "openb_node_list_gpu_node.csv"))
        else:
            biggest = max((r[2] for r in raw), default=1)
            cluster = Cluster.homogeneous(max(1, -(-biggest // 8)), 8)
    M = cluster.total_gpus
    jobs = []
    for name, created, gpus, duration, meta, line in raw:
        if gpus > M:
            report.filtered[f"needs more than the cluster's {M} GPUs"] += 1
            continue
        job = abstract_job(report, line, name, created, gpus, duration, meta=meta)
        if job is not None:
            jobs.append(job)
    if censored == "keep":
        report.notes.append("pods running at trace end kept with their observed (censored) run time")
    report.notes.append("GPU-sharing pods (gpu_milli < 1000) count as whole GPUs" if sharing == "whole"
                        else "GPU-sharing pods dropped")
    report.jobs = len(jobs)
    report.check_readable()
    return Instance(cluster, tuple(jobs), {"source": "alibaba-pai-2023", "file": os.path.basename(source),
                                           "censored": censored, "sharing": sharing}), report
