"""The one comparison of an incremental policy with its reference copy (asrpt/policies/reference/):
the same decisions, completions, segments and policy data on one instance (issue 18); and
``recording``, the policy subclass whose decision and wake-up log that comparison reads."""

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


def recording(cls):
    """``cls`` logging each run's decisions and wake-ups (``runs``); the order is read once into a
    list (A-SRPT's is a one-shot iterator)."""
    class Recording(cls):
        runs: list = []

        def reset(self, cluster, *, seed=None):
            super().reset(cluster, seed=seed)
            self.log = []
            type(self).runs.append(self.log)

        def decide(self, view):
            decision = super().decide(view)
            order = list(decision.order)
            self.log.append(("decide", view.now, tuple(j.index for j in order)))
            return type(decision)(order, decision.backfill, decision.wake_at)

        def next_wake(self, view):
            wake = super().next_wake(view)
            self.log.append(("wake", view.now, wake))
            return wake

    return Recording
