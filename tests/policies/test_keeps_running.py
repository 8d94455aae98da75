"""``Decision.keeps_running`` (issue 18): a preemptive policy's promise, in a settled view, that its
order selects exactly the running jobs, so that the engine may skip reading it. The promise must
never change a run: SRSF and A-SRPT make the same decisions with and without it, every promise
they, Tiresias (2D-LAS and Gittins) and the round-based policies (Gavel, Themis: within a round) make holds
(``check_invariants``), and the check SRSF and A-SRPT make, ``selects_running``, is the greedy
selection itself."""

import random

import numpy as np
import pytest

from asrpt.instance import Cluster, Instance, Job
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
    class NoPromise(cls):
        def decide(self, view):
            d = super().decide(view)
            return Decision(d.order, d.backfill, d.wake_at)
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


class _AlwaysRanked(ASRPT):
    """A-SRPT that checks its order at every settled view, never carrying the previous promise."""

    def _still_kept(self, view):
        return False


ASRPT_RANKED = recording(_AlwaysRanked)


@pytest.mark.parametrize("run", RUNS, ids=_ids)
@pytest.mark.parametrize("params", [{}, {"order": "actual"}, {"kappa": 1.0, "share": 0.25}], ids=_ids)
def test_asrpt_carries_its_promise_across_a_wake_without_changes(params, run, monkeypatch):
    """A wake where nothing changed but time keeps a kept running set kept, without ranking: the
    same decisions as checking the order afresh, some passes take the shortcut, and every promise
    made there holds (``check_invariants`` reads the order)."""
    carried = []
    original = ASRPT._still_kept

    def still_kept(self, view):
        got = original(self, view)
        carried.append(got)
        return got
    monkeypatch.setattr(ASRPT, "_still_kept", still_kept)
    same_decisions(ASRPT_REC, ASRPT_RANKED, dnn_trace(70, 3), params, seed=3, **run)
    assert any(carried)
    simulate(dnn_trace(70, 3), ASRPT(**params), check_invariants=True, seed=3, **run)


@pytest.mark.parametrize("policy", [SRSF(predictor="instance"), ASRPT(), ASRPT(order="actual"),
                                    ASRPT(kappa=1.0, share=0.25), Gavel(round_length=20.0),
                                    Themis(round_length=20.0), Tiresias(), Tiresias(thresholds=[50, 400]),
                                    TiresiasGittins()],
                         ids=repr)
@pytest.mark.parametrize("seed", [1, 2, 4])
def test_every_promise_holds_and_some_are_made(policy, seed, monkeypatch):
    """With ``check_invariants`` the engine reads every promised order and checks it selects the
    running set; the traces make promises the engine honours (it skips the order)."""
    calls, _, apply = _counting_skips()
    monkeypatch.setattr(engine_module._Engine, "_apply_preemptive", apply)
    res = simulate(dnn_trace(70, seed), policy, check_invariants=True, seed=seed)
    assert calls["applied"] < res.summary["decision_passes"]
    plain = simulate(dnn_trace(70, seed), _without_promises(type(policy))(**policy.get_params()), seed=seed)
    assert res.completion_times == plain.completion_times


class _Liar(SRSF):
    """Promises at every settled view, whatever its order selects: it lists the running jobs
    last, behind every waiting one."""

    def decide(self, view):
        d = super().decide(view)
        order = list(view.waiting) + list(view.running)
        return Decision(order, True, d.wake_at, keeps_running=view.settled)


def test_a_broken_promise_is_caught_by_check_invariants():
    inst = dnn_trace(60, 5)
    with pytest.raises(AssertionError, match="promised keeps_running"):
        simulate(inst, _Liar(predictor="instance"), check_invariants=True)


def test_promises_are_read_only_in_settled_views():
    """A promise made when the view is not settled is ignored: the order is applied."""
    class Eager(SRSF):
        def decide(self, view):
            d = super().decide(view)
            return Decision(d.order, d.backfill, d.wake_at, keeps_running=d.keeps_running or not view.settled)

    inst = dnn_trace(60, 6)
    assert (simulate(inst, Eager(predictor="instance")).completion_times
            == simulate(inst, SRSF(predictor="instance")).completion_times)


def test_settled_is_false_for_non_preemptive_runs():
    seen = []

    class Watch(FIFO):
        def decide(self, view):
            seen.append(view.settled)
            return super().decide(view)

    simulate(dnn_trace(30, 7), Watch())
    assert seen and not any(seen)


def test_settled_means_nothing_stopping_and_nothing_fits():
    seen = []

    class Watch(SRSF):
        def decide(self, view):
            least = min((j.gpus for j in view.waiting), default=None)
            seen.append((view.settled, not view.stopping and (least is None or least > view.free_gpus)))
            return super().decide(view)

    simulate(dnn_trace(70, 8), Watch(predictor="instance"))
    assert all(a == b for a, b in seen)
    assert any(a for a, _ in seen) and not all(a for a, _ in seen)


def test_an_engine_without_settled_gives_false():
    from asrpt.state import ClusterView

    class Bare:
        now, cluster, waiting, running, stopping, arrived, completed = 0, None, {}, {}, {}, [], []
        just_started, just_stopped, free = [], [], []

    assert ClusterView(Bare(), False).settled is False
