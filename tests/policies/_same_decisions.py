"""The one comparison of an incremental policy with its reference copy (tests/policies/reference/):
the same decisions, completions, segments and policy data on one instance (issue 18)."""

from asrpt.sim import simulate


def same_decisions(new, old, instance, params, seed=0, **kwargs):
    """Run ``new(**params)`` and ``old(**params)`` (recording classes whose ``runs`` collect each
    run's decision log) on ``instance``; assert everything observable is equal; return the log."""
    a = simulate(instance, new(**params), seed=seed, **kwargs)
    b = simulate(instance, old(**params), seed=seed, **kwargs)
    log = new.runs.pop()
    assert log == old.runs.pop()
    assert a.completion_times == b.completion_times
    assert [r.segments for r in a.records] == [r.segments for r in b.records]
    assert a.policy_data == b.policy_data
    return log
