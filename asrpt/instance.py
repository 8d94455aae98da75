"""The instance model: Cluster, Server, Job, Instance; JSON load, save and validation.

An *instance* is a cluster plus a set of jobs plus free-form metadata. Everything in asrpt starts
from one. This module owns the data model and the instance file format (documented field by field
in ``docs/instance-format.md``; JSON Schema in ``asrpt/schema/instance.schema.json``); it knows
nothing about scheduling.

Jobs come in two kinds:

- *abstract* jobs give a ``processing_time`` P_j (seconds on their g_j GPUs, placement-independent);
- *DNN* jobs give a ``model`` from the zoo, a ``parallelism`` (dp, pp, tp) and ``iterations``;
  their processing time follows from the performance model (:mod:`asrpt.dnn`).

This module imports nothing of :mod:`asrpt.dnn` (which is built on these data types): it checks a
DNN job's fields, not whether its model is in the zoo or fits the cluster's GPUs. Those checks are
:mod:`asrpt.loading`'s, whose loaders (the ones the commands use, and ``asrpt.load_instance``) run
this module's and then the DNN checks.

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
from collections import abc as _abc
from dataclasses import MISSING, dataclass, field, fields, replace
from fractions import Fraction
from functools import cached_property
from types import MappingProxyType
from collections.abc import Mapping  # not typing.Mapping: its isinstance is several times slower
from typing import Any, Iterable, Sequence, Union

from ._frozen import FrozenMapping
from ._slots import slot_builder
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
    "LIMITS",
]

FORMAT = "asrpt-instance/1"
Number = Union[int, float, Fraction]

#: The limits every instance obeys (documented in docs/instance-format.md, section "Limits").
#: They keep every command's time and memory proportional to the file's size, keep numbers
#: inside the range where float arithmetic is exact enough, and are checked with a located error.
LIMITS = MappingProxyType({
    "file_bytes": 16 * 2**20,     # size of an instance file
    "nesting": 32,                # depth of nested JSON objects/lists (metadata and meta included)
    "digits": 30,                 # digits of an integer literal; characters of a float literal: 40
    "string_length": 256,         # ids, names, user/group/dataset, gpu types
    "jobs": 1_000_000,            # jobs in one instance
    "servers": 100_000,           # servers after expanding "count"
    "server_gpus": 65536,         # GPUs of one server (the parallel-degree limit: one job on one server)
    "parallel_degree": 65536,     # each of dp, pp, tp, and their product
    "time": 1e12,                 # arrival and processing times, seconds (31,700 years)
    "weight": 1e9,                # job weights (and their inverse: weights >= 1e-9)
    "count": 1e12,                # iterations, batch size, predicted iterations
    "bandwidth": 1e18,            # bytes per second
    "resolution": 2 ** 20,        # float data: P_j >= this many ulps of a_j + P_j
})

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
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
    kind = type(value)
    if kind is int or (kind is float and not exact):  # the common case, checked first
        return value
    if isinstance(value, str) and _RATIONAL.match(value):
        if max(len(t.strip().lstrip("-")) for t in value.split("/")) > LIMITS["digits"]:
            raise ValueError(f"a rational with more than {LIMITS['digits']} digits")
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
        return FrozenMapping({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


#: the meta of every job without one (read-only, so one object serves them all)
_NO_META: Mapping[str, Any] = FrozenMapping()


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
               exact=False, maximum=None):
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
        if maximum is not None and value > maximum:
            self.add(name, f"must be <= {maximum:g} (the format's limit), got {_show(raw)}")
            return None
        return value

    def integer(self, obj: Mapping, name: str, *, minimum=1, required=True, maximum=None):
        if name not in obj or obj[name] is None:
            if required:
                self.add(name, "is required")
            return None
        raw = obj[name]
        if not is_integer(raw):
            self.add(name, f"must be an integer, got {_show(raw)}")
            return None
        if raw < minimum:
            self.add(name, f"must be >= {minimum}, got {_show(raw)}")
            return None
        if maximum is not None and raw > maximum:
            self.add(name, f"must be <= {maximum:g} (the format's limit), got {_show(raw)}")
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
        problem = _string_problem(raw)
        if problem:
            self.add(name, problem)
            return None
        return raw

    def json_value(self, obj: Mapping, name: str) -> None:
        """Check free-form JSON (meta, metadata): nesting, finite numbers, encodable strings."""
        if obj.get(name) is not None:
            for where, problem in _json_value_problems(obj[name]):
                self.add(name + where, problem)

    def unknown(self, obj: Mapping, known: Iterable[str]) -> None:
        known = list(known)
        for key in obj:
            if key not in known:
                self.problems.append(
                    Problem(self.at(str(key)), f"unknown field{did_you_mean(str(key), known)}")
                )


def _show(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"an integer of {len(str(abs(value))) if value.bit_length() < 14000 else 'over 4000'} digits"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        try:
            text = repr(value)
        except (ValueError, RecursionError):
            text = f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:37] + "..."


def _string_problem(text: str) -> str | None:
    """Why a string is not allowed (too long, not encodable as UTF-8, control characters)."""
    if len(text) > LIMITS["string_length"]:
        return f"must be at most {LIMITS['string_length']} characters, got {len(text)}"
    if not text.isascii() and not _encodable(text):
        return "must be valid Unicode (it holds a lone surrogate such as \\ud800)"
    if _CONTROL.search(text):
        return "must not contain control characters"
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_value_problems(value: Any) -> list[tuple[str, str]]:
    """Problems of free-form JSON: depth over the limit, non-finite or huge numbers, strings that
    cannot be written as UTF-8. Iterative (no recursion); returns ``(path suffix, message)``."""
    out: list[tuple[str, str]] = []
    stack = [("", value, 1)]
    while stack and len(out) < 10:
        where, v, depth = stack.pop()
        t = type(v)
        if t is str:
            if not v.isascii() and not _encodable(v):
                out.append((where, "holds a string that is not valid Unicode (a lone surrogate)"))
        elif t is float:
            if not math.isfinite(v):
                out.append((where, f"must hold finite numbers only, got {v!r}"))
        elif t is int:
            if v.bit_length() > 100:
                out.append((where, f"holds {_show(v)} (more than {LIMITS['digits']} digits)"))
        elif v is None or t is bool:
            pass
        elif t is dict or t is list or t is tuple or isinstance(v, _abc.Mapping):
            if depth > LIMITS["nesting"]:
                out.append((where, f"is nested deeper than {LIMITS['nesting']} levels"))
                continue
            if t is list or t is tuple:
                stack.extend((f"{where}[{i}]", x, depth + 1) for i, x in enumerate(v))
                continue
            for k, x in v.items():
                if type(k) is not str or not _encodable(k):
                    out.append((where, f"has a key that is not a valid string: {_show(k)}"))
                    continue
                stack.append((f"{where}.{k}", x, depth + 1))
        elif isinstance(v, Fraction):
            if max(v.numerator.bit_length(), v.denominator.bit_length()) > 100:
                out.append((where, f"holds a rational with more than {LIMITS['digits']} digits"))
        elif isinstance(v, (int, float)):  # subclasses (numpy scalars are not JSON data)
            if isinstance(v, float) and not math.isfinite(v):
                out.append((where, f"must hold finite numbers only, got {v!r}"))
        else:
            out.append((where, f"must be JSON data, got a {type(v).__name__}"))
    return out


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
        c.integer({"gpus": self.gpus}, "gpus", maximum=LIMITS["server_gpus"])
        c.string({"gpu_type": self.gpu_type}, "gpu_type")
        if problems:
            raise InvalidInstance(problems)


@dataclass(frozen=True)
class Cluster:
    """Servers plus optional defaults: GPU type and the two bandwidth tiers (bytes per second).

    ``intra_bandwidth`` is the per-GPU bandwidth inside a server (NVLink/PCIe) and
    ``inter_bandwidth`` the per-server network bandwidth; ``None`` means "the GPU type's default"
    (see :mod:`asrpt.dnn.hardware`).

    ``servers_per_switch`` groups the servers under network switches: servers ``0..N-1`` hang on
    switch 0, ``N..2N-1`` on switch 1, and so on (it must divide the number of servers). ``None``
    (the default) is one switch. Only topology-aware placers read it (``yarn``: a job never spans
    switches).

    >>> c = Cluster.homogeneous(2, 4)
    >>> c.total_gpus, c.n_servers, c.max_server_gpus
    (8, 2, 4)
    >>> s = Cluster.from_spec("4x32x4")
    >>> s.total_gpus, s.n_switches, s.switch_of(33)
    (512, 4, 1)
    """

    servers: tuple[Server, ...]
    gpu_type: str | None = None
    intra_bandwidth: float | None = None
    inter_bandwidth: float | None = None
    servers_per_switch: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "servers", tuple(self.servers))
        problems: list[Problem] = []
        c = _Checker("", problems)
        if not self.servers:
            c.add("servers", "must list at least one server")
        if len(self.servers) > LIMITS["servers"]:
            c.add("servers", f"must list at most {LIMITS['servers']} servers, got {len(self.servers)}")
        for i, s in enumerate(self.servers):
            if not isinstance(s, Server):
                c.add(f"servers[{i}]", f"must be a Server, got {type(s).__name__}")
        c.string({"gpu_type": self.gpu_type}, "gpu_type")
        for name in ("intra_bandwidth", "inter_bandwidth"):
            c.number({name: getattr(self, name)}, name, strict=True, required=False,
                     maximum=LIMITS["bandwidth"])
        per = c.integer({"servers_per_switch": self.servers_per_switch}, "servers_per_switch",
                        required=False)
        if per is not None and self.servers and len(self.servers) % per:
            c.add("servers_per_switch", f"must divide the {len(self.servers)} servers, got {per}")
        if problems:
            raise InvalidInstance(problems)

    @classmethod
    def homogeneous(cls, n_servers: int, gpus_per_server: int, gpu_type: str | None = None,
                    **bandwidths) -> "Cluster":
        """``n_servers`` identical servers of ``gpus_per_server`` GPUs."""
        return cls(tuple(Server(gpus_per_server) for _ in range(n_servers)), gpu_type, **bandwidths)

    @classmethod
    def from_spec(cls, spec: str, gpu_type: str | None = None) -> "Cluster":
        """Parse ``"64x8"`` (64 servers of 8 GPUs), ``"4x32x4"`` (4 switches of 32 servers of 4
        GPUs) or ``"8,8,4"`` (one server per number).

        >>> Cluster.from_spec("2x4").total_gpus, Cluster.from_spec("8,8,4").total_gpus
        (8, 20)
        >>> Cluster.from_spec("2x3x4").servers_per_switch
        3
        """
        text = spec.strip().lower()
        m = re.fullmatch(r"(\d+)\s*x\s*(\d+)", text)
        m3 = re.fullmatch(r"(\d+)\s*x\s*(\d+)\s*x\s*(\d+)", text)
        try:
            if m:
                if len(m.group(1)) > 9 or len(m.group(2)) > 9:
                    raise ValueError
                n, g = int(m.group(1)), int(m.group(2))
                if n < 1 or g < 1:
                    raise ValueError
                if n > LIMITS["servers"] or g > LIMITS["server_gpus"]:
                    raise InvalidInstance([Problem(
                        "cluster", f"{spec!r}: at most {LIMITS['servers']} servers of at most "
                                   f"{LIMITS['server_gpus']} GPUs (the format's limits)")])
                return cls.homogeneous(n, g, gpu_type)
            if m3:
                if max(len(x) for x in m3.groups()) > 9:
                    raise ValueError
                s, n, g = (int(x) for x in m3.groups())
                if s < 1 or n < 1 or g < 1:
                    raise ValueError
                if s * n > LIMITS["servers"] or g > LIMITS["server_gpus"]:
                    raise InvalidInstance([Problem(
                        "cluster", f"{spec!r}: at most {LIMITS['servers']} servers of at most "
                                   f"{LIMITS['server_gpus']} GPUs (the format's limits)")])
                return cls(tuple(Server(g) for _ in range(s * n)), gpu_type, servers_per_switch=n)
            if len(text) > 10 * LIMITS["servers"]:
                raise ValueError
            sizes = [int(p) for p in text.split(",")]
            if not sizes or min(sizes) < 1:
                raise ValueError
            return cls(tuple(Server(g) for g in sizes), gpu_type)
        except InvalidInstance as exc:
            if exc.problems and exc.problems[0].location == "cluster":
                raise
            raise InvalidInstance(
                [Problem("cluster", f"{spec[:40]!r} is not a cluster spec such as '64x8', '4x32x4' or '8,8,4' "
                                    f"({exc.problems[0].message if exc.problems else 'invalid'})")]
            ) from None
        except ValueError:
            raise InvalidInstance(
                [Problem("cluster", f"{spec[:40]!r} is not a cluster spec such as '64x8', '4x32x4' or '8,8,4'")]
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

    @property
    def n_switches(self) -> int:
        """The number of switches (1 unless ``servers_per_switch`` is set)."""
        per = self.servers_per_switch
        return 1 if per is None else len(self.servers) // per

    def switch_of(self, server: int) -> int:
        """The switch of server ``server`` (0 when the cluster has one switch)."""
        per = self.servers_per_switch
        return 0 if per is None else server // per

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
            c.integer({name: getattr(self, name)}, name, maximum=LIMITS["parallel_degree"])
        if not problems and self.dp * self.pp * self.tp > LIMITS["parallel_degree"]:
            c.add("dp*pp*tp", f"{self.dp}*{self.pp}*{self.tp} exceeds {LIMITS['parallel_degree']} GPUs "
                              "(the format's limit)")
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
               "precision", "seq_len")
_JOB_FIELDS = ("id", "arrival", "gpus", "weight", "instances", "user", "group", "dataset",
               "status", "meta") + _ABSTRACT_FIELDS + _DNN_FIELDS


@dataclass(frozen=True, slots=True)  # slots: a 740,000-job file holds 740,000 Jobs
class Job:
    """A training job: rigid demand of ``gpus`` GPUs (gang, all or nothing).

    Abstract jobs give ``processing_time`` (and optionally ``predicted_processing_time``); DNN
    jobs give ``model``, ``parallelism`` (defaults to pure data parallelism over ``gpus``),
    ``iterations`` and optionally ``predicted_iterations``, ``batch_size`` (global, samples per
    iteration; the model's default if omitted), ``precision`` and ``seq_len`` (tokens per sequence
    of a transformer; the model's default if omitted). ``instances`` (optional) splits
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
    seq_len: int | None = None
    status: str | None = None

    def __post_init__(self):
        self._default_parallelism()
        problems: list[Problem] = []
        if isinstance(self.meta, Mapping):
            _Checker("", problems).json_value({"meta": self.meta}, "meta")
            if problems:
                raise InvalidInstance(problems)
        object.__setattr__(self, "meta", _freeze(self.meta) if self.meta else _NO_META)
        _check_job_fields(_Checker("", problems), {name: getattr(self, name) for name in _JOB_FIELDS})
        if problems:
            raise InvalidInstance(problems)

    def _default_parallelism(self) -> None:
        if self.model is not None and self.parallelism is None and is_integer(self.gpus):
            object.__setattr__(self, "parallelism", Parallelism(int(self.gpus), 1, 1))

    @classmethod
    def _checked(cls, values: Mapping[str, Any]) -> "Job":
        """A Job from field values that :func:`_check_job_fields` has just accepted, without
        checking them a second time (the loader validates once, at the boundary)."""
        job = cls.__new__(cls)
        get = values.get
        for (name, default), put in zip(_JOB_DEFAULTS.items(), _JOB_SETTERS):
            put(job, get(name, default))
        meta = job.meta
        _JOB_SETTERS[_META_AT](job, _freeze(meta) if meta else _NO_META)
        if job.model is not None:
            job._default_parallelism()
        return job

    @classmethod
    def _abstract(cls, job_id: str, arrival, gpus: int, processing_time, instances, user, status) -> "Job":
        """The abstract Job of already checked values (as :func:`asrpt.traces.base.abstract_job`
        accepts them; no ``meta``, weight 1): ``Job._checked`` of the same fields, positionally."""
        return _JOB_BUILD(job_id, arrival, gpus, 1, processing_time, None, None, None, None, None, None, None,
                          instances, user, None, None, _NO_META, None, status)

    @property
    def is_abstract(self) -> bool:
        """True when the job is given by a processing time rather than a DNN model."""
        return self.model is None

    @property
    def gpu_per_instance(self) -> int:
        """GPUs of one gang instance (all of ``gpus`` when ``instances`` is not set)."""
        return self.gpus // (self.instances or 1)




#: every Job field with its default (None for the required ones, always given by the loader)
_JOB_DEFAULTS: dict[str, Any] = {
    f.name: (f.default if f.default is not MISSING else
             f.default_factory() if f.default_factory is not MISSING else None)  # type: ignore[misc]
    for f in fields(Job)}
#: the slot setters of the Job fields, in field order (they bypass the frozen ``__setattr__``)
_JOB_SETTERS = tuple(getattr(Job, name).__set__ for name in _JOB_DEFAULTS)
_META_AT = tuple(_JOB_DEFAULTS).index("meta")
#: Job(...) of checked values, positionally in field order, without the frozen setattr (asrpt._slots)
_JOB_BUILD = slot_builder(Job)
assert tuple(_JOB_DEFAULTS)[:5] == ("id", "arrival", "gpus", "weight", "processing_time") and \
    tuple(_JOB_DEFAULTS)[12:] == ("instances", "user", "group", "dataset", "meta", "seq_len", "status")


def _check_job_fields(c: _Checker, obj: Mapping[str, Any], exact: bool = False) -> dict:
    """Validate one job's fields (raw JSON or dataclass values); return the parsed values."""
    out: dict[str, Any] = {}
    out["id"] = c.string(obj, "id", required=True)
    out["arrival"] = c.number(obj, "arrival", exact=exact, maximum=LIMITS["time"])
    out["weight"] = c.number(obj, "weight", strict=True, required=False, exact=exact,
                             maximum=LIMITS["weight"])
    if out["weight"] is not None and out["weight"] < 1 / LIMITS["weight"]:
        c.add("weight", f"must be >= {1 / LIMITS['weight']:g} (the format's limit), got {_show(obj['weight'])}")
        out["weight"] = None
    out["instances"] = c.integer(obj, "instances", required=False, maximum=LIMITS["servers"])
    for name in ("user", "group", "dataset"):
        out[name] = c.string(obj, name)
    out["status"] = c.string(obj, "status")
    if out["status"] is not None and out["status"] not in JOB_STATUSES:
        c.add("status", f"must be one of {', '.join(JOB_STATUSES)}, got {_show(out['status'])}")
    meta = obj.get("meta")
    if meta is not None and not isinstance(meta, Mapping):
        c.add("meta", f"must be an object, got {_show(meta)}")
    elif meta is not None and type(meta) is not FrozenMapping:  # frozen meta: checked by Job
        c.json_value(obj, "meta")
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
        out["batch_size"] = c.integer(obj, "batch_size", required=False, maximum=LIMITS["count"])
        out["iterations"] = c.integer(obj, "iterations", maximum=LIMITS["count"])
        out["predicted_iterations"] = c.number(obj, "predicted_iterations", strict=True,
                                               required=False, exact=exact, maximum=LIMITS["count"])
        out["precision"] = c.string(obj, "precision")
        out["seq_len"] = c.integer(obj, "seq_len", required=False)
        gpus = c.integer(obj, "gpus", required=out["parallelism"] is None,
                         maximum=LIMITS["servers"] * LIMITS["server_gpus"])
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
            out["processing_time"] = c.number(obj, "processing_time", strict=True, exact=exact,
                                              maximum=LIMITS["time"])
        out["predicted_processing_time"] = c.number(obj, "predicted_processing_time", strict=True,
                                                    required=False, exact=exact, maximum=LIMITS["time"])
        out["gpus"] = c.integer(obj, "gpus", maximum=LIMITS["servers"] * LIMITS["server_gpus"])
        for name in ("processing_time", "predicted_processing_time"):
            a, p = out["arrival"], out.get(name)
            if (a is not None and p is not None and (isinstance(a, float) or isinstance(p, float))
                    and p < LIMITS["resolution"] * math.ulp(float(a) + float(p))):
                c.add(name, f"{_show(p)} s is below the float resolution at arrival {_show(a)} "
                            f"(1 part in {LIMITS['resolution']}); shift the arrivals to start near 0, "
                            "or give exact numbers")
                out[name] = None
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
    within the cluster, gang instances that fit whole servers. DNN jobs are checked against the
    zoo and the GPUs by :func:`asrpt.loading.check_instance` (and :mod:`asrpt.loading`'s loaders).

    >>> inst = Instance(Cluster.homogeneous(1, 4), (Job("a", 0, 2, processing_time=5),))
    >>> inst.job("a").gpus, inst.is_abstract
    (2, True)
    """

    cluster: Cluster
    jobs: tuple[Job, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "jobs", tuple(self.jobs))
        problems: list[Problem] = []
        _Checker("", problems).json_value({"metadata": self.metadata}, "metadata")
        if len(self.jobs) > LIMITS["jobs"]:
            problems.append(Problem("jobs", f"{len(self.jobs)} jobs, more than {LIMITS['jobs']} "
                                            "(the format's limit)"))
        if problems:
            raise InvalidInstance(problems)
        object.__setattr__(self, "metadata", _freeze(self.metadata or {}))
        problems = _instance_problems(self.cluster, self.jobs)
        if problems:
            raise InvalidInstance(problems)

    def __getstate__(self) -> dict:
        # Only the fields: the memos kept on an instance (its jobs by id, the simulator's job
        # views) are rebuilt where needed.
        return {"cluster": self.cluster, "jobs": self.jobs, "metadata": self.metadata}

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

    @classmethod
    def _checked(cls, cluster: Cluster, jobs: tuple[Job, ...], metadata: Mapping[str, Any]) -> "Instance":
        """An Instance whose cross-object checks :func:`instance_problems` has just run (once)."""
        inst = cls.__new__(cls)
        object.__setattr__(inst, "cluster", cluster)
        object.__setattr__(inst, "jobs", tuple(jobs))
        object.__setattr__(inst, "metadata", _freeze(metadata or {}))
        return inst

    def replace_jobs(self, jobs: Iterable[Job]) -> "Instance":
        """A copy with another job list (validated again)."""
        return replace(self, jobs=tuple(jobs))


def _instance_problems(cluster: Cluster, jobs: Sequence[Any]) -> list[Problem]:
    """Checks that span objects. ``jobs`` are Jobs or partially parsed job dicts (values may be
    None when the job had problems of its own), so these checks run even on a broken file."""
    if _no_instance_problems(cluster, jobs):
        return []
    return _instance_problems_by_job(cluster, jobs)


def _instance_problems_by_job(cluster: Cluster, jobs: Sequence[Any]) -> list[Problem]:
    """:func:`_instance_problems` job by job, each problem located (the path of an instance that
    :func:`_no_instance_problems` does not clear at once)."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    total = cluster.total_gpus
    biggest = cluster.max_server_gpus
    holds: dict[int, int] = {}  # instances of `per` GPUs the servers hold, by `per`
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
            elif (holds[per] if per in holds else holds.setdefault(
                    per, sum(s.gpus // per for s in cluster.servers))) < instances:
                problems.append(Problem(
                    f"{loc}.instances",
                    f"{instances} instances of {per} GPUs do not fit the cluster's servers"))
    return problems


def _no_instance_problems(cluster: Cluster, jobs: Sequence[Any]) -> bool:
    """True when :func:`_instance_problems` would find nothing, decided a column at a time (the
    fast path of a valid instance); False when it may find something (it then looks job by job).

    >>> _no_instance_problems(Cluster.homogeneous(2, 4), [Job("a", 0, 8, processing_time=1, instances=2)])
    True
    >>> _no_instance_problems(Cluster.homogeneous(2, 4), [Job("a", 0, 8, processing_time=1, instances=1)])
    False
    """
    if not all(type(j) is Job for j in jobs):
        return False
    ids = {j.id for j in jobs}
    if len(ids) != len(jobs):
        return False
    if jobs and max(j.gpus for j in jobs) > cluster.total_gpus:
        return False
    shapes = {(j.gpus // j.instances, j.instances) for j in jobs if j.instances and j.gpus % j.instances == 0}
    if shapes:
        biggest, most = cluster.max_server_gpus, {}
        for per, count in shapes:
            if count > most.get(per, 0):
                most[per] = count
        for per, count in most.items():
            if per > biggest or sum(s.gpus // per for s in cluster.servers) < count:
                return False
    return True


# ---------------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------------

_TOP_FIELDS = ("format", "cluster", "jobs", "metadata")
_CLUSTER_FIELDS = ("servers", "gpu_type", "intra_bandwidth", "inter_bandwidth", "servers_per_switch")
_SERVER_FIELDS = ("gpus", "gpu_type", "count")


def instance_problems(data: Any, *, exact: bool = False) -> tuple[list[Problem], Instance | None]:
    """Validate a JSON-like object; return ``(problems, instance)`` (instance None if problems).

    This never raises for bad data: every problem is returned with its location. DNN jobs are
    checked field by field here; :func:`asrpt.loading.instance_problems` adds the zoo, GPU and
    memory checks.

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
    partial: list[Any] = []  # Jobs, or the checked values of jobs with problems
    if jobs_raw is None:
        top.add("jobs", "is required")
    elif not isinstance(jobs_raw, list):
        top.add("jobs", f"must be a list, got {_show(jobs_raw)}")
    elif len(jobs_raw) > LIMITS["jobs"]:
        top.add("jobs", f"lists {len(jobs_raw)} jobs, more than {LIMITS['jobs']} (the format's limit)")
    else:
        for i, raw in enumerate(jobs_raw):
            job, values = _parse_job(raw, f"jobs[{i}]", problems, exact)
            partial.append(values if job is None else job)  # the Job: not a second dict per job
            if job is not None:
                jobs.append(job)
    metadata = data.get("metadata", {})
    if not isinstance(metadata, Mapping):
        top.add("metadata", f"must be an object, got {_show(metadata)}")
        metadata = {}
    else:
        top.json_value(data, "metadata")
    if cluster is not None:
        problems.extend(_instance_problems(cluster, partial))
    if problems or cluster is None:
        return problems, None
    return [], Instance._checked(cluster, tuple(jobs), metadata)


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
    per_switch = c.integer(raw, "servers_per_switch", required=False)
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
            gpus = sc.integer(s, "gpus", maximum=LIMITS["server_gpus"])
            count = sc.integer(s, "count", required=False, maximum=LIMITS["servers"])
            stype = sc.string(s, "gpu_type")
            if gpus is not None and count is not None and len(servers) + count > LIMITS["servers"]:
                sc.add("count", f"brings the cluster to {len(servers) + count} servers, more than "
                                f"{LIMITS['servers']} (the format's limit)")
            elif gpus is not None:
                servers.extend(Server(gpus, stype) for _ in range(count or 1))
    if per_switch is not None and servers and len(servers) % per_switch:
        c.add("servers_per_switch", f"must divide the {len(servers)} servers, got {per_switch}")
    if len(problems) > before:
        return None
    return Cluster(tuple(servers), gpu_type, **bw, servers_per_switch=per_switch)


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
        kwargs["meta"] = raw["meta"]  # checked by _check_job_fields (JSON data, nesting, strings)
    return Job._checked(kwargs), values


def parse_instance(data: Any, *, source: str | None = None, exact: bool = False) -> Instance:
    """Build an Instance from a JSON-like object, or raise InvalidInstance listing every problem.

    ``exact=True`` reads every number as an exact rational (see :func:`parse_number`). DNN jobs
    are not checked against the zoo here: :func:`asrpt.loading.parse_instance` does that too.
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
    if len(text) > LIMITS["file_bytes"]:
        raise InvalidInstance([Problem("", f"{len(text)} characters, more than {LIMITS['file_bytes']} "
                                           "(the format's limit)")], source=source)
    try:
        data = json.loads(text, parse_int=_parse_int,
                          parse_float=_parse_exact_float if exact else _parse_float)
    except json.JSONDecodeError as exc:
        raise InvalidInstance([Problem("", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")],
                              source=source) from None
    except _Literal as exc:
        line, col = _position(text, exc.literal)
        raise InvalidInstance([Problem("", f"line {line} column {col}: {exc.why}")], source=source) from None
    except RecursionError:
        data = None
    depth = _depth(data) if data is not None else LIMITS["nesting"] + 1
    if depth > LIMITS["nesting"]:
        raise InvalidInstance([Problem("", f"JSON nested deeper than {LIMITS['nesting']} levels "
                                           "(the format's limit)")], source=source) from None
    return data


class _Literal(ValueError):
    """A JSON number literal outside the format's limits (raised from the parser's hooks)."""

    def __init__(self, literal: str, why: str):
        super().__init__(why)
        self.literal, self.why = literal, why


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > LIMITS["digits"]:
        raise _Literal(text, f"an integer of {len(text.lstrip('-'))} digits, more than "
                             f"{LIMITS['digits']} (the format's limit)")
    return int(text)


def _parse_float(text: str) -> float:
    if len(text) > 40:
        raise _Literal(text, f"a number literal of {len(text)} characters, more than 40 (the format's limit)")
    return float(text)


def _parse_exact_float(text: str):
    value = _parse_float(text)
    if not math.isfinite(value):
        return value
    if value != 0 and not 1e-300 < abs(value) < 1e300:
        raise _Literal(text, f"{text} is outside the exact range 1e-300 .. 1e300")
    return parse_number(Fraction(text), exact=True)


def _position(text: str, literal: str) -> tuple[int, int]:
    at = text.find(literal)
    if at < 0:
        return 1, 1
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def _depth(data: Any) -> int:
    """Nesting depth of parsed JSON, iteratively (stops once past the limit)."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            children = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        deepest = max(deepest, d)
        if deepest > LIMITS["nesting"]:
            return deepest
        stack.extend((x, d + 1) for x in children if isinstance(x, (dict, list)))
    return deepest


def read_text(path: str | os.PathLike) -> str:
    """The text of an instance file; InvalidInstance for a missing, directory or unreadable file."""
    source = os.fspath(path)
    try:
        if source != "-" and os.path.exists(source) and not os.path.isdir(source):
            import stat

            st = os.stat(source)
            if not stat.S_ISREG(st.st_mode):
                raise InvalidInstance([Problem("", "is not a regular file (a FIFO, device or socket); "
                                                   "give an instance file")], source=source)
            if st.st_size > LIMITS["file_bytes"]:
                raise InvalidInstance([Problem("", f"{st.st_size} bytes, more than {LIMITS['file_bytes']} "
                                                   "(the format's limit)")], source=source)
        with open(source, encoding="utf-8-sig") as fh:
            return fh.read(LIMITS["file_bytes"] + 1)
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
    file, malformed JSON, or an invalid instance. DNN jobs are not checked against the zoo here:
    :func:`asrpt.loading.load_instance` (``asrpt.load_instance``) does that too.
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
    if inst.cluster.servers_per_switch is not None:
        cluster["servers_per_switch"] = inst.cluster.servers_per_switch
    jobs = []
    for j in inst.jobs:
        d: dict[str, Any] = {"id": j.id, "arrival": _number_to_json(j.arrival), "gpus": j.gpus}
        if j.weight != 1:
            d["weight"] = _number_to_json(j.weight)
        for name in ("processing_time", "predicted_processing_time", "predicted_iterations"):
            value = getattr(j, name)
            if value is not None:
                d[name] = _number_to_json(value)
        for name in ("model", "batch_size", "iterations", "precision", "seq_len", "instances",
                     "user", "group", "dataset", "status"):
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
    """Write an instance file atomically (a temporary file renamed into place).

    A path that exists and is not a regular file (``/dev/stdout``) is written to directly. On
    failure (OSError: a missing directory, a full disk) no temporary file is left behind.
    """
    path = os.fspath(path)
    if "\0" in str(path):
        from .errors import InvalidParameterError

        raise InvalidParameterError(f"cannot write {path!r}: a file name cannot hold a NUL byte")
    text = dumps_instance(inst)  # fails before any file is touched
    if os.path.exists(path) and not os.path.isfile(path):
        # a device or FIFO (/dev/stdout, /dev/full) is written to, never replaced by a rename;
        # a directory fails here with IsADirectoryError
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
