"""The incremental SRSF/SRTF ranking makes exactly the decisions of the plain reference copy
(asrpt/policies/reference/srsf.py: every job re-keyed and sorted at every decision), decision by
decision, on random instances (issue 18)."""

import random

import pytest
from hypothesis import given, settings

from asrpt.instance import Cluster, Instance, Job
from asrpt.policies.srsf import SRSF
from asrpt.testing.strategies import dnn_instances, gang_instances

from ._same_decisions import recording, same_decisions
from asrpt.policies.reference import ReferenceSRSF


NEW, OLD = recording(SRSF), recording(ReferenceSRSF)

VARIANTS = [
    {},
    {"key": "time"},
    {"predictor": "instance"},
    {"predictor": "group_mean"},
    {"predictor": "group_mean", "adaptive": "doubling"},
    {"predictor": "noisy:sigma=1.0", "adaptive": "repredict"},
    {"predictor": "noisy:sigma=1.0", "adaptive": "off"},
    {"predictor": "noisy:sigma=0.7", "key": "time", "epsilon": 0.3},
    {"epsilon": 0.2},
]


def same_run(instance, params, seed=0, **kwargs):
    return same_decisions(NEW, OLD, instance, params, seed, **kwargs)


def random_trace(n, seed, servers=4, per=4):
    rng = random.Random(seed)
    jobs, t = [], 0
    for k in range(n):
        t += rng.choice([0, 0, 1, 2, 5])
        gpus = rng.choice([1, 1, 2, 4, 8])
        size = rng.choice([1, 3, 10, 30, 100]) * rng.randint(1, 4)
        extra = {"predicted_processing_time": max(1, round(size * rng.uniform(0.2, 3)))} if rng.random() < 0.8 else {}
        if gpus > per and gpus % per == 0 and rng.random() < 0.5:
            extra["instances"] = gpus // per
        jobs.append(Job(f"j{k}", t, gpus, processing_time=size, user=f"u{k % 3}", **extra))
    return Instance(Cluster.homogeneous(servers, per), tuple(jobs))


@pytest.mark.parametrize("params", VARIANTS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "srsf")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_identical_decisions_on_random_overloaded_traces(params, seed):
    log = same_run(random_trace(120, seed), params, seed=seed)
    assert max(len(entry[2]) for entry in log if entry[0] == "decide") > 30  # deep queues were ranked


@settings(max_examples=40, deadline=None)
@given(gang_instances(max_jobs=8))
def test_identical_decisions_on_gang_instances(instance):
    for params in VARIANTS[:3]:
        same_run(instance, params)


@settings(max_examples=15, deadline=None)
@given(dnn_instances(max_jobs=5))
def test_identical_decisions_on_dnn_instances(instance):
    for params in ({}, {"epsilon": 0.25}, {"predictor": "noisy:sigma=1.0"}):
        same_run(instance, params, preemption_cost=1.5)
