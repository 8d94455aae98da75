"""The fast engine (asrpt.engine.core.run_engine) against the reference engine, the simulator's
specification (asrpt.engine.reference.run_reference): every registered policy, with fresh copies
of the same policy and placer on both sides, gives the same per-job records (start, completion,
preemptions, every segment with its servers, iteration time and restart) and the same policy
data, on abstract, exact, gang and DNN instances, with and without a preemption cost, stopping at
iteration boundaries or at once. The reference reads no chunk and no array, reads every order in
full and applies a held decision (``stands_until``) in full at every pass it covers, so an
agreement here also checks that the fast engine's shortcuts change nothing.
Summary fields that count passes are not compared."""

from __future__ import annotations

import dataclasses
import os
import random
from fractions import Fraction
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import asrpt.policies._registry  # noqa: F401  (registers every policy)
from asrpt.engine.core import run_engine
from asrpt.engine.reference import run_reference
from asrpt.errors import AsrptError
from asrpt.instance import Cluster, Instance, Job
from asrpt.placement import make_placer
from asrpt.policies import make_policy, policy_names
from asrpt.state import Decision, Policy
from asrpt.workloads.generators import generate_one

POLICIES = policy_names()
COUNT_PLACERS = ("best_fit", "first_fit", "most_free", "spread", "yarn")
MODELS = ("resnet18", "gpt2", "bert-base")


def fresh_policy(name: str) -> Policy:
    """A fresh copy of a registered policy, as :func:`asrpt.sim.simulate` makes one."""
    template = make_policy(name)
    policy = type(template)(**template.get_params())
    policy.name = template.name
    return policy


def outcome(engine, instance, name, placement, **options):
    try:
        return engine(instance, fresh_policy(name), make_placer(placement), **options)
    except AsrptError as exc:
        return exc


def assert_same(instance, name, placement="best_fit", *, errors=False, **options):
    """Run both engines; assert the same records and policy data, or, with ``errors``, the same
    error (where the fast engine's guard rails end a run that would never end, the reference's
    pass limit must end it too)."""
    fast = outcome(run_engine, instance, name, placement, **options)
    ref = outcome(run_reference, instance, name, placement, max_passes=300_000, **options)
    where = f"{name} / {placement} / {options}"
    assert errors or not isinstance(fast, Exception) and not isinstance(ref, Exception), (
        f"{where}: fast {fast!r}, reference {ref!r}")
    if isinstance(fast, AsrptError) and str(fast).startswith(("wake-up storm", "livelock")):
        assert isinstance(ref, AsrptError), f"{where}: fast {fast!r}, reference {ref!r}"
        return fast
    if isinstance(fast, Exception) or isinstance(ref, Exception):
        assert (type(fast), str(fast)) == (type(ref), str(ref)), f"{where}: fast {fast!r}, reference {ref!r}"
        return fast
    for a, b in zip(fast.records, ref.records):
        assert a == b, f"{where}: first differing job {a.id}:\n  fast      {a}\n  reference {b}"
    assert len(fast.records) == len(ref.records)
    assert fast.policy_data == ref.policy_data, f"{where}: policy data differ"
    return fast


# -- instances -----------------------------------------------------------------------------------------
def _gang_instance(seed: int, dnn: bool, n: int = 14) -> Instance:
    """Jobs made of gang instances (each inside one server) and plain ones on a cluster of two
    switches (2x2x4: yarn never spans a switch, so every job fits in one), busy enough to preempt
    (abstract sizes in hundreds of seconds, on the scale of the policies' thresholds and rounds)."""
    rng = random.Random(seed)
    cluster = Cluster.from_spec("2x2x4", gpu_type="A100")
    jobs, t = [], 0
    for i in range(n):
        t += rng.choice([0, 0, 1, 3]) * (1 if dnn else 300)
        if rng.random() < 0.5:
            per = rng.choice([1, 2, 4])
            count = rng.randint(1, 8 // per)
            gpus, kw = per * count, {"instances": count}
        else:
            gpus, kw = rng.randint(1, 8), {}
        if dnn:
            jobs.append(Job(f"j{i}", t, gpus, model=rng.choice(MODELS), iterations=rng.randint(1, 400),
                            predicted_iterations=rng.choice([None, 50, 300]), **kw))
        else:
            jobs.append(Job(f"j{i}", t, gpus, processing_time=rng.randint(1, 12) * 300,
                            predicted_processing_time=rng.choice([None, 600, 2700]), **kw))
    return Instance(cluster, tuple(jobs))


def _exact_instance(seed: int, n: int = 14) -> Instance:
    """Abstract jobs with Fraction arrivals, sizes and predictions (an exact run), on the scale
    of the policies' thresholds and rounds."""
    rng = random.Random(seed)
    jobs, t = [], Fraction(0)
    for i in range(n):
        t += Fraction(rng.randint(0, 6000), rng.choice([1, 2, 3]))
        p = Fraction(rng.randint(1, 24000), rng.choice([1, 2, 3]))
        jobs.append(Job(f"j{i}", t, rng.choice([1, 1, 2, 3, 4, 6, 8]), processing_time=p,
                        predicted_processing_time=p * Fraction(rng.randint(1, 9), 3)))
    return Instance(Cluster.from_spec("2x4"), tuple(jobs))


@lru_cache(maxsize=None)
def instance(kind: str) -> Instance:
    if kind == "heavy_tailed":   # (sizes and times in thousands of seconds)
        inst = generate_one("heavy_tailed", seed=3, n_jobs=30, load=1.5, cluster="2x4", integer=False, mu=3.0)
        return Instance(inst.cluster, tuple(
            dataclasses.replace(j, arrival=j.arrival * 1000, processing_time=j.processing_time * 1000,
                                predicted_processing_time=j.predicted_processing_time * 1000) for j in inst.jobs))
    if kind == "uniform":
        return generate_one("uniform", seed=1, n_jobs=20, cluster="2x4", max_gap=2, mu=2.0)
    if kind == "exact":
        return _exact_instance(7)
    if kind == "gang":
        return _gang_instance(5, dnn=False)
    if kind == "gang_dnn":
        return _gang_instance(11, dnn=True)
    if kind == "recurring":
        return generate_one("recurring", seed=0, n_jobs=25, load=1.5, cluster="2x8")
    if kind == "dnn":
        return generate_one("dnn", seed=1, n_jobs=12, load=1.5, cluster="2x8")
    raise KeyError(kind)


#: (instance kind, placement, run options): what every policy runs on both engines
CASES = (
    [("heavy_tailed", p, {}) for p in COUNT_PLACERS]
    + [("uniform", "best_fit", {"preemption_cost": 1})]
    + [("exact", "best_fit", {}), ("exact", "spread", {"preemption_cost": Fraction(1, 3)})]
    + [("gang", "yarn", {}), ("gang", "most_free", {"preemption_cost": 2})]
    + [("gang_dnn", "best_fit", {}), ("gang_dnn", "spread", {"preemption_point": "immediate"})]
    + [("recurring", "best_fit", {}), ("recurring", "first_fit", {"preemption_cost": 30}),
       ("recurring", "spread", {"preemption_point": "immediate"}), ("recurring", "yarn", {})]
    + [("dnn", "greedy", {}), ("dnn", "most_free", {"preemption_point": "immediate", "preemption_cost": 5})]
)


def test_every_registered_policy_is_covered():
    assert len(POLICIES) >= 40 and {"fifo", "a-srpt", "tiresias", "gavel", "themis", "srsf"} <= set(POLICIES)


@pytest.mark.parametrize("name", POLICIES)
def test_the_fast_engine_gives_the_reference_records(name):
    for kind, placement, options in CASES:
        assert_same(instance(kind), name, placement, **options)


def test_the_cases_preempt_and_place_gangs():
    """The cases exercise what they are meant to: preemptions in every case (at boundaries, at
    once, with a restart cost; A-SRPT without its hysteresis, which preempts more), gang
    instances and a graph placer."""
    for kind, placement, options in CASES:
        res = assert_same(instance(kind), "a-srpt:epsilon=0", placement, **options)
        assert res.summary["preemptions"] > 0, (kind, placement, options)
    assert any(j.instances and j.instances > 1 for j in instance("gang_dnn").jobs)
    assert any(j.instances and j.instances > 1 for j in instance("gang").jobs)
    assert any(placement == "greedy" for _, placement, _ in CASES)
    res = assert_same(instance("recurring"), "gavel", "first_fit", preemption_cost=30)
    assert any(s.restart for r in res.records for s in r.segments)


# -- exactness ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["a-srpt", "srsf", "tiresias", "fifo", "gavel"])
def test_exact_runs_stay_exact(name):
    fast = assert_same(instance("exact"), name, "best_fit", preemption_cost=Fraction(1, 2))
    ref = run_reference(instance("exact"), fresh_policy(name), make_placer("best_fit"), preemption_cost=Fraction(1, 2))
    times = [[t for r in res.records for s in r.segments for t in (s.start, s.end, s.restart)] for res in (fast, ref)]
    assert times[1] and all(isinstance(t, (int, Fraction)) for t in times[1]), name
    assert list(map(type, times[0])) == list(map(type, times[1])), name


# -- random instances ---------------------------------------------------------------------------------
@st.composite
def mixed_instances(draw, max_jobs: int = 10) -> Instance:
    """Small clusters (some with switches), abstract and DNN jobs, some made of gang instances,
    exact times for the abstract ones."""
    per_server = draw(st.sampled_from([1, 2, 4, 8]))
    switches = draw(st.sampled_from([None, 2]))
    n_servers = draw(st.integers(1, 3)) * (switches or 1)
    spec = f"{switches}x{n_servers // switches}x{per_server}" if switches else f"{n_servers}x{per_server}"
    cluster = Cluster.from_spec(spec, gpu_type="A100")
    most = cluster.total_gpus // (switches or 1)     # (yarn never spans a switch)
    jobs, t = [], 0
    for i in range(draw(st.integers(1, max_jobs))):
        t += draw(st.sampled_from([0, 0, 1, 2, 5]))
        kw = {}
        if draw(st.booleans()):
            per = draw(st.sampled_from([g for g in (1, 2, 4) if g <= per_server]))
            kw["instances"] = draw(st.integers(1, max(1, most // per)))
            gpus = per * kw["instances"]
        else:
            gpus = draw(st.integers(1, most))
        if draw(st.booleans()):
            jobs.append(Job(f"j{i}", t, gpus, model=draw(st.sampled_from(MODELS)),
                            iterations=draw(st.integers(1, 300)),
                            predicted_iterations=draw(st.sampled_from([None, 10, 1000])), **kw))
        else:
            p = Fraction(draw(st.integers(1, 10)), draw(st.sampled_from([1, 2, 3])))
            jobs.append(Job(f"j{i}", t, gpus, processing_time=p,
                            predicted_processing_time=draw(st.sampled_from([None, 1, Fraction(7, 2)])), **kw))
    return Instance(cluster, tuple(jobs))


OPTIONS = st.sampled_from([{}, {"preemption_cost": 2}, {"preemption_point": "immediate"},
                           {"preemption_point": "immediate", "preemption_cost": Fraction(1, 2)}])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_instances(), st.sampled_from(POLICIES), st.sampled_from(COUNT_PLACERS), OPTIONS)
def test_random_instances_agree(inst, name, placement, options):
    assert_same(inst, name, placement, errors=True, **options)


# -- errors, observers, limits ------------------------------------------------------------------------
class _Lists(Policy):
    """Lists what ``pick(view)`` gives (a test policy)."""

    name = "lists"
    parameter_constraints = {"pick": "no_validation", "preemptive": "no_validation"}

    def __init__(self, *, pick=None, preemptive=False):
        self.pick, self.preemptive = pick, preemptive

    def decide(self, view):
        return Decision(self.pick(view))


def _two_jobs():
    return Instance(Cluster.from_spec("1x4"), (Job("a", 0, 2, processing_time=2), Job("b", 1, 2, processing_time=2)))


@pytest.mark.parametrize("preemptive, pick, message", [
    (False, lambda v: list(v.running) + list(v.waiting), "non-preemptive policy lists listed job a, which is not waiting"),
    (True, lambda v: list(v.waiting) * 2, "policy lists listed a job twice"),
    (True, lambda v: list(v.running) + list(v.waiting) + [c.job for c in v.completed],
     "policy lists listed job a, which is not active"),
    (False, lambda v: [], "simulation stalled at t=1: policy lists left 2 job(s) waiting (e.g. a)"),
    (True, lambda v: [], "simulation stalled at t=1: policy lists left 2 job(s) waiting (e.g. a)"),
])
def test_the_same_errors(preemptive, pick, message):
    """(The reference checks a whole order up front; the fast engine checks the jobs its scan
    reaches, so only errors both reach are compared: a non-preemptive order listing a waiting job
    twice is an error to the reference only, where the fast engine stops its scan before.)"""
    for engine in (run_engine, run_reference):
        with pytest.raises(AsrptError) as info:
            engine(_two_jobs(), _Lists(pick=pick, preemptive=preemptive), make_placer("best_fit"))
        assert str(info.value).startswith(message), (engine.__name__, str(info.value))


def test_observer_sees_every_pass_as_the_fast_engine_shows_it():
    seen = {run_engine: [], run_reference: []}
    for engine, log in seen.items():
        engine(_two_jobs(), fresh_policy("fifo"), make_placer("best_fit"),
               observer=lambda v, d, log=log: log.append((v.now, [j.id for j in d.order], len(v.running))))
    assert seen[run_engine] == seen[run_reference] and seen[run_reference]


def test_max_passes_ends_a_policy_that_wakes_for_ever():
    class Sleeper(_Lists):
        def decide(self, view):
            return Decision([], wake_at=view.now + 1)

    with pytest.raises(AsrptError, match="more than 50 passes"):
        run_reference(_two_jobs(), Sleeper(), make_placer("best_fit"), max_passes=50)


class _FixedRank(Policy):
    """Preemptive: every active job, by a fixed rank of ids."""

    name = "fixed-rank"
    preemptive = True
    parameter_constraints = {"rank": "no_validation"}

    def __init__(self, *, rank=()):
        self.rank = rank

    def decide(self, view):
        return Decision(sorted(view.active(), key=lambda j: self.rank.index(j.id)))


def _snapped_stop_cases():
    """Two instances where a job left out is found on an iteration boundary (its work at
    most 1e-9 above one) and given back its own GPUs in the same pass."""
    # a-srpt wakes at j3's completion as it computes it, one ulp before the engine's: j3 is left
    # out for j1 with 269.0000000x of its 269 iterations done, stops at once, and the idle fill
    # (j1, one 4-GPU instance, cannot be placed) gives it back its servers
    natural = Instance(Cluster.homogeneous(3, 4, "A100"), (
        Job("j0", 0, 4, model="gpt2", iterations=9), Job("j1", 0, 4, processing_time=Fraction(1), instances=1),
        Job("j3", 0, 5, model="resnet18", iterations=269), Job("j4", 0, 1, processing_time=Fraction(1)),
        Job("j5", 0, 1, processing_time=Fraction(1)),
        Job("j6", 0, 1, processing_time=Fraction(3), predicted_processing_time=1)))
    # X (one 2-GPU instance) is left out for Y (two 2-GPU instances) 1e-10 iterations after its
    # 100th; spread leaves one 2-GPU server, Y cannot be placed, and the fill gives X its server
    tau = 0.03541804656588914       # X's iteration time on one server, as the placer gives it
    made = Instance(Cluster.homogeneous(3, 2, "A100"), (
        Job("X", 0, 2, model="resnet18", iterations=1000, instances=1),
        Job("R1", 0, 1, model="resnet18", iterations=100000), Job("R2", 0, 1, model="resnet18", iterations=100000),
        Job("Y", 100 * tau * (1 + 1e-12), 4, model="resnet18", iterations=10, instances=2)))
    return [pytest.param(natural, lambda: fresh_policy("a-srpt"), "spread", "j3", {}, id="a-srpt"),
            pytest.param(made, lambda: _FixedRank(rank=("R1", "R2", "Y", "X")), "spread", "X",
                         {"preemption_cost": 1}, id="fixed-rank")]


@pytest.mark.parametrize("inst, policy, placement, job, options", _snapped_stop_cases())
def test_a_job_stopped_on_its_boundary_and_given_back_its_gpus_never_stopped(inst, policy, placement, job, options):
    fast, ref = (engine(inst, policy(), make_placer(placement), **options) for engine in (run_engine, run_reference))
    assert ref.record(job).preemptions == 0 and len(ref.record(job).segments) == 1
    assert fast.record(job) == ref.record(job)


def test_the_clock_of_a_wake_up_does_not_depend_on_a_cancelled_event():
    """A cancelled exact completion at 4 must not set the clock of a float wake-up at 4.0 (the
    fast engine's clock took the first heap entry's time, a cancelled one included; issue 44)."""
    inst = Instance(Cluster.homogeneous(3, 2, "A100"), (
        Job("j0", 0, 1, model="resnet18", iterations=22), Job("j1", 0, 6, processing_time=Fraction(1)),
        Job("j5", 1, 1, processing_time=Fraction(3), predicted_processing_time=1)))
    fast, ref = (engine(inst, fresh_policy("a-srpt-fluid"), make_placer("best_fit"))
                 for engine in (run_engine, run_reference))
    assert fast.records == ref.records
    assert fast.policy_data == ref.policy_data


# -- the bigger sweep (-m slow) -------------------------------------------------------------------------
PHILLY = os.path.join(os.environ.get("ASRPT_SHARED", "$ASRPT_SHARED"), "traces", "philly-pollux-processed",
                      "philly.csv")


@lru_cache(maxsize=None)
def _philly_slice():
    from asrpt.traces import read_philly

    inst, _ = read_philly(PHILLY, start=1000, limit=300, cluster=Cluster.homogeneous(4, 8, "A100"), dnn=True)
    return inst


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isfile(PHILLY), reason="the Philly trace is not present (set ASRPT_SHARED)")
@pytest.mark.parametrize("name", POLICIES)
def test_philly_slice_agrees(name):
    """300 real Philly jobs as DNN jobs on 4x8 GPUs, per policy, with several placers and options."""
    inst = _philly_slice()
    for placement, options in [("best_fit", {}), ("spread", {"preemption_cost": 30}),
                               ("yarn", {"preemption_point": "immediate"}), ("greedy", {})]:
        assert_same(inst, name, placement, **options)


@pytest.mark.slow
@pytest.mark.parametrize("name", POLICIES)
def test_bigger_generated_sweep(name):
    for seed in range(2):
        for family, params in [("heavy_tailed", {"load": 2.0, "integer": False, "cluster": "4x8"}),
                               ("recurring", {"load": 2.0, "cluster": "4x8"}),
                               ("dnn", {"load": 2.0, "cluster": "4x8"})]:
            inst = generate_one(family, seed=seed, n_jobs=80, **params)
            for placement, options in [("best_fit", {}), ("most_free", {"preemption_cost": 0.5}),
                                       ("spread", {"preemption_point": "immediate"})]:
                assert_same(inst, name, placement, **options)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_instances(max_jobs=20), st.sampled_from(POLICIES), st.sampled_from(COUNT_PLACERS), OPTIONS)
def test_many_random_instances_agree(inst, name, placement, options):
    assert_same(inst, name, placement, errors=True, **options)
