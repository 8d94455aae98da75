"""The SRSF/SRTF policy as it was before the incremental ranking (issue 18), kept unchanged as the
reference that tests/policies/test_srsf_incremental.py compares the new one against, decision by
decision. Not registered; not part of the package.

See asrpt/policies/srsf.py for the rules.
"""

from __future__ import annotations

from numbers import Real

from asrpt._validation import Interval, Options
from asrpt.sizes import exact_mul
from asrpt.policies.base import Decision, PredictorPolicy

__all__ = ["ReferenceSRSF"]


class ReferenceSRSF(PredictorPolicy):
    """Shortest remaining service (GPU-time) or remaining time first, preemptive.

    Parameters
    ----------
    key : {"gpu_time", "time"}
        Rank by remaining GPU-time g_j r_j (SRSF, default) or remaining time r_j (SRTF).
    predictor : str or Predictor
        Source of the total work N^_j (default ``"oracle"``: the truth).
    adaptive : {"doubling", "repredict", "off"}
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

    """

    parameter_constraints = {
        "key": [Options(str, {"gpu_time", "time"})],
        "predictor": "no_validation",
        "adaptive": [Options(str, {"doubling", "repredict", "off"})],
        "epsilon": [Interval(Real, 0, 1, closed="left")],
    }
    preemptive = True
    work_conserving = True

    def __init__(self, *, key: str = "gpu_time", predictor="oracle", adaptive: str = "doubling",
                 epsilon: float = 0.0):
        self.key = key
        self.predictor = predictor
        self.adaptive = adaptive
        self.epsilon = epsilon

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self.adaptive_updates_ = 0
        self._left: dict[int, object] = {}  # index -> predicted remaining work at the last decision

    def _raise_prediction(self, view, job, work, done):
        """A new prediction for a job whose work done reached ``work``."""
        if self.adaptive == "doubling":
            new = work * 2
            while new <= done:
                new *= 2
        else:
            new = self.tracker_.repredict(view, job)
            if new <= done:  # a re-prediction must exceed what is already done
                new = done * 2 if done else work * 2
        self.tracker_.set(job, new)
        self.adaptive_updates_ += 1
        return new

    def decide(self, view):
        tracker = self.tracker_
        tracker.update(view)
        pred = tracker.predicted
        adaptive = self.adaptive != "off"
        gpu_time = self.key == "gpu_time"
        discount = 1 - self.epsilon if self.epsilon else None
        keys = {}
        left_of = {}
        for job in view.active():
            i = job.index
            work = pred[i]
            done = view.attained_work(job)
            if adaptive and (done >= work or tracker.reached(view, job)):  # the shared rule (issue 13)
                work = self._raise_prediction(view, job, work, done)
            left = work - done
            if left < 0:
                left = 0
            left_of[i] = left
            size = exact_mul(left, job.tau_star)
            if gpu_time:
                size = exact_mul(size, job.gpus)
            if discount is not None and view.is_running(job) and not view.is_stopping(job):
                size = size * discount
            keys[i] = (size, job.arrival, job.key)
        self._left = left_of
        order = sorted(view.active(), key=lambda j: keys[j.index])
        return Decision(order, backfill=True)

    def next_wake(self, view):
        """After the decision was applied: the first time a running job reaches its prediction
        (at its iteration time on its placement; a restart after a preemption makes the true time
        later, and the early wake-up then just asks again), or None."""
        if self.adaptive == "off":
            return None
        now = view.now
        left_of = self._left
        wake = None
        for job in view.running:
            left = left_of.get(job.index, 0)
            if left > 0 and not view.is_stopping(job):
                t = now + left * view.iteration_time(job)
                if t > now and (wake is None or t < wake):
                    wake = t
        return wake

    def report(self) -> dict:
        return {**super().report(), "adaptive_updates": self.adaptive_updates_}
