"""The iteration time of a count placement (the simulator's DNN fast path) is cached by GPU counts on
one-type clusters (issue 18): the cached value equals the one computed on the servers actually
given, for random placements of zoo jobs, bit for bit."""

import random

import pytest

from asrpt.dnn import perf
from asrpt.instance import Cluster, Job, Parallelism, Server


def _direct(job, servers, cluster):
    """tau on exactly these server ids, bypassing the cache."""
    params = perf.perf_params()
    tau_star, gt, _ = perf._tau_star(job, cluster, params)
    info = perf._cluster_info(cluster)
    key = tuple(sorted(servers))
    return float(perf._counts_cached.__wrapped__(perf._KeyedJob(job), key, info, params, tau_star, gt)[0])


@pytest.mark.parametrize("seed", [0, 1])
def test_counts_key_gives_the_same_tau(seed):
    rng = random.Random(seed)
    cluster = Cluster.homogeneous(12, 8, "A100", inter_bandwidth=1.25e9)
    configs = [("resnet50", Parallelism(8, 1, 1)), ("gpt2", Parallelism(4, 2, 1)), ("gpt2", Parallelism(2, 2, 2)),
               ("bert-base", Parallelism(16, 1, 1)), ("gpt3-1.3b", Parallelism(2, 4, 2))]
    perf.clear_caches()
    seen = 0
    for k in range(120):
        model, par = rng.choice(configs)
        job = Job(f"j{k}", 0, par.gpus, model=model, parallelism=par, iterations=10)
        left, servers = par.gpus, {}
        while left:
            h = rng.randrange(12)
            n = min(left, rng.randint(1, 8 - servers.get(h, 0))) if servers.get(h, 0) < 8 else 0
            if n:
                servers[h] = servers.get(h, 0) + n
                left -= n
        got = perf.iteration_time_for_counts(job, list(servers.items()), cluster)
        assert got == _direct(job, servers.items(), cluster), (model, par, servers)
        seen += len(servers) > 1
    assert seen > 50  # most placements span servers


def _random_counts(rng, gpus, n_servers, cap):
    left, servers = gpus, {}
    while left:
        h = rng.randrange(n_servers)
        room = cap - servers.get(h, 0)
        if room:
            n = min(left, rng.randint(1, room))
            servers[h] = servers.get(h, 0) + n
            left -= n
    return tuple(sorted(servers.items()))


@pytest.mark.parametrize("cluster", [
    Cluster.homogeneous(12, 8, "A100", inter_bandwidth=1.25e9),
    Cluster(tuple(Server(8, "A100") for _ in range(6)) + tuple(Server(8, "V100") for _ in range(6)),
            inter_bandwidth=1.25e9),
], ids=["one-type", "two-types"])
def test_count_times_memo_equals_the_validated_call(cluster):
    """CountTimes (the placers' memo) gives iteration_time_for_counts's value for every job and
    placement, hits included: keyed by counts on one GPU type, by the servers otherwise."""
    rng = random.Random(3)
    configs = [("resnet50", Parallelism(4, 1, 1)), ("gpt2", Parallelism(2, 2, 1)), ("bert-base", Parallelism(8, 1, 1))]
    times = perf.CountTimes(cluster)
    for k in range(150):
        model, par = rng.choice(configs)
        job = Job(f"j{k % 7}", 0, par.gpus, model=model, parallelism=par, iterations=10)
        servers = _random_counts(rng, par.gpus, cluster.n_servers, 8)
        try:
            want = perf.iteration_time_for_counts(job, servers, cluster)
        except Exception as exc:   # the memo raises what the validated call raises
            with pytest.raises(type(exc)):
                times(job, servers)
            continue
        assert times(job, servers) == want, (model, par, servers)
    assert 0 < len(times) < 150


def test_count_times_refuses_a_non_cluster():
    with pytest.raises(perf.InvalidParameterError, match="needs a Cluster"):
        perf.CountTimes([8, 8])
