"""Speed targets of the performance model.

- The worker graph and tau of a 70B model at (dp=8, pp=8, tp=8) (512 workers), from cold caches
  (the zoo's layer graph itself cached), in well under a second.
- tau of a given 512-worker placement, the simulator's count fast path (cached), and the DNN
  checks of an 80,000-job instance.

Run with ``pytest benchmarks/bench_perf.py --benchmark-only -m "slow or not slow"``.
"""

import random

from asrpt.dnn import perf
from asrpt.dnn.parallel import worker_graph
from asrpt.dnn.perf import (best_iteration_time, consolidated_assignment, iteration_time,
                            iteration_time_for_counts)
from asrpt.dnn.validate import instance_problems
from asrpt.dnn.zoo import layer_graph
from asrpt.instance import Cluster, Job, Parallelism

CLUSTER = Cluster.homogeneous(64, 8, "H200")
JOB = Job("big", 0, 512, model="llama-70b", parallelism=Parallelism(8, 8, 8), iterations=1000)


def test_worker_graph_and_tau_70b_888_cold(benchmark):
    layer_graph("llama-70b")  # the zoo's own cache

    def cold():
        perf.clear_caches()
        W = worker_graph(JOB, cluster=CLUSTER)
        tau_star = best_iteration_time(JOB, CLUSTER)
        tau = iteration_time(JOB, consolidated_assignment(JOB, CLUSTER), CLUSTER)
        return W, tau_star, tau

    W, tau_star, tau = benchmark.pedantic(cold, rounds=5, iterations=1)
    assert W.number_of_nodes() == 512 and tau == tau_star
    assert benchmark.stats.stats.max < 1.0


def test_tau_of_a_given_placement_70b(benchmark):
    rng = random.Random(0)
    slots = [h for h in range(64) for _ in range(8)]
    rng.shuffle(slots)
    workers = [(r, s, k) for r in range(8) for s in range(8) for k in range(8)]
    assignment = dict(zip(workers, slots))
    tau = benchmark(iteration_time, JOB, assignment, CLUSTER)
    assert tau >= best_iteration_time(JOB, CLUSTER)
    assert benchmark.stats.stats.median < 0.05


def test_count_fast_path_cached(benchmark):
    job = Job("j", 0, 16, model="gpt2", parallelism=Parallelism(4, 2, 2), iterations=10)
    cluster = Cluster.homogeneous(16, 8, "A100")
    counts = [(0, 8), (3, 4), (5, 4)]
    iteration_time_for_counts(job, counts, cluster)
    benchmark(iteration_time_for_counts, job, counts, cluster)
    assert benchmark.stats.stats.median < 0.001


def test_validate_80000_dnn_jobs(benchmark):
    rng = random.Random(1)
    models = ["gpt2", "resnet50", "bert-base", "llama-7b", "vit_b_16"]
    jobs = []
    for i in range(80_000):
        p = Parallelism(rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4]), rng.choice([1, 2]))
        jobs.append(Job(f"j{i}", i, p.gpus, model=rng.choice(models), parallelism=p,
                        iterations=100))
    cluster = Cluster.homogeneous(64, 8, "H100")
    problems = benchmark.pedantic(instance_problems, args=(cluster, jobs), rounds=1, iterations=1)
    assert isinstance(problems, list)
    assert benchmark.stats.stats.max < 10.0
