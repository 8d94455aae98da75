"""Executors: run a function on many items in parallel, with a time limit per item.

This module owns *where* batch work runs and how a per-item time limit is enforced; it knows
nothing about instances or result rows (the runner passes :func:`asrpt.batch.tasks.execute` and
work items). Two executors give the same outcomes for the same inputs:

- :class:`ProcessExecutor` (``--executor processes``): ``jobs`` worker processes of this machine
  (started from a fork server that has asrpt imported, so a replacement starts in milliseconds),
  each fed one item at a time over its own pipe;
- :class:`DaskExecutor` (``--executor dask``): a ``dask.distributed`` cluster, a
  ``LocalCluster`` of ``jobs`` single-threaded worker processes by default, or an existing
  cluster at a scheduler address.

**Time limits**, per item, in two stages:

1. *soft*, in the worker: a watchdog thread raises :class:`ItemTimeout` in the thread running
   the item once ``time_limit`` seconds have passed (``PyThreadState_SetAsyncExc``), which stops
   any Python code at its next bytecode; the item's outcome is ``"timeout"``. A process worker
   exits after a soft timeout and is replaced (the interrupted code may have left state behind);
2. *hard*, for code that does not return to Python (a long call into a C library): the process
   executor kills the worker (SIGKILL) at ``time_limit + grace`` and starts a new one; the dask
   executor stops waiting at that point, records the timeout, and asks the cluster to restart
   the worker that holds the item.

A worker that dies (crash, out of memory, killed from outside) gives the outcome ``"crashed"``
for its item; the executor replaces it and goes on.

Examples
--------
>>> with ProcessExecutor(jobs=1) as ex:
...     [(o.key, o.status, o.value) for o in ex.run(abs, [("a", -2)])]
[('a', 'ok', 2)]
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Callable, Hashable, Iterable, Iterator

from .._validation import Interval, Options, validate_params
from ..errors import InvalidParameterError

__all__ = ["ItemTimeout", "Outcome", "call_with_time_limit", "ProcessExecutor", "DaskExecutor",
           "make_executor", "EXECUTORS", "default_grace"]

#: Executor names of ``--executor``.
EXECUTORS = ("processes", "dask")


class ItemTimeout(BaseException):
    """Raised in the thread running an item when its soft time limit passes.

    A ``BaseException`` so that a task's own ``except Exception`` does not swallow it.
    """


@dataclass(frozen=True)
class Outcome:
    """What became of one item.

    Attributes
    ----------
    key : hashable
        The item's key, as given.
    status : {"ok", "timeout", "crashed"}
        ``"ok"``: the function returned ``value``; ``"timeout"``: stopped at the time limit;
        ``"crashed"``: the worker died or the function raised (see ``error``).
    value : object
        The function's return value (``"ok"`` only).
    error : str or None
        One line saying what happened otherwise.
    wall_time : float
        Seconds the item ran (as measured by the worker, or by the executor when the worker
        could not answer).
    worker : str
        Which worker ran it (``"pid:N"`` or a dask worker address).

    Examples
    --------
    >>> Outcome("a", "ok", 1, None, 0.1, "pid:1").status
    'ok'
    """

    key: Hashable
    status: str
    value: Any
    error: str | None
    wall_time: float
    worker: str


@validate_params({"time_limit": [None, Interval(Real, 0, None, closed="neither")]})
def default_grace(time_limit: float | None) -> float:
    """Extra seconds after the soft limit before a worker is killed: ``max(2, limit / 4)``.

    Parameters
    ----------
    time_limit : float or None
        The per-item limit.

    Returns
    -------
    float
        0 without a limit.

    Examples
    --------
    >>> default_grace(1), default_grace(40)
    (2.0, 10.0)
    """
    return 0.0 if time_limit is None else max(2.0, time_limit / 4)


@validate_params({"function": [callable], "time_limit": [None, Interval(Real, 0, None, closed="neither")]})
def call_with_time_limit(function: Callable[[], Any], time_limit: float | None) -> Any:
    """Call ``function()`` in this thread; raise :class:`ItemTimeout` in it after ``time_limit`` s.

    The exception arrives at the next Python bytecode the thread runs, so a long call into C
    (a solver) ends first; the process executor's hard limit covers that case.

    Parameters
    ----------
    function : callable
        Called without arguments.
    time_limit : float or None
        Seconds; None: no limit.

    Returns
    -------
    object
        What ``function`` returns.

    Raises
    ------
    ItemTimeout
        The limit passed first.

    Examples
    --------
    >>> call_with_time_limit(lambda: 3, 1.0)
    3
    >>> call_with_time_limit(lambda: [0 for _ in iter(int, 1)], 0.05)
    Traceback (most recent call last):
    ...
    asrpt.batch.executors.ItemTimeout
    """
    if time_limit is None:
        return function()
    target = threading.get_ident()
    lock = threading.Lock()
    state = {"done": False}

    def fire():
        with lock:
            if not state["done"]:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target),
                                                           ctypes.py_object(ItemTimeout))

    timer = threading.Timer(time_limit, fire)
    timer.daemon = True
    timer.start()
    try:
        return function()
    finally:
        with lock:
            state["done"] = True
        timer.cancel()


def _run_item(function, payload, time_limit, worker: str):
    """Worker side: ``(status, value, error, wall_time, worker)`` for one item."""
    t0 = time.perf_counter()
    try:
        try:
            value = call_with_time_limit(lambda: function(payload), time_limit)
        finally:
            wall = time.perf_counter() - t0
    except ItemTimeout:
        return ("timeout", None, f"stopped at the time limit of {time_limit:g} s", wall, worker)
    except Exception as exc:  # the function's own error: the batch goes on
        text = " ".join(f"{type(exc).__name__}: {exc}".split())
        return ("crashed", None, f"the function raised {text[:480]}", wall, worker)
    return ("ok", value, None, wall, worker)


# ---------------------------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------------------------

def _worker_main(conn, time_limit) -> None:
    """A worker process: items in, outcomes out, until told to stop or after a soft timeout."""
    worker = f"pid:{os.getpid()}"
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        key, function, payload = message
        result = _run_item(function, payload, time_limit, worker)
        try:
            conn.send((key,) + result)
        except (BrokenPipeError, OSError):
            return
        if result[0] == "timeout":  # interrupted code may have left state behind: start afresh
            return


#: Imported once by the fork server, so that workers start with the tasks' modules loaded.
#: (asrpt.policies and asrpt.placement import their plugins lazily: name the modules themselves.)
_PRELOAD = ["asrpt.batch.tasks", "asrpt.theory.certificate", "asrpt.offline.ilp", "asrpt.sim",
            "asrpt.single.virtual", "asrpt.policies._registry", "asrpt.predict",
            "asrpt.placement.ilp", "asrpt.placement.graph_placers"]


def _context():
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


class _Worker:
    def __init__(self, ctx, time_limit):
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=_worker_main, args=(child, time_limit),
                                   daemon=True, name="asrpt-batch-worker")
        self.process.start()
        child.close()
        self.item = None      # (key, payload)
        self.started = 0.0

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.process.join(2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self.conn.close()


class ProcessExecutor:
    """``jobs`` worker processes on this machine, one item each at a time.

    Parameters
    ----------
    jobs : int
        Worker processes.
    time_limit : float or None
        Seconds per item (soft in the worker, hard at ``time_limit + grace``).
    grace : float or None
        Seconds between the soft and the hard limit (default :func:`default_grace`).

    Examples
    --------
    >>> with ProcessExecutor(jobs=2) as ex:
    ...     sorted(o.value for o in ex.run(abs, [(i, -i) for i in range(4)]))
    [0, 1, 2, 3]
    """

    name = "processes"

    def __init__(self, *, jobs: int = 1, time_limit: float | None = None, grace: float | None = None):
        self.jobs = jobs
        self.time_limit = time_limit
        self.grace = grace

    def __enter__(self) -> "ProcessExecutor":
        _check_common(self.jobs, self.time_limit, self.grace, "ProcessExecutor")
        self._workers: list[_Worker] = []
        self._ctx = _context()
        return self

    def __exit__(self, *exc) -> None:
        for w in self._workers:
            if w.item is None:
                w.stop()
            else:
                w.kill()
        self._workers = []

    def run(self, function: Callable[[Any], Any], items: Iterable[tuple[Hashable, Any]]
            ) -> Iterator[Outcome]:
        """Run ``function(payload)`` for every ``(key, payload)``; yield outcomes as they finish.

        ``function`` (a module-level function: pickled by reference) and the payloads are sent
        to the workers with each item; workers persist across calls.
        """
        from multiprocessing.connection import wait

        grace = default_grace(self.time_limit) if self.grace is None else self.grace
        hard = None if self.time_limit is None else self.time_limit + grace
        todo = iter(items)
        requeued: deque = deque()
        exhausted = False
        idle: list[_Worker] = [w for w in self._workers if w.item is None]

        def next_item():
            nonlocal exhausted
            if requeued:
                return requeued.popleft()
            if exhausted:
                return None
            try:
                return next(todo)
            except StopIteration:
                exhausted = True
                return None

        def new_worker() -> _Worker:
            w = _Worker(self._ctx, self.time_limit)
            self._workers.append(w)
            return w

        def retire(w: _Worker) -> None:
            self._workers.remove(w)
            w.kill()

        while True:
            # feed idle workers (starting up to `jobs` of them)
            while True:
                w = idle.pop() if idle else (new_worker() if len(self._workers) < self.jobs else None)
                if w is None:
                    break
                item = next_item()
                if item is None:
                    idle.append(w)
                    break
                try:
                    w.conn.send((item[0], function, item[1]))
                except (BrokenPipeError, OSError):  # died while idle: replace, retry the item
                    requeued.appendleft(item)
                    retire(w)
                    continue
                w.item, w.started = item, time.monotonic()
            busy = [w for w in self._workers if w.item is not None]
            if not busy:
                return
            timeout = None
            if hard is not None:
                timeout = max(0.0, min(w.started + hard for w in busy) - time.monotonic())
            ready = wait([w.conn for w in busy], timeout=timeout)
            by_conn = {w.conn: w for w in busy}
            for conn in ready:
                w = by_conn[conn]
                key, payload = w.item
                try:
                    _, status, value, error, wall, worker = conn.recv()
                except (EOFError, OSError):
                    w.process.join(1)
                    code = w.process.exitcode
                    wall = time.monotonic() - w.started
                    w.item = None
                    retire(w)
                    yield Outcome(key, "crashed", None,
                                  f"the worker process died (exit code {code})", wall,
                                  f"pid:{w.process.pid}")
                    continue
                w.item = None
                if status == "timeout":  # the worker exits after a soft timeout
                    retire(w)
                else:
                    idle.append(w)
                yield Outcome(key, status, value, error, wall, worker)
            if hard is not None:
                now = time.monotonic()
                for w in [w for w in self._workers if w.item is not None and w.conn not in ready]:
                    if now >= w.started + hard:
                        key, _ = w.item
                        w.item = None
                        pid = w.process.pid
                        retire(w)
                        yield Outcome(key, "timeout", None,
                                      f"killed after {hard:g} s (did not stop at the time limit "
                                      f"of {self.time_limit:g} s)", now - w.started, f"pid:{pid}")


def _check_common(jobs, time_limit, grace, caller: str) -> None:
    if not (isinstance(jobs, Integral) and not isinstance(jobs, bool) and jobs >= 1):
        raise InvalidParameterError(f"The 'jobs' parameter of {caller} must be an int in [1, inf). "
                                    f"Got {jobs!r} instead.")
    for name, value in (("time_limit", time_limit), ("grace", grace)):
        if value is not None and not (isinstance(value, Real) and not isinstance(value, bool)
                                      and 0 < value < float("inf")):
            raise InvalidParameterError(f"The '{name}' parameter of {caller} must be a float in "
                                        f"(0, inf) or None. Got {value!r} instead.")


# ---------------------------------------------------------------------------------------------
# Dask
# ---------------------------------------------------------------------------------------------

def _dask_item(function, payload, time_limit):
    """Runs on a dask worker (in one of its threads)."""
    try:
        from distributed import get_worker

        worker = get_worker().address
    except Exception:  # pragma: no cover - outside a worker (e.g. a synchronous client)
        worker = f"pid:{os.getpid()}"
    return _run_item(function, payload, time_limit, worker)


#: Seconds to wait for an existing dask scheduler to answer before giving up.
_CONNECT_TIMEOUT = 10


class DaskExecutor:
    """Run items on a ``dask.distributed`` cluster.

    Parameters
    ----------
    jobs : int
        Worker processes of the LocalCluster started when no ``scheduler`` is given (one thread
        each); ignored with a scheduler (the cluster's threads are used).
    scheduler : str or None
        Address of an existing scheduler (``tcp://host:8786``); None starts a LocalCluster.
    time_limit : float or None
        Seconds per item (soft in the worker; hard at ``time_limit + grace``, see the module
        docstring).
    grace : float or None
        Seconds between the soft and the hard limit (default :func:`default_grace`).

    Raises
    ------
    InvalidParameterError
        dask.distributed is not installed (``pip install "asrpt[dask]"``).

    Examples
    --------
    >>> ex = DaskExecutor(jobs=2)          # nothing starts before ``with``
    >>> ex.name, ex.scheduler is None
    ('dask', True)
    """

    name = "dask"

    def __init__(self, *, jobs: int = 1, scheduler: str | None = None,
                 time_limit: float | None = None, grace: float | None = None):
        self.jobs = jobs
        self.scheduler = scheduler
        self.time_limit = time_limit
        self.grace = grace

    def __enter__(self) -> "DaskExecutor":
        _check_common(self.jobs, self.time_limit, self.grace, "DaskExecutor")
        try:
            import logging

            from distributed import Client, LocalCluster
        except ImportError:
            raise InvalidParameterError(
                "--executor dask needs dask.distributed: pip install 'asrpt[dask]'") from None
        self._cluster = None
        if self.scheduler is None:
            # The scheduler opens an HTTP server even without a dashboard, on 8787 unless told
            # otherwise: ":0" lets the system pick a free port, so two runs never clash.
            self._cluster = LocalCluster(n_workers=self.jobs, threads_per_worker=1, processes=True,
                                         dashboard_address=":0", silence_logs=logging.ERROR)
            self._client = Client(self._cluster)
        else:
            try:
                self._client = Client(self.scheduler, timeout=_CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError, TypeError) as exc:
                raise InvalidParameterError(
                    f"cannot reach the dask scheduler {self.scheduler!r} within {_CONNECT_TIMEOUT} s: "
                    f"{' '.join(str(exc).split()) or type(exc).__name__}") from None
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()

    @property
    def client(self):
        """The ``distributed.Client`` (inside ``with``)."""
        return self._client

    def run(self, function: Callable[[Any], Any], items: Iterable[tuple[Hashable, Any]]
            ) -> Iterator[Outcome]:
        """Run ``function(payload)`` for every ``(key, payload)``; yield outcomes as they finish.

        At most one item per worker thread is in flight, so an item starts when it is submitted
        (the hard limit is counted from then).
        """
        from distributed import wait

        client = self._client
        grace = default_grace(self.time_limit) if self.grace is None else self.grace
        hard = None if self.time_limit is None else self.time_limit + grace
        slots = max(1, sum(client.nthreads().values()))
        todo = iter(items)
        running: dict = {}   # future -> (key, started)
        exhausted = False
        counter = 0
        while True:
            while not exhausted and len(running) < slots:
                try:
                    key, payload = next(todo)
                except StopIteration:
                    exhausted = True
                    break
                counter += 1
                future = client.submit(_dask_item, function, payload, self.time_limit, pure=False,
                                       key=f"asrpt-batch-{os.getpid()}-{id(self)}-{counter}")
                running[future] = (key, time.monotonic())
            if not running:
                return
            timeout = None
            if hard is not None:
                timeout = max(0.01, min(s for _, s in running.values()) + hard - time.monotonic())
            try:
                done = wait(list(running), timeout=timeout, return_when="FIRST_COMPLETED").done
            except TimeoutError:
                done = set()
            for future in done:
                key, started = running.pop(future)
                if future.status == "finished":
                    status, value, error, wall, worker = future.result()
                    yield Outcome(key, status, value, error, wall, worker)
                else:
                    text = ""
                    try:
                        exc = future.exception()
                        text = " ".join(f"{type(exc).__name__}: {exc}".split())
                    except Exception:  # cancelled
                        text = future.status
                    yield Outcome(key, "crashed", None, f"the dask task failed: {text[:480]}",
                                  time.monotonic() - started, "dask")
            if hard is not None:
                now = time.monotonic()
                for future, (key, started) in list(running.items()):
                    if now >= started + hard:
                        running.pop(future)
                        worker = self._restart_worker_of(future)
                        yield Outcome(key, "timeout", None,
                                      f"no answer after {hard:g} s (did not stop at the time limit "
                                      f"of {self.time_limit:g} s); worker restarted",
                                      now - started, worker)

    def _restart_worker_of(self, future) -> str:
        """Cancel a runaway item and restart the worker that runs it (best effort)."""
        client = self._client
        worker = "dask"
        try:
            processing = client.processing()
            for address, keys in processing.items():
                if future.key in keys:
                    worker = address
                    break
            future.cancel()
            if worker != "dask":
                client.restart_workers([worker])
        except Exception:  # the cluster may not support restarts; the item is recorded anyway
            pass
        return worker


@validate_params({
    "name": [Options(str, set(EXECUTORS))],
    "jobs": [Interval(Integral, 1, None, closed="left")],
    "scheduler": [None, str],
    "time_limit": [None, Interval(Real, 0, None, closed="neither")],
    "grace": [None, Interval(Real, 0, None, closed="neither")],
})
def make_executor(name: str = "processes", *, jobs: int = 1, scheduler: str | None = None,
                  time_limit: float | None = None, grace: float | None = None):
    """An executor by name (``--executor``).

    Parameters
    ----------
    name : {"processes", "dask"}
        Which executor.
    jobs : int
        Worker processes (processes, or the dask LocalCluster's).
    scheduler : str or None
        An existing dask scheduler's address (dask only).
    time_limit : float or None
        Seconds per item.
    grace : float or None
        Seconds between the soft and the hard limit.

    Returns
    -------
    ProcessExecutor or DaskExecutor
        Use it as a context manager.

    Raises
    ------
    InvalidParameterError
        A bad parameter, or a scheduler address with the processes executor.

    Examples
    --------
    >>> make_executor("processes", jobs=2).jobs
    2
    """
    if name == "processes":
        if scheduler is not None:
            raise InvalidParameterError("--scheduler needs --executor dask")
        return ProcessExecutor(jobs=jobs, time_limit=time_limit, grace=grace)
    return DaskExecutor(jobs=jobs, scheduler=scheduler, time_limit=time_limit, grace=grace)
