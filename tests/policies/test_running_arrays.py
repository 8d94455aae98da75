"""The numpy running-job pass of SRSF/SRTF and A-SRPT (asrpt/policies/_running.py) makes exactly
the decisions of their Python path, decision by decision, on random overloaded DNN traces
(adaptive crossings, stopping jobs, restarts, hysteresis, every order); the engine's
``running_arrays`` gives ``running_progress``'s numbers bit for bit; and the crossings noted as
arrays give the heap's next crossing (issue 18)."""

import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt.instance import Parallelism
from asrpt.instance import Cluster, Instance, Job
from asrpt.policies.asrpt import ASRPT
from asrpt.policies.srsf import SRSF
from asrpt.policies.themis import Themis
from asrpt.sim import simulate

from ._same_decisions import recording, same_decisions


class _PythonSRSF(SRSF):
    def _running_arrays(self, view, pred):
        return None


class _PythonASRPT(ASRPT):
    def _adaptive_arrays(self, view):
        return False

    def _running_run(self, view):
        return None


def _counting(cls, attr):
    """``cls`` counting the decisions its numpy pass handled (``cls.vector``)."""
    class Counting(cls):
        vector = [0]

        def reset(self, cluster, *, seed=None):
            super().reset(cluster, seed=seed)
            type(self).vector[0] = 0

    def wrapped(self, *args):
        out = getattr(cls, attr)(self, *args)
        if out not in (None, False):
            type(self).vector[0] += 1
        return out

    setattr(Counting, attr, wrapped)
    return Counting


SRSF_VEC = recording(_counting(SRSF, "_running_arrays"))
SRSF_PY = recording(_PythonSRSF)
ASRPT_VEC = recording(_counting(_counting(ASRPT, "_adaptive_arrays"), "_running_run"))
ASRPT_PY = recording(_PythonASRPT)

MODELS = ("gpt2", "resnet18", "bert-base")


def dnn_trace(n, seed, servers=4, per=4, float_arrivals=True):
    """An overloaded random DNN trace: bursts of arrivals, predictions off by up to 4x either way
    (so jobs outlive them and cross them while running), a fifth without a prediction."""
    rng = random.Random(seed)
    jobs, t = [], 0.0 if float_arrivals else 0
    for k in range(n):
        gap = rng.choice([0, 0, 1, 2, 5, 13])
        t += gap * rng.uniform(0.5, 1.5) if float_arrivals else gap
        tp = rng.choice([1, 1, 2, 4])
        pp = rng.choice([1, 1, 2])
        dp = rng.choice([1, 1, 2, 2])
        iters = rng.choice([5, 20, 80, 300]) * rng.randint(1, 5)
        extra = {}
        if rng.random() < 0.8:
            extra["predicted_iterations"] = iters * rng.choice([0.25, 0.5, 0.9, 1.0, 2.0, 4.0])
        jobs.append(Job(f"j{k}", t, dp * pp * tp, model=rng.choice(MODELS),
                        parallelism=Parallelism(dp, pp, tp), iterations=iters, **extra))
    return Instance(Cluster.homogeneous(servers, per, "A100"), tuple(jobs))


SRSF_VARIANTS = [
    {"predictor": "instance"},
    {"predictor": "instance", "key": "time"},
    {"predictor": "instance", "epsilon": 0.3},
    {"predictor": "instance", "key": "time", "epsilon": 0.2, "adaptive": "repredict"},
    {"predictor": "noisy:sigma=1.0", "adaptive": "repredict"},
    {"predictor": "noisy:sigma=1.0", "adaptive": "off"},
    {"predictor": "group_mean"},
    {"predictor": "group_mean", "adaptive": "doubling"},
    {},
]

ASRPT_VARIANTS = [
    {},
    {"order": "actual"},
    {"order": "virtual", "virtual": "gang"},
    {"virtual": "gang"},
    {"virtual": "fluid", "order": "virtual"},
    {"kappa": 1.0, "share": 0.25},
    {"adaptive": "repredict", "predictor": "noisy:sigma=1.0"},
    {"preemption": False},
    {"backfill": False},
    {"predictor": "group_mean"},
    {"predictor": "group_mean", "adaptive": "doubling"},
    {"adaptive": "off"},
    {"adaptive": "off", "order": "actual", "predictor": "noisy:sigma=1.0"},
]

RUNS = [{}, {"preemption_cost": 1.5}, {"preemption_cost": 0.7, "preemption_point": "immediate"}]


def _ids(p):
    return ",".join(f"{k}={v}" for k, v in p.items()) or "default"


@pytest.mark.parametrize("run", RUNS, ids=_ids)
@pytest.mark.parametrize("params", SRSF_VARIANTS, ids=_ids)
@pytest.mark.parametrize("seed", [1, 2])
def test_srsf_numpy_pass_makes_the_python_decisions(params, run, seed):
    inst = dnn_trace(70, seed)
    log = same_decisions(SRSF_VEC, SRSF_PY, inst, params, seed=seed, **run)
    decisions = sum(entry[0] == "decide" for entry in log)
    assert SRSF_VEC.vector[0] == decisions          # the numpy pass ran at every decision
    assert max(len(entry[2]) for entry in log if entry[0] == "decide") > 20   # deep queues


@pytest.mark.parametrize("run", RUNS, ids=_ids)
@pytest.mark.parametrize("params", ASRPT_VARIANTS, ids=_ids)
@pytest.mark.parametrize("seed", [1, 2])
def test_asrpt_numpy_pass_makes_the_python_decisions(params, run, seed):
    inst = dnn_trace(70, seed)
    log = same_decisions(ASRPT_VEC, ASRPT_PY, inst, params, seed=seed, **run)
    decisions = sum(entry[0] == "decide" for entry in log)
    assert ASRPT_VEC.vector[0] == decisions


def test_the_traces_exercise_crossings_restarts_and_stopping_jobs():
    """What the comparisons above cover: predictions raised at crossings while running, jobs
    stopping at an iteration boundary, restarts."""
    inst = dnn_trace(70, 1)
    seen = {"stopping": 0}

    def observer(view, decision):
        got = view.running_arrays()
        seen["stopping"] += int(got[3].sum())

    res = simulate(inst, SRSF(predictor="instance"), preemption_cost=1.5, observer=observer)
    assert res.policy_data["adaptive_updates"] > 5
    assert seen["stopping"] > 0
    assert sum(r.preemptions for r in res.records) > 5
    assert simulate(inst, ASRPT(), preemption_cost=1.5).policy_data["adaptive_updates"] > 5


@pytest.mark.parametrize("float_arrivals", [True, False])
@pytest.mark.parametrize("run", RUNS, ids=_ids)
def test_engine_running_arrays_are_running_progress_bit_for_bit(run, float_arrivals):
    inst = dnn_trace(60, 3, float_arrivals=float_arrivals)
    checked = [0]

    def observer(view, decision):
        got = view.running_arrays()
        progress = view.running_progress()
        assert got is not None
        idx, done, tau, stopping = got
        assert idx.tolist() == [j.index for j, _, _, _ in progress]
        assert done.tolist() == [float(d) for _, d, _, _ in progress]
        assert tau.tolist() == [t for _, _, t, _ in progress]
        assert stopping.tolist() == [s for _, _, _, s in progress]
        if not stopping.any():      # the shared array of False: no policy may write into it
            assert not stopping.flags.writeable
        checked[0] += len(progress)

    simulate(inst, SRSF(predictor="instance"), observer=observer, **run)
    assert checked[0] > 200


@pytest.mark.parametrize("float_arrivals", [True, False])
@pytest.mark.parametrize("run", RUNS, ids=_ids)
def test_engine_running_executed_arrays_are_running_executed_bit_for_bit(run, float_arrivals):
    """Every value a float and the same as the Python pass, or None (an int clock with a job
    whose executed time is an int: then the Python pass gives that int)."""
    inst = dnn_trace(60, 4, float_arrivals=float_arrivals)
    seen = {"arrays": 0, "none": 0}

    def observer(view, decision):
        got = view.running_executed_arrays()
        progress = view.running_executed()
        if got is None:
            assert any(type(e) is not float for _, e, _ in progress)
            seen["none"] += 1
            return
        idx, executed = got
        assert idx.tolist() == [j.index for j, _, _ in progress]
        assert all(type(e) is float for _, e, _ in progress)
        assert executed.tolist() == [e for _, e, _ in progress]
        seen["arrays"] += len(progress)

    simulate(inst, "tiresias-gittins", observer=observer, **run)
    assert seen["arrays"] > 200
    assert (seen["none"] > 0) == (not float_arrivals)


def _waiting_observer(seen, late=False):
    """An observer checking ``waiting_arrays`` against ``waiting_progress`` at every decision:
    equal as float64, or None where some value is not a float or a small int (``seen`` counts
    the jobs checked, the stopped ones among them and the None answers). ``late``: the first
    call only once a stopped job waits (the engine then makes its arrays mid-run)."""
    from asrpt.sizes import floaty

    def observer(view, decision):
        progress = view.waiting_progress()
        if late and not seen["jobs"] and not any(e for _, _, e in progress):
            return
        got = view.waiting_arrays()
        if got is None:
            seen["none"] += 1
            return
        assert all(floaty(d) and floaty(e) for _, d, e in progress)
        idx, done, executed = got
        assert idx.tolist() == [j.index for j, _, _ in progress]
        assert done.tolist() == [float(d) for _, d, _ in progress]
        assert executed.tolist() == [float(e) for _, _, e in progress]
        seen["jobs"] += len(progress)
        seen["stopped"] += sum(1 for _, _, e in progress if e)

    return observer


@pytest.mark.parametrize("float_arrivals", [True, False])
@pytest.mark.parametrize("run", RUNS, ids=_ids)
def test_engine_waiting_arrays_are_waiting_progress(run, float_arrivals):
    """The waiting jobs' attained work and executed time as float64, the values of
    ``waiting_progress`` (stopped jobs included: the values they stopped with)."""
    for policy, late in (("themis", False), ("gavel", True)):   # (Gavel never asks for them itself)
        seen = {"jobs": 0, "stopped": 0, "none": 0}
        simulate(dnn_trace(60, 5, float_arrivals=float_arrivals), policy, observer=_waiting_observer(seen, late),
                 **run)
        assert seen["jobs"] > 200 and seen["stopped"] > 20 and seen["none"] == 0


def test_engine_waiting_arrays_on_exact_data():
    """Fractions: arrays while every waiting value is 0, None once a job stopped with a
    Fraction (for good: the policy's Python path)."""
    jobs = tuple(Job(f"j{k}", Fraction(k, 3), 1 + k % 2, processing_time=Fraction(7 + k, 2)) for k in range(12))
    seen = {"jobs": 0, "stopped": 0, "none": 0}
    simulate(Instance(Cluster.homogeneous(2, 2), jobs), Themis(round_length=1), observer=_waiting_observer(seen))
    assert seen["jobs"] > 0 and seen["stopped"] == 0 and seen["none"] > 0


def test_exact_runs_keep_the_python_path():
    """Abstract jobs and Fraction data: no arrays, the Python path decides (and still agrees
    with itself)."""
    jobs = tuple(Job(f"j{k}", Fraction(k, 3), 1 + k % 2, processing_time=Fraction(7 + k, 2)) for k in range(8))
    inst = Instance(Cluster.homogeneous(2, 2), jobs)
    seen = []
    simulate(inst, SRSF(), observer=lambda v, d: seen.append(v.running_arrays()))
    assert seen and all(a is None for a in seen)
    same_decisions(SRSF_VEC, SRSF_PY, inst, {})
    assert SRSF_VEC.vector[0] == 0


def test_a_prediction_floats_cannot_hold_falls_back_to_python():
    """A prediction raised beyond 2**53 (an int) mid-pass: the rest of the pass is Python, and
    the decisions are the Python path's."""
    inst = dnn_trace(30, 4)
    big = {"predictor": "instance"}

    class Huge(SRSF_VEC):
        def _raise_prediction(self, view, job):
            new = super()._raise_prediction(view, job)
            value = int(new) + 2 ** 60
            self.tracker_.set(job, value)
            return value

    class HugePy(SRSF_PY):
        def _raise_prediction(self, view, job):
            new = super()._raise_prediction(view, job)
            value = int(new) + 2 ** 60
            self.tracker_.set(job, value)
            return value

    a = simulate(inst, Huge(**big))
    b = simulate(inst, HugePy(**big))
    assert a.completion_times == b.completion_times
    assert [r.segments for r in a.records] == [r.segments for r in b.records]
    assert a.policy_data == b.policy_data
    assert a.policy_data["adaptive_updates"] > 0


def test_table_ranks_follow_arrival_order():
    from asrpt.policies._running import JobTable
    from asrpt.state import job_views

    inst = dnn_trace(40, 5)
    table = JobTable(capacity=4)
    views = job_views(inst)
    order = sorted(range(len(views)), key=lambda i: (views[i].arrival, views[i].key, i))
    for i in order:
        table.add(views[i])
    assert not table.exact
    ranks = table.rank[:len(views)]
    assert sorted(range(len(views)), key=lambda i: ranks[i]) == order
    assert np.array_equal(table.tau_star[:len(views)], [v.tau_star for v in views])


def table_of(inst):
    """The instance's job views, a JobTable of them in arrival order, and the views by index."""
    from asrpt.policies._running import JobTable
    from asrpt.state import job_views

    views = job_views(inst)
    table = JobTable(capacity=1)
    for i in sorted(range(len(views)), key=lambda i: (views[i].arrival, views[i].key, i)):
        table.add(views[i])
    return views, table, {v.index: v for v in views}


@pytest.mark.parametrize("seed", range(30))
def test_array_merge_is_the_tuple_merge(seed):
    """The merge of a sorted array run with the waiting entries, ties on sizes included (broken by
    (arrival, key, index)), with and without skipped jobs, is the merge of the tuples."""
    from asrpt.policies._running import ArrayRun, TupleRun, merged

    rng = random.Random(seed)
    views, table, by_index = table_of(dnn_trace(40, seed + 10, float_arrivals=seed % 2 == 0))
    sizes = [0.0, 1.0, 2.5, 2.5, 7.0, 1e9]
    chosen = rng.sample(range(len(views)), rng.randint(0, 30))
    cut = rng.randint(0, len(chosen))
    run, wait = chosen[:cut], chosen[cut:]
    size_of = {i: rng.choice(sizes) for i in chosen}
    entries = lambda ids: [(size_of[i], views[i].arrival, views[i].key, i) for i in ids]
    if seed % 4 == 1:   # waiting sizes as exact numbers (ints, Fractions) of the same values
        size_of.update({i: int(size_of[i]) if size_of[i] == int(size_of[i]) else Fraction(size_of[i]) for i in wait})
    waiting = sorted(entries(wait))
    skip = set(rng.sample(chosen, min(3, len(chosen)))) if seed % 3 == 0 else ()
    arrays = ArrayRun(np.array([float(size_of[i]) for i in run]), np.array(run, dtype=np.intp), table)
    want = list(merged(TupleRun(sorted(entries(run))), waiting, by_index, skip))
    assert list(merged(arrays, waiting, by_index, skip)) == want
    assert len(want) == len(chosen) - len(skip)


class _CrossingView:
    """What ``noted_crossing`` reads of a view: the time, the jobs started since the decision
    (none here), and which jobs run and which of them are stopping."""

    def __init__(self, now, running, stopping):
        self.now, self.started, self._running, self._stopping = now, (), running, stopping

    def is_running(self, job):
        return job.index in self._running

    def is_stopping(self, job):
        return job.index in self._stopping


@given(st.lists(st.tuples(st.sampled_from([1.0, 2.0, 2.0, 3.0, 5.0]), st.booleans(), st.booleans()),
                min_size=0, max_size=40),
       st.sampled_from([0.0, 1.0, 2.0, 3.0]), st.randoms(use_true_random=False))
@settings(max_examples=300, deadline=None)
def test_sorted_crossings_give_the_heap_s_next_crossing(entries, now, rnd):
    """The tracker's next crossing read from a SortedCrossings (equal times in array order) is
    the one read from the heap of ``(time, index)`` tuples (equal times by index), whichever
    tied entries are disqualified (not running, or stopping) and whatever the array order."""
    from types import SimpleNamespace

    from asrpt.policies._running import SortedCrossings
    from asrpt.predict.base import PredictionTracker

    who = list(range(len(entries)))
    rnd.shuffle(who)
    when = [t for t, _, _ in entries]
    running = {i for i, (_, run, _) in zip(who, entries) if run}
    stopping = {i for i, (_, _, stop) in zip(who, entries) if stop}
    views = {i: SimpleNamespace(index=i) for i in who}
    tracker = SimpleNamespace(predicted={})
    view = _CrossingView(now, running, stopping)
    heap = sorted(zip(when, who))
    arrays = SortedCrossings(np.array(when, dtype=float), np.array(who, dtype=np.intp))
    want = PredictionTracker.noted_crossing(tracker, view, {}, heap, views)
    assert PredictionTracker.noted_crossing(tracker, view, {}, arrays, views) == want


@pytest.mark.parametrize("seed", range(5))
def test_array_run_sorts_long_runs_with_ties_as_the_tuples(seed):
    """A long run (past numpy's small-array sorts), most sizes tied: sorted by (size, arrival
    rank), the order of the tuples (size, arrival, key, index)."""
    from types import SimpleNamespace as Job

    from asrpt.policies._running import ArrayRun, JobTable

    rng = random.Random(seed)
    table = JobTable()
    n = 300
    for i in range(n):
        table.add(Job(index=i, tau_star=1.0, gpus=1, arrival=float(i // 3), key=(i,)))
    run = rng.sample(range(n), 250)
    size_of = {i: rng.choice([0.0, 0.0, 1.0, 2.5, 2.5, 2.5, 1e9]) for i in run}
    arrays = ArrayRun(np.array([size_of[i] for i in run]), np.array(run, dtype=np.intp), table)
    assert arrays.index.tolist() == [e[-1] for e in sorted((size_of[i], i // 3, (i,), i) for i in run)]


def test_a_run_read_with_and_without_skipped_jobs_lists_the_right_running_chunks():
    """The held GPUs up to each position (the keep check's) are remembered for one index at a
    time; the merge read with skipped jobs, then without, gives each its own running chunks (the
    lists of running jobs between the waiting ones)."""
    from types import SimpleNamespace as Job

    from asrpt.policies._running import ArrayRun, JobTable, merged_chunks

    table = JobTable()
    for i in range(4):
        table.add(Job(index=i, tau_star=1.0, gpus=i + 1, arrival=float(i), key=(i,)))
    views = {i: table.views[i] for i in range(4)}
    run = ArrayRun(np.array([1.0, 2.0, 3.0, 4.0]), np.arange(4), table)
    waiting = [(2.5, 9.0, (9,), 9)]
    views[9] = Job(index=9, gpus=1)
    with_skip = [[j.index for j in c] for c in merged_chunks(run, waiting, views, {1}) if type(c) is list]
    without = [[j.index for j in c] for c in merged_chunks(run, waiting, views) if type(c) is list]
    assert with_skip == [[0], [2, 3]] and without == [[0, 1], [2, 3]]    # (job 1 skipped or not)
