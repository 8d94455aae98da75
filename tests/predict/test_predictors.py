"""Predictors: one interface, determinism, cold starts, no peeking at the future."""

import math

import pytest

from asrpt.errors import InvalidParameterError, NotFittedError
from asrpt.predict import (ConstantPredictor, GroupMeanPredictor, InstancePredictor, NoisyPredictor,
                           OraclePredictor, PREDICTORS, make_predictor)
from asrpt.sim.view import CompletedJob, JobView


def view(i, *, group=None, user=None, tau=1.0, pred=None, gpus=1):
    return JobView(index=i, id=f"j{i}", key=(i,), arrival=0, gpus=gpus, weight=1, is_abstract=False,
                   tau_star=tau, predicted_work=pred, group=group, user=user)


def done(i, work, **kw):
    return CompletedJob(view(i, **kw), completion=100, work=work)


def test_every_predictor_requires_reset_before_predict():
    for name, (cls, preset) in PREDICTORS.items():
        p = cls(**preset)
        with pytest.raises(NotFittedError, match="call reset\\(\\) or fit\\(\\)"):
            p.predict(view(0), truth=10)


def test_oracle_and_instance():
    assert OraclePredictor().reset().predict(view(0), truth=42) == 42
    p = InstancePredictor().reset()
    assert p.predict(view(0, pred=7), truth=42) == 7 and p.predict(view(1), truth=42) == 42


def test_noisy_is_deterministic_per_job_and_order_free():
    p = NoisyPredictor(sigma=0.7, seed=5).reset()
    a = [p.predict(view(i), truth=100.0) for i in range(20)]
    b = [p.predict(view(i), truth=100.0) for i in reversed(range(20))][::-1]
    assert a == b and len(set(a)) == 20
    q = NoisyPredictor(sigma=0.7, seed=6).reset()
    assert a != [q.predict(view(i), truth=100.0) for i in range(20)]
    zero = NoisyPredictor(sigma=0.0).reset()
    assert zero.predict(view(3), truth=100.0) == 100.0
    clipped = NoisyPredictor(sigma=5.0, seed=1, clip=2.0).reset()
    factors = [clipped.predict(view(i), truth=1.0) for i in range(50)]
    assert min(factors) >= 0.5 and max(factors) <= 2.0 and {0.5, 2.0} <= set(factors)
    # log-factors are standard normal times sigma: the sample mean over many jobs is near 0
    logs = [math.log(NoisyPredictor(sigma=1.0, seed=2).factor(f"x{i}")) for i in range(2000)]
    assert abs(sum(logs) / len(logs)) < 0.1


def test_group_mean_fallback_chain():
    p = GroupMeanPredictor(prior=600.0).reset()
    assert p.predict(view(0, group="g", user="u", tau=2.0)) == 300.0  # prior / tau
    p.observe([done(1, 10.0, group="g", user="u", tau=2.0), done(2, 30.0, group="g", user="u", tau=2.0)])
    assert p.group_means_ == {("group", "g"): 20.0} and p.n_groups_ == 1
    assert p.predict(view(3, group="g", tau=2.0)) == 20.0                      # the group's mean work
    assert p.predict(view(4, group="other", user="u", tau=4.0)) == 40.0 / 4.0  # user mean time 40 s / tau
    assert p.predict(view(5, tau=1.0)) == 40.0                                 # global median time 40 s
    assert p.predict(view(3, group="g", tau=2.0), attained=25) == 50.0       # outlived: growth x attained


def test_fit_is_reset_then_observe():
    p = GroupMeanPredictor().fit([done(1, 8.0, group="a")])
    assert p.group_means_ == {("group", "a"): 8.0}
    p.fit([])
    assert p.group_means_ == {}


def test_constant():
    p = ConstantPredictor(processing_time=100.0).reset()
    assert p.predict(view(0, tau=4.0)) == 25.0 and p.predict(view(0, tau=4.0), attained=30) == 60.0


def test_make_predictor_specs_and_errors():
    assert make_predictor("noisy:sigma=0.25:seed=9").get_params() == {"sigma": 0.25, "seed": 9, "clip": None}
    with pytest.raises(InvalidParameterError, match="unknown predictor 'orcale' \\(did you mean 'oracle'"):
        make_predictor("orcale")
    with pytest.raises(InvalidParameterError, match="predictor 'noisy' has no parameter 'sd'"):
        make_predictor("noisy:sd=1")
    with pytest.raises(InvalidParameterError, match="The 'sigma' parameter of NoisyPredictor must be"):
        make_predictor("noisy:sigma=-1")
