"""Graph placements as simulator placers (:mod:`asrpt.placement.placers`).

This module owns the bridge from :func:`asrpt.placement.place` to the simulator's placement
step. Importing it (:func:`asrpt.placement.make_placer` does on the first name it does not know)
registers, with :func:`asrpt.placement.placers.register_placer`:

- ``"ilp"``: the exact placement minimising the bytes crossing servers;
- ``"ilp_tau"``: the exact placement minimising the modelled iteration time;
- ``"greedy"``, ``"metis"`` (needs pymetis), ``"kl"``: the heuristics.

For a DNN job, a placer builds the job's worker graph on its best GPU type (cached per model,
configuration, batch, precision and GPU type), places it on the current free GPUs and returns
an :class:`~asrpt.state.Allocation` with the GPUs per server, the iteration time of the
placement and the :class:`~asrpt.placement.Placement` as ``detail``; None when the job does not
fit. Abstract jobs, and jobs split into gang ``instances``, are placed by the count placer
``best_fit``.

**Speed.** The engine calls the placer for every job start (and, with ``check_invariants``,
again for every waiting job), so results are cached per (job configuration, free-GPU vector up
to a relabelling of interchangeable servers): servers with the same free GPUs and GPU type are
interchangeable for the cut and for tau, so the free vector is reduced to the sorted multiset of
(GPU type, free GPUs) and a cached placement is mapped back onto the servers at hand. The
certified shortcuts of :mod:`asrpt.placement.ilp` (the job fits one server; a consolidated
packing meets the lower bound) skip the solver. The ILP gets a **time limit** (``time_limit``,
default 1 s); when it expires the incumbent is used (the placement's ``status`` says
"time_limit"). Only then can a run depend on the machine's speed; with ``time_limit=None``
runs are reproducible but may be slow.

Examples
--------
>>> from asrpt.instance import Cluster, Instance, Job, Parallelism
>>> from asrpt.sim import simulate
>>> jobs = (Job("a", 0, 8, model="gpt2", parallelism=Parallelism(2, 1, 4), iterations=20),
...         Job("b", 1, 4, model="gpt2", parallelism=Parallelism(1, 1, 4), iterations=10))
>>> res = simulate(Instance(Cluster.homogeneous(2, 8, "A100"), jobs), "fifo", placement="ilp",
...                check_invariants=True)
>>> sorted(res.completion_times) == ["a", "b"]
True
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from numbers import Real
from typing import Sequence

from .._validation import Integral, Interval, Options
from ..errors import Infeasible
from ..instance import Cluster
from ..state import Allocation, Placer
from .placers import CountPlacer, register_placer
from .base import OBJECTIVES, FrozenMapping, PlacementProblem, _run, make_method
from . import ilp as _ilp  # noqa: F401  (registers the methods: heuristics and the ILP)

__all__ = ["GraphPlacer"]


class GraphPlacer(Placer):
    """A simulator placer that places a DNN job's worker graph with a placement method.

    Parameters
    ----------
    method : str
        A registered placement method (:func:`asrpt.placement.available_methods`).
    objective : {"cut", "tau"}
    time_limit : float or None
        Seconds for an exact method's solver per placement (None: no limit).
    cache_size : int
        Placements remembered (least recently used are dropped).

    Attributes
    ----------
    cache_ : OrderedDict
        (configuration, cluster, server signature) -> placement, built on first use.
    graphs_ : dict
        Worker graphs (and GPU types) per job configuration and cluster.
    hits_, misses_ : int
        Cache statistics.
    method_ : PlacementMethod
        The method instance.
    fallback_ : Placer
        The count placer ``best_fit`` for abstract and gang-instance jobs.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Parallelism
    >>> from asrpt.state import JobView
    >>> job = Job("j", 0, 4, model="gpt2", parallelism=Parallelism(1, 1, 4), iterations=1)
    >>> view = JobView(0, "j", (), 0, 4, 1, False, 1.0, model="gpt2",
    ...                parallelism=job.parallelism)
    >>> placer = GraphPlacer(method="greedy")
    >>> cluster = Cluster.homogeneous(3, 8, "A100")
    >>> placer.allocate(view, [2, 6, 8], cluster).servers
    ((1, 4),)
    >>> placer.allocate(view, [8, 6, 2], cluster).servers, placer.hits_
    (((1, 4),), 1)
    """

    parameter_constraints = {
        "method": [str],
        "objective": [Options(str, OBJECTIVES)],
        "time_limit": [None, Interval(Real, 0, None, closed="neither")],
        "cache_size": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, *, method: str = "ilp", objective: str = "cut",
                 time_limit: float | None = 1.0, cache_size: int = 4096):
        self.method = method
        self.objective = objective
        self.time_limit = time_limit
        self.cache_size = cache_size

    @property
    def name(self) -> str:  # type: ignore[override]
        """The registered name: the method, suffixed by the objective unless it is the cut."""
        return self.method if self.objective == "cut" else f"{self.method}_{self.objective}"

    def _validate_params(self) -> None:
        super()._validate_params()
        make_method(self.method)  # unknown names fail here, with the list of known ones

    def _setup(self) -> None:
        if getattr(self, "cache_", None) is None:
            self.cache_ = OrderedDict()
            self.graphs_: dict = {}
            self.hits_ = 0
            self.misses_ = 0
            self.method_ = make_method(self.method)
            self.fallback_ = CountPlacer(order="best_fit")

    def _graph(self, job, cluster: Cluster):
        from ..dnn.parallel import worker_graph
        from ..dnn.perf import best_gpu_type

        par = job.parallelism
        key = (id(cluster), job.model, par.dp, par.pp, par.tp, job.batch_size, job.precision,
               getattr(job, "seq_len", None))
        hit = self.graphs_.get(key)
        if hit is None:
            gpu = best_gpu_type(job, cluster)
            hit = (worker_graph(job, gpu), gpu, key)
            self.graphs_[key] = hit
        return hit

    def allocate(self, job, free: Sequence[int], cluster: Cluster) -> Allocation | None:
        """GPUs for ``job`` given the idle GPUs per server, or None if it does not fit."""
        self._setup()
        if job.is_abstract or job.instances:
            return self.fallback_.allocate(job, free, cluster)
        if sum(free) < job.gpus:
            return None
        graph, _, gkey = self._graph(job, cluster)
        from ..dnn.hardware import resolve_gpu_type

        servers = sorted((h for h, f in enumerate(free) if f > 0),
                         key=lambda h: (resolve_gpu_type(cluster, h), -free[h], h))
        signature = tuple((resolve_gpu_type(cluster, h), free[h]) for h in servers)
        key = (gkey, signature)
        cached = self.cache_.get(key)
        if cached is not None:
            self.hits_ += 1
            self.cache_.move_to_end(key)
        else:
            self.misses_ += 1
            # solve on a canonical free vector: ranks 0..m-1 are the servers in signature order
            problem = PlacementProblem.build(graph, list(free), objective=self.objective,
                                             cluster=cluster, job=job,
                                             time_limit=self.time_limit, seed=0)
            try:
                placement = _run(self.method_, problem)
            except Infeasible:
                cached = (None,)
            else:
                rank = {h: i for i, h in enumerate(servers)}
                ranks = {w: rank[h] for w, h in placement.assignment.items()}
                cached = (placement, ranks)
            if self.cache_size:
                self.cache_[key] = cached
                while len(self.cache_) > self.cache_size:
                    self.cache_.popitem(last=False)
        if cached[0] is None:
            return None
        placement, ranks = cached
        assignment = {w: servers[r] for w, r in ranks.items()}
        counts: dict = {}
        for h in assignment.values():
            counts[h] = counts.get(h, 0) + 1
        server_gpus = tuple(sorted(counts.items()))
        if assignment != dict(placement.assignment):
            placement = dataclasses.replace(placement, assignment=FrozenMapping(assignment),
                                            server_gpus=server_gpus)
        return Allocation(server_gpus, placement.tau, detail=placement)


register_placer("ilp", GraphPlacer, method="ilp", objective="cut",
                description="exact graph placement: fewest bytes across servers (DNN jobs)")
register_placer("ilp_tau", GraphPlacer, method="ilp", objective="tau",
                description="exact graph placement: lowest modelled iteration time (DNN jobs)")
register_placer("greedy", GraphPlacer, method="greedy", objective="cut",
                description="graph placement greedy by edge weight (DNN jobs)")
register_placer("metis", GraphPlacer, method="metis", objective="cut",
                description="graph placement by METIS (needs pymetis; DNN jobs)")
register_placer("kl", GraphPlacer, method="kl", objective="cut",
                description="graph placement: consolidation refined by Kernighan-Lin (DNN jobs)")
