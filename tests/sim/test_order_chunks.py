"""Orders read in chunks (``Decision.order``'s ``chunks()``, issue 18): the engine takes a list of
jobs that fits whole, stops at ``REST_WAITING`` once no waiting job fits in what is left, and takes
a first ``RunningHead`` (the running jobs that are not stopping) without looking its jobs up.
None of these may change a run: every policy whose orders offer chunks makes the same decisions
when its orders are read as plain lists, job by job; a chunk marker placed before a running job,
and a running head that lists a stopping job, are caught by ``check_invariants``. The idle fill's
stop once no waiting job fits in what the reservations leave changes no run either."""

import pytest
from hypothesis import given, settings

from asrpt.policies.gavel import Gavel
from asrpt.policies.srsf import SRSF
from asrpt.sim import simulate
from asrpt.state import REST_WAITING, Decision, RunningHead
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
    """An order given as its chunks (a marker such as REST_WAITING lists no job)."""

    def __init__(self, *pieces):
        self._pieces = pieces

    def __iter__(self):
        return (job for piece in self._pieces for job in piece)

    def chunks(self):
        return iter(self._pieces)


class _EarlyMark(SRSF):
    """SRSF whose order marks the rest as waiting before its running jobs."""

    def decide(self, view):
        order = list(super().decide(view).order)
        return Decision(_Chunks(REST_WAITING, order), backfill=True)


def test_a_marker_before_a_running_job_is_caught():
    with pytest.raises(AssertionError, match="marks the rest as waiting"):
        simulate(dnn_trace(40, 5), _EarlyMark(predictor="instance"), seed=0, check_invariants=True)


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


class _HeadWithAStoppingJob(Gavel):
    """Gavel whose order, while some job is stopping, marks every running job, the stopping ones
    included, as a running head (its decisions make no promise to stand: it breaks them)."""

    def decide(self, view):
        decision = super().decide(view)
        if not view.stopping:
            return Decision(decision.order, backfill=True, wake_at=decision.wake_at, same_keys=decision.same_keys)
        running = list(view.running)
        rest = [j for j in decision.order if not view.is_running(j)]
        return Decision(_Chunks(RunningHead(running), rest), backfill=True, wake_at=decision.wake_at)


def test_a_running_head_with_a_stopping_job_is_caught():
    with pytest.raises(AssertionError, match="running head lists"):
        simulate(dnn_trace(60, 5), _HeadWithAStoppingJob(), seed=0, check_invariants=True)


def test_a_running_head_not_first_is_read_as_a_list():
    """A RunningHead after another chunk is only a list: the engine's walk reads it job by job."""

    class Late(SRSF):
        def decide(self, view):
            order = list(super().decide(view).order)
            return Decision(_Chunks(order[:1], RunningHead(order[1:])), backfill=True)

    inst = dnn_trace(60, 5)
    assert _runs(simulate(inst, Late(predictor="instance"), seed=0, check_invariants=True)) == \
        _runs(simulate(inst, SRSF(predictor="instance"), seed=0, observer=_as_lists))


def test_a_running_job_listed_again_after_the_running_head_is_refused():
    """A job of the head listed again later (not a stopping one) is a job listed twice."""
    from asrpt.errors import AsrptError

    class Twice(SRSF):
        def decide(self, view):
            order = list(super().decide(view).order)
            running = [j for j in order if view.is_running(j)]
            if not running:
                return Decision(order, backfill=True)
            rest = [j for j in order if not view.is_running(j)]
            return Decision(_Chunks(RunningHead(running), running[:1] + rest), backfill=True)

    with pytest.raises(AsrptError, match="listed a job twice"):
        simulate(dnn_trace(60, 5), Twice(predictor="instance"), seed=0)


def _no_carry(monkeypatch):
    """The engine with the carried selection off: every same_keys decision is read in full (and
    the policy asked at every pass: no standing decision)."""
    from asrpt.engine import core as engine

    monkeypatch.setattr(engine._Engine, "_apply_carried",
                        lambda self, decision: self._apply_preemptive(decision, decision.backfill))
    monkeypatch.setattr(engine._Engine, "_stands", lambda self, dry=False: False)


def _mixed_trace(n, seed):
    """``dnn_trace`` with about 40% of its jobs made abstract (they stop at once when preempted,
    so idle GPUs may go to them in a pass that carries a selection over, which ends the carry)."""
    import random

    from asrpt.instance import Instance, Job

    inst, rng = dnn_trace(n, seed), random.Random(seed + 1000)
    jobs = [Job(j.id, j.arrival, rng.choice([1, 1, 2, 3]), processing_time=rng.choice([3.0, 40.0, 200.0]))
            if rng.random() < 0.4 else j for j in inst.jobs]
    return Instance(inst.cluster, tuple(jobs))


@pytest.mark.parametrize("policy", ["gavel", "themis", "gavel:round_length=40", "themis:fairness_knob=0"])
@pytest.mark.parametrize("seed", [3, 11, 29])
@pytest.mark.parametrize("trace", [dnn_trace, _mixed_trace])
def test_a_carried_selection_changes_no_decision(policy, seed, trace, monkeypatch):
    """Within a round, Gavel and Themis promise ``same_keys``; the engine then carries the
    previous pass's selection over instead of reading the order: the same run as reading every
    order in full, the promise checked at every pass (``check_invariants``), and the carried
    path taken."""
    from asrpt.engine import core as engine

    inst = trace(80, seed)
    carried, apply = [], engine._Engine._apply_carried

    def counting(self, decision):
        carried.append(self.now)
        return apply(self, decision)

    monkeypatch.setattr(engine._Engine, "_apply_carried", counting)
    fast = simulate(inst, policy, seed=0, check_invariants=True)
    monkeypatch.undo()
    _no_carry(monkeypatch)
    full = simulate(inst, policy, seed=0)
    assert carried, "the carried selection was never used"
    assert _runs(fast) == _runs(full)
    assert fast.summary == {**full.summary, "wall_time": fast.summary["wall_time"]}


class _FalseSameKeys(Gavel):
    """Gavel that promises ``same_keys`` at a new round too (its keys change there)."""

    def decide(self, view):
        d = super().decide(view)
        return Decision(d.order, backfill=d.backfill, wake_at=d.wake_at, same_keys=bool(view.running))


def test_a_false_same_keys_promise_is_caught():
    with pytest.raises(AssertionError, match="promised same_keys"):
        for seed in (3, 11, 29, 5):
            simulate(dnn_trace(80, seed), _FalseSameKeys(round_length=40), seed=0, check_invariants=True)


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
def test_a_standing_decision_changes_no_run(policy, seed, trace, monkeypatch):
    """Gavel's and Themis's decisions stand until the round's end (``Decision.stands_until``):
    at a pass where no job arrived or completed the engine applies the carried selection or
    keeps the running jobs without asking the policy, and shows the pass's starts and stops with
    the next view. The same runs as asking at every pass; the policy sees the same deltas in the
    same order, only grouped; ``check_invariants`` asks anyway and checks the promise at every
    such pass; and the shortcut is taken."""
    from asrpt.policies import make_policy
    from asrpt.engine import core as engine

    inst = (_gang_trace if trace == "gang" else trace)(80, seed)
    stood, stands = [], engine._Engine._stands

    def counting(self, dry=False):
        out = stands(self, dry)
        if out and not dry:
            stood.append(self.now)
        return out

    def recording():
        p = make_policy(policy)
        return _Deltas.wrap(type(p))(**p.get_params())

    monkeypatch.setattr(engine._Engine, "_stands", counting)
    fast = simulate(inst, recording(), seed=0)
    checked = simulate(inst, policy, seed=0, check_invariants=True)
    monkeypatch.setattr(engine._Engine, "_stands", lambda self, dry=False: False)
    full = simulate(inst, recording(), seed=0)
    assert _runs(fast) == _runs(full) == _runs(checked)
    seen_fast, seen_full = fast.policy_data.pop("seen"), full.policy_data.pop("seen")
    assert fast.summary == {**full.summary, "wall_time": fast.summary["wall_time"]}
    assert fast.policy_data == full.policy_data
    if trace is dnn_trace:
        assert stood, "no pass stood on the previous decision"
    assert len(seen_fast) == len(seen_full) - len(stood)
    for k in range(4):
        assert [i for d in seen_fast for i in d[k]] == [i for d in seen_full for i in d[k]]


@settings(max_examples=25, deadline=None)
@given(dnn_instances(max_jobs=8, max_servers=2))
def test_a_standing_decision_changes_no_run_on_small_dnn_instances(instance):
    """Drawn DNN instances (shrunk to a smallest one that differs, if any): Gavel and Themis
    with short rounds make the same runs whether their decisions stand or they are asked at
    every pass, and the promise holds at every pass under ``check_invariants``."""
    from asrpt.engine import core as engine

    for policy in ("gavel:round_length=5", "themis:round_length=7"):
        fast = simulate(instance, policy, seed=0)
        checked = simulate(instance, policy, seed=0, check_invariants=True)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(engine._Engine, "_stands", lambda self, dry=False: False)
            full = simulate(instance, policy, seed=0)
        assert _runs(fast) == _runs(full) == _runs(checked)
        assert fast.summary == {**full.summary, "wall_time": fast.summary["wall_time"]}


class _StandsForever(Gavel):
    """Gavel whose decisions claim to stand past the round's end (a new round re-ranks)."""

    def decide(self, view):
        d = super().decide(view)
        return Decision(d.order, backfill=d.backfill, wake_at=d.wake_at, same_keys=d.same_keys,
                        stands_until=float("inf"))


def test_a_false_standing_promise_is_caught():
    with pytest.raises(AssertionError, match="promised that its decision stands"):
        for seed in (3, 11, 29, 5):
            simulate(dnn_trace(80, seed), _StandsForever(round_length=40), seed=0, check_invariants=True)


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
        monkeypatch.setattr(engine._Engine, "_stands", lambda self, dry=False: False)   # (it skips the fill too)
        full = simulate(inst, policy, seed=0)
        monkeypatch.undo()
        assert _runs(fast) == _runs(full)
    assert skipped, "the idle fill was never skipped"


@pytest.mark.parametrize("run", RUNS, ids=_ids)
@pytest.mark.parametrize("policy", ["srsf", "a-srpt", "tiresias", "tiresias-gittins"])
def test_running_chunks_change_no_decision(policy, run, monkeypatch):
    """Orders that merge running and waiting jobs hand the running ones as RunningChunks; where
    the selection keeps every running job and none is stopping, the engine neither builds the
    set of the selected jobs nor walks them (not under ``check_invariants``, which always does):
    the same runs as reading the orders as plain lists, and that lean path taken."""
    from asrpt.engine import core as engine

    lean, apply = [], engine._Engine._apply_preemptive

    def counting(self, decision, backfill):
        apply(self, decision, backfill)
        if self.held_taken and not self.stopping and len(self.singles) < len(self.running):
            lean.append(self.now)

    for seed in (3, 11):
        inst = dnn_trace(60, seed)
        monkeypatch.setattr(engine._Engine, "_apply_preemptive", counting)
        chunked = simulate(inst, policy, seed=0, **run)
        monkeypatch.undo()
        listed = simulate(inst, policy, seed=0, observer=_as_lists, **run)
        assert _runs(chunked) == _runs(listed)
    assert lean, "the lean path was never taken"


class _WaitingInARunningChunk(SRSF):
    """SRSF whose order hands every job, waiting ones included, as one RunningChunk."""

    def decide(self, view):
        from asrpt.state import RunningChunk

        order = list(super().decide(view).order)
        return Decision(_Chunks(RunningChunk(order)), backfill=True)


def test_a_waiting_job_in_a_running_chunk_is_caught():
    with pytest.raises(AssertionError, match="running chunk"):
        simulate(dnn_trace(40, 5), _WaitingInARunningChunk(predictor="instance"), seed=0, check_invariants=True)


def _with_running_chunks(decision, edit):
    """The decision's order as :class:`_Chunks`, each running chunk passed to ``edit`` first (the
    lazy chunks listed)."""
    from asrpt.state import RunningChunk

    pieces = []
    for piece in decision.order.chunks():
        if type(piece) is RunningChunk:
            edit(piece)
        pieces.append(piece if type(piece) in (RunningChunk, tuple) or piece is REST_WAITING else list(piece))
    return Decision(_Chunks(*pieces), backfill=True)
