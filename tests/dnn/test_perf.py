"""asrpt.dnn.perf: the iteration-time formula and its two required properties.

Precise statements tested here (docs/performance-model.md, "Properties"):

1. Monotonicity: if every worker-graph edge cut by placement x is also cut by x' (same cluster,
   one GPU type), then tau(x) <= tau(x'); in particular a refinement x' of x (each server of x'
   holds workers of a single server of x) is never faster. Refinements cut a superset of edges,
   hence also at least as many bytes. tau depends on x only through the set of cut edges.
2. Consolidation: tau(consolidated_assignment) == tau* == best_iteration_time, and tau(x) >= tau*
   for every placement x (also for placements given by counts).
"""

import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from asrpt.dnn import perf
from asrpt.dnn.calibration import PerfParams, perf_params
from asrpt.dnn.parallel import Configuration, job_plan, plan_for, uniform_layer_graph, worker_graph
from asrpt.dnn.perf import (best_gpu_type, best_iteration_time, consolidated_assignment,
                            cut_bytes, iteration_breakdown, iteration_time,
                            iteration_time_for_counts, packing_assignment)
from asrpt.errors import Infeasible, InvalidParameterError
from asrpt.instance import Cluster, Job, Parallelism, Server

MODELS = ["gpt2", "resnet18", "bert-base"]


@st.composite
def job_and_cluster(draw, max_degree=3):
    model = draw(st.sampled_from(MODELS))
    dp, pp, tp = (draw(st.integers(1, max_degree)) for _ in range(3))
    g = dp * pp * tp
    per_server = draw(st.sampled_from([1, 2, 4, 8]))
    gpu = draw(st.sampled_from(["V100", "A100", "H100", "T4"]))
    inter = draw(st.sampled_from([None, 1.25e9, 1.25e10]))
    cluster = Cluster.homogeneous(2 * g, per_server, gpu, inter_bandwidth=inter)
    job = Job("j", 0, g, model=model, parallelism=Parallelism(dp, pp, tp), iterations=1,
              batch_size=draw(st.sampled_from([dp, 4 * dp, 32 * dp])))
    return job, cluster


def workers(job):
    p = job.parallelism
    return [(r, s, k) for r in range(p.dp) for s in range(p.pp) for k in range(p.tp)]


def random_assignment(job, cluster, rng):
    slots = [h for h, s in enumerate(cluster.servers) for _ in range(s.gpus)]
    rng.shuffle(slots)
    return dict(zip(workers(job), slots))


def refine(assignment, cluster, rng):
    """Move a random subset of each used server's workers to a fresh, unused server."""
    used = set(assignment.values())
    fresh = [h for h in range(cluster.n_servers) if h not in used]
    rng.shuffle(fresh)
    out = dict(assignment)
    for h in sorted(used):
        members = [w for w, x in assignment.items() if x == h]
        moved = [w for w in members if rng.random() < 0.5]
        if moved and fresh:
            target = fresh.pop()
            for w in moved:
                out[w] = target
    return out


def cut_set(job, cluster, assignment):
    W = worker_graph(job, cluster=cluster)
    return {frozenset((u, v)) for u, v in W.edges if assignment[u] != assignment[v]}


@given(job_and_cluster(), st.integers(0, 2**32 - 1))
def test_tau_non_decreasing_under_refinement(jc, seed):
    """Property 1: a placement cutting a superset of edges is never faster."""
    job, cluster = jc
    rng = random.Random(seed)
    x = random_assignment(job, cluster, rng)
    y = refine(x, cluster, rng)
    cx, cy = cut_set(job, cluster, x), cut_set(job, cluster, y)
    assert cx <= cy
    W = worker_graph(job, cluster=cluster)
    assert cut_bytes(W, x) <= cut_bytes(W, y)
    bx, by = iteration_breakdown(job, x, cluster), iteration_breakdown(job, y, cluster)
    assert bx.model_time <= by.model_time * (1 + 1e-12)
    assert bx.tau <= by.tau * (1 + 1e-12)


@given(job_and_cluster(), st.integers(0, 2**32 - 1))
def test_tau_depends_only_on_the_cut_set(jc, seed):
    """Relabelling identical servers keeps the cut set, hence tau."""
    job, cluster = jc
    rng = random.Random(seed)
    x = random_assignment(job, cluster, rng)
    perm = list(range(cluster.n_servers))
    rng.shuffle(perm)
    y = {w: perm[h] for w, h in x.items()}
    assert cut_set(job, cluster, x) == cut_set(job, cluster, y)
    assert iteration_time(job, x, cluster) == pytest.approx(iteration_time(job, y, cluster),
                                                           rel=1e-12)


@given(job_and_cluster(), st.integers(0, 2**32 - 1))
def test_consolidated_equals_tau_star_and_bounds_every_placement(jc, seed):
    """Property 2: tau == tau* for the consolidated placement, tau >= tau* for any placement."""
    job, cluster = jc
    t_star = best_iteration_time(job, cluster)
    a = consolidated_assignment(job, cluster)
    assert iteration_time(job, a, cluster) == t_star
    per = cluster.servers[0].gpus
    assert len(set(a.values())) <= math.ceil(job.gpus / per) + 2
    x = random_assignment(job, cluster, random.Random(seed))
    assert iteration_time(job, x, cluster) >= t_star
    counts = {}
    for h in x.values():
        counts[h] = counts.get(h, 0) + 1
    assert iteration_time_for_counts(job, counts, cluster) >= t_star


def test_consolidation_on_one_server_cuts_nothing():
    job = Job("j", 0, 8, model="gpt2", parallelism=Parallelism(2, 2, 2), iterations=1)
    cluster = Cluster.homogeneous(4, 8, "A100")
    a = consolidated_assignment(job, cluster)
    assert len(set(a.values())) == 1
    b = iteration_breakdown(job, a, cluster)
    assert b.tau == b.model_time == b.tau_star == best_iteration_time(job, cluster)
    assert b.servers == 1


def test_tensor_groups_stay_inside_servers_when_consolidated():
    job = Job("j", 0, 32, model="gpt2", parallelism=Parallelism(2, 2, 8), iterations=1)
    cluster = Cluster.homogeneous(8, 8, "H100")
    a = consolidated_assignment(job, cluster)
    assert len(set(a.values())) == 4
    for r in range(2):
        for s in range(2):
            assert len({a[(r, s, k)] for k in range(8)}) == 1


def test_counts_fast_path_matches_the_assignment_it_prices():
    job = Job("j", 0, 12, model="bert-base", parallelism=Parallelism(3, 2, 2), iterations=1)
    cluster = Cluster.homogeneous(4, 8, "V100", inter_bandwidth=3e9)
    counts = [(0, 4), (2, 8)]
    a = packing_assignment(job, counts, cluster)
    assert sorted(set(a.values())) == [0, 2]
    assert iteration_time_for_counts(job, counts, cluster) == iteration_time(job, a, cluster)
    assert iteration_time_for_counts(job, {2: 8, 0: 4}, cluster) == \
        iteration_time_for_counts(job, counts, cluster)
    best = best_iteration_time(job, cluster)
    assert iteration_time_for_counts(job, [(1, 8), (3, 4)], cluster) >= best


@given(job_and_cluster(), st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_packing_search_skipping_repeats_is_the_full_search(jc, seed):
    """_best_packing prices each distinct canonical packing once; the full search over every
    candidate of _units (repeats included, first strict minimum kept) gives the same tau and
    the same packing."""
    job, cluster = jc
    rng = random.Random(seed)
    params = perf_params()
    info = perf._cluster_info(cluster)
    _, gt, _ = perf._tau_star(job, cluster, params)
    plan = perf._plan_on(job, gt, params)
    shape = (plan.config.dp, plan.config.pp, plan.config.tp)
    g, per = plan.config.gpus, cluster.max_server_gpus
    caps = []
    while sum(caps) < g:
        caps.append(rng.randint(1, per))
    caps.sort(reverse=True)
    servers = list(range(len(caps)))
    best, best_A = math.inf, None
    for order, unit in perf._units(shape):
        A = perf._pack(shape, order, unit, servers, caps)
        if A is not None:
            tau = perf._evaluate(plan, A, info, params, 0.0).model_time
            if tau < best:
                best, best_A = tau, A
    tau, A = perf._best_packing(plan, info, params, servers, caps)
    assert tau == best and (A == best_A).all()


def _partitions(n, parts, cap):
    """Every way of writing n as ``parts`` counts in 1..cap, largest first."""
    if parts == 1:
        return [(n,)] if 1 <= n <= cap else []
    return [(first,) + rest for first in range(min(n, cap), 0, -1)
            for rest in _partitions(n - first, parts - 1, first)]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("dp", [2, 3, 6, 8, 12, 16])
def test_data_parallel_tau_depends_on_the_number_of_servers_only(model, dp):
    """What CountTimes keys a data-parallel-only job by: on one GPU type, every split of its
    workers over k servers prices the same (and CountTimes gives the function's float)."""
    cluster = Cluster.homogeneous(8, 8, "V100", inter_bandwidth=3e9)
    job = Job("j", 0, dp, model=model, parallelism=Parallelism(dp, 1, 1), iterations=1)
    times = perf.CountTimes(cluster)
    for k in range(1, min(dp, 8) + 1):
        splits = _partitions(dp, k, 8)
        if not splits:      # more than 8 workers on one server
            continue
        taus = {iteration_time_for_counts(job, list(enumerate(c)), cluster) for c in splits}
        assert len(taus) == 1, (k, splits)
        for c in splits:    # on other servers, in another order: the same float
            servers = tuple(sorted(zip(range(8 - len(c), 8), reversed(c))))
            assert times(job, servers) == iteration_time_for_counts(job, servers, cluster) == min(taus)


def test_pipeline_formula_on_balanced_stages():
    """1F1B: compute = (m + pp - 1) * (F + B) for identical stages; pipeline = (m - 1) max u +
    sum u; exposed all-reduce = max(0, dp - overlap * B) for one stage."""
    G = uniform_layer_graph(8, fwd_flops=1e10, params=10**6, out_elems=10**4)
    params = perf_params()
    plan = plan_for(G, Configuration(1, 4, 1, 64), "A100", params=params)
    cluster = Cluster.homogeneous(1, 8, "A100")
    info = perf._cluster_info(cluster)
    import numpy as np

    A = np.zeros((1, 4, 1), dtype=int)
    b = perf._evaluate(plan, A, info, params, 0.0)
    m = plan.config.micro_batches
    fb = plan.fwd_time[0] + plan.bwd_time[0]
    assert b.compute == pytest.approx((m + 4 - 1) * fb)
    assert b.pipeline == pytest.approx((m - 1) * max(b.stage_cycle) + sum(b.stage_cycle))
    assert b.stage_cycle[0] == pytest.approx(fb + b.pp_time[0])
    assert b.pp_time[3] == 0 and b.dp_time == (0.0,) * 4

    plan1 = plan_for(G, Configuration(2, 1, 1, 64), "A100", params=params)
    slow = Cluster.homogeneous(2, 8, "A100", inter_bandwidth=1e8)
    A2 = np.array([[[0]], [[1]]])
    b2 = perf._evaluate(plan1, A2, perf._cluster_info(slow), params, 0.0)
    assert b2.dp_exposed == pytest.approx(max(0.0, b2.dp_time[0] - params.overlap *
                                              plan1.bwd_time[0]))
    assert b2.model_time == pytest.approx(b2.pipeline + b2.dp_exposed + b2.optimizer +
                                          b2.overhead)


def test_collective_runs_at_its_slowest_link():
    job = Job("j", 0, 16, model="gpt2", parallelism=Parallelism(16, 1, 1), iterations=1)
    slow = Cluster.homogeneous(2, 16, "A100", inter_bandwidth=1e9)
    fast = Cluster.homogeneous(2, 16, "A100", inter_bandwidth=1e11)
    x = {(r, 0, 0): r // 8 for r in range(16)}
    assert iteration_breakdown(job, x, slow).dp_time[0] > iteration_breakdown(job, x, fast).dp_time[0]
    # one worker away is as slow (bandwidth-wise) as half of them away
    y = {(r, 0, 0): 0 if r < 15 else 1 for r in range(16)}
    z = {(r, 0, 0): 0 if r < 8 else 1 for r in range(16)}
    by, bz = iteration_breakdown(job, y, slow), iteration_breakdown(job, z, slow)
    assert by.dp_time[0] == pytest.approx(bz.dp_time[0])


def test_inter_bandwidth_above_intra_never_speeds_up_a_cut():
    job = Job("j", 0, 2, model="gpt2", parallelism=Parallelism(2, 1, 1), iterations=1)
    c = Cluster.homogeneous(2, 8, "A100", inter_bandwidth=1e15)
    near = iteration_breakdown(job, {(0, 0, 0): 0, (1, 0, 0): 0}, c)
    far = iteration_breakdown(job, {(0, 0, 0): 0, (1, 0, 0): 1}, c)
    assert far.dp_time[0] >= near.dp_time[0]


def test_heterogeneous_cluster_uses_the_fastest_type_for_tau_star():
    c = Cluster((Server(8, "V100"), Server(8, "H100")))
    job = Job("j", 0, 8, model="bert-base", parallelism=Parallelism(8, 1, 1), iterations=1)
    assert best_gpu_type(job, c) == "H100"
    on_v100 = {(r, 0, 0): 0 for r in range(8)}
    on_h100 = {(r, 0, 0): 1 for r in range(8)}
    assert iteration_time(job, on_h100, c) == best_iteration_time(job, c)
    assert iteration_time(job, on_v100, c) > iteration_time(job, on_h100, c)
    mixed = {(r, 0, 0): r % 2 for r in range(8)}
    assert iteration_time(job, mixed, c) >= iteration_time(job, on_v100, c)
    assert iteration_time_for_counts(job, [(0, 8)], c) == iteration_time(job, on_v100, c)


def test_placement_objects_and_job_views_are_accepted():
    class P:
        def __init__(self, a):
            self.assignment = a

    class View:
        id, model, parallelism, batch_size, precision, gpus = ("v", "gpt2", Parallelism(2, 1, 1),
                                                                None, None, 2)

    c = Cluster.homogeneous(2, 4, "A100")
    a = {(0, 0, 0): 0, (1, 0, 0): 1}
    assert iteration_time(View(), P(a), c) == iteration_time(View(), a, c)


def test_bad_assignments_are_one_line_errors():
    job = Job("j", 0, 2, model="gpt2", parallelism=Parallelism(2, 1, 1), iterations=1)
    c = Cluster.homogeneous(2, 1, "A100")
    with pytest.raises(InvalidParameterError, match=r"no server for worker \(1, 0, 0\)"):
        iteration_time(job, {(0, 0, 0): 0}, c)
    with pytest.raises(InvalidParameterError, match="server index 5 is not one of the cluster's 2"):
        iteration_time(job, {(0, 0, 0): 0, (1, 0, 0): 5}, c)
    with pytest.raises(InvalidParameterError, match="puts 2 workers on server 0, which has 1 GPUs"):
        iteration_time(job, {(0, 0, 0): 0, (1, 0, 0): 0}, c)
    with pytest.raises(InvalidParameterError, match="maps 3 workers, the job has 2"):
        iteration_time(job, {(0, 0, 0): 0, (1, 0, 0): 1, (2, 0, 0): 1}, c)
    with pytest.raises(InvalidParameterError, match="the servers hold 1 GPUs, the job has 2"):
        iteration_time_for_counts(job, [(0, 1)], c)
    with pytest.raises(InvalidParameterError, match="server 0 has 1 GPUs, asked for 2"):
        iteration_time_for_counts(job, [(0, 2)], c)
    with pytest.raises(InvalidParameterError, match="The 'job' parameter of iteration_time"):
        iteration_time(object(), {}, c)
    with pytest.raises(InvalidParameterError, match="The 'assignment' parameter"):
        iteration_time(job, [1, 2], c)


def test_infeasible_jobs():
    big = Job("big", 0, 8, model="llama-70b", parallelism=Parallelism(8, 1, 1), iterations=1)
    with pytest.raises(Infeasible, match="^job 'big': model llama-70b .* does not fit"):
        best_iteration_time(big, Cluster.homogeneous(1, 8, "A100"))
    wide = Job("wide", 0, 8, model="gpt2", iterations=1)
    mixed = Cluster((Server(4, "A100"), Server(4, "H100")))
    with pytest.raises(Infeasible, match="needs 8 GPUs of one type"):
        best_iteration_time(wide, mixed)


def test_custom_params_change_the_answer_and_caches_can_be_cleared():
    job = Job("j", 0, 4, model="gpt2", iterations=1)
    c = Cluster.homogeneous(1, 8, "A100")
    base = best_iteration_time(job, c)
    slower = PerfParams(dense_efficiency=0.05)
    assert best_iteration_time(job, c, slower) > base
    perf.clear_caches()
    assert best_iteration_time(job, c) == base


@settings(max_examples=10)
@given(job_and_cluster(max_degree=2))
def test_worker_graph_compute_is_part_of_tau(jc):
    job, cluster = jc
    W = worker_graph(job, cluster=cluster)
    slowest = max(d["compute_time"] for _, d in W.nodes(data=True))
    plan = job_plan(job, cluster=cluster)
    assert best_iteration_time(job, cluster) >= slowest / plan.config.micro_batches
