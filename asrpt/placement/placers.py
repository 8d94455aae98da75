"""The simulator's placers: which servers' GPUs a starting job gets (the count placers and yarn).

A placer maps ``(job, free GPUs per server, cluster)`` to an :class:`Allocation` (GPUs per
server, the iteration time on that placement) or None when the job does not fit. The engine calls
it for every job a policy starts, in the policy's order, so later jobs in the same pass see the
GPUs taken by earlier ones. Placers are plugins registered by name in :data:`PLACERS`;
``simulate(..., placement=NAME)`` picks one (:func:`asrpt.placement.make_placer`).

Count placers (this module) decide GPU counts per server by a server order; jobs made of gang
``instances`` (``Job.instances``) get whole instances per server, others are treated as
``gpus`` instances of one GPU:

- ``first_fit``: servers in id order (the Alibaba PAI simulator's "pack");
- ``most_free``: most idle GPUs first, ties by id (PAI's "balance");
- ``best_fit``: consolidate: the fullest single server that holds the whole job, else the fewest
  servers (most idle first);
- ``spread``: one instance per server in turn (most idle first), a control that maximises
  spreading.

Walking servers in order, a server contributes ``min(needed, idle // per_instance)`` instances;
if the walk ends with instances unplaced the job does not fit (all or nothing). This is exactly
the PAI simulator's rule for its two orders.

Abstract jobs run at the same speed anywhere (``tau`` is None). DNN jobs get the iteration time
of their placement from the performance model; the communication-aware graph placers
(:mod:`asrpt.placement.graph_placers`) register themselves in the same registry.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Sequence

from .._validation import Options
from ..errors import InvalidParameterError
from ..instance import Cluster
from ..registry import Registry
from ..state import Allocation, JobView, Placer

__all__ = ["Allocation", "Placer", "CountPlacer", "PLACERS", "register_placer",
           "count_allocation", "yarn_allocation", "YarnPlacer"]


#: The simulator's placers by name (graph placers add themselves: :mod:`.graph_placers`).
PLACERS = Registry("placement", base=Placer, item=lambda e: e.target, validate_instances=True)


def register_placer(name: str, target=None, *, description: str | None = None, **preset):
    """Register a placer class under ``name`` (with preset parameters); without ``target``, a class
    decorator (the names of ``simulate(..., placement=NAME)``).

    >>> "yarn" in PLACERS and PLACERS.create("best_fit").name
    'best_fit'
    """
    return PLACERS.register(name, target, description=description, **preset)


def _most_free_first(free: Sequence[int]) -> list[int]:
    """Servers by idle GPUs, most first, ties by id: a stable sort in reverse keeps equal keys in
    id order, so this is ``sorted(range(n), key=lambda h: (-free[h], h))`` with a C key."""
    return sorted(range(len(free)), key=free.__getitem__, reverse=True)


def _most_free_walk(free: list, per: int):
    """Servers by idle GPUs, most first, ties by id, read lazily and only while they hold at
    least one ``per``-GPU instance (the walk of :func:`count_allocation` skips the others): each
    distinct idle count in turn, its servers found by ``list.index`` (a scan in C), so a walk
    that stops after a few servers never sorts them all."""
    index = free.index
    for v in sorted(set(free), reverse=True):
        if v < per:
            return
        h = -1
        while True:
            try:
                h = index(v, h + 1)
            except ValueError:
                break
            yield h


def _server_order(order: str, free: list, per: int, count: int):
    if order == "first_fit":
        return range(len(free))
    if order == "most_free":
        return _most_free_walk(free, per)
    raise InvalidParameterError(f"unknown server order {order!r}")   # (best fit: _best_fit)


def _best_fit(free: list, per: int, count: int):
    """:func:`count_allocation`'s best fit, its walk written out (the placer the simulator uses
    most, at every start and reservation): the fullest server that holds the job, the first
    by id; else the servers by idle GPUs, most first, ties by id. The fallback inlines
    :func:`_most_free_walk` on purpose: through the generator, Gavel on the first 40,000 jobs
    of the Philly trace took 22.6 s instead of 20.3 (blocked multi-server jobs reserve often)."""
    need = per * count
    values = sorted(set(free))
    k = bisect_left(values, need)
    if k < len(values):
        return ((free.index(values[k]), need),)
    out = []
    remaining = count
    index = free.index
    for v in reversed(values):
        if v < per:
            return None
        q = v // per
        h = -1
        while True:
            try:
                h = index(v, h + 1)
            except ValueError:
                break
            if q >= remaining:
                out.append((h, remaining * per))
                out.sort()
                return tuple(out)
            out.append((h, q * per))
            remaining -= q
    return None


def _spread(free: list, per: int, count: int):
    """:func:`count_allocation`'s spread: rounds over the servers (most idle first, ties by id),
    one instance per server with room in each round, until ``count`` are placed.

    Computed in closed form, in time and memory of the number of servers, not of the instances
    (a 65,536-GPU server would otherwise take one round per instance): after R full rounds a
    server holding ``c`` instances has ``min(c, R)``; the last, partial round gives one more to
    the first servers in the ring that still have room.

    >>> _spread([8, 2, 8], 1, 5), _spread([3], 1, 3), _spread([3, 3], 2, 3)
    (((0, 2), (1, 1), (2, 2)), ((0, 3),), None)
    """
    caps = [f // per for f in free]
    rising = sorted(c for c in caps if c > 0)
    if sum(rising) < count:
        return None
    n, acc, level = len(rising), 0, 0
    for i, c in enumerate(rising):
        if acc + c * (n - i) >= count:     # the rounds end while these n - i servers have room
            level = -(-(count - acc) // (n - i))         # the round that places the last one
            break
        acc += c
    full = level - 1
    extra = count - acc - full * (n - i)   # instances placed in the last round
    out = []
    for h in _most_free_first(free):
        c = caps[h]
        if c == 0:
            break
        k = min(c, full)
        if extra and c >= level:
            k += 1
            extra -= 1
        if k:
            out.append((h, k * per))
    out.sort()
    return tuple(out)


def count_allocation(order: str, free: Sequence[int], per: int, count: int) -> tuple[tuple[int, int], ...] | None:
    """GPUs per server for ``count`` instances of ``per`` GPUs, walking servers in ``order``.

    Returns ((server, gpus), ...) sorted by server, or None if the instances do not all fit.

    >>> count_allocation("first_fit", [2, 8, 8], 4, 3)
    ((1, 8), (2, 4))
    >>> count_allocation("most_free", [2, 8, 6], 1, 10)
    ((1, 8), (2, 2))
    >>> count_allocation("best_fit", [8, 3, 4], 1, 3), count_allocation("first_fit", [3, 3], 4, 1)
    (((1, 3),), None)
    """
    if not isinstance(free, list):
        free = list(free)
    if order == "best_fit":
        return _best_fit(free, per, count)
    if order == "spread":
        return _spread(free, per, count)
    remaining = count
    out = []
    # (server, idle GPUs) in the order's walk; first fit walks the list itself
    walk = enumerate(free) if order == "first_fit" else (
        (h, free[h]) for h in _server_order(order, free, per, count))
    for h, f in walk:
        if f >= per:
            k = f // per
            if k >= remaining:
                out.append((h, remaining * per))
                remaining = 0
                break
            out.append((h, k * per))
            remaining -= k
    if remaining:
        return None
    if order != "first_fit":
        out.sort()
    return tuple(out)


class CountPlacer(Placer):
    """Place by GPU counts with a server order (see the module docstring).

    DNN jobs get the iteration time of the chosen counts from the performance model
    (:func:`asrpt.dnn.perf.iteration_time_for_counts`, memoized per cluster by
    :class:`asrpt.dnn.perf.CountTimes`).

    Parameters
    ----------
    order : {"first_fit", "most_free", "best_fit", "spread"}
    """

    parameter_constraints = {"order": [Options(str, {"first_fit", "most_free", "best_fit", "spread"})]}
    fits_iff_capacity = True

    def __init__(self, *, order: str = "best_fit"):
        self.order = order

    @property
    def name(self) -> str:  # type: ignore[override]
        """The registered name of the order (``"best_fit"``, ...)."""
        return self.order

    def reserve(self, job: JobView, free: Sequence[int], cluster: Cluster) -> tuple | None:
        """The servers :meth:`allocate` would give, without pricing the placement."""
        per = job.gpu_per_instance if job.instances else 1
        return count_allocation(self.order, free, per, job.instances if job.instances else job.gpus)

    def allocate(self, job: JobView, free: Sequence[int], cluster: Cluster) -> Allocation | None:
        per = job.gpu_per_instance if job.instances else 1
        count = job.instances if job.instances else job.gpus
        servers = count_allocation(self.order, free, per, count)
        if servers is None:
            return None
        if job.is_abstract:   # Allocation(servers), without the frozen per-field setattr
            return _allocation(servers)
        times = self.__dict__.get("_times")
        if times is None or times.cluster is not cluster:   # one memo per cluster (not a parameter)
            from ..dnn.perf import CountTimes

            times = self._times = CountTimes(cluster)
        return _allocation(servers, times(job, servers))


_allocation = Allocation._of


register_placer("first_fit", CountPlacer, order="first_fit",
                description="servers in id order (the Alibaba PAI simulator's pack)")
register_placer("most_free", CountPlacer, order="most_free",
                description="most idle GPUs first, ties by id (PAI's balance)")
register_placer("best_fit", CountPlacer, order="best_fit",
                description="the fullest server that holds the job, else the fewest servers (default)")
register_placer("spread", CountPlacer, order="spread",
                description="one instance per server in turn (a control that maximises spreading)")


def yarn_allocation(free: Sequence[int], capacity: Sequence[int], per_switch: int | None,
                    gpus: int) -> tuple[tuple[int, int], ...] | None:
    """The Tiresias simulator's ``yarn`` placement of a ``gpus``-GPU job, or None.

    Switches are tried in id order and a job never spans switches (``per_switch`` servers each,
    in server order; None: one switch). With G the largest server: a job of at most G GPUs takes
    the first server of the switch with enough idle GPUs; a larger job takes the first
    ``gpus // G`` fully idle servers of G GPUs and, for a remainder r > 0, the first other server
    with at least r idle GPUs (all or nothing).

    >>> yarn_allocation([8, 8, 8], [8, 8, 8], None, 12)
    ((0, 8), (1, 4))
    >>> yarn_allocation([4, 4, 0, 4], [4, 4, 4, 4], 2, 8)
    ((0, 4), (1, 4))
    >>> yarn_allocation([4, 2, 2, 4], [4, 4, 4, 4], 2, 8) is None
    True
    """
    n = len(free)
    per = n if per_switch is None else per_switch
    G = max(capacity)
    for lo in range(0, n, per):
        hi = lo + per
        if gpus <= G:
            for h in range(lo, hi):
                if free[h] >= gpus:
                    return ((h, gpus),)
            continue
        whole, rest = divmod(gpus, G)
        idle = [h for h in range(lo, hi) if free[h] == G and capacity[h] == G][:whole]
        if len(idle) < whole:
            continue
        out = [(h, G) for h in idle]
        if rest:
            taken = set(idle)
            extra = next((h for h in range(lo, hi) if h not in taken and free[h] >= rest), None)
            if extra is None:
                continue
            out.append((extra, rest))
        return tuple(sorted(out))
    return None


@register_placer("yarn", description="the Tiresias simulator's yarn: whole servers first, never across switches")
class YarnPlacer(Placer):
    """The Tiresias simulator's ``yarn`` scheme (:func:`yarn_allocation`), on the cluster's
    switches (``Cluster.servers_per_switch``).

    The peer also checks CPUs and memory per node; with its cluster specs (at least 6 CPUs per
    GPU, 256 GB per node) those checks never bind, so only GPUs are modelled. Jobs made of gang
    ``instances`` are placed by their total GPU count. Abstract jobs only: DNN jobs get the
    iteration time of the chosen counts from the performance model.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Instance, Job
    >>> from asrpt.sim import simulate
    >>> inst = Instance(Cluster.from_spec("2x2x4"), (Job("a", 0, 2, processing_time=5),
    ...                                             Job("b", 0, 8, processing_time=5)))
    >>> simulate(inst, "fifo", placement="yarn").record("b").placement  # switch 0 has one idle server
    '2:4;3:4'
    """

    parameter_constraints: dict = {}

    def allocate(self, job: JobView, free: Sequence[int], cluster: Cluster) -> Allocation | None:
        servers = yarn_allocation(free, cluster.server_gpus, cluster.servers_per_switch, job.gpus)
        if servers is None:
            return None
        if job.is_abstract:
            return Allocation(servers)
        times = self.__dict__.get("_times")
        if times is None or times.cluster is not cluster:   # one memo per cluster (not a parameter)
            from ..dnn.perf import CountTimes

            times = self._times = CountTimes(cluster)
        return Allocation(servers, times(job, servers))
