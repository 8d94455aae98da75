"""Plain Tiresias 2D-LAS, with the published simulator's rules (``tiresias-peer``,
``dlas-gpu-*``) (the reference copy of :mod:`asrpt.policies.tiresias`).

**Default rules** (``tiresias``). A job's attained service is ``S_j = g_j x`` (the seconds it has
held its GPUs since its last counter reset). With thresholds ``T_1 < ... < T_{K-1}`` its queue is
the number of thresholds at or below ``S_j`` (floats get a relative tolerance of 1e-9). At every
decision every active job is keyed ``(queue, 0 if running and not stopping else 1, arrival, id)``
and the engine fills the GPUs greedily in that order, skipping jobs that do not fit. After the
decision the policy asks to be woken at the first time a running job (not stopping) reaches its
queue's threshold, ``now + (T_{q+1} - S_j) / g_j``.

**PROMOTEKNOB** (``promote_knob = P > 0``). A job keeps ``base`` (its executed time at its last
counter reset) and ``since`` (when it first ran after that reset, noticed at the decision after
it started). A waiting job in a lower queue that has waited at least ``P`` times its executed
time since the reset (waiting = ``now - since - executed since reset``) goes back to Q0 with its
counters reset; the policy also wakes at the first such promotion.

**The published simulator's rules** (any of ``queue_order="list"``, ``demotion="events"``,
``service="time"``, ``gittins_sample``; :class:`PeerLAS`): the queues are lists, and the
simulator's event loop is followed rule for rule (see :mod:`asrpt.policies.tiresias`).

Examples
--------
A 4-GPU job that has held its GPUs for 1 s (4 GPU-s) is demoted below a newcomer:

>>> from asrpt.instance import Cluster, Instance, Job
>>> from asrpt.sim import simulate
>>> inst = Instance(Cluster.homogeneous(1, 4), (Job("a", 0, 4, processing_time=3),
...                                             Job("b", 0, 4, processing_time=1)))
>>> simulate(inst, ReferenceTiresias(thresholds=(4,))).completion_times
{'a': 4, 'b': 2}
"""

from __future__ import annotations

import bisect

from ...sizes import exact_div, exact_mul
from ...state import Decision, Policy
from ..tiresias import _DEFAULT_THRESHOLDS, Tiresias, _load_sample, peer_gittins_index, peer_gittins_table

__all__ = ["ReferenceTiresias", "PeerLAS"]


def _reached(value, target) -> bool:
    """value >= target, with a relative tolerance of 1e-9 when floats are involved."""
    if isinstance(value, float) or isinstance(target, float):
        return value >= target - 1e-9 * max(1.0, abs(float(target)))
    return value >= target


class ReferenceTiresias(Policy):
    """Tiresias 2D-LAS recomputed at every decision (module docstring)."""

    name = "tiresias"
    parameter_constraints = Tiresias.parameter_constraints
    preemptive = True
    clairvoyant = False
    work_conserving = Tiresias.work_conserving     # (not under the peer's rules: Tiresias's docstring)
    _peer_rules = Tiresias._peer_rules

    def __init__(self, *, thresholds=_DEFAULT_THRESHOLDS, promote_knob: float = 0.0,
                 queue_order: str = "arrival", demotion: str = "exact", service: str = "gpu_time",
                 gittins_sample=None):
        self.thresholds = thresholds
        self.promote_knob = promote_knob
        self.queue_order = queue_order
        self.demotion = demotion
        self.service = service
        self.gittins_sample = gittins_sample

    _check_thresholds = Tiresias._check_thresholds     # (a non-empty increasing sequence, integral floats as ints)

    def _validate_params(self) -> None:
        super()._validate_params()
        self._check_thresholds()

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self.thresholds_ = self._check_thresholds()
        self.promotions_ = 0
        self._base: dict = {}          # index -> executed time at the last counter reset (knob)
        self._run_since: dict = {}     # index -> when it first ran after that reset (knob)
        self._prev_now = None          # the previous decision's time (knob)
        self._state: dict = {}         # index -> (queue, service, since reset, waiting) at the decision (knob)
        order = getattr(self, "queue_order", "arrival")
        demotion = getattr(self, "demotion", "exact")
        service = getattr(self, "service", "gpu_time")
        sample = getattr(self, "gittins_sample", None)
        self._peer = None
        if order != "arrival" or demotion != "exact" or service != "gpu_time" or sample is not None:
            table = None if sample is None else peer_gittins_table(_load_sample(sample))
            self._peer = PeerLAS(self.thresholds_, order == "list", demotion == "events", service == "gpu_time",
                                 self.promote_knob, table)

    # -- keys -------------------------------------------------------------------------------------
    def _queue(self, service) -> int:
        """The queue of a job with attained service ``service``."""
        if isinstance(service, float):
            service = service + 1e-9 * max(1.0, service)
        return bisect.bisect_right(self.thresholds_, service)

    def _within_queue_key(self, view, job, service, running: bool) -> tuple:
        """Running jobs (not stopping) first, then by arrival, then id."""
        return (0 if running else 1, job.arrival, job.key)

    def _prepare(self, view) -> None:
        """Hook for subclasses, called at the start of each decision."""

    def _counters(self, view, job):
        """``(queue, service, since reset, waiting time)`` of ``job`` now, promoting it first
        where the knob says so (knob only: without it the service counts from the arrival)."""
        executed = view.executed_time(job)
        knob = self.promote_knob
        if not knob:
            service = exact_mul(job.gpus, executed)
            return self._queue(service), service, executed, None
        i = job.index
        since = executed - self._base.get(i, 0)
        service = exact_mul(job.gpus, since)
        q = self._queue(service)
        pending = None
        if since > 0:
            start = self._run_since.get(i)
            if start is None:             # it first ran after its last reset at the previous decision
                start = self._run_since[i] = self._prev_now
            if q > 0:                     # waiting time since it first ran after its last reset
                pending = (view.now - start) - since
                if not view.is_running(job) and _reached(pending, knob * since):
                    self._base[i] = executed
                    self._run_since.pop(i, None)
                    self.promotions_ += 1
                    since, service, q, pending = 0, 0, 0, None
        return q, service, since, pending

    def decide(self, view):
        if self._peer is not None:
            return Decision(list(self._peer.decide(view)), backfill=True)
        self._prepare(view)
        for c in view.completed:
            self._base.pop(c.job.index, None)
            self._run_since.pop(c.job.index, None)
        keys, state = {}, {}
        for job in view.active():
            q, service, since, pending = state[job.index] = self._counters(view, job)
            held = view.is_running(job) and not view.is_stopping(job)
            keys[job.index] = (q,) + self._within_queue_key(view, job, service, held) + (job.index,)
        self._prev_now = view.now
        self._state = state
        return Decision(sorted(view.active(), key=lambda j: keys[j.index]), backfill=True)

    def next_wake(self, view):
        """The first time after now at which a running job (not stopping) reaches its queue's
        threshold, or (knob) a waiting job in a lower queue is promoted; None if none. With the
        published simulator's rules: its next jump."""
        now = view.now
        if self._peer is not None:
            jump = self._peer.jump
            return jump if jump is not None and jump > now else None
        th, wake = self.thresholds_, None
        for job in view.running:
            if view.is_stopping(job):
                continue
            entry = self._state.get(job.index)
            if entry is None or not self.promote_knob:    # (no knob: the service now, from the arrival)
                service = exact_mul(job.gpus, view.executed_time(job))
                q = self._queue(service)
            else:
                q, service = entry[0], entry[1]
            if q < len(th):
                left = th[q] - service
                t = now + (left / job.gpus if type(left) is float else exact_div(left, job.gpus))
                if t > now and (wake is None or t < wake):
                    wake = t
        if self.promote_knob:
            for job in view.waiting:
                _, _, since, pending = self._state[job.index]
                if pending is not None:
                    t = now + (self.promote_knob * since - pending)
                    if t > now and (wake is None or t < wake):
                        wake = t
        return wake

    def report(self) -> dict:
        return {"promotions": self._peer.promotions if self._peer is not None else self.promotions_}


class PeerLAS:
    """The published Tiresias simulator's 2D-LAS (``run_sim.py``, ``dlas-gpu``), written plainly.

    Each job keeps its queue, ``executed`` (seconds run since its arrival or its last
    promotion), ``total`` (seconds run since its arrival), ``pending`` (seconds waited since it
    first ran after its last promotion) and whether it ran after the previous event. The queues
    are lists. The simulator acts only at its events: arrivals, completions and its own jump
    times (at any other wake-up it answers as before). At an event at ``t``:

    1. completed jobs leave their queues; arrivals (by instance order) join the end of Q0;
    2. every job (in arrival order) is brought up to ``t``: one that ran since the previous event
       adds ``t - prev`` to ``executed`` and ``total`` and is demoted (to the end of the next
       queue) while its service (``executed``, in GPU-seconds unless ``service="time"``) is at
       least its queue's limit, at most once per event with ``demotion="events"``; one that
       waited adds ``t - prev`` to ``pending`` if it has run, and with the knob ``K`` goes to the
       end of Q0 with ``executed = pending = 0`` once ``pending >= int(executed K)`` (a job in a
       lower queue that has run);
    3. queues are read in order (``queue_order="arrival"``: each sorted by running first, then
       instance order; ``gittins_sample``: each stably sorted by the job's Gittins index of its
       service, highest first, then the earlier arrival); a job runs iff its GPUs fit in what
       the jobs before it left (the simulator counts GPUs only);
    4. with list order each queue is stably partitioned: its running jobs, then its waiting ones;
    5. the next jump: the earliest time a running job reaches its queue's limit (``t + (L -
       executed) // g`` in GPU-seconds with event demotion, else the exact crossing; ``t + L -
       executed`` in seconds) or a waiting job reaches its promotion (``t + int(executed K -
       pending)``).

    The decision lists the jobs that run, in queue order.
    """

    def __init__(self, limits, list_order, event_demotion, gpu_time, knob, gittins):
        self.limits = limits
        self.list_order = list_order
        self.event_demotion = event_demotion
        self.gpu_time = gpu_time
        self.knob = knob
        self.gittins = gittins
        self.queues: list[list[int]] = [[] for _ in range(len(limits) + 1)]
        self.jobs: dict[int, dict] = {}     # index -> its counters, in arrival order
        self.prev = None
        self.jump = None
        self.order: list = []
        self.promotions = 0

    def _service(self, s):
        return s["executed"] * s["view"].gpus if self.gpu_time else s["executed"]

    def _move(self, i, q) -> None:
        s = self.jobs[i]
        self.queues[s["q"]].remove(i)
        s["q"] = q
        self.queues[q].append(i)

    def decide(self, view):
        now = view.now
        if not view.arrived and not view.completed and now != self.jump:
            return self.order
        jobs, queues, limits, last = self.jobs, self.queues, self.limits, len(self.limits)
        for c in view.completed:
            s = jobs.pop(c.job.index)
            queues[s["q"]].remove(c.job.index)
        dt = 0 if self.prev is None else now - self.prev
        self.prev = now
        for job in sorted(view.arrived, key=lambda j: j.index):
            jobs[job.index] = dict(view=job, q=0, executed=0, total=0, pending=0, ran=False, index=0.0)
            queues[0].append(job.index)
        for i, s in jobs.items():
            if s["ran"]:
                if dt:
                    s["executed"] += dt
                    s["total"] += dt
                while s["q"] < last and self._service(s) >= limits[s["q"]]:
                    self._move(i, s["q"] + 1)
                    if self.event_demotion:
                        break
            else:
                if s["executed"] > 0 and dt:
                    s["pending"] += dt
                if (self.knob and s["q"] > 0 and s["total"] > 0 and s["executed"] > 0
                        and s["pending"] >= int(s["executed"] * self.knob)):
                    self._move(i, 0)
                    s["executed"] = s["pending"] = 0
                    self.promotions += 1
            if self.gittins is not None:
                s["index"] = peer_gittins_index(self.gittins, self._service(s))
        if not self.list_order:
            for k, queue in enumerate(queues):
                queues[k] = sorted(queue, key=lambda i: (not jobs[i]["ran"], i))
        if self.gittins is not None:
            for k, queue in enumerate(queues):
                queues[k] = sorted(queue, key=lambda i: (jobs[i]["index"], -jobs[i]["view"].arrival), reverse=True)
        free, order = view.total_gpus, []
        for queue in queues:
            for i in queue:
                s = jobs[i]
                s["ran"] = free >= s["view"].gpus
                if s["ran"]:
                    free -= s["view"].gpus
                    order.append(s["view"])
        if self.list_order:
            for k, queue in enumerate(queues):
                queues[k] = [i for i in queue if jobs[i]["ran"]] + [i for i in queue if not jobs[i]["ran"]]
        self.order = order
        self.jump = self._next_jump(now)
        return order

    def _next_jump(self, now):
        jump = None
        for s in self.jobs.values():
            g, q = s["view"].gpus, s["q"]
            t = None
            if s["ran"] and q < len(self.limits):
                limit = self.limits[q]
                if not self.gpu_time:
                    t = now + limit - s["executed"]
                elif self.event_demotion:
                    t = now + (limit - s["executed"]) // g
                else:
                    t = now + exact_div(limit - s["executed"] * g, g)
            elif not s["ran"] and self.knob and q > 0 and s["total"] and s["executed"] > 0:
                diff = int(s["executed"] * self.knob - s["pending"])
                if diff > 0:
                    t = now + diff
            if t is not None and (jump is None or t < jump):
                jump = t
        return jump
