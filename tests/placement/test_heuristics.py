"""Heuristics: valid placements through the one validator, never below the ILP, consolidation
gives cut 0 when a server has room, seeded methods are reproducible, METIS skips cleanly."""

import networkx as nx
import pytest
from hypothesis import given, settings, strategies as st

from asrpt.dnn.parallel import worker_graph
from asrpt.instance import Cluster, Job, Parallelism
from asrpt.placement import (METHODS, consolidation_servers, has_pymetis, place,
                             validate_placement)

from ._placement_strategies import free_vectors, small_graphs, worker_graphs

HEURISTICS = sorted(name for name, cls in METHODS.items() if not cls.exact and name != "metis")
if has_pymetis():
    HEURISTICS.append("metis")
REL = 1e-7


def test_the_heuristics_are_registered():
    assert {"best_fit", "greedy", "kl", "random", "spread"} <= set(HEURISTICS)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_every_heuristic_is_valid_and_never_beats_the_ilp(data):
    G = data.draw(st.one_of(worker_graphs(max_workers=12), small_graphs(max_nodes=10)))
    n = G.number_of_nodes()
    free = data.draw(free_vectors(n, max_servers=4, max_free=max(1, n - 1)))
    opt = place(G, free)
    assert opt.status == "optimal"
    for name in HEURISTICS:
        p = place(G, free, method=name, seed=3)
        assert p.status == "heuristic" and p.bound is None
        assert validate_placement(G, free, p) == (), name
        assert p.cut_bytes >= opt.cut_bytes * (1 - REL) - 1e-9, (name, free)


@pytest.mark.parametrize("method", ["best_fit", "greedy", "kl", "ilp"]
                         + (["metis"] if has_pymetis() else []))
@pytest.mark.parametrize("par, free", [((2, 1, 4), [2, 8, 4]), ((2, 2, 2), [8]),
                                       ((8, 1, 1), [4, 9, 8])])
def test_consolidation_gives_cut_zero_when_a_server_has_room(method, par, free):
    job = Job("j", 0, par[0] * par[1] * par[2], model="gpt2", parallelism=Parallelism(*par),
              iterations=1)
    W = worker_graph(job, "A100")
    p = place(W, free, method=method)
    assert p.cut_bytes == 0.0 and p.servers_used == 1


def test_best_fit_uses_the_fewest_servers_then_the_smallest_leftover():
    assert consolidation_servers([8, 4, 6], 5) == (2,)
    assert consolidation_servers([8, 4, 6, 3], 10) == (2, 1)       # 6 + 4 = 10: no leftover
    assert consolidation_servers([5, 5, 8, 2], 12) == (2, 0)       # 8 + 5: the lower index
    assert consolidation_servers([1, 1, 1], 3) == (0, 1, 2)
    assert consolidation_servers([2, 2], 5) == ()
    G = nx.empty_graph(10)
    p = place(G, [8, 4, 6, 3], method="best_fit")
    assert dict(p.server_gpus) == {2: 6, 1: 4}


def test_greedy_keeps_heavy_edges_inside_servers():
    G = nx.Graph()
    G.add_edge(0, 1, bytes=100.0)
    G.add_edge(2, 3, bytes=100.0)
    G.add_edge(1, 2, bytes=1.0)
    G.add_edge(0, 3, bytes=1.0)
    p = place(G, [2, 2], method="greedy")
    assert p.cut_bytes == 2.0


def test_kl_improves_a_bad_start_and_keeps_capacities():
    # two heavy 4-cliques joined by light edges, nodes interleaved so orders split them
    G = nx.Graph()
    G.add_nodes_from(range(8))
    A, B = [0, 2, 4, 6], [1, 3, 5, 7]
    for part in (A, B):
        for i in range(4):
            for j in range(i + 1, 4):
                G.add_edge(part[i], part[j], bytes=10.0)
    for a, b in zip(A, B):
        G.add_edge(a, b, bytes=1.0)
    kl = place(G, [4, 4], method="kl")
    assert kl.cut_bytes == 4.0 and validate_placement(G, [4, 4], kl) == ()


def test_random_is_seeded_and_spread_spreads():
    G = nx.path_graph(6)
    nx.set_edge_attributes(G, 1.0, "bytes")
    a = place(G, [3, 3, 3], method="random", seed=7)
    b = place(G, [3, 3, 3], method="random", seed=7)
    assert dict(a.assignment) == dict(b.assignment)
    assert dict(place(G, [3, 3, 3], method="spread").server_gpus) == {0: 2, 1: 2, 2: 2}


@pytest.mark.skipif(not has_pymetis(), reason="pymetis (the optional 'metis' extra) is missing")
def test_metis_respects_capacities_after_repair():
    G = nx.random_regular_graph(3, 12, seed=1)
    nx.set_edge_attributes(G, 2.0, "bytes")
    for free in ([5, 5, 2], [7, 5], [4, 4, 4]):
        p = place(G, free, method="metis", seed=0)
        assert validate_placement(G, free, p) == ()


def test_heuristics_report_tau_with_a_cluster():
    job = Job("j", 0, 8, model="gpt2", parallelism=Parallelism(2, 2, 2), iterations=1)
    W = worker_graph(job, "A100")
    cluster = Cluster.homogeneous(3, 4, "A100")
    for name in HEURISTICS:
        p = place(W, [4, 4, 4], method=name, cluster=cluster, job=job, seed=0)
        assert validate_placement(W, [4, 4, 4], p, cluster, job=job) == ()
    # best_fit chooses its packing by tau when asked to
    p = place(W, [4, 4, 4], method="best_fit", objective="tau", cluster=cluster, job=job)
    assert p.tau <= place(W, [4, 4, 4], method="spread", cluster=cluster, job=job).tau
