"""The count placement ILP over rings (integer members per group and server, the valid
inequalities) and the search that realises its counts as a layout of arcs
(:mod:`asrpt.placement.ilp` has the formulation and why its optimum is a lower bound)."""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import pulp

from ..solve import solve
from .base import PlacementProblem
from .ilp_plain import _var
from .rings import RingStructure

__all__ = []

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


def _canonical_counts(pb: PlacementProblem, rs: RingStructure, counts: dict) -> dict:
    """The same counts with the servers of each class of interchangeable servers relabelled so
    that they satisfy :func:`_count_model`'s symmetry-breaking rows (its three cases, with the
    same conditions): a warm start that breaks them would be discarded by the solver."""
    nR, per = rs.n_ring, rs.ring_per_edge
    groups = rs.groups()
    priced = [j for j, (_, s) in enumerate(groups) if nR >= 2 and per[s] > 0]
    big = len(groups) + 1
    out = {g: dict(c) for g, c in counts.items()}
    for cls in pb.server_classes:
        f = pb.free[cls[0]]
        col = {h: [counts[g].get(h, 0) for g in groups] for h in cls}
        if priced and f >= nR:
            # rule 1: ordered by the first ring whole on them (none: last)
            key = {h: min([j for j in priced if col[h][j] == nR], default=big) for h in cls}
        elif priced and len(priced) == len(groups):
            # rule 2: ordered by the first ring with members on them (none: last)
            key = {h: min([j for j in priced if col[h][j] > 0], default=big) for h in cls}
        else:
            key = {h: -sum(col[h]) for h in cls}            # rule 3: non-increasing loads
        order = sorted(cls, key=lambda h: (key[h], h))
        for g_i, g in enumerate(groups):
            for h in cls:
                out[g].pop(h, None)
            for new_h, old_h in zip(cls, order):
                if col[old_h][g_i]:
                    out[g][new_h] = col[old_h][g_i]
    return out


def _count_start(prob, pb: PlacementProblem, rs: RingStructure, counts: dict) -> None:
    """Set the count model's variables to the point of integer counts {group: {server:
    members}} (u, w, m as the counts imply), the start of a warm-started solve."""
    nR = rs.n_ring
    groups = rs.groups()
    vs = prob.variablesDict()

    def put(name, value):
        v = vs.get(name)
        if v is not None:
            v.varValue = float(value)

    for j, g in enumerate(groups):
        for h in pb.servers:
            c = counts[g].get(h, 0)
            put(f"y_{j}_{h}", c)
            put(f"u_{j}_{h}", c > 0)
            put(f"w_{j}_{h}", c == nR)
    for e, (g1, g2, wt) in enumerate(rs.pairs()):
        for h in pb.servers:
            put(f"m_{e}_{h}", min(counts[g1].get(h, 0), counts[g2].get(h, 0)))


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
