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
"""

from __future__ import annotations

import bisect
from numbers import Real

from .._validation import Interval
from ..errors import InvalidParameterError
from ..sizes import exact_div, exact_mul
from .base import Decision, Policy, register_policy

__all__ = ["Tiresias"]

_DEFAULT_THRESHOLDS = (3250.0, 7200.0)


def _as_exact(x):
    """An integral float as an int (so exact instances stay exact); anything else unchanged."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


def _reached(value, target) -> bool:
    """value >= target, with a relative tolerance of 1e-9 when floats are involved."""
    if isinstance(value, float) or isinstance(target, float):
        return value >= target - 1e-9 * max(1.0, abs(float(target)))
    return value >= target


@register_policy("tiresias")
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
    }
    preemptive = True
    clairvoyant = False
    work_conserving = True

    def __init__(self, *, thresholds=_DEFAULT_THRESHOLDS, promote_knob: float = 0.0):
        self.thresholds = thresholds
        self.promote_knob = promote_knob

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
        per second). None if there is none."""
        now = view.now
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
        return {"promotions": self.promotions_}
