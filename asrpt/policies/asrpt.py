"""A-SRPT, the online algorithm: a virtual machine guides the cluster's order, every option exposed.

At every decision point:

1. advance the virtual machine to now. Three are available (``virtual``):

   - ``"envelope"`` (default): the fluid machine below, each completion held back to the job's
     own length, ``C~_j = max(C^f_j, a_j + P^_j)`` with ``P^_j = N^_j tau*_j``
     (:mod:`asrpt.single.envelope`): its total is within ``2 mu_over`` of the optimum, so the
     guarded order has a proven ratio (``proofs/theorem2.md``, Lemma 7, Corollary 2), and its
     deadlines never come before a job could finish alone. ``C~_j`` is known when the fluid
     machine finishes j (``a_j + P^_j`` from the arrival on). It ranks no unfinished jobs, so it
     guides the guarded and actual orders only (``order="virtual"`` needs ``"gang"`` or
     ``"fluid"``). A new prediction of a job the fluid machine has finished moves its ``C~_j``,
     and its deadline with it;
   - ``"gang"``: the gang-aware fluid relaxation of :mod:`asrpt.single.gang`, in which job j is
     served on at most g_j of the M GPUs, by gang-capped SRPT on ``P^_j``; its completions
     satisfy ``C~_j >= a_j + P^_j``, but a stream of wide jobs starves narrow ones and its total is
     not within any constant of the optimum (``proofs/theorem2.md``, Counterexample 3). The
     default until issue 43; the same decisions as the envelope on every measured workload at
     ``kappa = 16`` (docs/asrpt.md); preset ``a-srpt-gang``;
   - ``"fluid"``: the single machine of the reference model (every job may use all M GPUs; size
     ``p~_j = g_j N^_j tau*_j / M``, preemptive SRPT, :class:`~asrpt.single.srpt.SRPTMachine`).
     Its completions come far earlier than any real one can (on the Philly window, median
     ``C~_j - a_j`` of 2 s against a median P*_j of 929 s), so nearly every active job is
     "virtually finished" and the virtual order degenerates to a preemptive FIFO (docs/asrpt.md);
     it is kept as the paper-faithful ablation ``a-srpt-fluid``;

2. predict each new job's work N^_j (the ``predictor``) and add it to the virtual machine;
3. adaptive step (``adaptive``): a running job whose work done reached its prediction without
   finishing gets a new prediction, ``"conditional"`` (default: the larger of the predictor's
   answer given the work done and doubling's), ``"doubling"`` (N^ <- 2 N^) or ``"repredict"``
   (the predictor's answer alone); its virtual size grows accordingly (the rules:
   :meth:`~asrpt.predict.base.PredictionTracker.overrun`). ``"off"`` (the theorems' setting)
   keeps predictions static;
4. priority list (``order``):

   - ``"guarded"`` (default): a job is **overdue** from its deadline
     ``d_j = a_j + kappa (C~_j - a_j)`` on (default ``kappa = 16``, docs/asrpt.md says why) (known once the virtual machine has finished it, since
     ``kappa >= 1``). Overdue jobs come first, by ``(C~_j, id)``, admitted greedily while they fit
     in ``share * M`` GPUs (the first overdue job is always admitted); then every other active
     job by predicted remaining GPU-time ``g_j (N^_j - n_j) tau*_j`` (SRSF on predictions, with
     the hysteresis ``epsilon``: a running job's size counts ``1 - epsilon`` times, default 0.5). The
     guard bounds every job's completion by its virtual one (Theorem 2, ``proofs/theorem2.md``)
     without handing the whole cluster to an earliest-deadline order under overload;
   - ``"virtual"``: the reference model's order, by (virtual remaining, C~_j for virtually
     finished jobs, id) (Theorem 1);
   - ``"actual"``: predicted remaining GPU-time only (SRSF-PRED, the ablation without a guide);

5. the engine selects greedily in that order (``backfill``), preempts running jobs left out
   (``preemption``; without it running jobs keep their GPUs and only waiting jobs are ordered)
   and places the new ones (the run's placement).

The virtual machine's completion times C~_j, the virtual sizes, the predictions and (guarded
order) the jobs that became overdue are recorded in the run's ``policy_data`` (the certificates
of :mod:`asrpt.theory.certificate` read them).

Cost: the orders are maintained incrementally. Waiting jobs sit in a sorted list whose keys change
only when a prediction changes; running jobs (at most M) are ranked at each decision and merged
in; overdue jobs sit in a sorted list by C~. A decision costs O(R log R + log n) for R running
jobs plus the prefix the engine reads, never O(number of waiting or finished jobs). The running
jobs' adaptive step and keys are computed in numpy where the engine's progress and the
predictions are floats (:mod:`asrpt.policies._running`, the same numbers; exact runs keep the
Python loop). The order is a :class:`~asrpt.order.MergedOrder` (the admitted overdue jobs as its
head), from whose entries the engine finds the passes where it would keep exactly the running
jobs, and then does not read it. The guarded order's wake-ups are its deadlines: ``next_wake`` reads
the gang machine's completions ahead for them (:meth:`ASRPT._next_deadline`) rather than waking
at each virtual completion; the envelope reads the fluid machine's completions ahead the same way
(:meth:`~asrpt.single.srpt.SRPTMachine.upcoming_completions`, with ``C~ = max(C^f, a + P^)``). The
fluid machine wakes the policy at each fluid completion instead.
"""

from __future__ import annotations

import heapq
import itertools
import math
from numbers import Real
from operator import itemgetter

import numpy as np

from .._sorted import insort, remove_sorted
from .._validation import Interval, Options
from ..errors import InvalidParameterError
from ..instance import id_key
from ..predict.base import ADAPTIVE_RULES, DEFAULT_ADAPTIVE, prediction_reached
from ..single.gang import GangSRPTMachine
from ..single.srpt import SRPTMachine
from ..sizes import exact_div, exact_mul, integral
from ..state import VirtualRun
from ._incremental import MergedOrder
from ._running import (ArrayRun, JobTable, RunningLeft, SortedCrossings, TupleRun, crossings, merged_chunks,
                       running_inputs)
from .base import Decision, PredictorPolicy, register_policy

__all__ = ["ASRPT", "HYSTERESIS", "deadline"]

_READ_AHEAD = 16  # virtual completions next_wake reads ahead for their deadlines (_next_deadline)
_MARGIN = 1e-9    # _next_deadline reads up to the wake-up where it is this close to now (relative)
HYSTERESIS = 0.5  # the default epsilon (docs/asrpt.md, "The default since issue 45")
_VIEW = itemgetter(3)  # the JobView in an entry (r~, tie, index, view) of the fluid unfinished list


def deadline(arrival, virtual_completion, kappa):
    """The guard's deadline ``d_j = a_j + kappa (C~_j - a_j)``, never before ``C~_j``: with
    ``kappa >= 1`` that is the same number in exact arithmetic, and in floats it keeps a rounding
    from putting the deadline before the virtual completion that reveals it (a job would then
    never be seen overdue).

    >>> deadline(0.1, 0.35000000000000003, 1)
    0.35000000000000003
    >>> deadline(0, 2, 16)
    32
    """
    d = arrival + exact_mul(kappa, virtual_completion - arrival)
    return d if d >= virtual_completion else virtual_completion


def _earlier(wake, t, now):
    """``t`` where it is after ``now`` and before ``wake`` (None: no wake-up yet), else ``wake``."""
    return t if t > now and (wake is None or t < wake) else wake


@register_policy("a-srpt")
@register_policy("a-srpt-oracle", predictor="oracle")
@register_policy("a-srpt-mean", predictor="group_mean")
@register_policy("a-srpt-static", adaptive="off")
@register_policy("a-srpt-no-preemption", preemption=False)
@register_policy("a-srpt-srsf-order", order="actual")
@register_policy("a-srpt-strict", backfill=False)
@register_policy("a-srpt-consolidate", placement="best_fit")
@register_policy("a-srpt-virtual", order="virtual", virtual="gang")
@register_policy("a-srpt-fluid", virtual="fluid", order="virtual")
@register_policy("a-srpt-gang", virtual="gang")
class ASRPT(PredictorPolicy):
    """Adaptive SRPT guided by a virtual machine.

    Parameters
    ----------
    predictor : str or Predictor
        Source of N^_j (default ``"instance"``: the instance's own predictions, the truth where a
        job has none; ``asrpt run`` gives every policy the registry default, ``hierarchy``, instead).
    virtual : {"gang", "fluid", "envelope"}
        The virtual machine (module docstring). ``"envelope"`` (``C~_j = max(C^f_j, a_j + P^_j)``)
        goes with the orders ``"guarded"`` and ``"actual"`` only.
    order : {"guarded", "virtual", "actual"}
        The priority list (module docstring).
    kappa : float >= 1
        Guarded order: a job is overdue from ``a_j + kappa (C~_j - a_j)`` on.
    share : float in (0, 1]
        Guarded order: overdue jobs are admitted ahead of the others within ``share * M`` GPUs.
    backfill : bool
        Let smaller jobs further down the list fill the gaps.
    preemption : bool
        Preempt running jobs that fall out of the selected set.
    adaptive : {"off", "doubling", "repredict", "conditional"}
        What to do when a job outlives its prediction (default ``"conditional"``, docs/asrpt.md
        says why; ``"off"`` for the theorems).
    epsilon : float in [0, 1)
        Hysteresis in the predicted-size order (as SRSF's): a running job that is not stopping
        ranks with its predicted remaining GPU-time times ``1 - epsilon``, so a job overtakes it
        only if its own is below that; an under-predicted giant that outlived its prediction is
        then not preempted by another one at every re-prediction (docs/asrpt.md). Default 0.5
        (``HYSTERESIS``: lower mean JCT than 0 on every measured 6,000-job Philly window,
        held-out ones included; 0.9% higher on the whole trace as abstract jobs and 1.2% on
        the overloaded pods: docs/asrpt.md); 0: none, plain SRSF on predictions. Theorem 2
        allows any order among the jobs that are not overdue, so its bound holds for any ``epsilon``
        (:func:`asrpt.theory.guarded.certify_guarded` checks the order with the run's own
        ``epsilon``).
    placement : str or None
        Deprecated: a placement :func:`asrpt.sim.simulate` uses when the run names none (the
        ``a-srpt-consolidate`` preset; :meth:`preferred_placement`); prefer
        ``simulate(..., placement=...)``. The engine never reads it.

    Examples
    --------
    The worked example of the reference model. The fluid machine finishes the jobs far earlier
    than the cluster can; the default envelope holds each fluid completion back to ``a_j + P^_j``
    (A: ``max(7/2, 0 + 4)``, C: ``max(3/2, 1 + 2)``); the gang machine here finishes each job
    when the cluster does.

    >>> from asrpt.instance import load_instance
    >>> from asrpt.sim import simulate
    >>> inst = load_instance("instances/worked-example.json")
    >>> res = simulate(inst, "a-srpt")
    >>> res.completion_times, res.policy_data["virtual_completion_times"]
    ({'A': 5, 'B': 1, 'C': 3}, {'A': 4, 'B': 1, 'C': 3})
    >>> simulate(inst, "a-srpt-fluid").policy_data["virtual_completion_times"]
    {'A': Fraction(7, 2), 'B': 1, 'C': Fraction(3, 2)}
    >>> simulate(inst, "a-srpt-gang").policy_data["virtual_completion_times"]
    {'A': 5, 'B': 1, 'C': 3}
    """

    name = "a-srpt"

    parameter_constraints = {
        "predictor": "no_validation",
        "virtual": [Options(str, {"gang", "fluid", "envelope"})],
        "order": [Options(str, {"guarded", "virtual", "actual"})],
        "kappa": [Interval(Real, 1, None, closed="left")],
        "share": [Interval(Real, 0, 1, closed="right")],
        "backfill": ["boolean"],
        "preemption": ["boolean"],
        "adaptive": [Options(str, set(ADAPTIVE_RULES))],
        "epsilon": [Interval(Real, 0, 1, closed="left")],
        "placement": [None, str],
    }

    def __init__(self, *, predictor="instance", virtual: str = "envelope", order: str = "guarded",
                 kappa: float = 16.0, share: float = 0.5, backfill: bool = True,
                 preemption: bool = True, adaptive: str = DEFAULT_ADAPTIVE, epsilon: float = HYSTERESIS,
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
        m = self.total_gpus_ = cluster.total_gpus
        self.share_gpus_ = max(1, math.floor(self.share * m))
        self._kappa = integral(self.kappa)
        self._tie: dict[int, tuple] = {}
        tie = self._tie.__getitem__
        self._gang = self.virtual == "gang"
        self._envelope = self.virtual == "envelope"  # the fluid machine, completions max(C^f, a + P^)
        self._span: dict = {}                       # envelope: index -> a_j + P^_j (current prediction)
        self.machine_ = GangSRPTMachine(m, tie_key=tie) if self._gang else SRPTMachine(tie_key=tie)
        self._views: dict = {}
        self._active: set = set()
        self._done_order: dict = {}                 # virtually finished, active: index -> view
        self._unfinished: list = []                 # fluid: (r~, tie, index, view) of the unfinished
        self._stored: dict[int, tuple] = {}         # fluid: index -> its entry in _unfinished
        self._fresh: list = []                      # fluid: finished jobs not yet collected
        self._waiting: list = []                    # (remaining GPU-time, arrival, tie, index)
        self._table = JobTable()                    # per-job arrays for the numpy pass (_adaptive_arrays)
        self._wentry: dict[int, tuple] = {}
        self._overdue: list = []                    # (C~, tie, index) of overdue active jobs
        self._oentry: dict[int, tuple] = {}
        self._deadlines: list = []                  # heap (d, tie, index, token)
        self._stopped: dict = {}                    # index -> view of jobs stopped, not yet keyed
        self._left: dict = {}                       # index -> predicted remaining work of running jobs, now
        self._rkeys: list | None = None             # rank keys of the running jobs, now (adaptive step)
        self._cross: list = []                      # heap (time it reaches its prediction, index)
        self._dtoken: dict[int, int] = {}
        self.overdue_at_: dict[str, object] = {}
        self.virtual_sizes_: dict[str, object] = {}
        self.adaptive_updates_ = 0

    # -- the virtual machine --------------------------------------------------------------------
    def _virtual_size(self, job, work):
        size = exact_mul(work, job.tau_star)
        return size if self._gang else exact_div(exact_mul(job.gpus, size), self.total_gpus_)

    def _completion(self, i: int):
        """The job's virtual completion C~_j (the envelope's ``max(C^f_j, a_j + P^_j)``), or None
        while the machine has not finished it."""
        c = self.machine_.completion_time(i)
        if self._envelope and c is not None:
            return max(c, self._span[i])
        return c

    def _spans(self, job, work) -> bool:
        """Envelope: note ``P^_j`` (recorded as the job's virtual size) and ``a_j + P^_j`` for a
        prediction ``work``; whether ``a_j + P^_j`` changed."""
        if not self._envelope:
            return False
        p = exact_mul(work, job.tau_star)
        self.virtual_sizes_[job.id] = p
        span = job.arrival + p
        old = self._span.get(job.index)
        self._span[job.index] = span
        return old is not None and old != span

    def _insert(self, i: int) -> None:
        entry = (self.machine_.remaining(i), self._tie[i], i, self._views[i])
        self._stored[i] = entry
        insort(self._unfinished, entry)

    def _newly_finished(self) -> list:
        """Jobs the virtual machine finished since the last call, in finishing order."""
        if self._gang:
            return self.machine_.pop_finished()
        out, self._fresh = self._fresh, []
        # the envelope reads the fluid machine's own log (it keeps no list of unfinished jobs);
        # the fluid machine's virtual order keeps one, whose front is its finished jobs
        out.extend(self.machine_.pop_finished() if self._envelope else self._pop_fluid())
        return out

    def _pop_fluid(self) -> list:
        """Fluid machine: finished jobs sit at the front of the unfinished list, in finishing
        order; pop them and refresh the running job's stale key."""
        m = self.machine_
        out = []
        unfinished = self._unfinished
        while unfinished:
            i = unfinished[0][2]
            if m.completion_time(i) is None:
                break
            unfinished.pop(0)
            del self._stored[i]
            out.append(i)
        cur = m.running
        if cur is not None and cur in self._stored:
            remove_sorted(unfinished, self._stored[cur])
            self._insert(cur)
        return out

    def _virtually_finished(self, now) -> None:
        for i in self._newly_finished():
            # (a job noted twice, or reopened since it was noted, by new predictions in one pass:
            # it is finished once, when the machine has it finished)
            if i not in self._active or i in self._done_order or self.machine_.completion_time(i) is None:
                continue
            self._done_order[i] = self._views[i]
            if self.order == "guarded":
                job = self._views[i]
                c = self._completion(i)             # (envelope: at or after now, or a late read)
                d = deadline(job.arrival, c, self._kappa)
                token = self._dtoken[i] = self._dtoken.get(i, 0) + 1
                # Overdue at once only at its virtual completion (kappa = 1, or a zero size); a
                # completion read at a later pass (next_wake reads ahead) waits in the heap for
                # _promote, after this pass's real completions are forgotten, as it did when
                # the policy woke at every virtual completion.
                if d <= now and self.machine_.completion_time(i) == now:
                    self._make_overdue(i, now)
                else:
                    heapq.heappush(self._deadlines, (d, self._tie[i], i, token))

    def _make_overdue(self, i: int, now) -> None:
        entry = (self._completion(i), self._tie[i], i)
        self._oentry[i] = entry
        insort(self._overdue, entry)
        self.overdue_at_.setdefault(self._views[i].id, now)

    def _unguard(self, i: int) -> None:
        """Forget a job's virtual finish: it completed for real, or a new prediction reopened it."""
        self._done_order.pop(i, None)
        self._dtoken[i] = self._dtoken.get(i, 0) + 1
        entry = self._oentry.pop(i, None)
        if entry is not None:
            remove_sorted(self._overdue, entry)

    def _promote(self, now) -> None:
        """Jobs whose deadline has come become overdue."""
        heap, tokens = self._deadlines, self._dtoken
        while heap and heap[0][0] <= now:
            _, _, i, token = heapq.heappop(heap)
            if token == tokens.get(i) and i in self._active:
                self._make_overdue(i, now)

    # -- the ranking by predicted remaining GPU-time ----------------------------------------------
    def _rank_key(self, view, job, left=None, held: bool = False) -> tuple:
        """``(predicted remaining GPU-time, arrival, key, index)``; ``held``: a running job that is
        not stopping, whose size ``epsilon``'s hysteresis scales by ``1 - epsilon``."""
        if left is None:
            left = self.tracker_.predicted[job.index] - view.attained_work(job)
        if left < 0:
            left = 0
        # plain products: exact for ints and Fractions, and only compared, never reported
        size = left * job.tau_star * job.gpus
        if held and self.epsilon:
            size = size * (1 - self.epsilon)
        return (size, job.arrival, job.key, job.index)

    def _wait(self, view, job) -> None:
        self._unwait(job.index)
        entry = self._wentry[job.index] = self._rank_key(view, job)
        insort(self._waiting, entry)

    def _unwait(self, i: int) -> None:
        entry = self._wentry.pop(i, None)
        if entry is not None:
            remove_sorted(self._waiting, entry)

    def _ranked(self, view, skip=(), head=()):
        """Active jobs by predicted remaining GPU-time: running ones ranked now, merged with the
        waiting list (whose keys do not move while the jobs wait), after the views ``head`` and
        without the indices ``skip`` (the guarded order's admitted overdue jobs)."""
        views = self._views
        # Ranked now, not when the engine reads on: the engine may stop jobs while it reads.
        # (The adaptive step of this decision keyed the running jobs, in _rkeys.)
        running = self._rkeys
        if running is None:
            running = self._running_run(view)
        if running is None:
            left = self._left.get
            running = [self._rank_key(view, j, left(j.index), not view.is_stopping(j)) for j in view.running]
        if type(running) is list:
            running.sort()
            running = TupleRun(running)
        return MergedOrder(running, self._waiting, views, head=head, merge=merged_chunks, skip=skip)

    def _observe(self, view) -> None:
        """Jobs the engine started or stopped since the last view: started ones leave the waiting
        list; stopped ones are keyed again at the next decision (after its adaptive step)."""
        for job in itertools.chain(view.stopped, view.started):
            i = job.index
            if view.is_running(job):
                self._unwait(i)
                self._stopped.pop(i, None)
            elif i in self._active:
                self._stopped[i] = job

    def _file_stopped(self, view) -> None:
        """Key the jobs stopped since the last decision; one stopped at or past its prediction
        gets its new prediction first (the adaptive step, as SRSF does)."""
        for i, job in self._stopped.items():
            if i not in self._active or view.is_running(job):
                continue
            if self.adaptive != "off" and self.tracker_.reached(view, job):
                self._resize(view, job, self.tracker_.overrun(view, job, self.adaptive))
            else:
                self._wait(view, job)
        self._stopped.clear()

    # -- the decision ------------------------------------------------------------------------------
    def _admit(self, view, job, now) -> None:
        i = job.index
        work = self.tracker_.predicted[i]
        self._views[i] = job
        self._table.add(job)
        self._tie[i] = job.key
        self._active.add(i)
        size = self._virtual_size(job, work)
        self.virtual_sizes_[job.id] = size
        self._spans(job, work)
        if self._gang:
            self.machine_.add(i, now, size, job.gpus)
        elif self._envelope:                    # (a zero-size job lands in the machine's log at once)
            self.machine_.add(i, now, size)
        else:
            self._fresh.extend(self._pop_fluid())
            self.machine_.add(i, now, size)
            if self.machine_.completion_time(i) is None:
                self._insert(i)
            else:                               # a zero-size job finishes virtually at once
                self._fresh.append(i)
            self._fresh.extend(self._pop_fluid())
        self._wait(view, job)

    def _forget(self, i: int) -> None:
        self._active.discard(i)
        entry = self._stored.pop(i, None)
        if entry is not None:
            remove_sorted(self._unfinished, entry)
        self._unguard(i)
        self._unwait(i)

    def _resize(self, view, job, work, adaptive: bool = True) -> None:
        """A new prediction ``work`` for ``job``: the adaptive step's (counted in
        ``adaptive_updates``), or a waiting job re-predicted when a sibling completed."""
        self.tracker_.set(job, work)
        self.adaptive_updates_ += adaptive
        i = job.index
        m = self.machine_
        size = self._virtual_size(job, work)
        was_done = m.completion_time(i) is not None
        entry = self._stored.pop(i, None)
        if entry is not None:
            remove_sorted(self._unfinished, entry)
        m.resize(i, max(size, m.attained(i)))
        self.virtual_sizes_[job.id] = m.size(i)
        moved = self._spans(job, work)
        listed = not self._gang and not self._envelope      # the fluid machine's unfinished list
        if m.completion_time(i) is None:
            if was_done:
                self._unguard(i)
            if listed:
                self._insert(i)
        elif listed and not was_done:
            self._fresh.append(i)
        elif moved and was_done:    # envelope: still finished by the fluid machine, but C~ moved
            self._unguard(i)                    # (its old deadline's heap entry is void)
            self._fresh.append(i)               # finished again at the next pass, with the new C~
        if listed:
            self._fresh.extend(self._pop_fluid())
        if not view.is_running(job):
            self._wait(view, job)

    def decide(self, view):
        now = view.now
        self._observe(view)
        self.machine_.advance(now)
        self._virtually_finished(now)
        for c in view.completed:
            self._forget(c.job.index)
        for job in self.tracker_.update(view):
            if job.index in self._views:        # a new prediction for a known job
                self._resize(view, job, self.tracker_.predicted[job.index])
            else:
                self._admit(view, job, now)
        for job in self.tracker_.revised:           # waiting siblings re-predicted on a completion
            if job.index in self._active:
                self._resize(view, job, self.tracker_.predicted[job.index], adaptive=False)
        self._virtually_finished(now)
        self._rkeys = None
        if self.adaptive != "off":
            self._adaptive_step(view)
        self._file_stopped(view)
        self._virtually_finished(now)
        self._admitted = ()     # the overdue jobs the guarded order admits first (in order)
        if self.order == "guarded":
            self._promote(now)
            order = self._guarded_order(view)
        elif self.order == "virtual":
            order = self._virtual_order()
        else:
            order = self._ranked(view)
        if not self.preemption:
            return Decision([j for j in order if not view.is_running(j)], backfill=self.backfill)
        return Decision(order, backfill=self.backfill)

    def _virtual_order(self):
        views, active = self._views, self._active
        if self._gang:
            rest = (views[i] for i in self.machine_.iter_ranked() if i in active)
        else:
            rest = map(_VIEW, self._unfinished)
        return itertools.chain(self._done_order.values(), rest)

    def _guarded_order(self, view):
        """Overdue jobs by C~ within the share (the first always), then the rest by predicted
        remaining GPU-time."""
        views = self._views
        admitted = self._admitted = []
        budget = self.share_gpus_
        for _, _, i in self._overdue:
            g = views[i].gpus
            if g <= budget or not admitted:
                admitted.append(i)
                budget -= g
                if budget <= 0:
                    break
        if not admitted:
            return self._ranked(view)
        return self._ranked(view, set(admitted), [views[i] for i in admitted])

    # -- the adaptive step (the tracker's one rule, shared with SRSF) ----------------------------
    def _adaptive_step(self, view) -> None:
        """Re-predict running jobs whose work done reached their prediction (step 3), in the
        view's order of running jobs; key them for the ranking (``_rkeys``) and note when each
        reaches its (new) prediction (``_cross``, a heap read by :meth:`_next_crossing`). In numpy
        where the values are floats (:meth:`_adaptive_arrays`, the same numbers)."""
        if not self._adaptive_arrays(view):
            self._adaptive_tuples(view)

    def _adaptive_arrays(self, view) -> bool:
        """The numpy form of :meth:`_adaptive_tuples` (the same IEEE operations in the same order):
        ``_rkeys`` becomes an :class:`~asrpt.policies._running.ArrayRun`; False (nothing done)
        where the engine's arrays or the predictions are not all floats. Jobs that reached their
        prediction are resized in Python, in running order."""
        table, tracker = self._table, self.tracker_
        got = running_inputs(view, table, tracker)
        if got is None:
            return False
        idx, done, tau, stopping, preds = got
        now = view.now
        rest = preds[idx] - done
        # prediction_reached: rest <= 0 or now + rest * tau <= now; with tau > 0 the first
        # implies the second. `when` is also the crossing time (crossings' numbers).
        when = now + rest * tau
        # (no job at its prediction: every rest is > 0, as rest * tau > 0 with tau > 0, so every
        # job has a crossing, at `when`, and max(rest, 0) is rest)
        cross = SortedCrossings(when, idx)
        positive = cross.after(now)
        if not positive:
            reached = (when <= now).nonzero()[0]
            views = self._views
            who = idx[reached].tolist()
            for i in who:
                job = views[i]
                self._resize(view, job, tracker.overrun(view, job, self.adaptive))
            preds = tracker.prediction_array()
            if preds is None:                    # a new prediction floats cannot hold
                self._adaptive_tuples(view, set(who))
                return True
            rest[reached] = preds[idx[reached]] - done[reached]
        self._left = RunningLeft(idx, rest, {})
        resume = view.running_resumes()          # (jobs restarting after a preemption cross later)
        if positive and resume is None:
            self._cross = cross
        else:
            self._cross = crossings(now, rest, tau, idx, resume)
        if self.epsilon:    # (hysteresis: the sizes now, those of running jobs not stopping scaled)
            self._rkeys = self._hysteresis_run(rest if positive else np.maximum(rest, 0.0), idx, stopping)
            return True
        # (0 if rest < 0 else rest) * tau* * gpus, computed when the order is read
        self._rkeys = ArrayRun.of_left(rest, idx, table, positive)
        return True

    def _hysteresis_run(self, rest, idx, stopping):
        """The running jobs' :class:`~asrpt.policies._running.ArrayRun` from their predicted
        remaining work ``rest`` (>= 0), with ``epsilon``'s hysteresis: ``rest * tau* * gpus``,
        times ``1 - epsilon`` for the jobs not stopping (the Python path's operations)."""
        tau_star, gpus, rank = self._table.columns(idx)
        size = rest * tau_star * gpus
        size = np.where(stopping, size, size * (1 - self.epsilon))
        return ArrayRun(size, idx, self._table, rank)

    def _running_run(self, view):
        """Without the adaptive step: the running jobs' ``_rank_key`` in numpy (an
        :class:`~asrpt.policies._running.ArrayRun`, the same numbers), or None where the values
        are not all floats."""
        table = self._table
        got = running_inputs(view, table, self.tracker_)
        if got is None:
            return None
        idx, done, _, stopping, preds = got
        rest = preds[idx] - done
        np.maximum(rest, 0.0, out=rest)
        if self.epsilon:
            return self._hysteresis_run(rest, idx, stopping)
        tau_star, gpus, rank = table.columns(idx)
        return ArrayRun(rest * tau_star * gpus, idx, table, rank)

    def _adaptive_tuples(self, view, raised=frozenset()) -> None:
        """The Python path of :meth:`_adaptive_step`; jobs in ``raised`` already got their new
        prediction in this pass."""
        tracker, pred = self.tracker_, self.tracker_.predicted
        left = self._left = {}
        keys = self._rkeys = []
        cross = self._cross = []
        now = view.now
        for job, done, tau, stopping in view.running_progress():
            i = job.index
            rest = pred[i] - done
            if i not in raised and prediction_reached(now, rest, tau):
                self._resize(view, job, tracker.overrun(view, job, self.adaptive))
                rest = pred[i] - done
            left[i] = rest
            if rest > 0:
                cross.append((view.resume_time(job) + rest * tau, i))
            keys.append(self._rank_key(view, job, rest, not stopping))
        heapq.heapify(cross)

    def _next_crossing(self, view):
        """The tracker's next crossing from the ones noted at the decision (``_cross``)."""
        return self.tracker_.noted_crossing(view, self._left, self._cross, self._views)

    def next_wake(self, view):
        self._observe(view)
        wake = self._next_crossing(view) if self.adaptive != "off" else None
        if self.order == "guarded":
            heap, dtokens = self._deadlines, self._dtoken
            while heap and heap[0][3] != dtokens.get(heap[0][2]):
                heapq.heappop(heap)
            if heap:
                wake = _earlier(wake, heap[0][0], view.now)
            if self._gang or self._envelope:
                return self._next_deadline(view, wake)
            m = self.machine_
            if m.running is not None:
                wake = _earlier(wake, m.now + m.remaining(m.running), view.now)
        return wake

    def _next_deadline(self, view, wake):
        """The earlier of ``wake`` and the first deadline of a job the gang (or envelope) machine finishes
        before it. A job's deadline is known from its virtual completion on, so the policy reads
        the machine's completions ahead
        (:meth:`~asrpt.single.gang.GangSRPTMachine.upcoming_completions`) instead of waking at
        each of them. The deadline ``a + kappa (C~ - a)`` is computed as
        :meth:`_virtually_finished` will compute it at the wake-up, from the same C~, so the
        wake-up comes at the deadline exactly.

        How far to read: a job finishing virtually at ``c`` has a deadline of at least
        ``now + kappa (c - now)`` (it arrived by now, and ``kappa >= 1``), so completions after
        ``now + (wake - now) / kappa`` cannot wake the policy before ``wake``. The read stops at
        twice that, a margin far above the rounding of the deadlines' float operations (where
        ``wake - now`` is within ``_MARGIN`` of ``wake`` itself it reads up to ``wake``), or
        after ``_READ_AHEAD`` completions: the policy then wakes at the next one, as it did
        before it read ahead."""
        now = view.now
        until = wake
        kappa = self._kappa
        if wake is not None and kappa > 2 and wake - now > _MARGIN * abs(wake):
            until = now + (wake - now) * 2 / kappa
            if not until > now:
                until = wake
        events, horizon = self.machine_.upcoming_completions(until, _READ_AHEAD)
        if horizon != until:    # the read stopped early: wake at the next completion at the latest
            wake = _earlier(wake, horizon, now)
        active, views, span = self._active, self._views, self._span
        for c, i in events:
            if i in active:
                a = views[i].arrival
                if self._envelope:              # C~ = max(C^f, a + P^), as _completion will say
                    c = max(c, span[i])
                d = deadline(a, c, kappa)
                if not d > now:     # floats only: a remaining time below now's rounding finishes "now",
                    d = math.nextafter(now, math.inf)   # after this pass's advance: wake just after
                wake = _earlier(wake, d, now)
        return wake

    def record(self) -> VirtualRun:
        """The virtual run the certificates read (:class:`~asrpt.state.VirtualRun`)."""
        m = self.machine_
        m.run()
        keys = {i: self._views[i].id for i in self._views}
        predictions = super().report()
        done = {i: self._completion(i) for i in m.completion_times()}
        return VirtualRun(
            virtual=self.virtual,
            completion_times={keys[i]: c for i, c in sorted(
                done.items(), key=lambda item: id_key(keys[item[0]]))},
            sizes={k: self.virtual_sizes_[k] for k in sorted(self.virtual_sizes_, key=id_key)},
            initial_predictions=predictions["initial_predictions"],
            predictions=predictions["predictions"],
            adaptive_updates=self.adaptive_updates_,
            overdue_at=({k: self.overdue_at_[k] for k in sorted(self.overdue_at_, key=id_key)}
                        if self.order == "guarded" else None))

    def report(self) -> dict:
        return self.record().to_dict()
