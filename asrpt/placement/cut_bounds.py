"""Lower bounds on the cut of a placement: the fewest servers, the Fiedler (spectral) bound,
the minimum cut and the ring/path structure bound (:func:`cut_lower_bound`, :func:`fiedler_bound`);
they certify the shortcuts and the exact methods (:mod:`asrpt.placement.ilp`)."""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import networkx as nx
import numpy as np

from .._validation import InstanceOf, validate_params
from .base import PlacementProblem, _FreeGPUs
from .rings import RingStructure, _ring_structure

__all__ = ["fiedler_bound", "cut_lower_bound"]

# ---------------------------------------------------------------------------------------------
# Lower bounds
# ---------------------------------------------------------------------------------------------


def _fewest(free_sorted_desc: Sequence[int], n: int) -> int:
    """Fewest servers (of the given free counts, largest first) holding n workers."""
    acc = 0
    for q, f in enumerate(free_sorted_desc, start=1):
        acc += f
        if acc >= n:
            return q
    return len(free_sorted_desc) + 1


@lru_cache(maxsize=256)
def _laplacian_lambda2(graph: nx.Graph, nodes: tuple) -> float:
    n = len(nodes)
    if n < 2:
        return 0.0
    idx = {v: i for i, v in enumerate(nodes)}
    L = np.zeros((n, n))
    for u, v, b in graph.edges(data="bytes"):
        if u == v:
            continue
        i, j = idx[u], idx[v]
        L[i, j] -= b
        L[j, i] -= b
        L[i, i] += b
        L[j, j] += b
    vals = np.linalg.eigvalsh(L)
    return max(0.0, float(vals[1]))


def _fiedler(graph: nx.Graph, nodes: tuple, free: Sequence[int]) -> float:
    n = len(nodes)
    if n < 2:
        return 0.0
    lam = _laplacian_lambda2(graph, nodes)
    # sum_h m_h (n - m_h) = n^2 - sum m_h^2, smallest when the parts are filled largest first
    left, sq = n, 0
    for f in sorted(free, reverse=True):
        m = min(f, left)
        sq += m * m
        left -= m
    if left > 0:
        return 0.0
    # each part S: cut(S) >= lambda2 |S| (n - |S|) / n; the total cut is half the sum
    return max(0.0, lam * (n * n - sq) / (2.0 * n) * (1 - 1e-9))


@validate_params({"graph": [InstanceOf(nx.Graph)], "free_gpus": [_FreeGPUs()]})
def fiedler_bound(graph: nx.Graph, free_gpus: Sequence[int]) -> float:
    """The spectral (Fiedler) lower bound on the cut of any placement (docs/placement.md, Fiedler
    bound).

    For a part S of n vertices, ``cut(S) >= lambda_2(L) |S| (n - |S|) / n`` with L the
    ``bytes``-weighted Laplacian; the total cut is half the sum over the parts, and
    ``sum |S_h| (n - |S_h|)`` is smallest when servers are filled largest first. For a balanced
    bisection this is the classical ``lambda_2 n / 4``. Scaled down by 1e-9 (relative) for the
    eigenvalue's rounding.

    Parameters
    ----------
    graph : networkx.Graph
    free_gpus : sequence of int

    Returns
    -------
    float
        0 when the job fits one server or the free GPUs are too few.

    Raises
    ------
    InvalidParameterError
        For bad arguments.

    Examples
    --------
    >>> G = nx.cycle_graph(4); nx.set_edge_attributes(G, 1.0, "bytes")
    >>> round(fiedler_bound(G, [2, 2]), 6)  # lambda_2 = 2, n = 4: 2 * 4 / 4
    2.0
    """
    return _fiedler(graph, tuple(graph.nodes), list(free_gpus))


@lru_cache(maxsize=256)
def _min_cut(graph: nx.Graph) -> float:
    if graph.number_of_nodes() < 2:
        return 0.0
    if not nx.is_connected(graph):
        return 0.0
    H = nx.Graph()
    H.add_nodes_from(graph.nodes)
    H.add_edges_from((u, v, {"bytes": float(b)}) for u, v, b in graph.edges(data="bytes") if u != v)
    value, _ = nx.stoer_wagner(H, weight="bytes")
    return float(value)


def _structure_bound(rs: RingStructure, free_desc: list) -> float:
    """Rings and pipeline paths use disjoint edges: the sum of their own lower bounds."""
    d, p, t = rs.shape
    total = 0.0
    fmax = free_desc[0] if free_desc else 0

    def ring_lb(n: int, per: float) -> float:
        if n < 2 or n <= fmax:
            return 0.0
        return per * _fewest(free_desc, n)

    tp_per = [w / 2 if t == 2 else w for w in (rs.ring_w if rs.ring_axis == "k" else rs.other_w)]
    dp_per = [w / 2 if d == 2 else w for w in (rs.other_w if rs.ring_axis == "k" else rs.ring_w)]
    for s in range(p):
        total += d * ring_lb(t, tp_per[s])
        total += t * ring_lb(d, dp_per[s])
    if p > fmax and p >= 2:
        cuts = _fewest(free_desc, p) - 1
        total += d * t * sum(sorted(rs.path_w)[:cuts])
    return total


def _cut_lower_bound(pb: PlacementProblem) -> float:
    free_desc = sorted((f for f in pb.free if f > 0), reverse=True)
    n = pb.n
    if n < 2 or (free_desc and free_desc[0] >= n):
        return 0.0
    q = _fewest(free_desc, n)
    bounds = [0.0]
    rs = _ring_structure(pb.graph) if pb.is_worker_graph else None
    if rs is not None:
        bounds.append(_structure_bound(rs, free_desc))
    if q >= 2:
        bounds.append(q * _min_cut(pb.graph) / 2.0)
    bounds.append(_fiedler(pb.graph, pb.nodes, pb.free))
    return max(bounds)


@validate_params({"graph": [InstanceOf(nx.Graph)], "free_gpus": [_FreeGPUs()]})
def cut_lower_bound(graph: nx.Graph, free_gpus: Sequence[int]) -> float:
    """A lower bound on the cut of every placement, computed without a solver.

    The largest of: (1) for worker graphs, the sum over rings and pipeline paths (disjoint edge
    sets) of their own bounds: a ring of n members with more members than the largest server has
    free GPUs spans at least c servers (c = the fewest servers holding n) and cuts at least c
    edges; a pipeline path over c servers cuts at least c - 1 of its edges (the cheapest); (2)
    connectivity: the job spans at least c servers, each part's boundary is at least the global
    minimum cut lambda (Stoer-Wagner), so the cut is at least ``c lambda / 2``; (3)
    :func:`fiedler_bound`.

    Parameters
    ----------
    graph : networkx.Graph
    free_gpus : sequence of int

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        For bad arguments.

    Examples
    --------
    >>> G = nx.cycle_graph(8); nx.set_edge_attributes(G, 1.0, "bytes")
    >>> cut_lower_bound(G, [4, 4]), cut_lower_bound(G, [8])
    (2.0, 0.0)
    """
    return _cut_lower_bound(PlacementProblem.build(graph, list(free_gpus)))
