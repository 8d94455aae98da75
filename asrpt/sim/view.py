"""What a policy may see: frozen job views and a read-only view of the cluster at one instant.

A :class:`JobView` is built once per job when it arrives and carries only what an online
scheduler knows at submission: id, arrival, GPU demand, weight, model and configuration, the best
iteration time tau*_j, the instance's own prediction if it has one, and the recurring-job
features. It never carries the true size.

A :class:`ClusterView` is handed to ``Policy.decide`` at each decision point. It is cheap (built
in O(1): it reads the engine's state through read-only accessors) and read-only by construction.
Dynamic quantities (attained service, iterations done, the current allocation) are methods,
computed on demand at ``view.now``. The true remaining work is available only to policies that
declare ``clairvoyant = True``; others get :class:`~asrpt.errors.AsrptError` if they ask.

Units: *work* is iterations for DNN jobs and seconds of processing for abstract jobs; a job's
best processing time is ``work * tau_star`` (``tau_star`` is 1 for abstract jobs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from ..errors import AsrptError
from ..instance import Cluster, Instance, Number, Parallelism, id_key
from ..sizes import best_iteration_times

if TYPE_CHECKING:  # pragma: no cover
    from .engine import _Engine

__all__ = ["JobView", "CompletedJob", "ClusterView", "NotClairvoyantError", "job_views"]


class NotClairvoyantError(AsrptError):
    """A non-clairvoyant policy (or predictor) asked for a job's true size."""


@dataclass(frozen=True, eq=False)
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
    """
    views = []
    for i, (job, tau) in enumerate(zip(instance.jobs, best_iteration_times(instance))):
        if job.is_abstract:
            tau_star, pred = 1, job.predicted_processing_time
        else:
            tau_star, pred = tau, job.predicted_iterations
        views.append(JobView(
            index=i, id=job.id, key=id_key(job.id), arrival=job.arrival, gpus=job.gpus,
            weight=job.weight, is_abstract=job.is_abstract, tau_star=tau_star, predicted_work=pred,
            instances=job.instances, model=job.model, parallelism=job.parallelism,
            batch_size=job.batch_size, precision=job.precision, user=job.user, group=job.group,
            dataset=job.dataset, meta=job.meta, seq_len=job.seq_len))
    return views


@dataclass(frozen=True, eq=False)
class CompletedJob:
    """A finished job as predictors may learn from it: its view, when it completed, its true
    work and how its run ended (``status``, the instance's ``Job.status``, None when unknown; both
    revealed at completion, never on the job's view)."""

    job: JobView
    completion: Number
    work: Number
    status: str | None = None


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

    Attributes
    ----------
    now : number
        Current simulated time.
    cluster : Cluster
        The (frozen) cluster.
    waiting, running : sequence of JobView
        Active jobs not holding GPUs, and jobs holding GPUs (including ones stopping at their next
        iteration boundary, see :meth:`is_stopping`), in the order they entered that state.
    arrived : tuple of JobView
        Jobs that arrived since the previous decision.
    completed : tuple of CompletedJob
        Jobs that completed since the previous decision (with their true work).
    started, stopped : tuple of JobView
        Jobs the engine started, and jobs that released their GPUs without finishing (preempted),
        since the previous decision (the previous decision's own starts included).
    """

    __slots__ = ("_e", "now", "cluster", "waiting", "running", "arrived", "completed", "started",
                 "stopped", "free_per_server", "clairvoyant")

    def __init__(self, engine: "_Engine", clairvoyant: bool):
        self._e = engine
        self.now = engine.now
        self.cluster: Cluster = engine.cluster
        self.waiting = _ReadOnlyJobs(engine.waiting)
        self.running = _ReadOnlyJobs(engine.running)
        self.arrived: tuple[JobView, ...] = tuple(engine.arrived)
        self.completed: tuple[CompletedJob, ...] = tuple(engine.completed)
        self.started: tuple[JobView, ...] = tuple(engine.just_started)
        self.stopped: tuple[JobView, ...] = tuple(engine.just_stopped)
        self.free_per_server = _ReadOnlyInts(engine.free)
        self.clairvoyant = clairvoyant

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

    # -- jobs ----------------------------------------------------------------------------------
    def active(self) -> Iterator[JobView]:
        """Running then waiting jobs."""
        yield from self.running
        yield from self.waiting

    def is_running(self, job: JobView) -> bool:
        return job.index in self._e.running

    def is_stopping(self, job: JobView) -> bool:
        """True while a preempted job runs on to its next iteration boundary."""
        return self._e.states[job.index].status == 2

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
