"""Plain SRSF / SRTF: shortest remaining (predicted) size first, preemptive (the reference copy
of :mod:`asrpt.policies.srsf`).

**Rule.** At every decision every active job gets its remaining size

- ``key="gpu_time"`` (SRSF): ``g_j (N^_j - n_j) tau*_j``, or ``key="time"`` (SRTF):
  ``(N^_j - n_j) tau*_j``,

from its predicted work ``N^_j`` (``predictor``; the truth with the default ``"oracle"``) and
the work it has done ``n_j``, the remaining work floored at 0. The jobs are listed by that size,
then earlier arrival, then smaller job id, and the engine fills the GPUs greedily in that order
(skipping jobs that do not fit) and preempts the running jobs left out.

**Outliving a prediction** (``adaptive``). Before ranking, a job whose work done has reached its
prediction (:meth:`~asrpt.predict.base.PredictionTracker.reached`) gets a new one:
``"doubling"`` doubles it until it exceeds the work done, ``"repredict"`` asks the predictor
again (twice the work done if it answers less), ``"off"`` keeps it (the job then ranks with size
0). The running jobs are checked first (in the view's order), then the waiting ones. After the
decision is applied the policy asks to be woken when the first running job (not stopping) reaches
its prediction at its current iteration time (never with ``"off"``).

**Hysteresis** (``epsilon``). A running job that is not stopping ranks with its size times
``1 - epsilon``.

Examples
--------
>>> from asrpt.sim import simulate
>>> simulate(two_server_instance, ReferenceSRSF()).completion_times
{'a': 4, 'b': 1, 'c': 3}
"""

from __future__ import annotations

from ...sizes import exact_mul
from ...predict.base import DEFAULT_ADAPTIVE
from ...state import Decision
from ..base import PredictorPolicy
from ..srsf import SRSF

__all__ = ["ReferenceSRSF"]


class ReferenceSRSF(PredictorPolicy):
    """Shortest remaining GPU-time (or time) first, recomputed at every decision."""

    name = "srsf"
    parameter_constraints = SRSF.parameter_constraints
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

    def _raise_if_reached(self, view, job) -> None:
        tracker = self.tracker_
        if self.adaptive != "off" and tracker.reached(view, job):
            tracker.set(job, tracker.overrun(view, job, self.adaptive))
            self.adaptive_updates_ += 1

    def _size(self, view, job):
        left = self.tracker_.predicted[job.index] - view.attained_work(job)
        if left < 0:
            left = 0
        size = exact_mul(left, job.tau_star)
        if self.key == "gpu_time":
            size = exact_mul(size, job.gpus)
        if self.epsilon and view.is_running(job) and not view.is_stopping(job):
            size = size * (1 - self.epsilon)
        return size

    def decide(self, view):
        self.tracker_.update(view)
        jobs = list(view.active())              # running (in the view's order), then waiting
        for job in jobs:
            self._raise_if_reached(view, job)
        order = sorted(jobs, key=lambda job: (self._size(view, job), job.arrival, job.key, job.index))
        return Decision(order, backfill=True)

    def next_wake(self, view):
        """The first time after now at which a running job (not stopping) reaches its
        prediction, ``(N^_j - n_j) x (its iteration time)`` after it progresses again
        (:meth:`~asrpt.state.ClusterView.resume_time`: now, or the end of a restart), or None."""
        if self.adaptive == "off":
            return None
        now, wake = view.now, None
        for job in view.running:
            left = self.tracker_.predicted[job.index] - view.attained_work(job)
            if left > 0 and not view.is_stopping(job):
                t = view.resume_time(job) + left * view.iteration_time(job)
                if t > now and (wake is None or t < wake):
                    wake = t
        return wake

    def report(self) -> dict:
        return {**super().report(), "adaptive_updates": self.adaptive_updates_}
