"""The plain placement ILP: binaries ``x[v,h]``, crossing variables ``z[u,v]``, first-occurrence
symmetry breaking over interchangeable servers (:mod:`asrpt.placement.ilp` has the formulation)."""

from __future__ import annotations


import numpy as np
import pulp

from .base import PlacementProblem

__all__ = []

# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------


def _var(prob: pulp.LpProblem, name: str, lo=0, hi=None, cat="Continuous"):
    return prob.add_variable(name, lo, hi, cat=cat)


def _assignment(prob: pulp.LpProblem, pb: PlacementProblem, servers: list) -> dict:
    """Binary ``x[i, h]`` (worker i on server h): each worker on one server, each server within
    its free GPUs, equal servers filled in first-occurrence order. Shared by the plain and tau
    models."""
    n = pb.n
    x = {(i, h): _var(prob, f"x_{i}_{h}", 0, 1, "Binary") for i in range(n) for h in servers}
    for i in range(n):
        prob += pulp.lpSum(x[i, h] for h in servers) == 1
    for h in servers:
        prob += pulp.lpSum(x[i, h] for i in range(n)) <= pb.free[h]
    _symmetry_first_occurrence(prob, x, pb, servers)
    return x


def _symmetry_first_occurrence(prob, x, pb: PlacementProblem, servers: list) -> None:
    """Within a class of interchangeable servers, worker i may use only the first i+1."""
    for cls in pb.server_classes:
        for j, h in enumerate(cls):
            for i in range(min(j, pb.n)):
                prob += x[i, h] == 0


def _plain_model(pb: PlacementProblem, scale: float, lower: float | None = None):
    prob = pulp.LpProblem("placement_plain", pulp.LpMinimize)
    servers = list(pb.servers)
    x = _assignment(prob, pb, servers)
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
