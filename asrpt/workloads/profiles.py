"""Published statistics of production GPU clusters: the calibration targets of the generators.

This module owns the numbers the workload generators (:mod:`asrpt.workloads.recurring`) are
calibrated to, where each number comes from, and the functions that recompute them from the
shared copies of the source files (so a test can check that the numbers shipped here are the
ones in the data).

Profiles (:data:`PROFILES`, :func:`get_profile`):

- ``"philly"``: the Microsoft Philly trace (ATC'19) as pre-processed by the Pollux authors,
  ``$ASRPT_SHARED/traces/philly-pollux-processed/philly.csv`` (82,247 jobs). Run time (``duration``)
  median 1,144 s and mean 13,135.9 s, percentiles, the GPU-count distribution (1: 93.2 %,
  2: 2.2 %, 4: 2.3 %, 8: 2.0 %, 16: 0.24 %, 32: 0.08 %, 64 and 128: 9 jobs; the 14 jobs of 12
  and 24 GPUs are left out of the table), and the submission shares by hour of day and weekday.
- ``"helios-venus"``, ``"helios-earth"``, ``"helios-saturn"``, ``"helios-uranus"``,
  ``"helios"`` (all four): the SenseTime Helios per-cluster summary (SC'21),
  ``$ASRPT_SHARED/traces/helios-cluster-summary/helios_cluster_summary.csv``: mean and median run
  time of GPU jobs and mean and median GPUs per GPU job. The summary has no GPU-count
  distribution, no percentiles and no submission times; for those the generator uses Philly's
  shapes (documented per field below), tilted to the Helios means.

Each profile is a plain dict with keys ``source``, ``duration_median``, ``duration_mean`` (s),
``duration_min``, ``duration_max`` (s: the clip of the generated durations), ``gpu_counts``
(``{gpus: jobs}``, the shape of the GPU-count distribution), ``gpu_mean`` (the target mean, or
None to keep ``gpu_counts`` as is), ``gpu_median``, ``duration_percentiles`` (``{q: seconds}``,
Philly only), ``hour_shares`` (24 shares of submissions, hour 0 first) and ``weekday_shares``
(7 shares, Monday first).
"""

from __future__ import annotations

import csv
import datetime as _dt
import os
from typing import Any

import numpy as np

from .._validation import Options, validate_params
from ..errors import TraceError

__all__ = ["PROFILES", "get_profile", "philly_statistics", "helios_statistics"]

# Recomputed by philly_statistics() from philly.csv (sha256 ebffb3dd...; tests/workloads checks it).
_PHILLY_GPU_COUNTS = {1: 76627, 2: 1818, 4: 1870, 8: 1643, 16: 199, 32: 67, 64: 6, 128: 3}
_PHILLY_HOURS = [0.0531, 0.041, 0.0466, 0.046, 0.0292, 0.048, 0.0697, 0.087, 0.0462, 0.0419,
                 0.0427, 0.0362, 0.0312, 0.0294, 0.0266, 0.027, 0.0367, 0.0278, 0.0334, 0.0303,
                 0.0423, 0.0382, 0.0472, 0.0421]
_PHILLY_WEEKDAYS = [0.1232, 0.1523, 0.1626, 0.1838, 0.2061, 0.087, 0.085]

PROFILES: dict[str, dict[str, Any]] = {
    "philly": {
        "source": "Philly (ATC'19), Pollux's philly.csv: 82,247 jobs, 2017-09-04 .. 2017-12-22",
        "duration_median": 1144.0,
        "duration_mean": 13135.931401753256,
        "duration_min": 1.0,
        "duration_max": 4628226.0,
        "duration_percentiles": {10: 61.0, 25: 115.0, 50: 1144.0, 75: 2932.0, 90: 11264.8,
                                 99: 254758.42},
        "gpu_counts": _PHILLY_GPU_COUNTS,
        "gpu_mean": None,
        "gpu_median": 1,
        "hour_shares": _PHILLY_HOURS,
        "weekday_shares": _PHILLY_WEEKDAYS,
        "default_cluster": "8x8",
    },
}

# Helios summary rows (GPU jobs): avg_run_time_gpu, med_run_time_gpu, avg_gpu_num, med_gpu_num.
_HELIOS = {
    "helios-venus": ("Venus", 13040.598, 204.0, 6.736, 1),
    "helios-earth": ("Earth", 5130.609, 234.0, 2.101, 1),
    "helios-saturn": ("Saturn", 5252.927, 124.0, 4.01, 1),
    "helios-uranus": ("Uranus", 9163.725, 280.0, 4.038, 1),
    "helios": ("total", 6651.681, 206.0, 3.716, 1),
}
for _name, (_row, _mean, _median, _gmean, _gmed) in _HELIOS.items():
    PROFILES[_name] = {
        "source": f"Helios (SC'21) cluster summary, row {_row!r} (GPU jobs); GPU-count shape, "
                  "submission shares and duration clip from Philly",
        "duration_median": _median,
        "duration_mean": _mean,
        "duration_min": 1.0,
        "duration_max": 4628226.0,
        "duration_percentiles": None,
        "gpu_counts": _PHILLY_GPU_COUNTS,
        "gpu_mean": _gmean,
        "gpu_median": _gmed,
        "hour_shares": _PHILLY_HOURS,
        "weekday_shares": _PHILLY_WEEKDAYS,
        "default_cluster": "16x8",
    }
del _name, _row, _mean, _median, _gmean, _gmed


@validate_params({"name": [Options(str, set(PROFILES))]})
def get_profile(name: str) -> dict[str, Any]:
    """A copy of the calibration profile ``name`` (see the module docstring).

    Parameters
    ----------
    name : str
        One of :data:`PROFILES`.

    Returns
    -------
    dict

    Raises
    ------
    InvalidParameterError
        Unknown profile.

    Examples
    --------
    >>> p = get_profile("philly")
    >>> p["duration_median"], round(p["gpu_counts"][1] / sum(p["gpu_counts"].values()), 3)
    (1144.0, 0.932)
    >>> get_profile("helios-venus")["gpu_mean"]
    6.736
    """
    p = PROFILES[name]
    return {k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
            for k, v in p.items()}


@validate_params({"path": [str, os.PathLike]})
def philly_statistics(path) -> dict[str, Any]:
    """Recompute the ``"philly"`` profile's statistics from a copy of Pollux's philly.csv.

    Parameters
    ----------
    path : str
        The philly.csv file.

    Returns
    -------
    dict
        ``jobs``, ``duration_median``, ``duration_mean``, ``duration_min``, ``duration_max``,
        ``duration_percentiles`` (10, 25, 50, 75, 90, 99; numpy's linear interpolation),
        ``gpu_counts`` (every GPU count of the file), ``hour_shares``, ``weekday_shares``
        (rounded to 4 decimals, as shipped).

    Raises
    ------
    TraceError
        Missing file.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("timestamp,duration,num_gpus,gpu_time,cluster\\n"
    ...                  "2017-10-02 10:00:00,100.0,1,100.0,a\\n2017-10-03 11:00:00,300.0,2,600.0,b\\n")
    >>> s = philly_statistics(path)
    >>> s["jobs"], s["duration_median"], s["gpu_counts"]
    (2, 200.0, {1: 1, 2: 1})
    """
    if not os.path.exists(path):
        raise TraceError(f"philly_statistics: {os.fspath(path)}: no such file")
    durations, gpus, hours, days = [], [], [], []
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if not row.get("timestamp"):
                continue
            t = _dt.datetime.strptime(row["timestamp"], "%Y-%m-%d %H:%M:%S")
            durations.append(float(row["duration"]))
            gpus.append(int(row["num_gpus"]))
            hours.append(t.hour)
            days.append(t.weekday())
    d = np.asarray(durations)
    n = len(d)
    counts: dict[int, int] = {}
    for g in gpus:
        counts[g] = counts.get(g, 0) + 1
    return {
        "jobs": n,
        "duration_median": float(np.median(d)),
        "duration_mean": float(d.mean()),
        "duration_min": float(d.min()),
        "duration_max": float(d.max()),
        "duration_percentiles": {q: float(np.percentile(d, q)) for q in (10, 25, 50, 75, 90, 99)},
        "gpu_counts": dict(sorted(counts.items())),
        "hour_shares": [round(hours.count(h) / n, 4) for h in range(24)],
        "weekday_shares": [round(days.count(k) / n, 4) for k in range(7)],
    }


@validate_params({"path": [str, os.PathLike], "cluster": [str]})
def helios_statistics(path, cluster: str) -> dict[str, float]:
    """Read one row of the Helios cluster summary: the targets of a ``"helios-*"`` profile.

    Parameters
    ----------
    path : str
        helios_cluster_summary.csv.
    cluster : str
        The row id: ``"Venus"``, ``"Earth"``, ``"Saturn"``, ``"Uranus"`` or ``"total"``.

    Returns
    -------
    dict
        ``duration_mean``, ``duration_median`` (GPU jobs' run time, s), ``gpu_mean``,
        ``gpu_median``.

    Raises
    ------
    TraceError
        Missing file or row.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "h.csv")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("id,avg_run_time_gpu,med_run_time_gpu,avg_gpu_num,med_gpu_num\\nX,10.5,2.0,3.5,1.0\\n")
    >>> helios_statistics(path, "X")
    {'duration_mean': 10.5, 'duration_median': 2.0, 'gpu_mean': 3.5, 'gpu_median': 1.0}
    """
    if not os.path.exists(path):
        raise TraceError(f"helios_statistics: {os.fspath(path)}: no such file")
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row.get("id") == cluster:
                return {"duration_mean": float(row["avg_run_time_gpu"]),
                        "duration_median": float(row["med_run_time_gpu"]),
                        "gpu_mean": float(row["avg_gpu_num"]),
                        "gpu_median": float(row["med_gpu_num"])}
    raise TraceError(f"helios_statistics: {os.fspath(path)}: no row {cluster!r}")

