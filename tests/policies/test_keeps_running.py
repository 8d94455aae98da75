"""Keeping the running jobs without reading the order (issue 18; issue 44 moved it from a
policy's promise, ``Decision.keeps_running``, to the engine): in a settled view the engine asks
:func:`asrpt.order.keeps_running_jobs` whether a :class:`~asrpt.order.MergedOrder` selects exactly
the running jobs, from its entries. It never changes a run: SRSF and A-SRPT make the same
decisions with their orders read as plain lists, every derivation for them, Tiresias (2D-LAS and
Gittins) and the round-based policies holds (``check_invariants``), no policy can claim it, and
the check, ``selects_running``, is the greedy selection itself."""

import random

import numpy as np
import pytest

from asrpt.instance import Cluster, Instance, Job
from asrpt.order import MergedOrder, keeps_running_jobs
from asrpt.policies._incremental import selects_running
from asrpt.policies._running import ArrayRun, TupleRun, merged
from asrpt.policies.asrpt import ASRPT
from asrpt.policies.fifo import FIFO
from asrpt.policies.gavel import Gavel
from asrpt.policies.gittins import TiresiasGittins
from asrpt.policies.srsf import SRSF
from asrpt.policies.themis import Themis
from asrpt.policies.tiresias import Tiresias
from asrpt.engine import core as engine_module
from asrpt.sim import simulate
from asrpt.state import Decision, job_views

from ._same_decisions import recording, same_decisions
from .test_running_arrays import ASRPT_VARIANTS, RUNS, SRSF_VARIANTS, _ids, dnn_trace, table_of


def _greedy(order, budget):
    """The engine's selection with backfill: every job that fits in what is left, in order."""
    chosen = set()
    for job in order:
        if job.gpus <= budget:
            chosen.add(job.index)
            budget -= job.gpus
    return chosen


@pytest.mark.parametrize("seed", range(60))
def test_selects_running_is_the_greedy_selection(seed):
    """On random runs and waiting lists (ties on sizes, skipped jobs), where no waiting job behind
    every running one fits in what they leave (a settled view), the answer is whether the greedy
    selection over the merged order is the running set, for tuple and array runs alike."""
    rng = random.Random(seed)
    views, table, by_index = table_of(dnn_trace(40, seed + 20, float_arrivals=seed % 2 == 0))
    sizes = [0.0, 1.0, 2.5, 2.5, 7.0, 40.0, 1e9]
    chosen = rng.sample(range(len(views)), rng.randint(1, 30))
    cut = rng.randint(1, len(chosen))
    run, wait = chosen[:cut], chosen[cut:]
    size_of = {i: rng.choice(sizes) for i in chosen}
    skip = set(rng.sample(run, min(2, len(run)))) if seed % 3 == 0 else ()
    held = sum(views[i].gpus for i in run)
    budget = held + rng.choice([0, 1, 2, 4, 8])
    entries = lambda ids: sorted((size_of[i], views[i].arrival, views[i].key, i) for i in ids)
    last = max(entries(i for i in run if i not in skip), default=None)
    # settled: no waiting job behind every running one fits in what the running jobs leave
    wait = [i for i in wait if last is not None and entries([i])[0] < last or views[i].gpus > budget - held]
    waiting = entries(wait)
    tuples = TupleRun(entries(run))
    arrays = ArrayRun(np.array([size_of[i] for i in run]), np.array(run, dtype=np.intp), table)
    order = list(merged(tuples, waiting, by_index, skip))
    want = _greedy(order, budget - sum(views[i].gpus for i in skip)) == set(run) - set(skip)
    assert selects_running(tuples, waiting, by_index, budget - sum(views[i].gpus for i in skip), skip) == want
    assert selects_running(arrays, waiting, by_index, budget - sum(views[i].gpus for i in skip), skip) == want


def test_selects_running_examples():
    inst = Instance(Cluster.homogeneous(1, 8, "A100"), tuple(Job(f"j{k}", 0, g, processing_time=1)
                                                             for k, g in enumerate((4, 4, 2))))
    by_index = {v.index: v for v in job_views(inst)}
    run = TupleRun([(1.0, 0, (), 0), (5.0, 0, (), 2)])
    assert not selects_running(run, [(2.0, 0, (), 1)], by_index, 8)   # job 1 fits in 8 - 4
    assert selects_running(run, [(2.0, 0, (), 1)], by_index, 7)       # not in 7 - 4
    assert selects_running(run, [(9.0, 0, (), 1)], by_index, 8)       # behind both: not read
    assert selects_running(run, [], by_index, 6)


def test_an_array_run_answers_from_its_largest_size_without_sorting():
    """An array run answers without sorting where the first waiting entry is larger than every
    running one; where it ties the largest size it is read in order: here j1 ties j0 and j2 and
    sorts between them (by rank, whatever the running order), and fits."""
    inst = Instance(Cluster.homogeneous(1, 8, "A100"), tuple(Job(f"j{k}", 0, g, processing_time=1)
                                                             for k, g in enumerate((4, 4, 2))))
    _, table, by_index = table_of(inst)
    for order in ([0, 2], [2, 0]):
        run = ArrayRun(np.array([5.0, 5.0]), np.array(order, dtype=np.intp), table)
        assert selects_running(run, [(6.0, 0, ("j1",), 1)], by_index, 8)          # behind both: not read
        assert run._keys is not False                                              # (answered unsorted)
        run = ArrayRun(np.array([5.0, 5.0]), np.array(order, dtype=np.intp), table)
        assert not selects_running(run, [(5.0, 0, ("j1",), 1)], by_index, 8)      # 8 - 4 left for j1's 4
        run = ArrayRun(np.array([5.0, 5.0]), np.array(order, dtype=np.intp), table)
        assert selects_running(run, [(5.0, 0, ("j1",), 1)], by_index, 7)          # 7 - 4: it does not fit


def _counting_skips():
    """Count the passes whose order the engine did not read (a promise honoured)."""
    calls = {"applied": 0}
    original = engine_module._Engine._apply_preemptive

    def apply(self, decision, backfill):
        calls["applied"] += 1
        return original(self, decision, backfill)
    return calls, original, apply


def _without_promises(cls):
    """``cls`` answering with its order as a plain list (read in full: no pass skipped)."""
    class NoPromise(cls):
        def decide(self, view):
            d = super().decide(view)
            return Decision(list(d.order), d.backfill, d.wake_at)
    return NoPromise


SRSF_REC, SRSF_PLAIN = recording(SRSF), recording(_without_promises(SRSF))
ASRPT_REC, ASRPT_PLAIN = recording(ASRPT), recording(_without_promises(ASRPT))


@pytest.mark.parametrize("run", RUNS, ids=_ids)
@pytest.mark.parametrize("params", SRSF_VARIANTS, ids=_ids)
def test_srsf_promises_change_nothing(params, run):
    same_decisions(SRSF_REC, SRSF_PLAIN, dnn_trace(70, 3), params, seed=3, **run)


@pytest.mark.parametrize("run", RUNS, ids=_ids)
@pytest.mark.parametrize("params", ASRPT_VARIANTS, ids=_ids)
def test_asrpt_promises_change_nothing(params, run):
    same_decisions(ASRPT_REC, ASRPT_PLAIN, dnn_trace(70, 3), params, seed=3, **run)


@pytest.mark.parametrize("policy", [SRSF(predictor="instance"), ASRPT(), ASRPT(order="actual"),
                                    ASRPT(kappa=1.0, share=0.25), Gavel(round_length=20.0),
                                    Themis(round_length=20.0), Tiresias(), Tiresias(thresholds=[50, 400]),
                                    TiresiasGittins()],
                         ids=repr)
@pytest.mark.parametrize("seed", [1, 2, 4])
def test_every_derivation_holds_and_some_orders_are_skipped(policy, seed, monkeypatch):
    """With ``check_invariants`` the engine reads every order it found to keep the running jobs
    and checks it selects the running set; on these traces it skips some orders, and the runs
    are those of the same policy answering with plain lists."""
    calls, _, apply = _counting_skips()
    monkeypatch.setattr(engine_module._Engine, "_apply_preemptive", apply)
    res = simulate(dnn_trace(70, seed), policy, check_invariants=True, seed=seed)
    assert calls["applied"] < res.summary["decision_passes"]
    plain = simulate(dnn_trace(70, seed), _without_promises(type(policy))(**policy.get_params()), seed=seed)
    assert res.completion_times == plain.completion_times


def test_no_policy_can_say_its_order_keeps_the_running_jobs():
    """Issue 44's lying LAS returned ``keeps_running=view.settled`` and moved the mean JCT: the
    flag is gone, and an order that only looks like a MergedOrder is read in full."""
    with pytest.raises(TypeError):
        Decision([], keeps_running=True)

    class LooksMerged(list):
        _head, _a, _b, _views, _skip = (), [], [], {}, ()

    class Liar(SRSF):   # the running jobs last, behind every waiting one, as a fake MergedOrder
        def decide(self, view):
            d = super().decide(view)
            return Decision(LooksMerged(list(view.waiting) + list(view.running)), True, d.wake_at)

    class Honest(SRSF):
        def decide(self, view):
            d = super().decide(view)
            return Decision(list(view.waiting) + list(view.running), True, d.wake_at)

    inst = dnn_trace(60, 5)
    assert (simulate(inst, Liar(predictor="instance"), check_invariants=True).completion_times
            == simulate(inst, Honest(predictor="instance")).completion_times)


def test_an_order_missing_a_running_job_is_read():
    """The derivation counts the running entries: a MergedOrder that leaves a running job out
    (so that applying it preempts that job) is never taken as keeping the running jobs."""
    jobs = {i: Job(f"j{i}", 0, g, processing_time=1) for i, g in ((0, 4), (1, 2))}
    views = {i: type("View", (), {"index": i, "gpus": job.gpus})() for i, job in jobs.items()}
    running = dict(views)
    assert keeps_running_jobs(MergedOrder([(1.0, 0), (2.0, 1)], [], views), running, 8)
    assert not keeps_running_jobs(MergedOrder([(1.0, 0)], [], views), running, 8)
    assert not keeps_running_jobs(MergedOrder([(1.0, 0)], [], views, head=[views[1]], skip={0}), running, 8)
    assert keeps_running_jobs(MergedOrder([(1.0, 0), (2.0, 1)], [], views, head=[views[1]], skip={1}), running, 8)
    assert not keeps_running_jobs(list(views.values()), running, 8)     # a plain order is read


def test_a_merged_order_whose_running_entries_are_not_the_running_jobs_is_read():
    """The running entries are checked against the engine's running set by index, not counted:
    a waiting job in place of a running one, a job listed twice in the running entries or in
    the head and again in the running entries, all with the right count, are read in full."""
    views = {i: type("View", (), {"index": i, "gpus": g})() for i, g in ((0, 4), (1, 2), (2, 1))}
    running = {0: views[0], 1: views[1]}                  # job 2 waits
    assert keeps_running_jobs(MergedOrder([(1.0, 0), (2.0, 1)], [(3.0, 2)], views), running, 7)
    assert not keeps_running_jobs(MergedOrder([(1.0, 0), (2.0, 2)], [(3.0, 1)], views), running, 7)
    assert not keeps_running_jobs(MergedOrder([(1.0, 0), (2.0, 0)], [(3.0, 2)], views), running, 7)
    assert not keeps_running_jobs(MergedOrder([(1.0, 0)], [(3.0, 2)], views, head=[views[0], views[0]]),
                                  running, 7)
    assert not keeps_running_jobs(MergedOrder([(1.0, 0)], [(3.0, 2)], views, head=[views[0]]), running, 7)


def test_a_merged_order_with_false_running_entries_changes_no_result():
    """A policy that hands a MergedOrder whose running entries list waiting jobs (as many as run)
    gets the results of its order read in full, under the plain reference engine's rules."""
    from asrpt.engine.core import run_engine
    from asrpt.engine.reference import run_reference
    from asrpt.placement import make_placer

    class Swapped(SRSF):    # the first waiting jobs as the "running" run, the running jobs as "waiting"
        def decide(self, view):
            d = super().decide(view)
            order = list(d.order)
            views = {j.index: j for j in order}
            waiting = [j for j in order if not view.is_running(j)]
            fake = waiting[:len(view.running)] if len(waiting) >= len(view.running) else None
            if fake is None:
                return Decision(order, True, d.wake_at)
            rest = [j for j in order if j not in fake]
            return Decision(MergedOrder([((k,), j.index) for k, j in enumerate(fake)],
                                        [((len(fake) + k,), j.index) for k, j in enumerate(rest)], views),
                            True, d.wake_at)

    inst = dnn_trace(40, 5)
    fast = run_engine(inst, Swapped(predictor="instance"), make_placer("best_fit"))
    ref = run_reference(inst, Swapped(predictor="instance"), make_placer("best_fit"))
    assert fast.records == ref.records


def test_settled_is_false_for_non_preemptive_runs():
    seen = []

    class Watch(FIFO):
        def decide(self, view):
            seen.append(view.settled)
            return super().decide(view)

    simulate(dnn_trace(30, 7), Watch())
    assert seen and not any(seen)
