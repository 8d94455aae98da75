"""Exact placement: shortcuts with certificates, the plain and the count ILP, the tau ILP, brute
force, and lower bounds.

This module owns the exact methods of :func:`asrpt.placement.place` (``"ilp"``,
``"brute_force"``) and the bounds that certify them. ``docs/placement.md`` has the argument in
full; in brief:

**Plain formulation** (model.md section 4, theory-checks 3.1). Binaries ``x[v,h]`` (worker v on
server h, only servers with free GPUs), ``sum_h x[v,h] = 1``, ``sum_v x[v,h] <= f_h``;
continuous ``z[u,v] >= x[u,h] - x[v,h]`` and ``>= x[v,h] - x[u,h]`` for every h; minimise
``sum w_uv z_uv``. Servers with the same free GPUs (and GPU type) are interchangeable: within
such a class, worker number i may only use the class's first i+1 servers (first-occurrence
labelling, valid because any placement can be relabelled so).

**Count formulation** (worker graphs). Tensor- and data-parallel edges form *rings*, so the
workers of a tensor group are interchangeable only under rotations of the ring, not under
arbitrary permutations. The formulation takes the larger of the two rings (tensor over k, or
data-parallel over r) as the *ring axis*; a *group* is one ring, indexed by the other ring
coordinate q and the stage s. Integer ``y[g,h]`` counts the members of group g on server h.

- A ring split over c servers cuts at least c of its edges, exactly c when each server's
  members form one arc: cost ``per_s (sum_h u[g,h] - sum_h w[g,h])`` with binaries
  ``u >= y / n`` (server used) and ``w <= y / n`` (whole ring on h), which is ``per_s * c`` for a
  split ring (at least 2 cut edges) and 0 for a whole one. A two-member ring is one edge
  carrying both directions: counted as two edges of half its bytes.
- Groups adjacent along the stage axis (pipeline edges) or the other ring (data- or
  tensor-parallel edges) are joined position by position: ``n`` edges of weight w. At most
  ``sum_h min(y[g,h], y[g',h])`` of them can be uncut: continuous ``m[e,h] <= y[g,h], y[g',h]``,
  cost ``w (n - sum_h m[e,h])``.
- Valid inequalities tighten the relaxation without changing the optimum: at most
  ``floor(f_h / n)`` whole rings per server; per server, the internal bytes are at most those of
  the densest ``f_h``-worker set, and the boundary bytes at least the smallest boundary of a set
  of as many workers as the server holds (``boundary_cuts``); interchangeable servers labelled
  in the order of their first ring.

Every placement's cut is at least the count objective of its counts, so the count optimum is a
**lower bound** on the plain optimum. It is attained when the rings can be laid out as arcs
that line up position by position with their neighbours; :func:`_realize` searches arc orders
and rotations for that layout. When the realised cut equals the count optimum, it is optimal
(status "optimal", ``detail["formulation"] = "count"``); otherwise the plain ILP runs with the
count optimum as a valid cut on its objective (``"count+plain"``), so both formulations always
give the same optimum.

**Tau formulation** (``objective="tau"``): the plain variables plus indicators that reproduce
:func:`asrpt.dnn.perf.iteration_time` term by term as a MILP (crossing indicators per
collective, ring arcs via cut counts, GPU-type-used indicators for mixed clusters, the 1F1B
maximum and the exposed all-reduce as maxima of linear terms); the reported tau is recomputed by
:func:`~asrpt.dnn.perf.iteration_time`.

**Shortcuts** (no solver; ``detail["formulation"] = "shortcut"``):

- ``one_server``: a server holds the whole job, so the cut is 0 (optimal). For tau: the
  one-server placement attaining tau* (tau >= tau* always).
- ``certified_packing``: a canonical consolidated packing (tensor groups whole where they fit,
  fewest servers) whose cut equals :func:`cut_lower_bound` (ring/path, connectivity and Fiedler
  bounds), or whose tau equals tau*. Keeping tensor groups whole is *not* optimal in general for
  the cut (a data-parallel ring can cost more than splitting tensor rings), which is why the
  shortcut needs the certificate.

Examples
--------
>>> from asrpt.instance import Job, Parallelism
>>> from asrpt.dnn.parallel import worker_graph
>>> from asrpt.placement import place
>>> W = worker_graph(Job("j", 0, 16, model="gpt2", parallelism=Parallelism(2, 2, 4),
...                      iterations=1), "A100")
>>> count = place(W, [6, 6, 4], method=ILPPlacement(formulation="count", shortcuts=False))
>>> plain = place(W, [6, 6, 4], method=ILPPlacement(formulation="plain", shortcuts=False))
>>> abs(count.cut_bytes - plain.cut_bytes) <= 1e-9 * plain.cut_bytes, count.status
(True, 'optimal')
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import networkx as nx
import numpy as np
import pulp

from .._validation import InstanceOf, Interval, Integral, Options, validate_params
from ..errors import SolverError
from ..solve import solve
from .base import (MethodResult, PlacementMethod, PlacementProblem, _FreeGPUs, _is_worker_graph,
                   register)
from .heuristics import BestFit, Greedy, _consolidation, _packings

__all__ = [
    "RingStructure",
    "ring_structure",
    "fiedler_bound",
    "cut_lower_bound",
    "ILPPlacement",
    "BruteForce",
    "FORMULATIONS",
]

#: Formulations of :class:`ILPPlacement`.
FORMULATIONS = ("auto", "count", "plain")

_REL = 1e-9


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
    """The spectral (Fiedler) lower bound on the cut of any placement (CHK-20, generalised).

    For a part S of n vertices, ``cut(S) >= lambda_2(L) |S| (n - |S|) / n`` with L the
    ``bytes``-weighted Laplacian; the total cut is half the sum over the parts, and
    ``sum |S_h| (n - |S_h|)`` is smallest when servers are filled largest first. For a balanced
    bisection this is theory-checks' ``lambda_2 n / 4``. Scaled down by 1e-9 (relative) for the
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


# ---------------------------------------------------------------------------------------------
# Shortcuts
# ---------------------------------------------------------------------------------------------


def _tau_star(pb: PlacementProblem) -> float:
    from ..dnn.perf import best_iteration_time

    return float(best_iteration_time(pb.job, pb.cluster))


def _shortcut(pb: PlacementProblem) -> MethodResult | None:
    n = pb.n
    fits = [h for h in pb.servers if pb.free[h] >= n]
    if pb.objective == "cut":
        if fits:
            h = min(fits, key=lambda h: (pb.free[h], h))
            return MethodResult(np.full(n, h, dtype=np.int64), "optimal", 0.0,
                                {"formulation": "shortcut", "shortcut": "one_server"})
        cands = _packings(pb)
        if not cands:
            return None
        best = pb.best(cands)
        cut = pb.cut(best)
        lb = _cut_lower_bound(pb)
        if cut <= lb * (1 + _REL) + 1e-12:
            return MethodResult(best, "optimal", lb, {"formulation": "shortcut",
                                                      "shortcut": "certified_packing"})
        return None
    star = _tau_star(pb)
    cands = []
    by_type: dict = {}
    for h in sorted(fits, key=lambda h: (pb.free[h], h)):
        by_type.setdefault(pb.gpu_type(h), h)
    cands += [np.full(n, h, dtype=np.int64) for h in by_type.values()]
    one = pb.best(cands) if cands else None
    if one is not None and pb.tau(one) <= star * (1 + 1e-12):
        return MethodResult(one, "optimal", star, {"formulation": "shortcut",
                                                   "shortcut": "one_server"})
    packs = _packings(pb)
    # also pack onto the servers of each GPU type alone
    for ty in {pb.gpu_type(h) for h in pb.servers}:
        free_t = tuple(f if pb.gpu_type(h) == ty else 0 for h, f in enumerate(pb.free))
        servers = _consolidation(free_t, n)
        if servers:
            packs += _packings(pb, servers)
    best = pb.best(packs)
    if best is not None and pb.tau(best) <= star * (1 + 1e-12):
        return MethodResult(best, "optimal", star, {"formulation": "shortcut",
                                                    "shortcut": "certified_packing"})
    return None


# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------


def _var(prob: pulp.LpProblem, name: str, lo=0, hi=None, cat="Continuous"):
    return prob.add_variable(name, lo, hi, cat=cat)


def _symmetry_first_occurrence(prob, x, pb: PlacementProblem, servers: list) -> None:
    """Within a class of interchangeable servers, worker i may use only the first i+1."""
    for cls in pb.server_classes:
        for j, h in enumerate(cls):
            for i in range(min(j, pb.n)):
                prob += x[i, h] == 0


def _plain_model(pb: PlacementProblem, scale: float, lower: float | None = None):
    prob = pulp.LpProblem("placement_plain", pulp.LpMinimize)
    servers = list(pb.servers)
    n = pb.n
    x = {(i, h): _var(prob, f"x_{i}_{h}", 0, 1, "Binary") for i in range(n) for h in servers}
    for i in range(n):
        prob += pulp.lpSum(x[i, h] for h in servers) == 1
    for h in servers:
        prob += pulp.lpSum(x[i, h] for i in range(n)) <= pb.free[h]
    _symmetry_first_occurrence(prob, x, pb, servers)
    z = []
    for e, (u, v) in enumerate(zip(pb.eu.tolist(), pb.ev.tolist())):
        ze = _var(prob, f"z_{e}", 0, 1)
        z.append(ze)
        for h in servers:
            prob += ze >= x[u, h] - x[v, h]
            prob += ze >= x[v, h] - x[u, h]
    obj = pulp.lpSum((w / scale) * ze for w, ze in zip(pb.ew.tolist(), z))
    prob += obj
    if lower is not None and lower > 0:
        prob += obj >= lower / scale * (1 - 1e-7)
    return prob, x


def _extract(x: dict, pb: PlacementProblem) -> np.ndarray:
    a = np.full(pb.n, -1, dtype=np.int64)
    for (i, h), var in x.items():
        val = var.value()
        if val is not None and val > 0.5:
            a[i] = h
    return a


def _count_model(pb: PlacementProblem, rs: RingStructure, scale: float,
                 boundary_cuts: bool = True):
    prob = pulp.LpProblem("placement_count", pulp.LpMinimize)
    servers = list(pb.servers)
    nR = rs.n_ring
    groups = rs.groups()
    gi = {g: j for j, g in enumerate(groups)}
    y = {(j, h): _var(prob, f"y_{j}_{h}", 0, min(nR, pb.free[h]), "Integer")
         for j in range(len(groups)) for h in servers}
    terms = []
    for j in range(len(groups)):
        prob += pulp.lpSum(y[j, h] for h in servers) == nR
    for h in servers:
        prob += pulp.lpSum(y[j, h] for j in range(len(groups))) <= pb.free[h]
    per = rs.ring_per_edge
    fmax = max(pb.free[h] for h in servers)
    min_servers = -(-nR // fmax)
    u_by, w_by = {}, {}
    if nR >= 2:
        for j, (q, s) in enumerate(groups):
            if per[s] <= 0:
                continue
            us, ws = [], []
            for h in servers:
                # u: the ring has members on h (y <= min(n, f_h) u); w: the whole ring is on h
                u = _var(prob, f"u_{j}_{h}", 0, 1, "Binary")
                prob += min(nR, pb.free[h]) * u >= y[j, h]
                us.append(u)
                u_by[j, h] = u
                if pb.free[h] >= nR:
                    w = _var(prob, f"w_{j}_{h}", 0, 1, "Binary")
                    prob += nR * w <= y[j, h]
                    ws.append(w)
                    w_by[j, h] = w
            # a split ring (no w) uses at least max(2, ceil(n / f_max)) servers
            split = 1 - pulp.lpSum(ws)
            prob += pulp.lpSum(us) >= 1 + max(1, min_servers - 1) * split
            terms.append((per[s] / scale) * (pulp.lpSum(us) - pulp.lpSum(ws)))
    ms_by = {}
    for e, (g1, g2, wt) in enumerate(rs.pairs()):
        if wt <= 0:
            continue
        j1, j2 = gi[g1], gi[g2]
        ms = []
        for h in servers:
            m = _var(prob, f"m_{e}_{h}", 0, min(nR, pb.free[h]))
            prob += m <= y[j1, h]
            prob += m <= y[j2, h]
            ms.append(m)
            ms_by[e, h] = m
        terms.append((wt / scale) * (nR - pulp.lpSum(ms)))
    # a server holds at most floor(f_h / n) whole rings (a Chvatal-Gomory rounding of
    # n sum_g w <= f_h): with the split constraint above it prices the rings that must split
    for h in servers:
        ws_h = [w_by[j, h] for j in range(len(groups)) if (j, h) in w_by]
        if ws_h:
            prob += pulp.lpSum(ws_h) <= pb.free[h] // nR
    # per server: the count model's internal bytes are at most the densest f_h-worker set's
    # (a valid inequality; it removes the LP's "every ring spread evenly" solutions)
    for h in servers:
        cap = _max_internal(rs, min(pb.free[h], pb.n))
        inside = []
        for j, (q, s) in enumerate(groups):
            if nR >= 2 and per[s] > 0:
                u = u_by[j, h]
                w = w_by.get((j, h), 0)
                inside.append(per[s] * (y[j, h] - u + w))
        for e, (g1, g2, wt) in enumerate(rs.pairs()):
            if wt > 0:
                inside.append(wt * ms_by[e, h])
        if inside:
            prob += pulp.lpSum(inside) / scale <= cap / scale * (1 + 1e-9)
        if boundary_cuts and inside:
            _boundary_cut(prob, pb, rs, h, [y[j, h] for j in range(len(groups))], inside, scale)
    # interchangeable servers. Where whole rings fit, label the servers of a class in the
    # order of the first ring that is whole on them: ring j may be whole on the class's i-th
    # server only if an earlier ring is whole on its (i-1)-th. Otherwise: non-increasing loads.
    for cls in pb.server_classes:
        if w_by and all((j, h) in w_by for h in cls for j in range(len(groups))
                        if (j, h) in u_by):
            for i in range(1, len(cls)):
                for j in range(len(groups)):
                    if (j, cls[i]) not in w_by:
                        continue
                    earlier = [w_by[j2, cls[i - 1]] for j2 in range(j) if (j2, cls[i - 1]) in w_by]
                    prob += w_by[j, cls[i]] <= pulp.lpSum(earlier)
        elif u_by and all((j, h) in u_by for h in cls for j in range(len(groups))):
            # label by the first ring with members on them
            for i in range(1, len(cls)):
                for j in range(len(groups)):
                    prob += u_by[j, cls[i]] <= pulp.lpSum(u_by[j2, cls[i - 1]]
                                                          for j2 in range(j + 1))
        else:
            for h1, h2 in zip(cls, cls[1:]):
                prob += (pulp.lpSum(y[j, h1] for j in range(len(groups)))
                         >= pulp.lpSum(y[j, h2] for j in range(len(groups))))
    prob += pulp.lpSum(terms) if terms else pulp.LpAffineExpression()
    return prob, y, groups


def _degrees(rs: RingStructure) -> tuple:
    """Bytes at one worker of each group (``rs.groups()`` order) over the count model's
    priced edges: two ring arc boundaries and one aligned edge per adjacent group."""
    nR = rs.n_ring
    per = rs.ring_per_edge
    groups = rs.groups()
    deg = {g: (2 * per[g[1]] if nR >= 2 and per[g[1]] > 0 else 0.0) for g in groups}
    for g1, g2, wt in rs.pairs():
        if wt > 0:
            deg[g1] += wt
            deg[g2] += wt
    return tuple(deg[g] for g in groups)


def _lower_hull(points: list) -> list:
    """The lower convex hull of points (x, y) sorted by x (monotone chain)."""
    hull: list = []
    for pt in points:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (pt[1] - y1) - (y2 - y1) * (pt[0] - x1) <= 0:
                hull.pop()
            else:
                break
        hull.append(pt)
    return hull


def _boundary_cut(prob, pb, rs, h, ys, inside, scale) -> None:
    """Server h's boundary bytes in the count model, ``sum_g deg_g y[g,h] - 2 inside_h``, are at
    least the smallest boundary B(k) (:func:`_min_boundary`) of any one-server count point with
    ``k = s_h = sum_g y[g,h]`` workers. Every point of the count model satisfies this, so its
    optimum is unchanged. Added as one linear cut in s_h: the edge of the lower convex hull of
    k -> B(k), k = 0..min(f_h, n), that ends at the server's capacity (the loads are near their
    capacities when the free GPUs are scarce; the full hull made the benchmark cases slower)."""
    top = min(pb.free[h], pb.n)
    if top <= 0:
        return
    deg = _degrees(rs)
    values = [0.0] + [_min_boundary(rs, k) for k in range(1, top + 1)]
    hull = _lower_hull(list(enumerate(values)))
    (k1, b1), (k2, b2) = hull[-2], hull[-1]
    slope = (b2 - b1) / (k2 - k1)
    boundary = pulp.lpSum(d * yv for d, yv in zip(deg, ys)) - 2 * pulp.lpSum(inside)
    prob += boundary / scale >= (b2 - slope * k2) / scale + (slope / scale) * pulp.lpSum(ys)


def _internal_terms(prob, rs: RingStructure, y: list, *, whole_rings: bool) -> list:
    """The internal bytes of one server holding ``y[j]`` workers of each group, as linear terms
    over new variables of ``prob``: per split ring ``per (y - u + w)`` (``u`` = the ring is
    present, ``w`` = it is whole, only when a whole ring fits: ``whole_rings``) and per group
    pair ``wt m`` with ``m <= min(y, y')``. Shared by the one-server bounds below."""
    nR, per = rs.n_ring, rs.ring_per_edge
    gi = {g: j for j, g in enumerate(rs.groups())}
    terms = []
    if nR >= 2:
        for j, (q, s) in enumerate(rs.groups()):
            if per[s] <= 0:
                continue
            u = _var(prob, f"u_{j}", 0, 1, "Binary")
            prob += nR * u >= y[j]
            if whole_rings:
                w = _var(prob, f"w_{j}", 0, 1, "Binary")
                prob += nR * w <= y[j]
            else:
                w = 0
            terms.append(per[s] * (y[j] - u + w))
    for e, (g1, g2, wt) in enumerate(rs.pairs()):
        if wt <= 0:
            continue
        m = _var(prob, f"m_{e}", 0, nR)
        prob += m <= y[gi[g1]]
        prob += m <= y[gi[g2]]
        terms.append(wt * m)
    return terms


@lru_cache(maxsize=1024)
def _min_boundary(rs: RingStructure, k: int) -> float:
    """A lower bound on the boundary bytes, in the count model's terms, of one server holding
    ``k`` workers: ``sum_g deg_g y_g - 2 inside`` minimised over the counts of one server with
    ``sum_g y_g = k`` (a small MILP; its proven bound, scaled down by 1e-9, is used)."""
    nR = rs.n_ring
    groups = rs.groups()
    if k <= 0 or k >= nR * len(groups):
        return 0.0
    deg = _degrees(rs)
    top = max(deg + (1e-300,))
    prob = pulp.LpProblem("boundary", pulp.LpMinimize)
    y = [_var(prob, f"y_{j}", 0, min(nR, k), "Integer") for j in range(len(groups))]
    prob += pulp.lpSum(y) == k
    inside = _internal_terms(prob, rs, y, whole_rings=k >= nR)
    prob += (pulp.lpSum(d * yv for d, yv in zip(deg, y)) - 2 * pulp.lpSum(inside)) * (1.0 / top)
    res = solve(prob, time_limit=5.0)
    if res.bound is None:  # pragma: no cover - HiGHS always reports a bound
        return 0.0
    return max(0.0, res.bound * top * (1 - 1e-9) - 1e-9 * top)


@lru_cache(maxsize=1024)
def _max_internal(rs: RingStructure, cap: int) -> float:
    """An upper bound on the count model's internal bytes of one server holding ``cap``
    workers: the same expression maximised over the counts of one server (a small MILP; its
    proven bound is used, so a time-limited solve stays valid)."""
    nR = rs.n_ring
    groups = rs.groups()
    per = rs.ring_per_edge
    total = sum(per[s] * (nR if nR >= 3 else (2 if nR == 2 else 0)) for _, s in groups) + \
        sum(w * nR for _, _, w in rs.pairs())
    if cap >= nR * len(groups):
        return total
    prob = pulp.LpProblem("densest", pulp.LpMaximize)
    y = [_var(prob, f"y_{j}", 0, min(nR, cap), "Integer") for j in range(len(groups))]
    prob += pulp.lpSum(y) <= cap
    terms = _internal_terms(prob, rs, y, whole_rings=cap >= nR)
    if not terms:
        return 0.0
    top = max([abs(p) for p in per] + [w for _, _, w in rs.pairs()] + [1e-300])
    prob += pulp.lpSum(terms) * (1.0 / top)
    res = solve(prob, time_limit=5.0)
    if res.bound is None:  # pragma: no cover - HiGHS always reports a bound
        return total
    return min(total, res.bound * top * (1 + 1e-9) + 1e-9 * top)


def _count_cost(rs: RingStructure, counts: dict) -> float:
    """The count objective of integer counts {group: {server: members}} (exact, in Python)."""
    per = rs.ring_per_edge
    nR = rs.n_ring
    total = 0.0
    for (q, s), c in counts.items():
        used = sum(1 for v in c.values() if v > 0)
        if used >= 2:
            total += per[s] * used
    for g1, g2, w in rs.pairs():
        c1, c2 = counts[g1], counts[g2]
        matched = sum(min(c1.get(h, 0), c2.get(h, 0)) for h in set(c1) | set(c2))
        total += w * (nR - matched)
    return total


def _layouts(counts: dict, nR: int, arcs: bool, rotations: bool = True,
             alone: bool = False) -> np.ndarray:
    """Candidate layouts of one ring with the given counts: one arc per server (orders of the
    arcs times rotations) when ``arcs``, else every arrangement (capped). With up to 5 servers
    every order of the arcs is tried; with more, the orders by server index (both ways), by
    count (both ways) and the first 100 others. ``alone`` (no neighbours): one layout."""
    used = sorted((h, c) for h, c in counts.items() if c > 0)
    if len(used) == 1 or alone:
        return np.concatenate([np.full(c, h, dtype=np.int64) for h, c in used])[None, :]
    if arcs or nR > 8:
        if len(used) <= 5:
            perms = list(itertools.permutations(used))
        else:
            perms = [tuple(used), tuple(reversed(used)),
                     tuple(sorted(used, key=lambda hc: (-hc[1], hc[0]))),
                     tuple(sorted(used, key=lambda hc: (hc[1], hc[0])))]
            perms += list(itertools.islice(itertools.permutations(used), 100))
        base = np.array([np.concatenate([np.full(c, h, dtype=np.int64) for h, c in perm])
                         for perm in perms])
        if rotations:
            shift = (np.arange(nR)[None, :] - np.arange(nR)[:, None]) % nR   # (rot, pos)
            base = base[:, shift].reshape(-1, nR)
        return np.unique(base, axis=0)
    values = np.concatenate([np.full(c, h, dtype=np.int64) for h, c in used]).tolist()
    rows = list(dict.fromkeys(itertools.islice(itertools.permutations(values), 40320)))
    return np.array(rows, dtype=np.int64)


def _realize(rs: RingStructure, counts: dict, budget: int = 20000) -> dict:
    """Lay every ring out so that the count objective is attained, if possible.

    The count objective is attained exactly when every ring with cut cost is laid out as one
    arc per server and every adjacent pair of rings is lined up with
    ``sum_h min(c_g[h], c_g'[h])`` positions on the same server. That is a constraint
    satisfaction problem over the rings' layouts (arc orders and rotations), solved here by
    backtracking with forward checking (rotating every ring together changes nothing, so the
    first ring's rotation is fixed), within ``budget`` expansions. On failure the best layout
    of a greedy pass is returned (the caller sees that it is not tight).
    Returns {group: array of servers by position}.
    """
    nR = rs.n_ring
    groups = rs.groups()
    per = rs.ring_per_edge
    pairs = [(g1, g2, w) for g1, g2, w in rs.pairs() if w > 0]
    nbrs: dict = {g: [] for g in groups}
    for g1, g2, w in pairs:
        target = sum(min(counts[g1].get(h, 0), counts[g2].get(h, 0))
                     for h in set(counts[g1]) | set(counts[g2]))
        nbrs[g1].append((g2, w, target))
        nbrs[g2].append((g1, w, target))
    doms = {g: _layouts(counts[g], nR, arcs=per[g[1]] > 0, alone=not nbrs[g]) for g in groups}
    first = max(groups, key=lambda g: (len(nbrs[g]), -len(doms[g])))
    if per[first[1]] > 0 and nbrs[first]:
        doms[first] = _layouts(counts[first], nR, arcs=True, rotations=False)
    found = _backtrack(groups, doms, nbrs, first, budget)
    if found is not None:
        return found
    # greedy fallback: best match against placed neighbours, then a few improving sweeps
    seq: dict = {}

    def pick(g):
        C = doms[g]
        score = np.zeros(len(C))
        for g2, w, _ in nbrs[g]:
            if g2 in seq:
                score += w * (C == seq[g2]).sum(axis=1)
        k = int(np.argmax(score))
        return C[k], float(score[k])

    for g in groups:
        seq[g] = pick(g)[0]
    for _ in range(4):
        changed = False
        for g in groups:
            new, new_score = pick(g)
            old = sum(w * float((seq[g] == seq[g2]).sum()) for g2, w, _ in nbrs[g])
            if new_score > old + 1e-12:
                seq[g] = new
                changed = True
        if not changed:
            break
    return seq


def _backtrack(groups, doms, nbrs, first, budget):
    assigned: dict = {}
    steps = [0]

    def choose(domains):
        # the unassigned ring with the most assigned neighbours, then the smallest domain
        best, key = None, None
        for g in groups:
            if g in assigned:
                continue
            k = (-sum(1 for g2, _, _ in nbrs[g] if g2 in assigned), len(domains[g]))
            if key is None or k < key:
                best, key = g, k
        return best

    def rec(domains, g):
        for row in domains[g]:
            steps[0] += 1
            if steps[0] > budget:
                return False
            new = dict(domains)
            ok = True
            for g2, _, target in nbrs[g]:
                if g2 in assigned or g2 == g:
                    continue
                D = new[g2]
                D = D[(D == row).sum(axis=1) == target]
                if not len(D):
                    ok = False
                    break
                new[g2] = D
            if not ok:
                continue
            assigned[g] = row
            nxt = choose(new)
            if nxt is None or rec(new, nxt):
                return True
            del assigned[g]
            if steps[0] > budget:
                return False
        return False

    if rec(dict(doms), first):
        return dict(assigned)
    return None


# -- the tau model -------------------------------------------------------------------------------


def _tau_model(pb: PlacementProblem):
    """Plain variables plus the performance model as a MILP; the objective is the model time."""
    from ..dnn.calibration import perf_params
    from ..dnn.hardware import gpu_spec, precision_info
    from ..dnn.perf import _cluster_info, _plan_on, _tau_star as perf_tau_star

    params = perf_params()
    job, cluster = pb.job, pb.cluster
    tau_star, gt, _ = perf_tau_star(job, cluster, params)
    plan = _plan_on(job, gt, params)
    info = _cluster_info(cluster)
    c = plan.config
    d, p, t, mb = c.dp, c.pp, c.tp, c.micro_batches
    net = params.network_for(gpu_spec(plan.gpu_type).family)
    a_in, a_out = net.alpha_intra, net.alpha_inter
    conc = min(t, info.max_server_gpus)
    servers = list(pb.servers)
    types = sorted({info.server_types[h] for h in servers})
    intra = {ty: info.intra[ty] * net.intra_efficiency for ty in types}
    inter = {ty: info.inter[ty] * net.inter_efficiency for ty in types}
    compute = {ty: plan.compute_on(ty) for ty in types}
    prec = precision_info(plan.precision)
    opt_t = {}
    for ty in types:
        spec = gpu_spec(ty)
        hbm = spec.memory_bandwidth * params.factor(spec.family, prec.compute)
        opt_t[ty] = 2.0 * max(plan.stage_params) * prec.state_bytes_per_param / (
            hbm * params.memory_efficiency)

    prob = pulp.LpProblem("placement_tau", pulp.LpMinimize)
    idx = pb.index
    n = pb.n
    x = {(i, h): _var(prob, f"x_{i}_{h}", 0, 1, "Binary") for i in range(n) for h in servers}
    for i in range(n):
        prob += pulp.lpSum(x[i, h] for h in servers) == 1
    for h in servers:
        prob += pulp.lpSum(x[i, h] for i in range(n)) <= pb.free[h]
    _symmetry_first_occurrence(prob, x, pb, servers)
    zc: dict = {}

    def z(u, v):
        key = (min(u, v), max(u, v))
        if key not in zc:
            ze = _var(prob, f"z_{key[0]}_{key[1]}", 0, 1)
            for h in servers:
                prob.addConstraint(ze >= x[u, h] - x[v, h])
                prob.addConstraint(ze >= x[v, h] - x[u, h])
            zc[key] = ze
        return zc[key]

    def ring_cuts(members):
        """Cut ring edges (as _segments counts them: a split two-member ring counts 2)."""
        m = len(members)
        if m == 2:
            return 2 * z(members[0], members[1]), [z(members[0], members[1])]
        zs = [z(members[i], members[(i + 1) % m]) for i in range(m)]
        return pulp.lpSum(zs), zs

    multi = len(types) > 1
    if multi:
        used = {ty: _var(prob, f"U_{ty}", 0, 1, "Binary") for ty in types}
        for ty in types:
            for h in servers:
                if info.server_types[h] == ty:
                    for i in range(n):
                        prob += used[ty] >= x[i, h]
    else:
        used = {types[0]: 1}

    def transfer(vol: float, cross, crossing_bw: dict, name: str):
        """Seconds to move ``vol`` bytes at the slowest used type's intra-server bandwidth, or
        at its crossing bandwidth when ``cross`` (an indicator) is 1. Modelled in seconds, not
        in inverse bandwidth, so the coefficients stay well above the solver's tolerances."""
        if not multi:
            ty = types[0]
            base = vol / intra[ty]
            return base + (vol / crossing_bw[ty] - base) * cross
        v = _var(prob, name)
        for ty in types:
            prob.addConstraint(v >= (vol / intra[ty]) * used[ty])
            prob.addConstraint(v >= (vol / crossing_bw[ty]) * (used[ty] + cross - 1))
        return v

    F, B = [], []
    for s in range(p):
        if not multi:
            f, b = compute[types[0]]
            F.append(f[s])
            B.append(b[s])
            continue
        fs, bs = _var(prob, f"F_{s}"), _var(prob, f"B_{s}")
        for ty in types:
            ys = _var(prob, f"Y_{s}_{ty}", 0, 1, "Binary")
            for h in servers:
                if info.server_types[h] == ty:
                    for r in range(d):
                        for k in range(t):
                            prob += ys >= x[idx[(r, s, k)], h]
            prob += fs >= compute[ty][0][s] * ys
            prob += bs >= compute[ty][1][s] * ys
        F.append(fs)
        B.append(bs)

    tp_time, pp_time, dp_time = [], [], []
    for s in range(p):
        if t > 1 and plan.tp_allreduces[s] != 0:
            cross = _var(prob, f"Ctp_{s}", 0, 1)
            arcs = _var(prob, f"Ltp_{s}", 0)
            for r in range(d):
                cuts, zs = ring_cuts([idx[(r, s, k)] for k in range(t)])
                for ze in zs:
                    prob += cross >= ze
                prob += arcs >= cuts - 1
            cnt = plan.tp_allreduces[s]
            vol = 2 * (t - 1) / t * plan.tp_bytes[s]
            move = transfer(vol, cross, {ty: min(intra[ty], inter[ty]) for ty in types}, f"Ttp_{s}")
            tp_time.append(2.0 * (cnt * (2 * (t - 1) * a_in + 2 * a_out * arcs) + move))
        else:
            tp_time.append(0.0)
        if s < p - 1:
            cross = _var(prob, f"Cpp_{s}", 0, 1)
            for r in range(d):
                for k in range(t):
                    prob += cross >= z(idx[(r, s, k)], idx[(r, s + 1, k)])
            move = transfer(plan.boundary_bytes[s], cross,
                            {ty: min(intra[ty], inter[ty] / conc) for ty in types}, f"Tpp_{s}")
            pp_time.append(2.0 * (a_in + (a_out - a_in) * cross + move))
        else:
            pp_time.append(0.0)
        if d > 1:
            cross = _var(prob, f"Cdp_{s}", 0, 1)
            arcs = _var(prob, f"Ldp_{s}", 0)
            for k in range(t):
                cuts, zs = ring_cuts([idx[(r, s, k)] for r in range(d)])
                for ze in zs:
                    prob += cross >= ze
                prob += arcs >= cuts - 1
            vol = 2 * (d - 1) / d * plan.grad_bytes[s]
            move = transfer(vol, cross, {ty: min(intra[ty], inter[ty] / conc) for ty in types},
                            f"Tdp_{s}")
            dp_time.append(2 * (d - 1) * a_in + 2 * a_out * arcs + move)
        else:
            dp_time.append(0.0)
    cycle = [F[s] + B[s] + tp_time[s] + pp_time[s] for s in range(p)]
    umax = _var(prob, "Umax")
    for s in range(p):
        prob += umax >= cycle[s]
    pipeline = (mb - 1) * umax + pulp.lpSum(cycle)
    exposed = _var(prob, "E")
    drain = 0.0
    for s in range(p):
        prob += exposed >= dp_time[s] - params.overlap * B[s] - drain
        drain = drain + B[s] + 0.5 * (tp_time[s] + pp_time[s])
    if multi:
        optimizer = _var(prob, "OPT")
        for ty in types:
            prob += optimizer >= opt_t[ty] * used[ty]
    else:
        optimizer = opt_t[types[0]]
    prob += pipeline + exposed + optimizer + params.iteration_overhead
    return prob, x, tau_star


# ---------------------------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------------------------


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    return max(0.05, deadline - time.perf_counter())


@register("ilp")
class ILPPlacement(PlacementMethod):
    """The exact placement: shortcuts, then the count or plain ILP (see the module docstring).

    Parameters
    ----------
    formulation : {"auto", "count", "plain"}
        "auto": the count formulation for worker graphs with the cut objective, else plain.
        "count" on a graph without ring structure, or with ``objective="tau"``, uses plain.
    shortcuts : bool
        Take the certified shortcuts before calling a solver.
    boundary_cuts : bool
        Add to the count model, per server, the cut "boundary bytes >= the smallest boundary of
        any set of that many workers" (valid for every count point: the optimum is the same
        with and without; ``False`` gives the model of before, for comparisons).

    Examples
    --------
    >>> G = nx.cycle_graph(6); nx.set_edge_attributes(G, 1.0, "bytes")
    >>> from asrpt.placement import place
    >>> p = place(G, [3, 3], method=ILPPlacement(shortcuts=False))
    >>> p.cut_bytes, p.status, p.bound
    (2.0, 'optimal', 2.0)
    """

    exact = True
    parameter_constraints = {"formulation": [Options(str, FORMULATIONS)],
                             "shortcuts": ["boolean"], "boundary_cuts": ["boolean"]}

    def __init__(self, *, formulation: str = "auto", shortcuts: bool = True,
                 boundary_cuts: bool = True):
        self.formulation = formulation
        self.shortcuts = shortcuts
        self.boundary_cuts = boundary_cuts

    def run(self, problem: PlacementProblem) -> MethodResult:
        pb = problem
        start = time.perf_counter()
        deadline = None if pb.time_limit is None else start + pb.time_limit
        if self.shortcuts:
            res = _shortcut(pb)
            if res is not None:
                return res
        if pb.objective == "tau":
            return self._tau(pb, deadline)
        rs = _ring_structure(pb.graph) if pb.is_worker_graph else None
        if self.formulation != "plain" and rs is not None:
            return self._count(pb, rs, deadline)
        return self._plain(pb, deadline, None, {"formulation": "plain"})

    # -- cut -------------------------------------------------------------------------------------
    def _scale(self, pb: PlacementProblem) -> float:
        top = float(pb.ew.max()) if len(pb.ew) else 1.0
        return top if top > 0 else 1.0

    def _fallback(self, pb: PlacementProblem, incumbent: np.ndarray | None = None) -> np.ndarray:
        """The best of the solver's incumbent and the heuristics (after a time limit)."""
        from .heuristics import KernighanLin

        cands = [] if incumbent is None else [incumbent]
        cands += [BestFit().run(pb).assignment, Greedy().run(pb).assignment,
                  KernighanLin().run(pb).assignment]
        return pb.best(cands)

    def _plain(self, pb, deadline, lower, detail) -> MethodResult:
        scale = self._scale(pb)
        prob, x = _plain_model(pb, scale, lower)
        res = solve(prob, solver=pb.solver, time_limit=_remaining(deadline), gap=pb.gap)
        detail = dict(detail, solver=res.solver, solver_time=res.wall_time,
                      variables=len(prob.variables()), constraints=len(prob.constraints))
        return self._package(pb, res, _extract(x, pb) if res.has_solution else None, scale,
                             lower, detail)

    def _package(self, pb, res, a, scale, lower, detail) -> MethodResult:
        if res.status in ("infeasible", "unbounded"):
            raise SolverError(f"the placement ILP is {res.status} although enough GPUs are free")
        bound = None if res.bound is None else res.bound * scale
        if lower is not None:
            bound = lower if bound is None else max(bound, lower)
        if a is None or not pb.feasible(a):
            a = self._fallback(pb)
            detail = dict(detail, incumbent="heuristic")
        elif res.status != "optimal":
            better = self._fallback(pb, a)
            if better is not a:
                a = better
                detail = dict(detail, incumbent="heuristic")
        status = res.status
        if status == "optimal" and pb.gap > 0:
            detail = dict(detail, gap=pb.gap)
        return MethodResult(a, status, bound, detail)

    def _count(self, pb, rs: RingStructure, deadline) -> MethodResult:
        scale = self._scale(pb)
        prob, y, groups = _count_model(pb, rs, scale, self.boundary_cuts)
        res = solve(prob, solver=pb.solver, time_limit=_remaining(deadline), gap=pb.gap)
        detail = {"formulation": "count", "solver": res.solver, "solver_time": res.wall_time,
                  "variables": len(prob.variables()), "constraints": len(prob.constraints)}
        if res.status in ("infeasible", "unbounded"):
            raise SolverError(f"the count placement ILP is {res.status} although enough GPUs "
                              "are free")
        if not res.has_solution:
            a = self._fallback(pb)
            bound = None if res.bound is None else res.bound * scale
            return MethodResult(a, res.status, bound, dict(detail, incumbent="heuristic"))
        counts = {g: {h: int(round(y[j, h].value() or 0)) for h in pb.servers}
                  for j, g in enumerate(groups)}
        seq = _realize(rs, counts)
        a = np.full(pb.n, -1, dtype=np.int64)
        for (q, s), row in seq.items():
            for i, h in enumerate(row.tolist()):
                a[pb.index[rs.worker(q, s, i)]] = h
        cost = _count_cost(rs, counts)
        cut = pb.cut(a)
        count_bound = None if res.bound is None else res.bound * scale
        tight = cut <= cost * (1 + _REL) + 1e-12
        if res.status == "optimal" and tight:
            return MethodResult(a, "optimal", cost if pb.gap == 0 else count_bound,
                                dict(detail, realized="tight"))
        if res.status != "optimal":
            # out of time: the better of the realised count incumbent and the heuristics
            best = self._fallback(pb, a)
            if best is not a:
                detail = dict(detail, incumbent="heuristic")
            return MethodResult(best, "time_limit", count_bound, dict(detail, realized=(
                "tight" if tight else "loose")))
        # the layout cannot reach the count optimum: the count optimum is a lower bound,
        # solve the plain model with it as a cut
        lower = cost if pb.gap == 0 else count_bound
        out = self._plain(pb, deadline, lower, {"formulation": "count+plain",
                                                "count_solver_time": res.wall_time,
                                                "count_bound": lower})
        if pb.cut(out.assignment) > cut:
            out = MethodResult(a, out.status, out.bound, out.detail)
        return out

    # -- tau -------------------------------------------------------------------------------------
    def _tau(self, pb, deadline) -> MethodResult:
        prob, x, star = _tau_model(pb)
        res = solve(prob, solver=pb.solver, time_limit=_remaining(deadline), gap=pb.gap)
        detail = {"formulation": "tau", "solver": res.solver, "solver_time": res.wall_time,
                  "variables": len(prob.variables()), "constraints": len(prob.constraints)}
        if res.status in ("infeasible", "unbounded"):
            raise SolverError(f"the tau placement ILP is {res.status} although enough GPUs "
                              "are free")
        a = _extract(x, pb) if res.has_solution else None
        if a is None or not pb.feasible(a):
            a = pb.best([BestFit().run(pb).assignment, Greedy().run(pb).assignment])
            detail["incumbent"] = "heuristic"
        bound = star if res.bound is None else max(star, res.bound)
        return MethodResult(a, "optimal" if res.status == "optimal" else res.status, bound,
                            detail)


@register("brute_force")
class BruteForce(PlacementMethod):
    """Exact by enumeration of every capacity-feasible assignment (tiny graphs only).

    Parameters
    ----------
    max_assignments : int
        Refuse (InvalidParameterError) when ``servers ** workers`` exceeds this.

    Examples
    --------
    >>> G = nx.cycle_graph(5); nx.set_edge_attributes(G, 1.0, "bytes")
    >>> from asrpt.placement import place
    >>> place(G, [3, 3], method="brute_force").cut_bytes
    2.0
    """

    exact = True
    parameter_constraints = {"max_assignments": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, *, max_assignments: int = 2_000_000):
        self.max_assignments = max_assignments

    def run(self, problem: PlacementProblem) -> MethodResult:
        from ..errors import InvalidParameterError

        pb = problem
        servers = np.array(pb.servers, dtype=np.int64)
        H, n = len(servers), pb.n
        total = H ** n
        if total > self.max_assignments:
            raise InvalidParameterError(
                f"brute force would enumerate {H}^{n} = {total} assignments "
                f"(max_assignments={self.max_assignments})")
        caps = np.array([pb.free[h] for h in servers])
        best_a, best_v = None, math.inf
        chunk = 200_000
        powers = H ** np.arange(n - 1, -1, -1, dtype=np.int64)
        for lo in range(0, total, chunk):
            codes = np.arange(lo, min(total, lo + chunk), dtype=np.int64)
            digits = (codes[:, None] // powers[None, :]) % H
            counts = np.stack([(digits == j).sum(axis=1) for j in range(H)], axis=1)
            ok = (counts <= caps).all(axis=1)
            digits = digits[ok]
            if not len(digits):
                continue
            if pb.objective == "cut":
                vals = ((digits[:, pb.eu] != digits[:, pb.ev]) * pb.ew).sum(axis=1) \
                    if len(pb.ew) else np.zeros(len(digits))
                j = int(np.argmin(vals))
                if vals[j] < best_v:
                    best_v, best_a = float(vals[j]), servers[digits[j]]
            else:
                for row in digits:
                    a = servers[row]
                    v = pb.value(a)
                    if v < best_v:
                        best_v, best_a = v, a
        return MethodResult(best_a, "optimal", best_v, {"formulation": "enumeration",
                                                        "assignments": total})
