"""Guard rails for policies under development (issue 44): a policy that always asks to be woken
ends with its last job; one that wakes itself for ever with jobs waiting and nothing running, and
one whose preemptions keep no work, get a one-line error naming the policy and the time instead
of running for ever."""

import pytest

from asrpt.engine import core
from asrpt.errors import AsrptError
from asrpt.instance import Cluster, Instance, Job
from asrpt.sim import simulate
from asrpt.state import Decision, Policy


def _instance(n=3, gpus=1, servers=1, size=5):
    return Instance(Cluster.homogeneous(servers, 1), [Job(f"j{k}", arrival=0, gpus=gpus, processing_time=size)
                                                     for k in range(n)])


def _fails_after(passes):
    """An observer that fails the test once a run has taken ``passes`` decision passes: a run the
    guard rail should have ended fails instead of running for ever."""
    seen = []

    def watch(view, decision):
        seen.append(view.now)
        if len(seen) > passes:
            raise AssertionError(f"no guard rail fired after {passes} passes (t={view.now})")
    return watch


class QuantumLAS(Policy):
    """Least attained service first, re-ranked every ``quantum`` seconds (docs/policies.md's
    time-driven re-ranking): it asks for a wake-up at every decision, also after the last job."""

    preemptive = True

    def __init__(self, *, quantum=1):
        self.quantum = quantum

    def reset(self, cluster, *, seed=None):
        self.calls = 0

    def decide(self, view):
        self.calls += 1
        order = sorted(view.active(), key=lambda j: (view.attained_service(j), j.key))
        return Decision(order, wake_at=view.now + self.quantum)


def test_a_policy_that_always_asks_for_a_wake_up_ends_with_its_last_job():
    policy = QuantumLAS(quantum=1)
    res = simulate(_instance(), policy, observer=_fails_after(1000))
    assert sorted(r.completion for r in res.records) == [13, 14, 15]
    # one pass per quantum up to the last completion at 15, none after it
    assert res.summary["decision_passes"] == 16


class WakesAndWaits(Policy):
    """Starts nothing, and asks to be woken a second later: the run could never end."""

    def decide(self, view):
        return Decision([], wake_at=view.now + 1)


def test_a_wake_up_storm_is_reported_with_the_policy_and_the_time(monkeypatch):
    monkeypatch.setattr(core, "WAKE_STORM_PASSES", 50)
    with pytest.raises(AsrptError, match=r"^wake-up storm: policy WakesAndWaits woke itself 51 times from "
                                         r"t=1 to t=51 with 3 job\(s\) waiting \(e\.g\. j0\), none running"):
        simulate(_instance(), WakesAndWaits(), observer=_fails_after(1000))


def test_waiting_for_an_arrival_is_no_storm(monkeypatch):
    """Wake-ups while an arrival is still to come are not counted (the arrival changes the state)."""
    monkeypatch.setattr(core, "WAKE_STORM_PASSES", 5)

    class WaitForTheLast(QuantumLAS):
        def decide(self, view):
            if view.now < 20:
                return Decision([], wake_at=view.now + 1)
            return super().decide(view)

    inst = Instance(Cluster.homogeneous(1, 1), [Job("a", 0, 1, processing_time=1), Job("b", 20, 1, processing_time=1)])
    res = simulate(inst, WaitForTheLast(quantum=100))
    assert {r.id: r.completion for r in res.records} == {"a": 21, "b": 22}


class LeastRecentlyStarted(Policy):
    """Rotates the jobs every second: the one that started longest ago (or never) goes first."""

    preemptive = True

    def reset(self, cluster, *, seed=None):
        self.started_at = {}

    def decide(self, view):
        for j in view.started:
            self.started_at[j.index] = view.now
        order = sorted(view.active(), key=lambda j: (self.started_at.get(j.index, -1), j.key))
        return Decision(order, wake_at=view.now + 1)


def test_a_livelock_is_reported_with_the_policy_and_the_time(monkeypatch):
    """With a 10 s restart cost, a job rotated out every second never gets past its restart."""
    monkeypatch.setattr(core, "LIVELOCK_STOPS", 40)
    with pytest.raises(AsrptError, match=r"^livelock at t=4\d: policy LeastRecentlyStarted preempted jobs 41 "
                                         r"times in a row with no job completing"):
        simulate(_instance(n=2, size=100), LeastRecentlyStarted(), preemption_cost=10, observer=_fails_after(1000))


def test_without_a_restart_cost_the_rotation_ends():
    res = simulate(_instance(n=2, size=3), LeastRecentlyStarted())
    assert sorted(r.completion for r in res.records) == [5, 6]
