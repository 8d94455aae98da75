"""``abstract_job`` (the readers' checked-once Job construction) against ``Job`` itself.

On random and boundary values: where ``Job`` accepts the row, the fast path returns an equal
job with fields of the same types; where ``Job`` refuses it, the same problem is reported.
"""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

from asrpt.errors import InvalidInstance
from asrpt.instance import LIMITS, Job
from asrpt.traces.base import TraceReport, abstract_job

G_MAX = LIMITS["servers"] * LIMITS["server_gpus"]
# (values the format accepts, values it may refuse); a field takes the second list 1 time in 8
_TIMES = ([0, 1, 7, 10**12, 0.0, -0.0, 0.5, 1e-3, 1e-300, 1e12, 1e9, 123456.75, 2.5e-7, 86400],
          [10**12 + 1, -1, 1.0000001e12, math.nan, math.inf, -math.inf, -0.5])
_IDS = (["7", "j10", " a", "x" * 256, "a b", "40123"], ["x" * 257, "", "   ", "a\x00b", "tab\tid", "é", "\ud800"])
_USERS = ([None, "u1", "b436b2", " v "], ["", " ", "u\x7f", "ü" * 3, "v" * 300])
_GPUS = ([1, 2, 8, 12, G_MAX], [0, -4, 3.0, G_MAX + 1])
_INSTANCES = ([None, 1, 2, 3, LIMITS["servers"]], [0, LIMITS["servers"] + 1, 2.0])
_STATUS = ([None, "succeeded", "failed", "killed"], ["weird"])
_META = ([None, {}, {"row": 3, "trace_duration": 1.5, "submitted": 1e9}, {"vc": "6214e9", "state": "COMPLETED"}],
         [{"x": math.nan}, {"big": 2**120}, {"s": "é\ud800"}, {"s": "é"}, {"flag": True}, {"nested": {"a": 1}}])



def _field_names(job):
    """A Job's field names (Job has slots, so no ``vars()``)."""
    return [f.name for f in dataclasses.fields(job)]

def _pick(rng, values):
    good, bad = values
    return rng.choice(bad if rng.random() < 0.125 else good)


def _expected(args, kwargs):
    try:
        return Job(*args, **kwargs), None
    except InvalidInstance as exc:
        return None, "; ".join(str(p) for p in exc.problems)


@pytest.mark.parametrize("seed", range(4))
def test_abstract_job_equals_job(seed):
    rng = random.Random(seed)
    accepted = 0
    for k in range(3000):
        job_id, arrival, p = _pick(rng, _IDS), _pick(rng, _TIMES), _pick(rng, _TIMES)
        gpus, inst = _pick(rng, _GPUS), _pick(rng, _INSTANCES)
        user, status, meta = _pick(rng, _USERS), _pick(rng, _STATUS), _pick(rng, _META)
        kwargs = {"processing_time": p, "instances": inst, "user": user, "status": status}
        if meta is not None:
            kwargs["meta"] = meta
        want, problem = _expected((job_id, arrival, gpus), kwargs)
        report = TraceReport("t.csv")
        got = abstract_job(report, k + 2, job_id, arrival, gpus, p, instances=inst, user=user, status=status,
                           meta=meta)
        if want is None:
            assert got is None and [str(m) for m in report.malformed] == [f"t.csv:{k + 2}: {problem}"]
            continue
        accepted += 1
        assert got == want and not report.malformed
        for name in _field_names(want):
            assert type(getattr(got, name)) is type(getattr(want, name)), name
        assert dict(got.meta) == dict(want.meta) and type(got.meta) is type(want.meta)
    assert accepted > 300  # both outcomes are exercised


def test_abstract_job_is_frozen():
    job = abstract_job(TraceReport("t.csv"), 2, "1", 0, 1, 5)
    with pytest.raises(AttributeError):
        job.gpus = 2  # type: ignore[misc]


def test_assigned_dnn_jobs_equal_jobs_built_and_checked_by_job():
    """assign_models builds its DNN jobs without Job's per-field checks: each equals the Job that
    the constructor builds (and checks) from the same fields, and its iterations are those of a
    fresh tau* of its own model and configuration."""
    from importlib import resources

    from asrpt.dnn.perf import best_iteration_time
    from asrpt.traces import read_philly

    path = str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
    inst, _ = read_philly(path, limit=300, dnn=True, seed=3)
    dnn = [j for j in inst.jobs if not j.is_abstract]
    assert len(dnn) > 250 and len({j.model for j in dnn}) > 5
    for j in dnn:
        fields = {name: getattr(j, name) for name in _field_names(j)}
        fields["meta"] = dict(j.meta)
        rebuilt = Job(**fields)
        assert rebuilt == j
        for name in _field_names(j):
            assert type(getattr(rebuilt, name)) is type(getattr(j, name)), name
        tau = best_iteration_time(Job(j.id, 0, j.gpus, model=j.model, parallelism=j.parallelism, iterations=1,
                                      seq_len=j.seq_len), inst.cluster)
        assert j.iterations == max(1, round(float(j.meta["trace_duration"]) / tau))


def test_assigned_dnn_jobs_keep_the_trace_status():
    """A job's trace status (``failed``/``killed`` runs stay out of the learned predictors'
    duration history) survives the model assignment: it used to be dropped on ``--dnn`` traces."""
    from asrpt.instance import Cluster, Instance
    from asrpt.traces.assign import assign_models

    jobs = tuple(Job(str(k), k, 1, processing_time=3600, status=s)
                 for k, s in enumerate(("succeeded", "failed", "killed", None)))
    out = assign_models(Instance(Cluster.homogeneous(2, 8, "A100"), jobs), seed=0)
    assert [j.status for j in out.jobs] == ["succeeded", "failed", "killed", None]
    assert all(not j.is_abstract for j in out.jobs)
