"""The exact placement: ILP == brute force, count formulation == plain, shortcuts == ILP, the
tau ILP == the performance model, lower bounds (CHK-20) below the optimum, HiGHS == CBC."""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from asrpt.dnn.parallel import worker_graph
from asrpt.dnn.perf import best_gpu_type, best_iteration_time, iteration_time
from asrpt.instance import Cluster, Job, Parallelism, Server
from asrpt.placement import (ILPPlacement, PlacementProblem, cut_lower_bound, fiedler_bound,
                             place, ring_structure, validate_placement)
from asrpt.solve import available_solvers

from ._placement_strategies import (free_vectors, small_graphs, synthetic_worker_graph,
                                    worker_graphs)

PLAIN = ILPPlacement(formulation="plain", shortcuts=False)
COUNT = ILPPlacement(formulation="count", shortcuts=False)
REL = 1e-7


def close(a, b):
    return abs(a - b) <= REL * max(1.0, abs(a), abs(b))


def gpt2(d, p, t, batch=None):
    job = Job("j", 0, d * p * t, model="gpt2", parallelism=Parallelism(d, p, t), iterations=1,
              batch_size=batch)
    return job, worker_graph(job, "A100")


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_ilp_equals_brute_force_on_small_graphs(data):
    G = data.draw(small_graphs(max_nodes=8))
    free = data.draw(free_vectors(G.number_of_nodes(), max_servers=3,
                                  max_free=max(1, G.number_of_nodes() - 1)))
    bf = place(G, free, method="brute_force")
    ilp = place(G, free, method=PLAIN)
    assert close(ilp.cut_bytes, bf.cut_bytes) and ilp.status == "optimal"
    assert validate_placement(G, free, ilp) == ()
    assert ilp.bound <= ilp.cut_bytes * (1 + REL)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_count_and_plain_equal_brute_force_on_worker_graphs(data):
    W = data.draw(worker_graphs(max_workers=8))
    n = W.number_of_nodes()
    free = data.draw(free_vectors(n, max_servers=3, max_free=max(1, n - 1)))
    bf = place(W, free, method="brute_force")
    count = place(W, free, method=COUNT)
    plain = place(W, free, method=PLAIN)
    auto = place(W, free, method="ilp")
    for p in (count, plain, auto):
        assert close(p.cut_bytes, bf.cut_bytes), (p.detail, free)
        assert p.status == "optimal" and validate_placement(W, free, p) == ()
    # the count optimum is a lower bound on every placement
    assert count.bound <= bf.cut_bytes * (1 + REL)


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_count_formulation_equals_plain_on_larger_worker_graphs(data):
    W = data.draw(worker_graphs(min_workers=9, max_workers=12))
    n = W.number_of_nodes()
    free = data.draw(free_vectors(n, max_servers=4, max_free=max(2, n // 2)))
    count = place(W, free, method=COUNT)
    plain = place(W, free, method=PLAIN)
    assert close(count.cut_bytes, plain.cut_bytes), (count.detail, free)
    assert count.detail["formulation"] in ("count", "count+plain")


@pytest.mark.parametrize("par, free", [
    ((2, 2, 4), [6, 6, 4]), ((2, 1, 4), [5, 3]), ((8, 1, 1), [3, 3, 2]), ((1, 4, 2), [3, 3, 2]),
    pytest.param((2, 2, 4), [3] * 6, marks=pytest.mark.slow),   # plain: minutes (symmetry)
    pytest.param((4, 2, 2), [3] * 6, marks=pytest.mark.slow),
])
def test_count_equals_plain_on_zoo_graphs(par, free):
    job, W = gpt2(*par) if par != (4, 2, 2) else (None, worker_graph(
        Job("b", 0, 16, model="bert-large", parallelism=Parallelism(4, 2, 2), iterations=1),
        "A100"))
    count = place(W, free, method=COUNT)
    plain = place(W, free, method=PLAIN)
    assert close(count.cut_bytes, plain.cut_bytes)
    assert count.status == plain.status == "optimal"


def test_regression_count_layout_needs_a_joint_search():
    """bert-large (4, 2, 2) on six 3-GPU servers: the count optimum is only attained when two
    rings are laid out together (a greedy ring-by-ring layout misses it); the backtracking
    layout finds it, so no plain fallback is needed."""
    W = worker_graph(Job("b", 0, 16, model="bert-large", parallelism=Parallelism(4, 2, 2),
                         iterations=1), "A100")
    p = place(W, [3] * 6, method=COUNT)
    assert p.detail["formulation"] == "count" and p.detail["realized"] == "tight"


def test_ring_structure_and_a_split_ring_costs_at_least_two_edges():
    W = synthetic_worker_graph(1, 1, 6, [5.0], [], [0.0])
    rs = ring_structure(W)
    assert rs.ring_axis == "k" and rs.n_ring == 6 and rs.pairs() == []
    p = place(W, [3, 3], method=COUNT)
    assert p.cut_bytes == 10.0  # a ring over two servers cuts exactly two edges
    two = synthetic_worker_graph(1, 1, 2, [5.0], [], [0.0])  # one edge carrying both directions
    assert place(two, [1, 1], method=COUNT).cut_bytes == 10.0
    # a graph that differs from the ideal worker graph has no ring structure: plain is used
    H = nx.Graph(W)
    H.remove_edge((0, 0, 0), (0, 0, 1))
    assert ring_structure(H) is None
    assert place(H, [3, 3], method=COUNT).detail["formulation"] == "plain"
    # uneven bytes within a stage break the symmetry too
    H = nx.Graph(W)
    H.edges[(0, 0, 0), (0, 0, 1)]["bytes"] = 7.0
    assert ring_structure(H) is None


@pytest.mark.parametrize("par, free, shortcut", [
    ((2, 1, 4), [8, 4], "one_server"),
    ((16, 1, 1), [8, 8, 8], "certified_packing"),     # a data-parallel ring: arcs, fewest servers
    ((1, 1, 8), [4, 4, 4], "certified_packing"),      # a tensor ring split over two servers
    ((2, 1, 8), [8, 8, 8], "certified_packing"),      # tensor groups fill whole servers
])
def test_shortcuts_are_taken_and_agree_with_the_ilp(par, free, shortcut):
    _, W = gpt2(*par)
    fast = place(W, free)
    assert fast.detail["formulation"] == "shortcut" and fast.detail["shortcut"] == shortcut
    assert fast.status == "optimal" and fast.bound <= fast.cut_bytes * (1 + REL)
    for method in (PLAIN, COUNT):
        assert close(place(W, free, method=method).cut_bytes, fast.cut_bytes)
    if shortcut == "one_server":
        assert fast.cut_bytes == 0.0 and fast.servers_used == 1


def test_keeping_tensor_groups_whole_is_not_always_optimal_for_the_cut():
    """Why the packing shortcut needs a certificate: with light tensor rings and heavy
    data-parallel rings, splitting the tensor rings beats keeping them whole."""
    W = synthetic_worker_graph(2, 1, 4, [1.0], [], [50.0])
    whole = {(r, 0, k): r for r in range(2) for k in range(4)}   # replica r on server r
    whole_cut = sum(b for u, v, b in W.edges(data="bytes") if whole[u] != whole[v])
    opt = place(W, [4, 4])
    assert opt.cut_bytes == 4.0 < whole_cut == 400.0   # split every tensor ring instead
    assert validate_placement(W, [4, 4], opt) == ()


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_lower_bounds_never_exceed_the_optimum(data):
    """CHK-20 (Fiedler), generalised to capacitated k-way placements, and the combined
    ring/connectivity bound used by the shortcut certificate."""
    G = data.draw(st.one_of(small_graphs(max_nodes=8), worker_graphs(max_workers=8)))
    n = G.number_of_nodes()
    free = data.draw(free_vectors(n, max_servers=3, max_free=max(1, n - 1)))
    opt = place(G, free, method="brute_force").cut_bytes
    assert fiedler_bound(G, free) <= opt * (1 + REL) + 1e-9
    assert cut_lower_bound(G, free) <= opt * (1 + REL) + 1e-9


@pytest.mark.parametrize("n", [6, 8])
def test_chk20_fiedler_bisection_bound(n):
    """CHK-20: min-bisection >= lambda_2(L) n / 4 on random weighted G(n, 0.5)."""
    rng = np.random.default_rng(n)
    ratios = []
    for _ in range(10):
        G = nx.gnp_random_graph(n, 0.5, seed=int(rng.integers(1 << 30)))
        for u, v in G.edges:
            G.edges[u, v]["bytes"] = float(rng.integers(1, 10))
        best = min(sum(b for u, v, b in G.edges(data="bytes") if (u in S) != (v in S))
                   for S in map(set, itertools.combinations(range(n), n // 2)))
        L = nx.laplacian_matrix(G, weight="bytes").toarray()
        lam2 = np.sort(np.linalg.eigvalsh(L))[1]
        assert fiedler_bound(G, [n // 2, n // 2]) == pytest.approx(lam2 * n / 4, rel=1e-6)
        assert fiedler_bound(G, [n // 2, n // 2]) <= best + 1e-9
        assert place(G, [n // 2, n // 2], method=PLAIN).cut_bytes == pytest.approx(best)
        ratios.append(fiedler_bound(G, [n // 2, n // 2]) / best if best else 1.0)
    assert max(ratios) <= 1.0 + 1e-9


@pytest.mark.skipif("cbc" not in available_solvers(), reason="PuLP's bundled CBC is missing")
@pytest.mark.parametrize("par, free", [((2, 2, 2), [3, 3, 2]), ((2, 1, 4), [3, 3, 3])])
def test_highs_and_cbc_agree(par, free):
    _, W = gpt2(*par)
    for method in (PLAIN, COUNT):
        h = place(W, free, method=method, solver="highs")
        c = place(W, free, method=method, solver="cbc")
        assert close(h.cut_bytes, c.cut_bytes) and c.detail["solver"] == "cbc"
        assert h.status == c.status == "optimal"


def test_time_limit_returns_a_valid_incumbent_with_its_status():
    _, W = gpt2(4, 4, 4)
    free = [5, 7, 3, 8, 8, 8, 8, 8, 8, 2]
    p = place(W, free, method=COUNT, time_limit=0.2)
    assert p.status in ("optimal", "time_limit")
    assert validate_placement(W, free, p) == ()
    if p.status == "time_limit" and p.bound is not None:
        assert p.bound <= p.cut_bytes * (1 + REL)


def test_gap_option_is_passed_to_the_solver():
    _, W = gpt2(2, 2, 2)
    p = place(W, [3, 3, 2], method=PLAIN, gap=0.5)
    assert p.status == "optimal" and p.detail["gap"] == 0.5 and validate_placement(W, [3, 3, 2], p) == ()


# -- objective tau --------------------------------------------------------------------------------


@pytest.mark.parametrize("par, free", [((2, 1, 2), [2, 2, 1]), ((2, 2, 1), [3, 1, 2]),
                                       ((1, 2, 2), [2, 1, 2]), ((4, 1, 1), [2, 1, 2])])
def test_tau_ilp_equals_brute_force_and_the_model(par, free):
    cluster = Cluster.homogeneous(3, 4, "A100", inter_bandwidth=1.25e9)
    job, W = gpt2(*par, batch=16)
    ilp = place(W, free, method=ILPPlacement(shortcuts=False), objective="tau", cluster=cluster,
                job=job)
    bf = place(W, free, method="brute_force", objective="tau", cluster=cluster, job=job)
    assert ilp.tau == pytest.approx(bf.tau, rel=1e-9)
    assert ilp.tau == pytest.approx(iteration_time(job, dict(ilp.assignment), cluster), rel=1e-12)
    assert ilp.bound <= ilp.tau * (1 + 1e-9) and ilp.detail["formulation"] == "tau"
    assert validate_placement(W, free, ilp, cluster, job=job) == ()
    # minimising tau is never worse in tau than minimising the cut
    cut = place(W, free, cluster=cluster, job=job)
    assert ilp.tau <= cut.tau * (1 + 1e-9)


@pytest.mark.parametrize("par, free", [((2, 1, 2), [2, 4, 1]), ((2, 2, 1), [1, 4, 2]),
                                       ((4, 1, 1), [2, 4, 2])])
def test_tau_ilp_on_mixed_gpu_types(par, free):
    cluster = Cluster((Server(4, "A100"), Server(4, "V100"), Server(2, "A100")),
                      inter_bandwidth=1.25e9)
    job = Job("j", 0, par[0] * par[1] * par[2], model="gpt2", parallelism=Parallelism(*par),
              iterations=1, batch_size=16)
    W = worker_graph(job, best_gpu_type(job, cluster))
    ilp = place(W, free, method=ILPPlacement(shortcuts=False), objective="tau", cluster=cluster,
                job=job)
    bf = place(W, free, method="brute_force", objective="tau", cluster=cluster, job=job)
    assert ilp.tau == pytest.approx(bf.tau, rel=1e-9)
    assert validate_placement(W, free, ilp, cluster, job=job) == ()


def test_tau_shortcut_when_the_consolidated_packing_reaches_tau_star():
    cluster = Cluster.homogeneous(3, 8, "A100")
    job, W = gpt2(2, 2, 4)
    p = place(W, [8, 8, 8], objective="tau", cluster=cluster, job=job)
    assert p.detail["formulation"] == "shortcut"
    assert p.tau == pytest.approx(best_iteration_time(job, cluster)) and p.bound == p.tau


def test_brute_force_refuses_large_enumerations():
    from asrpt.errors import InvalidParameterError
    from asrpt.placement import BruteForce

    _, W = gpt2(2, 2, 4)
    with pytest.raises(InvalidParameterError, match="brute force would enumerate"):
        place(W, [8, 8, 8], method=BruteForce(max_assignments=1000))


def test_problem_build_applies_the_job_and_objective():
    job, W = gpt2(2, 1, 1)
    pb = PlacementProblem.build(W, [1, 1], objective="tau", cluster=Cluster.homogeneous(2, 1, "A100"))
    assert pb.job is not None and pb.tau(np.array([0, 1])) > 0


# -- the boundary cuts of the count model ---------------------------------------------------------

NO_CUTS = ILPPlacement(formulation="count", shortcuts=False, boundary_cuts=False)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_boundary_cuts_keep_the_count_optimum(data):
    """The count model with the per-server boundary cuts has the optimum of the model without
    them (the cuts are valid for every count point), on random synthetic worker graphs."""
    W = data.draw(worker_graphs(min_workers=4, max_workers=16))
    n = W.number_of_nodes()
    free = data.draw(free_vectors(n, max_servers=5, max_free=max(2, n - 1)))
    new = place(W, free, method=COUNT)
    old = place(W, free, method=NO_CUTS)
    assert new.status == old.status == "optimal"
    assert close(new.cut_bytes, old.cut_bytes), (free, new.detail, old.detail)
    assert close(new.bound, old.bound)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_min_boundary_is_below_every_set_of_that_size(data):
    """B(k) bounds the boundary bytes of every k-worker set of the graph (brute force)."""
    from asrpt.placement.ilp import _min_boundary

    W = data.draw(worker_graphs(min_workers=3, max_workers=9))
    rs = ring_structure(W)
    nodes = list(W.nodes)
    for k in range(1, len(nodes)):
        best = min(sum(b for u, v, b in W.edges(data="bytes") if (u in S) != (v in S))
                   for S in map(set, itertools.combinations(nodes, k)))
        assert _min_boundary(rs, k) <= best * (1 + REL) + 1e-9, k


def test_boundary_cut_tightens_the_relaxation():
    """On gpt2 (8, 2, 4) over fragmented servers the LP relaxation of the count model is far
    below the optimum; the boundary cuts raise it (model only, no branch and bound)."""
    import pulp

    from asrpt.placement.ilp import _count_model
    from asrpt.solve import solve

    _, W = gpt2(8, 2, 4)
    free = [8, 7, 3, 6, 7, 0, 1, 7, 3, 0, 6, 8, 8, 2, 8, 8]
    pb = PlacementProblem.build(W, free)
    rs = ring_structure(W)
    roots = []
    for cuts in (False, True):
        prob, _, _ = _count_model(pb, rs, 1e8, cuts)
        for v in prob.variables():
            v.cat = pulp.LpContinuous
        roots.append(solve(prob).objective)
    assert roots[1] > 1.5 * roots[0]


# -- the pattern bound of the count model (issue 18) ---------------------------------------------

NO_PATTERNS = ILPPlacement(formulation="count", shortcuts=False, patterns=False)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_pattern_bound_keeps_the_count_optimum(data):
    """With the pattern bound (a cut, a warm start, or the proof by itself) the count method
    finds the optimum of the compact model alone, on random synthetic worker graphs."""
    W = data.draw(worker_graphs(min_workers=4, max_workers=16))
    n = W.number_of_nodes()
    free = data.draw(free_vectors(n, max_servers=5, max_free=max(2, n - 1)))
    new = place(W, free, method=COUNT)
    old = place(W, free, method=NO_PATTERNS)
    assert new.status == old.status == "optimal"
    assert close(new.cut_bytes, old.cut_bytes), (free, new.detail, old.detail)
    assert validate_placement(W, free, new) == ()


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_pattern_bound_is_below_the_optimum(data):
    """The Lagrangian pattern bound never exceeds the brute-force optimum (with either ring on
    the axis), and the integer master's counts cost what the count objective says; a proven
    count optimum is at most the optimum."""
    from asrpt.placement.ilp import _count_cost, _pattern_bound

    W = data.draw(worker_graphs(max_workers=8))
    n = W.number_of_nodes()
    free = data.draw(free_vectors(n, max_servers=3, max_free=max(1, n - 1)))
    from asrpt.placement.ilp import _other_axis

    bf = place(W, free, method="brute_force")
    rs = ring_structure(W)
    # either ring on the axis gives a lower bound
    for r in (rs, _other_axis(rs)):
        if r is None:
            continue
        out = _pattern_bound(PlacementProblem.build(W, free), r, None)
        assert out.bound <= bf.cut_bytes * (1 + REL) + 1e-9, r.ring_axis
        if out.counts is not None:
            assert close(out.cost, _count_cost(r, out.counts))
            assert out.cost >= out.bound * (1 - REL)
            if out.proven:
                assert out.cost <= bf.cut_bytes * (1 + REL) + 1e-9


@pytest.mark.parametrize("groups, cap, fmax", [(3, 2, 4), (4, 4, 3), (5, 8, 8), (16, 4, 8)])
def test_patterns_are_every_count_vector_once(groups, cap, fmax):
    from asrpt.placement.ilp_patterns import _patterns

    P, sums = _patterns(groups, cap, fmax)
    expected = sum(1 for v in itertools.product(range(cap + 1), repeat=groups)
                   if sum(v) <= fmax) if groups <= 5 else 719_967
    assert len(P) == expected == len(np.unique(P, axis=0))
    assert (P >= 0).all() and (P <= cap).all() and (P.sum(axis=1) == sums).all()
    assert (np.diff(sums) >= 0).all() and not P[0].any()


def test_pattern_bound_proves_64_workers_onto_free_servers_at_once():
    """vit_b_16 (8, 4, 2) onto 8 x 8 free GPUs: the compact model alone leaves a 24% gap at
    10 s; the pattern bound meets the master's laid-out counts, a proven optimum, no compact
    solve (the value is the one the compact model reaches given time: a slow test checks)."""
    job = Job("j", 0, 64, model="vit_b_16", parallelism=Parallelism(8, 4, 2), iterations=1,
              batch_size=64)
    W = worker_graph(job, "A100")
    p = place(W, [8] * 8, method=COUNT, time_limit=30)
    assert p.status == "optimal" and p.detail.get("proof") == "pattern_bound"
    assert p.cut_bytes <= p.bound * (1 + REL)
    assert validate_placement(W, [8] * 8, p) == ()


# the 64-worker cases of benchmarks/bench_placement.py (part "proof") that the compact count
# model proved within 10 s before the pattern bound: (model, (d, p, t), free GPUs)
PROVEN_BEFORE = [
    ("gpt3-1.3b", (16, 1, 4), [8] * 8),
    ("gpt2", (8, 1, 8), [8] * 8),
    ("resnet50", (2, 4, 8), [8] * 8),
    ("gpt2", (16, 2, 2), [8] * 8),
    ("vit_b_16", (16, 4, 1), [8] * 8),
    ("resnet50", (1, 8, 8), [8, 0, 6, 4, 7, 1, 8, 2, 5, 3, 8, 0, 4, 8, 3, 1]),
    ("llama-7b", (16, 2, 2), [6, 1, 5, 6, 8, 7, 6, 1, 1, 7, 7, 5, 6]),
    ("gpt2", (32, 2, 1), [5, 5, 6, 8, 5, 6, 1, 6, 1, 5, 6, 2, 3, 6, 6]),
    ("llama-7b", (32, 1, 2), [8, 4, 5, 7, 3, 7, 7, 5, 7, 4, 5, 5, 5, 4, 3]),
]


@pytest.mark.slow
@pytest.mark.parametrize("model, par, free", PROVEN_BEFORE)
def test_pattern_bound_keeps_the_64_worker_optima_proven_before(model, par, free):
    d, p, t = par
    job = Job("j", 0, 64, model=model, parallelism=Parallelism(d, p, t), iterations=1,
              batch_size=8 * d)
    W = worker_graph(job, "A100")
    new = place(W, free, method=COUNT, time_limit=120)
    old = place(W, free, method=NO_PATTERNS, time_limit=120)
    assert new.status == old.status == "optimal"
    assert close(new.cut_bytes, old.cut_bytes), (new.detail, old.detail)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_warm_start_satisfies_every_row_of_the_count_model(data):
    """A heuristic's counts, relabelled within each class of interchangeable servers, are a
    feasible point of the count model (symmetry rows included), so HiGHS keeps the start, and
    their count cost is unchanged by the relabelling."""
    from asrpt.placement.ilp import (_canonical_counts, _count_cost, _count_model,
                                     _count_start, _counts_of)

    W = data.draw(worker_graphs(min_workers=4, max_workers=16))
    n = W.number_of_nodes()
    free = data.draw(free_vectors(n, max_servers=5, max_free=max(2, n - 1)))
    pb = PlacementProblem.build(W, free)
    rs = ring_structure(W)
    from asrpt.placement.heuristics import Greedy

    a = Greedy().run(pb).assignment
    counts = _canonical_counts(pb, rs, _counts_of(pb, rs, a))
    assert close(_count_cost(rs, counts), _count_cost(rs, _counts_of(pb, rs, a)))
    prob, _, _ = _count_model(pb, rs, float(pb.ew.max()) if len(pb.ew) else 1.0)
    _count_start(prob, pb, rs, counts)
    assert all(v.varValue is not None for v in prob.variables())
    assert [name for name, c in prob.constraints.items() if not c.valid(1e-6)] == []


# -- the exact master over a growing slack, and other count optima (issue 18) --------------------

@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_exact_master_over_a_growing_slack_keeps_the_count_optimum(data):
    """The exact pattern master started on a small set of columns (its slack then grows) proves
    the same count optimum as the master over the incumbent's whole slack, and its bound stays
    below the brute-force optimum."""
    from asrpt.placement.ilp import _pattern_bound

    W = data.draw(worker_graphs(min_workers=4, max_workers=8))
    n = W.number_of_nodes()
    free = data.draw(free_vectors(n, max_servers=4, max_free=max(2, n - 1)))
    pb = PlacementProblem.build(W, free)
    rs = ring_structure(W)
    bf = place(W, free, method="brute_force")
    whole = _pattern_bound(pb, rs, None, first_exact=0)
    for first in (1, 3):
        grown = _pattern_bound(pb, rs, None, first_exact=first)
        assert grown.bound <= bf.cut_bytes * (1 + REL) + 1e-9
        assert grown.proven == whole.proven
        if whole.proven:
            assert close(grown.cost, whole.cost), (free, first)


def _count_optima(pb, rs):
    """Every optimal count vector of a tiny case, by enumerating every assignment: (cost,
    {per class of equal free GPUs: the sorted server patterns})."""
    from asrpt.placement.ilp import _count_cost, _counts_of

    groups = rs.groups()
    servers = list(pb.servers)
    best, found = None, set()
    for digits in itertools.product(range(len(servers)), repeat=pb.n):
        a = np.array([servers[d] for d in digits])
        if any((a == h).sum() > pb.free[h] for h in servers):
            continue
        counts = _counts_of(pb, rs, a)
        cost = _count_cost(rs, counts)
        key = tuple(sorted(
            (pb.free[h], tuple(counts[g].get(h, 0) for g in groups)) for h in servers
            if any(counts[g].get(h, 0) for g in groups)))
        if best is None or cost < best * (1 - 1e-9) - 1e-12:
            best, found = cost, {key}
        elif cost <= best * (1 + 1e-9) + 1e-12:
            found.add(key)
    return best, found


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_other_count_optima_are_each_tried_once(data):
    """With a test that accepts no counts, the master tries every other optimal count vector
    once (no-good cuts): 1 + alternatives = the number of optimal count vectors found by
    enumerating every assignment, each of the optimal cost and none twice."""
    from asrpt.placement.ilp import _count_cost, _pattern_bound

    W = data.draw(worker_graphs(min_workers=3, max_workers=7))
    n = W.number_of_nodes()
    free = data.draw(free_vectors(n, max_servers=3, max_free=max(2, n - 1)))
    pb = PlacementProblem.build(W, free)
    rs = ring_structure(W)
    best, optima = _count_optima(pb, rs)
    seen = []

    def accept(counts):
        seen.append(counts)
        return False

    out = _pattern_bound(pb, rs, None, accept=accept, max_alternatives=10_000)
    assert out.proven and close(out.cost, best)
    assert out.alternatives + 1 == len(seen) == len(optima), (free, len(seen), len(optima))
    groups = rs.groups()
    keys = set()
    for counts in seen:
        assert close(_count_cost(rs, counts), best)
        keys.add(tuple(sorted((pb.free[h], tuple(counts[g].get(h, 0) for g in groups))
                              for h in pb.servers if any(counts[g].get(h, 0) for g in groups))))
    assert keys == optima


# small cases whose first count optimum cannot be laid out at its cost while another optimum of
# the same count cost can (found by a random search): ((d, p, t), tensor, pipeline and data
# bytes per stage, free GPUs)
UNTIGHT_FIRST = [
    ((3, 1, 3), [1], [], [8], [5, 2, 2]),
    ((4, 1, 3), [5], [], [3], [0, 2, 2, 8]),
    ((2, 2, 3), [1, 0], [40], [5, 5], [3, 3, 6]),
]


@pytest.mark.parametrize("shape, tp, pp, dp, free", UNTIGHT_FIRST)
def test_an_untight_count_optimum_is_replaced_by_one_of_equal_cost(shape, tp, pp, dp, free):
    """The count method proves these through another count optimum (``alternatives``), with the
    plain ILP's and brute force's optimum."""
    W = synthetic_worker_graph(*shape, tp, pp, dp)
    p = place(W, free, method=COUNT)
    assert p.status == "optimal" and p.detail.get("alternatives", 0) >= 1, p.detail
    assert p.detail["formulation"] == "count"
    bf = place(W, free, method="brute_force")
    plain = place(W, free, method=PLAIN)
    assert close(p.cut_bytes, bf.cut_bytes) and close(p.cut_bytes, plain.cut_bytes)
    assert validate_placement(W, free, p) == ()
