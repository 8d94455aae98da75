"""Read any supported trace, detecting its format from the CSV header (or a JSON instance)."""

from __future__ import annotations

import csv
import gzip
import os

from .._gc import gc_paused
from .._validation import Options, validate_params
from ..errors import TraceError
from ..instance import Cluster, Instance
from ..loading import check_instance, load_instance
from .alibaba import ALIBABA_POD_COLUMNS, read_alibaba_pods
from .base import TraceReport
from .helios import HELIOS_COLUMNS, read_helios
from .pai import PAI_COLUMNS, read_pai
from .philly import read_philly
from .tiresias import TIRESIAS_HEADER, read_tiresias

__all__ = ["detect_format", "read_trace", "FORMATS"]

FORMATS = ("instance", "philly", "pai", "alibaba", "helios", "tiresias")
_PHILLY = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")


def detect_format(path: str | os.PathLike) -> str:
    """"instance" for a .json file, else the CSV format (plain or .gz) whose columns the header has.

    Raises
    ------
    TraceError
        Unreadable file or an unknown header (the columns found are named).
    """
    source = os.fspath(path)
    if source.endswith(".json"):
        return "instance"
    try:
        opener = gzip.open if source.endswith(".gz") else open
        with opener(source, "rt", newline="", encoding="utf-8-sig") as fh:
            header = [h.strip() for h in next(csv.reader(fh), [])]
    except FileNotFoundError:
        raise TraceError(f"{source}: no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error, EOFError) as exc:
        raise TraceError(f"{source}: cannot read: {exc}") from None
    for name, cols in (("pai", PAI_COLUMNS), ("philly", _PHILLY), ("alibaba", ALIBABA_POD_COLUMNS),
                       ("helios", HELIOS_COLUMNS), ("tiresias", TIRESIAS_HEADER)):
        if all(c in header for c in cols):
            return name
    raise TraceError(f"{source}: not a known trace format (header: {', '.join(header) or 'empty'}); "
                     f"known: {', '.join(FORMATS)}")


@validate_params({"path": [str, os.PathLike], "format": [Options(str, set(FORMATS) | {"auto"})],
                  "cluster": [None, Cluster], "start": [int], "limit": [None, int], "dnn": ["boolean"],
                  "seed": [int]})
def read_trace(path, *, format: str = "auto", cluster: Cluster | None = None, start: int = 0,
               limit: int | None = None, dnn: bool = False, seed: int = 0) -> tuple[Instance, TraceReport | None]:
    """Read an instance file or a trace; returns ``(instance, report)`` (report None for instances).

    ``cluster`` replaces an instance file's cluster, and is the cluster of a trace (default 64 x 8
    for Philly, the node list for Alibaba pods; required for PAI, Helios and Tiresias files, which
    carry none: 64 x 8 if omitted). ``start``/``limit`` select a window of Philly or of any imported trace by
    arrival order; ``dnn`` gives trace jobs models (:mod:`asrpt.traces.assign`).
    """
    with gc_paused():   # (readers build many objects and no reference cycles: asrpt._gc)
        return _read_trace(path, format, cluster, start, limit, dnn, seed)


def _read_trace(path, format, cluster, start, limit, dnn, seed):
    fmt = detect_format(path) if format == "auto" else format
    if fmt == "instance":
        inst = load_instance(path)
        if cluster is not None:
            inst = check_instance(Instance(cluster, inst.jobs, inst.metadata))
        return inst, None
    if fmt == "philly":
        return read_philly(path, start=start, limit=limit, cluster=cluster, dnn=dnn, seed=seed)
    default = cluster if cluster is not None else Cluster.homogeneous(64, 8)
    if fmt == "pai":
        inst, report = read_pai(path, default)
    elif fmt == "helios":
        inst, report = read_helios(path, default)
    elif fmt == "tiresias":
        inst, report = read_tiresias(path, default)
    else:
        inst, report = read_alibaba_pods(path, cluster=cluster)
    if start or limit is not None:
        order = sorted(inst.jobs, key=lambda j: j.arrival)
        kept = order[start:None if limit is None else start + limit]
        report.filtered["outside the window"] += len(order) - len(kept)
        report.jobs = len(kept)
        inst = inst.replace_jobs(kept)
    if dnn:
        from .assign import assign_models

        inst = assign_models(inst, seed=seed)
        report.notes.append(f"models and configurations assigned by asrpt.traces.assign (seed {seed})")
    return inst, report
