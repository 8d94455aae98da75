"""The SenseTime Helios trace schema (HeliosData ``<cluster>/cluster_log.csv``).

Columns used: ``job_id``, ``user``, ``vc``, ``gpu_num``, ``state``, ``submit_time``, ``start_time``,
``end_time``, ``duration``. Times may be "YYYY-MM-DD HH:MM:SS" strings or seconds. GPU jobs
(``gpu_num >= 1``) become abstract jobs: arrival = seconds after the first kept submission,
processing time = ``duration`` (falling back to ``end_time - start_time`` when ``duration`` is
empty), ``user`` = user, ``status`` from ``state`` (:func:`~asrpt.traces.base.trace_status`),
with ``vc``, ``state`` and ``submitted`` (epoch seconds) in ``meta``. Rows with ``gpu_num == 0`` are
filtered ("not a GPU job"), rows that never ran (empty or zero duration) are filtered
("did not run"). Helios logs carry users but no job names, so no groups are made up.

The per-job Helios trace is not in the shared data (it is larger than the snapshot limit); this
importer is exercised on a small hand-written file in the schema (tests/traces).
"""

from __future__ import annotations

import os

from .._validation import validate_params
from ..instance import Cluster, Instance
from .base import TraceReport, abstract_job, parse_timestamp, read_csv_rows, trace_status

__all__ = ["read_helios", "HELIOS_COLUMNS"]

HELIOS_COLUMNS = ("job_id", "user", "vc", "gpu_num", "state", "submit_time", "start_time", "end_time", "duration")


@validate_params({"path": [str, os.PathLike], "cluster": [Cluster]})
def read_helios(path: str | os.PathLike, cluster: Cluster) -> tuple[Instance, TraceReport]:
    """Read a Helios cluster_log into an instance on ``cluster``.

    Raises
    ------
    TraceError
        Missing file or a header without the required columns.
    """
    source = os.fspath(path)
    header, rows = read_csv_rows(source, HELIOS_COLUMNS)
    report = TraceReport(source, ignored_columns=tuple(c for c in header if c not in HELIOS_COLUMNS))
    raw = []
    seen: set[str] = set()
    for line, row in report.readable_rows(rows):
        try:
            gpus = int(float(row["gpu_num"]))
            submit = parse_timestamp(row["submit_time"])
            if row["duration"].strip():
                duration = float(row["duration"])
            elif row["start_time"].strip() and row["end_time"].strip():
                duration = parse_timestamp(row["end_time"]) - parse_timestamp(row["start_time"])
            else:
                duration = 0.0
        except ValueError as exc:
            report.bad(line, str(exc))
            continue
        job_id = row["job_id"].strip()
        if gpus <= 0:
            report.filtered["not a GPU job"] += 1
        elif duration <= 0:
            report.filtered["did not run"] += 1
        elif not job_id or job_id in seen:
            report.bad(line, f"missing or duplicate job_id {job_id!r}")
        else:
            seen.add(job_id)
            raw.append((submit, line, job_id, gpus, duration, row))
    raw.sort(key=lambda r: (r[0], r[1]))
    t0 = raw[0][0] if raw else 0.0
    M = cluster.total_gpus
    jobs = []
    for submit, line, job_id, gpus, duration, row in raw:
        if gpus > M:
            report.filtered[f"needs more than the cluster's {M} GPUs"] += 1
            continue
        job = abstract_job(report, line, job_id, submit - t0, gpus, duration,
                           user=row["user"].strip() or None, status=trace_status(row["state"]),
                           meta={"vc": row["vc"].strip(), "state": row["state"].strip(), "submitted": submit})
        if job is not None:
            jobs.append(job)
    report.jobs = len(jobs)
    report.check_readable()
    return Instance(cluster, tuple(jobs), {"source": "helios", "file": os.path.basename(source)}), report
