"""SRSF and SRTF: preemptive shortest-remaining-size baselines (the
``shortest-gpu`` and ``shortest`` comparators of the Tiresias simulator).

At every decision point every active job is ranked by its remaining size,

- ``key="gpu_time"`` (SRSF): remaining GPU-time R_j(t) = g_j r_j(t),
- ``key="time"`` (SRTF): remaining time r_j(t),

with r_j(t) = (N^_j - n_j(t)) tau*_j: the predicted work N^_j (``predictor``; the truth with the
default ``"oracle"``) minus the work done n_j(t) (observable by anyone: ``view.attained_work``),
in seconds at the job's best iteration time tau*_j (so a waiting job and a running one are
compared on the same scale, whatever their current placement). Ties go to the earlier arrival,
then the smaller job id. The engine then fills the GPUs greedily in that order, skipping jobs that
do not fit, and preempts the running jobs left out.

**-PRED variants and jobs that outlive their prediction.** With any predictor other than the
oracle the remaining size is predicted, and a job may reach N^_j without finishing. ``adaptive``
says what happens then, as in :class:`~asrpt.policies.asrpt.ASRPT`:

- ``"conditional"`` (default): the larger of the predictor's answer given the work done and
  doubling's value (with a predictor that does not re-predict, doubling);
- ``"doubling"``: N^_j <- 2 N^_j (repeatedly, until it exceeds the work done);
- ``"repredict"``: ask the predictor again given the work done (at least twice the work done if
  it answers less);
- ``"off"``: keep N^_j; the remaining size is floored at 0, so an overdue job ranks first, ahead
  of every job with a positive remaining size, and is never preempted again (the naive rule: one
  long underestimated job can hold its GPUs until it ends).

With the first three the policy asks to be woken (:meth:`SRSF.next_wake`) at the first time a
running job reaches its prediction, so the re-ranking happens exactly then (the rules:
:meth:`~asrpt.predict.base.PredictionTracker.overrun`).

With the oracle none of this triggers (a job reaches its true work when it completes).

**Hysteresis.** With ``epsilon > 0`` a running job's size is multiplied by (1 - epsilon) for the
ranking, so a waiting job overtakes a running one only if its size is below (1 - epsilon) times
the running job's (an anti-thrashing margin). Jobs running on to an iteration boundary
after a preemption do not get the discount.

Registered: ``srsf`` and ``srtf`` (oracle), ``srsf-pred`` and ``srtf-pred`` (``predictor=
"instance"``: the instance's own predictions N^_j, the same ones A-SRPT uses by default, so that
``srsf-pred`` is exactly "A-SRPT without the virtual-machine guide", the ablation of section 4.5;
jobs without a prediction fall back to the truth) and ``srsf-mean`` (``predictor="group_mean"``:
learned online from completed jobs, non-clairvoyant).

**Incremental ranking.** A waiting job's key does not move with time (its work done is frozen and
its prediction changes only when it is raised), so waiting jobs are kept in a sorted list updated
only for the jobs that arrived, started, stopped or completed since the previous decision (read
from the view's deltas, also in :meth:`SRSF.next_wake`, which may see them first). Only the R
running jobs, whose remaining sizes shrink, are re-keyed at each decision; the order is the merge
of the two sorted runs. A decision costs O(R log R + k log W + A) for k changed jobs (the O(A)
is the merge and the list handed to the engine, in C), against O(A log A) with A key
computations before; the decisions are identical (tests/policies/test_srsf_incremental.py).
The R running jobs are keyed in numpy where the engine's progress and the predictions are floats
(:mod:`asrpt.policies._running`: the same IEEE operations in the same order, so the same keys;
exact runs keep the Python loop; tests/policies/test_running_arrays.py).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from numbers import Real

import numpy as np

from .._validation import Interval, Options
from ..predict.base import ADAPTIVE_RULES, DEFAULT_ADAPTIVE, prediction_reached
from ..sizes import exact_mul
from ..sizes import floaty
from ._incremental import MergedOrder
from ._running import (ArrayRun, JobTable, RunningLeft, SortedCrossings, TupleRun, crossings, merged_chunks,
                       running_inputs)
from .base import Decision, PredictorPolicy, register_policy

__all__ = ["SRSF"]


@register_policy("srsf")
@register_policy("srtf", key="time")
@register_policy("srsf-pred", predictor="instance")
@register_policy("srtf-pred", key="time", predictor="instance")
@register_policy("srsf-mean", predictor="group_mean")
class SRSF(PredictorPolicy):
    """Shortest remaining service (GPU-time) or remaining time first, preemptive.

    Parameters
    ----------
    key : {"gpu_time", "time"}
        Rank by remaining GPU-time g_j r_j (SRSF, default) or remaining time r_j (SRTF).
    predictor : str or Predictor
        Source of the total work N^_j (default ``"oracle"``: the truth).
    adaptive : {"conditional", "doubling", "repredict", "off"}
        What happens when a job reaches its prediction without finishing (module docstring).
    epsilon : float in [0, 1)
        Anti-thrashing hysteresis: a waiting job displaces a running one only if its size is
        below (1 - epsilon) times the running job's (0: plain SRSF).

    Attributes
    ----------
    tracker_ : PredictionTracker
        The run's predictions (``tracker_.predicted[job.index]``).
    adaptive_updates_ : int
        How many times a prediction was raised because a job outlived it.

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> simulate(two_server_instance, "srsf").completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """

    parameter_constraints = {
        "key": [Options(str, {"gpu_time", "time"})],
        "predictor": "no_validation",
        "adaptive": [Options(str, set(ADAPTIVE_RULES))],
        "epsilon": [Interval(Real, 0, 1, closed="left")],
    }
    preemptive = True
    work_conserving = True

    def __init__(self, *, key: str = "gpu_time", predictor="oracle", adaptive: str = DEFAULT_ADAPTIVE,
                 epsilon: float = 0.0):
        self.key = key
        self.predictor = predictor
        self.adaptive = adaptive
        self.epsilon = epsilon

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self.adaptive_updates_ = 0
        self._waiting: list[tuple] = []     # sorted (size, arrival, key, index) of waiting jobs
        self._entry: dict[int, tuple] = {}  # index -> its entry in _waiting
        self._views: dict[int, object] = {}  # index -> JobView of every active job
        self._pending: dict[int, object] = {}  # jobs whose state changed since they were keyed
        self._left: dict[int, object] = {}     # index -> predicted remaining work, last keyed
        self._cross: list = []                 # heap (time it reaches its prediction, index) of running jobs
        self._table = JobTable()               # per-job arrays for the numpy pass (_running_arrays)
        self._running_left = None              # the running jobs' _left from the numpy pass (RunningLeft)

    def _note_changes(self, view) -> None:
        """Record the view's deltas (shown once, to decide or next_wake, whichever comes first)."""
        pending = self._pending
        add = self._table.add
        for job in view.arrived:
            add(job)
        for group in (view.arrived, view.started, view.stopped):
            for job in group:
                pending[job.index] = job
                self._views[job.index] = job
        for c in view.completed:
            i = c.job.index
            pending.pop(i, None)
            self._unlist(i)
            self._left.pop(i, None)
            self._views.pop(i, None)

    def _unlist(self, i: int) -> None:
        entry = self._entry.pop(i, None)
        if entry is not None:
            waiting = self._waiting
            del waiting[bisect_left(waiting, entry)]

    def _raise_prediction(self, view, job):
        """A new prediction for a job whose work done reached its prediction (the tracker's one
        adaptive rule, shared with A-SRPT)."""
        new = self.tracker_.overrun(view, job, self.adaptive)
        self.tracker_.set(job, new)
        self.adaptive_updates_ += 1
        return new

    def _size(self, view, job, pred, running: bool):
        """The ranking size of ``job`` now (raising its prediction first if it is overdue)."""
        i = job.index
        work = pred[i]
        done = view.attained_work(job)
        if self.adaptive != "off" and self.tracker_.reached(view, job, done):
            work = self._raise_prediction(view, job)
        left = work - done
        if left < 0:
            left = 0
        self._left[i] = left
        size = exact_mul(left, job.tau_star)
        if self.key == "gpu_time":
            size = exact_mul(size, job.gpus)
        if running and self.epsilon and not view.is_stopping(job):
            size = size * (1 - self.epsilon)
        return size

    def _running_keys(self, view, pred):
        """The ranking entries of the running jobs, whose remaining sizes move, as a sorted run
        (:mod:`asrpt.policies._running`): ``_size`` of each (the same arithmetic), from one pass
        over the engine's progress, in numpy where the values are floats
        (:meth:`_running_arrays`); also notes when each reaches its prediction (``_cross``, a heap
        read by :meth:`_next_crossing`)."""
        run = self._running_arrays(view, pred)
        if run is None:
            entries = self._running_tuples(view, pred)
            entries.sort()
            run = TupleRun(entries)
        return run

    def _running_arrays(self, view, pred):
        """The numpy form of :meth:`_running_tuples` (the same numbers: the same IEEE operations in
        the same order), or None (nothing done) where the engine's arrays or the predictions are not
        all floats; jobs that reached their prediction are raised in Python, in running order."""
        epsilon = self.epsilon
        got = None if epsilon and type(epsilon) is not float else running_inputs(view, self._table, self.tracker_)
        if got is None:
            return None
        idx, done, tau, stopping, preds = got
        work = preds[idx]
        now = view.now
        left = work - done
        # prediction_reached: left <= 0 or now + left * tau <= now; with tau > 0 the first implies
        # the second. `when` is also the crossing time (crossings' numbers). `positive`: no job
        # at its prediction, so every left is > 0 (left * tau > 0 with tau > 0) and every job has
        # a crossing, at `when`.
        positive = False
        if self.adaptive != "off":
            when = now + left * tau
            cross = SortedCrossings(when, idx)
            positive = cross.after(now)
            if not positive:
                reached = (when <= now).nonzero()[0]
                views = self._views
                who = idx[reached].tolist()
                raised = [self._raise_prediction(view, views[i]) for i in who]
                if not all(map(floaty, raised)):   # a new prediction floats cannot hold
                    return TupleRun(sorted(self._running_tuples(view, pred, set(who))))
                work[reached] = raised
                left[reached] = work[reached] - done[reached]
        if not positive:    # (else the maximum is left itself)
            np.maximum(left, 0.0, out=left)
        t = self._table
        tau_star, gpus, rank = t.columns(idx)
        size = left * tau_star
        if self.key == "gpu_time":
            size = size * gpus
        if epsilon:
            size = np.where(stopping, size, size * (1 - epsilon))
        self._running_left = RunningLeft(idx, left, self._left)
        resume = view.running_resumes() if self.adaptive != "off" else None   # (restarting jobs cross later)
        self._cross = cross if positive and resume is None else crossings(now, left, tau, idx, resume)
        return ArrayRun(size, idx, t, rank)

    def _running_tuples(self, view, pred, raised=frozenset()) -> list:
        """The ranking entries ``(size, arrival, key, index)`` of the running jobs (the Python
        path); jobs in ``raised`` already got their new prediction in this pass."""
        now = view.now
        adaptive = self.adaptive != "off"
        gpu_time = self.key == "gpu_time"
        epsilon = self.epsilon
        left_of = self._left
        self._running_left = None
        running = []
        cross = self._cross = []
        for job, done, tau, stopping in view.running_progress():
            i = job.index
            work = pred[i]
            if adaptive and i not in raised:
                rest = work - done
                if prediction_reached(now, rest, tau):
                    work = self._raise_prediction(view, job)
            left = work - done
            if left < 0:
                left = 0
            left_of[i] = left
            tau_star = job.tau_star
            if type(left) is float and type(tau_star) is float:
                size = left * tau_star
                if gpu_time:
                    size = size * job.gpus
            else:
                size = exact_mul(left, tau_star)
                if gpu_time:
                    size = exact_mul(size, job.gpus)
            if epsilon and not stopping:
                size = size * (1 - epsilon)
            running.append((size, job.arrival, job.key, i))
            if left > 0:
                cross.append((view.resume_time(job) + left * tau, i))
        heapq.heapify(cross)
        return running

    def _next_crossing(self, view):
        """The tracker's next crossing from the ones noted at the decision (``_cross``)."""
        left = self._running_left if self._running_left is not None else self._left
        return self.tracker_.noted_crossing(view, left, self._cross, self._views)

    def decide(self, view):
        tracker = self.tracker_
        tracker.update(view)
        self._note_changes(view)
        views, pending = self._views, self._pending
        for job in tracker.revised:            # waiting siblings re-predicted: key them again
            if job.index in views:
                pending.setdefault(job.index, views[job.index])
        pred = tracker.predicted
        running = self._running_keys(view, pred)
        waiting, entry_of = self._waiting, self._entry
        for i, job in self._pending.items():  # in the order the jobs changed (waiting order)
            self._unlist(i)
            if not view.is_running(job):      # waiting now: keyed once until it starts again
                entry = (self._size(view, job, pred, False), job.arrival, job.key, i)
                entry_of[i] = entry
                insort(waiting, entry)
        self._pending.clear()
        return Decision(MergedOrder(running, waiting, self._views, merge=merged_chunks), backfill=True)

    def next_wake(self, view):
        """After the decision was applied: the first time a running job reaches its prediction
        (:meth:`PredictionTracker.next_crossing`), or None."""
        self._note_changes(view)
        return None if self.adaptive == "off" else self._next_crossing(view)

    def report(self) -> dict:
        return {**super().report(), "adaptive_updates": self.adaptive_updates_}
