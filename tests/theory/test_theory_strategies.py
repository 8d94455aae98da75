"""The theory strategies appended to asrpt.testing.strategies: they stay inside their bounds,
reach the cases the certificate tests need (full-cluster gangs, simultaneous arrivals, mu near its
bound, large clusters, every small model) and reject impossible arguments at once."""

from fractions import Fraction

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from asrpt.testing.strategies import arrival_times, dnn_instances, gang_instances, prediction_factors


def _mu(factors):
    return max([Fraction(f) for f in factors] + [Fraction(1)]) / min([Fraction(f) for f in factors] + [Fraction(1)])


@given(st.integers(0, 8), st.sampled_from([1, 2, 4, 100]), st.booleans(), st.data())
def test_prediction_factors_respect_the_distortion_bound(n, max_mu, exact, data):
    factors = data.draw(prediction_factors(n=n, max_mu=max_mu, exact=exact))
    assert len(factors) == n and all(f > 0 for f in factors)
    assert _mu(factors) <= max_mu * (1 + 1e-12)
    if exact:
        assert all(isinstance(f, Fraction) for f in factors)


@given(st.integers(0, 10), st.sampled_from([None, "bunched", "spread"]), st.data())
def test_arrival_times_are_sorted_and_bunched_means_small_gaps(n, pattern, data):
    times = data.draw(arrival_times(n=n, pattern=pattern, max_gap=7, exact=True))
    assert times == sorted(times) and len(times) == n and all(t >= 0 for t in times)
    if pattern == "bunched":
        assert all(b - a <= 1 for a, b in zip(times, times[1:]))


@settings(max_examples=60)
@given(gang_instances(max_mu=100))
def test_gang_instances_stay_within_their_bounds(inst):
    m = inst.cluster.total_gpus
    assert 1 <= m <= 64 and inst.cluster.n_servers <= 8 and max(inst.cluster.server_gpus) <= 8
    assert all(1 <= j.gpus <= m for j in inst.jobs) and 1 <= inst.n_jobs <= 8


def _reached(strategy, checks: dict, examples: int) -> set:
    """Names of the checks that some of ``examples`` generated values satisfy (no shrinking)."""
    seen: set = set()

    @settings(max_examples=examples, database=None, derandomize=True)
    @given(strategy)
    def run(value):
        seen.update(name for name, check in checks.items() if check(value))

    run()
    return seen


def test_gang_instances_reach_the_interesting_cases():
    checks = {
        "full-cluster gang": lambda i: i.cluster.total_gpus > 1 and any(j.gpus == i.cluster.total_gpus for j in i.jobs),
        "half-cluster gang": lambda i: any(j.gpus == i.cluster.total_gpus // 2 + 1 > 1 for j in i.jobs),
        "simultaneous arrivals": lambda i: i.n_jobs >= 3 and len({j.arrival for j in i.jobs}) == 1,
        "large cluster": lambda i: i.cluster.total_gpus >= 48,
        "mu >= 10": lambda i: _mu([j.predicted_processing_time / j.processing_time
                                   for j in i.jobs if j.predicted_processing_time]) >= 10,
    }
    # Simultaneous arrivals come from the "bunched" pattern: with both patterns drawn they are only
    # 2 of 300 examples, too few to be reached reliably (the check failed in full-suite runs).
    simultaneous = {"simultaneous arrivals": checks.pop("simultaneous arrivals")}
    assert _reached(gang_instances(max_mu=100), checks, 300) == set(checks)
    assert _reached(gang_instances(max_mu=100, arrivals="bunched"), simultaneous, 300) == set(simultaneous)


def test_dnn_instances_reach_every_model_and_mixed_parallelism():
    checks = {m: (lambda i, m=m: any(j.model == m for j in i.jobs)) for m in ("gpt2", "resnet18", "bert-base")}
    checks["pp and tp"] = lambda i: any(j.parallelism.pp > 1 and j.parallelism.tp > 1 for j in i.jobs)
    checks["H200"] = lambda i: i.cluster.gpu_type == "H200"
    checks["A100"] = lambda i: i.cluster.gpu_type == "A100"
    assert _reached(dnn_instances(), checks, 100) == set(checks)


@pytest.mark.parametrize("strategy", [
    lambda: arrival_times(n=-1),
    lambda: arrival_times(n=2, pattern="poisson"),
    lambda: prediction_factors(n=2, max_mu=0.5),
    lambda: gang_instances(min_gpus=0),
    lambda: gang_instances(min_gpus=65, max_gpus=70, max_servers=8),
    lambda: gang_instances(max_mu=0.9),
    lambda: gang_instances(min_jobs=3, max_jobs=2),
    lambda: dnn_instances(gpus_per_server=()),
    lambda: dnn_instances(models=()),
    lambda: dnn_instances(max_iterations=0),
])
def test_invalid_arguments_raise_at_once(strategy):
    with pytest.raises(InvalidArgument):
        find(strategy(), lambda _: True, settings=settings(max_examples=1, database=None))
