"""The tau placement ILP: the plain variables plus indicators that reproduce
:func:`asrpt.dnn.perf.iteration_time` term by term (:mod:`asrpt.placement.ilp` has the
formulation)."""

from __future__ import annotations


import pulp

from .base import PlacementProblem
from .ilp_plain import _assignment, _var

__all__ = []

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
    x = _assignment(prob, pb, servers)
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
