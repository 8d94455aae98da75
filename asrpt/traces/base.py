"""What every trace importer shares: the import report, row problems, CSV reading, time parsing.

An importer reads a trace file into an :class:`~asrpt.instance.Instance` and a
:class:`TraceReport` saying how many rows were read, how many became jobs, how many were filtered
and why (per reason), and every malformed row with its file and line. Nothing is dropped
silently: a row is either a job, or counted under a filter reason, or listed as malformed.
A missing file or a header without the required columns raises
:class:`~asrpt.errors.TraceError`.
"""

from __future__ import annotations

import csv
import gzip
import math
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from ..errors import InvalidInstance, TraceError
from ..instance import JOB_STATUSES, LIMITS, Job
from ..shared_data import missing_file_message, shared_path  # noqa: F401  (re-exported: the importers and benchmarks read them here)

__all__ = ["TraceReport", "RowProblem", "read_csv_rows", "parse_timestamp", "shared_path", "row_job",
           "abstract_job", "trace_status"]


@dataclass(frozen=True)
class RowProblem:
    """A malformed row: file, 1-based line number, and why it was rejected."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass
class TraceReport:
    """How a trace file became jobs.

    Attributes
    ----------
    source : str
        The file read.
    rows : int
        Data rows read (header excluded).
    jobs : int
        Rows that became jobs.
    filtered : Counter
        Reason -> number of rows left out on purpose (e.g. "not a GPU job", "outside the window").
    malformed : list of RowProblem
        Rows that could not be read, with their line.
    ignored_columns : tuple of str
        Columns present in the file that the importer does not use.
    notes : list of str
        Anything else the user should know (e.g. censoring decisions).
    """

    source: str
    rows: int = 0
    jobs: int = 0
    filtered: Counter = field(default_factory=Counter)
    malformed: list[RowProblem] = field(default_factory=list)
    ignored_columns: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    def bad(self, line: int, message: str) -> None:
        self.malformed.append(RowProblem(self.source, line, message))

    def readable_rows(self, rows):
        """The rows of :func:`read_csv_rows` that parsed, as ``(line, row)``: every row is counted
        in ``rows``, and one the CSV layer could not read is recorded as malformed instead."""
        for line, row in rows:
            self.rows += 1
            if "__error__" in row:
                self.bad(line, row["__error__"])
                continue
            yield line, row

    def check_readable(self) -> None:
        """Raise TraceError when the file has data rows and every one of them is malformed (an
        empty table would otherwise look like a valid, empty trace)."""
        if self.rows and len(self.malformed) >= self.rows:
            raise TraceError(f"none of the {self.rows} rows of {self.source} could be read "
                             f"(first: {self.malformed[0]})")

    def summary(self) -> str:
        """One paragraph for the user (the CLI prints it on stderr)."""
        parts = [f"{self.source}: {self.rows} rows, {self.jobs} jobs"]
        for reason, n in sorted(self.filtered.items()):
            parts.append(f"{n} filtered ({reason})")
        if self.malformed:
            parts.append(f"{len(self.malformed)} malformed (first: {self.malformed[0]})")
        if self.ignored_columns:
            parts.append(f"columns ignored: {', '.join(self.ignored_columns)}")
        return "; ".join(parts) + "".join(f"\n  note: {n}" for n in self.notes)

    def to_dict(self) -> dict:
        return {"source": self.source, "rows": self.rows, "jobs": self.jobs,
                "filtered": dict(self.filtered), "malformed": [str(p) for p in self.malformed],
                "ignored_columns": list(self.ignored_columns), "notes": list(self.notes)}


def read_csv_rows(path: str, required: Sequence[str], optional: Sequence[str] = ()
                  ) -> tuple[list[str], Iterator[tuple[int, dict]]]:
    """Open a CSV (gzip-compressed if the name ends in .gz), check its header, and iterate
    ``(line number, row dict)`` over data rows.

    Returns the header and the iterator. Blank lines are skipped (not counted as rows).

    Raises
    ------
    TraceError
        Missing file, empty file, or required columns absent (naming them).
    """
    def rows() -> Iterator[tuple[int, dict]]:
        for line, values in records:
            yield line, ({"__error__": values} if type(values) is str else dict(zip(header, values)))

    header, records = read_csv_records(path, required)
    return header, rows()


def read_csv_records(path: str, required: Sequence[str]) -> tuple[list[str], Iterator[tuple[int, list | str]]]:
    """:func:`read_csv_rows` without the dicts: ``(line number, values)`` per data row, the
    values a list in header order, or the message (a str) for a row with the wrong number of
    fields. Same header checks, same errors, same rows.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    ...     _ = f.write("a,b\\n1,2\\n\\n3\\n")
    >>> header, rows = read_csv_records(f.name, ["a"])
    >>> header, list(rows)
    (['a', 'b'], [(2, ['1', '2']), (4, '1 fields, header has 2')])
    >>> os.unlink(f.name)
    """
    source = os.fspath(path)
    try:
        if source.endswith(".gz"):
            fh = gzip.open(source, "rt", newline="", encoding="utf-8-sig")
        else:
            fh = open(source, newline="", encoding="utf-8-sig")  # a UTF-8 BOM is not part of the header
    except FileNotFoundError:
        raise TraceError(missing_file_message(source)) from None
    except OSError as exc:
        raise TraceError(f"{source}: cannot read: {exc}") from None
    reader = csv.reader(fh)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        fh.close()
        raise TraceError(f"{source}: empty file, expected a header with {', '.join(required)}") from None
    except (csv.Error, UnicodeDecodeError, OSError, EOFError) as exc:
        fh.close()
        raise TraceError(f"{source}: unreadable header: {exc}") from None
    missing = [c for c in required if c not in header]
    if missing:
        fh.close()
        if header and header[0].startswith(("{", "[")):
            raise TraceError(f"{source}: this is JSON (an instance file?), not a CSV trace: a trace needs the "
                             f"column(s) {', '.join(required)}; an instance file goes to `asrpt simulate FILE`")
        raise TraceError(f"{source}: header lacks column(s) {', '.join(missing)} "
                         f"(found: {', '.join(header)})")
    width = len(header)

    def records() -> Iterator[tuple[int, list | str]]:
        with fh:
            try:
                for values in reader:
                    if len(values) != width or not values[0].strip():  # (rare: look closer)
                        if not values or all(not v.strip() for v in values):
                            continue    # a blank line
                        if len(values) != width:
                            yield reader.line_num, f"{len(values)} fields, header has {width}"
                            continue
                    yield reader.line_num, values
            except (csv.Error, UnicodeDecodeError, OSError, EOFError) as exc:
                raise TraceError(f"{source}:{reader.line_num}: unreadable: {exc}") from None

    return header, records()


def parse_timestamp(text: str) -> float:
    """Seconds since the epoch of ``"YYYY-MM-DD HH:MM:SS"`` (read as UTC), or of a plain number.

    >>> parse_timestamp("1970-01-02 00:00:00"), parse_timestamp("12.5")
    (86400.0, 12.5)
    """
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is not None:
        if not math.isfinite(value):
            raise ValueError(f"bad timestamp {text!r} (not finite)")
        return value
    import datetime as _dt   # (here: the readers of numeric times never load it)

    try:
        stamp = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"bad timestamp {text!r}") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.timezone.utc)
    return stamp.timestamp()


def row_job(report: TraceReport, line: int, *args, **kwargs):
    """``Job(*args, **kwargs)``, or None after recording the row as malformed (with its file and
    line) when the values break the instance format (e.g. a time past the format's limits).

    >>> r = TraceReport("t.csv")
    >>> row_job(r, 7, "a", float("nan"), 1, processing_time=1) is None, str(r.malformed[0])
    (True, 't.csv:7: arrival: must be finite, got NaN')
    """
    from ..instance import Job

    try:
        return Job(*args, **kwargs)
    except InvalidInstance as exc:
        report.bad(line, "; ".join(str(p) for p in exc.problems))
        return None


# The instance format's limits, as the fast path of abstract_job checks them.
_MAX_STRING, _MAX_TIME = LIMITS["string_length"], LIMITS["time"]
_MAX_INSTANCES, _MAX_GPUS = LIMITS["servers"], LIMITS["servers"] * LIMITS["server_gpus"]
_RESOLUTION = LIMITS["resolution"]
def _plain_string(text) -> bool:
    """True for a string the instance format plainly accepts (printable ASCII, not blank, within
    the length limit); anything else is left to ``Job`` to judge."""
    return (type(text) is str and len(text) <= _MAX_STRING and text.isascii() and text.isprintable()
            and bool(text.strip()))


def _plain_number(x, positive: bool) -> bool:
    """True for an int or a finite float in [0, LIMITS["time"]] (> 0 with ``positive``)."""
    t = type(x)
    if t is not int and not (t is float and math.isfinite(x)):
        return False
    return (x > 0 if positive else x >= 0) and x <= _MAX_TIME


def abstract_job(report: TraceReport, line: int, job_id, arrival, gpus, processing_time, *,
                 instances=None, user=None, status=None, meta=None):
    """The abstract ``Job`` of one trace row, as ``row_job`` would build it, checked once here.

    Values an importer has already parsed (ints and finite floats, printable ids and users, flat
    ``meta`` of numbers and ASCII strings) that
    plainly satisfy the instance format are stored without ``Job``'s generic per-field checks
    (the same object results: same fields, same types, ``meta`` frozen); anything else goes
    through ``row_job``, so a row that breaks the format is reported exactly as before.

    >>> r = TraceReport("t.csv")
    >>> abstract_job(r, 2, "7", 0, 2, 30, instances=2) == row_job(r, 2, "7", 0, 2, processing_time=30, instances=2)
    True
    >>> abstract_job(r, 3, "8", 1e9, 1, 0.001) is None, str(r.malformed[0]).split(" s is")[0]
    (True, 't.csv:3: processing_time: 0.001')
    """
    if (_plain_string(job_id) and _plain_number(arrival, False) and _plain_number(processing_time, True)
            and type(gpus) is int and 1 <= gpus <= _MAX_GPUS
            and (instances is None or (type(instances) is int and 1 <= instances <= _MAX_INSTANCES
                                       and gpus % instances == 0))
            and (user is None or _plain_string(user))
            and (status is None or status in JOB_STATUSES)
            and (meta is None or all(type(v) is int and v.bit_length() <= 100
                                     or type(v) is float and math.isfinite(v)
                                     or type(v) is str and v.isascii() for v in meta.values()))
            and (type(arrival) is int and type(processing_time) is int
                 or processing_time >= _RESOLUTION * math.ulp(float(arrival) + float(processing_time)))):
        if not meta:
            return Job._abstract(job_id, arrival, gpus, processing_time, instances, user, status)
        return Job._checked({"id": job_id, "arrival": arrival, "gpus": gpus,
                             "processing_time": processing_time, "instances": instances,
                             "user": user, "status": status,
                             "meta": {str(k): v for k, v in meta.items()} if meta else None})
    return row_job(report, line, job_id, arrival, gpus, processing_time=processing_time, instances=instances,
                   user=user, status=status, **({} if meta is None else {"meta": meta}))


_STATUS = {"pass": "succeeded", "completed": "succeeded", "succeeded": "succeeded", "terminated": "succeeded",
           "failed": "failed", "fail": "failed", "node_fail": "failed", "timeout": "killed",
           "killed": "killed", "cancelled": "killed", "canceled": "killed"}


def trace_status(text) -> str | None:
    """A trace's job status (Philly ``Pass``/``Failed``/``Killed``, Helios ``COMPLETED``/``FAILED``/
    ``CANCELLED``/``TIMEOUT``/``NODE_FAIL``, PAI ``Terminated``/``Failed``) as a ``Job.status``
    (``succeeded``, ``failed`` or ``killed``); None for an empty or unknown value (e.g. a job still
    running when the trace ended).

    >>> trace_status("Pass"), trace_status("CANCELLED"), trace_status("NODE_FAIL"), trace_status("")
    ('succeeded', 'killed', 'failed', None)
    """
    return _STATUS.get(str(text or "").strip().lower())
