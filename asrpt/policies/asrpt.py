"""A-SRPT, the online algorithm of model.md section 6, with every option exposed.

At every decision point:

1. advance the virtual single machine (preemptive SRPT, :class:`~asrpt.single.srpt.SRPTMachine`)
   to now;
2. predict each new job's work N^_j (the ``predictor``), compute its virtual size
   ``p~_j = g_j N^_j tau*_j / M`` and add it to the virtual machine;
3. adaptive step (``adaptive``): a job whose work done reached its prediction without finishing
   gets a new prediction, ``"doubling"`` (N^ <- 2 N^) or ``"repredict"`` (the predictor again,
   given the work done); its virtual size grows accordingly. ``"off"`` (the theorem's setting)
   keeps predictions static;
4. priority list: unfinished jobs by (virtual remaining r~_j, C~_j for virtually finished jobs,
   job id) (``order="virtual"``), or by predicted remaining GPU-time g_j (N^_j - n_j) tau*_j
   (``order="actual"``, the SRSF-PRED ablation);
5. the engine selects greedily in that order (``backfill``), preempts running jobs left out
   (``preemption``; without it running jobs keep their GPUs and only waiting jobs are ordered)
   and places the new ones (``placement``).

The virtual machine's completion times C~_j, the virtual sizes and the predictions are recorded in
the run's ``policy_data`` (the certificate of Theorem 1 reads them).

The priority list is maintained incrementally: virtually finished jobs in finishing order, then
the virtually unfinished ones in a sorted list whose keys change only for the job the virtual
machine is processing; a decision costs O(log n) per arrival, completion or resize plus the
length of the prefix the engine reads, never O(number of finished jobs).
"""

from __future__ import annotations

import heapq
import itertools
from operator import itemgetter

from sortedcontainers import SortedList

from .._validation import Options
from ..instance import id_key
from ..single.srpt import SRPTMachine
from ..sizes import exact_div, exact_mul
from .base import Decision, PredictorPolicy, register_policy

__all__ = ["ASRPT"]

_VIEW = itemgetter(3)  # the JobView in an entry (r~, tie, index, view) of the unfinished list


@register_policy("a-srpt")
@register_policy("a-srpt-oracle", predictor="oracle")
@register_policy("a-srpt-mean", predictor="group_mean")
@register_policy("a-srpt-static", adaptive="off")
@register_policy("a-srpt-no-preemption", preemption=False)
@register_policy("a-srpt-srsf-order", order="actual")
@register_policy("a-srpt-strict", backfill=False)
@register_policy("a-srpt-consolidate", placement="best_fit")
class ASRPT(PredictorPolicy):
    """Adaptive SRPT guided by a virtual single machine.

    Parameters
    ----------
    predictor : str or Predictor
        Source of N^_j (default ``"instance"``: the instance's own predictions, the truth where a
        job has none).
    order : {"virtual", "actual"}
        Priority by virtual remaining size (A-SRPT) or by predicted remaining GPU-time (SRSF-PRED).
    backfill : bool
        Let smaller jobs further down the list fill the gaps.
    preemption : bool
        Preempt running jobs that fall out of the selected set.
    adaptive : {"off", "doubling", "repredict"}
        What to do when a job outlives its prediction (default ``"doubling"``; ``"off"`` for the
        theorem).
    placement : str or None
        Placement method for starting jobs (None: the simulator's default, ``"best_fit"``).

    Examples
    --------
    The worked example of model.md section 9:

    >>> from asrpt.instance import load_instance
    >>> from asrpt.sim import simulate
    >>> res = simulate(load_instance("instances/worked-example.json"), "a-srpt")
    >>> res.completion_times, res.policy_data["virtual_completion_times"]
    ({'A': 5, 'B': 1, 'C': 3}, {'A': Fraction(7, 2), 'B': 1, 'C': Fraction(3, 2)})
    """

    parameter_constraints = {
        "predictor": "no_validation",
        "order": [Options(str, {"virtual", "actual"})],
        "backfill": ["boolean"],
        "preemption": ["boolean"],
        "adaptive": [Options(str, {"off", "doubling", "repredict"})],
        "placement": [None, str],
    }

    def __init__(self, *, predictor="instance", order: str = "virtual", backfill: bool = True,
                 preemption: bool = True, adaptive: str = "doubling", placement: str | None = None):
        self.predictor = predictor
        self.order = order
        self.backfill = backfill
        self.preemption = preemption
        self.adaptive = adaptive
        self.placement = placement

    @property
    def preemptive(self) -> bool:  # type: ignore[override]
        return self.preemption

    @property
    def work_conserving(self) -> bool:  # type: ignore[override]
        return self.backfill and self.preemption

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self.total_gpus_ = cluster.total_gpus
        self._tie: dict[int, tuple] = {}
        self.machine_ = SRPTMachine(tie_key=self._tie.__getitem__)
        self._views: dict = {}
        self._done_order: dict = {}                 # virtually finished, active: index -> view
        self._unfinished = SortedList()             # (r~, tie, index) of virtually unfinished, active
        self._stored: dict[int, tuple] = {}         # index -> its entry in _unfinished
        self.virtual_sizes_: dict[str, object] = {}
        self.adaptive_updates_ = 0
        self._alarms: list = []                     # (time, index, token) heap of prediction crossings
        self._alarm_token: dict[int, int] = {}

    # -- the virtual machine and the incremental order ------------------------------------------
    def _virtual_size(self, job, work):
        return exact_div(exact_mul(job.gpus, exact_mul(work, job.tau_star)), self.total_gpus_)

    def _insert(self, i: int) -> None:
        entry = (self.machine_.remaining(i), self._tie[i], i, self._views[i])
        self._stored[i] = entry
        self._unfinished.add(entry)

    def _remove(self, i: int) -> None:
        entry = self._stored.pop(i, None)
        if entry is not None:
            self._unfinished.remove(entry)
        else:
            self._done_order.pop(i, None)

    def _sync(self) -> None:
        """Move jobs the virtual machine finished to the done list (they sit at the front of the
        unfinished list, in finishing order) and refresh the running job's stale key."""
        m = self.machine_
        unfinished = self._unfinished
        while unfinished:
            i = unfinished[0][2]
            if m.completion_time(i) is None:
                break
            unfinished.pop(0)
            del self._stored[i]
            self._done_order[i] = self._views[i]
        cur = m.running
        if cur is not None and cur in self._stored:
            self._unfinished.remove(self._stored[cur])
            self._insert(cur)

    def _resize(self, view, job, work, adaptive=True) -> None:
        self.tracker_.set(job, work)
        self.adaptive_updates_ += adaptive
        i = job.index
        size = self._virtual_size(job, work)
        self._remove(i)
        self.machine_.resize(i, max(size, self.machine_.attained(i)))
        self.virtual_sizes_[job.id] = self.machine_.size(i)
        if self.machine_.completion_time(i) is None:
            self._insert(i)
        else:
            self._done_order[i] = job
        self._sync()

    def decide(self, view):
        now = view.now
        m = self.machine_
        m.advance(now)
        self._sync()
        for c in view.completed:
            self._remove(c.job.index)
            self._alarm_token.pop(c.job.index, None)
        for job in self.tracker_.update(view):
            i = job.index
            work = self.tracker_.predicted[i]
            self._views[i] = job
            self._tie[i] = job.key
            size = self._virtual_size(job, work)
            self.virtual_sizes_[job.id] = size
            m.add(i, now, size)
            self._sync()
            if m.completion_time(i) is None:
                self._insert(i)
            else:                                   # a zero-size job finishes virtually at once
                self._done_order[i] = job
        for job in self.tracker_.revised:           # waiting siblings re-predicted on a completion
            self._resize(view, job, self.tracker_.predicted[job.index], adaptive=False)
        if self.adaptive != "off":
            self._adaptive_step(view)
        if self.order == "virtual":
            order = itertools.chain(self._done_order.values(), map(_VIEW, self._unfinished))
        else:
            pred = self.tracker_.predicted
            order = sorted(view.active(), key=lambda j: (
                j.gpus * (pred[j.index] - view.attained_work(j)) * j.tau_star, j.key))
        if not self.preemption:
            order = [j for j in order if not view.is_running(j)]
        return Decision(order, backfill=self.backfill)

    # -- the adaptive step: an alarm per running job at the time it reaches its prediction -----
    def _track(self, view) -> None:
        """Arm alarms for jobs that started, disarm them for jobs that stopped."""
        tokens = self._alarm_token
        for job in view.stopped:
            tokens[job.index] = tokens.get(job.index, 0) + 1
        for job in view.started:
            tokens[job.index] = tokens.get(job.index, 0) + 1
            self._arm(view, job)

    def _arm(self, view, job) -> None:
        left = self.tracker_.predicted[job.index] - view.attained_work(job)
        t = view.now + left * view.iteration_time(job) if left > 0 else view.now
        heapq.heappush(self._alarms, (t, job.index, self._alarm_token[job.index]))

    def _adaptive_step(self, view) -> None:
        """Re-predict running jobs whose work done reached their prediction (model.md 6, step 3)."""
        self._track(view)
        alarms, tokens, pred = self._alarms, self._alarm_token, self.tracker_.predicted
        now = view.now
        due = []
        while alarms and alarms[0][0] <= now:
            due.append(heapq.heappop(alarms))
        for _, i, token in due:
            job = self._views[i]
            if token != tokens.get(i) or not view.is_running(job):
                continue
            done = view.attained_work(job)
            if done >= pred[i]:
                if self.adaptive == "doubling":
                    new = pred[i] * 2
                    while new <= done:
                        new *= 2
                else:
                    new = self.tracker_.repredict(view, job)
                    if not new > done:  # a re-prediction must exceed what is already done
                        new = done * 2
                self._resize(view, job, new)
            # The next crossing (or the same one, if a restart delayed it). Armed after the loop, so
            # a crossing that rounds to `now` waits for the next decision instead of looping.
            self._arm(view, job)

    def next_wake(self, view):
        if self.adaptive == "off":
            return None
        self._track(view)
        alarms, tokens = self._alarms, self._alarm_token
        while alarms and alarms[0][2] != tokens.get(alarms[0][1]):
            heapq.heappop(alarms)
        return alarms[0][0] if alarms else None

    def report(self) -> dict:
        m = self.machine_
        m.run()
        keys = {i: self._views[i].id for i in self._views}
        return {
            "virtual_completion_times": {keys[i]: c for i, c in sorted(
                m.completion_times().items(), key=lambda item: id_key(keys[item[0]]))},
            "virtual_sizes": {k: self.virtual_sizes_[k] for k in sorted(self.virtual_sizes_, key=id_key)},
            **super().report(),
            "adaptive_updates": self.adaptive_updates_,
        }
