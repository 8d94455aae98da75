"""The certified shortcuts of the exact placement (no solver): ``one_server`` and
``certified_packing`` (:mod:`asrpt.placement.ilp` states when each is optimal)."""

from __future__ import annotations


import numpy as np

from .base import MethodResult, PlacementProblem
from .heuristics import _consolidation, _packings
from .cut_bounds import _cut_lower_bound

__all__ = []

_REL = 1e-9

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
