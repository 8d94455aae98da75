"""Plain A-SRPT: a virtual machine guides the order (the reference copy of
:mod:`asrpt.policies.asrpt`).

**State.** The predictions (the tracker: every job's work ``N^_j`` is predicted at its arrival)
and the virtual machine, advanced to ``now`` at every decision, to which every job is added at its
arrival with its virtual size (``virtual``):

- ``"envelope"`` (default) and ``"fluid"``: one machine running SRPT
  (:class:`~asrpt.single.srpt.SRPTMachine`) on ``p~_j = g_j N^_j tau*_j / M``; the envelope's
  virtual completion is ``C~_j = max(C^f_j, a_j + N^_j tau*_j)``, the fluid one's ``C~_j =
  C^f_j``;
- ``"gang"``: gang-capped SRPT on ``M`` GPUs (:class:`~asrpt.single.gang.GangSRPTMachine`) on
  ``N^_j tau*_j`` with ``g_j`` GPUs.

A new prediction resizes the job in the machine (never below what it attained there).

**At every decision**, in this order: the machine advances to now; the newly arrived jobs are
predicted and added; waiting jobs the tracker re-predicted (a sibling completed) are resized;
with ``adaptive`` on, every active job (running ones first, in the view's order, then the
waiting ones) whose work done has reached its prediction gets a new one (``"doubling"`` or
``"repredict"``: :meth:`~asrpt.predict.base.PredictionTracker.overrun`), resized. Then the order
(``order``):

- ``"guarded"``: a job the machine has finished is **overdue** once ``now`` reaches its deadline
  ``d_j = a_j + kappa (C~_j - a_j)`` (never before ``C~_j``). The overdue jobs, by ``(C~_j,
  id)``, are admitted first while they fit in ``floor(share M)`` GPUs (the first always); then
  every other active job by predicted remaining GPU-time ``max(N^_j - n_j, 0) tau*_j g_j``, then
  arrival, then id. ``overdue_at`` records the first decision at which each job was overdue:
  in the decision's order, or at once, at the start of the decision (the machine advanced, before
  the decision's completions and new predictions), for a job the machine finishes at that very
  instant with its deadline there too (``kappa = 1``, or a zero length), even if it completes at
  this decision or a new prediction then moves its deadline;
- ``"virtual"``: the jobs the machine has finished by ``(C~_j, id)``, then the unfinished ones by
  ``(virtual remaining, id)``;
- ``"actual"``: predicted remaining GPU-time only.

Without ``preemption`` the order lists only the waiting jobs.

**Wake-ups** (after the decision is applied): with ``adaptive`` on, when the first running job
(not stopping) reaches its prediction (counted from the end of its restart after a preemption,
:meth:`~asrpt.state.ClusterView.resume_time`); with the guarded order, at the earliest deadline of a job
the machine has finished that is not overdue yet, and at the deadlines of the jobs the machine
will finish if nothing changes: the fluid machine wakes the policy at its next completion; the
gang and envelope machines are read ahead (:meth:`~asrpt.single.srpt.SRPTMachine.upcoming_completions`)
up to ``now + 2 (wake - now) / kappa`` (for ``kappa > 2``; else up to the wake-up), at most 16
completions, the policy waking at the 17th at the latest; a deadline that is not after now (a
rounding) wakes it just after now.

Examples
--------
The worked example of the reference model (``a-srpt`` and its fluid machine):

>>> from asrpt.instance import load_instance
>>> from asrpt.sim import simulate
>>> inst = load_instance("instances/worked-example.json")
>>> res = simulate(inst, ReferenceASRPT())
>>> res.completion_times, res.policy_data["virtual_completion_times"]
({'A': 5, 'B': 1, 'C': 3}, {'A': 4, 'B': 1, 'C': 3})
>>> simulate(inst, ReferenceASRPT(virtual="fluid", order="virtual")).policy_data["virtual_completion_times"]
{'A': Fraction(7, 2), 'B': 1, 'C': Fraction(3, 2)}
"""

from __future__ import annotations

import math

from ...errors import InvalidParameterError
from ...instance import id_key
from ...predict.base import DEFAULT_ADAPTIVE
from ...single.gang import GangSRPTMachine
from ...single.srpt import SRPTMachine
from ...sizes import exact_div, exact_mul, integral
from ...state import Decision, VirtualRun
from ..asrpt import ASRPT
from ..base import PredictorPolicy

__all__ = ["ReferenceASRPT"]

_READ_AHEAD = 16   # virtual completions read ahead for their deadlines
_MARGIN = 1e-9     # the read goes up to the wake-up where it is this close to now (relative)


def _deadline(arrival, completion, kappa):
    """``a + kappa (C~ - a)``, never before ``C~`` (a float rounding could put it there)."""
    d = arrival + exact_mul(kappa, completion - arrival)
    return d if d >= completion else completion


def _earlier(wake, t, now):
    """``t`` where it is after ``now`` and before ``wake`` (None: no wake-up yet), else ``wake``."""
    return t if t > now and (wake is None or t < wake) else wake


class ReferenceASRPT(PredictorPolicy):
    """Adaptive SRPT guided by a virtual machine, recomputed at every decision (module docstring)."""

    name = "a-srpt"
    parameter_constraints = ASRPT.parameter_constraints

    def __init__(self, *, predictor="instance", virtual: str = "envelope", order: str = "guarded",
                 kappa: float = 16.0, share: float = 0.5, backfill: bool = True,
                 preemption: bool = True, adaptive: str = DEFAULT_ADAPTIVE, epsilon: float = 0.0,
                 placement: str | None = None):
        self.predictor = predictor
        self.virtual = virtual
        self.order = order
        self.kappa = kappa
        self.share = share
        self.backfill = backfill
        self.preemption = preemption
        self.adaptive = adaptive
        self.epsilon = epsilon
        self.placement = placement

    def preferred_placement(self) -> str | None:
        return self.placement

    @property
    def preemptive(self) -> bool:  # type: ignore[override]
        return self.preemption

    @property
    def work_conserving(self) -> bool:  # type: ignore[override]
        return self.backfill and self.preemption

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        if self.virtual == "envelope" and self.order == "virtual":
            raise InvalidParameterError(
                "ASRPT: virtual='envelope' needs order 'guarded' or 'actual', not 'virtual' "
                "(the virtual order ranks unfinished jobs, which the envelope does not define; "
                "pass virtual='gang' or 'fluid')")
        self.total_gpus_ = cluster.total_gpus
        self.share_gpus_ = max(1, math.floor(self.share * self.total_gpus_))
        self._kappa = integral(self.kappa)
        self._views: dict = {}          # index -> view of every job seen
        tie = lambda i: self._views[i].key   # noqa: E731  (the machine breaks ties by job id)
        if self.virtual == "gang":
            self.machine_ = GangSRPTMachine(self.total_gpus_, tie_key=tie)
        else:
            self.machine_ = SRPTMachine(tie_key=tie)
        self.virtual_sizes_: dict = {}
        self.overdue_at_: dict = {}
        self.adaptive_updates_ = 0

    # -- the virtual machine ------------------------------------------------------------------------
    def _machine_size(self, job, work):
        """The job's size in the machine for a prediction ``work``."""
        size = exact_mul(work, job.tau_star)
        return size if self.virtual == "gang" else exact_div(exact_mul(job.gpus, size), self.total_gpus_)

    def _note_size(self, job, work) -> None:
        """The recorded virtual size: the envelope's ``P^_j``, else the machine's size."""
        self.virtual_sizes_[job.id] = (exact_mul(work, job.tau_star) if self.virtual == "envelope"
                                       else self.machine_.size(job.index))

    def _completion(self, job):
        """C~_j, or None while the machine has not finished the job."""
        c = self.machine_.completion_time(job.index)
        if c is None or self.virtual != "envelope":
            return c
        return max(c, job.arrival + exact_mul(self.tracker_.latest_by_id[job.id], job.tau_star))

    def _add(self, job, now) -> None:
        self._views[job.index] = job
        work = self.tracker_.predicted[job.index]
        size = self._machine_size(job, work)
        if self.virtual == "gang":
            self.machine_.add(job.index, now, size, job.gpus)
        else:
            self.machine_.add(job.index, now, size)
        self._note_size(job, work)

    def _resize(self, job, work, adaptive: bool = True) -> None:
        self.tracker_.set(job, work)
        self.adaptive_updates_ += adaptive
        m = self.machine_
        m.resize(job.index, max(self._machine_size(job, work), m.attained(job.index)))
        self._note_size(job, work)

    # -- the decision ---------------------------------------------------------------------------------
    def _rank_key(self, view, job) -> tuple:
        left = self.tracker_.predicted[job.index] - view.attained_work(job)
        if left < 0:
            left = 0
        size = left * job.tau_star * job.gpus
        if self.epsilon and view.is_running(job) and not view.is_stopping(job):
            size = size * (1 - self.epsilon)     # hysteresis
        return (size, job.arrival, job.key, job.index)

    def _overdue(self, view, jobs) -> list:
        """The overdue jobs among ``jobs`` now, by (C~, id)."""
        now, late = view.now, []
        for job in jobs:
            c = self._completion(job)
            if c is not None and _deadline(job.arrival, c, self._kappa) <= now:
                late.append((c, job.key, job.index, job))
        return [entry[-1] for entry in sorted(late)]

    def decide(self, view):
        now, tracker, m = view.now, self.tracker_, self.machine_
        m.advance(now)
        if self.order == "guarded":      # finished by the machine now, deadline now: overdue at once
            known = [c.job for c in view.completed] + [j for j in view.active() if j.index in self._views]
            for job in known:
                if (m.completion_time(job.index) == now
                        and _deadline(job.arrival, self._completion(job), self._kappa) <= now):
                    self.overdue_at_.setdefault(job.id, now)
        for job in tracker.update(view):
            if job.index in self._views:      # (a new prediction for a known job)
                self._resize(job, tracker.predicted[job.index])
            else:
                self._add(job, now)
        active = list(view.active())
        indices = {job.index for job in active}
        for job in tracker.revised:           # waiting siblings re-predicted on a completion
            if job.index in indices:
                self._resize(job, tracker.predicted[job.index], adaptive=False)
        if self.adaptive != "off":
            for job in active:                # running jobs first, then waiting ones
                if tracker.reached(view, job):
                    self._resize(job, tracker.overrun(view, job, self.adaptive))
        if self.order == "guarded":
            late = self._overdue(view, active)
            for job in late:
                self.overdue_at_.setdefault(job.id, now)
            admitted, budget = [], self.share_gpus_
            for job in late:
                if job.gpus <= budget or not admitted:
                    admitted.append(job)
                    budget -= job.gpus
                    if budget <= 0:
                        break
            rest = [job for job in active if job not in admitted]
            order = admitted + sorted(rest, key=lambda job: self._rank_key(view, job))
        elif self.order == "virtual":
            done = [job for job in active if m.completion_time(job.index) is not None]
            todo = [job for job in active if m.completion_time(job.index) is None]
            order = (sorted(done, key=lambda job: (self._completion(job), job.key))
                     + sorted(todo, key=lambda job: (m.remaining(job.index), job.key)))
        else:
            order = sorted(active, key=lambda job: self._rank_key(view, job))
        if not self.preemption:
            order = [job for job in order if not view.is_running(job)]
        return Decision(order, backfill=self.backfill)

    # -- wake-ups -------------------------------------------------------------------------------------
    def next_wake(self, view):
        now, tracker, m = view.now, self.tracker_, self.machine_
        wake = None
        if self.adaptive != "off":            # a running job reaching its prediction
            for job in view.running:
                left = tracker.predicted[job.index] - view.attained_work(job)
                if left > 0 and not view.is_stopping(job):
                    wake = _earlier(wake, view.resume_time(job) + left * view.iteration_time(job), now)
        if self.order != "guarded":
            return wake
        active = {job.index: job for job in view.active()}
        for job in active.values():           # deadlines of finished jobs not overdue yet
            c = self._completion(job)
            if c is not None:
                wake = _earlier(wake, _deadline(job.arrival, c, self._kappa), now)
        if self.virtual == "fluid":           # the fluid machine's next completion
            if m.running is not None:
                wake = _earlier(wake, m.now + m.remaining(m.running), now)
            return wake
        kappa, until = self._kappa, wake      # the deadlines of the machine's next completions
        if wake is not None and kappa > 2 and wake - now > _MARGIN * abs(wake):
            until = now + (wake - now) * 2 / kappa
            if not until > now:
                until = wake
        events, horizon = m.upcoming_completions(until, _READ_AHEAD)
        if horizon != until:                  # the read stopped early: wake at the next completion
            wake = _earlier(wake, horizon, now)
        for c, i in events:
            job = active.get(i)
            if job is not None:
                if self.virtual == "envelope":
                    c = max(c, job.arrival + exact_mul(tracker.predicted[i], job.tau_star))
                d = _deadline(job.arrival, c, kappa)
                if not d > now:
                    d = math.nextafter(now, math.inf)
                wake = _earlier(wake, d, now)
        return wake

    # -- the record -----------------------------------------------------------------------------------
    def record(self) -> VirtualRun:
        """The virtual run the certificates read (:class:`~asrpt.state.VirtualRun`)."""
        m = self.machine_
        m.run()
        views = self._views
        done = {views[i].id: self._completion(views[i]) for i in m.completion_times()}
        predictions = super().report()
        return VirtualRun(
            virtual=self.virtual,
            completion_times={k: done[k] for k in sorted(done, key=id_key)},
            sizes={k: self.virtual_sizes_[k] for k in sorted(self.virtual_sizes_, key=id_key)},
            initial_predictions=predictions["initial_predictions"],
            predictions=predictions["predictions"],
            adaptive_updates=self.adaptive_updates_,
            overdue_at=({k: self.overdue_at_[k] for k in sorted(self.overdue_at_, key=id_key)}
                        if self.order == "guarded" else None))

    def report(self) -> dict:
        return self.record().to_dict()
