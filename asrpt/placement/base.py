"""The one entry point :func:`place` and the independent validator :func:`validate_placement`.

This module owns running a method on a problem and judging its answer; it re-exports what every
placement method shares, each from its own module:

- :class:`Placement`, the frozen result (:mod:`.result`);
- :class:`PlacementProblem`, one instance of the problem as arrays (what methods read; the
  problem and its memory rule are described in :mod:`.problem`);
- :class:`PlacementMethod`, the plugin base class, and the registry (:data:`METHODS`,
  :func:`register`, :func:`make_method`; :mod:`.methods`);
- :func:`place`, the one entry point; :func:`validate_placement`, which recomputes everything
  from the assignment alone (capacity, cut, servers, tau) so methods are judged by one check.

Examples
--------
>>> import networkx as nx
>>> G = nx.Graph()
>>> G.add_edge("a", "b", bytes=10.0); G.add_edge("b", "c", bytes=1.0)
>>> p = place(G, [2, 2], method="ilp")
>>> p.cut_bytes, p.servers_used, p.status, sorted(p.server_gpus)
(1.0, 2, 'optimal', [(0, 2), (1, 1)])
>>> validate_placement(G, [2, 2], p)
()
"""

from __future__ import annotations

import math
import time
from numbers import Real
from typing import Sequence

import networkx as nx
import numpy as np

from .._validation import InstanceOf, Interval, Options, validate_params
from ..errors import Infeasible, InvalidParameterError
from ..instance import Cluster
from ..solve import SOLVERS
# re-exported: what every method shares lives in its own module (ilp.py and heuristics.py import
# it from here)
from .methods import (METHODS, PlacementMethod, _MethodSpec, available_methods,  # noqa: F401
                      make_method, register)
from .problem import (OBJECTIVES, PlacementProblem, _FreeGPUs, _GraphJob, _is_worker_graph,  # noqa: F401
                      is_worker_graph)
from .result import FrozenMapping, MethodResult, Placement

__all__ = [
    "OBJECTIVES",
    "FrozenMapping",
    "Placement",
    "MethodResult",
    "PlacementProblem",
    "PlacementMethod",
    "is_worker_graph",
    "METHODS",
    "register",
    "make_method",
    "available_methods",
    "place",
    "validate_placement",
]

# ---------------------------------------------------------------------------------------------
# place()
# ---------------------------------------------------------------------------------------------


_PLACE_CONSTRAINTS = {
    "worker_graph": [InstanceOf(nx.Graph)],
    "free_gpus": [_FreeGPUs()],
    "method": [_MethodSpec()],
    "objective": [Options(str, OBJECTIVES)],
    "solver": [Options(str, SOLVERS)],
    "time_limit": [None, Interval(Real, 0, None, closed="neither")],
    "gap": [Interval(Real, 0, 1, closed="left")],
    "cluster": [None, InstanceOf(Cluster)],
    "job": "no_validation",
    "seed": ["seed"],
}


def _check_inputs(graph: nx.Graph, free: Sequence[int], cluster: Cluster | None,
                  objective: str, who: str) -> None:
    if graph.is_directed() or graph.is_multigraph():
        raise InvalidParameterError(
            f"{who} needs an undirected simple graph (networkx.Graph), got {type(graph).__name__}")
    for u, v, b in graph.edges(data="bytes"):
        if b is None:
            raise InvalidParameterError(f"edge {u!r}-{v!r} has no 'bytes' attribute")
        if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) \
                or not math.isfinite(b) or b < 0:
            raise InvalidParameterError(
                f"edge {u!r}-{v!r}: 'bytes' must be a finite non-negative number, got {b!r}")
    if cluster is not None:
        if len(free) != cluster.n_servers:
            raise InvalidParameterError(
                f"free_gpus lists {len(free)} servers, the cluster has {cluster.n_servers}")
        for h, (f, cap) in enumerate(zip(free, cluster.server_gpus)):
            if f > cap:
                raise InvalidParameterError(
                    f"free_gpus[{h}] = {f} exceeds server {h}'s {cap} GPUs")
    if objective == "tau":
        if cluster is None:
            raise InvalidParameterError("objective 'tau' needs a cluster (cluster=...)")
        if not _is_worker_graph(graph):
            raise InvalidParameterError(
                "objective 'tau' needs a DNN worker graph (asrpt.dnn.parallel.worker_graph)")


@validate_params(_PLACE_CONSTRAINTS)
def place(worker_graph: nx.Graph, free_gpus: Sequence[int], method="ilp", *,
          objective: str = "cut", solver: str = "highs", time_limit: float | None = None,
          gap: float = 0.0, cluster: Cluster | None = None, job=None, seed=None) -> Placement:
    """Place every worker of a graph on a server with free GPUs.

    Parameters
    ----------
    worker_graph : networkx.Graph
        Workers as vertices, ``bytes`` per iteration on every edge (a worker graph from
        :func:`asrpt.dnn.parallel.worker_graph`, or any undirected graph for the cut).
    free_gpus : sequence of int
        Free GPUs per server; server indices are positions in this sequence (and in
        ``cluster.servers`` when a cluster is given).
    method : str or PlacementMethod
        A registered name (:func:`available_methods`): "ilp" (exact; shortcuts, then the count
        or plain formulation), "brute_force" (exact, tiny graphs), "consolidate" (old name
        "best_fit"), "greedy", "metis" (needs pymetis), "kl", "random", "spread_workers" (old
        name "spread"); or a configured instance such as
        ``ILPPlacement(formulation="plain")``.
    objective : {"cut", "tau"}
        Minimise the bytes crossing servers, or the modelled iteration time (needs a cluster).
    solver : {"highs", "cbc"}
        MILP backend of exact methods.
    time_limit : float or None
        Seconds for the solver; on expiry the incumbent is returned with status
        "time_limit".
    gap : float in [0, 1)
        Relative MIP gap at which the solver may stop (0: prove optimality).
    cluster : Cluster or None
        Gives ``tau`` and GPU types (memory rule); ``free_gpus`` then lists its servers.
    job : object or None
        The DNN job of the worker graph (for tau); default: rebuilt from the graph attributes.
    seed : None, int or numpy.random.Generator
        For randomised methods.

    Returns
    -------
    Placement

    Raises
    ------
    Infeasible
        Fewer usable free GPUs than workers.
    InvalidParameterError
        Bad arguments: unknown method, a directed graph, an edge without ``bytes``, free GPUs
        that do not match the cluster, objective "tau" without a cluster.
    SolverError
        A missing optional backend (pymetis for "metis", CBC) or a solver failure.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Job, Parallelism
    >>> from asrpt.dnn.parallel import worker_graph
    >>> job = Job("j", 0, 8, model="gpt2", parallelism=Parallelism(2, 1, 4), iterations=1)
    >>> W = worker_graph(job, "A100")
    >>> p = place(W, [4, 4, 2], cluster=Cluster.homogeneous(3, 4, "A100"), job=job)
    >>> p.status, p.servers_used, p.detail["formulation"]
    ('optimal', 2, 'shortcut')
    >>> p.tau >= 0
    True
    >>> place(W, [4, 2])
    Traceback (most recent call last):
    ...
    asrpt.errors.Infeasible: the job needs 8 GPUs, 6 are free
    """
    start = time.perf_counter()
    _check_inputs(worker_graph, free_gpus, cluster, objective, "place")
    impl = make_method(method)
    problem = PlacementProblem.build(worker_graph, free_gpus, objective=objective,
                                     cluster=cluster, job=job, solver=solver,
                                     time_limit=time_limit, gap=gap, seed=seed)
    return _run(impl, problem, start)


def _run(impl: PlacementMethod, problem: PlacementProblem, start: float | None = None) -> Placement:
    """Run a method on a built problem and package its answer (no argument validation; the
    simulator's placers call this directly). Raises Infeasible when too few GPUs are free."""
    start = time.perf_counter() if start is None else start
    usable = sum(problem.free)
    if usable < problem.n:
        extra = ""
        if problem.raw_free and usable < sum(problem.raw_free):
            extra = (f" ({sum(problem.raw_free) - usable} more on servers whose GPUs cannot hold "
                     "its largest worker)")
        raise Infeasible(f"the job needs {problem.n} GPUs, {usable} are free{extra}")
    if problem.n == 0:
        res = MethodResult(np.zeros(0, dtype=np.int64), "optimal", 0.0, {})
    else:
        res = impl.run(problem)
    a = np.asarray(res.assignment, dtype=np.int64)
    if not problem.feasible(a):
        raise AssertionError(f"placement method {impl.name!r} returned an infeasible assignment")
    counts = np.bincount(a, minlength=len(problem.free)) if problem.n else np.zeros(1, int)
    server_gpus = tuple((int(h), int(c)) for h, c in enumerate(counts.tolist()) if c)
    cut = problem.cut(a)
    tau = problem.tau(a) if problem.n else None
    bound = res.bound
    if bound is not None and problem.objective == "cut":
        bound = min(float(bound), cut)
    return Placement(
        assignment=FrozenMapping(problem.mapping(a)), server_gpus=server_gpus, cut_bytes=cut,
        servers_used=len(server_gpus), tau=tau, method=impl.name, status=res.status,
        objective=problem.objective, bound=None if bound is None else float(bound),
        solve_time=time.perf_counter() - start, detail=FrozenMapping(res.detail))


# ---------------------------------------------------------------------------------------------
# The validator
# ---------------------------------------------------------------------------------------------


@validate_params({"worker_graph": [InstanceOf(nx.Graph)], "free_gpus": [_FreeGPUs()],
                  "placement": [InstanceOf(Placement)], "cluster": [None, InstanceOf(Cluster)],
                  "job": "no_validation", "rel_tol": [Interval(Real, 0, 1, closed="left")]})
def validate_placement(worker_graph: nx.Graph, free_gpus: Sequence[int], placement: Placement,
                       cluster: Cluster | None = None, *, job=None,
                       rel_tol: float = 1e-9) -> tuple[str, ...]:
    """Recompute a placement from its assignment alone and list what does not hold.

    Checks: every worker of the graph has exactly one server and nothing else is assigned;
    server indices exist; no server gets more workers than its free GPUs; ``server_gpus``,
    ``servers_used`` and ``cut_bytes`` equal their recomputation; with a cluster, ``tau``
    equals :func:`asrpt.dnn.perf.iteration_time` and is at least tau*; a reported bound does not
    exceed the value. Nothing here shares code with the methods.

    Parameters
    ----------
    worker_graph : networkx.Graph
    free_gpus : sequence of int
    placement : Placement
    cluster : Cluster or None
    job : object or None
        The DNN job (for tau); default: rebuilt from the graph attributes.
    rel_tol : float
        Relative tolerance of the numeric comparisons.

    Returns
    -------
    tuple of str
        One line per problem; empty when the placement is valid.

    Raises
    ------
    InvalidParameterError
        For arguments of the wrong type.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_edge("a", "b", bytes=3.0)
    >>> p = place(G, [1, 1], method="spread")
    >>> validate_placement(G, [1, 1], p)
    ()
    >>> validate_placement(G, [1, 0], p)
    ('server 1 holds 1 workers but has 0 free GPUs',)
    """
    problems: list[str] = []
    amap = placement.assignment
    nodes = set(worker_graph.nodes)
    missing = [v for v in worker_graph.nodes if v not in amap]
    extra = [v for v in amap if v not in nodes]
    if missing:
        problems.append(f"{len(missing)} workers have no server (e.g. {missing[0]!r})")
    if extra:
        problems.append(f"{len(extra)} assigned workers are not in the graph (e.g. {extra[0]!r})")
    counts: dict[int, int] = {}
    for v, h in amap.items():
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or not 0 <= h < len(free_gpus):
            problems.append(f"worker {v!r} is on server {h!r}, which is not one of the "
                            f"{len(free_gpus)} servers")
            continue
        counts[int(h)] = counts.get(int(h), 0) + 1
    for h in sorted(counts):
        if counts[h] > free_gpus[h]:
            problems.append(f"server {h} holds {counts[h]} workers but has {free_gpus[h]} free GPUs")
    if tuple(sorted(counts.items())) != tuple(placement.server_gpus):
        problems.append(f"server_gpus {placement.server_gpus} != recomputed "
                        f"{tuple(sorted(counts.items()))}")
    if placement.servers_used != len(counts):
        problems.append(f"servers_used {placement.servers_used} != recomputed {len(counts)}")

    def close(a, b):
        return abs(a - b) <= rel_tol * max(1.0, abs(a), abs(b))

    if not missing:
        cut = 0.0
        for u, v, b in worker_graph.edges(data="bytes"):
            if amap.get(u) != amap.get(v):
                cut += float(b)
        if not close(cut, placement.cut_bytes):
            problems.append(f"cut_bytes {placement.cut_bytes!r} != recomputed {cut!r}")
    if cluster is not None and _is_worker_graph(worker_graph) and not missing and not extra:
        from ..dnn.perf import best_iteration_time, iteration_time

        jb = job if job is not None else _GraphJob(worker_graph)
        try:
            tau = iteration_time(jb, dict(amap), cluster)
        except (InvalidParameterError, Infeasible) as exc:
            problems.append(f"tau cannot be computed: {exc}")
        else:
            if placement.tau is None or not close(tau, placement.tau):
                problems.append(f"tau {placement.tau!r} != recomputed {tau!r}")
            star = best_iteration_time(jb, cluster)
            if tau < star * (1 - rel_tol):
                problems.append(f"tau {tau!r} below tau* {star!r}")
    value = placement.value
    if placement.bound is not None and value is not None and placement.bound > value + rel_tol * max(1.0, abs(value)):
        problems.append(f"bound {placement.bound!r} exceeds the value {value!r}")
    if placement.status not in ("optimal", "time_limit", "heuristic"):
        problems.append(f"unknown status {placement.status!r}")
    return tuple(problems)
