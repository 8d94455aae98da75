"""Exact placement: shortcuts with certificates, the plain and the count ILP, the tau ILP, brute
force, and lower bounds.

This module owns the exact methods of :func:`asrpt.placement.place` (``"ilp"``,
``"brute_force"``); their pieces live one idea a module: :mod:`.rings` (the ring structure),
:mod:`.cut_bounds` (the lower bounds that certify them), :mod:`.shortcuts`, and one module per
formulation, :mod:`.ilp_plain`, :mod:`.ilp_count` (with the layout search) and :mod:`.ilp_tau`. ``docs/placement.md`` has the argument in
full; in brief:

**Plain formulation** (the capacitated k-way cut ILP; docs/placement.md, "The plain formulation").
Binaries ``x[v,h]`` (worker v on server h, only servers with free GPUs), ``sum_h x[v,h] = 1``,
``sum_v x[v,h] <= f_h``; continuous ``z[u,v] >= x[u,h] - x[v,h]`` and ``>= x[v,h] - x[u,h]`` for
every h; minimise ``sum w_uv z_uv``. Servers with the same free GPUs (and GPU type) are
interchangeable: within such a class, worker number i may only use the class's first i+1 servers
(first-occurrence labelling, valid because any placement can be relabelled so).

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

**Pattern bound** (:mod:`.ilp_patterns`, ``patterns=True``): before the compact count model,
column generation over every pattern (one server's counts) gives a Lagrangian bound that is
valid for any multipliers, and an exact master over the patterns that reduced-cost fixing
leaves (over a growing slack). A layout at the proven count optimum or at the bound is optimal
without the compact model. A count optimum that cannot be laid out is replaced by another of
the same count cost (no-good cuts in the exact master), then retried along the other ring,
whose count model is a lower bound too. Otherwise the bound joins the compact model's bound,
and the master's counts are its warm start.

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

import dataclasses
import math
import time

import networkx as nx  # noqa: F401  (the examples use it)
import numpy as np

from .._validation import Interval, Integral, Options
from ..errors import SolverError
from ..solve import solve
from .base import MethodResult, PlacementMethod, PlacementProblem, register
from .heuristics import BestFit, Greedy
# the pieces of the exact placement, each in its own module (re-exported: tests and benchmarks
# read some private ones from here)
from .cut_bounds import (_cut_lower_bound, _fewest, _fiedler, _laplacian_lambda2, _min_cut,  # noqa: F401
                         _structure_bound, cut_lower_bound, fiedler_bound)
from .ilp_count import (_backtrack, _boundary_cut, _canonical_counts, _count_cost,  # noqa: F401
                        _count_model, _count_start, _degrees, _internal_terms, _layouts,
                        _lower_hull, _max_internal, _min_boundary, _realize)
from .ilp_patterns import _counts_of, _enumerable, _pattern_bound  # noqa: F401
from .ilp_plain import _extract, _plain_model, _symmetry_first_occurrence, _var  # noqa: F401
from .ilp_tau import _tau_model  # noqa: F401
from .rings import RingStructure, _expected_edges, _ring_structure, ring_structure  # noqa: F401
from .shortcuts import _shortcut, _tau_star  # noqa: F401

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
# Methods
# ---------------------------------------------------------------------------------------------


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    return max(0.05, deadline - time.perf_counter())


def _meets(cut: float, bound: float) -> bool:
    """A cut at a valid lower bound (the bound is rounded down by 1e-9 relative)."""
    return cut <= bound * (1 + 2 * _REL) + 1e-12


def _other_axis(rs: RingStructure) -> RingStructure | None:
    """The same structure with the other ring on the axis (None when that ring has fewer than
    two members): its count model is another lower bound on every placement's cut."""
    alt = RingStructure(rs.shape, "r" if rs.ring_axis == "k" else "k", rs.other_w, rs.ring_w,
                        rs.path_w)
    return alt if alt.n_ring >= 2 else None


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
    patterns : bool
        Before the compact count model, compute the pattern bound and solve its integer master
        (:mod:`.ilp_patterns`): a proven optimum when the master's counts are laid out at the
        bound; otherwise the bound becomes a cut on the compact model's objective and the
        master's counts (or the best heuristic's) its warm start. The optimum is the same
        (``False`` gives the compact model alone, for comparisons). Only with the HiGHS
        solver (``solver="cbc"`` stays an independent cross-check).

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
                             "shortcuts": ["boolean"], "boundary_cuts": ["boolean"],
                             "patterns": ["boolean"]}

    def __init__(self, *, formulation: str = "auto", shortcuts: bool = True,
                 boundary_cuts: bool = True, patterns: bool = True):
        self.formulation = formulation
        self.shortcuts = shortcuts
        self.boundary_cuts = boundary_cuts
        self.patterns = patterns

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

    def _layout(self, pb, rs: RingStructure, counts: dict) -> np.ndarray:
        seq = _realize(rs, counts)
        a = np.full(pb.n, -1, dtype=np.int64)
        for (q, s), row in seq.items():
            for i, h in enumerate(row.tolist()):
                a[pb.index[rs.worker(q, s, i)]] = h
        return a

    def _acceptor(self, pb, rs: RingStructure, laid: dict):
        """The test the pattern master puts to proven-optimal counts: can they be laid out at
        their count cost? Each layout is kept in ``laid`` (by id of the counts), with the
        lowest-cut one under "best"."""
        def accept(counts: dict) -> bool:
            a = self._layout(pb, rs, counts)
            cut = pb.cut(a)
            laid[id(counts)] = (counts, a, cut)
            if "best" not in laid or cut < laid["best"][1]:
                laid["best"] = (a, cut)
            return cut <= _count_cost(rs, counts) * (1 + _REL) + 1e-12
        return accept

    def _laid_out(self, pb, rs: RingStructure, counts: dict, laid: dict):
        """(layout, cut) of the master's counts: the one ``accept`` made, else a new one; when
        the counts are not laid out at their cost, the lowest cut of every layout tried."""
        seen, a, cut = laid.get(id(counts)) or (None, None, None)
        if seen is not counts:
            a = self._layout(pb, rs, counts)
            cut = pb.cut(a)
        if "best" in laid and laid["best"][1] < cut:
            a, cut = laid["best"]
        return a, cut

    def _count(self, pb, rs: RingStructure, deadline) -> MethodResult:
        scale = self._scale(pb)
        lower, start, pat_detail, pat_a = None, None, {}, None
        if self.patterns and pb.solver == "highs":
            # (HiGHS through scipy; with solver="cbc" the compact model alone, a cross-check)
            t0 = time.perf_counter()
            heur = pb.best([BestFit().run(pb).assignment, Greedy().run(pb).assignment])
            laid: dict = {}   # id(counts) -> (counts, layout, cut); "best": the lowest cut
            # other count optima of the same cost get a quarter of the time left when the
            # other ring can give a second pattern bound (often laid out where the first is
            # not), else half of it (the plain model's search, with the count optimum as a
            # cut, keeps the rest: where nothing is proven it finds the better placement)
            alt = _other_axis(rs)
            second = alt is not None and _enumerable(pb, alt)
            pat = _pattern_bound(pb, rs, deadline, start=heur,
                                 accept=self._acceptor(pb, rs, laid),
                                 alternatives_share=0.25 if second else 0.5)
            if pat is not None:
                pat_detail = {"solver": "highs", "pattern_bound": pat.bound,
                              "pattern_rounds": pat.iterations, "pattern_columns": pat.columns,
                              "pattern_time": time.perf_counter() - t0}
                lower = pat.bound
                if pat.counts is not None:
                    pat_a, cut = self._laid_out(pb, rs, pat.counts, laid)
                    tight = cut <= pat.cost * (1 + _REL) + 1e-12
                    if pat.alternatives:
                        pat_detail["alternatives"] = pat.alternatives
                    if (pat.proven and tight) or _meets(cut, pat.bound):
                        return MethodResult(pat_a, "optimal",
                                            cut if pb.gap == 0 else pat.bound,
                                            dict(pat_detail, formulation="count",
                                                 realized="tight", proof="pattern_bound"))
                    if pat.proven:
                        # the count optimum is known but this layout misses it. The count
                        # model along the other ring is a lower bound too: its optimum laid
                        # out at its cost is optimal; else the plain model with the larger of
                        # the two as a cut, as after the compact model
                        lower = pat.cost
                        laid2: dict = {}
                        pat2 = None if not second else _pattern_bound(
                            pb, alt, deadline, start=heur,
                            accept=self._acceptor(pb, alt, laid2))
                        if pat2 is not None and pat2.counts is not None:
                            a2, cut2 = self._laid_out(pb, alt, pat2.counts, laid2)
                            if cut2 < cut:
                                pat_a, cut = a2, cut2
                            if ((pat2.proven and cut <= pat2.cost * (1 + _REL) + 1e-12)
                                    or _meets(cut, pat2.bound)):
                                return MethodResult(pat_a, "optimal",
                                                    cut if pb.gap == 0 else pat2.bound,
                                                    dict(pat_detail, formulation="count",
                                                         ring_axis=alt.ring_axis,
                                                         realized="tight",
                                                         proof="pattern_bound"))
                            lower = max(lower, pat2.bound)
                        out = self._plain(pb, deadline, lower,
                                          dict(pat_detail, formulation="count+plain",
                                               count_bound=lower, proof="pattern_bound"))
                        if pb.cut(out.assignment) > cut:
                            out = MethodResult(pat_a, out.status, out.bound, out.detail)
                        return out
                    start = pat.counts
                if deadline is not None and time.perf_counter() >= deadline:
                    # out of time in the pattern phase: its incumbent or a heuristic's
                    best = self._fallback(pb, pat_a)
                    return MethodResult(best, "time_limit", pat.bound, dict(
                        pat_detail, formulation="count", incumbent=(
                            "pattern_master" if best is pat_a else "heuristic")))
            if start is None:
                start = _counts_of(pb, rs, heur)
        prob, y, groups = _count_model(pb, rs, scale, self.boundary_cuts)
        if start is not None:
            _count_start(prob, pb, rs, _canonical_counts(pb, rs, start))
        res = solve(prob, solver=pb.solver, time_limit=_remaining(deadline), gap=pb.gap,
                    warm_start=start is not None)
        if lower is not None and res.bound is not None:
            res = dataclasses.replace(res, bound=max(res.bound, lower / scale))
        detail = {**pat_detail, "formulation": "count", "solver": res.solver,
                  "solver_time": res.wall_time, "variables": len(prob.variables()),
                  "constraints": len(prob.constraints)}
        if res.status in ("infeasible", "unbounded"):
            raise SolverError(f"the count placement ILP is {res.status} although enough GPUs "
                              "are free")
        if not res.has_solution:
            a = self._fallback(pb)
            bound = None if res.bound is None else res.bound * scale
            return MethodResult(a, res.status, bound, dict(detail, incumbent="heuristic"))
        counts = {g: {h: int(round(y[j, h].value() or 0)) for h in pb.servers}
                  for j, g in enumerate(groups)}
        a = self._layout(pb, rs, counts)
        cost = _count_cost(rs, counts)
        cut = pb.cut(a)
        count_bound = None if res.bound is None else res.bound * scale
        tight = cut <= cost * (1 + _REL) + 1e-12
        if res.status == "optimal" and tight:
            return MethodResult(a, "optimal", cost if pb.gap == 0 else count_bound,
                                dict(detail, realized="tight"))
        if res.status != "optimal":
            # out of time: the best of the realised count incumbent, the master's layout and
            # the heuristics
            if pat_a is not None and pb.cut(pat_a) < cut:
                a = pat_a
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
