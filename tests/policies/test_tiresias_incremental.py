"""Tiresias 2D-LAS and 2D-Gittins with the incremental ranking (waiting jobs kept sorted across
decisions) make exactly the decisions of their plain reference copies
(asrpt/policies/reference/tiresias.py and gittins.py: every job re-keyed and sorted at every
decision), decision by decision, on random instances (issue 18)."""

import pytest
from hypothesis import given, settings

from asrpt.policies.gittins import TiresiasGittins
from asrpt.policies.tiresias import Tiresias
from asrpt.testing.strategies import dnn_instances, gang_instances

from ._same_decisions import same_decisions
from asrpt.policies.reference import ReferenceTiresias, ReferenceTiresiasGittins
from .test_incremental_rankings import recording
from .test_srsf_incremental import random_trace

PAIRS = {"tiresias": (recording(Tiresias), recording(ReferenceTiresias)),
         "gittins": (recording(TiresiasGittins), recording(ReferenceTiresiasGittins))}

VARIANTS = [
    ("tiresias", {}),
    ("tiresias", {"thresholds": (40, 300)}),
    ("tiresias", {"thresholds": (25.5,)}),
    ("tiresias", {"thresholds": (40, 300), "promote_knob": 2.0}),   # the knob keeps the full re-sort
    ("gittins", {}),
    ("gittins", {"thresholds": (60,), "quantum": 30.0}),
    ("gittins", {"thresholds": (60,), "quantum": 30.0, "samples": [5.0, 40.0, 90.0, 400.0]}),
]


def same_run(instance, name, params, seed=0, **kwargs):
    return same_decisions(*PAIRS[name], instance, params, seed, **kwargs)


@pytest.mark.parametrize("name,params", VARIANTS, ids=lambda v: str(v))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_identical_decisions_on_random_overloaded_traces(name, params, seed):
    log = same_run(random_trace(120, seed), name, params, seed=seed)
    assert max(len(entry[1]) for entry in log) > 30  # deep queues were ranked
    assert len(log) > 100


@settings(max_examples=30, deadline=None)
@given(gang_instances(max_jobs=8))
def test_identical_decisions_on_gang_instances(instance):
    for name, params in VARIANTS:
        same_run(instance, name, params)


@settings(max_examples=10, deadline=None)
@given(dnn_instances(max_jobs=5))
def test_identical_decisions_on_dnn_instances(instance):
    for name, params in (VARIANTS[1], VARIANTS[5]):
        same_run(instance, name, params, preemption_cost=1.5)


def test_identical_decisions_on_check_invariants():
    same_run(random_trace(60, 7), "tiresias", {"thresholds": (40, 300)}, check_invariants=True)


@pytest.mark.parametrize("thresholds", [(3250.0, 7200.0), (500.0, 4000.0, 20000.0)])
def test_identical_decisions_on_philly_dnn_jobs(thresholds):
    """The running jobs' keys kept across decisions (queue crossings from a heap, stopping jobs
    keyed behind the running ones) give the full pass's decisions on real DNN jobs: iteration
    boundaries, restarts and many demotions."""
    from importlib import resources

    from asrpt.instance import Cluster
    from asrpt.traces.philly import read_philly

    path = str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
    instance, _ = read_philly(path, limit=250, cluster=Cluster.from_spec("4x8", None), dnn=True, seed=0)
    log = same_run(instance, "tiresias", {"thresholds": thresholds}, preemption_cost=2.0)
    assert len(log) > 300


@pytest.mark.parametrize("params", [{}, {"thresholds": (500.0, 4000.0), "quantum": 900.0},
                                    {"samples": [60.0, 900.0, 3600.0, 40000.0, 2e5]}])
def test_gittins_numpy_keys_identical_on_philly_dnn_jobs(params):
    """2D-Gittins keys its running jobs in numpy where the executed times are floats (DNN jobs):
    the decisions of the Python keys of the reference, on real DNN jobs with restarts, deep
    queues and a Gittins table learned online or given."""
    from importlib import resources

    from asrpt.instance import Cluster
    from asrpt.traces.philly import read_philly

    path = str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
    instance, _ = read_philly(path, limit=250, cluster=Cluster.from_spec("4x8", None), dnn=True, seed=0)
    log = same_run(instance, "gittins", params, preemption_cost=2.0)
    assert len(log) > 300
    assert max(len(entry[1]) for entry in log) > 30


def test_gittins_numpy_keys_without_the_engines_arrays(monkeypatch):
    """An engine that offers no running arrays: 2D-Gittins reads the executed times from the
    view's ``running_executed`` and keys them in numpy all the same, with the reference's
    decisions."""
    from importlib import resources

    from asrpt.instance import Cluster
    from asrpt.state import ClusterView
    from asrpt.traces.philly import read_philly

    monkeypatch.setattr(ClusterView, "running_executed_arrays", lambda self: None)
    path = str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
    instance, _ = read_philly(path, limit=250, cluster=Cluster.from_spec("4x8", None), dnn=True, seed=0)
    log = same_run(instance, "gittins", {}, preemption_cost=2.0)
    assert len(log) > 300
