"""The Microsoft Philly trace as pre-processed by the Pollux authors (philly.csv).

Columns: ``timestamp`` (submission, "YYYY-MM-DD HH:MM:SS"), ``duration`` (seconds), ``num_gpus``,
``gpu_time`` (= duration x num_gpus, checked), ``cluster`` (the hashed virtual cluster, used as the
job's ``user``: the trace has no users, models or groups, and no fake groups are made up).
Times are floats, as in the file (exact integers written as floats stay exact). ``meta`` keeps the
trace's own duration (``trace_duration``), the row, and the submission as epoch seconds
(``submitted``, read as UTC; for features such as hour of day and weekday).

A *window* is taken by rank in submission order: rows are sorted by (timestamp, row in the file)
and ranks ``start .. start+limit-1`` are kept (the construction of
``$ASRPT_SHARED/peer-alibaba/philly-40000-2000.csv``); arrivals are seconds after the window's first
job. Job ids are the 0-based data row of the file (or its ``philly_row`` column, when a sample of
the file carries one), so ties in submission time follow the original file order.

Jobs are abstract (``processing_time`` = the trace's duration) unless ``dnn=True``, which gives each
job a zoo model, a parallel configuration and iterations by the documented, seeded rule of
:mod:`asrpt.traces.assign`. ``gang="server"`` splits jobs larger than a server into equal gang
instances of the largest divisor of their GPU count that fits a server (the PAI convention:
16 -> 2 x 8, 12 -> 2 x 6).
"""

from __future__ import annotations

import math
import os

from .._validation import Interval, Options, validate_params
from ..instance import Cluster, Instance
from .base import TraceReport, abstract_job, parse_timestamp, read_csv_rows, shared_path, trace_status

__all__ = ["read_philly", "gang_instances", "DEFAULT_PHILLY"]

DEFAULT_PHILLY = shared_path("traces", "philly-pollux-processed", "philly.csv")

_REQUIRED = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")


def gang_instances(gpus: int, server_gpus: int) -> int:
    """Number of equal gang instances of a job: 1 if it fits a server, else gpus / d with d the
    largest divisor of ``gpus`` that is at most ``server_gpus``.

    >>> gang_instances(4, 8), gang_instances(16, 8), gang_instances(12, 8), gang_instances(7, 4)
    (1, 2, 2, 7)
    """
    if gpus <= server_gpus:
        return 1
    # the first divisor walking down from the server's size (a step or two for the usual sizes,
    # where walking up from 1 took a step per GPU of the server: 65,536 for the largest)
    d = next(k for k in range(server_gpus, 0, -1) if gpus % k == 0)
    return gpus // d


@validate_params({
    "path": [str, os.PathLike],
    "start": [Interval(int, 0, None, closed="left")],
    "limit": [None, Interval(int, 1, None, closed="left")],
    "cluster": [None, Cluster],
    "gang": [Options(str, {"any", "server"})],
    "dnn": ["boolean"],
    "seed": [Interval(int, 0, None, closed="left")],
    "min_duration": [Interval(float, 0, None, closed="left")],
})
def read_philly(path: str | os.PathLike = DEFAULT_PHILLY, *, start: int = 0, limit: int | None = None,
                cluster: Cluster | None = None, gang: str = "any", dnn: bool = False, seed: int = 0,
                min_duration: float = 0.0) -> tuple[Instance, TraceReport]:
    """Read a window of the Philly trace into an instance.

    Parameters
    ----------
    path : str
        The philly.csv file (default: the shared copy beside the repository).
    start, limit : int
        Window by rank in submission order (``limit=None``: to the end).
    cluster : Cluster or None
        The cluster to schedule on (default 64 servers x 8 GPUs). Jobs needing more GPUs than it
        has are filtered and counted.
    gang : {"any", "server"}
        "server" splits large jobs into gang instances that each fit one server.
    dnn : bool
        Make DNN jobs (model, configuration, iterations) with :func:`asrpt.traces.assign.assign_models`.
    seed : int
        Seed of the model assignment.
    min_duration : float
        Rows with a shorter duration are filtered (e.g. 60 as in Pollux); 0 keeps all.

    Returns
    -------
    (Instance, TraceReport)

    Raises
    ------
    TraceError
        Missing file or a header without the required columns.
    """
    cluster = cluster if cluster is not None else Cluster.homogeneous(64, 8)
    source = os.fspath(path)
    header, rows = read_csv_rows(source, _REQUIRED)
    has_row = "philly_row" in header
    report = TraceReport(source, ignored_columns=tuple(c for c in header if c not in _REQUIRED + ("philly_row", "status")))
    parsed = []
    for line, row in report.readable_rows(rows):
        row_index = report.rows - 1    # the row's index in the file, malformed rows included
        try:
            t = parse_timestamp(row["timestamp"])
            duration = float(row["duration"])
            gpus = int(row["num_gpus"])
            gpu_time = float(row["gpu_time"])
            if has_row:
                row_index = int(row["philly_row"])
        except ValueError as exc:
            report.bad(line, str(exc) if "timestamp" in str(exc) else f"not a number: {exc}")
            continue
        if not (math.isfinite(duration) and duration > 0):
            report.bad(line, f"duration {row['duration']!r} is not positive")
            continue
        if gpus < 1:
            report.bad(line, f"num_gpus {row['num_gpus']!r} is not positive")
            continue
        if not abs(gpu_time - duration * gpus) <= 1e-6 * max(1.0, gpu_time):  # NaN fails too
            report.bad(line, f"gpu_time {gpu_time} != duration x num_gpus = {duration * gpus}")
            continue
        parsed.append((t, row_index, duration, gpus, row["cluster"].strip(), line, trace_status(row.get("status"))))
    parsed.sort(key=lambda r: (r[0], r[1]))
    end = len(parsed) if limit is None else min(len(parsed), start + limit)
    if start or end < len(parsed):
        report.filtered["outside the window"] += len(parsed) - (end - start) if end > start else len(parsed)
    window = parsed[start:end]
    t0 = window[0][0] if window else 0.0
    M, G = cluster.total_gpus, cluster.max_server_gpus
    jobs = []
    for t, row_index, duration, gpus, vc, line, status in window:
        if duration < min_duration:
            report.filtered[f"duration below {min_duration:g} s"] += 1
            continue
        if gpus > M:
            report.filtered[f"needs more than the cluster's {M} GPUs"] += 1
            continue
        instances = gang_instances(gpus, G) if gang == "server" else None
        if instances is not None and instances > 1 and sum(s.gpus // (gpus // instances) for s in cluster.servers) < instances:
            report.filtered["gang instances do not fit the servers"] += 1
            continue
        job = abstract_job(report, line, str(row_index), t - t0, gpus, duration, instances=instances,
                           user=vc or None, status=status,
                           meta={"trace_duration": duration, "row": row_index, "submitted": t})
        if job is not None:
            jobs.append(job)
    report.jobs = len(jobs)
    report.check_readable()
    metadata = {"source": "philly", "file": os.path.basename(source), "start": start, "limit": limit,
                "gang": gang, "first_submit": window[0][0] if window else None}
    instance = Instance(cluster, tuple(jobs), metadata)
    if dnn:
        from .assign import assign_models

        instance = assign_models(instance, seed=seed)
        report.notes.append(f"models and configurations assigned by asrpt.traces.assign (seed {seed})")
    return instance, report
