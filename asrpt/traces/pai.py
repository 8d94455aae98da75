"""The Alibaba PAI GPU-2020 simulator's job CSV (the input format of the peer simulator).

Columns used: ``job_id``, ``user``, ``submit_time``, ``duration`` (seconds of run time, whatever
the placement), ``num_inst`` (gang instances, each inside one server), ``num_gpu`` (GPUs per
instance), ``num_cpu`` (must be 0: asrpt models GPUs only; rows asking for CPUs are reported and
kept with their CPUs ignored); an optional ``status`` (``Terminated``, ``Failed``) becomes
``Job.status``. Any other column is ignored and listed in the report.

Each row becomes an abstract job: id ``job_id``, arrival ``submit_time``, ``gpus = num_inst *
num_gpu``, ``instances = num_inst``, ``processing_time = duration``, ``user``. Integer times stay
integers, so a run reproduces the peer's integer clock exactly.
"""

from __future__ import annotations

import os

from .._validation import validate_params
from ..instance import LIMITS, Cluster, Instance, Job
from .base import TraceReport, _plain_string, abstract_job, read_csv_records, trace_status

_MAX_TIME, _MAX_STRING, _MAX_INSTANCES = LIMITS["time"], LIMITS["string_length"], LIMITS["servers"]

__all__ = ["read_pai", "PAI_COLUMNS", "looks_like_pai"]

PAI_COLUMNS = ("job_id", "user", "submit_time", "duration", "num_inst", "num_gpu", "num_cpu")


def looks_like_pai(header) -> bool:
    """True when a CSV header has every PAI column."""
    return all(c in header for c in PAI_COLUMNS)


def _number(text: str):
    value = float(text)
    return int(value) if value.is_integer() else value


@validate_params({"path": [str, os.PathLike], "cluster": [Cluster]})
def read_pai(path: str | os.PathLike, cluster: Cluster) -> tuple[Instance, TraceReport]:
    """Read a PAI-format job CSV into an instance on ``cluster``.

    Rows needing more GPUs than the cluster, or instances larger than its largest server, are
    filtered and counted; malformed rows are reported with their line.

    Raises
    ------
    TraceError
        Missing file or a header without the PAI columns.
    """
    source = os.fspath(path)
    header, records = read_csv_records(source, PAI_COLUMNS)
    report = TraceReport(source, ignored_columns=tuple(c for c in header if c not in PAI_COLUMNS + ("status",)))
    # the columns by position (the last of a repeated name, as a row dict would keep it)
    at = {name: k for k, name in enumerate(header)}
    c_id, c_user, c_submit, c_duration, c_inst, c_gpu, c_cpu = (at[c] for c in PAI_COLUMNS)
    c_status = at.get("status")
    jobs = []
    seen: set[str] = set()
    M, G = cluster.total_gpus, cluster.max_server_gpus
    cpu_rows = 0
    rows = 0
    bad = report.bad
    for line, row in records:
        rows += 1
        if type(row) is str:
            bad(line, row)
            continue
        job_id = row[c_id].strip()
        try:
            submit = _number(row[c_submit])
            duration = _number(row[c_duration])
            n_inst, per = int(row[c_inst]), int(row[c_gpu])
            cpus = row[c_cpu]
            cpus = float(cpus) if cpus and cpus != "0" else 0
        except ValueError as exc:
            bad(line, f"not a number: {exc}")
            continue
        if not job_id:
            bad(line, "empty job_id")
        elif job_id in seen:
            bad(line, f"duplicate job_id {job_id!r}")
        elif submit < 0 or duration <= 0:
            bad(line, f"submit_time {submit} or duration {duration} out of range")
        elif n_inst < 1 or per < 1:
            bad(line, f"num_inst {n_inst} and num_gpu {per} must be >= 1")
        elif n_inst * per > M:
            report.filtered[f"needs more than the cluster's {M} GPUs"] += 1
        elif per > G:
            report.filtered[f"an instance needs more than a server's {G} GPUs"] += 1
        else:
            user = row[c_user].strip() or None
            status = None if c_status is None else trace_status(row[c_status])
            if (type(submit) is int and type(duration) is int and submit <= _MAX_TIME and duration <= _MAX_TIME
                    and n_inst <= _MAX_INSTANCES and len(job_id) <= _MAX_STRING and job_id.isascii()
                    and job_id.isprintable() and (user is None or _plain_string(user))):
                # what abstract_job checks, less what the tests above have shown (an integer row)
                job = Job._abstract(job_id, submit, n_inst * per, duration, n_inst, user, status)
            else:
                job = abstract_job(report, line, job_id, submit, n_inst * per, duration, instances=n_inst,
                                   user=user, status=status)
                if job is None:
                    continue
            if cpus:
                cpu_rows += 1
            seen.add(job_id)
            jobs.append(job)
    report.rows = rows
    if cpu_rows:
        report.notes.append(f"{cpu_rows} rows ask for CPUs; asrpt schedules GPUs only and ignored them")
    report.jobs = len(jobs)
    report.check_readable()
    return Instance(cluster, tuple(jobs), {"source": "pai", "file": os.path.basename(source)}), report
