"""Executors: outcomes for every item, the soft time limit (in the worker) and the hard one
(the worker is killed and replaced), crashed workers replaced, and bad parameters."""

import os
import time

import pytest

from asrpt.batch.executors import (DaskExecutor, ItemTimeout, ProcessExecutor, call_with_time_limit,
                                   default_grace, make_executor)
from asrpt.errors import InvalidParameterError


# Worker functions live at module level: they are pickled by reference to the workers.

def square(x):
    return x * x


def busy(seconds):
    """Pure Python work: stops at the soft limit."""
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
    return "done"


def sleep_in_c(seconds):
    """time.sleep does not return to Python early: only the hard limit stops it."""
    time.sleep(seconds)
    return "slept"


def die(code):
    os._exit(code)


def fail(x):
    raise ValueError(f"bad item {x}")


def by_key(outcomes):
    return {o.key: o for o in outcomes}


def test_every_item_gets_an_ok_outcome_from_several_workers():
    with ProcessExecutor(jobs=2) as ex:
        out = by_key(ex.run(square, [(i, i) for i in range(20)]))
    assert {k: o.value for k, o in out.items()} == {i: i * i for i in range(20)}
    assert {o.status for o in out.values()} == {"ok"}
    assert len({o.worker for o in out.values()}) == 2


def test_soft_timeout_stops_python_code_and_the_batch_goes_on():
    # The slow item would run 120 s: the bounds below only say that the limit cut it short, with
    # room for a loaded machine (starting worker processes there takes seconds).
    with ProcessExecutor(jobs=1, time_limit=0.3, grace=5) as ex:
        t = time.perf_counter()
        out = by_key(ex.run(busy, [("slow", 120.0), ("fast", 0.0), ("fast2", 0.0)]))
        took = time.perf_counter() - t
    assert out["slow"].status == "timeout" and "time limit of 0.3 s" in out["slow"].error
    assert 0.3 <= out["slow"].wall_time < 30
    assert out["fast"].status == out["fast2"].status == "ok"
    assert out["fast"].worker != out["slow"].worker   # the worker exits after a soft timeout
    assert took < 60


def test_hard_timeout_kills_a_worker_stuck_in_c_and_replaces_it():
    with ProcessExecutor(jobs=1, time_limit=0.2, grace=0.3) as ex:
        t = time.perf_counter()
        out = by_key(ex.run(sleep_in_c, [("stuck", 300), ("next", 0)]))
        took = time.perf_counter() - t
    assert out["stuck"].status == "timeout" and out["stuck"].error.startswith("killed after 0.5 s")
    assert out["next"].status == "ok" and out["next"].value == "slept"
    assert took < 120   # (the stuck item alone would take 300 s; a loaded machine needs room)


def test_a_dying_worker_or_a_raising_function_is_recorded_and_replaced():
    with ProcessExecutor(jobs=1) as ex:
        out = by_key(ex.run(die, [("a", 3)]))
        assert out["a"].status == "crashed" and "exit code 3" in out["a"].error
        out = by_key(ex.run(fail, [("b", 1), ("c", 2)]))
    assert out["b"].status == "crashed" and "ValueError: bad item 1" in out["b"].error
    assert out["c"].status == "crashed"


def test_call_with_time_limit_in_this_thread():
    assert call_with_time_limit(lambda: 5, None) == 5
    with pytest.raises(ItemTimeout):
        call_with_time_limit(lambda: busy(5), 0.05)
    assert call_with_time_limit(lambda: busy(0.01), 5) == "done"   # no late exception
    time.sleep(0.05)


@pytest.mark.parametrize("make, message", [
    (lambda: make_executor("threads"), "The 'name' parameter of make_executor"),
    (lambda: make_executor("processes", scheduler="tcp://x:1"), "--scheduler needs --executor dask"),
    (lambda: make_executor("processes", jobs=0), "The 'jobs' parameter of make_executor"),
    (lambda: ProcessExecutor(jobs=0).__enter__(), "The 'jobs' parameter of ProcessExecutor"),
    (lambda: DaskExecutor(time_limit=-1).__enter__(), "The 'time_limit' parameter of DaskExecutor"),
])
def test_bad_executor_parameters(make, message):
    with pytest.raises(InvalidParameterError, match=message):
        make()


def test_default_grace():
    assert default_grace(None) == 0.0 and default_grace(100) == 25.0


def test_dask_local_cluster_soft_and_hard_timeouts():
    pytest.importorskip("distributed")
    with DaskExecutor(jobs=1, time_limit=0.4, grace=0.6) as ex:
        assert sum(ex.client.nthreads().values()) == 1
        soft = by_key(ex.run(busy, [("slow", 20.0), ("fast", 0.0)]))
        hard = by_key(ex.run(sleep_in_c, [("stuck", 30), ("next", 0)]))
    assert soft["slow"].status == "timeout" and "time limit of 0.4 s" in soft["slow"].error
    assert soft["fast"].status == "ok" and soft["fast"].worker.startswith("tcp://")
    assert hard["stuck"].status == "timeout" and "worker restarted" in hard["stuck"].error
    assert hard["next"].status == "ok" and hard["next"].value == "slept"


def test_an_unreachable_dask_scheduler_is_a_one_line_error(monkeypatch):
    pytest.importorskip("distributed")
    from asrpt.batch import executors
    from asrpt.errors import InvalidParameterError

    monkeypatch.setattr(executors, "_CONNECT_TIMEOUT", 1)
    with pytest.raises(InvalidParameterError, match="cannot reach the dask scheduler 'tcp://127.0.0.1:9'"):
        with executors.make_executor("dask", scheduler="tcp://127.0.0.1:9"):
            pass
