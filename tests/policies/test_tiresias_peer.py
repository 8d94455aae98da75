"""The Tiresias simulator's 2D-LAS (``tiresias-peer`` and its presets, issue 19) against a
stand-alone re-statement of its event loop, written from its rules (docs/peers.md) without the
engine: its own event choice (arrivals, the earliest completion, jumps strictly before both),
completions, arrivals, counter updates, demotions and promotions in arrival order, the greedy GPU
count over the queue lists, and the stable partition of each queue after the pass."""

import math
import os

import numpy as np
import pytest

import asrpt

from asrpt.instance import Cluster, Instance, Job, Server
from asrpt.policies.tiresias import Tiresias, _PeerLAS, _PeerLASIncremental
from asrpt.sim import simulate


def restatement(jobs, M, limits=(3250, 7200), knob=0, gpu_time=True):
    """jobs: (id, submit, gpus, duration) in arrival order. Returns id -> (start, end, preempt)."""
    arrivals = list(jobs)
    st = {}
    runnable, queues = [], [[] for _ in range(len(limits) + 1)]
    last = len(limits)
    prev, jump, ptr = 0, math.inf, 0
    while ptr < len(arrivals) or runnable:
        t_arr = arrivals[ptr][1] if ptr < len(arrivals) else math.inf
        ends = [s["end_at"] for s in runnable if s["running"]]
        t_end = min(ends) if ends else math.inf
        if t_arr == math.inf and t_end == math.inf:
            break                                   # what is left never fits
        t = min(t_arr, t_end)
        bare = jump < t
        if bare:
            t = jump
        dt = t - prev
        if not bare:
            if t == t_end:
                for s in [s for s in runnable if s["running"] and s["end_at"] == t]:
                    s["end"] = t
                    runnable.remove(s)
                    queues[s["q"]].remove(s)
            while ptr < len(arrivals) and arrivals[ptr][1] == t:
                jid, _, g, d = arrivals[ptr]
                ptr += 1
                s = st[jid] = dict(id=jid, g=g, d=d, q=0, executed=0, total=0, pend=0, running=False,
                                   start=None, end=None, preempt=0, end_at=None)
                runnable.append(s)
                queues[0].append(s)
        for s in runnable:
            if s["running"]:
                s["executed"] += dt
                s["total"] += dt
                gt = s["executed"] * s["g"] if gpu_time else s["executed"]
                if s["q"] < last and gt >= limits[s["q"]]:
                    queues[s["q"]].remove(s)
                    s["q"] += 1
                    queues[s["q"]].append(s)
            else:
                if s["executed"] > 0:
                    s["pend"] += dt
                if (knob and s["q"] > 0 and s["total"] > 0 and s["executed"] > 0
                        and s["pend"] >= int(s["executed"] * knob)):
                    queues[s["q"]].remove(s)
                    s["q"], s["executed"], s["pend"] = 0, 0, 0
                    queues[0].append(s)
        free = M
        chosen = set()
        for queue in queues:
            for s in queue:
                if free >= s["g"]:
                    free -= s["g"]
                    chosen.add(s["id"])
        for s in runnable:
            if s["running"] and s["id"] not in chosen:
                s["running"] = False
                s["preempt"] += 1
            elif not s["running"] and s["id"] in chosen:
                s["running"] = True
                if s["start"] is None:
                    s["start"] = t
        for k, queue in enumerate(queues):
            queues[k] = [s for s in queue if s["running"]] + [s for s in queue if not s["running"]]
        jump = math.inf
        for s in runnable:
            if s["running"]:
                s["end_at"] = t + s["d"] - s["total"]
                if s["q"] < last:
                    lim = limits[s["q"]]
                    jt = t + ((lim - s["executed"]) // s["g"] if gpu_time else lim - s["executed"])
                    jump = min(jump, jt)
            elif knob and s["q"] > 0 and s["total"] and s["executed"] > 0:
                diff = int(s["executed"] * knob - s["pend"])
                if diff > 0:
                    jump = min(jump, t + diff)
        prev = t
    return {jid: (s["start"], s["end"], s["preempt"]) for jid, s in st.items()}


def random_jobs(rng, n, M):
    gpus = rng.choice([1, 1, 1, 2, 3, 4, 8], size=n)
    gpus = np.minimum(gpus, M)
    arrivals = np.sort(rng.integers(0, 400, size=n))
    durations = rng.integers(1, 300, size=n)
    return [(str(i), int(a), int(g), int(d)) for i, (a, g, d) in enumerate(zip(arrivals, gpus, durations))]


def ours(jobs, M, spec):
    inst = Instance(Cluster((Server(M),)), tuple(Job(j, a, g, processing_time=d) for j, a, g, d in jobs))
    res = simulate(inst, spec, placement="first_fit", check_invariants=True)
    return {r.id: (r.start, r.completion, r.preemptions) for r in res.records}


@pytest.mark.parametrize("spec, kwargs", [
    ("tiresias-peer:thresholds=[40,120]", dict(limits=(40, 120))),
    ("tiresias-peer:thresholds=[40,120]:service=time", dict(limits=(40, 120), gpu_time=False)),
    ("dlas-gpu-2:thresholds=[40,120]", dict(limits=(40, 120), knob=2)),
    ("dlas-gpu-0.5:thresholds=[30,90]", dict(limits=(30, 90), knob=0.5)),
    ("tiresias-peer:thresholds=[25]", dict(limits=(25,))),
])
def test_the_presets_make_the_peers_decisions_on_random_instances(spec, kwargs):
    rng = np.random.default_rng(19)
    for case in range(40):
        M = int(rng.choice([4, 8, 12]))
        jobs = random_jobs(rng, 30, M)
        assert ours(jobs, M, spec) == restatement(jobs, M, **kwargs), (spec, case)


def test_demotion_waits_for_the_peers_jump_event():
    # a 2-GPU job crosses L0 = 3 GPU-s at t = 1.5, but the peer's jumps are 0 + 3 // 2 = 1 (service
    # 2: not yet) and 1 + (3 - 1) // 2 = 2: b, arriving at 1, starts at 2, not 1.5.
    jobs = [("a", 0, 2, 10), ("b", 1, 2, 1)]
    assert ours(jobs, 2, "tiresias-peer:thresholds=[3]") == {"a": (0, 11, 1), "b": (2, 3, 0)}
    assert ours(jobs, 2, "tiresias:thresholds=[3]") == {"a": (0, 11, 1), "b": (1.5, 2.5, 0)}


def test_a_demoted_job_goes_to_the_end_of_its_new_queue():
    # 3 GPUs. x (2 GPUs) runs, a (2 GPUs) waits, c (1 GPU, later) backfills beside x. c enters Q1
    # first, then a: when both wait in Q1 the peer runs c (list order); arrival order would run a.
    jobs = [("x", 0, 2, 4), ("a", 0, 2, 30), ("c", 1, 1, 30), ("y", 9, 3, 2)]
    peer = restatement(jobs, 3, limits=(4, 1000))
    assert ours(jobs, 3, "tiresias-peer:thresholds=[4,1000]") == peer
    assert ours(jobs, 3, "tiresias-peer:thresholds=[4,1000]:queue_order=arrival") != peer


def test_at_most_one_queue_level_per_event():
    # a (8 GPUs) passes both limits (20, 24 GPU-s) between its jumps at 2 and 4: it reaches Q1 at 4
    # and Q2 only at a later event, so when c (1 GPU) reaches Q1 at 24, a is ahead of it there and
    # runs; a job taken down two levels at 4 would have run only after c, and both would be
    # preempted once.
    jobs = [("a", 0, 8, 100), ("c", 0, 1, 100)]
    peer = restatement(jobs, 8, limits=(20, 24))
    assert peer == {"a": (0, 124, 2), "c": (4, 200, 2)}
    assert ours(jobs, 8, "tiresias-peer:thresholds=[20,24]") == peer


@pytest.mark.slow
def test_held_out_20000_job_window_matches_the_restatement_and_the_peers_mean_jct():
    """The bundled 20,000-job Philly window (asrpt/data) on 512 counted GPUs. The peer's own run of
    this window (dlas-gpu, 64 x 8) has a mean JCT of 16,566.1 s (measured with its code when issue
    19 was filed; its per-job output is not shipped, so the job-for-job check is against the
    re-statement)."""
    from asrpt.traces import read_philly

    path = os.path.join(os.path.dirname(asrpt.__file__), "data", "philly-40000-20000.csv.gz")
    inst, _ = read_philly(path, cluster=Cluster((Server(512),)))
    jobs = [(j.id, int(j.arrival), j.gpus, int(j.processing_time)) for j in inst.jobs]
    assert [j.arrival for j in inst.jobs] == sorted(j.arrival for j in inst.jobs)
    mine = ours(jobs, 512, "tiresias-peer")
    assert mine == restatement(jobs, 512)
    jct = sum(end - a for (_, a, _, _), (_, end, _) in zip(jobs, (mine[j[0]] for j in jobs))) / len(jobs)
    assert round(jct, 1) == 16566.1


class _Literal(Tiresias):
    """The peer rules through the literal, O(active jobs) per event implementation."""

    def _make_peer(self, order, demotion, service, sample):
        return _PeerLAS(self.thresholds_, order == "list", demotion == "events", service == "gpu_time",
                        self.promote_knob, None)


@pytest.mark.parametrize("params", [dict(), dict(service="time"), dict(demotion="exact"),
                                    dict(demotion="exact", service="time"), dict(thresholds=(7,))])
def test_the_incremental_ranking_makes_the_literal_decisions(params):
    """Issue 18: tiresias-peer's incremental state against the literal one, decision for decision."""
    rng = np.random.default_rng(18)
    params = {"thresholds": (40, 120), "queue_order": "list", "demotion": "events", **params}
    fast = Tiresias(**params)
    for case in range(30):
        M = int(rng.choice([4, 8, 12]))
        jobs = random_jobs(rng, 40, M)
        inst = Instance(Cluster((Server(M),)), tuple(Job(j, a, g, processing_time=d) for j, a, g, d in jobs))
        a = simulate(inst, fast, placement="first_fit", check_invariants=True)
        b = simulate(inst, _Literal(**params), placement="first_fit", check_invariants=True)
        assert [(r.start, r.completion, r.preemptions, r.segments) for r in a.records] == \
               [(r.start, r.completion, r.preemptions, r.segments) for r in b.records], (params, case)
        assert a.summary["decision_passes"] == b.summary["decision_passes"]


def test_the_incremental_state_is_used_where_it_applies():
    pol = Tiresias(queue_order="list", demotion="events")
    pol.reset(Cluster.homogeneous(1, 8))
    assert isinstance(pol._peer, _PeerLASIncremental)
    pol = Tiresias(queue_order="list", demotion="events", promote_knob=2)
    pol.reset(Cluster.homogeneous(1, 8))
    assert isinstance(pol._peer, _PeerLAS)


@pytest.mark.parametrize("name", ["tiresias-peer", "dlas-gpu-gittins"])
def test_the_peer_las_runs_a_generated_dnn_instance(name):
    """A job the incremental peer LAS stops may run on to its completion before its iteration
    boundary (DNN jobs): its completion is then taken from the waiting queue (it raised KeyError,
    found by the reference engine's tests in issue 44). The runs equal the plain reference's."""
    from asrpt.engine.core import run_engine
    from asrpt.placement import make_placer
    from asrpt.policies import make_policy
    from asrpt.policies.reference import reference_policy
    from asrpt.workloads.generators import generate_one

    inst = generate_one("dnn", seed=2, n_jobs=80, load=2.0, cluster="4x8")
    live = run_engine(inst, make_policy(name), make_placer("best_fit"), check_invariants=True)
    ref = run_engine(inst, reference_policy(make_policy(name)), make_placer("best_fit"))
    assert live.records == ref.records


def test_the_peer_las_jumps_from_the_jobs_own_numbers():
    """A referee's case: j1 (2 GPUs) starts at 2.1 with threshold 2 GPU-s; its jump is
    2.1 + (2 - 0) // 2 = 3.1. From the heap key C = L - base + since = 4.1 the incremental peer
    computed 2.1 + (4.1 - 2.1) // 2 = 2.1 (4.1 - 2.1 rounds below 2) and never demoted j1."""
    from asrpt.engine.core import run_engine
    from asrpt.instance import Cluster, Instance, Job
    from asrpt.placement import make_placer
    from asrpt.policies import make_policy
    from asrpt.policies.reference import reference_policy

    inst = Instance(Cluster.from_spec("1x2"), (Job("j0", 0.1, 1, processing_time=2.3),
                                               Job("j1", 0.1, 2, processing_time=3)))
    live = run_engine(inst, make_policy("tiresias-peer:thresholds=[2,6]"), make_placer("best_fit"))
    ref = run_engine(inst, reference_policy(make_policy("tiresias-peer:thresholds=[2,6]")), make_placer("best_fit"))
    assert live.records == ref.records
    assert [(s.start, s.end) for s in live.records[1].segments] == [(2.1, 3.1), (3.4, 5.4)]
