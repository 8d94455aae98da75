"""The Tiresias simulator's job CSV (NSDI'19, SymbioticLab/Tiresias ``simulator/``).

Columns used: ``job_id``, ``num_gpu`` (a gang of that many GPUs), ``submit_time`` and
``duration`` (seconds of run time, whatever the placement). The peer also has ``iterations``,
``model_name`` and ``interval``; they never change its decisions, and are ignored (and listed in
the report).

The peer's reading rules are kept, so that a run reproduces its integer clock:

- a value made of digits only is an integer: ``submit_time`` and ``num_gpu`` must be such
  integers (anything else is reported as a malformed row, where the peer would keep a string and
  misbehave);
- ``duration`` is truncated to an integer (``int(float(text))``); a duration that truncates to 0
  is filtered and counted;
- jobs are stably sorted by ``submit_time``: ties keep the file order. The instance lists its jobs
  in that order, so ``Job`` positions are the peer's arrival order (the ``tiresias-peer`` family
  of policies breaks ties by that position). asrpt's engine breaks arrival ties by job id; when
  the file order of tied jobs differs from their id order, the report says how many ties differ.

A job needing more GPUs than the cluster never runs in the peer (it stays waiting and is missing
from its output); here it is filtered and counted.
"""

from __future__ import annotations

import os

from .._validation import validate_params
from ..instance import Cluster, Instance, Job, id_key
from ..errors import TraceError
from .base import TraceReport, read_csv_rows

__all__ = ["read_tiresias", "read_tiresias_cluster", "TIRESIAS_COLUMNS", "looks_like_tiresias"]

TIRESIAS_COLUMNS = ("job_id", "num_gpu", "submit_time", "duration")
#: The header columns that identify the format (``model_name`` is the peer's own column).
TIRESIAS_HEADER = TIRESIAS_COLUMNS + ("model_name",)


def looks_like_tiresias(header) -> bool:
    """True when a CSV header has the Tiresias columns (``model_name`` included).

    >>> looks_like_tiresias(["job_id", "num_gpu", "submit_time", "iterations", "model_name",
    ...                      "duration", "interval"])
    True
    """
    return all(c in header for c in TIRESIAS_HEADER)


@validate_params({"path": [str, os.PathLike], "cluster": [Cluster]})
def read_tiresias(path: str | os.PathLike, cluster: Cluster) -> tuple[Instance, TraceReport]:
    """Read a Tiresias-format job CSV into an instance on ``cluster`` (see the module docstring).

    Parameters
    ----------
    path : str or PathLike
        The CSV (plain or .gz).
    cluster : Cluster
        The cluster (the peer's cluster spec is a separate file; ``SxNxG`` specs give switches).

    Returns
    -------
    (Instance, TraceReport)

    Raises
    ------
    TraceError
        Missing file or a header without the required columns.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("job_id,num_gpu,submit_time,model_name,duration\\n"
    ...                  "7,2,10,vgg16,99.9\\n3,1,10,resnet50,5\\n1,1,0,resnet50,4\\n")
    >>> inst, report = read_tiresias(p, Cluster.homogeneous(2, 8))
    >>> [(j.id, j.arrival, j.gpus, j.processing_time) for j in inst.jobs]
    [('1', 0, 1, 4), ('7', 10, 2, 99), ('3', 10, 1, 5)]
    >>> report.notes
    ['1 tie(s) in submit_time whose file order differs from their id order (asrpt breaks arrival ties by id in non-Tiresias policies)']
    """
    source = os.fspath(path)
    header, rows = read_csv_rows(source, TIRESIAS_COLUMNS)
    report = TraceReport(source, ignored_columns=tuple(c for c in header if c not in TIRESIAS_COLUMNS))
    jobs = []
    seen: set[str] = set()
    M = cluster.total_gpus
    for line, row in report.readable_rows(rows):
        job_id = row["job_id"].strip()
        submit_text, gpu_text = row["submit_time"].strip(), row["num_gpu"].strip()
        if not submit_text.isdigit():
            report.bad(line, f"submit_time {submit_text!r} is not a whole number of seconds")
            continue
        if not gpu_text.isdigit():
            report.bad(line, f"num_gpu {gpu_text!r} is not a whole number")
            continue
        try:
            duration = int(float(row["duration"]))
        except ValueError:
            report.bad(line, f"duration {row['duration']!r} is not a number")
            continue
        submit, gpus = int(submit_text), int(gpu_text)
        if not job_id:
            report.bad(line, "empty job_id")
        elif job_id in seen:
            report.bad(line, f"duplicate job_id {job_id!r}")
        elif duration < 0:
            report.bad(line, f"duration {row['duration']!r} is negative")
        elif gpus < 1:
            report.bad(line, "num_gpu must be >= 1")
        elif duration == 0:
            report.filtered["duration truncates to 0 s"] += 1
        elif gpus > M:
            report.filtered[f"needs more than the cluster's {M} GPUs (the peer never runs it)"] += 1
        else:
            seen.add(job_id)
            jobs.append(Job(job_id, submit, gpus, processing_time=duration))
    jobs.sort(key=lambda j: j.arrival)  # stable: ties keep the file order, as in the peer
    differ = sum(1 for a, b in zip(jobs, jobs[1:]) if a.arrival == b.arrival and id_key(a.id) > id_key(b.id))
    if differ:
        report.notes.append(f"{differ} tie(s) in submit_time whose file order differs from their id order "
                            f"(asrpt breaks arrival ties by id in non-Tiresias policies)")
    report.jobs = len(jobs)
    return Instance(cluster, tuple(jobs), {"source": "tiresias", "file": os.path.basename(source)}), report


def read_tiresias_cluster(path: str | os.PathLike) -> Cluster:
    """The cluster of a Tiresias cluster-spec CSV (``num_switch, num_node_p_switch,
    num_gpu_p_node, num_cpu_p_node, mem_p_node``): S x N servers of G GPUs, N per switch.

    CPUs and memory are not modelled (with the peer's specs they never bind; see the yarn placer).

    Raises
    ------
    TraceError
        Missing file, missing columns, or not exactly one row of positive integers.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "spec.csv"
    >>> _ = p.write_text("num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\\n4,32,4,40,256\\n")
    >>> c = read_tiresias_cluster(p)
    >>> c.n_switches, c.servers_per_switch, c.total_gpus
    (4, 32, 512)
    """
    source = os.fspath(path)
    cols = ("num_switch", "num_node_p_switch", "num_gpu_p_node")
    _, rows = read_csv_rows(source, cols)
    rows = list(rows)
    if len(rows) != 1 or "__error__" in rows[0][1]:
        raise TraceError(f"{source}: a Tiresias cluster spec has exactly one data row, found {len(rows)}")
    line, row = rows[0]
    values = [row[c].strip() for c in cols]
    if not all(v.isdigit() and int(v) > 0 for v in values):
        raise TraceError(f"{source}:{line}: {', '.join(cols)} must be positive integers, got {', '.join(values)}")
    s, n, g = (int(v) for v in values)
    return Cluster.from_spec(f"{s}x{n}x{g}")
