"""Lower bounds never exceed OPT on instances with Unix-time arrivals (issue 17, item 1).

On one GPU with unit weights preemptive SRPT is optimal (Schrage), so the exact-rational SRPT
total of the float data, read exactly, is OPT: every bound must be <= it. On clusters and with
weights OPT is not known, but the exact-rational bounds are valid, so the float bounds must not
exceed them. The default run checks a few hundred seeded instances; ``-m slow`` checks 10^4 of
each kind.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from asrpt.instance import Cluster, Instance, Job
from asrpt.offline.bounds import lower_bounds
from asrpt.single.srpt import srpt_schedule

EPOCH = 1663189205.9748902


def _epoch_instance(rng: random.Random, *, servers: int, gpus: int, weighted: bool) -> Instance:
    n = rng.randint(1, 6)
    jobs = []
    for i in range(n):
        arrival = EPOCH + rng.choice([0.0, rng.random() * 10, rng.random() * 1e5])
        size = rng.choice([0.5, 1.0, rng.uniform(0.25, 2), rng.uniform(1, 1e4)])
        jobs.append(Job(f"j{i}", arrival, rng.randint(1, servers * gpus), processing_time=size,
                        weight=rng.choice([1, 0.5, 2.5, 3]) if weighted else 1))
    return Instance(Cluster.homogeneous(servers, gpus), tuple(jobs))


def _exact(inst: Instance) -> Instance:
    return inst.replace_jobs(Job(j.id, Fraction(j.arrival), j.gpus, weight=Fraction(j.weight),
                                 processing_time=Fraction(j.processing_time)) for j in inst.jobs)


def _single_gpu_cases(count: int, seed: int) -> int:
    """Bounds above the exact SRPT optimum over ``count`` one-GPU unit-weight instances."""
    rng = random.Random(seed)
    above = 0
    for _ in range(count):
        inst = _epoch_instance(rng, servers=1, gpus=1, weighted=False)
        exact = _exact(inst)
        opt = srpt_schedule([j.arrival for j in exact.jobs], [j.processing_time for j in exact.jobs],
                            ids=[j.id for j in exact.jobs]).total_completion_time
        b = lower_bounds(inst)
        above += any(Fraction(v) > opt for v in (b.lb1, b.lb2, b.lb_mbt, b.best))
    return above


def _cluster_cases(count: int, seed: int) -> int:
    """Float bounds above the exact-rational bounds over ``count`` weighted cluster instances."""
    rng = random.Random(seed)
    above = 0
    for _ in range(count):
        inst = _epoch_instance(rng, servers=rng.randint(1, 3), gpus=rng.choice([1, 4, 8]), weighted=True)
        b, e = lower_bounds(inst), lower_bounds(_exact(inst))
        above += any(Fraction(getattr(b, k)) > getattr(e, k) for k in ("lb1", "lb2", "lb_mbt"))
    return above


def test_the_reported_case_is_below_opt():
    inst = Instance(Cluster.homogeneous(1, 8), (Job("a", EPOCH, 1, processing_time=0.5),))
    opt = Fraction(EPOCH) + Fraction(1, 2)
    b = lower_bounds(inst)
    assert Fraction(b.best) <= opt and Fraction(b.lb_mbt) <= opt
    assert opt - Fraction(b.best) < 1e-6  # and still tight


def test_no_bound_above_opt_on_one_gpu():
    assert _single_gpu_cases(300, seed=1) == 0


def test_no_float_bound_above_the_exact_bound_on_clusters():
    assert _cluster_cases(200, seed=2) == 0


@pytest.mark.slow
def test_no_bound_above_opt_on_10k_epoch_instances():
    assert _single_gpu_cases(10_000, seed=11) == 0
    assert _cluster_cases(10_000, seed=12) == 0


def test_a_subnormal_arrival_beside_ordinary_ones():
    """Found by the campaign: arrival 5e-324 made the grid 2**-1074 and float() overflow."""
    inst = Instance(Cluster.homogeneous(1, 4), (Job("a", 0.0, 1, processing_time=3.0),
                                                Job("b", 5e-324, 1, processing_time=2.0),
                                                Job("c", 1.5, 1, processing_time=2.0)))
    b, e = lower_bounds(inst), lower_bounds(_exact(inst))
    assert all(Fraction(getattr(b, k)) <= getattr(e, k) for k in ("lb1", "lb2", "lb_mbt"))
    assert e.lb_mbt - Fraction(b.lb_mbt) < 1e-9  # still tight
