"""The placement problem, its result, the method registry and an independent validator.

This module owns what every placement method shares:

- :class:`Placement`, the frozen result (``docs/design.md``): the worker -> server
  ``assignment``, the GPUs used per server, the bytes that cross servers, the servers used, the
  iteration time ``tau`` when a cluster is given, the method, the solver status and the best
  proven lower ``bound`` on the objective;
- :class:`PlacementProblem`, one instance of the problem as arrays (what methods read);
- :class:`PlacementMethod`, the plugin base class, and the registry (:data:`METHODS`,
  :func:`register`, :func:`make_method`);
- :func:`place`, the one entry point; :func:`validate_placement`, which recomputes everything
  from the assignment alone (capacity, cut, servers, tau) so methods are judged by one check.

**The problem** (model.md section 4). A graph whose vertices are workers (each needs one GPU)
and whose edges carry ``bytes`` per iteration; free GPUs ``f_h`` per server h. Assign every
worker to a server, at most ``f_h`` workers on h, minimising the bytes on edges whose ends sit
on different servers (``objective="cut"``) or the modelled iteration time
(``objective="tau"``, :func:`asrpt.dnn.perf.iteration_time`; needs a cluster and a DNN worker
graph). Graphs are usually worker graphs (:func:`asrpt.dnn.parallel.worker_graph`), but any
undirected networkx graph with a ``bytes`` attribute on every edge is accepted for the cut.

**Memory.** Each worker has its own GPU, so memory is a per-GPU check: with a cluster, a server
whose GPU type cannot hold the job's largest worker (``memory`` node attribute against
:data:`asrpt.dnn.parallel.MEMORY_USABLE_FRACTION` of the GPU's memory) is treated as having no
free GPUs. Without a cluster memory is not checked.

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

import abc
import math
import time
from dataclasses import dataclass, field
from functools import cached_property
from numbers import Real
from typing import Any, Callable, Iterator, Mapping, Sequence

import networkx as nx
import numpy as np

from .._validation import InstanceOf, Interval, Options, Params, validate_params
from ..errors import Infeasible, InvalidParameterError
from ..instance import Cluster, Parallelism
from ..registry import Registry
from ..solve import SOLVERS

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

#: The objectives :func:`place` understands.
OBJECTIVES = ("cut", "tau")


# ---------------------------------------------------------------------------------------------
# The result
# ---------------------------------------------------------------------------------------------


class FrozenMapping(Mapping):
    """A read-only dict (picklable, unlike ``types.MappingProxyType``).

    Examples
    --------
    >>> m = FrozenMapping({"a": 1})
    >>> m["a"], dict(m), m == {"a": 1}
    (1, {'a': 1}, True)
    """

    __slots__ = ("_data",)

    def __init__(self, data=()):
        object.__setattr__(self, "_data", dict(data))

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self) -> Iterator:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setattr__(self, name, value):
        raise AttributeError("FrozenMapping is read-only")

    def __reduce__(self):
        return (FrozenMapping, (self._data,))

    def __repr__(self) -> str:
        return f"FrozenMapping({self._data!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Placement:
    """Where each worker of a job runs, and what that costs.

    Attributes
    ----------
    assignment : Mapping
        Worker -> server index (read-only).
    server_gpus : tuple of (int, int)
        ``(server, gpus)`` for every server the job uses, in server order (the simulator's
        :class:`~asrpt.sim.placer.Allocation` shape).
    cut_bytes : float
        Bytes per iteration on edges whose ends sit on different servers.
    servers_used : int
    tau : float or None
        Seconds per iteration (:func:`asrpt.dnn.perf.iteration_time`) when a cluster was given.
    method : str
        The registered method name.
    status : str
        "optimal" (proven: by the solver or by a shortcut's certificate), "time_limit" (the
        solver stopped with an incumbent) or "heuristic".
    objective : str
        "cut" or "tau": what was minimised.
    bound : float or None
        A proven lower bound on the optimum of the objective (None for heuristics).
    solve_time : float
        Wall seconds spent in :func:`place` (not compared by ``==``).
    detail : Mapping
        Method-specific facts (formulation, shortcut, solver, ...; not compared by ``==``).

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_edge(0, 1, bytes=4.0)
    >>> p = place(G, [1, 1], method="best_fit")
    >>> p.cut_bytes, p.server_gpus, p.value
    (4.0, ((0, 1), (1, 1)), 4.0)
    >>> p.to_dict()["assignment"]
    [[0, 0], [1, 1]]
    """

    assignment: Mapping
    server_gpus: tuple
    cut_bytes: float
    servers_used: int
    tau: float | None
    method: str
    status: str
    objective: str = "cut"
    bound: float | None = None
    solve_time: float = field(default=0.0, compare=False)
    detail: Mapping = field(default_factory=FrozenMapping, compare=False)

    @property
    def value(self) -> float | None:
        """The objective's value: ``cut_bytes`` or ``tau``."""
        return self.cut_bytes if self.objective == "cut" else self.tau

    @property
    def gap(self) -> float | None:
        """Relative gap between the value and the bound (0 when proven optimal), or None."""
        if self.bound is None or self.value is None:
            return None
        if self.value == 0:
            return 0.0
        return max(0.0, (self.value - self.bound) / abs(self.value))

    def to_dict(self) -> dict:
        """A JSON-ready dict; workers that are tuples become lists."""

        def key(w):
            return list(w) if isinstance(w, tuple) else w

        return {
            "assignment": [[key(w), int(h)] for w, h in self.assignment.items()],
            "server_gpus": [[int(h), int(g)] for h, g in self.server_gpus],
            "cut_bytes": self.cut_bytes,
            "servers_used": self.servers_used,
            "tau": self.tau,
            "method": self.method,
            "status": self.status,
            "objective": self.objective,
            "bound": self.bound,
            "solve_time": self.solve_time,
            "detail": dict(self.detail),
        }


@dataclass(frozen=True)
class MethodResult:
    """What a :class:`PlacementMethod` returns: a server index per worker (in
    ``problem.nodes`` order), a status ("optimal", "time_limit", "heuristic"), a proven lower
    bound on the objective (or None) and method-specific details.

    Examples
    --------
    >>> r = MethodResult(np.array([0, 0]), "heuristic")
    >>> r.status, r.bound
    ('heuristic', None)
    """

    assignment: np.ndarray
    status: str = "heuristic"
    bound: float | None = None
    detail: Mapping = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# The problem as arrays
# ---------------------------------------------------------------------------------------------


class _GraphJob:
    """The DNN job a worker graph was built for, rebuilt from its graph attributes (for tau)."""

    def __init__(self, graph: nx.Graph):
        g = graph.graph
        d, p, t = g["parallelism"]
        self.id = g.get("job") or "job"
        self.model = g["model"]
        self.parallelism = Parallelism(int(d), int(p), int(t))
        self.gpus = self.parallelism.gpus
        self.batch_size = g.get("batch_size")
        self.precision = g.get("precision")
        self.instances = None

    def __repr__(self) -> str:
        return f"_GraphJob({self.model!r}, {self.parallelism})"


@validate_params({"graph": [InstanceOf(nx.Graph)]})
def is_worker_graph(graph: nx.Graph) -> bool:
    """True when ``graph`` carries the worker-graph attributes (model, parallelism) and its
    nodes are exactly the ``(r, s, k)`` tuples of its parallelism.

    Parameters
    ----------
    graph : networkx.Graph

    Returns
    -------
    bool

    Examples
    --------
    >>> import networkx as nx
    >>> is_worker_graph(nx.path_graph(2))
    False
    >>> G = nx.Graph(model="m", parallelism=(1, 1, 2)); G.add_edge((0, 0, 0), (0, 0, 1), bytes=1)
    >>> is_worker_graph(G)
    True
    """
    return _is_worker_graph(graph)


def _is_worker_graph(graph: nx.Graph) -> bool:
    par = graph.graph.get("parallelism")
    if graph.graph.get("model") is None or par is None or len(par) != 3:
        return False
    d, p, t = par
    if graph.number_of_nodes() != d * p * t:
        return False
    return all(isinstance(v, tuple) and len(v) == 3 and 0 <= v[0] < d and 0 <= v[1] < p
               and 0 <= v[2] < t for v in graph.nodes)


@dataclass(frozen=True, eq=False)
class PlacementProblem:
    """One placement problem as arrays: what methods read.

    Built by :func:`place` (methods never validate again). Workers are numbered ``0..n-1`` in
    ``nodes`` order (sorted for worker graphs, insertion order otherwise); edges are parallel
    arrays ``eu``, ``ev``, ``ew`` (bytes; self-loops dropped).

    Attributes
    ----------
    graph : networkx.Graph
    nodes : tuple
    free : tuple of int
        Usable free GPUs per server (0 for servers whose GPU cannot hold the largest worker).
    servers : tuple of int
        Indices of servers with usable free GPUs.
    objective : str
    cluster : Cluster or None
    job : object or None
        The DNN job (for tau), when known.
    solver, time_limit, gap, seed
        Solver options (ILP methods) and the seed (randomised methods).

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.path_graph(3); nx.set_edge_attributes(G, 2.0, "bytes")
    >>> pb = PlacementProblem.build(G, [2, 1])
    >>> pb.n, pb.servers, pb.cut(np.array([0, 0, 1]))
    (3, (0, 1), 2.0)
    """

    graph: nx.Graph
    nodes: tuple
    free: tuple
    objective: str = "cut"
    cluster: Cluster | None = None
    job: Any = None
    solver: str = "highs"
    time_limit: float | None = None
    gap: float = 0.0
    seed: Any = None
    raw_free: tuple = ()

    @classmethod
    def build(cls, graph: nx.Graph, free: Sequence[int], *, objective: str = "cut",
              cluster: Cluster | None = None, job: Any = None, solver: str = "highs",
              time_limit: float | None = None, gap: float = 0.0, seed: Any = None
              ) -> "PlacementProblem":
        """Build from a graph and the free GPUs (with the memory rule of the module docstring)."""
        nodes = tuple(sorted(graph.nodes)) if _is_worker_graph(graph) else tuple(graph.nodes)
        raw = tuple(int(f) for f in free)
        free = list(raw)
        if cluster is not None:
            free = _usable_free(graph, free, cluster)
        if job is None and objective == "tau" and _is_worker_graph(graph):
            job = _GraphJob(graph)
        return cls(graph, nodes, tuple(free), objective, cluster, job, solver, time_limit, gap,
                   seed, raw)

    # -- sizes -----------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.nodes)

    @cached_property
    def index(self) -> dict:
        return {v: i for i, v in enumerate(self.nodes)}

    @cached_property
    def servers(self) -> tuple:
        return tuple(h for h, f in enumerate(self.free) if f > 0)

    @cached_property
    def _edges(self) -> tuple:
        idx = self.index
        us, vs, ws = [], [], []
        for u, v, b in self.graph.edges(data="bytes"):
            if u == v:
                continue
            us.append(idx[u])
            vs.append(idx[v])
            ws.append(float(b))
        return (np.array(us, dtype=np.int64), np.array(vs, dtype=np.int64),
                np.array(ws, dtype=float))

    @property
    def eu(self) -> np.ndarray:
        return self._edges[0]

    @property
    def ev(self) -> np.ndarray:
        return self._edges[1]

    @property
    def ew(self) -> np.ndarray:
        return self._edges[2]

    @cached_property
    def total_bytes(self) -> float:
        return float(self.ew.sum())

    @cached_property
    def is_worker_graph(self) -> bool:
        return _is_worker_graph(self.graph)

    @cached_property
    def adjacency(self) -> list:
        """Per worker: list of (neighbour index, bytes)."""
        adj: list[list] = [[] for _ in range(self.n)]
        for u, v, w in zip(self.eu.tolist(), self.ev.tolist(), self.ew.tolist()):
            adj[u].append((v, w))
            adj[v].append((u, w))
        return adj

    def gpu_type(self, h: int) -> str | None:
        """The canonical GPU type of server h (None without a cluster)."""
        if self.cluster is None:
            return None
        from ..dnn.hardware import resolve_gpu_type

        return resolve_gpu_type(self.cluster, h)

    @cached_property
    def server_classes(self) -> tuple:
        """Groups of interchangeable servers (same free GPUs and GPU type), each in index order."""
        classes: dict = {}
        for h in self.servers:
            classes.setdefault((self.free[h], self.gpu_type(h)), []).append(h)
        return tuple(tuple(c) for c in classes.values())

    # -- evaluation ------------------------------------------------------------------------------
    def cut(self, a: np.ndarray) -> float:
        """Bytes on edges whose ends get different servers under assignment array ``a``."""
        if not len(self.ew):
            return 0.0
        return float(self.ew[a[self.eu] != a[self.ev]].sum())

    def mapping(self, a: np.ndarray) -> dict:
        return {v: int(h) for v, h in zip(self.nodes, np.asarray(a).tolist())}

    def tau(self, a: np.ndarray) -> float | None:
        """tau of assignment ``a`` (None without a cluster or for a non-DNN graph)."""
        if self.cluster is None or not self.is_worker_graph:
            return None
        from ..dnn.perf import iteration_time

        job = self.job if self.job is not None else _GraphJob(self.graph)
        return float(iteration_time(job, self.mapping(a), self.cluster))

    def value(self, a: np.ndarray) -> float:
        """The objective of assignment ``a``."""
        return self.cut(a) if self.objective == "cut" else self.tau(a)

    def feasible(self, a: np.ndarray) -> bool:
        a = np.asarray(a)
        if a.shape != (self.n,) or (self.n and (a.min() < 0 or a.max() >= len(self.free))):
            return False
        counts = np.bincount(a, minlength=len(self.free))
        return bool((counts <= np.array(self.free)).all())

    def best(self, candidates) -> np.ndarray | None:
        """The feasible candidate with the smallest objective (ties: the first)."""
        best, best_val = None, math.inf
        for a in candidates:
            if a is None or not self.feasible(a):
                continue
            val = self.value(a)
            if val < best_val - 1e-12 * max(1.0, abs(best_val) if math.isfinite(best_val) else 1):
                best, best_val = a, val
        return best


def _usable_free(graph: nx.Graph, free: list, cluster: Cluster) -> list:
    mems = [m for _, m in graph.nodes(data="memory") if m is not None]
    if not mems:
        return free
    from ..dnn.hardware import gpu_spec, resolve_gpu_type
    from ..dnn.parallel import MEMORY_USABLE_FRACTION

    need = max(mems)
    out = []
    for h, f in enumerate(free):
        cap = MEMORY_USABLE_FRACTION * gpu_spec(resolve_gpu_type(cluster, h)).memory_bytes
        out.append(f if need <= cap * (1 + 1e-12) else 0)
    return out


# ---------------------------------------------------------------------------------------------
# Methods and their registry
# ---------------------------------------------------------------------------------------------


class PlacementMethod(Params, abc.ABC):
    """Base class of placement methods (plugins).

    A method is a :class:`~asrpt._validation.Params` subclass with a keyword-only constructor
    that only stores its parameters, registered by name with :func:`register`. :func:`place`
    builds a :class:`PlacementProblem` and calls :meth:`run`, which returns a
    :class:`MethodResult`; :func:`place` turns it into a :class:`Placement`.

    Attributes
    ----------
    name : str
        The registered name.
    exact : bool
        True when the method proves optimality (its results are lower bounds for the others).

    Examples
    --------
    >>> class Everything(PlacementMethod):
    ...     def run(self, problem):
    ...         return MethodResult(np.zeros(problem.n, dtype=int))
    >>> import networkx as nx
    >>> place(nx.empty_graph(2), [2], method=Everything()).server_gpus
    ((0, 2),)
    """

    name = "custom"
    exact = False

    @abc.abstractmethod
    def run(self, problem: PlacementProblem) -> MethodResult:
        """Place the workers of ``problem``; the assignment must respect ``problem.free``."""


class _MethodSpec:
    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, (str, PlacementMethod))

    def __str__(self) -> str:
        return "a registered method name or a PlacementMethod"


#: Registered methods: ``METHODS[name]`` is the class (an :class:`asrpt.registry.Registry`).
METHODS = Registry("placement method", base=PlacementMethod, item=lambda e: e.target, validate_instances=True)


@validate_params({"name": [str], "description": [None, str]})
def register(name: str, *, description: str | None = None) -> Callable[[type], type]:
    """Class decorator registering a :class:`PlacementMethod` under ``name``.

    Parameters
    ----------
    name : str
    description : str or None
        One line for listings (default: the first line of the class docstring).

    Returns
    -------
    callable
        The decorator; it sets ``cls.name`` and returns the class.

    Raises
    ------
    ValueError
        When the name is taken (a programming error, raised at import time).

    Examples
    --------
    >>> @register("doc-example-all-on-first")
    ... class AllOnFirst(PlacementMethod):
    ...     def run(self, problem):
    ...         return MethodResult(np.full(problem.n, problem.servers[0]))
    >>> "doc-example-all-on-first" in available_methods()
    True
    >>> _ = METHODS.pop("doc-example-all-on-first")
    """

    def deco(cls: type) -> type:
        if not (isinstance(cls, type) and issubclass(cls, PlacementMethod)):
            raise TypeError(f"{cls!r} is not a PlacementMethod subclass")
        METHODS.register(name, cls, description=description)
        cls.name = name
        return cls

    return deco


@validate_params({})
def available_methods() -> tuple[str, ...]:
    """The registered method names, sorted.

    Examples
    --------
    >>> {"ilp", "best_fit", "greedy", "kl"} <= set(available_methods())
    True
    """
    return METHODS.names()


@validate_params({"spec": [_MethodSpec()]})
def make_method(spec) -> PlacementMethod:
    """A method instance from a registered name (or an instance, validated and returned).

    Parameters
    ----------
    spec : str or PlacementMethod

    Returns
    -------
    PlacementMethod

    Raises
    ------
    InvalidParameterError
        Unknown name (the message lists the known ones, with a did-you-mean), or an instance
        with invalid parameters.

    Examples
    --------
    >>> make_method("greedy").name
    'greedy'
    >>> make_method("gredy")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: unknown placement method 'gredy' (did you mean 'greedy'?); known: ...
    """
    return METHODS.create(spec)


# ---------------------------------------------------------------------------------------------
# place()
# ---------------------------------------------------------------------------------------------


class _FreeGPUs:
    """Constraint: a non-empty sequence of non-negative ints."""

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__"):
            return False
        try:
            items = list(value)
        except TypeError:
            return False
        return bool(items) and all(
            isinstance(f, (int, np.integer)) and not isinstance(f, (bool, np.bool_)) and f >= 0
            for f in items)

    def __str__(self) -> str:
        return "a non-empty sequence of non-negative ints (free GPUs per server)"


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
