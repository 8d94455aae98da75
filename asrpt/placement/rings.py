"""The ring structure of a worker graph (:class:`RingStructure`, :func:`ring_structure`): which
workers form the tensor- and data-parallel rings and the pipeline stages, the basis of the count
formulation and of the ring bounds (:mod:`asrpt.placement.ilp` has the argument)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import networkx as nx

from .._validation import InstanceOf, validate_params
from .base import _is_worker_graph

__all__ = ["RingStructure", "ring_structure"]

# ---------------------------------------------------------------------------------------------
# The ring structure of a worker graph
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RingStructure:
    """The symmetric structure of a worker graph, as the count formulation sees it.

    Workers ``(r, s, k)``; the *ring axis* is ``"k"`` (tensor rings, size t) or ``"r"``
    (data-parallel rings, size d), whichever is larger; groups are the rings, indexed by
    ``(q, s)`` with q the other ring coordinate.

    Attributes
    ----------
    shape : tuple of int
        (d, p, t).
    ring_axis : str
        "k" or "r".
    ring_w : tuple of float
        Bytes of one ring edge in stage s (for a two-member ring, its single edge).
    other_w : tuple of float
        Bytes of one edge of the other ring in stage s (0 when it has one member).
    path_w : tuple of float
        Bytes of one pipeline edge between stage s and s+1 (length p - 1).

    Examples
    --------
    >>> rs = RingStructure((2, 1, 4), "k", (3.0,), (5.0,), ())
    >>> rs.n_ring, rs.n_other, rs.worker(1, 0, 2)
    (4, 2, (1, 0, 2))
    """

    shape: tuple
    ring_axis: str
    ring_w: tuple
    other_w: tuple
    path_w: tuple

    @property
    def n_ring(self) -> int:
        d, _, t = self.shape
        return t if self.ring_axis == "k" else d

    @property
    def n_other(self) -> int:
        d, _, t = self.shape
        return d if self.ring_axis == "k" else t

    @property
    def stages(self) -> int:
        return self.shape[1]

    def worker(self, q: int, s: int, i: int) -> tuple:
        """The worker at position i of group (q, s)."""
        return (q, s, i) if self.ring_axis == "k" else (i, s, q)

    @property
    def ring_per_edge(self) -> tuple:
        """Bytes per cut arc boundary: a two-member ring counts as two edges of half its bytes."""
        n = self.n_ring
        if n < 2:
            return tuple(0.0 for _ in self.ring_w)
        return tuple(w / 2 if n == 2 else w for w in self.ring_w)

    def groups(self) -> list:
        return [(q, s) for s in range(self.stages) for q in range(self.n_other)]

    def pairs(self) -> list:
        """((q, s), (q', s'), bytes per aligned edge) for adjacent groups."""
        out = []
        nq, p = self.n_other, self.stages
        for s in range(p):
            if nq == 2:
                out.append(((0, s), (1, s), self.other_w[s]))
            elif nq >= 3:
                for q in range(nq):
                    out.append(((q, s), ((q + 1) % nq, s), self.other_w[s]))
            if s < p - 1:
                for q in range(nq):
                    out.append(((q, s), (q, s + 1), self.path_w[s]))
        return out


def _expected_edges(d: int, p: int, t: int):
    """(u, v, kind, stage) of the ideal worker graph of a (d, p, t) configuration."""
    def ring(members):
        n = len(members)
        if n == 2:
            yield members[0], members[1]
        elif n >= 3:
            for i in range(n):
                yield members[i], members[(i + 1) % n]

    for s in range(p):
        for r in range(d):
            for u, v in ring([(r, s, k) for k in range(t)]):
                yield u, v, "tp", s
        for k in range(t):
            for u, v in ring([(r, s, k) for r in range(d)]):
                yield u, v, "dp", s
        if s < p - 1:
            for r in range(d):
                for k in range(t):
                    yield (r, s, k), (r, s + 1, k), "pp", s


@lru_cache(maxsize=256)
def _ring_structure(graph: nx.Graph) -> RingStructure | None:
    if not _is_worker_graph(graph):
        return None
    d, p, t = (int(x) for x in graph.graph["parallelism"])
    weights: dict = {}
    count = 0
    for u, v, kind, s in _expected_edges(d, p, t):
        data = graph.get_edge_data(u, v)
        if data is None:
            return None
        count += 1
        w = float(data["bytes"])
        key = (kind, s)
        if key in weights and weights[key] != w:
            return None
        weights[key] = w
    if count != graph.number_of_edges():
        return None
    tp = tuple(weights.get(("tp", s), 0.0) for s in range(p))
    dp = tuple(weights.get(("dp", s), 0.0) for s in range(p))
    # the ring axis: the larger ring (fewer, larger groups: a much smaller and, measured on
    # the zoo, much faster model than putting the heavier ring on the axis), tensor on ties
    axis = "k" if t >= d else "r"
    pp = tuple(weights.get(("pp", s), 0.0) for s in range(p - 1))
    ring_w, other_w = (tp, dp) if axis == "k" else (dp, tp)
    return RingStructure((d, p, t), axis, ring_w, other_w, pp)


@validate_params({"graph": [InstanceOf(nx.Graph)]})
def ring_structure(graph: nx.Graph) -> RingStructure | None:
    """The ring structure of a worker graph, or None when the graph is not one.

    The graph must have exactly the edges of :func:`asrpt.dnn.parallel.worker_graph` for its
    parallelism, with the same bytes on every edge of a kind within a stage.

    Parameters
    ----------
    graph : networkx.Graph

    Returns
    -------
    RingStructure or None

    Raises
    ------
    InvalidParameterError
        For a non-graph.

    Examples
    --------
    >>> from asrpt.instance import Job, Parallelism
    >>> from asrpt.dnn.parallel import worker_graph
    >>> W = worker_graph(Job("j", 0, 16, model="gpt2", parallelism=Parallelism(2, 2, 4),
    ...                      iterations=1), "A100")
    >>> rs = ring_structure(W)
    >>> rs.ring_axis, rs.n_ring, len(rs.groups()), len(rs.pairs())
    ('k', 4, 4, 4)
    >>> ring_structure(nx.path_graph(3)) is None
    True
    """
    return _ring_structure(graph)
