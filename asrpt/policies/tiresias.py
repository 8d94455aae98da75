"""Tiresias 2D-LAS: discretized least-attained-service in GPU-seconds, non-clairvoyant
(baselines.md section 2.3 and section 4.3, B3; Gu et al., NSDI'19).

**Queues.** A job's attained service S_j is the GPU-seconds it has held so far
(``view.attained_service``: g_j times the seconds it held its GPUs, restarts included). With
thresholds T_1 < T_2 < ... < T_{K-1} there are K queues: a new job enters Q0 and is demoted from
Q_k to Q_{k+1} when S_j >= T_{k+1}. The default ``thresholds=(3250.0, 7200.0)`` (K = 3) is the
one of the original simulator (SymbioticLab/Tiresias ``simulator/jobs.py``: ``queue_limit =
[3250, 7200, 18000]`` with three queues, so 18000 is never used); Lucid's re-implementation uses
``(18000.0,)`` and Pollux's ``(57600.0,)`` (16 GPU-hours). Choose per trace and report it.

**Order.** Queues from high (Q0) to low; within a queue, running jobs first, then waiting ones,
each by arrival time, then job id (the original simulator moves pending jobs behind running ones
in each queue after every pass, which limits thrashing). The engine selects greedily in that
order, skipping jobs that do not fit (so allocation is greedy backfill) and preempts running jobs
left out.

**Exact demotions.** There is no fixed tick: after every decision the policy tells the engine
(:meth:`Tiresias.next_wake`) the first time a running job will cross its next threshold (or a
waiting job will be promoted), so every queue jump is applied at exactly the time it happens.
Integral float thresholds are used as ints, so runs on exact instances stay exact.

**Starvation control (PROMOTEKNOB).** With ``promote_knob = P > 0``, a job in a lower queue that
has been waiting at least P times its executed time is moved back to Q0 and its counters are
reset (its attained service counts from zero again). As in the original simulator
(``run_sim.py``, ``solve_starvation``), both counters run since the last reset: the executed
time, and the waiting time accumulated since the job first ran after that reset; a job that has
not run since its last reset is not promoted. ``promote_knob = 0`` (the default, as in the
original) disables it.

A decision costs O(A log A) for A active jobs.

**The published simulator's 2D-LAS (``tiresias-peer``).** Three options switch to the exact
rules of the Tiresias simulator (SymbioticLab/Tiresias ``simulator/run_sim.py``, ``dlas-gpu``),
which reproduce its decisions job for job (docs/peers.md):

- ``queue_order="list"``: each queue is a list in the order jobs entered it (arrivals and
  demoted or promoted jobs go to its end); after every pass the waiting jobs of each queue move
  behind the running ones, both groups keeping their order. (``"arrival"``, the default, orders
  each queue by running first, then arrival.)
- ``demotion="events"``: attained service is brought up to date, and jobs are demoted, only at
  events (arrivals, completions and the simulator's own "jump" times), at most one queue per
  event. The jump after an event at t is the earliest ``t + (L_q - executed) // g`` over running
  jobs (the peer subtracts seconds from GPU-seconds, so the jump lands at or after the true
  crossing), or the time a waiting job reaches its promotion; a jump that is not earlier than the
  next arrival or completion is dropped there and recomputed. (``"exact"``, the default, demotes
  at the exact crossing.)
- ``service="time"``: attained service is executed seconds, not GPU-seconds (the peer's
  ``dlas``).

With any of these (or ``gittins_sample``), the peer's counters are kept as it keeps them: the
executed seconds since arrival or the last promotion, and, for the starvation knob K
(``promote_knob``, the peer's ``dlas-gpu-K``), the time a job that has run has waited since;
a waiting job in a lower queue whose waiting time reaches ``int(executed x K)`` goes to the end
of Q0 with both counters zeroed. ``gittins_sample`` (the peer's ``dlas-gpu-gittins``) sorts each
queue, before it is scanned, by the Gittins index of the job's attained service (highest first,
ties to the earlier submit, then the list order), with the index table of
:func:`peer_gittins_table` built from a sample of durations; ``"tiresias"`` is the peer's own
1,001-job sample (``asrpt/data/tiresias-yarn-gput1000.csv``). Stable-sorting ties keep the
instance order of the jobs (the peer's file order; the Tiresias reader keeps it). The pass itself
is the engine's greedy GPU count in queue order, skipping jobs that do not fit (the peer counts
GPUs only: run these presets on a one-server cluster, e.g. ``1x512``, to reproduce it).
Presets: ``tiresias-peer`` (the peer's ``dlas-gpu``), ``dlas-gpu-K`` for K in 0.5, 1, 2, 4, 8,
10, 100, 1000, and ``dlas-gpu-gittins``.
"""

from __future__ import annotations

import bisect
import csv
import os
from decimal import ROUND_HALF_UP, Decimal
from numbers import Real

from .._validation import Interval, Options
from ..errors import InvalidParameterError
from ..sizes import exact_div, exact_mul
from .base import Decision, Policy, register_policy

__all__ = ["Tiresias", "peer_gittins_table", "peer_gittins_index", "PEER_GITTINS_SAMPLE"]

#: The peer's duration sample (``simulator/yarn-gput1000.csv``), bundled with asrpt.
PEER_GITTINS_SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                                   "tiresias-yarn-gput1000.csv")
_KNOBS = (0.5, 1, 2, 4, 8, 10, 100, 1000)

_DEFAULT_THRESHOLDS = (3250.0, 7200.0)


def _as_exact(x):
    """An integral float as an int (so exact instances stay exact); anything else unchanged."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


def _reached(value, target) -> bool:
    """value >= target, with a relative tolerance of 1e-9 when floats are involved."""
    if isinstance(value, float) or isinstance(target, float):
        return value >= target - 1e-9 * max(1.0, abs(float(target)))
    return value >= target


def _round_half_away(x: float, digits: int) -> float:
    """Python 2's ``round``: the exact binary value rounded to ``digits`` decimals, halves away
    from zero."""
    return float(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def peer_gittins_table(durations, delta: int = 3250) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """The Tiresias simulator's Gittins index table: ``(sorted samples, index per sample)``.

    For each sorted sample d[i] (n of them), with a = d[i] - 1: lo = first j with d[j] > a; hi =
    n - 1 if a + delta > d[n-1] - 1, else the first j with d[j] > a + delta; p = round((hi - lo)
    / (n - lo), 5); e = (sum(d[lo:hi]) + delta (n - hi)) // (n - lo); index = round(p 10^6 / e, 4),
    ``round`` halving away from zero as in Python 2.

    Examples
    --------
    >>> peer_gittins_table([10, 20, 40], delta=15)
    ((10, 20, 40), (44444.6667, 29411.7647, 0.0))
    """
    d = sorted(int(v) for v in durations)
    n = len(d)
    if not n or d[0] < 1:
        raise InvalidParameterError(f"the Gittins sample must be a non-empty list of positive durations, got "
                                    f"{len(d)} values (smallest {d[0] if d else None})")
    prefix = [0]
    for v in d:
        prefix.append(prefix[-1] + v)
    index = []
    for v in d:
        a = v - 1
        lo = bisect.bisect_right(d, a)
        hi = n - 1 if a + delta > d[-1] - 1 else bisect.bisect_right(d, a + delta)
        p = _round_half_away((hi - lo) * 1.0 / (n - lo), 5)
        e = (prefix[hi] - prefix[lo] + delta * (n - hi)) // (n - lo)
        index.append(_round_half_away(p * 1000000 / e, 4) if e else 0.0)
    return tuple(d), tuple(index)


def peer_gittins_index(table, attained) -> float:
    """The peer's index of a job with ``attained`` service: 0 beyond the largest sample, else the
    index of the first sample greater than ``attained``.

    >>> table = peer_gittins_table([10, 20, 40], delta=15)
    >>> peer_gittins_index(table, 0), peer_gittins_index(table, 10), peer_gittins_index(table, 40)
    (44444.6667, 29411.7647, 0.0)
    """
    d, index = table
    j = bisect.bisect_right(d, attained)
    return index[j] if j < len(d) else 0.0


def _load_sample(sample) -> list[int]:
    if isinstance(sample, str):
        path = PEER_GITTINS_SAMPLE if sample == "tiresias" else sample
        try:
            with open(path, newline="", encoding="utf-8") as fh:
                rows = list(csv.DictReader(fh))
            return [int(float(r["duration"])) for r in rows]
        except FileNotFoundError:
            raise InvalidParameterError(f"gittins_sample: {path}: no such file") from None
        except (OSError, KeyError, TypeError, ValueError, csv.Error) as exc:
            raise InvalidParameterError(f"gittins_sample: {path}: not a CSV with a numeric 'duration' column "
                                        f"({type(exc).__name__}: {exc})") from None
    try:
        return [int(v) for v in sample]
    except (TypeError, ValueError):
        raise InvalidParameterError(f"gittins_sample must be 'tiresias', a CSV path or a list of durations, "
                                    f"got {sample!r}") from None


class _PeerLAS:
    """The Tiresias simulator's dlas state (see the module docstring): queues as insertion-ordered
    dicts of job index -> entry, entries ``[view, q, executed, total, last_pending, running, rank]``."""

    __slots__ = ("limits", "list_order", "event_demotion", "gpu_time", "knob", "gittins", "queues",
                 "jobs", "prev", "jump", "order", "promotions")

    def __init__(self, limits, list_order, event_demotion, gpu_time, knob, gittins):
        self.limits = limits
        self.list_order = list_order
        self.event_demotion = event_demotion
        self.gpu_time = gpu_time
        self.knob = knob
        self.gittins = gittins
        self.queues = [{} for _ in range(len(limits) + 1)]
        self.jobs: dict[int, list] = {}   # runnable jobs, in arrival order
        self.prev = None
        self.jump = None
        self.order: list = []
        self.promotions = 0

    def service(self, e):
        return e[2] * e[0].gpus if self.gpu_time else e[2]

    def decide(self, view):
        """The jobs chosen at this event, in queue order (the engine's greedy pass over them
        selects them all and preempts the running jobs left out, as the peer's pass does)."""
        now = view.now
        if not view.arrived and not view.completed and now != self.jump:
            return self.order              # a wake-up the peer has no event for: nothing changes
        jobs, queues, limits, knob = self.jobs, self.queues, self.limits, self.knob
        last = len(limits)
        for c in view.completed:
            e = jobs.pop(c.job.index)
            del queues[e[1]][c.job.index]
        dt = 0 if self.prev is None else now - self.prev
        self.prev = now
        for jv in sorted(view.arrived, key=lambda j: j.index):
            jobs[jv.index] = [jv, 0, 0, 0, 0, False, 0.0]
            queues[0][jv.index] = None
        gittins = self.gittins
        for i, e in jobs.items():
            if e[5]:                                   # ran since the previous event
                if dt:
                    e[2] += dt
                    e[3] += dt
                q = e[1]
                while q < last and self.service(e) >= limits[q]:
                    del queues[q][i]
                    q += 1
                    queues[q][i] = None
                    if self.event_demotion:
                        break                          # at most one queue per event
                e[1] = q
            else:
                if e[2] > 0 and dt:
                    e[4] += dt
                if knob and e[1] > 0 and e[3] > 0 and e[2] > 0 and e[4] >= int(e[2] * knob):
                    del queues[e[1]][i]
                    e[1] = 0
                    e[2] = e[4] = 0
                    queues[0][i] = None
                    self.promotions += 1
            if gittins is not None:
                e[6] = peer_gittins_index(gittins, self.service(e))
        free = view.total_gpus
        order = []
        for k, queue in enumerate(queues):
            if not self.list_order:
                keys = sorted(queue, key=lambda i: (not jobs[i][5], i))
                queue = queues[k] = dict.fromkeys(keys)
            if gittins is not None:
                keys = sorted(queue, key=lambda i: (jobs[i][6], -jobs[i][0].arrival), reverse=True)
                queue = queues[k] = dict.fromkeys(keys)
            for i in queue:
                e = jobs[i]
                g = e[0].gpus
                if free >= g:
                    free -= g
                    e[5] = True
                    order.append(e[0])
                else:
                    e[5] = False
        if self.list_order:
            for k, queue in enumerate(queues):
                keys = [i for i in queue if jobs[i][5]]
                if len(keys) < len(queue):
                    keys += [i for i in queue if not jobs[i][5]]
                    queues[k] = dict.fromkeys(keys)
        self.order = order
        self.jump = self._next_jump(now)
        return order

    def _next_jump(self, now):
        limits, last, knob = self.limits, len(self.limits), self.knob
        jump = None
        for e in self.jobs.values():
            if e[5]:
                q = e[1]
                if q < last:
                    if not self.gpu_time:
                        t = now + limits[q] - e[2]
                    elif self.event_demotion:
                        t = now + (limits[q] - e[2]) // e[0].gpus
                    else:                              # the exact crossing
                        t = now + exact_div(limits[q] - e[2] * e[0].gpus, e[0].gpus)
                    if jump is None or t < jump:
                        jump = t
            elif knob and e[1] > 0 and e[3] and e[2] > 0:
                diff = int(e[2] * knob - e[4])
                if diff > 0 and (jump is None or now + diff < jump):
                    jump = now + diff
        return jump


@register_policy("tiresias")
@register_policy("tiresias-peer", queue_order="list", demotion="events")
@register_policy("dlas-gpu-gittins", queue_order="list", demotion="events", gittins_sample="tiresias")
class Tiresias(Policy):
    """Tiresias 2D-LAS (discretized two-dimensional least attained service).

    Parameters
    ----------
    thresholds : sequence of float
        Attained-service thresholds T_1 < T_2 < ... in GPU-seconds (K = len + 1 queues). Default
        ``(3250.0, 7200.0)``, the original simulator's.
    promote_knob : float >= 0
        PROMOTEKNOB P: a demoted job waiting at least P times its executed time returns to Q0
        with its counters reset. 0 (default) disables promotion.
    queue_order : {"arrival", "list"}
        Order inside a queue: running first, then arrival (default); or the peer's list order.
    demotion : {"exact", "events"}
        Demote at the exact crossing (default), or at the peer's events (module docstring).
    service : {"gpu_time", "time"}
        Attained service in GPU-seconds (default) or executed seconds (the peer's ``dlas``).
    gittins_sample : None, "tiresias", str or sequence of int
        Sort each queue by the peer's Gittins index built from this duration sample ("tiresias":
        the peer's own; a path: a CSV with a ``duration`` column). None (default): no sort.

    Attributes
    ----------
    thresholds_ : tuple
        The thresholds in use (integral floats as ints).
    promotions_ : int
        Jobs moved back to Q0 by the PROMOTEKNOB rule.

    Examples
    --------
    A 4-GPU job that has held its GPUs for 1 s (4 GPU-s) is demoted below a newcomer:

    >>> from asrpt.instance import Cluster, Instance, Job
    >>> from asrpt.sim import simulate
    >>> inst = Instance(Cluster.homogeneous(1, 4), (Job("a", 0, 4, processing_time=3),
    ...                                             Job("b", 0, 4, processing_time=1)))
    >>> simulate(inst, Tiresias(thresholds=(4,))).completion_times
    {'a': 4, 'b': 2}
    """

    parameter_constraints = {
        "thresholds": [tuple, list],
        "promote_knob": [Interval(Real, 0, None, closed="left")],
        "queue_order": [Options(str, {"arrival", "list"})],
        "demotion": [Options(str, {"exact", "events"})],
        "service": [Options(str, {"gpu_time", "time"})],
        "gittins_sample": [None, str, list, tuple],
    }
    preemptive = True
    clairvoyant = False
    work_conserving = True

    def __init__(self, *, thresholds=_DEFAULT_THRESHOLDS, promote_knob: float = 0.0,
                 queue_order: str = "arrival", demotion: str = "exact", service: str = "gpu_time",
                 gittins_sample=None):
        self.thresholds = thresholds
        self.promote_knob = promote_knob
        self.queue_order = queue_order
        self.demotion = demotion
        self.service = service
        self.gittins_sample = gittins_sample

    def _check_thresholds(self) -> tuple:
        th = tuple(self.thresholds)
        ok = all(isinstance(t, Real) and not isinstance(t, bool) and t == t and 0 < t < float("inf")
                 for t in th)
        if not th or not ok or any(b <= a for a, b in zip(th, th[1:])):
            raise InvalidParameterError(
                f"The 'thresholds' parameter of {type(self).__name__} must be a non-empty, strictly "
                f"increasing sequence of positive finite numbers. Got {self.thresholds!r} instead.")
        return tuple(_as_exact(t) for t in th)

    def _validate_params(self) -> None:
        super()._validate_params()
        self._check_thresholds()

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self.thresholds_ = self._check_thresholds()
        self.promotions_ = 0
        self._base: dict[int, object] = {}       # executed time at the last counter reset
        self._run_since: dict[int, object] = {}  # first run after the last reset (PROMOTEKNOB)
        self._prev_now = None
        self._state: dict[int, tuple] = {}      # index -> (queue, service, since reset, waiting)
        # (subclasses such as TiresiasGittins may not have the peer options: read them with defaults)
        order = getattr(self, "queue_order", "arrival")
        demotion = getattr(self, "demotion", "exact")
        service = getattr(self, "service", "gpu_time")
        sample = getattr(self, "gittins_sample", None)
        self._peer = None
        if order != "arrival" or demotion != "exact" or service != "gpu_time" or sample is not None:
            table = None if sample is None else peer_gittins_table(_load_sample(sample))
            self._peer = _PeerLAS(self.thresholds_, order == "list", demotion == "events",
                                  service == "gpu_time", self.promote_knob, table)

    # -- queues ---------------------------------------------------------------------------------
    def _queue(self, service) -> int:
        th = self.thresholds_
        if isinstance(service, float):
            service = service + 1e-9 * max(1.0, service)
        return bisect.bisect_right(th, service)

    def _within_queue_key(self, view, job, service, running: bool) -> tuple:
        """Order inside a queue: running jobs first, then by arrival, then id."""
        return (0 if running else 1, job.arrival, job.key)

    def _prepare(self, view) -> None:
        """Hook for subclasses, called at the start of each decision."""

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

    def report(self) -> dict:
        if self._peer is not None:
            return {"promotions": self._peer.promotions}
        return {"promotions": self.promotions_}


for _k in _KNOBS:
    register_policy(f"dlas-gpu-{_k:g}", queue_order="list", demotion="events", promote_knob=_k)(Tiresias)
