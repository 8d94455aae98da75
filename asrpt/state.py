"""The contracts below the simulator: what a policy, a placer and a predictor see and return.

This module owns the shapes every part of a run agrees on, and nothing that runs:

- :class:`JobStatus`: the life of a job in a run (arrived, waiting, running, stopping, done);
- :class:`JobView` (built by :func:`job_views`) and :class:`CompletedJob`: frozen views of a job
  at its arrival and at its completion (never the true size before completion);
- :class:`ClusterView`: the read-only view of the cluster handed to ``Policy.decide``;
- :class:`Decision` (a policy's answer) and :class:`Allocation` (a placer's answer);
- :class:`VirtualRun`: what A-SRPT hands the certificates about its virtual machine;
- the plugin bases :class:`Policy`, :class:`Placer` and :class:`Predictor`.

The simulator (:mod:`asrpt.sim`), the policies, the placers and the predictors all import it; it
imports only the data model (:mod:`asrpt.instance`, :mod:`asrpt.sizes`) and the parameter
machinery, never the simulator or any plugin.

A :class:`JobView` is built once per job when it arrives and carries only what an online
scheduler knows at submission: id, arrival, GPU demand, weight, model and configuration, the best
iteration time tau*_j, the instance's own prediction if it has one, and the recurring-job
features. It never carries the true size.

A :class:`ClusterView` is handed to ``Policy.decide`` at each decision point. It is cheap (built
in O(1): it reads the run's state through read-only accessors) and read-only by construction.
Dynamic quantities (attained service, iterations done, the current allocation) are methods,
computed on demand at ``view.now``. The true remaining work is available only to policies that
declare ``clairvoyant = True``; others get :class:`~asrpt.errors.AsrptError` if they ask.

Units: *work* is iterations for DNN jobs and seconds of processing for abstract jobs; a job's
best processing time is ``work * tau_star`` (``tau_star`` is 1 for abstract jobs).
"""

from __future__ import annotations

import abc
import enum
from dataclasses import dataclass, field, fields
from typing import Any, Iterator, Mapping, Sequence

from ._slots import slot_builder
from ._validation import Params
from .errors import AsrptError, NotFittedError
from .instance import Cluster, Instance, Number, Parallelism, id_key
from .sizes import best_iteration_times

__all__ = ["JobStatus", "JobView", "CompletedJob", "ClusterView", "NotClairvoyantError", "job_views",
           "Decision", "Policy", "policy_label", "VirtualRun", "Allocation", "Placer", "Predictor", "QUANTILE_LEVELS"]


class JobStatus(enum.IntEnum):
    """Where a job is in a run (the simulator keeps one per job; :meth:`ClusterView.status`).

    >>> JobStatus.STOPPING.name, int(JobStatus.RUNNING)
    ('STOPPING', 1)
    """

    ARRIVED = -1   #: not yet arrived
    WAITING = 0    #: active, holding no GPUs
    RUNNING = 1    #: holding GPUs
    STOPPING = 2   #: preempted, running on to its next iteration boundary
    DONE = 3       #: completed


class NotClairvoyantError(AsrptError):
    """A non-clairvoyant policy (or predictor) asked for a job's true size."""


@dataclass(frozen=True, eq=False, slots=True)   # slots: one per job, compact and quick to read
class JobView:
    """What is known about a job at its arrival (never its true size).

    Attributes
    ----------
    index : int
        Position of the job in the instance (stable handle used by the engine).
    key : tuple
        ``id_key(id)``: the tie-breaking key used everywhere.
    tau_star : float
        Best iteration time in seconds (1 for abstract jobs, whose work is in seconds).
    predicted_work : float or None
        The instance's own prediction (predicted iterations or predicted processing time).
    """

    index: int
    id: str
    key: tuple
    arrival: Number
    gpus: int
    weight: Number
    is_abstract: bool
    tau_star: Number
    predicted_work: Number | None = None
    instances: int | None = None
    model: str | None = None
    parallelism: Parallelism | None = None
    batch_size: int | None = None
    precision: str | None = None
    user: str | None = None
    group: str | None = None
    dataset: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    seq_len: int | None = None

    def __hash__(self) -> int:
        return self.index

    def __repr__(self) -> str:
        return f"JobView({self.id!r}, arrival={self.arrival}, gpus={self.gpus})"

    @property
    def gpu_per_instance(self) -> int:
        return self.gpus // (self.instances or 1)


def job_views(instance: Instance) -> list[JobView]:
    """The :class:`JobView` of every job, in instance order (``index`` is the position): what the
    simulator shows policies, computing each DNN job's tau* once.

    Examples
    --------
    >>> [(v.id, v.tau_star, v.gpus) for v in job_views(two_server_instance)]
    [('a', 1, 2), ('b', 1, 4), ('c', 1, 1)]

    The views of an instance are made once and kept on it (an instance and its views are
    immutable; each call returns a new list of the same views), so that the simulations of
    several policies over one instance share them.
    """
    memo = getattr(instance, "__dict__", {}).get("_job_views")
    if memo is not None and memo[0] is instance.jobs and memo[1] is instance.cluster:
        return list(memo[2])
    views = []
    append, build = views.append, _VIEW_BUILD
    for i, (job, tau) in enumerate(zip(instance.jobs, best_iteration_times(instance))):
        job_id, model = job.id, job.model
        # JobView(...) of the same fields, positionally, without the frozen __setattr__ per field
        if model is None:
            view = build(i, job_id, _id_key(job_id), job.arrival, job.gpus, job.weight, True, 1,
                         job.predicted_processing_time, job.instances, None, job.parallelism, job.batch_size,
                         job.precision, job.user, job.group, job.dataset, job.meta, job.seq_len)
        else:
            view = build(i, job_id, _id_key(job_id), job.arrival, job.gpus, job.weight, False, tau,
                         job.predicted_iterations, job.instances, model, job.parallelism, job.batch_size,
                         job.precision, job.user, job.group, job.dataset, job.meta, job.seq_len)
        append(view)
    if hasattr(instance, "__dict__"):
        instance.__dict__["_job_views"] = (instance.jobs, instance.cluster, tuple(views))
    return views


#: JobView(...) positionally, without the frozen ``__setattr__`` (asrpt._slots)
_VIEW_BUILD = slot_builder(JobView)
assert tuple(f.name for f in fields(JobView)) == (
    "index", "id", "key", "arrival", "gpus", "weight", "is_abstract", "tau_star", "predicted_work", "instances",
    "model", "parallelism", "batch_size", "precision", "user", "group", "dataset", "meta", "seq_len")


def _id_key(job_id: str) -> tuple:
    """``id_key(job_id)``, at once for the common all-digit id.

    >>> _id_key("40123") == id_key("40123") and _id_key("j9") == id_key("j9")
    True
    """
    if job_id.isdecimal() and job_id.isascii():
        return ((0, int(job_id), job_id),)
    return id_key(job_id)


@dataclass(frozen=True, eq=False, slots=True)   # slots: one per job
class CompletedJob:
    """A finished job as predictors may learn from it: its view, when it completed, its true
    work and how its run ended (``status``, the instance's ``Job.status``, None when unknown; both
    revealed at completion, never on the job's view)."""

    job: JobView
    completion: Number
    work: Number
    status: str | None = None


#: CompletedJob(job, completion, work, status) without the frozen ``__setattr__`` (the engine's, per job)
_COMPLETED_BUILD = slot_builder(CompletedJob)


class _ReadOnlyJobs(Sequence):
    """A live, read-only sequence over one of the engine's job dicts (insertion order)."""

    __slots__ = ("_d",)

    def __init__(self, d: dict):
        self._d = d

    def __len__(self) -> int:
        return len(self._d)

    def __iter__(self) -> Iterator[JobView]:
        return iter(self._d.values())

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(self._d.values())[i]
        if i < 0:
            i += len(self._d)
        for k, v in enumerate(self._d.values()):
            if k == i:
                return v
        raise IndexError(i)

    def __contains__(self, job) -> bool:
        return getattr(job, "index", None) in self._d

    def __repr__(self) -> str:
        return f"<{len(self._d)} jobs>"


class _ReadOnlyInts(Sequence):
    __slots__ = ("_l",)

    def __init__(self, values: list):
        self._l = values

    def __len__(self) -> int:
        return len(self._l)

    def __getitem__(self, i):
        return self._l[i]

    def __iter__(self):
        return iter(self._l)

    def __repr__(self) -> str:
        return repr(tuple(self._l))


class ClusterView:
    """Read-only state of the cluster and its active jobs at ``now`` (see module docstring).

    ``engine`` is the run's state (the simulator builds the view): it must offer ``now``,
    ``cluster``, the ``waiting``, ``running`` and ``stopping`` dicts (index -> JobView), the ``arrived``,
    ``completed``, ``just_started`` and ``just_stopped`` lists, ``free`` (idle GPUs per server),
    ``free_total``, ``total_gpus``, ``n_done``, ``states`` (per job: ``status``, ``first_start``,
    ``preemptions``, ``servers``, ``tau``, ``work``), ``executed_time(i)``, ``work_done(i)`` and
    ``running_progress()`` (and may offer ``running_arrays()``).

    Attributes
    ----------
    now : number
        Current simulated time.
    cluster : Cluster
        The (frozen) cluster.
    waiting, running : sequence of JobView
        Active jobs not holding GPUs, and jobs holding GPUs (including ones stopping at their next
        iteration boundary, see :meth:`is_stopping`), in the order they entered that state.
    stopping : sequence of JobView
        The running jobs that are stopping (:meth:`is_stopping`), in the order they were preempted.
    arrived : tuple of JobView
        Jobs that arrived since the previous decision.
    completed : tuple of CompletedJob
        Jobs that completed since the previous decision (with their true work).
    started, stopped : tuple of JobView
        Jobs the engine started, and jobs that released their GPUs without finishing (preempted),
        since the previous decision (the previous decision's own starts included).
    """

    __slots__ = ("_e", "now", "cluster", "waiting", "running", "stopping", "arrived", "completed",
                 "started", "stopped", "free_per_server", "clairvoyant")

    def __init__(self, engine, clairvoyant: bool):
        self._e = engine
        self.now = engine.now
        self.cluster: Cluster = engine.cluster
        # the live read-only wrappers: the engine's own (``live_parts``, built once per run) if it has them
        live = getattr(engine, "live_parts", None) or ClusterView.live_parts(engine)
        self.waiting, self.running, self.stopping, self.free_per_server = live
        self.arrived: tuple[JobView, ...] = tuple(engine.arrived)
        self.completed: tuple[CompletedJob, ...] = tuple(engine.completed)
        self.started: tuple[JobView, ...] = tuple(engine.just_started)
        self.stopped: tuple[JobView, ...] = tuple(engine.just_stopped)
        self.clairvoyant = clairvoyant

    @staticmethod
    def live_parts(engine) -> tuple:
        """``(waiting, running, stopping, free_per_server)``: the read-only live wrappers of the
        engine's ``waiting``, ``running`` and ``stopping`` dicts and its ``free`` list. They follow
        the engine's state, so an engine may build them once and keep them as its ``live_parts``
        (every view of the run then shares them)."""
        return (_ReadOnlyJobs(engine.waiting), _ReadOnlyJobs(engine.running), _ReadOnlyJobs(engine.stopping),
                _ReadOnlyInts(engine.free))

    # -- cluster -------------------------------------------------------------------------------
    @property
    def total_gpus(self) -> int:
        return self._e.total_gpus

    @property
    def free_gpus(self) -> int:
        """GPUs not held by any job right now."""
        return self._e.free_total

    @property
    def n_completed(self) -> int:
        """Jobs completed so far (all of them, not only since the last decision)."""
        return self._e.n_done

    @property
    def settled(self) -> bool:
        """True when no running job is stopping and no waiting job fits in the idle GPUs. Then a
        preemptive order with backfill that lists every active job selects exactly the running
        jobs iff each waiting job listed ahead of a running one needs more GPUs than the running
        jobs listed ahead of it leave (every running job then fits, and every waiting job behind
        them meets only the idle GPUs): what the engine checks on a
        :class:`~asrpt.order.MergedOrder` before it skips reading it
        (:func:`asrpt.order.keeps_running_jobs`). False for non-preemptive policies' runs, and
        from engines that do not offer it."""
        settled = getattr(self._e, "settled", None)
        return settled() if settled is not None else False

    # -- jobs ----------------------------------------------------------------------------------
    def active(self) -> Iterator[JobView]:
        """Running then waiting jobs."""
        yield from self.running
        yield from self.waiting

    def is_running(self, job: JobView) -> bool:
        return job.index in self._e.running

    def is_stopping(self, job: JobView) -> bool:
        """True while a preempted job runs on to its next iteration boundary."""
        return self._e.states[job.index].status == JobStatus.STOPPING

    def status(self, job: JobView) -> JobStatus:
        """The job's :class:`JobStatus` now."""
        return JobStatus(self._e.states[job.index].status)

    def start_time(self, job: JobView) -> Number | None:
        """First time the job ran (None if it has not)."""
        return self._e.states[job.index].first_start

    def preemptions(self, job: JobView) -> int:
        return self._e.states[job.index].preemptions

    def executed_time(self, job: JobView) -> Number:
        """Seconds the job has held GPUs so far (restarts included)."""
        return self._e.executed_time(job.index)

    def attained_service(self, job: JobView) -> Number:
        """GPU-seconds held so far: ``gpus * executed_time``."""
        return job.gpus * self._e.executed_time(job.index)

    def attained_work(self, job: JobView) -> Number:
        """Work done so far (iterations, or seconds for abstract jobs): observable by anyone."""
        return self._e.work_done(job.index)

    def resume_time(self, job: JobView) -> Number:
        """When a running job's work progresses from: the end of its restart after a preemption
        (the run's ``preemption_cost``) while that is ahead, else now. A job at ``left`` units of
        work from a point reaches it at ``resume_time(job) + left * iteration_time(job)`` (the
        adaptive step's wake-ups: without the restart, a job a few ulps short of its prediction
        would be woken every ulp of the clock until its restart ended).

        >>> from asrpt.sim import simulate
        >>> seen = []
        >>> _ = simulate(two_server_instance, "fifo", observer=lambda v, d: seen.append(
        ...     [v.resume_time(j) for j in v.running]))
        >>> seen[1]
        [1]
        """
        return self._e.resume_time(job.index)

    def running_resumes(self):
        """The array form of :meth:`resume_time` over the running jobs, in the order of
        :attr:`running` (the order :meth:`running_arrays` gives), or None where every running job
        progresses now (always without a preemption cost), where the arrays are not floats, or
        with an engine without it: policies then take ``now`` for every job.

        >>> from asrpt.sim import simulate
        >>> seen = []
        >>> _ = simulate(two_server_instance, "fifo", observer=lambda v, d: seen.append(v.running_resumes()))
        >>> seen[1] is None
        True
        """
        resumes = getattr(self._e, "running_resumes", None)
        return None if resumes is None else resumes()

    def running_progress(self) -> list:
        """``(job, attained work, iteration time, stopping)`` for every running job, in the order
        of :attr:`running`, computed in one pass: the values :meth:`attained_work`,
        :meth:`iteration_time` and :meth:`is_stopping` give job by job (policies that read all
        running jobs at each decision use it).

        >>> from asrpt.sim import simulate
        >>> seen = []
        >>> _ = simulate(two_server_instance, "fifo", observer=lambda v, d: seen.append(
        ...     [(j.id, w) for j, w, _, _ in v.running_progress()]))
        >>> seen[1]
        [('a', 1)]
        """
        return self._e.running_progress()

    def running_arrays(self):
        """The array form of :meth:`running_progress`: ``(index, done, tau, stopping)``, numpy
        arrays over the running jobs in the order of :attr:`running` (job indices, work done now,
        iteration time, stopping flags; fresh copies, bit for bit the values
        :meth:`running_progress` gives, except that with no job stopping the flags are a
        read-only array of False), or None where float arrays could not hold them exactly
        (exact runs with ints or Fractions beyond floats, abstract jobs): policies then use
        :meth:`running_progress`. An engine without it gives None.

        >>> from asrpt.sim import simulate
        >>> seen = []
        >>> _ = simulate(two_server_instance, "fifo", observer=lambda v, d: seen.append(v.running_arrays()))
        >>> seen[1] is None     # abstract jobs
        True
        """
        arrays = getattr(self._e, "running_arrays", None)
        return None if arrays is None else arrays()

    def running_executed_arrays(self):
        """The array form of :meth:`running_executed`: ``(index, executed)``, numpy arrays over
        the running jobs in the order of :attr:`running` (job indices, executed time now, every
        value a float, bit for bit the values :meth:`running_executed` gives), or None where they
        would not all be floats (exact runs, abstract jobs, an int clock with int times): policies
        then use :meth:`running_executed`. An engine without it gives None.

        >>> from asrpt.sim import simulate
        >>> seen = []
        >>> _ = simulate(two_server_instance, "fifo", observer=lambda v, d: seen.append(v.running_executed_arrays()))
        >>> seen[1] is None     # abstract jobs
        True
        """
        arrays = getattr(self._e, "running_executed_arrays", None)
        return None if arrays is None else arrays()

    def running_executed(self) -> list:
        """``(job, executed time, stopping)`` for every running job, in the order of
        :attr:`running`, in one pass: what :meth:`executed_time` and :meth:`is_stopping` give
        job by job.

        >>> from asrpt.sim import simulate
        >>> seen = []
        >>> _ = simulate(two_server_instance, "fifo", observer=lambda v, d: seen.append(
        ...     [(j.id, e) for j, e, _ in v.running_executed()]))
        >>> seen[1]
        [('a', 1)]
        """
        return self._e.running_executed()

    def waiting_arrays(self):
        """The array form of :meth:`waiting_progress`: ``(index, done, executed)``, numpy arrays
        over the waiting jobs in the order of :attr:`waiting` (job indices, attained work,
        executed time, as float64: the values :meth:`waiting_progress` gives, exactly), or None
        where float64 could not hold them all exactly (exact runs with Fractions or huge ints):
        policies then use :meth:`waiting_progress`. An engine without it gives None.

        >>> from asrpt.sim import simulate
        >>> seen = []
        >>> _ = simulate(two_server_instance, "fifo", observer=lambda v, d: seen.append(v.waiting_arrays()))
        >>> [a.tolist() for a in seen[0]]
        [[0, 1], [0.0, 0.0], [0.0, 0.0]]
        """
        arrays = getattr(self._e, "waiting_arrays", None)
        return None if arrays is None else arrays()

    def waiting_progress(self) -> list:
        """``(job, attained work, executed time)`` for every waiting job, in the order of
        :attr:`waiting`, in one pass: what :meth:`attained_work` and :meth:`executed_time` give
        job by job (both fixed while a job waits).

        >>> from asrpt.sim import simulate
        >>> seen = []
        >>> _ = simulate(two_server_instance, "fifo", observer=lambda v, d: seen.append(
        ...     [(j.id, w, e) for j, w, e in v.waiting_progress()]))
        >>> seen[0]
        [('a', 0, 0), ('b', 0, 0)]
        """
        progress = getattr(self._e, "waiting_progress", None)
        if progress is None:
            return [(j, self.attained_work(j), self.executed_time(j)) for j in self.waiting]
        return progress()

    def allocation(self, job: JobView) -> tuple[tuple[int, int], ...]:
        """``((server, gpus), ...)`` of a running job, ``()`` otherwise."""
        return self._e.states[job.index].servers

    def iteration_time(self, job: JobView) -> Number:
        """Seconds per unit of work on the current placement (tau_star when not running)."""
        st = self._e.states[job.index]
        return st.tau if st.tau is not None else job.tau_star

    # -- clairvoyant only ------------------------------------------------------------------------
    def true_work(self, job: JobView) -> Number:
        """The job's true total work (clairvoyant policies only)."""
        if not self.clairvoyant:
            raise NotClairvoyantError(f"job {job.id}: true sizes are hidden from non-clairvoyant policies")
        return self._e.states[job.index].work

    def remaining_work(self, job: JobView) -> Number:
        """True remaining work (clairvoyant policies only)."""
        return self.true_work(job) - self._e.work_done(job.index)


# -- policies ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, init=False)   # one per decision pass: a quick __init__ below
class Decision:
    """A policy's answer at one decision point.

    Attributes
    ----------
    order : sequence of JobView
        Jobs in priority order (see the module docstring for what preemptive and non-preemptive
        policies list). An order may also offer ``chunks()``: the same jobs as consecutive
        iterables, which the engine reads a chunk at a time (a list of jobs that all fit in
        what the selection has left is taken whole, as the walk job by job would take it).
        :class:`~asrpt.order.MergedOrder` is the order type the engine reads fastest.
    backfill : bool
        Skip jobs that do not fit and go on (True), or stop at the first that does not (False).
    wake_at : number or None
        Consult the policy again at this time even if nothing else happens.
    stands_until : number or None
        A preemptive, backfilling decision's term (else ignored): the decision holds until that
        time. At every pass before it where no job arrived or completed since the policy was
        last asked (only iteration-boundary stops, the engine's own starts and wake-ups
        happened), the engine does not ask the policy (neither ``decide`` nor ``next_wake``):
        it applies this decision's order again, as it read it when the decision was made, to
        the jobs' states at that pass (the greedy selection over a fixed order is the same,
        so the jobs it selected that still wait start in order where they fit, and idle GPUs
        go to the jobs left out as usual). The policy sees those passes' starts and stops in
        its next view. This is what the decision means, not a promise the engine trusts: the
        reference engine (:func:`asrpt.engine.reference.run_reference`) applies it the same
        way. The round-based policies hold each decision until the round's end.

    Examples
    --------
    >>> Decision([]).backfill, Decision([]).wake_at
    (True, None)
    >>> Decision([], stands_until=360.0).stands_until
    360.0
    """

    order: Sequence[JobView]
    backfill: bool = True
    wake_at: Number | None = None
    stands_until: Number | None = None

    def __init__(self, order: Sequence[JobView], backfill: bool = True, wake_at: Number | None = None,
                 stands_until: Number | None = None):
        # the dataclass __init__'s assignments, by the slot setters (no frozen __setattr__ per field)
        _DECISION_ORDER(self, order)
        _DECISION_BACKFILL(self, backfill)
        _DECISION_WAKE_AT(self, wake_at)
        _DECISION_STANDS(self, stands_until)


_DECISION_ORDER, _DECISION_BACKFILL, _DECISION_WAKE_AT, _DECISION_STANDS = (
    getattr(Decision, name).__set__ for name in ("order", "backfill", "wake_at", "stands_until"))


class Policy(Params, abc.ABC):
    """Base class of scheduling policies.

    Class attributes describe the policy to the engine and to the common tests:
    ``preemptive`` (may stop running jobs), ``clairvoyant`` (reads true sizes; may be a property
    that depends on parameters, e.g. the predictor), ``work_conserving`` (never leaves a job
    waiting when it fits in the idle GPUs after the decision).
    """

    name = "policy"
    preemptive: bool = False
    clairvoyant: bool = False
    work_conserving: bool = False

    def reset(self, cluster: Cluster, *, seed=None) -> None:
        """Prepare for a new run on ``cluster`` (validate parameters, build state)."""
        self._validate_params()

    @abc.abstractmethod
    def decide(self, view: ClusterView) -> Decision:
        """The decision at ``view.now``."""

    def next_wake(self, view: ClusterView) -> Number | None:
        """Called after the engine applied a decision (``view`` shows the jobs it started and
        stopped); return the next time the policy must be consulted even if nothing happens
        (e.g. when a running job will cross a threshold), or None. Policies that do not override
        it are never asked. Return the earliest time needed every time: the engine wakes the policy
        at the earliest requested time and asks again."""
        return None

    def report(self) -> dict:
        """JSON-ready data the policy wants recorded with the run (default: nothing)."""
        return {}

    def record(self) -> Any:
        """A typed record of the run for later checks (:attr:`asrpt.sim.SimResult.policy_record`), e.g.
        A-SRPT's :class:`VirtualRun`; default None. :meth:`report` stays the JSON-ready view."""
        return None

    def preferred_placement(self) -> str | None:
        """The placement :func:`asrpt.sim.simulate` uses when the run names none (default:
        None, the simulator's ``"best_fit"``). The engine never asks: placement is an argument
        of the run."""
        return None

    def describe(self) -> str:
        """The registered name plus the parameters that differ from the preset's."""
        return self.name


@dataclass(frozen=True)
class VirtualRun:
    """A-SRPT's virtual machine as the certificates read it (by job id, in id order).

    Attributes
    ----------
    virtual : str
        The virtual machine (``"gang"`` or ``"fluid"``).
    completion_times : mapping
        C~_j, the virtual completion time of every job.
    sizes : mapping
        The virtual sizes the machine ran.
    initial_predictions, predictions : mapping
        Every job's first and last predicted work.
    adaptive_updates : int
        How many times a job outlived its prediction and was re-predicted.
    overdue_at : mapping or None
        Guarded order: when each job became overdue (None for the other orders).

    Examples
    --------
    >>> run = VirtualRun("gang", {"a": 2}, {"a": 2}, {"a": 2}, {"a": 2}, 0)
    >>> VirtualRun.from_policy_data(run.to_dict()) == run
    True
    """

    virtual: str | None
    completion_times: Mapping[str, Number]
    sizes: Mapping[str, Number]
    initial_predictions: Mapping[str, Number]
    predictions: Mapping[str, Number]
    adaptive_updates: int = 0
    overdue_at: Mapping[str, Number] | None = None

    #: the ``policy_data`` keys of each field (the JSON view of the record)
    KEYS = {"virtual": "virtual", "completion_times": "virtual_completion_times",
            "sizes": "virtual_sizes", "initial_predictions": "initial_predictions",
            "predictions": "predictions", "adaptive_updates": "adaptive_updates",
            "overdue_at": "overdue_at"}

    def final_predictions(self) -> Mapping[str, Number]:
        """The predictions the run ended with: the last ones if it re-predicted, else the first."""
        return self.predictions if self.adaptive_updates else self.initial_predictions

    def to_dict(self) -> dict:
        """The JSON-ready ``policy_data`` of the run (``overdue_at`` only when set)."""
        out = {self.KEYS[f]: dict(getattr(self, f)) if isinstance(getattr(self, f), Mapping) else getattr(self, f)
               for f in self.KEYS if f != "overdue_at"}
        if self.overdue_at is not None:
            out["overdue_at"] = dict(self.overdue_at)
        return out

    @classmethod
    def from_policy_data(cls, data: Mapping[str, Any]) -> "VirtualRun":
        """The record back from a run's ``policy_data`` (e.g. a result read from JSON); a missing
        virtual time or prediction table raises KeyError naming it."""
        optional = ("virtual", "adaptive_updates", "overdue_at")
        return cls(**{f: data[k] for f, k in cls.KEYS.items() if k in data or f not in optional},
                   **({"virtual": None} if "virtual" not in data else {}))


def policy_label(policy: Policy) -> str:
    """The name errors and reports give ``policy``: its registered name, else its class's.

    >>> from asrpt.policies import make_policy
    >>> from asrpt.policies.fifo import FIFO
    >>> class Mine(FIFO):
    ...     name = Policy.name
    >>> policy_label(make_policy("fifo")), policy_label(Mine())
    ('fifo', 'Mine')
    """
    return policy.name if policy.name != Policy.name else type(policy).__name__


# -- placers -------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)   # slots: one per start
class Allocation:
    """GPUs given to a job: ``servers`` = ((server, gpus), ...) in server order, the iteration
    time ``tau`` on this placement (None for abstract jobs) and an optional ``detail`` (e.g. the
    worker assignment)."""

    servers: tuple[tuple[int, int], ...]
    tau: float | None = None
    detail: Any = None

    @staticmethod
    def _of(servers, tau=None, detail=None) -> "Allocation":
        """``Allocation(servers, tau, detail)`` without the frozen per-field setattr (a count placer
        builds one per start).

        >>> Allocation._of(((0, 2),), 1.5) == Allocation(((0, 2),), 1.5)
        True
        """
        return _ALLOCATION_BUILD(servers, tau, detail)

    @property
    def gpus(self) -> int:
        return sum(g for _, g in self.servers)


_ALLOCATION_BUILD = slot_builder(Allocation)


class Placer(Params, abc.ABC):
    """Base class: ``allocate(job, free, cluster) -> Allocation | None``; never mutates ``free``."""

    name = "placer"

    @abc.abstractmethod
    def allocate(self, job: JobView, free: Sequence[int], cluster: Cluster) -> Allocation | None:
        """GPUs for ``job`` given the idle GPUs per server, or None if it does not fit."""

    def reserve(self, job: JobView, free: Sequence[int], cluster: Cluster) -> tuple | None:
        """The ``servers`` of :meth:`allocate` (((server, GPUs), ...)), or None: what the engine
        holds back for a selected job that must wait for GPUs. A placer whose servers do not
        need the iteration time may skip computing it (the count placers do)."""
        alloc = self.allocate(job, free, cluster)
        return None if alloc is None else alloc.servers

    #: True when ``allocate`` succeeds exactly when the servers can hold the job's instances
    #: (``sum(free[h] // per_instance) >= instances``): the engine then rejects jobs that cannot
    #: fit with a cached count instead of calling the placer (most attempts in a busy cluster fail).
    fits_iff_capacity = False


# -- predictors ----------------------------------------------------------------------------------

#: The levels :meth:`Predictor.quantiles` returns by default: the 80 % band and its median.
QUANTILE_LEVELS: tuple[float, ...] = (0.1, 0.5, 0.9)


class Predictor(Params, abc.ABC):
    """Base class; see the module docstring for the protocol."""

    name = "predictor"
    clairvoyant = False

    def reset(self, seed=None) -> "Predictor":
        """Start over with no history; validates the parameters."""
        self._validate_params()
        self.seed_ = seed
        self.n_observed_ = 0
        return self

    def observe(self, completed: Sequence[CompletedJob]) -> None:
        """Learn from newly completed jobs (default: only count them)."""
        self._check_fitted()
        self.n_observed_ += len(completed)

    def fit(self, completed: Sequence[CompletedJob], seed=None) -> "Predictor":
        """``reset(seed)`` then ``observe(completed)``; returns self."""
        self.reset(seed)
        self.observe(completed)
        return self

    @abc.abstractmethod
    def predict(self, job: JobView, *, attained=0, truth=None):
        """Predicted total work of ``job`` (> 0)."""

    def quantiles(self, job: JobView, *, attained=0, truth=None, levels=QUANTILE_LEVELS) -> tuple:
        """Quantiles of ``job``'s total work at ``levels`` (increasing, in (0, 1)), given the work
        ``attained`` so far; non-decreasing in the level.

        The default has no model of the uncertainty: the point prediction at every level.

        Examples
        --------
        >>> from asrpt.predict import OraclePredictor
        >>> OraclePredictor().reset().quantiles(None, truth=50)
        (50, 50, 50)
        """
        value = self.predict(job, attained=attained, truth=truth)
        return tuple(value for _ in levels)

    def sibling_keys(self, job: JobView) -> tuple:
        """Keys shared by the jobs whose completion changes ``job``'s prediction (default: none;
        see the module docstring).

        >>> from asrpt.predict import OraclePredictor
        >>> OraclePredictor().sibling_keys(None)
        ()
        """
        return ()

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_observed_"):
            raise NotFittedError(f"{type(self).__name__}: call reset() or fit() before predict() or observe()")
