"""Common checks every registered policy must pass (scikit-learn's common-test idea).

Adding a policy with ``register_policy`` enrols it here. Exemptions live in EXEMPT with a reason.
"""

import hashlib
import pickle

import pytest
from hypothesis import given, settings

from asrpt.policies import POLICIES, make_policy, policy_names
from asrpt.sim import simulate
from asrpt.sim import Observer
from asrpt.testing.strategies import instances

NAMES = policy_names()
EXEMPT: dict[str, str] = {}


def test_registry_is_populated():
    assert {"a-srpt", "fifo", "fifo-strict", "sjf"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_params_round_trip_and_constructor_only_stores(name):
    policy = make_policy(name)
    clone = type(policy)(**policy.get_params())
    assert clone == policy
    assert not [a for a in vars(policy) if a.endswith("_") and not a.startswith("_")], \
        "learned state (trailing underscore) must be built in reset(), not in __init__"
    cls, preset = POLICIES[name]
    for key, value in preset.items():
        assert getattr(policy, key) == value


def _state_digest(view) -> str:
    """Everything the view shows of the run's state (the engine's free GPUs, active jobs and,
    per active job, status, work done, placement, preemptions, start and time held)."""
    parts = [view.now, tuple(view.free_per_server), view.free_gpus, view.n_completed,
             tuple(j.index for j in view.waiting), tuple(j.index for j in view.running)]
    for j in view.active():
        parts.append((j.index, view.status(j), view.attained_work(j), view.allocation(j),
                      view.preemptions(j), view.start_time(j), view.executed_time(j)))
    return hashlib.sha256(pickle.dumps(parts)).hexdigest()


@pytest.mark.parametrize("name", [n for n in NAMES if n not in EXEMPT])
@settings(max_examples=15)
@given(instance=instances(max_jobs=6, predictions=True))
def test_runs_satisfy_invariants_and_decide_mutates_nothing(name, instance):
    class Checker(Observer):
        def before_decide(self, view):
            self.before = _state_digest(view)

        def after_decide(self, view, decision):
            order = list(decision.order)
            assert _state_digest(view) == self.before, f"{name}.decide changed the engine state"
            ids = [j.index for j in order]
            assert len(ids) == len(set(ids)), f"{name} listed a job twice"
            active = {j.index for j in view.waiting} | {j.index for j in view.running}
            assert set(ids) <= active, f"{name} listed a job that is not active"

    res = simulate(instance, name, check_invariants=True, observer=Checker())
    assert res.summary["finished"] == instance.n_jobs


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=8)
@given(instance=instances(max_jobs=6, predictions=True))
def test_same_inputs_same_records(name, instance):
    assert simulate(instance, name, seed=1).records == simulate(instance, name, seed=1).records
