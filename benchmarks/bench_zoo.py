"""Speed targets of the model zoo: a cached layer graph comes back well under 0.1 s (even
llama-70b), and the whole zoo builds from scratch in a few seconds.

Run with ``pytest benchmarks/bench_zoo.py --benchmark-only -m "slow or not slow"``.
"""

import pytest

from asrpt.dnn.layers import cut_profile
from asrpt.dnn.zoo import _build, layer_graph, model_names


def test_cached_llama_70b_graph(benchmark):
    layer_graph("llama-70b")  # first build fills the cache
    G = benchmark(layer_graph, "llama-70b")
    assert G.number_of_nodes() > 400
    assert benchmark.stats.stats.median < 0.1


def test_whole_zoo_from_scratch(benchmark):
    def build_all():
        _build.cache_clear()
        return [layer_graph(name) for name in model_names()]

    graphs = benchmark.pedantic(build_all, rounds=3, iterations=1)
    assert len(graphs) == len(model_names())
    assert benchmark.stats.stats.max < 5.0


@pytest.mark.parametrize("name", ["resnet152", "densenet121", "gpt3-175b"])
def test_cut_profile(benchmark, name):
    G = layer_graph(name)
    prof = benchmark(cut_profile, G)
    assert len(prof) == G.number_of_nodes()
