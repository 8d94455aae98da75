"""The placement problem as arrays: :class:`PlacementProblem` (what every method reads), the
free-GPU vector check and :func:`is_worker_graph`.

**The problem** (docs/placement.md). A graph whose vertices are workers (each needs one GPU)
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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, Sequence

import networkx as nx
import numpy as np

from .._validation import InstanceOf, validate_params
from ..instance import Cluster, Parallelism

__all__ = ["OBJECTIVES", "PlacementProblem", "is_worker_graph"]

#: The objectives :func:`place` understands.
OBJECTIVES = ("cut", "tau")

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
