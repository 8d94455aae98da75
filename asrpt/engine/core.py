"""The exact event-driven cluster simulator: ``run_engine(instance, policy, placer, ...) -> SimResult``.

The fast engine. Its specification is the plain reference engine beside it
(:func:`asrpt.engine.reference.run_reference`), which it must agree with record for record
(tests/engine/test_reference.py); read that one first. This module owns the only mutable state of a run. Time jumps from event to event (a heap of
completions, preemption points and policy wake-ups, plus the arrivals in time order); there is no
time step. At one instant the engine applies, in this order,

1. completions (GPUs released),
2. preemption points (jobs stopping at an iteration boundary release their GPUs),
3. arrivals (jobs join the waiting set in (arrival, id) order),
4. wake-ups requested by the policy,

and then runs **one decision pass**: it builds a read-only :class:`~asrpt.sim.view.ClusterView`,
asks the policy for a :class:`~asrpt.state.Decision`, and applies it (see
:mod:`asrpt.policies.base` for how preemptive and non-preemptive orders are applied). What the
policy answers is all the engine follows; where it skips work, it derived that itself:

- a preemptive decision whose order is a :class:`~asrpt.order.MergedOrder` that, by its own
  entries checked against the running set, keeps exactly the running jobs in a settled view
  (nothing stopping, no waiting job fitting in the idle GPUs:
  :func:`~asrpt.order.keeps_running_jobs`) is not read: it would start and stop nothing;
- an order that offers ``chunks()`` is read a chunk at a time (a list that fits is taken whole),
  and no further once no waiting job fits in what is left and every running job was read;
- a decision that holds (``Decision.stands_until``) is applied at the later passes it covers,
  where no job arrived or completed, as "the running jobs that are not stopping, then its
  order", without asking the policy (:meth:`_Engine._stands`); there the engine does nothing in
  a settled view and otherwise carries the previous pass's selection over where it can
  (:meth:`_Engine._apply_carried`), else applies that order in full.

``check_invariants=True`` checks each derivation where it is used. Jobs are started through the
placement step (a :class:`~asrpt.state.Placer`), one by one in the policy's order, so each start
sees the GPUs taken by the previous ones.

A preemptive selection counts GPUs, but some it counts on may not be usable now: a job left out
may still hold its GPUs (running on to an iteration boundary, or finishing before its next one),
or the placer may refuse a selected job (gang instances on fragmented servers, graph placers).
Then the idle GPUs go, in the policy's order, to jobs the selection left out, without delaying a
selected job: jobs that stop at once when preempted may use any idle GPU; DNN jobs that would run
on to a boundary only use GPUs that no blocked selected job will need when the jobs left out
release theirs. A job stopped and given back the same GPUs in the same pass never stopped (no
preemption is counted). Always and cheaply, every start checks that no server is
over-allocated, and every pass that a work-conserving policy left no job waiting that fits in the idle GPUs
(with a placer that fits whenever the GPUs suffice); ``check_invariants=True`` checks more.

Running jobs progress at ``1 / tau`` units of work per second, where ``tau`` is the iteration time
of their placement (abstract jobs: one second of work per second, anywhere). A preempted DNN job
runs on to its next iteration boundary (a preemption-point event) and then releases its GPUs,
keeping the iterations done (``preemption_point="immediate"`` stops it at once instead);
abstract jobs stop at once. A job restarted after a preemption first
spends ``preemption_cost`` seconds restarting (holding its GPUs, making no progress).

Exactness: with integer or Fraction data (``load_instance(..., exact=True)``) and abstract jobs,
every time is computed exactly; DNN iteration times are floats.

The engine takes objects only and knows no policy or placement by name (it imports only
:mod:`asrpt.state` and :mod:`asrpt.order`, the contracts and the order type;
:func:`asrpt.sim.simulate` turns names into objects); an ``observer`` sees each
decision pass read-only (:class:`Observer`). It checks at the end that the policy left no job
waiting forever (a stalled run raises :class:`~asrpt.errors.AsrptError`).

Guard rails for policies under development: the run ends at the pass of the last completion
(wake-ups asked for after it cannot change a record, so a policy that always asks for one ends);
a policy that keeps waking itself while jobs wait, none runs and no arrival is left, starting
nothing (:data:`WAKE_STORM_PASSES` passes in a row), and one whose preemptions keep no work with
no job completing (:data:`LIVELOCK_STOPS` stops in a row: ranks that flip at an iteration
boundary, which a preempted job's work is snapped back onto, or a restart cost paid again and
again) both raise :class:`~asrpt.errors.AsrptError` naming the policy and the time, instead of
running for ever.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import math
import operator
import time as _time
from numbers import Real
from typing import Callable

from .._gc import gc_paused
from .._validation import Interval, Options, validate_params
from ..errors import AsrptError, InvalidParameterError
from ..instance import Instance
from ..order import MergedOrder, keeps_running_jobs
from ..sizes import floaty
from ..state import Allocation, ClusterView, CompletedJob, JobStatus, JobView, Placer, Policy, job_views, policy_label
from ..state import _COMPLETED_BUILD as _completed
from .metrics import summarize
from .records import _RECORD_BUILD, _SEGMENT_BUILD, Segment, SimResult, check_records, recorded_params, stalled_run

__all__ = ["run_engine", "Observer"]

# The event kinds, in the order they apply at one instant (the heap's second field). Adding one:
# give it a number, a validity rule in `_Engine._stale` (an unknown kind is an error there) and a
# handler in `_Engine.run`'s dispatch that sets `loud`, unless a held decision (Decision.stands_until)
# may go on applying after it, as after the two quiet kinds, a preempted job's iteration-boundary
# stop and the policy's own wake-up: a loud event makes the next pass ask the policy. (The
# reference engine must then mark it loud too.)
_COMPLETE, _STOP, _WAKE = 0, 1, 3
#: Guard rails (module docstring): consecutive passes woken by the policy alone, with jobs waiting,
#: none running and no arrival left, after which the run is a wake-up storm; consecutive stops that
#: kept no work, with no job completing, after which it is a livelock.
WAKE_STORM_PASSES = 100_000
LIVELOCK_STOPS = 100_000
# the job statuses as plain ints (the engine's inner loops compare them)
_ARRIVED, _WAITING, _RUNNING, _STOPPING, _DONE = (int(s) for s in (
    JobStatus.ARRIVED, JobStatus.WAITING, JobStatus.RUNNING, JobStatus.STOPPING, JobStatus.DONE))
_INF = math.inf
_INDEX_OF = operator.attrgetter("index")
_GPUS_OF = operator.attrgetter("gpus")


class _ReadChunks(list):
    """An order read in full when the decision is made, its ``chunks()`` kept as lists."""

    __slots__ = ("_pieces",)

    def __init__(self, pieces: list):
        super().__init__(itertools.chain.from_iterable(pieces))
        self._pieces = pieces

    def chunks(self):
        return iter(self._pieces)


def _read_now(order) -> list:
    """``order`` (a decision's, of no type the engine knows to be fixed) as a list, read now;
    with ``chunks()``, a :class:`_ReadChunks`."""
    chunks = getattr(order, "chunks", None)
    if chunks is None:
        return list(order)
    return _ReadChunks([list(piece) for piece in chunks()])


class _ProgressArrays:
    """Float64 copies of the per-job progress state, one row each for ``done``, the time progress
    resumes from (``max(restart_until, t_last)``) and ``tau`` (``state``), written by the engine
    wherever a running job's values change (``sync``), for :meth:`_Engine.running_arrays`.
    ``exact`` turns on for good once a synced value is not :func:`~asrpt.sizes.floaty` or a job runs without
    an iteration time (abstract jobs): the arrays are then never read, and policies keep their
    Python path. ``spent`` holds each running job's ``executed`` and ``seg_start`` (fixed while
    it runs), and ``spent_float`` whether either is a float (then ``executed + (now - seg_start)``
    is a float whatever ``now`` is). ``run[:n_run]`` are the indices of the running jobs in the
    order of the engine's ``running`` dict, kept as it changes (``enter``, ``leave``), so that a
    pass does not convert the dict's keys."""

    __slots__ = ("state", "spent", "spent_float", "mark", "exact", "run", "n_run", "np", "none_stopping")

    def __init__(self, states, running):
        import numpy as np   # only runs whose policy reads the arrays load numpy

        self.np = np    # (for the engine's per-pass reads, without an import statement each)
        n = len(states)
        self.state = np.ones((3, n))
        self.spent = np.zeros((2, n))
        self.spent_float = np.zeros(n, dtype=bool)
        self.mark = np.zeros(n, dtype=bool)   # scratch: the stopping jobs, set and cleared per call
        # the stopping flags of a pass with none stopping: slices of one read-only array
        self.none_stopping = np.zeros(n, dtype=bool)
        self.none_stopping.flags.writeable = False
        self.exact = False
        for i, st in enumerate(states):
            if st.status in (_RUNNING, _STOPPING):
                self.sync(i, st)
        self.run = np.zeros(max(64, 2 * len(running)), dtype=np.intp)
        self.n_run = len(running)
        self.run[:self.n_run] = list(running)

    def enter(self, i: int) -> None:
        """Job ``i`` was added to ``running`` (at its end)."""
        n = self.n_run
        if n == len(self.run):
            grown = self.np.zeros(2 * n, dtype=self.np.intp)
            grown[:n] = self.run
            self.run = grown
        self.run[n] = i
        self.n_run = n + 1

    def leave(self, i: int) -> None:
        """Job ``i`` was deleted from ``running`` (the others keep their order)."""
        n = self.n_run
        run = self.run
        pos = int((run[:n] == i).argmax())
        run[pos:n - 1] = run[pos + 1:n]
        self.n_run = n - 1

    def sync(self, i: int, st) -> None:
        done, t_last, restart, tau = st.done, st.t_last, st.restart_until, st.tau
        executed, start = st.executed, st.seg_start
        if type(tau) is not float or not (floaty(done) and floaty(t_last) and floaty(restart)
                                          and floaty(executed) and floaty(start)):
            self.exact = True
            return
        self.state[:, i] = (done, restart if restart > t_last else t_last, tau)
        self.spent[:, i] = (executed, start)
        self.spent_float[i] = type(executed) is float or type(start) is float


class _WaitingArrays:
    """Float64 copies of each job's ``done`` and ``executed`` as of its latest entry into
    ``waiting`` (both fixed while it waits), for :meth:`_Engine.waiting_arrays`: written when a
    job stops (an arriving job has zeros, as at the start). ``exact`` turns on for good once a
    written value is not :func:`~asrpt.sizes.floaty` (the arrays are then never read). Made
    mid-run, they take the values of the jobs waiting then; the running ones are written when
    they stop, and the finished ones never wait again."""

    __slots__ = ("values", "exact")

    def __init__(self, states):
        import numpy as np   # only runs whose policy reads the arrays load numpy

        self.values = np.zeros((2, len(states)))
        self.exact = False
        for i, st in enumerate(states):
            if st.status == _WAITING and (st.done or st.executed):
                self.write(i, st)

    def write(self, i: int, st) -> None:
        done, executed = st.done, st.executed
        if not (floaty(done) and floaty(executed)):
            self.exact = True
            return
        self.values[:, i] = (done, executed)


class _JobState:
    """Engine-private mutable state of one job."""

    __slots__ = ("work", "done", "tau", "t_last", "restart_until", "status", "servers", "seg_start", "seg_done",
                 "first_start", "completion", "preemptions", "executed", "segments", "version",
                 "stop_token", "stop_target", "beta")

    def __init__(self, work):
        self.work = work
        self.done = 0
        self.tau = None          # seconds per unit of work on the current placement (None: abstract)
        self.t_last = 0          # time up to which `done` is accounted
        self.restart_until = 0   # no progress before this time (restart after a preemption)
        self.status = _ARRIVED
        self.servers: tuple = ()
        self.seg_start = 0
        self.seg_done = 0        # work done when the current segment started (guard rail: futile stops)
        self.first_start = None
        self.completion = None
        self.preemptions = 0
        self.executed = 0
        self.segments: list[Segment] = []
        self.version = 0         # invalidates stale completion events
        self.stop_token = 0      # invalidates stale preemption-point events
        self.stop_target = 0
        self.beta = 1.0


class _Smallest:
    """A multiset of ints that knows its smallest element (the GPU counts of the waiting jobs, for
    the cheap work-conservation check): ``add`` and ``remove`` in O(1), ``smallest()`` amortized
    O(log n), where a sorted list pays O(log n) per change (and most changes are never read).

    >>> s = _Smallest()
    >>> for g in (4, 1, 1, 8):
    ...     s.add(g)
    >>> s.remove(1); s.smallest(), len(s)
    (1, 3)
    >>> s.remove(1); s.smallest()
    4
    """

    __slots__ = ("counts", "heap")

    def __init__(self):
        self.counts: dict[int, int] = {}   # value -> multiplicity (> 0)
        self.heap: list[int] = []          # every value of `counts`, and stale ones (dropped when met)

    def add(self, g: int) -> None:
        counts = self.counts
        c = counts.get(g)
        if c is None:
            counts[g] = 1
            heapq.heappush(self.heap, g)
        else:
            counts[g] = c + 1

    def remove(self, g: int) -> None:
        counts = self.counts
        c = counts[g]
        if c == 1:
            del counts[g]
        else:
            counts[g] = c - 1

    def __len__(self) -> int:
        return len(self.counts)   # (distinct values: enough for truthiness)

    def smallest(self) -> int:
        heap, counts = self.heap, self.counts
        while heap[0] not in counts:
            heapq.heappop(heap)
        return heap[0]


class Observer:
    """What an ``observer`` of :func:`run_engine` may implement (both optional); it sees each
    decision pass read-only and must change nothing.

    - ``before_decide(view)``: called with the :class:`~asrpt.state.ClusterView` the policy is
      about to get;
    - ``after_decide(view, decision)``: called with the same view and the policy's
      :class:`~asrpt.state.Decision`, before the engine applies it (the view still shows the
      state the policy saw).

    A plain callable is used as ``after_decide``.

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> seen = []
    >>> _ = simulate(two_server_instance, "fifo", observer=lambda v, d: seen.append((v.now, len(d.order))))
    >>> seen
    [(0, 2), (1, 1), (3, 0), (4, 0)]
    """

    def before_decide(self, view: ClusterView) -> None:
        """Called before ``policy.decide(view)``."""

    def after_decide(self, view: ClusterView, decision) -> None:
        """Called after ``policy.decide(view)`` returned ``decision``."""


class _Engine:
    arrays: _ProgressArrays | None = None   # built at the first running_arrays() call
    waiting_values: _WaitingArrays | None = None   # built at the first waiting_arrays() call

    def __init__(self, instance: Instance, policy, placer: Placer, preemption_cost, seed,
                 check_invariants: bool, progress: Callable | None, preemption_point: str = "iteration",
                 observer=None):
        self.cluster = instance.cluster
        self.job_status = [job.status for job in instance.jobs]
        self.policy = policy
        # what errors call the policy: its name, or its class's for a user's object left unnamed
        self.policy_name = policy_label(policy)
        self.placer = placer
        self.c_pre = preemption_cost
        self.immediate = preemption_point == "immediate"
        self.seed = seed
        self.check = check_invariants
        self.progress = progress
        self.total_gpus = self.cluster.total_gpus
        self.free = list(self.cluster.server_gpus)
        self.free_total = self.total_gpus
        self.now = 0
        self.n_done = 0
        self.heap: list = []
        self.seq = 0
        self.waiting: dict[int, JobView] = {}
        self.running: dict[int, JobView] = {}
        self.stopping: dict[int, JobView] = {}   # running jobs running on to an iteration boundary
        self.arrived: list[JobView] = []
        self.completed: list[CompletedJob] = []
        self.next_wake = None
        self.wake_token = 0      # the current wake-up request's number (_stale)
        self.started: list[int] = []
        self.just_started: list[JobView] = []   # since the previous decision (shown to the policy)
        self.just_stopped: list[JobView] = []

        self.views: list[JobView] = job_views(instance)
        self.states: list[_JobState] = [
            _JobState(job.processing_time if job.model is None else job.iterations) for job in instance.jobs]
        self.arrival_order = sorted(range(len(self.views)),
                                    key=[(v.arrival, v.key) for v in self.views].__getitem__)
        self.passes = 0
        # a loud event (an arrival, a completion: not a quiet kind) happened since the last view
        self.loud = False
        # guard rails (module docstring): consecutive stops that kept no work, the last such job,
        # and consecutive passes woken by the policy alone with jobs waiting and nothing else to happen
        self.futile = 0
        self.futile_job = -1
        self.storm = 0
        self.storm_since = 0
        self.clairvoyant = bool(policy.clairvoyant)
        # per-instance-size capacity (sum of free // per, for per > 1), kept up to date as GPUs are
        # taken or freed
        self.capacity: dict[int, int] | None = {} if placer.fits_iff_capacity else None
        self.has_next_wake = type(policy).next_wake is not Policy.next_wake
        self.before_decide = getattr(observer, "before_decide", None)
        self.after_decide = getattr(observer, "after_decide", None) or (observer if callable(observer) else None)
        # waiting jobs by shape, with count placers: instance size -> {instances: jobs}
        self.shapes = [(jv.gpus // jv.instances, jv.instances) if jv.instances else (1, jv.gpus)
                       for jv in self.views]
        self.waiting_shapes: dict[int, dict[int, int]] | None = {} if placer.fits_iff_capacity else None
        # ... and, for non-preemptive policies, in waiting order: shape -> [(entry number, index)]
        # (entries of jobs that left the waiting set are dropped when met, see _scan_shapes)
        self.shape_queues: dict[tuple, collections.deque] | None = (
            {} if placer.fits_iff_capacity and not policy.preemptive else None)
        self.entries = itertools.count()
        self.entry = [-1] * len(self.views)   # entry number of each job's latest wait
        self.undo: dict = {}     # jobs stopped at once in this pass: index -> (segment, tau, restart_until, executed)
        # the previous pass's selection after the running head, as a held decision's next pass
        # inherits it (its blocked jobs, in order; None where it does not carry over): _apply_carried
        self.carried: list | None = None
        # the held decision's order and the time it holds until (Decision.stands_until: _stands)
        self.held = None
        self.standing = None
        # the running-index arrays handed to the policy in this pass (_arrays_now), and the pass
        self.handed: list = []
        self.handed_pass = -1
        self.future = None       # after a pass that filled idle GPUs: what the left-out jobs will free
        # GPU counts of waiting jobs, kept only where work conservation is checkable cheaply
        self.waiting_gpus = _Smallest() if (policy.work_conserving and placer.fits_iff_capacity) else None
        self.live_parts = ClusterView.live_parts(self)   # every view's waiting/running/stopping/free wrappers
        # GPU counts of all waiting jobs, for preemptive policies (ClusterView.settled)
        self.waiting_least = _Smallest() if policy.preemptive else None
        # every job is a DNN job that runs on to an iteration boundary when preempted (_fill_idle)
        self.boundary_only = not self.immediate and not any(v.is_abstract for v in self.views)
        self.no_instances = not any(v.instances for v in self.views)   # no job made of gang instances

    # -- time accounting ---------------------------------------------------------------------------
    def work_done(self, i: int):
        st = self.states[i]
        if st.status not in (_RUNNING, _STOPPING):
            return st.done
        return st.done + self._progress_between(st, st.t_last, self.now)

    def resume_time(self, i: int):
        """When job ``i``'s work progresses from: the end of its restart after a preemption
        (``preemption_cost``) while that is ahead, else now."""
        st = self.states[i]
        r = st.restart_until
        return r if (st.status == _RUNNING and r > self.now) else self.now

    def running_resumes(self):
        """:meth:`resume_time` over the running jobs in the order of ``running`` (numpy, the order
        and arrays :meth:`running_arrays` used), or None where every running job progresses now
        (always without a preemption cost) or the arrays are not in use."""
        arr = self.arrays
        if not self.c_pre or arr is None or arr.exact or not floaty(self.now):
            return None
        now = self.now
        eff = arr.state[1, arr.run[:arr.n_run]]
        later = eff > now
        if not later.any():
            return None
        return arr.np.where(later, eff, now)

    def running_progress(self) -> list:
        """``(view, work done, iteration time, stopping)`` of every running job, in the order of
        ``running``: in one pass, the values ``work_done``, ``ClusterView.iteration_time`` and
        ``ClusterView.is_stopping`` give one by one (the same arithmetic, so the same numbers)."""
        now, states, progress = self.now, self.states, self._progress_between
        out = []
        append = out.append
        for i, jv in self.running.items():
            st = states[i]
            tau = st.tau
            append((jv, st.done + progress(st, st.t_last, now), jv.tau_star if tau is None else tau,
                    st.status == _STOPPING))
        return out

    def _arrays_now(self):
        """``(arrays, index)``: the progress arrays (made at the first call) and a copy of the
        running jobs' indices, or None where the arrays or the clock are not floats."""
        arr = self.arrays
        if arr is None:
            arr = self.arrays = _ProgressArrays(self.states, self.running)
        if arr.exact or not floaty(self.now):
            return None
        idx = arr.run[:arr.n_run].copy()
        idx.flags.writeable = False     # (this pass's running jobs, each once: keeps_running_jobs knows it)
        if self.handed_pass != self.passes:
            self.handed_pass, self.handed = self.passes, []
        self.handed.append(idx)
        return arr, idx

    def running_arrays(self):
        """``(index, done, tau, stopping)``: numpy arrays over the running jobs in the order of
        ``running`` (job indices, work done now, iteration time, stopping flags), the values
        :meth:`running_progress` gives, bit for bit (the same IEEE operations in the same order);
        or None when they would not be (a value that is not a float or an int below 2**53, as in
        exact runs with Fractions, or an abstract job). With no job stopping the flags are a
        read-only array of False."""
        got = self._arrays_now()
        if got is None:
            return None
        arr, idx = got
        np = arr.np
        now = self.now
        done, eff, tau = arr.state.take(idx, axis=1)
        # progress (now - eff) / tau where now > eff, else 0 (then 0 / tau: the same +0.0 that
        # running_progress adds)
        delta = now - eff
        np.maximum(delta, 0.0, out=delta)
        delta /= tau
        done += delta
        stopping = self.stopping
        if stopping:
            mark = arr.mark
            s = np.fromiter(stopping, dtype=np.intp, count=len(stopping))
            mark[s] = True
            flags = mark[idx]
            mark[s] = False
        else:
            flags = arr.none_stopping[:len(idx)]
        return idx, done, tau, flags

    def running_executed_arrays(self):
        """``(index, executed)``: numpy arrays over the running jobs in the order of ``running``
        (job indices, executed time now), the values :meth:`running_executed` gives, bit for bit
        and all of them floats; or None when they would not be (as :meth:`running_arrays`, or an
        int clock with a job whose executed time would be an int)."""
        got = self._arrays_now()
        if got is None:
            return None
        arr, idx = got
        now = self.now
        if type(now) is not float and not arr.spent_float[idx].all():
            return None
        executed, start = arr.spent.take(idx, axis=1)
        executed += now - start     # executed + (now - start): the same operations
        return idx, executed

    def running_executed(self) -> list:
        """``(view, executed time, stopping)`` of every running job, in the order of ``running``:
        what ``executed_time`` and ``ClusterView.is_stopping`` give one by one."""
        now, states = self.now, self.states
        return [(jv, states[i].executed + (now - states[i].seg_start), states[i].status == _STOPPING)
                for i, jv in self.running.items()]

    def waiting_arrays(self):
        """``(index, done, executed)``: numpy arrays over the waiting jobs in the order of
        ``waiting`` (job indices, work done, executed time), the values :meth:`waiting_progress`
        gives as float64; or None where a value would not be a float or an int below 2**53."""
        import numpy as np

        wv = self.waiting_values
        if wv is None:
            wv = self.waiting_values = _WaitingArrays(self.states)
        if wv.exact:
            return None
        idx = np.fromiter(self.waiting, dtype=np.intp, count=len(self.waiting))
        done, executed = wv.values.take(idx, axis=1)
        return idx, done, executed

    def waiting_progress(self) -> list:
        """``(view, work done, executed time)`` of every waiting job, in the order of
        ``waiting``: what ``work_done`` and ``executed_time`` give one by one."""
        states = self.states
        return [(jv, states[i].done, states[i].executed) for i, jv in self.waiting.items()]

    def executed_time(self, i: int):
        st = self.states[i]
        if st.status in (_RUNNING, _STOPPING):
            return st.executed + (self.now - st.seg_start)
        return st.executed

    @staticmethod
    def _progress_between(st: _JobState, t0, t1):
        """The progress law, the one place it is written (its inverse is
        :meth:`_completion_time`; :meth:`running_arrays` applies it in numpy, with the same IEEE
        operations): work done by a running job between ``t0`` and ``t1``, none before its
        restart ends, then ``1 / tau`` units per second (one per second for abstract jobs)."""
        eff = st.restart_until if st.restart_until > t0 else t0
        if t1 <= eff:
            return 0
        return (t1 - eff) if st.tau is None else (t1 - eff) / st.tau

    def _advance(self, st: _JobState, t) -> None:
        st.done += self._progress_between(st, st.t_last, t)
        st.t_last = t

    def _push(self, t, kind, i, token) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, kind, self.seq, i, token))

    def _completion_time(self, st: _JobState):
        start = st.restart_until if st.restart_until > self.now else self.now
        left = st.work - st.done
        if left <= 0:
            return start
        return start + (left if st.tau is None else left * st.tau)

    def settled(self) -> bool:
        """:attr:`ClusterView.settled`: no job is stopping and no waiting job fits in the idle GPUs
        (a preemptive policy's run; False otherwise)."""
        least = self._least_waiting()
        return least is not None and not self.stopping and least > self.free_total

    def _least_waiting(self):
        """The fewest GPUs a waiting job needs (``math.inf`` when none waits), from
        ``waiting_least``; None where it is not kept (non-preemptive runs)."""
        least = self.waiting_least
        if least is None:
            return None
        return least.smallest() if least.counts else _INF

    # -- state changes -------------------------------------------------------------------------------
    def _start(self, i: int, jv: JobView, alloc: Allocation) -> None:
        st = self.states[i]
        undo = self.undo.pop(i, None) if self.undo else None
        if undo is not None and undo[0].servers == alloc.servers:
            self._resume(i, jv, st, undo)
            return
        free = self.free
        for h, g in alloc.servers:
            free[h] -= g
            if free[h] < 0:   # always checked, here where it can happen
                raise AsrptError(f"t={self.now}: placement {self.placer.name} over-allocated server {h} "
                                 f"for job {jv.id} ({free[h] + g} free, {g} taken)")
        self.free_total -= jv.gpus
        if self.capacity:
            self._capacity_update(alloc.servers, -1)
        if self.waiting_shapes is not None:
            self._shape_leaves(i)
        now = self.now
        st.status = _RUNNING
        st.servers = alloc.servers
        st.tau = None if jv.is_abstract else alloc.tau
        if st.tau is not None and jv.tau_star:
            st.beta = max(st.beta, st.tau / jv.tau_star)
        st.seg_start = now
        st.seg_done = st.done
        st.t_last = now
        st.restart_until = now + self.c_pre if (st.preemptions and self.c_pre) else now
        if st.first_start is None:
            st.first_start = now
        st.version += 1
        if self.arrays is not None:
            self.arrays.sync(i, st)
        self.started.append(i)  # removed from `waiting` after the scan (the order may be a live view)
        if self.waiting_gpus is not None and not jv.instances:
            self.waiting_gpus.remove(jv.gpus)
        if self.waiting_least is not None:
            self.waiting_least.remove(jv.gpus)
        self.just_started.append(jv)
        self.running[i] = jv
        if self.arrays is not None:
            self.arrays.enter(i)
        self._push(self._completion_time(st), _COMPLETE, i, st.version)

    def _capacity_update(self, servers, sign: int) -> None:
        """Keep every cached instance capacity exact after ``servers`` ((server, GPUs), ...) were
        taken (``sign`` -1, already subtracted from ``free``) or freed (+1, already added)."""
        free, cap = self.free, self.capacity
        for h, g in servers:
            now = free[h]
            was = now - sign * g
            for per, c in cap.items():   # (only existing keys are assigned: the dict keeps its size)
                cap[per] = c + (now // per - was // per)

    def _shape_enters(self, i: int) -> None:
        shape = self.shapes[i]
        per, count = shape
        counts = self.waiting_shapes.setdefault(per, {})
        counts[count] = counts.get(count, 0) + 1
        if self.shape_queues is not None:
            e = self.entry[i] = next(self.entries)
            q = self.shape_queues.get(shape)
            if q is None:
                q = self.shape_queues[shape] = collections.deque()
            q.append((e, i))

    def _scan_shapes(self, free_total: int) -> None:
        """A first-fit backfill pass over the waiting set in its own order (FIFO) that visits only
        jobs of shapes that may still start: what the scan of every waiting job does, since it
        would skip every other job (too large for ``free_total``, or of a shape refused earlier in
        the pass, see ``_decide``)."""
        queues, views, states, entry = self.shape_queues, self.views, self.states, self.entry
        try_start, drop_stale = self._try_start, self._drop_stale
        heap = []
        empty = None
        for shape, q in queues.items():
            if shape[0] * shape[1] > free_total:
                continue
            if q:
                e, i = q[0]
                if states[i].status == _WAITING and entry[i] == e:   # (a live head: nothing to drop)
                    heap.append((e, shape))
                    continue
                drop_stale(q)
            if q:
                heap.append((q[0][0], shape))
            elif empty is None:
                empty = [shape]
            else:
                empty.append(shape)
        if empty is not None:
            for shape in empty:
                del queues[shape]
        if len(heap) == 1:   # one shape may start (often: few idle GPUs): its queue in order
            shape = heap[0][1]
            need = shape[0] * shape[1]
            q = queues[shape]
            while need <= free_total and try_start(views[q[0][1]]):
                free_total = self.free_total
                if not free_total:
                    return
                q.popleft()
                drop_stale(q)
                if not q:
                    return
            return
        heapq.heapify(heap)
        refused: dict[int, int] = {}
        while heap:
            shape = heap[0][1]
            per, count = shape
            least = refused.get(per)
            if per * count > free_total or (least is not None and count >= least):
                heapq.heappop(heap)
                continue
            q = queues[shape]
            if not try_start(views[q[0][1]]):
                refused[per] = count
                heapq.heappop(heap)
                continue
            free_total = self.free_total
            if not free_total:
                return
            q.popleft()
            drop_stale(q)
            if q:
                heapq.heapreplace(heap, (q[0][0], shape))
            else:
                heapq.heappop(heap)

    def _drop_stale(self, q) -> None:
        """Pop the entries at the front of a shape queue whose job no longer waits under that
        entry (it started, or left and waits again under a newer one)."""
        states, entry = self.states, self.entry
        while q and (states[q[0][1]].status != _WAITING or entry[q[0][1]] != q[0][0]):
            q.popleft()

    def _shape_leaves(self, i: int) -> None:
        per, count = self.shapes[i]
        counts = self.waiting_shapes[per]
        left = counts[count] - 1
        if left:
            counts[count] = left
        else:
            del counts[count]
            if not counts:
                del self.waiting_shapes[per]

    def _all_refused(self, refused: dict, free_total: int) -> bool:
        """True when no waiting job can start in this non-preemptive pass: each waiting shape
        needs more than ``free_total`` GPUs or at least the instances refused for its size."""
        for per, counts in self.waiting_shapes.items():
            if per > free_total:   # (every shape of this size needs at least `per` GPUs)
                continue
            least = min(counts)
            if per * least <= free_total:
                r = refused.get(per)
                if r is None or least < r:
                    return False
        return True

    def _resume(self, i: int, jv: JobView, st: _JobState, undo) -> None:
        """Undo a preemption made earlier in this decision pass: the job gets the same GPUs back
        at the same instant, so it simply never stopped (no preemption, no restart)."""
        seg, tau, restart_until, executed, done = undo
        for h, g in seg.servers:
            self.free[h] -= g
        self.free_total -= jv.gpus
        if self.capacity:
            self._capacity_update(seg.servers, -1)
        if self.waiting_shapes is not None:
            self._shape_leaves(i)
        st.segments.pop()
        if st.done == st.seg_done and self.futile:
            self.futile -= 1        # (the stop that never was is not counted)
        st.done = done              # (a job stopped on its boundary gets back the work snapped off)
        st.executed = executed      # as it was (subtracting the segment back may round)
        st.status = _RUNNING
        st.servers = seg.servers
        st.tau = tau
        st.seg_start = seg.start
        st.restart_until = restart_until
        st.preemptions -= 1
        st.version += 1
        if self.arrays is not None:
            self.arrays.sync(i, st)
        self.just_stopped.remove(jv)
        self.started.append(i)
        if self.waiting_gpus is not None and not jv.instances:
            self.waiting_gpus.remove(jv.gpus)
        if self.waiting_least is not None:
            self.waiting_least.remove(jv.gpus)
        self.running[i] = jv
        if self.arrays is not None:
            self.arrays.enter(i)
        self._push(self._completion_time(st), _COMPLETE, i, st.version)

    def _release(self, i: int, st: _JobState) -> None:
        now = self.now
        restart = (st.restart_until if st.restart_until < now else now) - st.seg_start
        st.segments.append(_SEGMENT_BUILD(st.seg_start, now, st.servers, st.tau, restart if restart > 0 else 0))
        st.executed += now - st.seg_start
        free = self.free
        for h, g in st.servers:
            free[h] += g
        self.free_total += self.views[i].gpus
        if self.capacity:
            self._capacity_update(st.servers, 1)
        st.servers = ()
        del self.running[i]
        if self.arrays is not None:
            self.arrays.leave(i)

    def _complete(self, i: int) -> None:
        st = self.states[i]
        if st.status == _STOPPING:
            del self.stopping[i]
        st.done = st.work
        self._release(i, st)
        st.status = _DONE
        st.completion = self.now
        self.n_done += 1
        self.futile = 0
        # CompletedJob(view, now, work, status), without the frozen setattr
        self.completed.append(_completed(self.views[i], self.now, st.work, self.job_status[i]))

    def _stop_now(self, i: int, st: _JobState) -> None:
        if st.status == _STOPPING:
            del self.stopping[i]
        if st.done == st.seg_done:   # the segment kept no work: a futile stop (guard rail: livelock)
            self.futile += 1
            self.futile_job = i
        else:
            self.futile = 0
        self._release(i, st)
        st.status = _WAITING
        st.preemptions += 1
        st.version += 1
        st.tau = None
        self.waiting[i] = self.views[i]
        if self.waiting_values is not None:
            self.waiting_values.write(i, st)
        self.just_stopped.append(self.views[i])
        if self.waiting_gpus is not None and not self.views[i].instances:
            self.waiting_gpus.add(self.views[i].gpus)
        if self.waiting_least is not None:
            self.waiting_least.add(self.views[i].gpus)
        if self.waiting_shapes is not None:
            self._shape_enters(i)

    def _preempt(self, i: int) -> None:
        st = self.states[i]
        now = self.now
        self._advance(st, now)
        if self.arrays is not None:
            self.arrays.sync(i, st)
        tau, restart_until, executed, done = st.tau, st.restart_until, st.executed, st.done
        if st.tau is None or now <= st.restart_until or self.immediate:
            self._stop_now(i, st)
            self.undo[i] = (st.segments[-1], tau, restart_until, executed, done)
            return
        # DNN job: run on to the next iteration boundary (floats within 1e-9 of one count as on it).
        target = math.ceil(done - 1e-9 * max(1.0, done)) if isinstance(done, float) else math.ceil(done)
        if target <= done:      # on a boundary: it stops now (undone, work and all, if given back its GPUs)
            st.done = target
            self._stop_now(i, st)
            self.undo[i] = (st.segments[-1], tau, restart_until, executed, done)
            return
        t_boundary = now + (target - done) * st.tau
        if target >= st.work:
            return  # the job finishes before (or at) its next boundary: let it complete
        st.status = _STOPPING
        self.stopping[i] = self.views[i]
        st.stop_token += 1
        st.stop_target = target
        self._push(t_boundary, _STOP, i, st.stop_token)

    # -- the decision pass -----------------------------------------------------------------------------
    def _try_start(self, jv: JobView) -> bool:
        if jv.gpus > self.free_total:
            return False
        capacity = self.capacity
        if capacity is not None:  # count placers: reject by a cached instance capacity
            per, count = self.shapes[jv.index]   # (instance size, instances)
            if per > 1:   # (one-GPU instances: the capacity is free_total, checked above)
                free = self.free
                if len(free) == 1:   # one server: its own count, nothing cached to keep up to date
                    if free[0] // per < count:
                        return False
                else:
                    cap = capacity.get(per)
                    if cap is None:
                        cap = capacity[per] = sum([f // per for f in free])
                    if cap < count:
                        return False
        alloc = self.placer.allocate(jv, self.free, self.cluster)
        if alloc is None:
            return False
        if self.check:
            self._check_allocation(jv, alloc)
        self._start(jv.index, jv, alloc)
        return True

    def _view(self) -> ClusterView:
        """A view for the policy; what happened since the previous view is shown once."""
        view = ClusterView(self, self.clairvoyant)
        self.loud = False
        self.arrived.clear()
        self.completed.clear()
        self.just_started.clear()
        self.just_stopped.clear()
        return view

    def _request_wake(self, wake) -> None:
        if wake is not None and wake > self.now and (self.next_wake is None or wake < self.next_wake):
            self.next_wake = wake
            self.wake_token += 1    # (an earlier request still in the heap is stale, equal time or not)
            self._push(wake, _WAKE, -1, self.wake_token)

    def _decide(self) -> None:
        self.passes += 1
        if self.undo:
            self.undo.clear()
        policy = self.policy
        if self.standing is not None and not self.loud and self.now < self.standing:
            self._stands()      # (a held decision: the policy is not asked)
            return
        view = self._view()
        if self.before_decide is not None:
            self.before_decide(view)
        decision = policy.decide(view)
        if policy.preemptive and type(decision.order) not in (list, tuple, MergedOrder):
            # a lazy order may read the live view, which this pass changes (a job preempted at
            # once waits at once): read it now, as the reference engine does
            decision = type(decision)(_read_now(decision.order), decision.backfill, decision.wake_at,
                                      decision.stands_until)
        # Whether applying the order would start and stop nothing, derived here from the order's
        # own entries (asrpt.order.keeps_running_jobs) in a settled view; then it is not read.
        keeps = (policy.preemptive and decision.backfill and self.settled()
                 and keeps_running_jobs(decision.order, self.running, self.total_gpus,
                                        self.handed if self.handed_pass == self.passes else ()))
        if self.after_decide is not None:
            if not isinstance(decision.order, (list, tuple)):   # the observer may read it: a list
                decision = type(decision)(list(decision.order), decision.backfill, decision.wake_at,
                                          decision.stands_until)
            self.after_decide(view, decision)
        # a held decision (Decision.stands_until): its order as read now (a MergedOrder is read
        # again from the policy's entries, which change only when it is asked)
        standing = decision.stands_until if decision.backfill and policy.preemptive else None
        if standing is not None and standing > self.now:
            if type(decision.order) is not MergedOrder or self.has_next_wake:
                decision = type(decision)(list(decision.order), True, decision.wake_at, standing)
            self.held, self.standing = decision.order, standing
        else:
            self.held = self.standing = None
        if decision.wake_at is not None:
            self._request_wake(decision.wake_at)
        backfill = decision.backfill
        states = self.states
        self.future = None
        if policy.preemptive:
            if keeps:
                self.carried = None
                if self.check:
                    self._check_keeps_running(decision)
            else:
                self._apply_preemptive(decision.order, backfill)
        else:
            # GPUs are only taken during a non-preemptive pass, so with a placer that fits iff the
            # capacity suffices a refusal is final for the pass: a job of `per`-GPU instances is
            # refused once `count` of them were (fewest refused per instance size in `refused`).
            # Once every waiting shape is refused, the rest of the order cannot start: stop there.
            free_total = self.free_total
            order = decision.order
            if (free_total and backfill and self.shape_queues is not None
                    and getattr(order, "_d", None) is self.waiting):   # the live waiting set itself
                self._scan_shapes(free_total)
            elif free_total and ((refused := {} if self.capacity is not None else None) is None
                                 or not self._all_refused(refused, free_total)):
                running = self.running
                shapes, try_start, all_refused = self.shapes, self._try_start, self._all_refused
                for jv in order:
                    i = jv.index
                    if states[i].status != _WAITING or i in running:
                        raise AsrptError(f"non-preemptive policy {self.policy_name} listed job {jv.id}, "
                                         "which is not waiting")
                    if jv.gpus > free_total:
                        if not backfill:
                            break
                        continue
                    if refused is not None:
                        per, count = shapes[i]
                        least = refused.get(per)
                        if least is not None and count >= least:
                            continue    # (backfill only: a strict pass stopped at its first refusal)
                        if not try_start(jv):
                            if not backfill:
                                break
                            refused[per] = count
                            if all_refused(refused, free_total):
                                break
                            continue
                        free_total = self.free_total
                        if not free_total or all_refused(refused, free_total):
                            break
                        continue
                    if not try_start(jv):
                        if not backfill:
                            break
                        continue
                    free_total = self.free_total
                    if not free_total:
                        break
        self._end_pass()
        if self.check:
            self._check_state(decision)
        if self.has_next_wake:
            self._request_wake(policy.next_wake(self._view()))

    def _stands(self) -> None:
        """A pass the held decision covers (:attr:`~asrpt.state.Decision.stands_until`; the caller
        checked the time and that no job arrived or completed since the policy was asked),
        applied without the policy: the order "running jobs that are not stopping, then the held
        order's other jobs, in its order" (:meth:`_held_order`). Derived here without reading it
        where that can be done:

        - in a settled view it selects exactly the running jobs (no job is stopping, and no
          waiting job fits in what they leave): nothing to do;
        - where the previous pass's selection carries over (``carried``: its blocked jobs), the
          selection after the running jobs is those of them still waiting
          (:meth:`_apply_carried`), and where the idle fill can start nothing
          (:meth:`_fill_skipped`) nothing else needs the order.

        Else the held order is applied as any decision is. The deltas stay for the next view."""
        self.future = None
        if self.settled():
            if self.check:
                self._check_held(())
            self.carried = None
        elif self.carried is not None and self._fill_skipped(self.carried):
            if self.check:
                self._check_held(self.carried)
            self._apply_carried()
        else:
            self._apply_preemptive(self._held_order(), True)
        self._end_pass()
        if self.check:
            self._check_state(None)

    def _held_order(self):
        """The order a held decision applies at a later pass: the running jobs that are not
        stopping (they keep their GPUs), then the held order's other jobs in its order (read
        lazily)."""
        stopping = self.stopping
        head = [jv for i, jv in self.running.items() if i not in stopping]
        kept = set(map(_INDEX_OF, head))
        return itertools.chain(head, itertools.filterfalse(lambda jv: jv.index in kept, self.held))

    def _check_held(self, carried) -> None:
        """``check_invariants``: the derivations of :meth:`_stands` hold (the greedy selection over
        the held order, after the running jobs that are not stopping, is ``carried``)."""
        selected = self._select(list(self._held_order()), True)[0]
        n_head = len(self.running) - len(self.stopping)
        if list(map(_INDEX_OF, selected[n_head:])) != list(map(_INDEX_OF, carried)):
            raise AssertionError(f"t={self.now}: the held decision of policy {self.policy_name} selects "
                                 f"{len(selected) - n_head} job(s) after the running ones, not the "
                                 f"{len(carried)} carried over")

    def _end_pass(self) -> None:
        """What ends every pass: the jobs it started leave the waiting set (after the scan: the
        order may be a live view of it), and the cheap work-conservation check."""
        if self.started:
            waiting = self.waiting
            for i in self.started:
                del waiting[i]
            self.started.clear()
        if self.free_total and self.waiting_gpus is not None and self.waiting_gpus.counts:   # (else nothing to check)
            self._check_cheap()
        if self.futile > LIVELOCK_STOPS:
            self._livelock()

    def _livelock(self) -> None:
        job = self.views[self.futile_job]
        raise AsrptError(
            f"livelock at t={self.now}: policy {self.policy_name} preempted jobs {self.futile} times in a row "
            f"with no job completing and none of them keeping any work (last: {job.id}); its ranks may depend "
            "on work done that preemption gives back (a preempted job stops at its iteration boundary, and "
            "work within 1e-9 of one counts as on it) or on a restart cost it keeps paying")

    def _wake_storm(self) -> None:
        job = next(iter(self.waiting.values()))
        raise AsrptError(
            f"wake-up storm: policy {self.policy_name} woke itself {self.storm} times from t={self.storm_since} to "
            f"t={self.now} with {len(self.waiting)} job(s) waiting (e.g. {job.id}), none running and no arrival "
            "left, and started nothing: only its own decisions can end the run")

    def _apply_preemptive(self, order, backfill: bool) -> None:
        """Apply a preemptive decision's order: select greedily in it, preempt the running jobs
        left out, start the selected ones, give idle GPUs to jobs left out (module docstring)."""
        states = self.states
        selected, skipped, order = self._select(order, backfill)
        running, stopping = self.running, self.stopping
        chosen = set(map(_INDEX_OF, selected))
        if len(chosen) != len(selected):
            raise AsrptError(f"policy {self.policy_name} listed a job twice")
        # the selected jobs not holding GPUs (C's fast path for a dict: no copy of its keys);
        # the others hold GPUs, so some running job is left out iff they are fewer than running
        fresh = chosen.difference(running)
        left_out = []
        kept_on = False     # a job left out runs on to its completion (neither stopping nor stopped)
        if len(chosen) - len(fresh) < len(running):     # (most passes preempt none)
            left_out = list(itertools.filterfalse(chosen.__contains__, running))   # (in running order)
            # (those already stopping are left as they are: filtered in C)
            for idx in list(itertools.filterfalse(stopping.__contains__, left_out)) if stopping else left_out:
                if states[idx].status == _RUNNING:
                    self._preempt(idx)
                    kept_on = kept_on or states[idx].status == _RUNNING
        blocked: list[JobView] = []         # selected, waiting, and not placeable now
        if backfill:
            # The selected jobs holding GPUs keep them (the ones stopping are kept running);
            # the others start in the selected order. Nothing here depends on the order
            # between the two kinds, so only the jobs to start are walked, in order.
            if fresh:
                # (in the selected order; one fresh job, the usual case, needs no walk)
                starts = ([self.views[next(iter(fresh))]] if len(fresh) == 1 else
                          itertools.compress(selected, map(fresh.__contains__, map(_INDEX_OF, selected))))
                for jv in starts:
                    if states[jv.index].status != _WAITING:
                        raise AsrptError(f"policy {self.policy_name} listed job {jv.id}, which is not active")
                    # (_try_start's first test, without the call: the GPUs held by jobs left out
                    # and still running to a boundary block most of these starts)
                    if jv.gpus > self.free_total or not self._try_start(jv):
                        blocked.append(jv)
            if self.stopping:               # selected again before its boundary: keep running
                for i in list(filter(chosen.__contains__, self.stopping)):
                    st = states[i]
                    st.status = _RUNNING
                    del self.stopping[i]
                    st.stop_token += 1
        else:
            for jv in selected:
                st = states[jv.index]
                status = st.status
                if status == _WAITING:
                    if not self._try_start(jv):
                        break
                elif status == _STOPPING:   # selected again before its boundary: keep running
                    st.status = _RUNNING
                    del self.stopping[jv.index]
                    st.stop_token += 1
                elif status != _RUNNING:
                    raise AsrptError(f"policy {self.policy_name} listed job {jv.id}, which is not active")
        # GPUs the selection counted on but cannot use now: held by jobs left out that are still
        # running (to an iteration boundary, or to a completion before one), or refused by the
        # placer. Other jobs may use them, in the policy's order, without delaying a selected one.
        filled = False
        if backfill and self.free_total and (blocked or (left_out and not running.keys().isdisjoint(left_out))):
            filled = self._idle_fill(lambda: itertools.chain(skipped, order), chosen, blocked, left_out)
        self.carried = blocked if backfill and not filled and not kept_on else None

    def _apply_carried(self) -> None:
        """Apply a held decision (:meth:`_stands`) in a pass where the previous pass's selection
        carries over (``carried`` holds its blocked jobs, in order): the selected jobs after the
        running ones are those blocked jobs, since the jobs that changed state in between are
        the ones that started (now running) and the ones that stopped at an iteration boundary
        (left out, and waiting now at the same rank), and none of that moves any job into the
        greedy selection or out of it:

        - the GPUs the selection walks with after the running jobs fell by exactly the GPUs of
          the jobs that started, all of them selected before (the engine started no job outside
          its selection, and no job left out ran on to its completion), so at each rank the walk
          has at most the GPUs it had: a job skipped then is skipped now;
        - the blocked jobs need no more than the GPUs it has: they fitted with the started ones
          counted in.

        Then, as in :meth:`_apply_preemptive`, the blocked ones are started in order where they
        fit; the caller checked that the idle fill after them can start nothing
        (:meth:`_fill_skipped`). Every stopping job is left out (none was selected), and none
        is preempted. ``check_invariants`` selects over the order and checks the derivation
        (:meth:`_check_held`)."""
        blocked: list[JobView] = []
        for jv in self.carried:     # (blocked in the previous pass, and nothing started them since)
            if jv.gpus > self.free_total or not self._try_start(jv):
                blocked.append(jv)
        if self.free_total and (blocked or self.stopping):
            self.future = ()        # (the idle fill is skipped: _fill_skipped)
        self.carried = blocked

    def _idle_fill(self, candidates: Callable, chosen: set, blocked: list, left_out: list) -> bool:
        """:meth:`_fill_idle` over ``candidates()``, where it can start a job; True if it did.

        Where every job runs on to an iteration boundary when preempted (``boundary_only``) and
        the placer fits whenever the GPUs suffice, no blocked job made of gang instances, the
        idle fill can start nothing, so it is skipped: every blocked job then reserves its
        placement (one-GPU instances: the reservations need no more GPUs than the selection
        left them), so what they leave of the GPUs is exactly what the greedy selection had
        left at its end, L; and every job the selection left out needs more than L (the GPUs
        it had at that job's rank, at least L). A candidate must fit in what the reservations
        leave (at most L): none does. ``check_invariants`` runs fill anyway and check that
        nothing started."""
        if self._fill_skipped(blocked):
            if not self.check:
                self.future = ()    # (reservations made in principle: the GPUs left idle are theirs)
                return False
            if self._fill_idle(candidates(), chosen, blocked, left_out):
                raise AssertionError(f"t={self.now}: the idle fill started a job where every blocked job "
                                     "reserves its placement")
            return False
        return self._fill_idle(candidates(), chosen, blocked, left_out)

    def _fill_skipped(self, blocked: list) -> bool:
        """Whether the idle fill after a selection whose blocked jobs are ``blocked`` can start
        nothing (:meth:`_idle_fill`): boundary-only DNN jobs, a count placer, no blocked job made
        of gang instances."""
        return self.boundary_only and self.capacity is not None and (
            self.no_instances or not any(jv.instances for jv in blocked))

    def _select(self, order, backfill: bool) -> tuple:
        """The greedy selection by GPU count over ``order`` (a decision's), in priority order:
        ``(selected, skipped, rest)``, the jobs scanned and not selected being the candidates
        for idle GPUs, ``rest`` an iterator over the jobs after the last one read.

        An order that offers ``chunks()`` (:attr:`~asrpt.state.Decision.order`) is read a chunk
        at a time: a list of jobs that fits in what is left is taken whole (its GPUs summed in
        C), which is what the walk job by job takes, since every job needs at least one GPU (the
        walk stops only when nothing is left, or at a job that does not fit). Once what is left
        is less than every waiting job needs, the running jobs read are counted (a chunk at a
        time); once every running job was read, no later job can be selected (a waiting one does
        not fit; any other would be listed twice, which the contract forbids and the reference
        engine checks), so the walk stops there.
        """
        budget = self.total_gpus
        selected: list[JobView] = []
        skipped: list[JobView] = []
        take = selected.append
        chunks = getattr(order, "chunks", None)
        least = self._least_waiting() if chunks is not None and backfill else None
        track = least is not None
        pieces = iter(chunks() if chunks is not None else (order,))
        running = self.running
        is_running = running.__contains__
        unread = len(running)   # the running jobs not read yet (counted once budget < least)
        n_sel = n_skip = 0
        for piece in pieces:
            if track and budget < least:
                unread -= sum(map(is_running, map(_INDEX_OF, selected[n_sel:])))
                unread -= sum(map(is_running, map(_INDEX_OF, skipped[n_skip:])))
                if unread <= 0:     # (this piece was not read: it starts the rest)
                    return selected, skipped, itertools.chain.from_iterable(itertools.chain((piece,), pieces))
                n_sel, n_skip = len(selected), len(skipped)
            if type(piece) is list and len(piece) > 1:
                g = sum(map(_GPUS_OF, piece))
                if g <= budget:
                    selected.extend(piece)
                    budget -= g
                    if not budget:
                        return selected, skipped, itertools.chain.from_iterable(pieces)
                    continue
            jobs = iter(piece)
            for jv in jobs:
                g = jv.gpus
                if g <= budget:
                    take(jv)
                    budget -= g
                    if not budget:
                        return selected, skipped, itertools.chain(jobs, itertools.chain.from_iterable(pieces))
                elif not backfill:
                    return selected, skipped, itertools.chain(jobs, itertools.chain.from_iterable(pieces))
                else:
                    skipped.append(jv)
        return selected, skipped, iter(())

    def _check_keeps_running(self, decision) -> None:
        """``check_invariants``: the derivation of :func:`~asrpt.order.keeps_running_jobs` holds
        (the greedy selection over the order is exactly the running set)."""
        selected = set(map(_INDEX_OF, self._select(decision.order, True)[0]))
        if selected != set(self.running):
            raise AssertionError(f"t={self.now}: the order of policy {self.policy_name} was found to keep the "
                                 f"running jobs, but it selects {sorted(selected - set(self.running))} and leaves "
                                 f"out {sorted(set(self.running) - selected)} (a MergedOrder needs sorted runs with "
                                 "unique keys, views by index, and running entries that are the running jobs)")

    def _fill_idle(self, candidates, chosen: set, blocked: list, left_out: list) -> bool:
        """Start jobs the selection left out on GPUs that are idle now; True if it started one.

        ``chosen``: the indices of the selected jobs (after a running head, only those after it:
        the candidates, read after them, are checked to be waiting anyway); ``left_out``: the
        running jobs the selection left out, some of which may have stopped at once since.
        ``future`` is what each server will have once the jobs left out release their GPUs; the
        blocked selected jobs reserve their placement in it first. A candidate that stops at once
        when preempted (abstract jobs, or ``preemption_point="immediate"``) may use any idle GPU
        (it never delays a selected job); a DNN job that would run on to an iteration boundary
        only uses idle GPUs that no reservation needs. The reservations are made when the first
        such candidate fits in the idle GPUs (only those starts read them or change ``future``),
        or at the end of the pass for ``check_invariants``. The walk over the candidates stops once
        no waiting job is small enough for the idle GPUs (the least GPU count of the waiting jobs,
        ``waiting_least``, is above them), and, when every job runs on to a boundary
        (``boundary_only``), once none is small enough for what the reservations leave of them.
        (That is rarely anything: the reservations take what the selection counted on, so GPUs
        are left only where a blocked job cannot reserve its placement either.)
        """
        states, free, cluster, running = self.states, self.free, self.cluster, self.running
        n_started = len(self.started)
        future = list(free)
        for i in left_out:
            if i in running:        # (not one that stopped at once in this pass: its GPUs are free)
                for h, g in states[i].servers:
                    future[h] += g
        self.future = future
        reserve = blocked         # the blocked jobs whose reservation is still to be made
        avail = None        # min(free, future) per server, kept up to date as jobs start here
        avail_total = 0
        fits = self._some_waiting_fits()
        # every waiting job runs on to an iteration boundary when preempted: once ``avail`` is
        # made, only jobs that fit in it can start, so the walk also stops when none does
        bounded = self.boundary_only
        for jv in candidates:
            if not fits:
                break
            i = jv.index
            if i in chosen or states[i].status != _WAITING or i in self.running or jv.gpus > self.free_total:
                continue
            if jv.is_abstract or self.immediate:
                if self._try_start(jv):
                    fits = self._some_waiting_fits()
                    if avail is not None:
                        for h, _ in states[i].servers:
                            a = free[h] if free[h] < future[h] else future[h]
                            avail_total += a - avail[h]
                            avail[h] = a
                continue
            if avail is None:
                if reserve:
                    self._reserve(reserve, future)
                    reserve = ()
                avail = [f if f < u else u for f, u in zip(free, future)]
                avail_total = sum(avail)
                if bounded and not self._some_waiting_fits(avail_total):
                    break
            if jv.gpus > avail_total:
                continue
            alloc = self.placer.allocate(jv, avail, cluster)
            if alloc is None:
                continue
            if self.check:
                self._check_allocation(jv, alloc)
            for h, g in alloc.servers:
                future[h] -= g
            self._start(i, jv, alloc)
            for h, _ in alloc.servers:
                a = free[h] if free[h] < future[h] else future[h]
                avail_total += a - avail[h]
                avail[h] = a
            fits = self._some_waiting_fits(avail_total if bounded else None)
        if reserve and self.check:
            self._reserve(reserve, future)
        return len(self.started) > n_started

    def _some_waiting_fits(self, within=None) -> bool:
        """Whether GPUs are idle and some waiting job needs no more than them (by its GPU count
        alone; True where the engine keeps no count of the waiting jobs), and, given ``within``,
        no more than ``within`` GPUs either."""
        free_total = self.free_total
        if not free_total:
            return False
        least = self._least_waiting()
        return least is None or (least <= free_total and (within is None or least <= within))

    def _reserve(self, blocked: list, future: list) -> None:
        """The blocked selected jobs reserve their placements in ``future``, in order."""
        placer, cluster = self.placer, self.cluster
        for jv in blocked:
            servers = placer.reserve(jv, future, cluster)
            if servers is not None:
                for h, g in servers:
                    future[h] -= g

    def _check_cheap(self) -> None:
        """Always on (with the over-allocation check of ``_start``): a work-conserving policy, with a
        placer that fits whenever the GPUs suffice, left no waiting job that fits in the idle GPUs."""
        wg = self.waiting_gpus   # (the caller checked that it is kept and not empty)
        if self.future is None and not self.stopping and wg.smallest() <= self.free_total:
            jv = next(v for v in self.waiting.values() if v.gpus == wg.smallest() and not v.instances)
            raise AsrptError(f"t={self.now}: work-conserving policy {self.policy_name} left job {jv.id} "
                             f"({jv.gpus} GPUs) waiting with {self.free_total} GPUs idle")

    # -- invariants (check_invariants=True) ---------------------------------------------------------------
    def _check_allocation(self, jv: JobView, alloc: Allocation) -> None:
        if alloc.gpus != jv.gpus:
            raise AssertionError(f"job {jv.id}: placement gave {alloc.gpus} GPUs, gang needs {jv.gpus}")
        for h, g in alloc.servers:
            if g > self.free[h]:
                raise AssertionError(f"job {jv.id}: placement over-allocates server {h}")
            if jv.instances and g % jv.gpu_per_instance:
                raise AssertionError(f"job {jv.id}: server {h} holds a partial gang instance")
        if not jv.is_abstract and alloc.tau is not None and alloc.tau < jv.tau_star * (1 - 1e-9):
            raise AssertionError(f"job {jv.id}: tau {alloc.tau} below tau* {jv.tau_star}")

    def _check_state(self, decision) -> None:
        used = [0] * len(self.free)
        for i in self.running:
            for h, g in self.states[i].servers:
                used[h] += g
        for h, cap in enumerate(self.cluster.server_gpus):
            if used[h] + self.free[h] != cap or self.free[h] < 0:
                raise AssertionError(f"t={self.now}: server {h} accounting broken ({used[h]} used, {self.free[h]} free)")
        if any((s.status == _STOPPING) != (i in self.stopping) for i, s in enumerate(self.states)):
            raise AssertionError(f"t={self.now}: the engine's list of stopping jobs is wrong")
        if self.arrays is not None and self.arrays.run[:self.arrays.n_run].tolist() != list(self.running):
            raise AssertionError(f"t={self.now}: the engine's array of running jobs is not its running dict")
        wv = self.waiting_values
        if wv is not None and not wv.exact and any(
                (wv.values[0, i], wv.values[1, i]) != (self.states[i].done, self.states[i].executed)
                for i in self.waiting):
            raise AssertionError(f"t={self.now}: the engine's arrays of waiting jobs' progress are stale")
        if self.policy.work_conserving and not self.stopping:
            reserved = self.future
            for jv in self.waiting.values():
                free = self.free
                if reserved is not None and not (jv.is_abstract or self.immediate):
                    free = [f if f < u else u for f, u in zip(self.free, reserved)]
                if jv.gpus <= sum(free) and self.placer.allocate(jv, free, self.cluster) is not None:
                    raise AssertionError(f"t={self.now}: work-conserving policy {self.policy_name} left "
                                         f"job {jv.id} waiting although it fits")

    # -- the loop ---------------------------------------------------------------------------------------------
    def run(self, label: str | None = None) -> SimResult:
        wall = _time.perf_counter()
        self.policy.reset(self.cluster, seed=self.seed)
        views, states, order = self.views, self.states, self.arrival_order
        n = len(order)
        ptr = 0
        heap = self.heap
        report_every = max(1, n // 200)
        reported = 0
        arrivals = [views[i].arrival for i in order] + [_INF]   # in arrival order, then a sentinel
        waiting, arrived, waiting_gpus, waiting_least = self.waiting, self.arrived, self.waiting_gpus, self.waiting_least
        shape_enters = self._shape_enters if self.waiting_shapes is not None else None
        heappop, decide = heapq.heappop, self._decide
        while True:
            while heap and self._stale(heap[0]):   # (a cancelled event must not set the clock)
                heappop(heap)
            t_heap = heap[0][0] if heap else _INF
            t_arr = arrivals[ptr]
            # At a tie keep the arrival's own value: a float wake-up time equal to an exact
            # arrival must not turn an exact run's clock into a float.
            t = t_arr if t_arr <= t_heap else t_heap
            if t == _INF:
                break
            self.now = t
            changed = False
            woken_only = True
            while heap and heap[0][0] == t and heap[0][1] < _WAKE:
                event = heappop(heap)
                if self._stale(event):
                    continue
                kind, i = event[1], event[3]
                if kind == _COMPLETE:
                    self._complete(i)
                    self.loud = True
                else:                   # _STOP (_stale knows every kind)
                    st = states[i]
                    self._advance(st, t)
                    st.done = st.stop_target
                    self._stop_now(i, st)
                changed, woken_only = True, False
            while arrivals[ptr] <= t:
                i = order[ptr]
                ptr += 1
                states[i].status = _WAITING
                jv = views[i]
                waiting[i] = jv
                arrived.append(jv)
                if waiting_gpus is not None and not jv.instances:
                    waiting_gpus.add(jv.gpus)
                if shape_enters is not None:
                    shape_enters(i)
                if waiting_least is not None:
                    waiting_least.add(jv.gpus)
                changed, woken_only = True, False
                self.loud = True
            while heap and heap[0][0] == t and heap[0][1] == _WAKE:
                if not self._stale(heappop(heap)):
                    self.next_wake = None
                    changed = True
            if changed:
                if woken_only and not self.running and ptr == n:
                    if not self.storm:
                        self.storm_since = t
                    self.storm += 1
                    if self.storm > WAKE_STORM_PASSES:
                        self._wake_storm()
                else:
                    self.storm = 0
                decide()
                if self.progress is not None and self.n_done - reported >= report_every:
                    reported = self.n_done
                    self.progress(reported, n)
                if self.n_done == n:
                    break   # every job is done: later wake-ups cannot change a record
        if self.waiting or self.running:
            raise stalled_run(self.now, self.policy_name, self.waiting, self.running)
        if self.progress is not None:
            self.progress(self.n_done, n)
        return self._result(_time.perf_counter() - wall, label)

    def _stale(self, event) -> bool:
        """Whether a heap entry was cancelled: a completion or a boundary stop of a job whose state
        moved on since it was pushed, or a wake-up that a nearer one replaced. The one place an
        event's validity is decided (an event kind without a rule here is an error)."""
        t, kind, _, i, token = event
        if kind == _WAKE:      # (by its number: a replaced request at an equal time, 2 against 2.0, is stale)
            return self.next_wake is None or token != self.wake_token
        st = self.states[i]
        if kind == _COMPLETE:
            return token != st.version or st.status not in (_RUNNING, _STOPPING)
        if kind == _STOP:
            return token != st.stop_token or st.status != _STOPPING
        raise AssertionError(f"event kind {kind} has no handler")

    def _result(self, wall: float, label: str | None) -> SimResult:
        records = []
        append, record = records.append, _RECORD_BUILD   # JobRecord(...), positionally (JobRecord._of)
        for jv, st in zip(self.views, self.states):
            work = st.work
            tau_star, p_star = (None, work) if jv.is_abstract else (jv.tau_star, work * jv.tau_star)
            append(record(jv.id, jv.arrival, jv.gpus, jv.weight, st.first_start, st.completion, st.preemptions,
                          work, tau_star, p_star, float(st.beta), tuple(st.segments)))
        records_t = tuple(records)
        if self.check:
            check_records(records_t, self.cluster.server_gpus)
        summary = summarize(records_t, self.total_gpus)
        summary["decision_passes"] = self.passes
        summary["wall_time"] = wall
        options = {"placement": self.placer.name, "preemption_cost": self.c_pre, "seed": self.seed,
                   "preemption_point": "immediate" if self.immediate else "iteration",
                   "policy_params": recorded_params(self.policy.get_params())}
        return SimResult(policy=self.policy.name, records=records_t, summary=summary, options=options,
                         policy_data=self.policy.report(), total_gpus=self.total_gpus,
                         policy_record=self.policy.record(),
                         label=self.policy.name if label is None else label)


#: The constraints of the run options shared by :func:`run_engine` and :func:`asrpt.sim.simulate`.
RUN_OPTIONS = {
    "preemption_cost": [Interval(Real, 0, None, closed="left")],
    "preemption_point": [Options(str, {"iteration", "immediate"})],
    "seed": ["seed"],
    "check_invariants": ["boolean"],
    "progress": [None, callable],
    "observer": "no_validation",
    "label": [None, str],
}


@validate_params({"instance": [Instance], "policy": [Policy], "placer": [Placer], **RUN_OPTIONS})
def run_engine(instance: Instance, policy: Policy, placer: Placer, *, preemption_cost=0,
               preemption_point: str = "iteration", seed=0, check_invariants: bool = False,
               progress: Callable | None = None, observer=None, label: str | None = None) -> SimResult:
    """Run ``policy`` (an object, used as given: its ``reset`` starts the run) on ``instance``,
    starting jobs through ``placer``; the engine resolves no names (:func:`asrpt.sim.simulate`
    does, and copies the policy first).

    Parameters
    ----------
    instance : Instance
    policy : Policy
    placer : Placer
    preemption_cost, preemption_point, seed, check_invariants, progress
        As for :func:`asrpt.sim.simulate`.
    observer : callable, Observer or None
        Sees every decision pass read-only (:class:`Observer`).
    label : str or None
        The run's display label (:attr:`SimResult.label`; None: the policy's name).

    Returns
    -------
    SimResult

    Examples
    --------
    >>> from asrpt.policies import make_policy
    >>> from asrpt.placement import make_placer
    >>> res = run_engine(two_server_instance, make_policy("fifo"), make_placer("best_fit"), label="FIFO")
    >>> res.policy, res.label, res.record("a").completion
    ('fifo', 'FIFO', 4)
    """
    if observer is not None and not (callable(observer) or hasattr(observer, "before_decide")
                                     or hasattr(observer, "after_decide")):
        raise InvalidParameterError(f"observer must be a callable or an Observer, got {type(observer).__name__}")
    with gc_paused():   # (the engine's states and its loop make no reference cycles: asrpt._gc)
        engine = _Engine(instance, policy, placer, preemption_cost, seed, check_invariants, progress,
                         preemption_point, observer)
        return engine.run(label)
