"""Hypothesis strategies for placement tests: small weighted graphs, synthetic worker graphs
with random per-stage bytes, and free-GPU vectors that hold the job.

(Candidates for ``asrpt/testing/strategies.py``; kept here until that module's owner takes them.)
"""

from __future__ import annotations

import networkx as nx
from hypothesis import strategies as st


def ring_edges(members, per):
    n = len(members)
    if n == 2:
        return [(members[0], members[1], 2 * per)]
    if n >= 3:
        return [(members[i], members[(i + 1) % n], per) for i in range(n)]
    return []


def synthetic_worker_graph(d, p, t, tp, pp, dp, model="gpt2"):
    """A worker graph with the shape of asrpt.dnn.parallel.worker_graph and given bytes: ``tp``,
    ``dp`` per stage (per ring edge; a two-member ring gets one edge of twice that), ``pp`` per
    stage boundary."""
    W = nx.Graph(job="syn", model=model, parallelism=(d, p, t), micro_batches=1, batch_size=d,
                 precision="bf16", gpu_type="A100-80GB")
    for r in range(d):
        for s in range(p):
            for k in range(t):
                W.add_node((r, s, k), replica=r, stage=s, rank=k, compute_time=1.0, memory=1.0,
                           group=("stage", s))
    for s in range(p):
        for r in range(d):
            for u, v, b in ring_edges([(r, s, k) for k in range(t)], tp[s]):
                W.add_edge(u, v, bytes=b, kind="tp")
        for k in range(t):
            for u, v, b in ring_edges([(r, s, k) for r in range(d)], dp[s]):
                W.add_edge(u, v, bytes=b, kind="dp")
        if s < p - 1:
            for r in range(d):
                for k in range(t):
                    W.add_edge((r, s, k), (r, s + 1, k), bytes=pp[s], kind="pp")
    return W


weights = st.integers(1, 50).map(float)


@st.composite
def worker_graphs(draw, *, max_workers=8, min_workers=2):
    """Synthetic worker graphs with d * p * t in [min_workers, max_workers]."""
    shapes = [(d, p, t) for d in range(1, max_workers + 1) for p in range(1, max_workers + 1)
              for t in range(1, max_workers + 1) if min_workers <= d * p * t <= max_workers]
    d, p, t = draw(st.sampled_from(shapes))
    tp = [draw(weights) for _ in range(p)]
    dp = [draw(weights) for _ in range(p)]
    pp = [draw(weights) for _ in range(max(0, p - 1))]
    return synthetic_worker_graph(d, p, t, tp, pp, dp)


@st.composite
def small_graphs(draw, *, min_nodes=2, max_nodes=8):
    """Random simple graphs with integer bytes on every edge."""
    n = draw(st.integers(min_nodes, max_nodes))
    G = nx.Graph()
    G.add_nodes_from(range(n))
    pairs = [(u, v) for u in range(n) for v in range(u + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs)))
    for u, v in chosen:
        G.add_edge(u, v, bytes=draw(weights))
    return G


@st.composite
def free_vectors(draw, n, *, max_servers=3, max_free=None):
    """Free GPUs on up to ``max_servers`` servers (some may be 0) adding up to at least n; each
    at most ``max_free`` (default n). The shortfall is spread over the servers (bound, not
    filter); servers of ``max_free`` are added only if the drawn count cannot hold n."""
    top = max_free or n
    k = max(draw(st.integers(1, max_servers)), -(-n // top))
    free = [draw(st.integers(0, top)) for _ in range(k)]
    i = 0
    while sum(free) < n:
        if free[i % k] < top:
            free[i % k] += 1
        i += 1
    return free
