"""Common checks every registered policy must pass (scikit-learn's common-test idea).

Adding a policy with ``register_policy`` enrols it here. Exemptions live in EXEMPT with a reason.
"""

import hashlib
import pickle

import pytest
from hypothesis import given, settings

from asrpt.policies.base import POLICIES, make_policy, policy_names
from asrpt.sim import simulate
from asrpt.sim import engine as engine_module
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


def _state_digest(engine) -> str:
    parts = [engine.now, tuple(engine.free), engine.free_total, tuple(engine.waiting), tuple(engine.running)]
    for st in engine.states:
        parts.append((st.done, st.status, st.servers, st.version, st.preemptions, len(st.segments)))
    return hashlib.sha256(pickle.dumps(parts)).hexdigest()


@pytest.mark.parametrize("name", [n for n in NAMES if n not in EXEMPT])
@settings(max_examples=15)
@given(instance=instances(max_jobs=6, predictions=True))
def test_runs_satisfy_invariants_and_decide_mutates_nothing(name, instance):
    original = engine_module._Engine._decide

    def checked(self):
        policy = self.policy
        real = policy.decide

        def decide(view):
            before = _state_digest(self)
            decision = real(view)
            order = list(decision.order)
            assert _state_digest(self) == before, f"{name}.decide changed the engine state"
            ids = [j.index for j in order]
            assert len(ids) == len(set(ids)), f"{name} listed a job twice"
            active = set(self.waiting) | set(self.running)
            assert set(ids) <= active, f"{name} listed a job that is not active"
            return type(decision)(order, decision.backfill, decision.wake_at)

        policy.decide = decide
        try:
            return original(self)
        finally:
            del policy.decide

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine_module._Engine, "_decide", checked)
        res = simulate(instance, name, check_invariants=True)
    assert res.summary["finished"] == instance.n_jobs


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=8)
@given(instance=instances(max_jobs=6, predictions=True))
def test_same_inputs_same_records(name, instance):
    assert simulate(instance, name, seed=1).records == simulate(instance, name, seed=1).records
