"""Placement heuristics, each measured against the ILP (``benchmarks/bench_placement.py``).

This module owns the non-exact methods of :func:`asrpt.placement.place` and the helpers they
share (which servers to consolidate on, canonical packings):

- ``consolidate`` (:class:`BestFit`; old name ``best_fit``): consolidation. The fewest servers that hold the job, then the
  smallest leftover (a DP over the distinct free counts); the workers are packed onto them
  largest server first in canonical orders (replica-, stage- or rank-major, whole tensor groups,
  replicas, stages or data-parallel rings where they fit; stage order reversed too), keeping the
  candidate with the best objective. When one server holds the job the cut is 0.
- ``greedy`` (:class:`Greedy`): greedy by edge weight. On the consolidation servers, largest
  first, grow each server's set from the unplaced worker most connected to those already
  placed, always adding the unplaced worker with the heaviest bytes to the current set.
- ``metis`` (:class:`Metis`): METIS k-way partition (pymetis, the optional ``metis`` extra) into
  the consolidation servers with target weights proportional to their free GPUs, then a repair
  that moves the cheapest workers out of over-full parts. Raises SolverError without pymetis.
- ``kl`` (:class:`KernighanLin`): ``consolidate``, then Kernighan-Lin refinement
  (:func:`networkx.algorithms.community.kernighan_lin_bisection`) on every pair of
  consolidation servers; free slots are padded with isolated dummy workers, so a swap with a
  dummy is a move. Sizes never exceed the free GPUs; a pass is kept only if it lowers the cut.
- ``random`` (:class:`RandomPlacement`) and ``spread_workers`` (:class:`Spread`; old name
  ``spread``): controls, a uniformly
  random feasible assignment over all free slots, and round-robin over servers (most free first).

All heuristics minimise the cut; with ``objective="tau"`` only ``consolidate`` chooses among its
candidates by tau. Every result has status "heuristic" and no bound.

Examples
--------
>>> from asrpt.placement import place
>>> from asrpt.instance import Job, Parallelism
>>> from asrpt.dnn.parallel import worker_graph
>>> W = worker_graph(Job("j", 0, 16, model="gpt2", parallelism=Parallelism(2, 2, 4),
...                      iterations=1), "A100")
>>> cuts = {m: place(W, [8, 8, 4], method=m).cut_bytes for m in ("consolidate", "greedy", "kl")}
>>> cuts["consolidate"] >= cuts["kl"] >= place(W, [8, 8, 4], method="ilp").cut_bytes
True
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Sequence

import networkx as nx
import numpy as np

from .._validation import Interval, Integral, validate_params
from ..errors import SolverError
from ..random import as_generator
from .base import METHODS, MethodResult, PlacementMethod, PlacementProblem, register

__all__ = [
    "BestFit",
    "Greedy",
    "Metis",
    "KernighanLin",
    "RandomPlacement",
    "Spread",
    "consolidation_servers",
    "packings",
    "has_pymetis",
]


# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------


def _consolidation(free: tuple, n: int) -> tuple:
    """Servers (indices) holding n workers: one server if possible (the smallest that fits),
    else the fewest servers and among those the smallest total free GPUs; lowest indices on
    ties. Empty when the job does not fit."""
    servers = [h for h, f in enumerate(free) if f > 0]
    if sum(free[h] for h in servers) < n or n == 0:
        return ()
    fits = [h for h in servers if free[h] >= n]
    if fits:
        return (min(fits, key=lambda h: (free[h], h)),)
    desc = sorted(servers, key=lambda h: (-free[h], h))
    q, acc = 0, 0
    while acc < n:
        acc += free[desc[q]]
        q += 1
    # choose c_v servers of each distinct free value v: sum c_v = q, sum c_v v >= n, min sum
    values = sorted({free[h] for h in servers}, reverse=True)
    avail = {v: [h for h in servers if free[h] == v] for v in values}
    cap = n + max(values)
    # best[c][s]: reachable with c servers and total s (capped at cap); store choice vectors
    best: dict = {(0, 0): ()}
    for v in values:
        nxt = dict(best)
        for (c, s), choice in best.items():
            for k in range(1, min(len(avail[v]), q - c) + 1):
                key = (c + k, min(cap, s + k * v))
                if key not in nxt:
                    nxt[key] = choice + ((v, k),)
        best = nxt
    totals = [s for (c, s) in best if c == q and s >= n]
    choice = best[(q, min(totals))]
    chosen = []
    for v, k in choice:
        chosen += avail[v][:k]
    return tuple(sorted(chosen, key=lambda h: (-free[h], h)))


@validate_params({"free_gpus": "no_validation", "n": [Interval(Integral, 0, None, closed="left")]})
def consolidation_servers(free_gpus: Sequence[int], n: int) -> tuple:
    """The servers best-fit consolidation uses for ``n`` workers.

    One server if one holds them all (the one with the fewest free GPUs that does); otherwise
    the fewest servers, and among those the smallest total of free GPUs (smallest leftover);
    ties go to lower indices. Returned largest first.

    Parameters
    ----------
    free_gpus : sequence of int
    n : int

    Returns
    -------
    tuple of int
        Server indices; empty when the servers hold fewer than ``n`` GPUs.

    Raises
    ------
    InvalidParameterError
        For a negative ``n``.

    Examples
    --------
    >>> consolidation_servers([8, 4, 6], 5), consolidation_servers([8, 4, 6, 3], 10)
    ((2,), (2, 1))
    >>> consolidation_servers([2, 2], 5)
    ()
    """
    return _consolidation(tuple(int(f) for f in free_gpus), n)


def _orders(pb: PlacementProblem) -> list:
    """(worker order as index array, unit sizes) candidates."""
    n = pb.n
    if pb.is_worker_graph:
        d, p, t = pb.graph.graph["parallelism"]
        idx = np.arange(n).reshape(d, p, t)  # nodes are sorted (r, s, k)
        out = []
        for rev in ((False, True) if p > 1 else (False,)):
            base = idx[:, ::-1, :] if rev else idx
            out.append((base.ravel(), (1, t, t * p)))                     # replica-major
            out.append((base.transpose(1, 0, 2).ravel(), (1, t, t * d)))  # stage-major
            out.append((base.transpose(1, 2, 0).ravel(), (1, d, d * t)))  # stage, rank, replica
        return out
    order = np.arange(n)
    return [(order, (1,)), (_bfs_order(pb), (1,))]


def _bfs_order(pb: PlacementProblem) -> np.ndarray:
    """Workers in a heaviest-edge-first traversal (each component from its heaviest vertex)."""
    adj = pb.adjacency
    deg = np.zeros(pb.n)
    for u in range(pb.n):
        deg[u] = sum(w for _, w in adj[u])
    seen = np.zeros(pb.n, dtype=bool)
    order = []
    import heapq

    for start in sorted(range(pb.n), key=lambda u: (-deg[u], u)):
        if seen[start]:
            continue
        heap = [(0.0, start)]
        while heap:
            _, u = heapq.heappop(heap)
            if seen[u]:
                continue
            seen[u] = True
            order.append(u)
            for v, w in adj[u]:
                if not seen[v]:
                    heapq.heappush(heap, (-w, v))
    return np.array(order, dtype=np.int64)


def _pack(order: np.ndarray, unit: int, servers: Sequence[int], caps: Sequence[int],
          n: int) -> np.ndarray | None:
    """Workers in ``order``, in groups of ``unit``: each group whole on the first server with
    room, then the groups that fit nowhere split over the remaining slots in server order."""
    if sum(caps) < n:
        return None
    a = np.full(n, -1, dtype=np.int64)
    left = list(caps)
    pending = []
    for start in range(0, n, unit):
        block = order[start:start + unit]
        for i, room in enumerate(left):
            if room >= len(block):
                a[block] = servers[i]
                left[i] -= len(block)
                break
        else:
            pending.append(block)
    if pending:
        rest = np.concatenate(pending)
        pos = 0
        for i, room in enumerate(left):
            take = min(room, len(rest) - pos)
            if take > 0:
                a[rest[pos:pos + take]] = servers[i]
                left[i] -= take
                pos += take
    return a


def _packings(pb: PlacementProblem, servers: Sequence[int] | None = None) -> list:
    if servers is None:
        servers = _consolidation(pb.free, pb.n)
    if not servers:
        return []
    servers = sorted(servers, key=lambda h: (-pb.free[h], h))
    caps = [pb.free[h] for h in servers]
    out, seen = [], set()
    for order, units in _orders(pb):
        for unit in dict.fromkeys(u for u in units if u >= 1):
            a = _pack(order, unit, servers, caps, pb.n)
            if a is not None and a.tobytes() not in seen:
                seen.add(a.tobytes())
                out.append(a)
    return out


@validate_params({"problem": [PlacementProblem], "servers": "no_validation"})
def packings(problem: PlacementProblem, servers=None) -> list:
    """The canonical packings best-fit consolidation chooses from.

    Parameters
    ----------
    problem : PlacementProblem
    servers : sequence of int or None
        Servers to pack onto (default: :func:`consolidation_servers`).

    Returns
    -------
    list of numpy.ndarray
        Distinct assignments (server index per worker, in ``problem.nodes`` order).

    Raises
    ------
    InvalidParameterError
        For a problem of the wrong type.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.cycle_graph(4); nx.set_edge_attributes(G, 1.0, "bytes")
    >>> [a.tolist() for a in packings(PlacementProblem.build(G, [3, 2]))]
    [[0, 0, 0, 1]]
    """
    return _packings(problem, servers)


@lru_cache(maxsize=1)
def has_pymetis() -> bool:
    """True when the optional pymetis package is importable.

    Examples
    --------
    >>> isinstance(has_pymetis(), bool)
    True
    """
    try:
        import pymetis  # noqa: F401
    except ImportError:
        return False
    return True


def _seed_int(seed) -> int:
    if seed is None:
        return 0
    return int(as_generator(seed).integers(0, 2**31 - 1))


# ---------------------------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------------------------


@register("consolidate")
class BestFit(PlacementMethod):
    """Best-fit consolidation: fewest servers, smallest leftover, canonical packing.

    See the module docstring. With ``objective="tau"`` the packing with the lowest tau wins.

    Examples
    --------
    >>> import networkx as nx
    >>> from asrpt.placement import place
    >>> G = nx.complete_graph(4); nx.set_edge_attributes(G, 1.0, "bytes")
    >>> place(G, [8, 4, 2], method=BestFit()).server_gpus
    ((1, 4),)
    """

    def run(self, problem: PlacementProblem) -> MethodResult:
        a = problem.best(_packings(problem))
        return MethodResult(a, "heuristic", None, {"servers": len(set(a.tolist()))})


@register("greedy")
class Greedy(PlacementMethod):
    """Greedy by edge weight on the consolidation servers (see the module docstring).

    Examples
    --------
    >>> import networkx as nx
    >>> from asrpt.placement import place
    >>> G = nx.Graph()
    >>> G.add_edge(0, 1, bytes=9.0); G.add_edge(1, 2, bytes=1.0); G.add_edge(2, 3, bytes=9.0)
    >>> place(G, [2, 2], method=Greedy()).cut_bytes
    1.0
    """

    def run(self, problem: PlacementProblem) -> MethodResult:
        pb = problem
        n = pb.n
        servers = _consolidation(pb.free, n)
        adj = pb.adjacency
        deg = np.array([sum(w for _, w in adj[u]) for u in range(n)])
        a = np.full(n, -1, dtype=np.int64)
        to_placed = np.zeros(n)     # bytes to workers already placed (any server)
        for h in servers:
            cap = pb.free[h]
            to_set = np.zeros(n)    # bytes to workers on h
            for _ in range(cap):
                free_idx = np.flatnonzero(a < 0)
                if not len(free_idx):
                    break
                if (a == h).any():
                    key = to_set[free_idx]
                else:
                    key = to_placed[free_idx]
                # heaviest connection, then heaviest vertex, then lowest index
                order = np.lexsort((free_idx, -deg[free_idx], -key))
                u = int(free_idx[order[0]])
                a[u] = h
                for v, w in adj[u]:
                    to_set[v] += w
                    to_placed[v] += w
        return MethodResult(a, "heuristic", None, {"servers": len(servers)})


@register("metis")
class Metis(PlacementMethod):
    """METIS k-way partition through pymetis (optional), then a capacity repair.

    Parameters
    ----------
    ufactor : int
        METIS imbalance tolerance in 1/1000 (1 = 0.1%).

    Raises
    ------
    SolverError
        When pymetis is not installed (``pip install asrpt[metis]``).

    Examples
    --------
    >>> import networkx as nx
    >>> from asrpt.placement import place
    >>> G = nx.barbell_graph(4, 0); nx.set_edge_attributes(G, 1.0, "bytes")
    >>> place(G, [4, 4], method="metis").cut_bytes if has_pymetis() else 1.0
    1.0
    """

    parameter_constraints = {"ufactor": [Interval(Integral, 1, 1000, closed="both")]}

    def __init__(self, *, ufactor: int = 1):
        self.ufactor = ufactor

    def run(self, problem: PlacementProblem) -> MethodResult:
        if not has_pymetis():
            raise SolverError("placement method 'metis' needs the pymetis package: "
                              "pip install 'asrpt[metis]'")
        import pymetis

        pb = problem
        n = pb.n
        servers = list(_consolidation(pb.free, n))
        if len(servers) == 1 or n <= 1:
            return MethodResult(np.full(n, servers[0]), "heuristic", None, {"parts": 1})
        caps = [pb.free[h] for h in servers]
        adj = pb.adjacency
        top = max((w for u in range(n) for _, w in adj[u]), default=1.0) or 1.0
        starts, adjacent, weights = [0], [], []
        for u in range(n):
            for v, w in adj[u]:
                adjacent.append(v)
                weights.append(max(1, int(round(w / top * 1_000_000))))
            starts.append(len(adjacent))
        total = sum(caps)
        tpwgts = [c / total for c in caps]
        if not adjacent:
            parts = np.zeros(n, dtype=np.int64)
        else:
            res = pymetis.part_graph(
                len(servers), pymetis.CSRAdjacency(starts, adjacent), eweights=weights,
                tpwgts=tpwgts,
                options=pymetis.Options(seed=_seed_int(pb.seed), ufactor=self.ufactor))
            parts = np.asarray(res.vertex_part, dtype=np.int64)
        parts = _repair(parts, caps, adj)
        a = np.array([servers[j] for j in parts.tolist()], dtype=np.int64)
        return MethodResult(a, "heuristic", None, {"parts": len(servers)})


def _repair(parts: np.ndarray, caps: Sequence[int], adj: list) -> np.ndarray:
    """Move workers out of over-full parts, each time the move that loses the fewest bytes."""
    parts = parts.copy()
    k = len(caps)
    sizes = np.bincount(parts, minlength=k)
    while (sizes > np.array(caps)).any():
        over = int(np.flatnonzero(sizes > np.array(caps))[0])
        best = None
        for u in np.flatnonzero(parts == over).tolist():
            conn = np.zeros(k)
            for v, w in adj[u]:
                conn[parts[v]] += w
            for j in range(k):
                if j != over and sizes[j] < caps[j]:
                    loss = conn[over] - conn[j]
                    if best is None or loss < best[0]:
                        best = (loss, u, j)
        _, u, j = best
        parts[u] = j
        sizes[over] -= 1
        sizes[j] += 1
    return parts


@register("kl")
class KernighanLin(PlacementMethod):
    """Best-fit consolidation refined by Kernighan-Lin swaps between every pair of its servers.

    Parameters
    ----------
    max_iter : int
        Passes of each networkx ``kernighan_lin_bisection`` call.
    rounds : int
        Sweeps over all server pairs (stops early when a sweep improves nothing).

    Examples
    --------
    >>> import networkx as nx
    >>> from asrpt.placement import place
    >>> G = nx.Graph()
    >>> G.add_edges_from([(0, 2), (1, 3)], bytes=5.0); G.add_edges_from([(0, 1), (2, 3)], bytes=1.0)
    >>> place(G, [2, 2], method="kl").cut_bytes
    2.0
    """

    parameter_constraints = {"max_iter": [Interval(Integral, 1, None, closed="left")],
                             "rounds": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, *, max_iter: int = 10, rounds: int = 3):
        self.max_iter = max_iter
        self.rounds = rounds

    def run(self, problem: PlacementProblem) -> MethodResult:
        pb = problem
        a = BestFit().run(pb).assignment.copy()
        servers = list(_consolidation(pb.free, pb.n))
        cut = pb.cut(a)
        seed = _seed_int(pb.seed)
        swaps = 0
        for _ in range(self.rounds):
            improved = False
            for hA, hB in itertools.combinations(servers, 2):
                new = self._refine(pb, a, hA, hB, seed)
                if new is not None:
                    c = pb.cut(new)
                    if c < cut - 1e-9 * max(1.0, cut):
                        a, cut, improved = new, c, True
                        swaps += 1
            if not improved:
                break
        return MethodResult(a, "heuristic", None, {"improving_pairs": swaps})

    def _refine(self, pb: PlacementProblem, a: np.ndarray, hA: int, hB: int, seed: int):
        """One KL bisection between servers hA and hB. KL swaps pairs, so both sides are padded
        to the larger capacity: free slots become isolated ``slot`` dummies (a swap with one is
        a move) and the smaller server gets ``pad`` dummies; a result that leaves more real
        workers on a server than its free GPUs is discarded."""
        A = np.flatnonzero(a == hA).tolist()
        B = np.flatnonzero(a == hB).tolist()
        if not A and not B:
            return None
        cA, cB = pb.free[hA], pb.free[hB]
        size = max(cA, cB)
        sideA = set(A) | {("slot", hA, i) for i in range(cA - len(A))} | \
            {("pad", hA, i) for i in range(size - cA)}
        sideB = set(B) | {("slot", hB, i) for i in range(cB - len(B))} | \
            {("pad", hB, i) for i in range(size - cB)}
        H = nx.Graph()
        H.add_nodes_from(sorted(sideA | sideB, key=repr))
        members = set(A) | set(B)
        for u in A + B:
            for v, w in pb.adjacency[u]:
                if v in members and u < v:
                    H.add_edge(u, v, bytes=w)
        part = nx.community.kernighan_lin_bisection(
            H, partition=(sideA, sideB), max_iter=self.max_iter, weight="bytes", seed=seed)
        new = a.copy()
        for side, h in zip(part, (hA, hB)):
            real = [u for u in side if not isinstance(u, tuple)]
            if len(real) > pb.free[h]:
                return None
            for u in real:
                new[u] = h
        return new


@register("random")
class RandomPlacement(PlacementMethod):
    """A control: a uniformly random feasible assignment over all free slots (seeded).

    Examples
    --------
    >>> import networkx as nx
    >>> from asrpt.placement import place
    >>> G = nx.path_graph(4); nx.set_edge_attributes(G, 1.0, "bytes")
    >>> place(G, [2, 2, 2], method="random", seed=1) == place(G, [2, 2, 2], method="random", seed=1)
    True
    """

    def run(self, problem: PlacementProblem) -> MethodResult:
        return MethodResult(_random_slots(as_generator(problem.seed), problem.free, problem.n),
                            "heuristic")


def _random_slots(rng, free: Sequence[int], n: int) -> np.ndarray:
    """The servers of ``n`` free slots drawn uniformly without replacement, in draw order.

    While the slots are at most 16 per worker, the array of all slots is permuted (the draws
    of before); otherwise a partial Fisher-Yates shuffle over virtual slot positions, in memory
    of the job and the number of servers, not of the free GPUs (a 65,536-GPU server would
    otherwise cost an array of 65,536 slots per placement).

    >>> _random_slots(as_generator(1), [2, 0, 1], 3).tolist() in ([0, 0, 2], [0, 2, 0], [2, 0, 0])
    True
    >>> sorted(set(_random_slots(as_generator(1), [65536, 65536], 64).tolist())) in ([0], [1], [0, 1])
    True
    """
    total = sum(free)
    if total <= 16 * n:
        slots = np.repeat(np.arange(len(free)), free)
        return rng.permutation(slots)[:n].astype(np.int64)
    picks = []
    moved: dict = {}                     # virtual position -> slot now there (others: itself)
    for i, j in enumerate(rng.integers(np.arange(n), total).tolist()):
        picks.append(moved.get(j, j))
        moved[j] = moved.get(i, i)
    ends = np.cumsum(np.asarray(free, dtype=np.int64))
    return np.searchsorted(ends, np.asarray(picks, dtype=np.int64), side="right").astype(np.int64)


@register("spread_workers")
class Spread(PlacementMethod):
    """A control: workers round-robin over the servers (most free first), maximising spread.

    Examples
    --------
    >>> import networkx as nx
    >>> from asrpt.placement import place
    >>> G = nx.empty_graph(4)
    >>> place(G, [1, 3, 3], method="spread_workers").server_gpus
    ((0, 1), (1, 2), (2, 1))
    """

    def run(self, problem: PlacementProblem) -> MethodResult:
        pb = problem
        ring = sorted(pb.servers, key=lambda h: (-pb.free[h], h))
        left = {h: pb.free[h] for h in ring}
        a = np.full(pb.n, -1, dtype=np.int64)
        i = 0
        while i < pb.n:
            for h in ring:
                if i < pb.n and left[h] > 0:
                    a[i] = h
                    left[h] -= 1
                    i += 1
        return MethodResult(a, "heuristic")


# The old spellings of "consolidate" and "spread_workers", still accepted (and used by tests and
# scripts); they collide with the simulator's count placers "best_fit" and "spread" (a different
# idea: GPU counts per server, not workers), so listings show the new names only.
METHODS.alias("best_fit", "consolidate")
METHODS.alias("spread", "spread_workers")
