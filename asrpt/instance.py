"""The instance model: Cluster, Server, Job, Instance; JSON load, save and validation.

An *instance* is a cluster plus a set of jobs plus free-form metadata. Everything in asrpt starts
from one. This module owns the data model and the instance file format (documented field by field
in ``docs/instance-format.md``; JSON Schema in ``asrpt/schema/instance.schema.json``); it knows
nothing about scheduling.

Jobs come in two kinds:

- *abstract* jobs give a ``processing_time`` P_j (seconds on their g_j GPUs, placement-independent);
- *DNN* jobs give a ``model`` from the zoo, a ``parallelism`` (dp, pp, tp) and ``iterations``;
  their processing time follows from the performance model (:mod:`asrpt.dnn`).

Numbers are kept as given: ``int``, ``float`` or, in exact mode, :class:`fractions.Fraction`
(``load_instance(..., exact=True)`` reads every decimal literal as the exact rational it spells;
the file may also hold rationals as strings such as ``"1/3"``). Ties between jobs are always broken
by :func:`id_key`, a natural order on ids ("job9" < "job10").

Validation collects every problem with its location (``jobs[3].gpus: 9 exceeds the cluster's 8
GPUs``) and raises :class:`~asrpt.errors.InvalidInstance`; unknown fields get a "did you mean".

Examples
--------
>>> inst = parse_instance({"cluster": {"servers": [{"gpus": 4}, {"gpus": 4}]},
...                        "jobs": [{"id": "a", "arrival": 0, "gpus": 2, "processing_time": 5}]})
>>> inst.cluster.total_gpus, inst.jobs[0].processing_time
(8, 5)
>>> parse_instance(instance_to_dict(inst)) == inst
True
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from functools import cached_property
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence, Union

from ._validation import is_integer, is_number
from .errors import InvalidInstance, Problem, did_you_mean

__all__ = [
    "Number",
    "Server",
    "Cluster",
    "Parallelism",
    "Job",
    "JOB_STATUSES",
    "Instance",
    "FORMAT",
    "id_key",
    "parse_instance",
    "instance_problems",
    "load_instance",
    "loads_instance",
    "read_text",
    "read_json",
    "instance_to_dict",
    "dumps_instance",
    "save_instance",
    "parse_number",
]

FORMAT = "asrpt-instance/1"
Number = Union[int, float, Fraction]

_RATIONAL = re.compile(r"^\s*-?\d+\s*/\s*\d+\s*$")
_ID_PART = re.compile(r"(\d+)")


def id_key(job_id: str) -> tuple:
    """Natural sort key of a job id: digit runs compare as numbers ("j9" < "j10").

    Every tie between jobs in asrpt (equal remaining sizes, simultaneous arrivals) is broken by
    this key, so the same instance always gives the same schedule.

    >>> sorted(["j10", "j9", "a", "j9b"], key=id_key)
    ['a', 'j9', 'j9b', 'j10']
    """
    parts = _ID_PART.split(job_id)
    return tuple((0, int(p), p) if i % 2 else (1, p, "") for i, p in enumerate(parts) if p != "")


def parse_number(value: Any, exact: bool = False) -> Number:
    """A JSON value read as a number: int, float, Fraction, or a rational string ``"p/q"``.

    With ``exact=True`` floats become the Fraction of their shortest decimal representation.
    Raises ``ValueError`` for anything else (bools included).

    >>> parse_number("1/3"), parse_number(0.5, exact=True), parse_number(2)
    (Fraction(1, 3), Fraction(1, 2), 2)
    """
    if isinstance(value, str) and _RATIONAL.match(value):
        num, den = (int(s) for s in value.split("/"))
        if den == 0:
            raise ValueError("a rational with denominator 0")
        q = Fraction(num, den)
        return q.numerator if q.denominator == 1 else q
    if not is_number(value):
        raise ValueError("not a number")
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else value
    if is_integer(value):
        return int(value)
    value = float(value)
    if exact:
        if not math.isfinite(value):
            return value
        q = Fraction(repr(value))
        return q.numerator if q.denominator == 1 else q
    return value


def _number_to_json(x: Number) -> Any:
    if isinstance(x, Fraction):
        return x.numerator if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
    if is_integer(x):
        return int(x)
    return float(x)


def _freeze(value: Any) -> Any:
    """Deep read-only copy of JSON-like metadata."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    if isinstance(value, Fraction):
        return _number_to_json(value)
    return value


# ---------------------------------------------------------------------------------------------
# Field checks shared by the dataclasses and the JSON loader (one definition of each rule).
# ---------------------------------------------------------------------------------------------


class _Checker:
    """Accumulates problems for one object; ``loc`` is the JSON path of the object."""

    def __init__(self, loc: str, problems: list[Problem]):
        self.loc = loc
        self.problems = problems

    def at(self, name: str) -> str:
        return f"{self.loc}.{name}" if self.loc else name

    def add(self, name: str, message: str) -> None:
        self.problems.append(Problem(self.at(name), message))

    def number(self, obj: Mapping, name: str, *, minimum=0, strict=False, required=True,
               exact=False):
        if name not in obj or obj[name] is None:
            if required:
                self.add(name, "is required")
            return None
        raw = obj[name]
        try:
            value = parse_number(raw, exact=exact)
        except ValueError:
            self.add(name, f"must be a number, got {_show(raw)}")
            return None
        if isinstance(value, float) and not math.isfinite(value):
            self.add(name, f"must be finite, got {_show(raw)}")
            return None
        if value < minimum or (strict and value == minimum):
            rel = ">" if strict else ">="
            self.add(name, f"must be {rel} {minimum}, got {_show(raw)}")
            return None
        return value

    def integer(self, obj: Mapping, name: str, *, minimum=1, required=True):
        if name not in obj or obj[name] is None:
            if required:
                self.add(name, "is required")
            return None
        raw = obj[name]
        if not is_integer(raw):
            self.add(name, f"must be an integer, got {_show(raw)}")
            return None
        if raw < minimum:
            self.add(name, f"must be >= {minimum}, got {raw}")
            return None
        return int(raw)

    def string(self, obj: Mapping, name: str, *, required=False):
        if name not in obj or obj[name] is None:
            if required:
                self.add(name, "is required")
            return None
        raw = obj[name]
        if not isinstance(raw, str):
            self.add(name, f"must be a string, got {_show(raw)}")
            return None
        if not raw.strip():
            self.add(name, "must be a non-empty string")
            return None
        return raw

    def unknown(self, obj: Mapping, known: Iterable[str]) -> None:
        known = list(known)
        for key in obj:
            if key not in known:
                self.problems.append(
                    Problem(self.at(str(key)), f"unknown field{did_you_mean(str(key), known)}")
                )


def _show(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------------------------------------
# The data model
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Server:
    """A server: ``gpus`` GPUs of one ``gpu_type`` (optional; the cluster default applies).

    >>> Server(8, "A100").gpus
    8
    """

    gpus: int
    gpu_type: str | None = None

    def __post_init__(self):
        problems: list[Problem] = []
        c = _Checker("", problems)
        c.integer({"gpus": self.gpus}, "gpus")
        c.string({"gpu_type": self.gpu_type}, "gpu_type")
        if problems:
            raise InvalidInstance(problems)


@dataclass(frozen=True)
class Cluster:
    """Servers plus optional defaults: GPU type and the two bandwidth tiers (bytes per second).

    ``intra_bandwidth`` is the per-GPU bandwidth inside a server (NVLink/PCIe) and
    ``inter_bandwidth`` the per-server network bandwidth; ``None`` means "the GPU type's default"
    (see :mod:`asrpt.dnn.hardware`).

    >>> c = Cluster.homogeneous(2, 4)
    >>> c.total_gpus, c.n_servers, c.max_server_gpus
    (8, 2, 4)
    """

    servers: tuple[Server, ...]
    gpu_type: str | None = None
    intra_bandwidth: float | None = None
    inter_bandwidth: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "servers", tuple(self.servers))
        problems: list[Problem] = []
        c = _Checker("", problems)
        if not self.servers:
            c.add("servers", "must list at least one server")
        for i, s in enumerate(self.servers):
            if not isinstance(s, Server):
                c.add(f"servers[{i}]", f"must be a Server, got {type(s).__name__}")
        c.string({"gpu_type": self.gpu_type}, "gpu_type")
        for name in ("intra_bandwidth", "inter_bandwidth"):
            c.number({name: getattr(self, name)}, name, strict=True, required=False)
        if problems:
            raise InvalidInstance(problems)

    @classmethod
    def homogeneous(cls, n_servers: int, gpus_per_server: int, gpu_type: str | None = None,
                    **bandwidths) -> "Cluster":
        """``n_servers`` identical servers of ``gpus_per_server`` GPUs."""
        return cls(tuple(Server(gpus_per_server) for _ in range(n_servers)), gpu_type, **bandwidths)

    @classmethod
    def from_spec(cls, spec: str, gpu_type: str | None = None) -> "Cluster":
        """Parse ``"64x8"`` (64 servers of 8 GPUs) or ``"8,8,4"`` (one server per number).

        >>> Cluster.from_spec("2x4").total_gpus, Cluster.from_spec("8,8,4").total_gpus
        (8, 20)
        """
        text = spec.strip().lower()
        m = re.fullmatch(r"(\d+)\s*x\s*(\d+)", text)
        try:
            if m:
                n, g = int(m.group(1)), int(m.group(2))
                if n < 1 or g < 1:
                    raise ValueError
                return cls.homogeneous(n, g, gpu_type)
            sizes = [int(p) for p in text.split(",")]
            if not sizes or min(sizes) < 1:
                raise ValueError
            return cls(tuple(Server(g) for g in sizes), gpu_type)
        except (ValueError, InvalidInstance):
            raise InvalidInstance(
                [Problem("cluster", f"{spec!r} is not a cluster spec such as '64x8' or '8,8,4'")]
            ) from None

    @property
    def total_gpus(self) -> int:
        """M, the number of GPUs in the cluster."""
        return sum(s.gpus for s in self.servers)

    @property
    def n_servers(self) -> int:
        return len(self.servers)

    @property
    def max_server_gpus(self) -> int:
        return max(s.gpus for s in self.servers)

    @property
    def server_gpus(self) -> tuple[int, ...]:
        """GPUs per server, in server order."""
        return tuple(s.gpus for s in self.servers)

    def gpu_type_of(self, server: int) -> str | None:
        """The GPU type of server ``server`` (its own, else the cluster default)."""
        return self.servers[server].gpu_type or self.gpu_type


@dataclass(frozen=True, slots=True)
class Parallelism:
    """A parallel configuration: data ``dp`` x pipeline ``pp`` x tensor ``tp`` degrees.

    >>> Parallelism(2, 4, 8).gpus
    64
    """

    dp: int = 1
    pp: int = 1
    tp: int = 1

    def __post_init__(self):
        problems: list[Problem] = []
        c = _Checker("", problems)
        for name in ("dp", "pp", "tp"):
            c.integer({name: getattr(self, name)}, name)
        if problems:
            raise InvalidInstance(problems)

    @property
    def gpus(self) -> int:
        return self.dp * self.pp * self.tp

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.dp, self.pp, self.tp)


#: How a job's run ended (``Job.status``): ``succeeded`` (ran to its end), ``failed`` (stopped by
#: an error, typically early) or ``killed`` (stopped by its user or the system).
JOB_STATUSES: tuple[str, ...] = ("succeeded", "failed", "killed")

_ABSTRACT_FIELDS = ("processing_time", "predicted_processing_time")
_DNN_FIELDS = ("model", "parallelism", "batch_size", "iterations", "predicted_iterations",
               "precision")
_JOB_FIELDS = ("id", "arrival", "gpus", "weight", "instances", "user", "group", "dataset",
               "status", "meta") + _ABSTRACT_FIELDS + _DNN_FIELDS


@dataclass(frozen=True)
class Job:
    """A training job: rigid demand of ``gpus`` GPUs (gang, all or nothing).

    Abstract jobs give ``processing_time`` (and optionally ``predicted_processing_time``); DNN
    jobs give ``model``, ``parallelism`` (defaults to pure data parallelism over ``gpus``),
    ``iterations`` and optionally ``predicted_iterations``, ``batch_size`` (global, samples per
    iteration; the model's default if omitted) and ``precision``. ``instances`` (optional) splits
    the job into that many equal gang instances, each of which must sit inside one server.
    ``user``, ``group`` and ``dataset`` describe recurring jobs; ``status`` (one of
    :data:`JOB_STATUSES`) is how the run ended, revealed to predictors only when the job completes
    (a failed run stops early; predictors keep it out of their duration history); ``meta`` holds
    anything else (e.g. a trace's own duration).

    >>> Job("a", 0, 2, processing_time=5).is_abstract
    True
    """

    id: str
    arrival: Number
    gpus: int
    weight: Number = 1
    processing_time: Number | None = None
    predicted_processing_time: Number | None = None
    model: str | None = None
    parallelism: Parallelism | None = None
    batch_size: int | None = None
    iterations: int | None = None
    predicted_iterations: Number | None = None
    precision: str | None = None
    instances: int | None = None
    user: str | None = None
    group: str | None = None
    dataset: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    status: str | None = None

    def __post_init__(self):
        if self.model is not None and self.parallelism is None and is_integer(self.gpus):
            object.__setattr__(self, "parallelism", Parallelism(int(self.gpus), 1, 1))
        object.__setattr__(self, "meta", _freeze(self.meta or {}))
        problems: list[Problem] = []
        _check_job_fields(_Checker("", problems), {f.name: getattr(self, f.name) for f in fields(self)})
        if problems:
            raise InvalidInstance(problems)

    @property
    def is_abstract(self) -> bool:
        """True when the job is given by a processing time rather than a DNN model."""
        return self.model is None

    @property
    def gpu_per_instance(self) -> int:
        """GPUs of one gang instance (all of ``gpus`` when ``instances`` is not set)."""
        return self.gpus // (self.instances or 1)


def _check_job_fields(c: _Checker, obj: Mapping[str, Any], exact: bool = False) -> dict:
    """Validate one job's fields (raw JSON or dataclass values); return the parsed values."""
    out: dict[str, Any] = {}
    out["id"] = c.string(obj, "id", required=True)
    out["arrival"] = c.number(obj, "arrival", exact=exact)
    out["weight"] = c.number(obj, "weight", strict=True, required=False, exact=exact)
    out["instances"] = c.integer(obj, "instances", required=False)
    for name in ("user", "group", "dataset"):
        out[name] = c.string(obj, name)
    out["status"] = c.string(obj, "status")
    if out["status"] is not None and out["status"] not in JOB_STATUSES:
        c.add("status", f"must be one of {', '.join(JOB_STATUSES)}, got {_show(out['status'])}")
    meta = obj.get("meta")
    if meta is not None and not isinstance(meta, Mapping):
        c.add("meta", f"must be an object, got {_show(meta)}")
    is_dnn = obj.get("model") is not None
    if is_dnn:
        for name in _ABSTRACT_FIELDS:
            if obj.get(name) is not None:
                c.add(name, "a DNN job (with 'model') takes iterations, not a processing time")
        out["model"] = c.string(obj, "model", required=True)
        par = obj.get("parallelism")
        if isinstance(par, Parallelism):
            out["parallelism"] = par
        elif par is not None:
            out["parallelism"] = _parse_parallelism(_Checker(c.at("parallelism"), c.problems), par)
        else:
            out["parallelism"] = None
        out["batch_size"] = c.integer(obj, "batch_size", required=False)
        out["iterations"] = c.integer(obj, "iterations")
        out["predicted_iterations"] = c.number(obj, "predicted_iterations", strict=True,
                                               required=False, exact=exact)
        out["precision"] = c.string(obj, "precision")
        gpus = c.integer(obj, "gpus", required=out["parallelism"] is None)
        if gpus is None and out["parallelism"] is not None:
            gpus = out["parallelism"].gpus
        elif gpus is not None and out["parallelism"] is not None and out["parallelism"].gpus != gpus:
            p = out["parallelism"]
            c.add("parallelism", f"dp*pp*tp = {p.dp}*{p.pp}*{p.tp} = {p.gpus} differs from gpus = {gpus}")
        out["gpus"] = gpus
    else:
        for name in _DNN_FIELDS:
            if obj.get(name) is not None:
                c.add(name, "only DNN jobs (with 'model') take this field")
        if obj.get("processing_time") is None:
            c.add("processing_time", "is required (or give 'model' for a DNN job)")
        else:
            out["processing_time"] = c.number(obj, "processing_time", strict=True, exact=exact)
        out["predicted_processing_time"] = c.number(obj, "predicted_processing_time", strict=True,
                                                    required=False, exact=exact)
        out["gpus"] = c.integer(obj, "gpus")
    if out["instances"] is not None and out["gpus"] is not None and out["gpus"] % out["instances"]:
        c.add("instances", f"{out['instances']} instances do not divide gpus = {out['gpus']}")
    return out


def _parse_parallelism(c: _Checker, raw: Any) -> Parallelism | None:
    if not isinstance(raw, Mapping):
        c.problems.append(Problem(c.loc, f"must be an object {{dp, pp, tp}}, got {_show(raw)}"))
        return None
    c.unknown(raw, ("dp", "pp", "tp"))
    values = {k: c.integer(raw, k, required=False) for k in ("dp", "pp", "tp")}
    if any(raw.get(k) is not None and values[k] is None for k in values):
        return None
    return Parallelism(**{k: v for k, v in values.items() if v is not None})


@dataclass(frozen=True)
class Instance:
    """A cluster, its jobs (in file order) and free-form metadata.

    Construction checks everything that spans several objects: unique ids, every job's demand
    within the cluster, gang instances that fit whole servers, and DNN jobs against the zoo.

    >>> inst = Instance(Cluster.homogeneous(1, 4), (Job("a", 0, 2, processing_time=5),))
    >>> inst.job("a").gpus, inst.is_abstract
    (2, True)
    """

    cluster: Cluster
    jobs: tuple[Job, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "metadata", _freeze(self.metadata or {}))
        problems = _instance_problems(self.cluster, self.jobs)
        if not problems and any(not j.is_abstract for j in self.jobs):
            problems = _dnn_problems(self.cluster, self.jobs)
        if problems:
            raise InvalidInstance(problems)

    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def is_abstract(self) -> bool:
        """True when every job is abstract (given by a processing time)."""
        return all(j.is_abstract for j in self.jobs)

    @cached_property
    def _jobs_by_id(self) -> Mapping[str, Job]:
        return MappingProxyType({j.id: j for j in self.jobs})

    def job(self, job_id: str) -> Job:
        """The job with id ``job_id`` (KeyError naming the id otherwise)."""
        try:
            return self._jobs_by_id[job_id]
        except KeyError:
            raise KeyError(f"no job with id {job_id!r}") from None

    def replace_jobs(self, jobs: Iterable[Job]) -> "Instance":
        """A copy with another job list (validated again)."""
        return replace(self, jobs=tuple(jobs))


def _instance_problems(cluster: Cluster, jobs: Sequence[Any]) -> list[Problem]:
    """Checks that span objects. ``jobs`` are Jobs or partially parsed job dicts (values may be
    None when the job had problems of its own), so these checks run even on a broken file."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    total = cluster.total_gpus
    biggest = cluster.max_server_gpus
    for i, job in enumerate(jobs):
        get = job.get if isinstance(job, Mapping) else (lambda name, j=job: getattr(j, name))
        loc = f"jobs[{i}]"
        job_id, gpus, instances = get("id"), get("gpus"), get("instances")
        if job_id is not None:
            if job_id in seen:
                problems.append(Problem(f"{loc}.id", f"duplicate id {job_id!r} (also jobs[{seen[job_id]}])"))
            else:
                seen[job_id] = i
        if gpus is None:
            continue
        if gpus > total:
            problems.append(Problem(f"{loc}.gpus", f"{gpus} exceeds the cluster's {total} GPUs"))
        elif instances and gpus % instances == 0:
            per = gpus // instances
            if per > biggest:
                problems.append(Problem(
                    f"{loc}.instances",
                    f"an instance of {per} GPUs does not fit the largest server ({biggest} GPUs)"))
            elif sum(s.gpus // per for s in cluster.servers) < instances:
                problems.append(Problem(
                    f"{loc}.instances",
                    f"{instances} instances of {per} GPUs do not fit the cluster's servers"))
    return problems


def _dnn_problems(cluster: Cluster, jobs: Sequence[Job]) -> list[Problem]:
    """Check DNN jobs against the model zoo and GPU table (asrpt.dnn), if it is importable."""
    try:
        from .dnn import validate as dnn_validate  # local import: asrpt.dnn imports this module
    except ImportError:
        return [Problem(f"jobs[{i}].model", "DNN jobs need the asrpt.dnn package, which is missing")
                for i, j in enumerate(jobs) if not j.is_abstract]
    return dnn_validate.instance_problems(cluster, jobs)


# ---------------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------------

_TOP_FIELDS = ("format", "cluster", "jobs", "metadata")
_CLUSTER_FIELDS = ("servers", "gpu_type", "intra_bandwidth", "inter_bandwidth")
_SERVER_FIELDS = ("gpus", "gpu_type", "count")


def instance_problems(data: Any, *, exact: bool = False) -> tuple[list[Problem], Instance | None]:
    """Validate a JSON-like object; return ``(problems, instance)`` (instance None if problems).

    This never raises for bad data: every problem is returned with its location.

    >>> problems, inst = instance_problems({"cluster": {"servers": [{"gpus": 8}]},
    ...     "jobs": [{"id": "a", "arrival": 0, "gpus": 9, "processing_time": 1}]})
    >>> [str(p) for p in problems]
    ["jobs[0].gpus: 9 exceeds the cluster's 8 GPUs"]
    """
    problems: list[Problem] = []
    if not isinstance(data, Mapping):
        return [Problem("", f"an instance must be a JSON object, got {_show(data)}")], None
    top = _Checker("", problems)
    top.unknown(data, _TOP_FIELDS)
    fmt = data.get("format")
    if fmt is not None and fmt != FORMAT:
        top.add("format", f"unsupported format {_show(fmt)}; this asrpt reads {FORMAT!r}")
    cluster = _parse_cluster(data.get("cluster"), problems, exact)
    jobs_raw = data.get("jobs")
    jobs: list[Job] = []
    partial: list[dict] = []
    if jobs_raw is None:
        top.add("jobs", "is required")
    elif not isinstance(jobs_raw, list):
        top.add("jobs", f"must be a list, got {_show(jobs_raw)}")
    else:
        for i, raw in enumerate(jobs_raw):
            job, values = _parse_job(raw, f"jobs[{i}]", problems, exact)
            partial.append(values)
            if job is not None:
                jobs.append(job)
    metadata = data.get("metadata", {})
    if not isinstance(metadata, Mapping):
        top.add("metadata", f"must be an object, got {_show(metadata)}")
        metadata = {}
    if cluster is not None:
        problems.extend(_instance_problems(cluster, partial))
    if problems or cluster is None:
        return problems, None
    if any(not j.is_abstract for j in jobs):
        problems.extend(_dnn_problems(cluster, jobs))
        if problems:
            return problems, None
    return [], Instance(cluster, tuple(jobs), metadata)


def _parse_cluster(raw: Any, problems: list[Problem], exact: bool) -> Cluster | None:
    c = _Checker("cluster", problems)
    if raw is None:
        problems.append(Problem("cluster", "is required"))
        return None
    if not isinstance(raw, Mapping):
        problems.append(Problem("cluster", f"must be an object, got {_show(raw)}"))
        return None
    before = len(problems)
    c.unknown(raw, _CLUSTER_FIELDS)
    gpu_type = c.string(raw, "gpu_type")
    bw = {n: c.number(raw, n, strict=True, required=False, exact=exact)
          for n in ("intra_bandwidth", "inter_bandwidth")}
    servers: list[Server] = []
    raw_servers = raw.get("servers")
    if raw_servers is None:
        c.add("servers", "is required")
    elif not isinstance(raw_servers, list) or not raw_servers:
        c.add("servers", f"must be a non-empty list, got {_show(raw_servers)}")
    else:
        for i, s in enumerate(raw_servers):
            sc = _Checker(f"cluster.servers[{i}]", problems)
            if not isinstance(s, Mapping):
                problems.append(Problem(sc.loc, f"must be an object such as {{\"gpus\": 8}}, got {_show(s)}"))
                continue
            sc.unknown(s, _SERVER_FIELDS)
            gpus = sc.integer(s, "gpus")
            count = sc.integer(s, "count", required=False)
            stype = sc.string(s, "gpu_type")
            if gpus is not None:
                servers.extend(Server(gpus, stype) for _ in range(count or 1))
    if len(problems) > before:
        return None
    return Cluster(tuple(servers), gpu_type, **bw)


def _parse_job(raw: Any, loc: str, problems: list[Problem], exact: bool) -> tuple[Job | None, dict]:
    if not isinstance(raw, Mapping):
        problems.append(Problem(loc, f"must be an object, got {_show(raw)}"))
        return None, {}
    c = _Checker(loc, problems)
    before = len(problems)
    c.unknown(raw, _JOB_FIELDS)
    values = _check_job_fields(c, raw, exact=exact)
    if len(problems) > before:
        return None, values
    kwargs = {k: v for k, v in values.items() if v is not None}
    if raw.get("meta") is not None:
        kwargs["meta"] = raw["meta"]
    return Job(**kwargs), values


def parse_instance(data: Any, *, source: str | None = None, exact: bool = False) -> Instance:
    """Build an Instance from a JSON-like object, or raise InvalidInstance listing every problem.

    ``exact=True`` reads every number as an exact rational (see :func:`parse_number`).
    """
    problems, inst = instance_problems(data, exact=exact)
    if problems:
        raise InvalidInstance(problems, source=source)
    assert inst is not None
    return inst


def read_json(text: str, *, source: str | None = None, exact: bool = False) -> Any:
    """Parse JSON text for an instance (floats as exact rationals with ``exact=True``).

    Raises InvalidInstance naming the line and column of malformed JSON.
    """
    try:
        return json.loads(text, parse_float=(lambda s: parse_number(Fraction(s), exact=True)) if exact else float)
    except json.JSONDecodeError as exc:
        raise InvalidInstance([Problem("", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")],
                              source=source) from None
    except RecursionError:
        raise InvalidInstance([Problem("", "invalid JSON: nested too deeply")], source=source) from None


def read_text(path: str | os.PathLike) -> str:
    """The text of an instance file; InvalidInstance for a missing, directory or unreadable file."""
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise InvalidInstance([Problem("", "no such file")], source=source) from None
    except IsADirectoryError:
        raise InvalidInstance([Problem("", "is a directory, not an instance file")], source=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInstance([Problem("", f"cannot read: {exc}")], source=source) from None


def loads_instance(text: str, *, source: str | None = None, exact: bool = False) -> Instance:
    """Parse an instance from JSON text (InvalidInstance also for malformed JSON)."""
    return parse_instance(read_json(text, source=source, exact=exact), source=source, exact=exact)


def load_instance(path: str | os.PathLike, *, exact: bool = False) -> Instance:
    """Read and validate an instance file.

    Raises InvalidInstance (carrying every problem with its location) for a missing or unreadable
    file, malformed JSON, or an invalid instance.
    """
    source = os.fspath(path)
    return loads_instance(read_text(source), source=source, exact=exact)


def instance_to_dict(inst: Instance) -> dict:
    """The canonical JSON-ready dict of an instance (what :func:`save_instance` writes).

    Runs of identical servers are written once with a ``count``; optional fields equal to their
    defaults are omitted.
    """
    servers: list[dict] = []
    for s in inst.cluster.servers:
        entry = {"gpus": s.gpus}
        if s.gpu_type is not None:
            entry["gpu_type"] = s.gpu_type
        if servers and {k: v for k, v in servers[-1].items() if k != "count"} == entry:
            servers[-1]["count"] = servers[-1].get("count", 1) + 1
        else:
            servers.append(entry)
    cluster: dict[str, Any] = {"servers": servers}
    for name in ("gpu_type", "intra_bandwidth", "inter_bandwidth"):
        value = getattr(inst.cluster, name)
        if value is not None:
            cluster[name] = _number_to_json(value) if name != "gpu_type" else value
    jobs = []
    for j in inst.jobs:
        d: dict[str, Any] = {"id": j.id, "arrival": _number_to_json(j.arrival), "gpus": j.gpus}
        if j.weight != 1:
            d["weight"] = _number_to_json(j.weight)
        for name in ("processing_time", "predicted_processing_time", "predicted_iterations"):
            value = getattr(j, name)
            if value is not None:
                d[name] = _number_to_json(value)
        for name in ("model", "batch_size", "iterations", "precision", "instances", "user",
                     "group", "dataset", "status"):
            value = getattr(j, name)
            if value is not None:
                d[name] = value
        if j.parallelism is not None:
            p = j.parallelism
            d["parallelism"] = {"dp": p.dp, "pp": p.pp, "tp": p.tp}
        if j.meta:
            d["meta"] = _thaw(j.meta)
        jobs.append(d)
    out: dict[str, Any] = {"format": FORMAT, "cluster": cluster, "jobs": jobs}
    if inst.metadata:
        out["metadata"] = _thaw(inst.metadata)
    return out


def dumps_instance(inst: Instance) -> str:
    """The instance as JSON text, one job per line (deterministic: same instance, same bytes)."""
    d = instance_to_dict(inst)

    def one(x: Any) -> str:
        return json.dumps(x, allow_nan=False, separators=(", ", ": "))

    lines = ["{", f' "format": {one(d["format"])},', f' "cluster": {one(d["cluster"])},']
    if d["jobs"]:
        lines.append(' "jobs": [')
        lines.extend(f"  {one(j)}," for j in d["jobs"])
        lines[-1] = lines[-1][:-1]
        lines.append(" ]" + ("," if "metadata" in d else ""))
    else:
        lines.append(' "jobs": []' + ("," if "metadata" in d else ""))
    if "metadata" in d:
        lines.append(f' "metadata": {one(d["metadata"])}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def save_instance(inst: Instance, path: str | os.PathLike) -> None:
    """Write an instance file atomically (a temporary file renamed into place)."""
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(dumps_instance(inst))
    os.replace(tmp, path)
