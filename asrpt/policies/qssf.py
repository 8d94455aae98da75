"""QSSF, the quasi-shortest-service-first policy of Helios (Hu et al., SC'21), non-preemptive.

Each job gets a priority when it arrives, its predicted GPU-time g_j x D^_j (D^_j = N^_j tau*_j,
the predicted duration), and waiting jobs are started smallest priority first; ties go to the
smaller GPU demand (the Helios artifact sorts its queue by GPU count before its stable sort by
priority), then the earlier arrival, then the smaller job id. Running jobs are never preempted.
By default the scan stops at the first job that does not fit (strict head-of-line blocking, as in
the artifact: ``qssf``); ``backfill=True`` skips it and goes on (``qssf-ff``).

**Estimator.** The Helios estimator fuzzy-matches job *names* against the history of completed
jobs of the same user, preferring the same GPU count, with job-name, user and global means as
fallbacks. Our instances carry no job names, so the default ``predictor="group_mean"`` is the
nearest equivalent: the mean work of completed jobs of the same recurring group (the instance's
``group``, our stand-in for a job name), else the same user's mean, else the median of all
completed jobs, else a prior of 3600 s (see :class:`~asrpt.predict.base.GroupMeanPredictor`). The
history is updated at each completion, before the jobs arriving at that instant are predicted; a
job's priority is fixed once computed (as in the artifact). Any registered predictor can be used
instead (e.g. the random forest of A-SRPT, or ``"oracle"``).

Waiting jobs are kept in a sorted Python list (a job's priority is fixed once computed): a
decision costs a bisection and a move of W pointers (in C) per arrival or start, plus the part of
the list the engine scans.
"""

from __future__ import annotations

from operator import itemgetter

from .._sorted import insort, remove_sorted
from ..sizes import exact_mul
from .base import Decision, PredictorPolicy, register_policy

__all__ = ["QSSF"]

_VIEW = itemgetter(5)


@register_policy("qssf")
@register_policy("qssf-ff", backfill=True)
class QSSF(PredictorPolicy):
    """Quasi-shortest-service-first: smallest predicted GPU-time first, non-preemptive.

    Parameters
    ----------
    predictor : str or Predictor
        Source of the predicted work N^_j (default ``"group_mean"``).
    backfill : bool
        Skip jobs that do not fit (True, ``qssf-ff``) or stop at the first one (False, the
        default: head-of-line blocking as in Helios).

    Attributes
    ----------
    tracker_ : PredictionTracker
        The run's predictions.

    Examples
    --------
    At t=0 nothing has completed: a and b get the 3600 s prior (priorities 7200 and 14400
    GPU-s) and both fit. When c arrives at t=1, b has just completed in 1 s, so c is predicted
    1 s (the median of the history) and starts on the idle GPUs.

    >>> from asrpt.sim import simulate
    >>> simulate(two_server_instance, "qssf").completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """

    parameter_constraints = {"predictor": "no_validation", "backfill": ["boolean"]}
    preemptive = False

    def __init__(self, *, predictor="group_mean", backfill: bool = False):
        self.predictor = predictor
        self.backfill = backfill

    @property
    def work_conserving(self) -> bool:  # type: ignore[override]
        return self.backfill

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._queue: list = []              # sorted (gpu-time, gpus, arrival, id key, index, view) of waiting jobs
        self._entry: dict[int, tuple] = {}

    def decide(self, view):
        tracker = self.tracker_
        queue, entry = self._queue, self._entry
        for job in view.started:            # started by the previous decision: no longer waiting
            remove_sorted(queue, entry.pop(job.index))
        for job in tracker.update(view):
            gpu_time = exact_mul(job.gpus, exact_mul(tracker.predicted[job.index], job.tau_star))
            e = (gpu_time, job.gpus, job.arrival, job.key, job.index, job)
            entry[job.index] = e
            insort(queue, e)
        return Decision(map(_VIEW, queue), backfill=self.backfill)
