"""CHK-17: the M/M/1 simulator with predictions (asrpt.theory.queueing) reproduces the SPJF and
PSPJF priority-queue formulas (Mitzenmacher, ITCS 2020) within twice the 95% batch-means
half-width (fixed seed), and with exact predictions SRPT < PSJF < FCFS."""

import pytest

from asrpt.errors import InvalidParameterError
from asrpt.theory.queueing import mean_response_time, simulate_queue


@pytest.mark.parametrize("predictions", ["exponential", "exact"])
@pytest.mark.parametrize("policy", ["fcfs", "spjf", "pspjf"])
def test_chk17_simulation_matches_the_formulas(policy, predictions):
    sim = simulate_queue(0.5, policy, predictions=predictions, n_jobs=60_000, seed=3)
    formula = mean_response_time(0.5, policy, predictions=predictions)
    assert abs(sim.mean - formula) <= 2 * sim.half_width, (sim, formula)


def test_chk17_with_exact_predictions_srpt_beats_psjf_beats_fcfs():
    sims = {p: simulate_queue(0.5, p, predictions="exact", n_jobs=60_000, seed=5).mean
            for p in ("srpt", "pspjf", "fcfs")}
    assert sims["srpt"] < sims["pspjf"] < sims["fcfs"]
    exact = {p: mean_response_time(0.5, p, predictions="exact") for p in ("spjf", "pspjf", "fcfs")}
    assert exact["pspjf"] < exact["spjf"] < exact["fcfs"] == 2.0


def test_chk17_price_of_misprediction_is_positive():
    """Exponential predictions cost response time against exact ones, for both SPJF and PSPJF."""
    for policy in ("spjf", "pspjf"):
        assert mean_response_time(0.5, policy) > mean_response_time(0.5, policy, predictions="exact")


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["spjf", "pspjf"])
def test_chk17_heavy_load(policy):
    sim = simulate_queue(0.8, policy, n_jobs=600_000, seed=11)
    formula = mean_response_time(0.8, policy)
    assert abs(sim.mean - formula) <= 2 * sim.half_width, (sim, formula)


@pytest.mark.parametrize("call, message", [
    (lambda: simulate_queue(1.0, "fcfs"), "'lam' parameter of simulate_queue"),
    (lambda: simulate_queue(0.5, "lifo"), "'policy' parameter of simulate_queue"),
    (lambda: simulate_queue(0.5, "fcfs", n_jobs=10), "'n_jobs' parameter of simulate_queue"),
    (lambda: simulate_queue(0.5, "fcfs", predictions="oracle"), "'predictions' parameter"),
    (lambda: mean_response_time(0.5, "srpt"), "'policy' parameter of mean_response_time"),
])
def test_invalid_parameters(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call()
