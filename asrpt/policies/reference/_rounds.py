"""What the plain round-based references (Gavel, Themis) share: a round's decision.

A policy here has ``round_end_`` (None before the first round), ``_new_round(view, jobs)``
(which keys every active job for the round and sets ``round_end_``) and ``_key(job)`` (a job's
key at the current round, or the key of a job that arrived since).
"""

from __future__ import annotations

from ...state import Decision


def round_decision(policy, view) -> Decision:
    """At a new round every active job by its new key; between rounds the leases hold: the running
    jobs that are not stopping first, then the others, each group by the round's keys. The
    policy asks to be woken at the round's end while the active jobs ask for more GPUs than the
    cluster has."""
    jobs = list(view.active())      # running, then waiting
    if not jobs:
        return Decision(())
    if policy.round_end_ is None or view.now >= policy.round_end_:
        policy._new_round(view, jobs)
        order = sorted(jobs, key=policy._key)
    else:
        held = [j for j in jobs if view.is_running(j) and not view.is_stopping(j)]
        rest = [j for j in jobs if not view.is_running(j) or view.is_stopping(j)]
        order = sorted(held, key=policy._key) + sorted(rest, key=policy._key)
    contended = sum(j.gpus for j in jobs) > view.total_gpus
    return Decision(order, backfill=True, wake_at=policy.round_end_ if contended else None)
