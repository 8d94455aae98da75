"""Themis and Gavel with the incremental waiting order make exactly the decisions of their plain
reference copies (asrpt/policies/reference/), decision by decision, on random instances (issue 18)."""

import math
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from asrpt.policies.gavel import Gavel
from asrpt.policies.themis import Themis
from asrpt.testing.strategies import dnn_instances, gang_instances

from ._same_decisions import same_decisions
from asrpt.policies.reference import ReferenceGavel, ReferenceThemis
from .test_srsf_incremental import random_trace


def recording(cls):
    class Recording(cls):
        runs: list = []  # simulate() runs a fresh copy: each run's log is appended here

        def reset(self, cluster, *, seed=None):
            super().reset(cluster, seed=seed)
            self.log = []
            type(self).runs.append(self.log)

        def decide(self, view):
            d = super().decide(view)
            self.log.append((view.now, tuple(j.index for j in d.order), d.backfill, d.wake_at))
            # (asked at every pass: the log compares decision by decision, so no decision may
            # hold for later passes; tests/sim/test_order_chunks.py shows that changes no run)
            return type(d)(d.order, d.backfill, d.wake_at)

    return Recording


PAIRS = {"themis": (recording(Themis), recording(ReferenceThemis)),
         "gavel": (recording(Gavel), recording(ReferenceGavel))}

VARIANTS = [
    ("themis", {}),
    ("themis", {"round_length": 7.0, "fairness_knob": 0.5}),
    ("themis", {"round_length": 3.0, "fairness_knob": 0.0, "predictor": "noisy:sigma=1.0"}),
    ("gavel", {}),
    ("gavel", {"round_length": 5.0}),
    ("gavel", {"round_length": 2.0, "weighted": True}),
]


def same_run(instance, name, params, seed=0, **kwargs):
    return same_decisions(*PAIRS[name], instance, params, seed, **kwargs)


@pytest.mark.parametrize("name,params", VARIANTS, ids=lambda v: str(v))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_identical_decisions_on_random_overloaded_traces(name, params, seed):
    log = same_run(random_trace(120, seed), name, params, seed=seed)
    assert max(len(entry[1]) for entry in log) > 30  # deep queues were ranked
    assert len({entry[0] for entry in log}) > 20     # and many decisions fell between rounds


@settings(max_examples=30, deadline=None)
@given(gang_instances(max_jobs=8))
def test_identical_decisions_on_gang_instances(instance):
    for name, params in VARIANTS:
        same_run(instance, name, params)


@settings(max_examples=10, deadline=None)
@given(dnn_instances(max_jobs=5))
def test_identical_decisions_on_dnn_instances(instance):
    for name, params in VARIANTS[1:2] + VARIANTS[4:5]:
        same_run(instance, name, params, preemption_cost=1.5)


@pytest.fixture(scope="module")
def philly_dnn():
    """The bundled Philly window's first 200 jobs with DNN jobs on 4 x 8 GPUs (overloaded; float
    times from the performance model), and the same with integral arrivals (int and float mixed)."""
    import dataclasses
    from importlib import resources

    from asrpt.instance import Cluster, Instance
    from asrpt.traces.philly import read_philly

    path = str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
    inst, _ = read_philly(path, cluster=Cluster.from_spec("4x8"), dnn=True, seed=0, limit=200)
    ints = Instance(inst.cluster, tuple(dataclasses.replace(j, arrival=int(j.arrival)) for j in inst.jobs))
    return inst, ints


@pytest.mark.parametrize("name,params", [("themis", {"predictor": "hierarchy", "round_length": 60.0}),
                                         ("themis", {}), ("gavel", {"round_length": 60.0})],
                         ids=lambda v: str(v))
@pytest.mark.parametrize("integral", [False, True])
def test_identical_decisions_on_overloaded_dnn_philly_jobs(philly_dnn, name, params, integral):
    """The rounds' float fast paths (rho and the priorities inline, the entries sorted at the
    round) on DNN jobs, where every time is a float or an int."""
    log = same_run(philly_dnn[integral], name, params)
    assert max(len(entry[1]) for entry in log) > 60


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), unique=True, max_size=40), st.randoms())
def test_merged_views_is_the_sort_of_both_runs(keys, rnd):
    """The run-by-run merge of the priority orders reads the sort of the two sorted runs (a list
    or a SortedList first, with long runs and interleaved entries alike)."""
    from sortedcontainers import SortedList

    from asrpt.policies._incremental import merged_views

    entries = [(k, i) for i, k in enumerate(keys)]
    rnd.shuffle(entries)
    cut = rnd.randint(0, len(entries))
    a, b = sorted(entries[:cut]), sorted(entries[cut:])
    views = {i: f"v{i}" for _, i in entries}
    want = [views[i] for _, i in sorted(entries)]
    assert list(merged_views(a, b, views)) == want
    assert list(merged_views(SortedList(a), b, views)) == want


class _Job:
    def __init__(self, index):
        self.index, self.gpus = index, 1 + index % 3


class _Deltas:
    """What WaitingOrder reads of a ClusterView: the live statuses and the deltas since the
    previous view (``completed`` as objects with ``job``)."""

    def __init__(self, running, stopping, arrived=(), started=(), stopped=(), completed=()):
        self._running, self.stopping = running, stopping
        self.arrived, self.started, self.stopped = arrived, started, stopped
        self.completed = [type("C", (), {"job": j})() for j in completed]

    def is_running(self, job):
        return job.index in self._running


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["arrive", "start", "stop_begin", "reselect", "stopped", "complete",
                                           "round"]), st.integers(0, 11)), min_size=8, max_size=60),
       st.integers(0, 2 ** 32 - 1))
def test_waiting_order_head_and_stopping_part_follow_the_deltas(steps, seed):
    """The tracked order's running head (running jobs not stopping, in key order) and the rest
    (stopping and waiting jobs merged by key), kept from the deltas, equal the ones made afresh after
    any sequence of arrivals, starts, preemptions (running on to a boundary), reselections
    before the boundary, stops, completions and new rounds."""
    import random

    from asrpt.policies._incremental import WaitingOrder

    rnd = random.Random(seed)
    keys = {i: (rnd.random(), i) for i in range(12)}      # a round's keys (new at each round)
    jobs = {i: _Job(i) for i in range(12)}
    order = WaitingOrder(track_running=True)
    status: dict[int, str] = {}     # index -> "waiting", "running", "stopping"
    pending = {"arrived": [], "started": [], "stopped": [], "completed": []}

    def key_of(job):
        return keys[job.index]

    def view():
        running = {i for i, s in status.items() if s != "waiting"}
        v = _Deltas(running, [jobs[i] for i, s in status.items() if s == "stopping"],
                    **{k: list(part) for k, part in pending.items()})
        for part in pending.values():
            part.clear()
        return v

    seen: set = set()
    needs = {"start": "waiting", "stop_begin": "running", "reselect": "stopping", "stopped": "stopping"}
    for op, k in steps:
        if op == "arrive":
            fresh = [i for i in jobs if i not in seen]
            if not fresh:
                continue
            i = fresh[k % len(fresh)]
            seen.add(i)
            status[i] = "waiting"
            pending["arrived"].append(jobs[i])
        elif op == "round":
            order.note(view())
            keys = {j: (rnd.random(), j) for j in range(12)}
            held = sorted((keys[j], j) for j, t in status.items() if t != "waiting")
            waiting = sorted((keys[j], j) for j, t in status.items() if t == "waiting")
            order.rebuild_sorted(held, waiting)
            continue
        else:       # on the k-th job (cyclically) of those the step applies to
            cands = sorted(i for i, t in status.items() if (t != "waiting" if op == "complete" else t == needs[op]))
            if not cands:
                continue
            i = cands[k % len(cands)]
            if op == "complete":
                del status[i]
                pending["completed"].append(jobs[i])
            else:
                status[i] = {"start": "running", "stop_begin": "stopping", "reselect": "running",
                             "stopped": "waiting"}[op]
                if op in ("start", "stopped"):
                    pending["started" if op == "start" else "stopped"].append(jobs[i])
        v = view()
        order.note(v)
        merged = order.order(v, key_of)
        head = list(merged._head)
        assert [j.index for j in head] == [j for _, j in sorted((keys[j], j) for j, t in status.items()
                                                                if t == "running")]
        rest = [j.index for j in merged][len(head):]
        assert rest == [j for _, j in sorted((keys[j], j) for j, t in status.items() if t != "running")]


class _BothRounds(Themis):
    """Themis keying every round both ways: the numpy round's int keys must stand for the Python
    round's tuples, place for place (the same running and waiting entries in the same order, the
    same order of every job's key), and a job arriving during the round must land where its tuple
    key would (:meth:`Themis._missing_key`). Then the numpy round is used, int keys and all."""

    arrays = 0

    def _new_round(self, view):
        from bisect import bisect_left, bisect_right

        self.rounds_ += 1
        now = view.now
        self.round_end_ = now + self._length
        want = self._round_tuples(view, now)
        tuple_keys = self._keys
        got = self._round_arrays(view, now)
        if got is None:     # (nothing set: the Python round's keys stand)
            return want
        type(self).arrays += 1
        assert [[i for _, i in part] for part in got] == [[i for _, i in part] for part in want]
        assert all(part == sorted(part) for part in got)
        assert sorted(self._keys, key=self._keys.get) == sorted(tuple_keys, key=tuple_keys.get)
        # the first and a far later arrival of the round: after every (0, -inf, a, id) keyed now
        # (a <= now), before every other key
        ints, tuples = sorted(self._keys.values()), sorted(tuple_keys.values())
        place = bisect_left(tuples, (0, -math.inf, math.inf))
        assert all(k[2] <= now for k in tuples[:place])     # (every job keyed now arrived by now)
        for later in (0, 10**6):     # (a stand-in table ranking job -1 after `later` others)
            arrival = SimpleNamespace(_arrival_base=self._arrival_base,
                                      _table=SimpleNamespace(rank={-1: float(self._table.n + later)}))
            k = Themis._missing_key(arrival, SimpleNamespace(index=-1))
            assert type(k) is int and bisect_left(ints, k) == place == bisect_right(ints, k)
        return got


@pytest.mark.parametrize("params", [{"predictor": "hierarchy", "round_length": 60.0}, {},
                                    {"fairness_knob": 0.0, "predictor": "noisy:sigma=1.0"}], ids=str)
@pytest.mark.parametrize("integral", [False, True])
@pytest.mark.parametrize("backwards", [False, True])
def test_themis_numpy_round_keys_as_the_python_round(philly_dnn, params, integral, backwards):
    """Also with the jobs listed backwards (job indices against the arrival order, which the
    numpy sort breaks rho ties by)."""
    from asrpt.instance import Instance
    from asrpt.sim import simulate

    instance = philly_dnn[integral]
    if backwards:
        instance = Instance(instance.cluster, instance.jobs[::-1])
    _BothRounds.arrays = 0
    res = simulate(instance, _BothRounds(**params), seed=0, check_invariants=True)
    rounds = res.policy_data["rounds"]
    # (with integral arrivals the first rounds, at int times before any job ran, have int
    # executed times and take the Python path)
    assert _BothRounds.arrays > 20 and (integral or _BothRounds.arrays == rounds)


@pytest.mark.parametrize("integral", [False, True])
def test_themis_numpy_round_without_the_engines_waiting_arrays(philly_dnn, integral, monkeypatch):
    """An engine that offers no waiting arrays: the numpy round keys the waiting jobs from
    ``waiting_progress`` and still gives the Python round's entries and keys."""
    from asrpt.sim import simulate
    from asrpt.state import ClusterView

    monkeypatch.setattr(ClusterView, "waiting_arrays", lambda self: None)
    _BothRounds.arrays = 0
    res = simulate(philly_dnn[integral], _BothRounds(round_length=60.0), seed=0, check_invariants=True)
    assert _BothRounds.arrays > 20 and (integral or _BothRounds.arrays == res.policy_data["rounds"])
