"""The reference engine: the simulator's specification, written plainly.

``run_reference(instance, policy, placer, ...) -> SimResult`` runs the simulation of
:func:`asrpt.engine.core.run_engine` with none of its fast paths (no numpy, caches or promises
read); the fast engine must give the same records (tests/engine/test_reference.py). Ints and
Fractions stay exact for abstract jobs; DNN times are floats, from the same operations.

**Events.** Time jumps from event to event. At one instant ``t`` the engine applies

1. completions (GPUs released), in the order their completion times were set;
2. preemption points: DNN jobs that were running on to an iteration boundary stop there;
3. arrivals, in (arrival, id) order: they join the waiting set;
4. the policy's wake-up, if ``t`` is the earliest time it asked for;

and if any of these happened, one **decision pass**: the policy gets a read-only
:class:`~asrpt.state.ClusterView` (what happened since its previous view is shown once), its
:class:`~asrpt.state.Decision` is applied, and a policy that overrides ``next_wake`` is then
asked when to be woken (with a view showing the pass's starts and stops). A preemptive,
backfilling decision with ``stands_until`` holds until then: at each pass before it where no job
arrived or completed since the policy was last asked, the policy is not asked; the engine
applies the order "the running jobs that are not stopping, then the held decision's order (as
listed when it was made) less those" instead, and the policy sees the pass's starts and stops
in its next view. The run ends after
the pass of the last completion; jobs still waiting when nothing is left to happen mean a
stalled run (:class:`~asrpt.errors.AsrptError`).

**Decisions** are read through the plain contract only: ``list(decision.order)``,
``backfill``, ``wake_at`` and ``stands_until``; chunks and sorted entries are not looked at.

- *Non-preemptive* policies list waiting jobs; running jobs keep their GPUs and the listed jobs
  start in order where they fit (``backfill``: skip one that does not and go on; else stop).
- *Preemptive* policies list active jobs; the engine selects greedily by GPU count in order
  (skip or stop as above), preempts the running jobs left out, and starts the selected waiting
  jobs in order. Idle GPUs the selection could not use (held by left-out jobs still running on,
  or refused by the placer) then go, in order, to the jobs left out (:meth:`_Reference._fill_idle`).

Every start goes through the placer, one job at a time, so each start sees the GPUs taken by
the previous ones. A job stopped at once and given back the same GPUs in the same pass never
stopped. A preempted DNN job runs on to its next iteration boundary (work at most 1e-9 above
one is on it), unless it finishes first; abstract jobs, jobs still restarting and
``preemption_point="immediate"`` stop at once. **Progress**: a running job does ``1 / tau``
units of work per second (``tau``: the iteration time of its placement; abstract jobs: 1), none
while restarting: a job restarted after a preemption first spends ``preemption_cost`` seconds
restarting on its GPUs.

Not here: the fast engine's guard rails against wake-up storms and livelocks (errors after
100,000 futile passes or stops; ``max_passes`` bounds a run instead), ``progress`` reports and
``check_invariants`` (the records are always checked, :func:`~asrpt.engine.records.check_records`).
"""

from __future__ import annotations

import itertools
import math
import time as _time

from ..errors import AsrptError, InvalidParameterError
from ..state import ClusterView, CompletedJob, Decision, JobStatus, Policy, job_views, policy_label
from .metrics import summarize
from .records import JobRecord, Segment, SimResult, check_records, recorded_params, stalled_run

__all__ = ["run_reference"]

ARRIVED, WAITING, RUNNING, STOPPING, DONE = (JobStatus.ARRIVED, JobStatus.WAITING, JobStatus.RUNNING,
                                             JobStatus.STOPPING, JobStatus.DONE)


class _Job:
    """The mutable state of one job (ClusterView reads its status, first_start, preemptions, etc.)."""

    def __init__(self, work):
        self.work = work            # iterations (DNN) or seconds of processing (abstract)
        self.done = 0               # work done up to t_last
        self.t_last = 0
        self.tau = None             # seconds per unit of work on the current placement (None: abstract, or not running)
        self.restart_until = 0      # no progress before this time
        self.status = ARRIVED
        self.servers = ()           # ((server, GPUs), ...) while it holds GPUs
        self.seg_start = 0
        self.executed = 0           # seconds held in finished segments
        self.segments = []
        self.first_start = self.completion = None
        self.preemptions, self.beta = 0, 1.0
        self.finish = None          # (time, seq): the pending completion
        self.boundary = None        # (time, seq, iterations): the pending stop at an iteration boundary


# -- the progress law ---------------------------------------------------------------------------------
def _progress(job: _Job, t0, t1=None, *, work=None):
    """THE progress law: a running job does ``1 / tau`` units of work per second (1 for abstract
    jobs), starting at ``max(t0, restart_until)``.

    ``_progress(job, t0, t1)``: the work done between ``t0`` and ``t1``. ``_progress(job, t0,
    work=w)``: the same law solved for time, when ``w`` more units are done (``w <= 0``: at once).
    """
    eff = job.restart_until if job.restart_until > t0 else t0
    if work is not None:
        if work <= 0:
            return eff
        return eff + (work if job.tau is None else work * job.tau)
    if t1 <= eff:
        return 0
    return (t1 - eff) if job.tau is None else (t1 - eff) / job.tau


class _Reference:
    def __init__(self, instance, policy: Policy, placer, preemption_cost, preemption_point, seed, observer,
                 max_passes):
        self.cluster, self.policy, self.placer = instance.cluster, policy, placer
        self.c_pre, self.immediate, self.seed = preemption_cost, preemption_point == "immediate", seed
        self.max_passes = max_passes
        self.before_decide = getattr(observer, "before_decide", None)
        self.after_decide = getattr(observer, "after_decide", None) or (observer if callable(observer) else None)
        self.job_status = [job.status for job in instance.jobs]
        self.views = job_views(instance)
        self.jobs = [_Job(job.processing_time if job.model is None else job.iterations) for job in instance.jobs]
        self.states = self.jobs                 # (the name ClusterView reads)
        self.total_gpus = self.free_total = self.cluster.total_gpus
        self.free = list(self.cluster.server_gpus)
        self.now, self.n_done, self.passes = 0, 0, 0
        self.seq = itertools.count()            # numbers the pending events in the order they are set
        # the active jobs by state, index -> JobView, in the order they entered that state
        self.waiting, self.running, self.stopping = {}, {}, {}
        # what happened since the previous view (shown once, to decide or next_wake)
        self.arrived, self.completed, self.just_started, self.just_stopped = [], [], [], []
        self.loud = False                       # a job arrived or completed since the last view
        self.held, self.held_until = None, None  # a held decision's order and term (stands_until)
        self.next_wake = None
        self.undo = {}                          # jobs stopped at once in this pass: index -> how they ran
        self.clairvoyant = bool(policy.clairvoyant)
        # the policy as errors name it: its registered name, else its class's
        self.policy_name = policy_label(policy)
        self.asks_wake = type(policy).next_wake is not Policy.next_wake   # policies that do not override it are never asked

    # -- what ClusterView reads ---------------------------------------------------------------------
    def work_done(self, i):
        job = self.jobs[i]
        if job.status in (RUNNING, STOPPING):
            return job.done + _progress(job, job.t_last, self.now)
        return job.done

    def resume_time(self, i):
        job = self.jobs[i]
        r = job.restart_until
        return r if (job.status == RUNNING and r > self.now) else self.now

    def executed_time(self, i):
        job = self.jobs[i]
        if job.status in (RUNNING, STOPPING):
            return job.executed + (self.now - job.seg_start)
        return job.executed

    def running_progress(self):
        return [(jv, self.work_done(i), jv.tau_star if self.jobs[i].tau is None else self.jobs[i].tau,
                 i in self.stopping) for i, jv in self.running.items()]

    def running_executed(self):
        return [(jv, self.executed_time(i), i in self.stopping) for i, jv in self.running.items()]

    def waiting_progress(self):
        return [(jv, self.jobs[i].done, self.jobs[i].executed) for i, jv in self.waiting.items()]

    def settled(self):
        """No job stopping and no waiting job fitting in the idle GPUs (preemptive runs only)."""
        return (self.policy.preemptive and not self.stopping
                and all(jv.gpus > self.free_total for jv in self.waiting.values()))

    def _view(self):
        view = ClusterView(self, self.clairvoyant)
        for shown in (self.arrived, self.completed, self.just_started, self.just_stopped):
            shown.clear()
        self.loud = False
        return view

    # -- state changes ----------------------------------------------------------------------------------
    def _advance(self, job):
        job.done += _progress(job, job.t_last, self.now)
        job.t_last = self.now

    def _start(self, jv, alloc):
        i, job, now = jv.index, self.jobs[jv.index], self.now
        undo = self.undo.pop(i, None)
        for h, g in alloc.servers:
            self.free[h] -= g
            if self.free[h] < 0:
                raise AsrptError(f"t={now}: placement {self.placer.name} over-allocated server {h} "
                                 f"for job {jv.id} ({self.free[h] + g} free, {g} taken)")
        self.free_total -= jv.gpus
        del self.waiting[i]
        self.running[i] = jv
        job.status, job.servers = RUNNING, alloc.servers
        if undo is not None and undo[0] == alloc.servers:
            # stopped at once earlier in this pass and given back the same GPUs: it never stopped
            job.segments.pop()
            job.servers, job.tau, job.restart_until, job.executed, job.seg_start, job.done = undo
            job.preemptions -= 1
            self.just_stopped.remove(jv)
        else:
            job.tau = None if jv.is_abstract else alloc.tau
            if job.tau is not None and jv.tau_star:
                job.beta = max(job.beta, job.tau / jv.tau_star)
            job.seg_start = job.t_last = now
            # a restart after a preemption takes preemption_cost seconds without progress
            job.restart_until = now + self.c_pre if (job.preemptions and self.c_pre) else now
            if job.first_start is None:
                job.first_start = now
            self.just_started.append(jv)
        job.finish = (_progress(job, now, work=job.work - job.done), next(self.seq))

    def _try_start(self, jv):
        """Start ``jv`` where the placer puts it in the idle GPUs; False if it does not fit."""
        if jv.gpus > self.free_total:
            return False
        alloc = self.placer.allocate(jv, self.free, self.cluster)
        if alloc is None:
            return False
        self._start(jv, alloc)
        return True

    def _release(self, i):
        job, now = self.jobs[i], self.now
        self.stopping.pop(i, None)
        restart = (job.restart_until if job.restart_until < now else now) - job.seg_start
        job.segments.append(Segment(job.seg_start, now, job.servers, job.tau, restart if restart > 0 else 0))
        job.executed += now - job.seg_start
        for h, g in job.servers:
            self.free[h] += g
        self.free_total += self.views[i].gpus
        job.servers, job.finish, job.boundary = (), None, None
        del self.running[i]

    def _complete(self, i):
        job = self.jobs[i]
        job.done = job.work
        self._release(i)
        job.status, job.completion = DONE, self.now
        self.n_done += 1
        self.completed.append(CompletedJob(self.views[i], self.now, job.work, self.job_status[i]))

    def _stop(self, i):
        job = self.jobs[i]
        self._release(i)
        job.status, job.tau, job.preemptions = WAITING, None, job.preemptions + 1
        self.waiting[i] = self.views[i]
        self.just_stopped.append(self.views[i])

    def _preempt(self, i):
        job, now = self.jobs[i], self.now
        self._advance(job)
        before = (job.servers, job.tau, job.restart_until, job.executed, job.seg_start, job.done)
        # abstract jobs, jobs still restarting, and preemption_point="immediate" stop at once; a
        # DNN job runs on to its next iteration boundary (work within 1e-9 above one is on it)
        if not (job.tau is None or now <= job.restart_until or self.immediate):
            done = job.done
            target = math.ceil(done - 1e-9 * max(1.0, done)) if isinstance(done, float) else math.ceil(done)
            if target > done:
                if target < job.work:   # (else it finishes first: it runs on to its completion)
                    job.status = STOPPING
                    self.stopping[i] = self.views[i]
                    job.boundary = (_progress(job, now, work=target - done), next(self.seq), target)
                return
            job.done = target           # on a boundary: it stops now
        self.undo[i] = before           # (a stop at once: undone if the job gets the same GPUs in this pass)
        self._stop(i)

    # -- the decision pass ------------------------------------------------------------------------------
    def _request_wake(self, wake):
        if wake is not None and wake > self.now and (self.next_wake is None or wake < self.next_wake):
            self.next_wake = wake

    def _decide(self):
        self.passes += 1
        if self.max_passes is not None and self.passes > self.max_passes:
            raise AsrptError(f"t={self.now}: policy {self.policy_name} took more than {self.max_passes} passes")
        self.undo.clear()
        if self.held is not None and not self.loud and self.now < self.held_until:
            # a held decision: the running jobs that are not stopping, then its order
            head = [jv for i, jv in self.running.items() if i not in self.stopping]
            kept = {jv.index for jv in head}
            self._apply_preemptive(head + [jv for jv in self.held if jv.index not in kept], True)
            return
        view = self._view()
        if self.before_decide is not None:
            self.before_decide(view)
        decision = self.policy.decide(view)
        order = list(decision.order)
        if self.after_decide is not None:
            self.after_decide(view, Decision(order, decision.backfill, decision.wake_at, decision.stands_until))
        self.held = self.held_until = None
        if (self.policy.preemptive and decision.backfill and decision.stands_until is not None
                and decision.stands_until > self.now):
            self.held, self.held_until = order, decision.stands_until
        self._request_wake(decision.wake_at)
        if self.policy.preemptive:
            self._apply_preemptive(order, decision.backfill)
        else:
            self._apply_non_preemptive(order, decision.backfill)
        if self.asks_wake:
            self._request_wake(self.policy.next_wake(self._view()))

    def _apply_non_preemptive(self, order, backfill):
        listed = set()      # (each waiting job at most once: listed again, it is no longer waiting)
        for jv in order:
            if self.jobs[jv.index].status != WAITING or jv.index in listed:
                raise AsrptError(f"non-preemptive policy {self.policy_name} listed job {jv.id}, which is not waiting")
            listed.add(jv.index)
        for jv in order:
            if not self.free_total:
                break
            if not self._try_start(jv) and not backfill:
                break

    def _apply_preemptive(self, order, backfill):
        if len({jv.index for jv in order}) != len(order):
            raise AsrptError(f"policy {self.policy_name} listed a job twice")
        for jv in order:
            if self.jobs[jv.index].status not in (WAITING, RUNNING, STOPPING):
                raise AsrptError(f"policy {self.policy_name} listed job {jv.id}, which is not active")
        # 1. select greedily by GPU count, in order (a job that does not fit: skip it, or stop)
        budget, selected = self.total_gpus, []
        for jv in order:
            if jv.gpus <= budget:
                selected.append(jv)
                budget -= jv.gpus
                if not budget:
                    break
            elif not backfill:
                break
        chosen = {jv.index for jv in selected}
        # 2. preempt the running jobs left out (those already stopping run on to their boundary)
        left_out = [i for i in self.running if i not in chosen]
        for i in left_out:
            if self.jobs[i].status == RUNNING:
                self._preempt(i)
        # 3. the selected jobs: a stopping one runs on; waiting ones start in order
        blocked = []
        for jv in selected:
            job = self.jobs[jv.index]
            if job.status == STOPPING:
                job.status, job.boundary = RUNNING, None
                del self.stopping[jv.index]
            elif job.status == WAITING and not self._try_start(jv):
                if not backfill:
                    break   # (the selected jobs after it are not looked at: a stopping one stays stopping)
                blocked.append(jv)
        # 4. idle GPUs to the jobs left out, in order, without delaying a selected job
        if backfill and self.free_total:
            self._fill_idle([jv for jv in order if jv.index not in chosen], blocked, left_out)

    def _fill_idle(self, candidates, blocked, left_out):
        """Give idle GPUs to ``candidates`` (the jobs the selection left out, in order).

        ``future`` is what each server will have once the left-out jobs still running release
        their GPUs; the blocked selected jobs reserve their placements in it first, in order. A
        candidate that stops at once when preempted (abstract jobs, ``preemption_point=
        "immediate"``) may use any idle GPU: it never delays a selected job. A DNN job that would
        run on to an iteration boundary only uses idle GPUs that no reservation needs:
        ``min(free, future)`` per server."""
        future = list(self.free)
        for i in left_out:
            for h, g in (self.jobs[i].servers if i in self.running else ()):
                future[h] += g
        for jv in blocked:
            servers = self.placer.reserve(jv, future, self.cluster)
            for h, g in servers or ():
                future[h] -= g
        for jv in candidates:
            if self.jobs[jv.index].status != WAITING or jv.gpus > self.free_total:
                continue
            if jv.is_abstract or self.immediate:
                self._try_start(jv)
                continue
            avail = [f if f < u else u for f, u in zip(self.free, future)]
            if jv.gpus > sum(avail):
                continue
            alloc = self.placer.allocate(jv, avail, self.cluster)
            if alloc is not None:
                for h, g in alloc.servers:
                    future[h] -= g
                self._start(jv, alloc)

    # -- the loop -----------------------------------------------------------------------------------------
    def run(self, label):
        wall = _time.perf_counter()
        self.policy.reset(self.cluster, seed=self.seed)
        views, jobs = self.views, self.jobs
        arrivals = sorted(views, key=lambda v: (v.arrival, v.key))
        ptr, n = 0, len(views)
        while True:
            # the next instant: (time, kind, seq); at a tie an arrival's own time value is kept
            # (a float wake-up equal to an exact arrival must not make an exact clock a float)
            events = [(jobs[i].finish[0], 0, jobs[i].finish[1]) for i in self.running if jobs[i].finish]
            events += [(jobs[i].boundary[0], 1, jobs[i].boundary[1]) for i in self.stopping]
            if ptr < n:
                events.append((arrivals[ptr].arrival, -1, 0))
            if self.next_wake is not None:
                events.append((self.next_wake, 3, 0))
            if not events:
                break
            t = self.now = min(events)[0]
            changed = False
            # 1. completions, in the order their times were set
            for i in sorted((i for i in self.running if jobs[i].finish[0] == t), key=lambda i: jobs[i].finish[1]):
                self._complete(i)
                changed = self.loud = True
            # 2. preemption points: stopping jobs reach their iteration boundary
            for i in sorted((i for i in self.stopping if jobs[i].boundary[0] == t), key=lambda i: jobs[i].boundary[1]):
                self._advance(jobs[i])
                jobs[i].done = jobs[i].boundary[2]
                self._stop(i)
                changed = True
            # 3. arrivals
            while ptr < n and arrivals[ptr].arrival <= t:
                jv = arrivals[ptr]
                ptr += 1
                jobs[jv.index].status = WAITING
                self.waiting[jv.index] = jv
                self.arrived.append(jv)
                changed = self.loud = True
            # 4. the policy's wake-up
            if self.next_wake is not None and self.next_wake == t:
                self.next_wake = None
                changed = True
            if changed:
                self._decide()
                if self.n_done == n:
                    break       # every job is done: later wake-ups cannot change a record
        if self.waiting or self.running:
            raise stalled_run(self.now, self.policy_name, self.waiting, self.running)
        return self._result(_time.perf_counter() - wall, label)

    def _result(self, wall, label):
        records = tuple(JobRecord(jv.id, jv.arrival, jv.gpus, jv.weight, job.first_start, job.completion,
                                  job.preemptions, job.work, None if jv.is_abstract else jv.tau_star,
                                  job.work if jv.is_abstract else job.work * jv.tau_star, float(job.beta),
                                  tuple(job.segments)) for jv, job in zip(self.views, self.jobs))
        check_records(records, self.cluster.server_gpus)
        summary = summarize(records, self.total_gpus)
        summary["decision_passes"] = self.passes
        summary["wall_time"] = wall
        policy = self.policy
        options = {"placement": self.placer.name, "preemption_cost": self.c_pre, "seed": self.seed,
                   "preemption_point": "immediate" if self.immediate else "iteration",
                   "policy_params": recorded_params(policy.get_params())}
        return SimResult(policy=policy.name, records=records, summary=summary, options=options,
                         policy_data=policy.report(), total_gpus=self.total_gpus, policy_record=policy.record(),
                         label=policy.name if label is None else label)


def run_reference(instance, policy: Policy, placer, *, preemption_cost=0, preemption_point: str = "iteration",
                  seed=0, observer=None, label: str | None = None, max_passes: int | None = None) -> SimResult:
    """Run ``policy`` (used as given: its ``reset`` starts the run) on ``instance`` through
    ``placer``, by the plain rules of the module docstring; the records are those of
    :func:`~asrpt.engine.core.run_engine` with the same arguments. ``observer`` is called as
    :class:`~asrpt.engine.core.Observer` is; ``max_passes`` (None: no limit) ends a run that takes
    more decision passes with :class:`~asrpt.errors.AsrptError`.

    Examples
    --------
    >>> from asrpt.policies import make_policy
    >>> from asrpt.placement import make_placer
    >>> res = run_reference(two_server_instance, make_policy("fifo"), make_placer("best_fit"))
    >>> res.completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """
    if preemption_point not in ("iteration", "immediate") or preemption_cost < 0:
        raise InvalidParameterError(f"bad preemption_point {preemption_point!r} or preemption_cost {preemption_cost!r}")
    return _Reference(instance, policy, placer, preemption_cost, preemption_point, seed, observer,
                      max_passes).run(label)
