"""The pattern (Dantzig-Wolfe) bound of the count placement model and its integer master.

The count objective (:mod:`asrpt.placement.ilp_count`) is a constant plus a sum over servers of
a function of that server's counts alone: with ``y`` the members of each group (ring) on one
server,

    phi(y) = sum_g per_g ([y_g > 0] - [y_g = n]) - sum_(g,g') w_gg' min(y_g, y_g'),
    count cost = sum_(g,g') w_gg' n + sum_h phi(y_h).

Only the coverage rows ``sum_h y[g,h] = n`` couple the servers. A *pattern* is one server's
count vector (``sum_g y_g <= f``); every placement picks one pattern per server. Relaxing the
coverage rows with multipliers ``pi`` gives, for every ``pi``, the Lagrangian bound

    count optimum >= C + n sum_g pi_g + sum_c N_c min(0, min_(|P| <= f_c) phi(P) - pi . P)

(``N_c`` servers with ``f_c`` free GPUs; the empty pattern costs 0). Each pattern set is
enumerated in full (``_patterns``: at most ``_MAX_PATTERNS`` vectors), so the inner minimum is
exact and the bound is valid for any ``pi``, however inaccurate the LP that produced it. The
multipliers come from column generation on the pattern LP (the master: pick a number of
servers per pattern); at its optimum the bound is the pattern LP's value, the convex hull of
each server's counts, which the compact model's LP relaxation only approximates with its
per-server cuts. Servers with equal free GPUs are one class: the master has no server symmetry.

The integer master over the generated columns (a few seconds at most) gives an incumbent;
reduced-cost fixing then leaves the patterns that a cheaper solution could use, and the exact
master over them runs over a growing slack (a small first set, then fourfold). The counts per
server go to :meth:`ILPPlacement._count <asrpt.placement.ilp.ILPPlacement>`, which lays them
out and, when the realised cut meets the bound, has a proven optimum without the compact
model. When a proven count optimum cannot be laid out at its cost, the master returns another
of the same cost (each tried one excluded by a no-good cut) until one can be. Otherwise the
bound is a cut on the compact model's objective and the master's counts its starting point.

Examples
--------
>>> from asrpt.instance import Job, Parallelism
>>> from asrpt.dnn.parallel import worker_graph
>>> from asrpt.placement import PlacementProblem, ring_structure
>>> W = worker_graph(Job("j", 0, 16, model="gpt2", parallelism=Parallelism(2, 2, 4),
...                      iterations=1), "A100")
>>> pb = PlacementProblem.build(W, [6, 6, 4])
>>> out = _pattern_bound(pb, ring_structure(W), None)
>>> out.bound > 0, out.counts is not None
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .base import PlacementProblem
from .rings import RingStructure

__all__ = []

#: Largest pattern set enumerated (the 64-worker zoo configurations need at most 719,967:
#: 16 rings of 4 on 8-GPU servers).
_MAX_PATTERNS = 1_500_000

_REL = 1e-9


def _pattern_count(n_groups: int, cap: int, fmax: int) -> int:
    """How many vectors in {0..cap}^n_groups have sum <= fmax (a DP over the sums; stops
    counting past ``_MAX_PATTERNS``).

    >>> _pattern_count(3, 2, 4)        # 27 vectors in {0, 1, 2}^3, four of them sum above 4
    23
    """
    counts = [1]                                   # vectors of the prefix with each sum
    for _ in range(n_groups):
        nxt = [0] * (fmax + 1)
        for s, c in enumerate(counts):
            for v in range(min(cap, fmax - s) + 1):
                nxt[s + v] += c
        counts = nxt
        if sum(counts) > _MAX_PATTERNS:
            break
    return sum(counts)


def _enumerable(pb: PlacementProblem, rs: RingStructure) -> bool:
    """Whether :func:`_pattern_bound` can enumerate this structure's patterns on these
    servers (else it returns None)."""
    fmax = max(min(pb.free[h], pb.n) for h in pb.servers)
    return _pattern_count(len(rs.groups()), min(rs.n_ring, fmax), fmax) <= _MAX_PATTERNS


@lru_cache(maxsize=4)
def _patterns(n_groups: int, cap: int, fmax: int):
    """Every vector in {0..cap}^n_groups with sum <= fmax (rows of the smallest integer type
    that holds ``cap``: int8 up to 127, sorted by sum), and their sums; None when there would be
    more than ``_MAX_PATTERNS``.

    >>> P, sums = _patterns(1, 200, 200)      # a ring of 200 on a server with 200 free GPUs
    >>> P.dtype, int(P[-1, 0]), int(sums[-1])
    (dtype('int16'), 200, 200)
    """
    if _pattern_count(n_groups, cap, fmax) > _MAX_PATTERNS:
        return None
    dtype = np.int8 if cap <= 127 else np.int16 if cap <= 32767 else np.int32
    P = np.zeros((1, 0), dtype=dtype)
    sums = np.zeros(1, dtype=np.int64)
    for _ in range(n_groups):
        parts, psums = [], []
        for v in range(cap + 1):
            keep = sums + v <= fmax
            if not keep.any():
                break
            parts.append(np.concatenate([P[keep], np.full((int(keep.sum()), 1), v, dtype)],
                                        axis=1))
            psums.append(sums[keep] + v)
        P = np.concatenate(parts)
        sums = np.concatenate(psums)
    order = np.argsort(sums, kind="stable")
    P, sums = P[order], sums[order]
    P.setflags(write=False)
    sums.setflags(write=False)
    return P, sums


def _phi(rs: RingStructure, P: np.ndarray) -> np.ndarray:
    """phi of every row of P (count vectors of one server, ``rs.groups()`` order), in bytes."""
    nR, per = rs.n_ring, rs.ring_per_edge
    groups = rs.groups()
    gi = {g: j for j, g in enumerate(groups)}
    out = np.zeros(len(P))
    if nR >= 2:
        for j, (_, s) in enumerate(groups):
            if per[s] > 0:
                col = P[:, j]
                out += per[s] * ((col > 0).astype(np.float64) - (col == nR))
    for g1, g2, wt in rs.pairs():
        if wt > 0:
            out -= wt * np.minimum(P[:, gi[g1]], P[:, gi[g2]])
    return out


def _split_servers(pb: PlacementProblem, nR: int) -> int:
    """The fewest servers a ring of nR members split over two or more servers can use (at
    most nR - 1 members on any one server), at least 2."""
    caps = sorted((min(pb.free[h], nR - 1) for h in pb.servers), reverse=True)
    acc, k = 0, 0
    for c in caps:
        if acc >= nR:
            break
        acc += c
        k += 1
    return max(2, k)


def _constant(rs: RingStructure) -> float:
    return float(sum(wt for _, _, wt in rs.pairs() if wt > 0) * rs.n_ring)


def _server_counts(pb: PlacementProblem, rs: RingStructure, a: np.ndarray) -> dict:
    """{server: count vector} of an assignment (only servers it uses)."""
    groups = rs.groups()
    out: dict = {}
    for j, (q, s) in enumerate(groups):
        for i in range(rs.n_ring):
            h = int(a[pb.index[rs.worker(q, s, i)]])
            out.setdefault(h, np.zeros(len(groups), dtype=np.int64))[j] += 1
    return out


def _counts_of(pb: PlacementProblem, rs: RingStructure, a: np.ndarray) -> dict:
    """{group: {server: members}} of an assignment (a warm start for the count model)."""
    out: dict = {}
    for q, s in rs.groups():
        c: dict = {}
        for i in range(rs.n_ring):
            h = int(a[pb.index[rs.worker(q, s, i)]])
            c[h] = c.get(h, 0) + 1
        out[q, s] = c
    return out


@dataclass(frozen=True)
class PatternBound:
    """What the pattern bound produced.

    Attributes
    ----------
    bound : float
        A valid lower bound on the count optimum, in bytes (0 when nothing was computed).
    counts : dict or None
        {group: {server: members}} of the integer master's best solution, or None.
    cost : float or None
        The count cost of ``counts``.
    iterations : int
        Column-generation rounds.
    columns : int
        Columns generated.
    lp : float or None
        The last master LP's value (the pattern LP's value when converged), in bytes.
    proven : bool
        ``cost`` is the count optimum (``counts`` attain it).
    alternatives : int
        Other count optima tried after the first failed ``accept`` (0: none needed).
    """

    bound: float
    counts: dict | None
    cost: float | None
    iterations: int
    columns: int
    lp: float | None
    proven: bool = False
    alternatives: int = 0


def _pattern_bound(pb: PlacementProblem, rs: RingStructure, deadline: float | None,
                   start: np.ndarray | None = None, max_rounds: int = 200,
                   master_limit: float = 2.0, max_exact: int = 20_000,
                   first_exact: int = 1_000, accept=None,
                   max_alternatives: int = 200, alternatives_share: float = 1.0,
                   presolve: bool = False) -> PatternBound | None:
    """The Lagrangian bound at column generation's multipliers and the integer master's
    counts (module docstring). None when a server's pattern set is too large to enumerate.
    ``start``: an assignment whose server patterns seed the master (a heuristic's).
    ``first_exact``: columns of the first exact master (its slack then grows fourfold; 0: the
    incumbent's whole slack at once). ``accept``: a test of proven-optimal counts (can they be
    laid out at their cost?); when it fails, up to ``max_alternatives`` other solutions of the
    same count cost are tried, each excluded by a no-good cut once tried, within
    ``alternatives_share`` of the time left when the first one fails. ``presolve``: HiGHS's
    presolve on the exact masters (off by default: on llama-7b (2, 8, 4) over fragmented
    servers the exact master took 12.5 s with it and 3.4 s without; it closes at the root).
    The master over the generated columns keeps it (a few hundred columns; with presolve off
    on every master, the pattern step took a median 0.040 s on the 8 x 8 free cases of the
    benchmark against 0.016 s with it on)."""
    from scipy.optimize import linprog, milp, Bounds, LinearConstraint
    from scipy.sparse import csc_matrix

    nR = rs.n_ring
    groups = rs.groups()
    G = len(groups)
    free_by_class: dict = {}
    for h in pb.servers:
        free_by_class.setdefault(min(pb.free[h], pb.n), []).append(h)
    fs = sorted(free_by_class)
    fmax = fs[-1]
    pats = _patterns(G, min(nR, fmax), fmax)
    if pats is None:
        return None
    P, sums = pats
    phi = _phi(rs, P)
    C = _constant(rs)
    scale = float(max(np.abs(phi).max(), C / max(1, nR), 1e-300))
    phis = phi / scale
    ends = {f: int(np.searchsorted(sums, f, side="right")) for f in fs}
    Pf = P.astype(np.float64)
    Ns = np.array([len(free_by_class[f]) for f in fs], dtype=np.float64)
    # ring rows: a ring with cut cost is whole on one server or split over at least k
    # servers, so (servers with members) + (k - 1) [whole somewhere] >= k for every placement
    k_split = _split_servers(pb, nR)
    rings = [j for j, (_, s) in enumerate(groups) if nR >= 2 and rs.ring_per_edge[s] > 0]
    Ar = ((P[:, rings] > 0) + (k_split - 1) * (P[:, rings] == nR)).astype(np.float64)
    R = len(rings)

    # columns: (class index, pattern row); seeded by the start assignment's patterns
    cols: list = []
    seen: set = set()

    def add(c: int, row: int) -> bool:
        if (c, row) in seen or row == 0:
            return False
        seen.add((c, row))
        cols.append((c, row))
        return True

    if start is not None and (nR + 1) ** G < 2 ** 62:
        sc = _server_counts(pb, rs, start)
        weights = (nR + 1) ** np.arange(G)
        keys = P.astype(np.int64) @ weights
        order = np.argsort(keys)
        for h, vec in sc.items():
            key = int(vec @ weights)
            pos = np.searchsorted(keys[order], key)
            if pos < len(order) and keys[order[pos]] == key:
                c = fs.index(min(pb.free[h], pb.n))
                add(c, int(order[pos]))
    big = 4.0 * (G * nR * (max(rs.ring_per_edge + (0.0,)) + 1.0) + C) / scale + 10.0
    best_lb, lp_value, rounds = -np.inf, None, 0
    best_red, best_min = None, None
    nc = len(fs)
    for rounds in range(1, max_rounds + 1):
        if deadline is not None and time.perf_counter() > deadline:
            break
        k = len(cols)
        cost = np.concatenate([[phis[r] for _, r in cols], np.full(G, big)])
        A_eq = np.zeros((G, k + G))
        A_ub = np.zeros((nc + R, k + G))
        for i, (c, r) in enumerate(cols):
            A_eq[:, i] = Pf[r]
            A_ub[c, i] = 1.0
            A_ub[nc:, i] = -Ar[r]
        A_eq[:, k:] = np.eye(G)
        A_ub[nc:, k:] = -np.eye(G)[rings] * k_split   # an artificial member covers its ring
        b_ub = np.concatenate([Ns, np.full(R, -float(k_split))])
        res = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.full(G, float(nR)),
                      bounds=(0, None), method="highs")
        if res.status != 0:       # pragma: no cover - the artificial columns keep it feasible
            break
        pi = np.asarray(res.eqlin.marginals)
        mu = np.asarray(res.ineqlin.marginals)[:nc]
        rho = np.maximum(0.0, -np.asarray(res.ineqlin.marginals)[nc:])
        lp_value = float(res.fun * scale + C)
        red = phis - Pf @ pi
        if R:
            red -= Ar @ rho
        lb = C / scale + nR * pi.sum() + k_split * rho.sum()
        added = 0
        for c, f in enumerate(fs):
            seg = red[1:ends[f]]
            j = int(np.argmin(seg)) + 1
            lb += Ns[c] * min(0.0, float(red[j]))
            if red[j] - mu[c] < -1e-9:
                # the best few columns of the class (distinct patterns)
                top = np.argpartition(seg, min(len(seg) - 1, 4))[:5] + 1
                for r in top:
                    if red[r] - mu[c] < -1e-9:
                        added += add(c, int(r))
        if lb > best_lb:
            best_lb, best_red = lb, red
            best_min = [min(0.0, float(red[1:ends[f]].min())) for f in fs]
        if not added or (lp_value - best_lb * scale) <= 1e-9 * max(1.0, abs(lp_value)):
            break
    bound = float(max(0.0, best_lb * scale) * (1 - _REL)) if np.isfinite(best_lb) else 0.0

    def master(columns: list, limit: float, nogoods: tuple = (), cutoff: float | None = None,
               presolve: bool = presolve):
        """The integer master over ``columns``: (counts, cost, optimal, dual bound, solution
        {column: servers}). ``nogoods``: solutions ({column: servers}) to exclude; ``cutoff``:
        only solutions of count cost at most this (bytes)."""
        k = len(columns)
        index = {col: i for i, col in enumerate(columns)}
        # a no-good binds only when every column of its solution is there (else it holds)
        cuts = [ng for ng in nogoods if all(col in index for col in ng)]
        nb = sum(len(ng) + 1 for ng in cuts)
        n_rows = G + nc + R + (cutoff is not None) + sum(len(ng) + 2 for ng in cuts)
        A = np.zeros((n_rows, k + nb))
        lo = np.full(n_rows, -np.inf)
        hi = np.full(n_rows, np.inf)
        for i, (c, r) in enumerate(columns):
            A[:G, i] = Pf[r]
            A[G + c, i] = 1.0
            A[G + nc:G + nc + R, i] = Ar[r]
        # the ring rows too: implied by integrality, they give HiGHS the pattern LP's bound
        lo[:G] = hi[:G] = float(nR)
        lo[G:G + nc], hi[G:G + nc] = 0.0, Ns
        lo[G + nc:G + nc + R] = float(k_split)
        row, var = G + nc + R, k
        if cutoff is not None:
            A[row, :k] = [phis[r] for _, r in columns]
            hi[row] = (cutoff - C) / scale + 1e-9 * max(1.0, abs(cutoff) / scale)
            row += 1
        for ng in cuts:
            # lam differs from the excluded solution: fewer servers on one of its patterns
            # (b_i = 1) or a pattern it does not use (b_0 = 1); sum b >= 1
            first = var
            for (c, r), times in ng.items():
                A[row, index[c, r]] = 1.0
                A[row, var] = Ns[c]
                hi[row] = times - 1 + Ns[c]
                row, var = row + 1, var + 1
            A[row, [i for i, col in enumerate(columns) if col not in ng]] = 1.0
            A[row, var] = -1.0
            lo[row] = 0.0
            row, var = row + 1, var + 1
            A[row, first:var] = 1.0
            lo[row] = 1.0
            row += 1
        if deadline is not None:
            limit = max(0.05, min(limit, deadline - time.perf_counter()))
        ub = np.concatenate([np.full(k, np.inf), np.ones(nb)])
        m = milp(np.concatenate([[phis[r] for _, r in columns], np.zeros(nb)]),
                 integrality=np.ones(k + nb), bounds=Bounds(0, ub),
                 constraints=LinearConstraint(csc_matrix(A), lo, hi),
                 options={"time_limit": limit, "disp": False, "mip_rel_gap": 0.0,
                          "presolve": presolve})
        dual = getattr(m, "mip_dual_bound", None)
        if m.x is None:
            # infeasible: the optimum over these columns is known (none)
            return None, None, m.status == 2, dual, None
        lam = np.round(m.x[:k]).astype(np.int64)
        if not (np.array_equal(A[:G, :k] @ lam, np.full(G, nR))
                and (A[G:G + nc, :k] @ lam <= Ns).all()):
            return None, None, False, dual, None  # pragma: no cover - HiGHS's integral solutions
        counts = {g: {} for g in groups}
        free_iter = {c: list(free_by_class[f]) for c, f in enumerate(fs)}
        total = C
        for i, (c, r) in enumerate(columns):
            for _ in range(int(lam[i])):
                h = free_iter[c].pop(0)
                total += float(phi[r])
                for j, g in enumerate(groups):
                    if P[r, j]:
                        counts[g][h] = int(P[r, j])
        used = {col: int(lam[i]) for i, col in enumerate(columns) if lam[i]}
        return counts, total, m.status == 0, dual, used

    def fixed(slack: float):
        """Reduced-cost fixing: the patterns whose reduced cost exceeds their class minimum
        by less than ``slack`` (scaled), or None when there are more than ``max_exact``.
        With the best multipliers every solution costs at least bound + sum_h excess_h
        (excess: a server's reduced cost above its class minimum), so every solution of
        cost below bound + slack uses only these."""
        out = []
        for c, f in enumerate(fs):
            seg = best_red[1:ends[f]] - best_min[c]
            rows = np.nonzero(seg < slack * (1 + 1e-6) + 1e-7)[0] + 1
            if len(out) + len(rows) > max_exact:
                return None
            out += [(c, int(r)) for r in rows]
        return out

    def slack_of(cost: float) -> float:
        return (cost - best_lb * scale) / scale

    # the integer master over the generated columns: an incumbent
    counts, cost_out, proven, used = None, None, False, None
    if cols:
        counts, cost_out, _, _, used = master(cols, master_limit, presolve=True)
    # the exact master over the patterns that reduced-cost fixing leaves (no server symmetry:
    # classes count servers), over a growing slack s: a master over the patterns of excess
    # below s gives min(its optimum, bound + s) as a bound, and is exact once its optimum is
    # within bound + s (any cheaper solution would use only its patterns). A small first set
    # is much quicker to close than the full set of the incumbent's slack. Without an
    # incumbent (the generated columns hold no integer solution) s grows until one is found.
    if best_red is not None and (cost_out is None or cost_out > bound):
        excess = np.concatenate([best_red[1:ends[f]] - best_min[c] for c, f in enumerate(fs)])
        full = float(excess.max())                 # every pattern
        s = full if cost_out is None else slack_of(cost_out)
        if first_exact and len(excess) > first_exact:
            s = min(s, float(np.partition(excess, first_exact)[first_exact]))
        while True:
            exact_cols = fixed(s)
            if not exact_cols:
                break
            remaining = None if deadline is None else deadline - time.perf_counter()
            if remaining is not None and remaining <= 0.1:
                break
            c2, cost2, ok, dual, used2 = master(exact_cols,
                                                1e9 if remaining is None else remaining)
            if c2 is not None and (cost_out is None or cost2 < cost_out):
                counts, cost_out, used = c2, cost2, used2
            top = np.inf if cost_out is None else cost_out
            cover = np.inf if s >= full else (best_lb + s) * scale
            if ok and cost_out is not None and (s >= full or slack_of(cost_out) <= s):
                proven = True
                bound = max(bound, cost_out * (1 - _REL))
                break
            if ok:
                opt = cost2 if cost2 is not None else np.inf
                new_bound = min(top, opt, cover)
            else:
                new_bound = min(top, dual * scale + C, cover) if dual is not None else -np.inf
            if np.isfinite(new_bound):
                bound = max(bound, new_bound * (1 - _REL))
            if not ok:
                break
            if s >= full:
                break                                  # pragma: no cover - feasible problems
            target = full if cost_out is None else slack_of(cost_out)
            s = min(target, max(4 * s, target / 16))
    elif cost_out is not None and cost_out <= bound * (1 + _REL) / (1 - _REL):
        proven = True
    # the count optimum cannot be laid out at its cost: other solutions of the same cost, one
    # at a time (each excluded in turn), until one can be or none is left
    tried = 0
    if proven and accept is not None and used is not None and not accept(counts):
        same = fixed(max(0.0, slack_of(cost_out)))
        nogoods = [used]
        until = None if deadline is None else (
            time.perf_counter() + alternatives_share * (deadline - time.perf_counter()))
        while same and tried < max_alternatives:
            if until is not None and until - time.perf_counter() <= 0.1:
                break
            remaining = None if until is None else until - time.perf_counter()
            c2, cost2, _, _, used2 = master(same, 1e9 if remaining is None else remaining,
                                            tuple(nogoods), cutoff=cost_out)
            if c2 is None:
                break
            tried += 1
            if accept(c2):
                counts = c2
                break
            nogoods.append(used2)
    return PatternBound(bound, counts, cost_out, rounds, len(cols), lp_value, proven, tried)
