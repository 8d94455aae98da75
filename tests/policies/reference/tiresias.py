"""The Tiresias 2D-LAS policy as it was before its incremental ranking (issue 18), kept unchanged
as the reference that tests/policies/test_tiresias_incremental.py compares the new one against,
decision by decision. Not registered; not part of the package. See asrpt/policies/tiresias.py.
"""

from __future__ import annotations

from asrpt.policies.base import Decision
from asrpt.policies.gittins import TiresiasGittins
from asrpt.policies.tiresias import Tiresias, _reached
from asrpt.sizes import exact_div, exact_mul

__all__ = ["ReferenceTiresias", "ReferenceTiresiasGittins"]


class ReferenceTiresias(Tiresias):
    """Tiresias with the previous default (non-peer) decide and next_wake: every active job
    re-keyed and sorted at every decision. The peer rules are the package's own (unchanged)."""

    def decide(self, view):
        if self._peer is not None:
            return Decision(self._peer.decide(view), backfill=True)
        self._prepare(view)
        now = view.now
        for c in view.completed:
            i = c.job.index
            self._base.pop(i, None)
            self._run_since.pop(i, None)
        knob = self.promote_knob
        base, run_since = self._base, self._run_since
        keys = {}
        state = {}
        for job in view.active():
            i = job.index
            executed = view.executed_time(job)
            since = executed - base.get(i, 0)
            service = exact_mul(job.gpus, since)
            q = self._queue(service)
            running = view.is_running(job)
            pending = None
            if knob and since > 0:
                rs = run_since.get(i)
                if rs is None:  # it first ran after its last reset at the previous decision
                    rs = run_since[i] = self._prev_now
                if q > 0:  # waiting time since it first ran after its last reset
                    pending = (now - rs) - since
                    if not running and _reached(pending, knob * since):
                        base[i] = executed
                        run_since.pop(i, None)
                        self.promotions_ += 1
                        since, service, q, pending = 0, 0, 0, None
            state[i] = (q, service, since, pending)
            keys[i] = (q,) + self._within_queue_key(view, job, service,
                                                    running and not view.is_stopping(job))
        self._prev_now = now
        self._state = state
        order = sorted(view.active(), key=lambda j: keys[j.index])
        return Decision(order, backfill=True)

    def next_wake(self, view):
        """The next queue jump after the decision was applied: the first threshold crossing of a
        running job (its service grows at g_j GPU-s per second from now, restarts included), or
        the first promotion of a job left waiting in a lower queue (its waiting time grows at 1
        per second). None if there is none. With the peer's rules: its next jump."""
        now = view.now
        if self._peer is not None:
            jump = self._peer.jump
            return jump if jump is not None and jump > now else None
        th = self.thresholds_
        state = self._state
        wake = None
        for job in view.running:
            q, service = state[job.index][:2]
            if q < len(th) and not view.is_stopping(job):
                t = now + exact_div(th[q] - service, job.gpus)
                if t > now and (wake is None or t < wake):
                    wake = t
        if self.promote_knob:
            knob = self.promote_knob
            for job in view.waiting:
                _, _, since, pending = state[job.index]
                if pending is not None:
                    t = now + (knob * since - pending)
                    if t > now and (wake is None or t < wake):
                        wake = t
        return wake



class ReferenceTiresiasGittins(TiresiasGittins):
    """TiresiasGittins (its table, quantum and within-queue key) with the previous decide."""

    decide = ReferenceTiresias.decide
    next_wake = ReferenceTiresias.next_wake
