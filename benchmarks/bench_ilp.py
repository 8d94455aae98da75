"""Speed targets of the offline optimum: the slotted (time-indexed) ILP.

Five fixed random instances with n = 10 rigid jobs on M = 8 GPUs (demands in {1, 2, 4, 8},
processing times 1..8, arrival gaps 0..2, seeds 0-4), horizons of 52 to 66 unit slots, solved to a proven
optimum (gap 0) with HiGHS and, beside it, CBC. Target: median under 5 s with HiGHS over the five
instances (each instance's time is reported separately; CBC runs under a 120 s limit).

Run with ``pytest benchmarks/bench_ilp.py --benchmark-only -m "slow or not slow" -o addopts=""``.
"""

import numpy as np
import pytest

from asrpt.instance import Cluster, Instance, Job
from asrpt.offline import schedule_problems, slotted_ilp
from asrpt.solve import available_solvers

SEEDS = [0, 1, 2, 3, 4]  # the first five, not chosen


def instance(seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    jobs, t = [], 0
    for i in range(10):
        t += int(rng.integers(0, 3))
        jobs.append(Job(f"j{i}", t, int(rng.choice([1, 2, 4, 8])), processing_time=int(rng.integers(1, 9))))
    return Instance(Cluster.homogeneous(1, 8), tuple(jobs))


@pytest.mark.parametrize("solver", ["highs", "cbc"])
@pytest.mark.parametrize("seed", SEEDS)
def test_slotted_ilp_n10_m8(benchmark, seed, solver):
    if solver not in available_solvers():
        pytest.skip(f"{solver} not available")
    inst = instance(seed)
    limit = 120 if solver == "cbc" else None
    r = benchmark.pedantic(slotted_ilp, args=(inst,), kwargs={"solver": solver, "time_limit": limit},
                           rounds=1, iterations=1)
    benchmark.extra_info.update(horizon=r.horizon, status=r.status, objective=r.objective)
    assert r.status in ("optimal", "time_limit")
    assert schedule_problems(inst, r.schedule) == []
