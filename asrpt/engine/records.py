"""What a simulation run produces: frozen per-job records and the run result.

The engine (:mod:`asrpt.engine.core`) emits one :class:`JobRecord` per job; metrics
(:mod:`asrpt.engine.metrics`), the Theorem 1 certificate (:mod:`asrpt.theory`), plots and batch
results read these records only, never the engine's internals.

A record keeps every run segment of its job (start, end, GPUs per server, iteration time), so
invariants such as "no GPU over-allocated" can be re-checked from records alone
(:func:`check_records`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Sequence

from .._json import jsonable
from .._slots import slot_builder
from ..errors import AsrptError
from ..instance import Number

__all__ = ["Segment", "JobRecord", "SimResult", "placement_string", "check_records"]


def _num(x: Any) -> Any:
    t = type(x)
    if t is int or t is float or x is None:   # the common cases, before the (ABC) Fraction check
        return x
    if isinstance(x, Fraction):
        return x.numerator if x.denominator == 1 else float(x)
    return x


def placement_string(servers: Sequence[tuple[int, int]]) -> str:
    """``"server:GPUs;server:GPUs"`` in server order, e.g. ``"0:4;3:4"``.

    >>> placement_string(((3, 4), (0, 4)))
    '0:4;3:4'
    """
    if len(servers) == 1:
        (s, g), = servers
        return f"{s}:{g}"
    return ";".join([f"{s}:{g}" for s, g in sorted(servers)])


@dataclass(frozen=True, slots=True)   # slots: one per run of a job, compact (a dict each was 3x the size)
class Segment:
    """One uninterrupted run of a job on fixed GPUs.

    ``restart`` is the part of the segment spent restarting after a preemption (no progress);
    ``tau`` the seconds per iteration on this placement (None for abstract jobs).
    """

    start: Number
    end: Number
    servers: tuple[tuple[int, int], ...]
    tau: float | None = None
    restart: Number = 0

    @property
    def gpus(self) -> int:
        return sum(g for _, g in self.servers)

    @classmethod
    def _of(cls, start, end, servers, tau, restart) -> "Segment":
        """``Segment(start, end, servers, tau, restart)`` without the frozen per-field setattr (the
        engine builds one per run of a job).

        >>> Segment._of(0, 2, ((0, 1),), None, 0) == Segment(0, 2, ((0, 1),))
        True
        """
        return _SEGMENT_BUILD(start, end, servers, tau, restart)


_SEGMENT_BUILD = slot_builder(Segment)


def _spanned_placement(segments) -> tuple[int, str]:
    """(the most servers one segment spanned, the placement string of the last segment) of a
    job's segments: the per-job CSV's ``servers_spanned`` and ``placement``."""
    if len(segments) == 1:
        servers = segments[0].servers
        return len(servers), placement_string(servers)
    if not segments:
        return 0, ""
    return max([len(s.servers) for s in segments]), placement_string(segments[-1].servers)


@dataclass(frozen=True, slots=True)   # slots: one per job, compact and quick to read
class JobRecord:
    """The life of one job in a run.

    Attributes
    ----------
    id, arrival, gpus, weight : as in the instance.
    start : first time the job ran (None if it never ran).
    completion : completion time C_j (None if the run ended before it finished).
    preemptions : times the job was stopped before finishing.
    work : true total work (iterations for DNN jobs, seconds for abstract ones).
    tau_star : best iteration time (None for abstract jobs).
    processing_time : P*_j, the job's best processing time.
    beta : placement stretch, max over segments of tau / tau* (1 for abstract jobs).
    segments : every run segment, in time order.
    """

    id: str
    arrival: Number
    gpus: int
    weight: Number
    start: Number | None
    completion: Number | None
    preemptions: int
    work: Number
    tau_star: float | None
    processing_time: Number
    beta: float
    segments: tuple[Segment, ...] = ()

    @classmethod
    def _of(cls, job_id, arrival, gpus, weight, start, completion, preemptions, work, tau_star, processing_time,
            beta, segments) -> "JobRecord":
        """``JobRecord(...)`` of the same fields, positionally, without the frozen per-field setattr
        (the engine builds one per job).

        >>> r = JobRecord._of("a", 0, 2, 1, 1, 4, 0, 3, None, 3, 1.0, ())
        >>> r == JobRecord("a", 0, 2, 1, 1, 4, 0, 3, None, 3, 1.0)
        True
        """
        return _RECORD_BUILD(job_id, arrival, gpus, weight, start, completion, preemptions, work, tau_star,
                             processing_time, beta, segments)

    @property
    def jct(self) -> Number | None:
        """Job completion time C_j - a_j."""
        return None if self.completion is None else self.completion - self.arrival

    @property
    def queueing_delay(self) -> Number | None:
        """Time from arrival to first start."""
        return None if self.start is None else self.start - self.arrival

    @property
    def waiting_time(self) -> Number | None:
        """JCT minus the time spent holding GPUs (all waiting, first and after preemptions)."""
        if self.completion is None:
            return None
        held = sum((s.end - s.start for s in self.segments), 0)
        return self.completion - self.arrival - held

    @property
    def servers_spanned(self) -> int:
        """Largest number of servers any segment of the job used."""
        return max((len(s.servers) for s in self.segments), default=0)

    @property
    def placement(self) -> str:
        """Placement of the last segment as ``"server:GPUs;..."`` ("" if it never ran)."""
        return placement_string(self.segments[-1].servers) if self.segments else ""

    def to_row(self) -> dict:
        """A flat dict for CSV/JSON (times as numbers; the columns of :data:`ROW_COLUMNS`)."""
        return dict(zip(ROW_COLUMNS, self.row_values()))

    def row_values(self) -> list:
        """The values of :meth:`to_row`, in :data:`ROW_COLUMNS` order (what the per-job CSV writes).

        >>> r = JobRecord("a", 0, 2, 1, 1, 4, 0, 3, None, 3, 1.0, (Segment(1, 4, ((0, 2),)),))
        >>> r.row_values()
        ['a', 0, 2, 1, 1, 4, 4, 1, 0, 1, 1.0, 3, '0:2']
        """
        arrival, start, completion, segments = self.arrival, self.start, self.completion, self.segments
        weight, p_star = self.weight, self.processing_time
        spanned, placement = _spanned_placement(segments)
        return [self.id, _num(arrival), self.gpus, _num(weight), _num(start), _num(completion),
                None if completion is None else _num(completion - arrival),     # jct
                None if start is None else _num(start - arrival),               # queueing_delay
                self.preemptions, spanned, self.beta, _num(p_star), placement]

    def _plain_csv_line(self) -> str | None:
        """The per-job CSV line of a record whose times, weight and size are ints or floats
        (a finished job, a float beta, an id the csv module writes as is): the line
        ``csv.writer`` writes for :meth:`row_values`, formatted directly (the csv module writes
        an int or a float as ``str`` does, and so does an f-string); None for any other record
        (the caller then asks the csv module).

        >>> JobRecord("a", 0, 2, 1, 1, 4, 0, 3, None, 3, 1.0, (Segment(1, 4, ((0, 2),)),))._plain_csv_line()
        'a,0,2,1,1,4,4,1,0,1,1.0,3,0:2\\n'
        >>> JobRecord("b", 0.5, 1, 1, 1.25, 4.0, 0, 2.5, 1.25, 2.5, 1.0,
        ...           (Segment(1.25, 4.0, ((1, 1),)),))._plain_csv_line()
        'b,0.5,1,1,1.25,4.0,3.5,0.75,0,1,1.0,2.5,1:1\\n'
        """
        job_id, arrival, start, completion = self.id, self.arrival, self.start, self.completion
        weight, p_star, beta, gpus, preemptions = (self.weight, self.processing_time, self.beta, self.gpus,
                                                   self.preemptions)
        plain = _PLAIN_NUMBERS
        if not (type(arrival) in plain and type(start) in plain and type(completion) in plain
                and type(weight) in plain and type(p_star) in plain and type(beta) is float
                and type(gpus) is int and type(preemptions) is int and type(job_id) is str and job_id
                and not _NEEDS_QUOTES.search(job_id)):
            return None
        segments = self.segments
        if len(segments) == 1 and len(segments[0].servers) == 1:   # the common record: one run on one server
            (h, g), = segments[0].servers
            if type(h) is not int or type(g) is not int:
                return None
            spanned, placement = 1, f"{h}:{g}"
        else:
            spanned, placement = _spanned_placement(segments)
            if _NEEDS_QUOTES.search(placement):
                return None
        return (f"{job_id},{arrival},{gpus},{weight},{start},{completion},{completion - arrival},"
                f"{start - arrival},{preemptions},{spanned},{beta!r},{p_star},{placement}\n")


#: JobRecord(...) positionally, without the frozen ``__setattr__`` (asrpt._slots)
_RECORD_BUILD = slot_builder(JobRecord)

#: The number types :meth:`JobRecord._plain_csv_line` formats itself (exactly these: no bool, no
#: numpy scalar).
_PLAIN_NUMBERS = frozenset((int, float))

#: What makes the csv module quote a field (with its default dialect and a "\\n" line end).
_NEEDS_QUOTES = re.compile(r'[,"\r\n]')

#: The columns of :meth:`JobRecord.to_row` and of the per-job CSV.
ROW_COLUMNS = ("job_id", "arrival", "gpus", "weight", "start_time", "finish_time", "jct", "queue_delay",
               "preemptions", "servers_spanned", "beta", "processing_time", "placement")


@dataclass(frozen=True)
class SimResult:
    """A finished run: the records (in instance job order), the summary and what the policy
    chose to report (e.g. A-SRPT's virtual completion times).

    ``policy_record`` is the policy's typed record of the run (:meth:`asrpt.state.Policy.record`, e.g.
    A-SRPT's :class:`~asrpt.state.VirtualRun`; None for most policies and for results rebuilt
    from JSON). ``policy`` is the policy's registered name; ``label`` the run's display label (what tables,
    plots, file names and ``to_dict()["policy"]`` show: the caller's, e.g. ``"a-srpt[oracle]"``,
    else the policy's name). ``policy_data`` maps names to JSON-ready values; ``options``
    records how the run was set up.
    """

    policy: str
    records: tuple[JobRecord, ...]
    summary: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)
    policy_data: Mapping[str, Any] = field(default_factory=dict)
    total_gpus: int = 0
    label: str | None = None
    policy_record: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.label is None:
            object.__setattr__(self, "label", self.policy)

    def record(self, job_id: str) -> JobRecord:
        for r in self.records:
            if r.id == job_id:
                return r
        raise KeyError(f"no job with id {job_id!r}")

    @property
    def completion_times(self) -> dict[str, Number | None]:
        return {r.id: r.completion for r in self.records}

    def jobs_csv(self) -> str:
        """Per-job CSV (columns of :meth:`JobRecord.to_row`)."""
        lines = [",".join(ROW_COLUMNS) + "\n" if self.records else "job_id\n"]
        append = lines.append
        buf = writer = None
        for r in self.records:
            line = r._plain_csv_line()
            if line is None:   # the csv module's line of row_values()
                if writer is None:
                    buf = io.StringIO()
                    writer = csv.writer(buf, lineterminator="\n")
                buf.seek(0)
                buf.truncate()
                writer.writerow(r.row_values())
                line = buf.getvalue()
            append(line)
        return "".join(lines)

    def to_dict(self, *, jobs: bool = False) -> dict:
        out = {"policy": self.label, "options": dict(self.options),
               "summary": {k: _num(v) for k, v in self.summary.items()},
               "policy_data": dict(self.policy_data)}
        if jobs:
            out["jobs"] = [r.to_row() for r in self.records]
        return out

    def to_json(self, **kwargs) -> str:
        return json.dumps(jsonable(self.to_dict(**kwargs)), indent=2, allow_nan=False)


def recorded_params(params: Mapping[str, Any]) -> dict:
    """The policy parameters a run records (its ``options["policy_params"]``): those that are
    numbers (Fractions kept exact, so an exact run's kappa or epsilon can be certified), strings,
    booleans, None, lists or tuples; objects (a predictor instance, a callable) are left out.

    >>> from fractions import Fraction
    >>> recorded_params({"kappa": 16, "epsilon": Fraction(1, 2), "predictor": object(), "order": "guarded"})
    {'kappa': 16, 'epsilon': Fraction(1, 2), 'order': 'guarded'}
    """
    kept = (int, float, Fraction, str, bool, type(None), list, tuple)
    return {k: v for k, v in params.items() if isinstance(v, kept)}


def stalled_run(now, policy_name: str, waiting: Mapping, running: Mapping) -> AsrptError:
    """The error a run ends with when jobs are left (``waiting`` and ``running``: index -> job
    view) and nothing is left to happen: the policy left them waiting for ever.

    >>> from types import SimpleNamespace as View
    >>> print(stalled_run(3, "mine", {0: View(id="a")}, {}))
    simulation stalled at t=3: policy mine left 1 job(s) waiting (e.g. a) with nothing left to happen
    """
    stuck = next(iter(waiting.values()), None) or next(iter(running.values()))
    return AsrptError(f"simulation stalled at t={now}: policy {policy_name} left {len(waiting)} job(s) "
                      f"waiting (e.g. {stuck.id}) with nothing left to happen")


def check_records(records: Sequence[JobRecord], server_gpus: Sequence[int], *,
                  tolerance: float = 1e-9) -> None:
    """Re-check a run from its records alone; raise AssertionError naming the first violation.

    Checks: every segment uses exactly the job's GPUs (gang), no server is ever over-allocated,
    segments of a job do not overlap and start at or after its arrival, a finished job ends with
    its last segment, and it finishes no earlier than arrival + best processing time.
    """
    events: list[tuple[Number, int, int, int]] = []  # (time, +1 start/-1 end ordered ends first, server, gpus)
    for r in records:
        last_end = r.arrival
        for s in r.segments:
            if s.gpus != r.gpus:
                raise AssertionError(f"job {r.id}: segment at {s.start} uses {s.gpus} GPUs, not {r.gpus}")
            if s.start < last_end - tolerance or s.end < s.start:
                raise AssertionError(f"job {r.id}: segment [{s.start}, {s.end}] overlaps or precedes {last_end}")
            last_end = s.end
            for server, g in s.servers:
                if g <= 0 or not 0 <= server < len(server_gpus):
                    raise AssertionError(f"job {r.id}: bad allocation {s.servers}")
                events.append((s.start, 1, server, g))
                events.append((s.end, 0, server, -g))
        if r.completion is not None:
            if not r.segments or abs(r.segments[-1].end - r.completion) > tolerance:
                raise AssertionError(f"job {r.id}: completion {r.completion} is not the end of its last segment")
            if r.completion < r.arrival + r.processing_time - tolerance * max(1, abs(r.completion)):
                raise AssertionError(f"job {r.id}: completes at {r.completion} before arrival + P* = "
                                     f"{r.arrival + r.processing_time}")
    events.sort(key=lambda e: (e[0], e[1]))
    used = [0] * len(server_gpus)
    for t, _, server, g in events:
        used[server] += g
        if used[server] > server_gpus[server]:
            raise AssertionError(f"server {server} over-allocated at t={t}: {used[server]} > {server_gpus[server]}")
