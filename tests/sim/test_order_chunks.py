"""Orders read in chunks (``Decision.order``'s ``chunks()``) and decisions that hold
(``Decision.stands_until``, issue 44): what the engine derives from them changes no run.

The engine takes a list of jobs that fits whole, and stops reading once no waiting job fits in
what is left and it has read every running job (it counts them: no marker says so). Every policy
whose orders offer chunks makes the same decisions when its orders are read as plain lists, job
by job, and an order that lists a running job last is read up to it. A held decision is applied
at the passes it covers as "the running jobs, then its order"; the engine's shortcuts there
(nothing to do in a settled view, the previous selection carried over) give the runs of applying
it in full, and holding changes no Gavel or Themis run against asking them at every pass. The
idle fill's stop once no waiting job fits in what the reservations leave changes no run either.
"""

import pytest
from hypothesis import given, settings

from asrpt.policies.gavel import Gavel
from asrpt.policies.srsf import SRSF
from asrpt.sim import simulate
from asrpt.state import Decision
from asrpt.testing.strategies import dnn_instances

from ..policies.test_running_arrays import RUNS, _ids, dnn_trace

POLICIES = ["srsf", "a-srpt", "a-srpt:order=actual", "tiresias", "tiresias-gittins", "gavel", "themis"]


def _as_lists(view, decision):
    """An observer: the engine then reads a list (no chunks), job by job."""


def _runs(res):
    return [(r.id, r.start, r.completion, r.preemptions, tuple((s.start, s.end, s.servers) for s in r.segments))
            for r in res.records]


@pytest.mark.parametrize("run", RUNS, ids=_ids)
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", [3, 11])
def test_reading_chunks_changes_no_decision(policy, run, seed):
    inst = dnn_trace(60, seed)
    chunked = simulate(inst, policy, seed=0, check_invariants=True, **run)
    listed = simulate(inst, policy, seed=0, observer=_as_lists, **run)
    assert _runs(chunked) == _runs(listed)
    assert chunked.summary["mean_jct"] == listed.summary["mean_jct"]


class _Chunks:
    """An order given as its chunks."""

    def __init__(self, *pieces):
        self._pieces = pieces

    def __iter__(self):
        return (job for piece in self._pieces for job in piece)

    def chunks(self):
        return iter(self._pieces)


class _RunningLast(SRSF):
    """SRSF whose order, as chunks, lists every waiting job first and the running ones last."""

    def decide(self, view):
        order = list(super().decide(view).order)
        waiting = [j for j in order if not view.is_running(j)]
        return Decision(_Chunks(*[[j] for j in waiting], [j for j in order if view.is_running(j)]), backfill=True)


def test_an_order_listing_a_running_job_last_is_read_up_to_it():
    """The engine stops reading once nothing left can be selected: no waiting job fits in what is
    left, and every running job was read. An order that lists the running jobs behind every
    waiting one is read up to them: the same runs as reading it job by job, and the stop is taken
    where it may be."""
    from asrpt.engine import core as engine

    stops, select = [], engine._Engine._select

    def counting(self, order, backfill):
        selected, skipped, rest = select(self, order, backfill)
        rest = list(rest)
        if rest:
            stops.append(self.now)
        return selected, skipped, iter(rest)

    for seed in (3, 5):
        inst = dnn_trace(60, seed)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(engine._Engine, "_select", counting)
            last = simulate(inst, _RunningLast(predictor="instance"), seed=0, check_invariants=True)
            chunked = simulate(inst, SRSF(predictor="instance"), seed=0)
        assert _runs(last) == _runs(simulate(inst, _RunningLast(predictor="instance"), seed=0, observer=_as_lists))
        assert _runs(chunked) == _runs(simulate(inst, SRSF(predictor="instance"), seed=0, observer=_as_lists))
    assert stops, "the engine never stopped reading early"


def test_the_promise_flags_are_gone():
    """``Decision`` takes the order, ``backfill``, ``wake_at`` and ``stands_until``: the promises
    a policy could get wrong (``keeps_running``, ``same_keys``) and the chunk markers are gone."""
    import asrpt.state as state

    for flag in ("keeps_running", "same_keys"):
        with pytest.raises(TypeError):
            Decision([], **{flag: True})
    assert not any(hasattr(state, name) for name in ("REST_WAITING", "RunningHead", "RunningChunk"))


@pytest.mark.parametrize("policy", ["srsf", "a-srpt", "tiresias", "gavel", "themis"])
def test_the_idle_fill_stops_at_what_no_waiting_job_fits_in(policy, monkeypatch):
    """With DNN jobs that run on to an iteration boundary when preempted, the engine's idle fill
    stops once no waiting job fits in what the reservations leave (``boundary_only``): the same
    decisions as walking every candidate, and the stop is taken."""
    from asrpt.engine import core as engine

    fits, init, stops = engine._Engine._some_waiting_fits, engine._Engine.__init__, []

    def counting(self, within=None):
        answer = fits(self, within)
        if within is not None and not answer and self.free_total >= self._least_waiting():
            stops.append(within)      # a stop that the free GPUs alone would not make
        return answer

    def walk_all(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.boundary_only = False

    for seed in (3, 11, 29):
        inst = dnn_trace(80, seed)
        monkeypatch.setattr(engine._Engine, "_some_waiting_fits", counting)
        stopped = simulate(inst, policy, seed=0, check_invariants=True)
        monkeypatch.setattr(engine._Engine, "__init__", walk_all)
        walked = simulate(inst, policy, seed=0)
        monkeypatch.undo()
        assert _runs(stopped) == _runs(walked)
    assert stops, "the bounded stop was never taken"


def _apply_held_in_full(monkeypatch):
    """The engine with its held-decision shortcuts off: every pass a held decision covers
    applies "the running jobs, then the held order" in full."""
    from asrpt.engine import core as engine

    def full(self):
        self.future = None
        self._apply_preemptive(self._held_order(), True)
        self._end_pass()

    monkeypatch.setattr(engine._Engine, "_stands", full)


def _unheld(policy):
    """``policy`` (a name) as a fresh object whose decisions hold for no time: asked at every pass."""
    from asrpt.policies import make_policy

    template = make_policy(policy)

    class Unheld(type(template)):
        def decide(self, view):
            d = super().decide(view)
            return Decision(d.order, backfill=d.backfill, wake_at=d.wake_at)

    return Unheld(**template.get_params())


def _mixed_trace(n, seed):
    """``dnn_trace`` with about 40% of its jobs made abstract (they stop at once when preempted,
    so idle GPUs may go to them in a pass that carries a selection over, which ends the carry)."""
    import random

    from asrpt.instance import Instance, Job

    inst, rng = dnn_trace(n, seed), random.Random(seed + 1000)
    jobs = [Job(j.id, j.arrival, rng.choice([1, 1, 2, 3]), processing_time=rng.choice([3.0, 40.0, 200.0]))
            if rng.random() < 0.4 else j for j in inst.jobs]
    return Instance(inst.cluster, tuple(jobs))


class _Deltas:
    """A policy wrapper's record of the deltas every view showed it, in order."""

    @staticmethod
    def wrap(cls):
        class Recording(cls):
            def reset(self, cluster, *, seed=None):
                super().reset(cluster, seed=seed)
                self.seen_ = []

            def decide(self, view):
                self.seen_.append((tuple(j.id for j in view.started), tuple(j.id for j in view.stopped),
                                   tuple(j.id for j in view.arrived), tuple(c.job.id for c in view.completed)))
                return super().decide(view)

            def report(self):
                return {**super().report(), "seen": self.seen_}

        return Recording


@pytest.mark.parametrize("policy", ["gavel", "themis", "gavel:round_length=40", "themis:fairness_knob=0"])
@pytest.mark.parametrize("seed", [3, 11, 29])
@pytest.mark.parametrize("trace", [dnn_trace, _mixed_trace, "gang"])
def test_a_held_decision_changes_no_run(policy, seed, trace, monkeypatch):
    """Gavel's and Themis's decisions hold until the round's end (``Decision.stands_until``): at a
    pass where no job arrived or completed the engine applies the held order after the running
    jobs without asking the policy, and shows the pass's starts and stops with the next view.

    - The engine's shortcuts there (a settled view: nothing to do; the previous selection
      carried over) give the runs of applying the held order in full at every such pass, and
      ``check_invariants`` checks each shortcut's derivation;
    - holding changes no run against asking the policy at every pass (its answer within a round
      is that order), and the policy sees the same deltas in the same order, only grouped;
    - the carried selection is used."""
    from asrpt.engine import core as engine
    from asrpt.policies import make_policy

    inst = (_gang_trace if trace == "gang" else trace)(80, seed)
    carried, apply = [], engine._Engine._apply_carried

    def counting(self):
        carried.append(self.now)
        return apply(self)

    def recording(p):
        return _Deltas.wrap(type(p))(**p.get_params())

    monkeypatch.setattr(engine._Engine, "_apply_carried", counting)
    fast = simulate(inst, recording(make_policy(policy)), seed=0)
    checked = simulate(inst, policy, seed=0, check_invariants=True)
    asked = simulate(inst, recording(_unheld(policy)), seed=0)
    _apply_held_in_full(monkeypatch)
    full = simulate(inst, policy, seed=0)
    assert _runs(fast) == _runs(full) == _runs(checked) == _runs(asked)
    seen_fast, seen_asked = fast.policy_data.pop("seen"), asked.policy_data.pop("seen")
    assert fast.summary == {**asked.summary, "wall_time": fast.summary["wall_time"],
                            "decision_passes": fast.summary["decision_passes"]}
    assert fast.policy_data == asked.policy_data
    if trace is dnn_trace:
        assert carried, "the carried selection was never used"
    assert len(seen_fast) < len(seen_asked)
    for k in range(4):
        assert [i for d in seen_fast for i in d[k]] == [i for d in seen_asked for i in d[k]]


@settings(max_examples=25, deadline=None)
@given(dnn_instances(max_jobs=8, max_servers=2))
def test_a_held_decision_changes_no_run_on_small_dnn_instances(instance):
    """Drawn DNN instances (shrunk to a smallest one that differs, if any): Gavel and Themis with
    short rounds make the same runs whether their decisions hold or they are asked at every
    pass, and whether the held decisions take the engine's shortcuts or are applied in full."""
    for policy in ("gavel:round_length=5", "themis:round_length=7"):
        fast = simulate(instance, policy, seed=0)
        checked = simulate(instance, policy, seed=0, check_invariants=True)
        asked = simulate(instance, _unheld(policy), seed=0)
        with pytest.MonkeyPatch.context() as mp:
            _apply_held_in_full(mp)
            full = simulate(instance, policy, seed=0)
        assert _runs(fast) == _runs(full) == _runs(checked) == _runs(asked)


class _HoldsForever(Gavel):
    """Gavel whose decisions hold for ever (a new round never re-ranks: only arrivals and
    completions make it decide again)."""

    def decide(self, view):
        d = super().decide(view)
        return Decision(d.order, backfill=d.backfill, wake_at=d.wake_at, stands_until=float("inf"))


def test_a_decision_held_for_ever_is_what_it_says_in_both_engines():
    """``stands_until`` is what the decision means, not a promise: held past the round's end it
    gives other runs than Gavel's, and the reference engine gives the same ones."""
    from asrpt.engine.reference import run_reference
    from asrpt.placement import make_placer
    from asrpt.engine.core import run_engine

    differs = False
    for seed in (3, 11):
        inst = dnn_trace(60, seed)
        fast = run_engine(inst, _HoldsForever(round_length=40), make_placer("best_fit"), check_invariants=True)
        ref = run_reference(inst, _HoldsForever(round_length=40), make_placer("best_fit"))
        assert fast.records == ref.records
        differs = differs or _runs(fast) != _runs(simulate(inst, "gavel:round_length=40", seed=0))
    assert differs, "holding for ever changed no run: the test shows nothing"


def _gang_trace(n, seed):
    """``dnn_trace`` on 8-GPU servers with most pipeline or tensor parallel jobs made of gang
    instances (one per data-parallel replica), whose reservations may fail on fragmented servers."""
    import random

    from asrpt.instance import Instance, Job

    inst, rng = dnn_trace(n, seed, servers=4, per=8), random.Random(seed + 7)
    jobs = []
    for j in inst.jobs:
        if j.parallelism.pp * j.parallelism.tp > 1 and rng.random() < 0.7:
            j = Job(j.id, j.arrival, j.gpus, model=j.model, parallelism=j.parallelism, iterations=j.iterations,
                    predicted_iterations=j.predicted_iterations, instances=j.parallelism.dp)
        jobs.append(j)
    return Instance(inst.cluster, tuple(jobs))


@pytest.mark.parametrize("policy", ["srsf", "a-srpt", "tiresias", "gavel", "themis"])
@pytest.mark.parametrize("trace", [dnn_trace, _gang_trace])
def test_the_idle_fill_skipped_where_every_blocked_job_reserves_changes_no_run(policy, trace, monkeypatch):
    """With DNN jobs that run on to an iteration boundary and a placer that fits whenever the
    GPUs suffice, the engine skips the idle fill unless a blocked job is made of gang instances
    (every other blocked job reserves its placement, and no job left out fits in what that
    leaves): the same runs as filling at every pass; ``check_invariants`` runs fill and check
    that nothing started."""
    from asrpt.engine import core as engine

    skipped, idle_fill = [], engine._Engine._idle_fill

    def counting(self, candidates, chosen, blocked, left_out):
        started = len(self.started)
        out = idle_fill(self, candidates, chosen, blocked, left_out)
        if self.future == ():
            skipped.append(self.now)
        assert out == (len(self.started) > started)
        return out

    for seed in (3, 11, 29):
        inst = trace(80, seed)
        simulate(inst, policy, seed=0, check_invariants=True)
        monkeypatch.setattr(engine._Engine, "_idle_fill", counting)
        fast = simulate(inst, policy, seed=0)
        monkeypatch.setattr(engine._Engine, "_idle_fill",
                            lambda self, candidates, *args: self._fill_idle(candidates(), *args))
        _apply_held_in_full(monkeypatch)     # (its carried selection skips the fill too)
        full = simulate(inst, policy, seed=0)
        monkeypatch.undo()
        assert _runs(fast) == _runs(full)
    assert skipped, "the idle fill was never skipped"


