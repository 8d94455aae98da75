"""The batch runner: many instance files, one task, a resumable results file.

This module owns ``asrpt batch``'s loop and its results file: which instances still need work,
appending one row per finished instance so that a kill at any moment loses nothing already
written, resuming, and the summary. It assumes :mod:`asrpt.batch.tasks` (what a row computes)
and :mod:`asrpt.batch.executors` (where it runs).

**Results file** (JSON Lines, the default): one JSON object per line, appended as each instance
finishes. Each row is written with a single ``os.write`` of the complete line to a file opened
in append mode, so a killed run leaves only complete rows, plus at most one partial last line,
which the next run discards (truncating the file back to the last complete row) and reports.
Rows are made durable with ``fsync`` by a background thread that syncs whatever has been
written since its last sync (group commit: a sync costs milliseconds on most disks, as much as
a small instance), and once more before the runner returns. A lock file (``RESULTS.lock``, an
``flock``) keeps two runs from appending to the same file at once.

**Ownership**: the first line of a results file is a header, ``{"schema":
"asrpt-batch-results/1", "asrpt_version": ...}``, written when the file is created. A run appends
only to a file that is missing, empty, or starts with that header (or, for files written before
headers existed, with a row of schema ``asrpt-batch-row/1``); anything else (an instance file, a
text file, a device such as ``/dev/full``) is refused with an error before anything is written,
not even the lock file. Readers skip the header.

Row schema (``schema: "asrpt-batch-row/1"``)::

    path           the instance file, as matched
    hash           "sha256:<hex>" of the file's bytes
    task           the task name
    options        the task's normalised options (every default filled in)
    status         "ok" | "error" | "timeout"
    error          one line, or null
    figures        the task's figures (see asrpt.batch.tasks), or null
    wall_time      seconds the instance took in its worker
    worker         "pid:N" or a dask worker address
    asrpt_version  the asrpt version that wrote the row

**Resume**: the key of a row is ``(hash, task, options)``. A rerun skips every input whose key
already has a row (whatever its status; ``retry_failed=True`` reruns "error" and "timeout" rows,
appending new rows: readers keep the last row per key, see :func:`read_results`). Identical
files in the input share a key and are solved once.

**Parquet** (``out`` ending in ``.parquet``, needs pyarrow): the JSON Lines journal is kept
beside it as ``OUT.jsonl`` (the resumable part), and the Parquet file is rewritten atomically
(temporary file, then rename) from the journal at the end of every run, one row per key, with
``options`` and ``figures`` as JSON text columns.

Examples
--------
>>> import os, tempfile
>>> from asrpt.workloads.generators import generate_files
>>> d = tempfile.mkdtemp()
>>> _ = generate_files("uniform", os.path.join(d, "inst"), n=3, seed=0, n_jobs=4)
>>> s = run_batch(os.path.join(d, "inst"), "srpt", out=os.path.join(d, "r.jsonl"))
>>> s.done, s.ok, s.skipped
(3, 3, 0)
>>> run_batch(os.path.join(d, "inst"), "srpt", out=os.path.join(d, "r.jsonl")).skipped
3
>>> [r["status"] for r in read_results(os.path.join(d, "r.jsonl"))]
['ok', 'ok', 'ok']
"""

from __future__ import annotations

import glob
import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from numbers import Integral, Real
from typing import Callable, Iterator

from .._json import jsonable
from .._validation import Interval, Options, validate_params
from ..errors import InvalidParameterError
from ..instance import id_key
from .executors import EXECUTORS, Outcome, make_executor
from .tasks import WorkItem, execute, get_task, instance_hash, normalize_options, options_key

__all__ = ["SCHEMA", "BatchSummary", "ResultsLog", "expand_inputs", "read_results", "run_batch",
           "row_key"]

SCHEMA = "asrpt-batch-row/1"
HEADER_SCHEMA = "asrpt-batch-results/1"


def _header_line() -> bytes:
    return (json.dumps({"schema": HEADER_SCHEMA, "asrpt_version": _version()},
                       separators=(",", ":")) + "\n").encode()


def _check_owned(path: str) -> None:
    """Refuse a results path that is not a results file this runner wrote (module docstring)."""
    if not os.path.lexists(path):
        return
    if os.path.isdir(path):
        raise InvalidParameterError(f"{path} is a directory, not a results file; give a file name")
    import stat

    if not stat.S_ISREG(os.stat(path).st_mode):
        raise InvalidParameterError(f"{path} is not a regular file (a device or FIFO); give a results "
                                    "file name")
    with open(path, "rb") as fh:
        first = fh.readline(1 << 16)
    if not first.strip():
        return  # empty
    if not first.endswith(b"\n"):  # a header cut short by a kill while the file was created
        prefix = b'{"schema":"' + HEADER_SCHEMA.encode() + b'"'
        if prefix.startswith(first) or first.startswith(prefix):
            return
    else:
        try:
            head = json.loads(first)
        except ValueError:
            head = None
        if isinstance(head, dict) and head.get("schema") in (HEADER_SCHEMA, SCHEMA):
            return
    raise InvalidParameterError(
        f"{path} exists and is not an asrpt batch results file (its first line is not the "
        f"{HEADER_SCHEMA!r} header); refusing to append to it: give another --out")


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

def _natural(path: str) -> tuple:
    return id_key(path)


@validate_params({"inputs": [str, os.PathLike, list, tuple]})
def expand_inputs(inputs) -> list[str]:
    """Instance files named by directories (their ``*.json``), glob patterns or file names.

    Parameters
    ----------
    inputs : str, path or sequence of them
        Directories (non-recursive ``*.json``), globs (``"runs/**/*.json"``, recursive) or files.

    Returns
    -------
    list of str
        Unique paths in natural order (``x-9.json`` before ``x-10.json``).

    Raises
    ------
    InvalidParameterError
        An input matches nothing.

    Examples
    --------
    >>> expand_inputs("no/such/dir")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: no instance file matches 'no/such/dir'
    """
    items = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    seen: dict[str, None] = {}
    for item in items:
        text = os.fspath(item)
        if os.path.isdir(text):
            found = [p for p in glob.glob(os.path.join(glob.escape(text), "*.json")) if os.path.isfile(p)]
        elif os.path.isfile(text):
            found = [text]
        else:
            found = [p for p in glob.glob(text, recursive=True) if os.path.isfile(p)]
        if not found:
            raise InvalidParameterError(f"no instance file matches {text!r}")
        for p in sorted(found, key=_natural):
            seen.setdefault(p, None)
    return list(seen)


# ---------------------------------------------------------------------------------------------
# The results file
# ---------------------------------------------------------------------------------------------

@validate_params({"row": [dict]})
def row_key(row: dict) -> tuple[str, str, str]:
    """A row's resume key ``(hash, task, options)``; the options part also names the content of
    the user code they load (a row's ``sources``, :func:`option_sources`), so that editing a
    policy file makes its rows stale.

    Parameters
    ----------
    row : dict
        A result row.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> row_key({"hash": "sha256:0", "task": "srpt", "options": {"predicted": False}})
    ('sha256:0', 'srpt', '{"predicted":false}')
    """
    return (row["hash"], row["task"], _options_and_sources(row["options"], row.get("sources")))


def _options_and_sources(options: dict, sources: dict | None) -> str:
    key = options_key(options)
    return key + " " + options_key(sources) if sources else key


def option_sources(options: dict) -> dict:
    """``{file: "sha256:<hex>"}`` of the user code that string options load (a policy given as
    ``path/to/file.py:Class`` or ``module:Class``), where the file can be found; ``{}`` for
    registered names.

    >>> option_sources({"policy": "fifo", "seed": 0})
    {}
    """
    import hashlib
    import importlib.util

    from ..policies import user_policy_spec

    from ..registry import split_specs

    out = {}
    specs = [s for v in options.values() if isinstance(v, str) for s in split_specs(v)]
    for value in specs:            # (a list of policies, as compare-opt's, names each file)
        user = user_policy_spec(value)
        if user is None:
            continue
        where = user[0]
        path = where if where.endswith(".py") else None
        if path is None:
            try:
                found = importlib.util.find_spec(where)
            except (ImportError, ValueError):
                found = None
            path = getattr(found, "origin", None)
        try:
            with open(path, "rb") as fh:
                out[where] = "sha256:" + hashlib.sha256(fh.read()).hexdigest()
        except (OSError, TypeError):
            continue        # (not a file: the task reports the spec's error itself)
    return dict(sorted(out.items()))


class _Syncer(threading.Thread):
    """fsyncs a file descriptor whenever something was written since the last sync."""

    def __init__(self, fd: int):
        super().__init__(name="asrpt-batch-fsync", daemon=True)
        self.fd = fd
        self.dirty = threading.Event()
        self.closing = False
        self.error: OSError | None = None

    def run(self) -> None:
        while True:
            self.dirty.wait()
            self.dirty.clear()
            try:
                os.fsync(self.fd)
            except OSError as exc:  # reported at close
                self.error = exc
            if self.closing and not self.dirty.is_set():
                return

    def close(self) -> None:
        self.closing = True
        self.dirty.set()
        self.join()


class ResultsLog:
    """An append-only JSON Lines results file with a lock, crash-safe appends and resume.

    Parameters
    ----------
    path : str
        The file (created if missing).

    Attributes
    ----------
    rows : list of dict
        The complete rows found when it was opened, in file order.
    discarded : int
        Bytes of a partial last line that were cut off when it was opened (0 if none).
    corrupt : int
        Complete lines that were not JSON objects (kept in the file, ignored).

    Raises
    ------
    InvalidParameterError
        Another run holds the file's lock.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "r.jsonl")
    >>> with ResultsLog(p) as log:
    ...     log.append({"hash": "h", "task": "srpt", "options": {}, "status": "ok"})
    >>> with open(p, "a") as fh:
    ...     _ = fh.write('{"hash": "h2", "ta')          # a run killed mid-write
    >>> with ResultsLog(p) as log:
    ...     len(log.rows), log.discarded
    (1, 18)
    """

    def __init__(self, path: str):
        self.path = os.fspath(path)

    def __enter__(self) -> "ResultsLog":
        import fcntl

        _check_owned(self.path)
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        self._lock = open(self.path + ".lock", "a+")
        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise InvalidParameterError(
                f"{self.path} is being written by another asrpt batch (lock {self.path}.lock)") from None
        self.rows, self.discarded, self.corrupt = self._recover()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if os.fstat(self._fd).st_size == 0:
            os.write(self._fd, _header_line())
        self._syncer = _Syncer(self._fd)
        self._syncer.start()
        return self

    def _recover(self) -> tuple[list, int, int]:
        if not os.path.exists(self.path):
            return [], 0, 0
        with open(self.path, "rb") as fh:
            data = fh.read()
        end = data.rfind(b"\n") + 1   # everything after the last newline is a partial row
        discarded = len(data) - end
        if end == 0:
            discarded = 0  # a header cut short: the whole file goes, the header is rewritten
            if data:
                with open(self.path, "r+b") as fh:
                    fh.truncate(0)
            return [], 0, 0
        if discarded:
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
                fh.flush()
                os.fsync(fh.fileno())
        rows, corrupt = [], 0
        for line in data[:end].splitlines():
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                corrupt += 1
                continue
            if isinstance(row, dict) and {"hash", "task", "options"} <= set(row):
                rows.append(row)
            elif not (isinstance(row, dict) and row.get("schema") == HEADER_SCHEMA):
                corrupt += 1
        return rows, discarded, corrupt

    def append(self, row: dict) -> None:
        """Write one row as one complete line (one ``write``; synced in the background)."""
        line = (json.dumps(jsonable(row), separators=(",", ":"), allow_nan=False) + "\n").encode()
        view = memoryview(line)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        self._syncer.dirty.set()

    def __exit__(self, *exc) -> None:
        try:
            self._syncer.close()
            os.fsync(self._fd)
            os.close(self._fd)
        finally:
            self._lock.close()
        if self._syncer.error is not None:
            raise InvalidParameterError(f"could not sync {self.path}: {self._syncer.error}")


@validate_params({"path": [str, os.PathLike], "latest": ["boolean"]})
def read_results(path, *, latest: bool = True) -> list[dict]:
    """The rows of a results file (JSON Lines, or Parquet with pyarrow).

    Parameters
    ----------
    path : str or path
        The results file.
    latest : bool
        Keep only the last row per key (what a rerun with ``retry_failed`` left), in the order
        the keys first appeared; False: every complete row, in file order.

    Returns
    -------
    list of dict

    Raises
    ------
    InvalidParameterError
        The file is missing.

    Examples
    --------
    >>> read_results("missing.jsonl")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: no results file 'missing.jsonl'
    """
    text = os.fspath(path)
    if not os.path.exists(text):
        raise InvalidParameterError(f"no results file {text!r}")
    if text.endswith(".parquet"):
        pq = _pyarrow()
        rows = pq.read_table(text).to_pylist()
        for r in rows:
            for name in ("options", "figures"):
                r[name] = json.loads(r[name]) if r[name] is not None else None
    else:
        rows = []
        with open(text, "rb") as fh:
            for line in fh:
                if not line.endswith(b"\n"):
                    break
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if isinstance(row, dict) and {"hash", "task", "options"} <= set(row):
                    rows.append(row)
    if not latest:
        return rows
    last: dict = {}
    for r in rows:
        last[row_key(r)] = r
    return list(last.values())


def ratio_rows(rows) -> list[dict]:
    """One flat record per instance and policy from ``compare-opt`` rows (those of other tasks,
    and rows that are not ``ok``, are left out): ``path``, ``hash``, ``n_jobs``, ``policy``,
    ``predictor``, ``sources`` (the content hashes of the user code the row's options load),
    ``total_weighted_completion_time``, ``mean_jct``, ``opt_closed``, ``ratio_to_opt`` (None
    unless OPT is proven), ``ratio_to_opt_low`` and ``ratio_to_opt_high``. Of rows with the same
    instance and options, only the last counts: after a policy file was edited and the batch
    rerun, the rows of its older content (other ``sources``) are left out. A pandas DataFrame
    takes the list as it is: ``pandas.DataFrame(ratio_rows(read_results(path)))``.

    Examples
    --------
    >>> row = {"task": "compare-opt", "status": "ok", "path": "a.json", "hash": "sha256:0",
    ...        "figures": {"n_jobs": 3, "opt_closed": True, "results": [{"policy": "fifo",
    ...        "total_weighted_completion_time": 9, "mean_jct": 3, "ratio_to_opt": 1.125,
    ...        "ratio_to_opt_low": 1.125, "ratio_to_opt_high": 1.125}]}}
    >>> [(r["path"], r["policy"], r["ratio_to_opt"]) for r in ratio_rows([row])]
    [('a.json', 'fifo', 1.125)]
    """
    latest: dict = {}       # (hash, options) -> the last row: a rerun after editing a policy file wins
    for row in rows:
        if row.get("task") == "compare-opt" and row.get("status") == "ok":
            key = (row.get("hash"), options_key(row.get("options") or {}))
            latest.pop(key, None)
            latest[key] = row
    out = []
    for row in latest.values():
        figures = row.get("figures") or {}
        for r in figures.get("results", ()):
            out.append({"path": row.get("path"), "hash": row.get("hash"), "n_jobs": figures.get("n_jobs"),
                        "sources": row.get("sources") or {},
                        "policy": r["policy"], "predictor": r.get("predictor"),
                        "total_weighted_completion_time": r["total_weighted_completion_time"],
                        "mean_jct": r["mean_jct"], "opt_closed": figures.get("opt_closed"),
                        "ratio_to_opt": r["ratio_to_opt"], "ratio_to_opt_low": r["ratio_to_opt_low"],
                        "ratio_to_opt_high": r["ratio_to_opt_high"]})
    return out


def _pyarrow():
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise InvalidParameterError("Parquet results need pyarrow (pip install pyarrow); "
                                    "or write JSON Lines (a .jsonl file)") from None
    return pq


def _write_parquet(rows: list[dict], path: str) -> None:
    import pyarrow as pa

    pq = _pyarrow()
    columns = ("schema", "path", "hash", "task", "options", "status", "error", "figures",
               "wall_time", "worker", "asrpt_version")
    table = {c: [] for c in columns}
    for r in rows:
        for c in columns:
            v = r.get(c)
            if c in ("options", "figures"):
                v = None if v is None else json.dumps(v, sort_keys=True, allow_nan=False)
            table[c].append(v)
    tmp = f"{path}.tmp{os.getpid()}"
    pq.write_table(pa.table(table), tmp)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BatchSummary:
    """What one ``run_batch`` call did.

    Attributes
    ----------
    inputs : int
        Instance files matched.
    skipped : int
        Files whose key already had a row (finished by an earlier run).
    duplicates : int
        Files identical to an earlier file of this run (solved once).
    done : int
        Instances run now (``ok + error + timeout``).
    ok, error, timeout : int
        Rows written now, by status.
    failed_total : int
        Rows of the results file, for these inputs, whose latest status is not "ok" (including
        earlier runs').
    wall_time : float
        Seconds of this call.
    rate : float or None
        Instances run per second (None when none ran).
    discarded_bytes : int
        Bytes of a partial last row cut off at the start (from a killed run).
    out : str
        The results file (the Parquet file when writing Parquet).
    executor : str
        ``"processes"`` or ``"dask"``.
    jobs : int
        Worker processes asked for.
    notes : tuple of str
        What the user should know (a discarded partial row, malformed lines ignored).

    Examples
    --------
    >>> BatchSummary(3, 0, 0, 3, 3, 0, 0, 0, 1.0, 3.0, 0, "r.jsonl", "processes", 1).to_dict()["ok"]
    3
    """

    inputs: int
    skipped: int
    duplicates: int
    done: int
    ok: int
    error: int
    timeout: int
    failed_total: int
    wall_time: float
    rate: float | None
    discarded_bytes: int
    out: str
    executor: str
    jobs: int
    notes: tuple = field(default=())

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        return asdict(self)


def _row(item: WorkItem, outcome: Outcome) -> dict:
    from .. import __version__

    if outcome.status == "ok":
        result = outcome.value
        status, error, figures, wall = (result["status"], result["error"], result["figures"],
                                        result["wall_time"])
    else:
        status = "timeout" if outcome.status == "timeout" else "error"
        error, figures, wall = outcome.error, None, outcome.wall_time
    return {"schema": SCHEMA, "path": item.path, "hash": item.hash, "task": item.task,
            "options": item.options, "status": status, "error": error, "figures": figures,
            "wall_time": wall, "worker": outcome.worker, "asrpt_version": __version__}


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


@validate_params({
    "inputs": [str, os.PathLike, list, tuple],
    "task": [str],
    "out": [str, os.PathLike],
    "options": [None, dict],
    "jobs": [Interval(Integral, 1, None, closed="left")],
    "time_limit": [None, Interval(Real, 0, None, closed="neither")],
    "executor": [Options(str, set(EXECUTORS))],
    "scheduler": [None, str],
    "retry_failed": ["boolean"],
    "progress": ["boolean"],
    "grace": [None, Interval(Real, 0, None, closed="neither")],
    "on_row": [None, callable],
})
def run_batch(inputs, task: str, *, out, options: dict | None = None, jobs: int = 1,
              time_limit: float | None = None, executor: str = "processes",
              scheduler: str | None = None, retry_failed: bool = False, progress: bool = False,
              grace: float | None = None, on_row: Callable[[dict], None] | None = None
              ) -> BatchSummary:
    """Run ``task`` on every instance file of ``inputs``, appending one row each to ``out``.

    Parameters
    ----------
    inputs : str, path or sequence
        Directories, globs or files (:func:`expand_inputs`).
    task : str
        A task of :data:`asrpt.batch.tasks.TASKS`.
    out : str or path
        Results file: JSON Lines, or Parquet when it ends in ``.parquet`` (see the module
        docstring).
    options : dict or None
        Task options (:func:`asrpt.batch.tasks.normalize_options`), checked before anything runs.
    jobs : int
        Worker processes.
    time_limit : float or None
        Seconds per instance; an instance past it is recorded with status "timeout".
    executor : {"processes", "dask"}
        Where instances run (:mod:`asrpt.batch.executors`).
    scheduler : str or None
        Address of an existing dask scheduler (dask only).
    retry_failed : bool
        Also rerun instances whose latest row is "error" or "timeout".
    progress : bool
        Show a tqdm progress bar (rate and ETA) on stderr.
    grace : float or None
        Seconds between the soft and the hard time limit (default ``max(2, limit / 4)``).
    on_row : callable or None
        Called with each row after it is written.

    Returns
    -------
    BatchSummary

    Raises
    ------
    InvalidParameterError
        Unknown task or option, an input that matches nothing, a results file locked by another
        run, or a missing optional dependency (dask, pyarrow).
    """
    t0 = time.perf_counter()
    spec = get_task(task)
    opts = normalize_options(spec.name, options)
    sources = option_sources(opts)      # (user code: its content is part of the key)
    okey = _options_and_sources(opts, sources)
    files = expand_inputs(inputs)
    out = os.fspath(out)
    parquet = out.endswith(".parquet")
    if parquet:
        _pyarrow()
    journal = out + ".jsonl" if parquet else out
    ex = make_executor(executor, jobs=jobs, scheduler=scheduler, time_limit=time_limit, grace=grace)
    notes: list[str] = []
    with ResultsLog(journal) as log:
        if log.discarded:
            notes.append(f"discarded a partial last row ({log.discarded} bytes) left by an "
                         "interrupted run")
        if log.corrupt:
            notes.append(f"ignored {log.corrupt} malformed line(s) of {journal}")
        latest: dict[tuple, dict] = {}
        for r in log.rows:
            latest[row_key(r)] = r
        pending: list[tuple[str, str]] = []   # (path, hash)
        keys_now: set = set()
        skipped = duplicates = 0
        unreadable: list[str] = []
        for path in files:
            data = _read(path)
            if data is None:
                unreadable.append(path)
                continue
            key = (instance_hash(data), spec.name, okey)
            if key in keys_now:
                duplicates += 1
                continue
            keys_now.add(key)
            prior = latest.get(key)
            if prior is not None and not (retry_failed and prior.get("status") != "ok"):
                skipped += 1
                continue
            pending.append((path, key[0]))
        counts = {"ok": 0, "error": 0, "timeout": 0}
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(pending), desc=f"batch {spec.name}", unit="inst", dynamic_ncols=True,
                       smoothing=0.05)

        def write(row: dict) -> None:
            if sources:
                row["sources"] = sources
            log.append(row)
            latest[row_key(row)] = row
            counts[row["status"]] += 1
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(f"ok={counts['ok']} error={counts['error']} "
                                    f"timeout={counts['timeout']}", refresh=False)
            if on_row is not None:
                on_row(row)

        for path in unreadable:
            write({"schema": SCHEMA, "path": path, "hash": f"unreadable:{path}", "task": spec.name,
                   "options": opts, "status": "error", "error": f"cannot read {path}",
                   "figures": None, "wall_time": 0.0, "worker": "runner",
                   "asrpt_version": _version()})
        items: dict[int, WorkItem] = {}

        def work() -> Iterator[tuple[int, WorkItem]]:
            for n, (path, digest) in enumerate(pending):
                data = _read(path)
                if data is None or instance_hash(data) != digest:
                    what = "became unreadable" if data is None else "changed"
                    write({"schema": SCHEMA, "path": path, "hash": digest, "task": spec.name,
                           "options": opts, "status": "error",
                           "error": f"{path} {what} during the batch", "figures": None,
                           "wall_time": 0.0, "worker": "runner", "asrpt_version": _version()})
                    continue
                item = WorkItem(path, digest, spec.name, opts, data)
                items[n] = item
                yield n, item

        try:
            if pending:
                with ex:
                    for outcome in ex.run(execute, work()):
                        write(_row(items.pop(outcome.key), outcome))
        finally:
            if bar is not None:
                bar.close()
        failed_total = sum(1 for k in keys_now if latest.get(k, {}).get("status") != "ok")
        failed_total += len(unreadable)
        rows_for_parquet = list(latest.values()) if parquet else None
    if parquet:
        _write_parquet(rows_for_parquet, out)
    done = sum(counts.values())
    wall = time.perf_counter() - t0
    return BatchSummary(inputs=len(files), skipped=skipped, duplicates=duplicates, done=done,
                        ok=counts["ok"], error=counts["error"], timeout=counts["timeout"],
                        failed_total=failed_total, wall_time=wall,
                        rate=done / wall if done and wall > 0 else None,
                        discarded_bytes=log.discarded, out=out, executor=executor, jobs=jobs,
                        notes=tuple(notes))


def _version() -> str:
    from .. import __version__

    return __version__
