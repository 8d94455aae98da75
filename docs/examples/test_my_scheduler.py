"""Property-test your own scheduler against asrpt's checker, lower bounds and optima.

Copy this file anywhere, replace ``my_schedule`` with your algorithm (set ``PREEMPTIVE = True``
if it preempts jobs), and run ``pytest test_my_scheduler.py``.
Your scheduler gets instances from asrpt's generator families (the same ones ``asrpt generate``
writes), and every property below must hold for *any* correct scheduler:

1. its schedule is feasible (asrpt's independent checker finds no problem);
2. its total weighted completion time is at least asrpt's lower bound (LB <= OPT <= yours);
3. on small instances it is at least the offline optimum's lower side, and hypothesis's
   ``target()`` steers the search towards instances where it is far from optimal (printed in
   the statistics: ``pytest --hypothesis-show-statistics``);
4. on one GPU it is never better than SRPT, which is optimal there.

A failure shrinks to a small instance and notes the call that regenerates it. Hypothesis's
per-example deadline is off (``SETTINGS``): the optimum of property 3 takes a solver call.

To test a simulator policy instead (a ``Policy`` class of yours, docs/policies.md, or a
registered one), replace ``my_schedule`` by the adapter that simulates it, and set
``PREEMPTIVE = True`` if it preempts::

    from asrpt.testing.adapters import policy_schedule
    my_schedule = policy_schedule("my_policy.py:LeastServiceFirst")   # or a class, or "a-srpt"
"""

import heapq
from fractions import Fraction

from hypothesis import given, settings, target
from hypothesis import strategies as st

from asrpt.instance import id_key
from asrpt.offline import lower_bounds, offline_opt, schedule_problems
from asrpt.single import srpt_schedule
from asrpt.testing.strategies import (adversarial_instances, bursty_instances,
                                      heavy_tailed_instances, instances, single_machine_instances,
                                      uniform_instances)

PREEMPTIVE = False   # True if my_schedule may split a job into several pieces
SETTINGS = settings(deadline=None)


def my_schedule(instance):
    """Your scheduler. Here: non-preemptive first-come-first-served with backfilling.

    Returns ``{job id: [(start, end, gpus), ...]}``: the pieces during which the job runs on
    ``gpus`` GPUs of the cluster's pool (abstract jobs run on any GPUs); a non-preemptive
    scheduler gives one piece per job.
    """
    free = instance.cluster.total_gpus
    jobs = sorted(instance.jobs, key=lambda j: (j.arrival, id_key(j.id)))
    running, waiting, out, i, t = [], [], {}, 0, 0
    while i < len(jobs) or waiting or running:
        nexts = ([jobs[i].arrival] if i < len(jobs) else []) + ([running[0][0]] if running else [])
        t = max(t, min(nexts))
        while running and running[0][0] <= t:
            free += heapq.heappop(running)[2]
        while i < len(jobs) and jobs[i].arrival <= t:
            waiting.append(jobs[i])
            i += 1
        still = []
        for j in waiting:  # in arrival order; a later job may start when an earlier one cannot
            if j.gpus <= free:
                free -= j.gpus
                out[j.id] = [(t, t + j.processing_time, j.gpus)]
                heapq.heappush(running, (t + j.processing_time, id_key(j.id), j.gpus))
            else:
                still.append(j)
        waiting = still
    return out


def total_weighted_completion(instance, schedule):
    return sum(j.weight * max(end for _, end, _ in schedule[j.id]) for j in instance.jobs)


abstract_families = st.one_of(
    uniform_instances(max_jobs=8, cluster="2x4"),
    heavy_tailed_instances(max_jobs=8, integer=True),
    bursty_instances(max_jobs=8),
    adversarial_instances(max_jobs=6),
    instances(max_jobs=6, weighted=True),
)


@SETTINGS
@given(abstract_families)
def test_my_schedule_is_feasible(inst):
    assert schedule_problems(inst, my_schedule(inst), preemptive=PREEMPTIVE) == []


@SETTINGS
@given(abstract_families)
def test_never_below_the_lower_bound(inst):
    assert total_weighted_completion(inst, my_schedule(inst)) >= lower_bounds(inst).best


@settings(max_examples=25, deadline=None)
@given(adversarial_instances(max_jobs=5, gpus=4) | uniform_instances(max_jobs=5, cluster="1x4"))
def test_at_least_the_offline_optimum(inst):
    mine = total_weighted_completion(inst, my_schedule(inst))
    opt = offline_opt(inst, preemptive=PREEMPTIVE)   # lower_bound <= OPT <= upper_bound
    assert mine >= opt.lower_bound
    target(float(Fraction(mine) / Fraction(opt.upper_bound)), label="mine / OPT upper bound")


@SETTINGS
@given(single_machine_instances(max_jobs=6))
def test_never_better_than_srpt_on_one_gpu(inst):
    srpt = srpt_schedule([j.arrival for j in inst.jobs], [j.processing_time for j in inst.jobs])
    assert total_weighted_completion(inst, my_schedule(inst)) >= srpt.total_completion_time
