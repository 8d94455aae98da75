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
import datetime as _dt
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from ..errors import TraceError

__all__ = ["TraceReport", "RowProblem", "read_csv_rows", "parse_timestamp", "shared_path", "trace_status"]


def shared_path(*parts: str) -> str:
    """Path of a file in the shared data folder (``../shared`` beside the repository).

    Looked up in ``$ASRPT_SHARED``, then ``../shared`` relative to the repository that holds this
    package, then ``/work/shared``; the first that exists wins (the last candidate is returned
    when none does, so the error names a path).
    """
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = []
    if os.environ.get("ASRPT_SHARED"):
        candidates.append(os.environ["ASRPT_SHARED"])
    candidates.append(os.path.join(here, "..", "..", "..", "shared"))
    candidates.append("/work/shared")
    for base in candidates:
        path = os.path.normpath(os.path.join(base, *parts))
        if os.path.exists(path):
            return path
    return os.path.normpath(os.path.join(candidates[-1], *parts))


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
    source = os.fspath(path)
    try:
        if source.endswith(".gz"):
            fh = gzip.open(source, "rt", newline="", encoding="utf-8")
        else:
            fh = open(source, newline="", encoding="utf-8")
    except FileNotFoundError:
        raise TraceError(f"{source}: no such file") from None
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
        raise TraceError(f"{source}: header lacks column(s) {', '.join(missing)} "
                         f"(found: {', '.join(header)})")

    def rows() -> Iterator[tuple[int, dict]]:
        with fh:
            try:
                for values in reader:
                    line = reader.line_num
                    if not values or all(not v.strip() for v in values):
                        continue
                    if len(values) != len(header):
                        yield line, {"__error__": f"{len(values)} fields, header has {len(header)}"}
                        continue
                    yield line, dict(zip(header, values))
            except (csv.Error, UnicodeDecodeError, OSError, EOFError) as exc:
                raise TraceError(f"{source}:{reader.line_num}: unreadable: {exc}") from None

    return header, rows()


def parse_timestamp(text: str) -> float:
    """Seconds since the epoch of ``"YYYY-MM-DD HH:MM:SS"`` (read as UTC), or of a plain number.

    >>> parse_timestamp("1970-01-02 00:00:00"), parse_timestamp("12.5")
    (86400.0, 12.5)
    """
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        stamp = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"bad timestamp {text!r}") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.timezone.utc)
    return stamp.timestamp()


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
