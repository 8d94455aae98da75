"""Speed of the theory layer: the certificate on large runs and one worst-case evaluation.

- ``certify`` on an A-SRPT run of 5,000 abstract jobs on 64 GPUs (load about 0.9, exact
  integers): the blocked-time sweep is O((events + waiting jobs per interval) log n); target
  under 5 s on the 2-core reference machine (the simulation is not timed).
- ``evaluate`` (A-SRPT + the OPT bracket) on a 5-job instance of the worst-case search: the unit
  of work of the search, target under 1 s.

Run with ``pytest benchmarks/bench_theory.py --benchmark-only -m "slow or not slow" -o addopts=""``.
"""

import numpy as np

from asrpt.instance import Cluster, Instance, Job, load_instance
from asrpt.theory import certify, run_asrpt
from asrpt.theory.worstcase import evaluate


def _instance(n: int, seed: int = 0) -> Instance:
    rng = np.random.default_rng(seed)
    m = 64
    gpus = rng.choice([1, 2, 4, 8, 16, 32, 64], size=n, p=[0.3, 0.2, 0.2, 0.15, 0.1, 0.04, 0.01])
    sizes = rng.integers(1, 200, size=n)
    work = float(np.sum(gpus * sizes)) / m
    gaps = rng.poisson(work / n / 0.9, size=n)
    arrivals = np.cumsum(gaps)
    pred = np.maximum(1, (sizes * rng.choice([1, 2, 4], size=n)) // rng.choice([1, 2, 4], size=n))
    jobs = tuple(Job(f"j{i}", int(a), int(g), processing_time=int(p), predicted_processing_time=int(q))
                 for i, (a, g, p, q) in enumerate(zip(arrivals, gpus, sizes, pred)))
    return Instance(Cluster.homogeneous(8, 8), jobs)


def test_certify_5000_jobs(benchmark):
    inst = _instance(5000)
    result = run_asrpt(inst)
    cert = benchmark.pedantic(certify, args=(inst, result), rounds=3, iterations=1)
    assert cert.covered and cert.holds and cert.exact
    benchmark.extra_info["ratio_to_lb"] = float(cert.ratio_to_lb)
    assert benchmark.stats.stats.median < 5.0


def test_evaluate_one_search_instance(benchmark):
    inst = load_instance("instances/srpt-two-machines.json")
    ev = benchmark.pedantic(evaluate, args=(inst,), rounds=5, iterations=1)
    assert ev.alg == 21 and not ev.violation
    assert benchmark.stats.stats.median < 1.0
