"""asrpt.dnn.parallel: configurations, the exact stage partition (CHK-21), memory and the worker
graph."""

import itertools
import math
from fractions import Fraction

import networkx as nx
import pytest
from hypothesis import given, strategies as st

from asrpt.dnn.parallel import (Configuration, MEMORY_USABLE_FRACTION, _minmax_partition,
                                default_micro_batches, job_configuration, job_plan,
                                layer_times, partition_stages, plan_for, stage_partition,
                                uniform_layer_graph, worker_graph, worker_graph_for)
from asrpt.errors import Infeasible, InvalidParameterError
from asrpt.instance import Cluster, Job, Parallelism


def brute_force(times, k):
    """min over all C(L-1, k-1) cut sets of the largest stage sum."""
    L = len(times)
    best = None
    for cuts in itertools.combinations(range(1, L), k - 1):
        b = (0,) + cuts + (L,)
        worst = max(sum(times[b[s]:b[s + 1]]) for s in range(k))
        best = worst if best is None else min(best, worst)
    return best


chains = st.lists(st.integers(0, 50), min_size=1, max_size=11)


@given(chains, st.data())
def test_chk21_partition_equals_brute_force(times, data):
    """CHK-21: the DP's bottleneck equals brute force over all cut sets (L <= 11, exact ints)."""
    k = data.draw(st.integers(1, len(times)))
    bounds, b = partition_stages(times, k)
    assert b == brute_force(times, k)
    assert bounds[0] == 0 and bounds[-1] == len(times) and len(bounds) == k + 1
    assert all(bounds[s] < bounds[s + 1] for s in range(k)), "stages are non-empty"
    assert max(sum(times[bounds[s]:bounds[s + 1]]) for s in range(k)) == b


@given(chains, st.data())
def test_chk21_bounds_and_monotone_in_k(times, data):
    """CHK-21: max(max t, T/k) <= B* <= T/k + max t, and B* is non-increasing in k."""
    k = data.draw(st.integers(1, len(times)))
    _, b = partition_stages(times, k)
    T, tmax = sum(times), max(times)
    assert max(tmax, Fraction(T, k)) <= b <= Fraction(T, k) + tmax
    if k > 1:
        assert partition_stages(times, k - 1)[1] >= b


@given(st.lists(st.floats(0, 1e3, allow_nan=False), min_size=1, max_size=9), st.data())
def test_chk21_floats_close_to_brute_force(times, data):
    k = data.draw(st.integers(1, len(times)))
    assert math.isclose(partition_stages(times, k)[1], brute_force(times, k), rel_tol=1e-12,
                        abs_tol=1e-9)


def test_partition_exact_with_fractions():
    times = [Fraction(1, 3), Fraction(1, 6), Fraction(1, 2), Fraction(1, 7)]
    bounds, b = partition_stages(times, 2)
    assert b == brute_force(times, 2) and isinstance(b, Fraction)


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(0, 5)),
                min_size=1, max_size=8), st.data())
def test_memory_constrained_partition_equals_brute_force(layers, data):
    """The memory-aware recurrence is exact: stage s may hold [i, j) only if
    state(i..j) + inflight_s * act(i..j) <= cap (inflight falls with s, as under 1F1B)."""
    L = len(layers)
    k = data.draw(st.integers(1, L))
    cap = data.draw(st.integers(0, 60))
    times = [t for t, _, _ in layers]
    P = list(itertools.accumulate(times, initial=0))
    PS = list(itertools.accumulate((m for _, m, _ in layers), initial=0))
    PA = list(itertools.accumulate((a for _, _, a in layers), initial=0))
    inflight = [k - s for s in range(k)]
    limits = [[PS[i] + f * PA[i] for i in range(L + 1)] for f in inflight]
    bounds, b = _minmax_partition([P] * k, k, limits, cap)
    best = math.inf
    for cuts in itertools.combinations(range(1, L), k - 1):
        bb = (0,) + cuts + (L,)
        if all(limits[s][bb[s + 1]] - limits[s][bb[s]] <= cap for s in range(k)):
            best = min(best, max(P[bb[s + 1]] - P[bb[s]] for s in range(k)))
    assert b == best
    if best != math.inf:
        assert all(limits[s][bounds[s + 1]] - limits[s][bounds[s]] <= cap for s in range(k))


def test_partition_errors():
    with pytest.raises(InvalidParameterError, match="cannot cut 2 layers into 3"):
        partition_stages([1, 2], 3)
    with pytest.raises(InvalidParameterError, match=r"times\[1\] must be a finite non-negative"):
        partition_stages([1, -2], 1)
    with pytest.raises(InvalidParameterError, match=r"times\[0\] must be a number"):
        partition_stages(["a"], 1)
    with pytest.raises(InvalidParameterError, match="The 'k' parameter"):
        partition_stages([1], 0)


def test_configuration_rules():
    assert default_micro_batches(1, 100) == 1
    assert default_micro_batches(4, 100) == 16
    assert default_micro_batches(4, 3) == 3
    c = Configuration(3, 2, 2, 10)
    assert (c.gpus, c.replica_batch, c.micro_batches, c.micro_batch_samples) == (12, 4, 4, 1)
    assert Configuration(1, 4, 1, 64, micro_batches=2).micro_batch_size == 32
    assert c.parallelism == Parallelism(3, 2, 2)
    with pytest.raises(InvalidParameterError, match="batch size 2 is smaller than dp = 4"):
        Configuration(4, 1, 1, 2)
    with pytest.raises(InvalidParameterError, match="'micro_batches' parameter of Configuration"):
        Configuration(1, 2, 1, 4, micro_batches=5)
    with pytest.raises(InvalidParameterError, match="'tp' parameter of Configuration"):
        Configuration(1, 1, 0, 4)
    with pytest.raises(InvalidParameterError, match="'dp' parameter of Configuration"):
        Configuration(True, 1, 1, 4)


def test_stage_partition_balances_and_reports_memory():
    G = uniform_layer_graph(12, fwd_flops=1e10, params=10**8, out_elems=10**5)
    part = stage_partition(G, Configuration(1, 4, 1, 16), "A100")
    assert part.bounds == (0, 3, 6, 9, 12)
    assert part.capacity == pytest.approx(MEMORY_USABLE_FRACTION * 80 * 2**30)
    # 3 layers x 1e8 params x 16 bytes per stage; stashed activations fall with the stage index
    assert part.state_memory == pytest.approx((4.8e9,) * 4)
    acts = part.activation_memory
    assert acts[0] > acts[1] > acts[2] > acts[3] > 0
    assert part.memory == tuple(a + b for a, b in zip(part.state_memory, acts))


def test_memory_falls_with_tp_and_pp():
    G = uniform_layer_graph(8, fwd_flops=1e9, params=10**7, out_elems=10**5)
    m = lambda dp, pp, tp: max(stage_partition(G, Configuration(dp, pp, tp, 64), "H100").memory)
    assert m(1, 1, 2) < m(1, 1, 1)
    assert m(1, 2, 1) < m(1, 1, 1)
    assert m(1, 4, 2) < m(1, 2, 2)


def test_memory_aware_partition_moves_layers_when_balanced_cut_does_not_fit():
    # One heavy-parameter layer first: the compute-balanced cut puts it with a neighbour and
    # overflows; the memory-aware partition isolates it.
    G = uniform_layer_graph(4, fwd_flops=1e9, params=10**6, out_elems=10)
    G.nodes["l0"]["params"] = 4 * 10**9   # 64 GB of state alone on an 80 GB part (77 usable)
    G.nodes["l1"]["params"] = 10**9       # 16 GB more would overflow
    G.nodes["l3"]["fwd_flops"] = 10.0     # make the balanced cut (0, 2, 4) attractive
    cfg = Configuration(1, 2, 1, 8)
    part = stage_partition(G, cfg, "H100")
    assert part.bounds == (0, 1, 4)
    assert max(part.memory) <= part.capacity


def test_infeasible_configuration_names_memory_and_gpu():
    G = uniform_layer_graph(6, fwd_flops=1e9, params=10**9, out_elems=10)
    with pytest.raises(Infeasible, match=r"model uniform \(dp=1 pp=1 tp=1, batch 8, 1 micro-batch, "
                                         r"bf16\) does not fit in GPU memory: the compute-balanced "
                                         r"stages need 96\.0 GB per GPU \(stage 0\) .* each H100 "
                                         r"has 77\.3 GB usable of 85\.9 GB"):
        stage_partition(G, Configuration(1, 1, 1, 8), "H100")
    with pytest.raises(InvalidParameterError, match="pp = 7 exceeds the 6 layers of uniform"):
        stage_partition(G, Configuration(1, 7, 1, 8), "H100")
    with pytest.raises(InvalidParameterError, match="precision bf16 is not supported by V100"):
        stage_partition(G, Configuration(1, 6, 1, 8), "V100", "bf16")
    with pytest.raises(InvalidParameterError, match="unknown precision 'fp9'"):
        stage_partition(G, Configuration(1, 6, 1, 8), "V100", "fp9")


def test_job_infeasible_names_the_job():
    job = Job("big", 0, 8, model="llama-70b", parallelism=Parallelism(8, 1, 1), iterations=1)
    with pytest.raises(Infeasible, match=r"^job 'big': model llama-70b \(dp=8 pp=1 tp=1, .*"
                                         r"does not fit in GPU memory.*each A100-80GB has"):
        worker_graph(job, "A100")


def test_layer_times_roofline():
    G = uniform_layer_graph(2, fwd_flops=1e12, params=0, out_elems=1)
    f, b = layer_times(G, 1, "V100", "fp32")
    f2, b2 = layer_times(G, 2, "V100", "fp32")
    f_tp, _ = layer_times(G, 2, "V100", "fp32", tp=2)
    assert (b > f).all() and (f2 > f).all()
    assert f_tp == pytest.approx(f)              # half the work of twice the samples
    assert f2[0] - f[0] == pytest.approx(f[0] - (f[0] - (f2[0] - f[0])))  # linear in work
    with pytest.raises(InvalidParameterError, match="The 'samples' parameter"):
        layer_times(G, 0, "V100")


def test_plan_totals_and_default_batch():
    job = Job("j", 0, 8, model="gpt2", parallelism=Parallelism(2, 2, 2), iterations=1)
    c = job_configuration(job)
    assert c.batch_size == 512 and c.micro_batches == 8   # zoo default batch; min(4 pp, 256)
    plan = job_plan(job, "H100")
    from asrpt.dnn import layer_graph, total_flops, total_params

    G = layer_graph("gpt2")
    assert plan.params_total == total_params(G)
    assert plan.flops_per_iteration == pytest.approx(total_flops(G, 512))
    assert sum(plan.stage_params) * 2 == pytest.approx(plan.params_total)  # tp = 2
    assert len(plan.boundary_bytes) == 1 and plan.boundary_bytes[0] > 0
    assert all(n > 0 for n in plan.tp_allreduces)


def test_micro_batches_double_until_the_job_fits():
    job = Job("j", 0, 8, model="llama-7b", parallelism=Parallelism(1, 4, 2), iterations=1,
              batch_size=256)
    plan = job_plan(job, "H100")
    assert plan.config.micro_batches > default_micro_batches(4, 256)
    assert max(plan.memory) <= plan.partition.capacity


def test_worker_graph_shape_and_attributes():
    G = uniform_layer_graph(6, fwd_flops=1e9, params=1000, out_elems=100)
    d, p, t = 3, 2, 4
    plan = plan_for(G, Configuration(d, p, t, 24), "A100")
    W = worker_graph_for(plan, "job7")
    assert W.number_of_nodes() == d * p * t
    kinds = {}
    for _, _, k in W.edges(data="kind"):
        kinds[k] = kinds.get(k, 0) + 1
    assert kinds == {"tp": d * p * t, "pp": d * (p - 1) * t, "dp": p * t * d}
    assert W.graph == {"job": "job7", "model": "uniform", "parallelism": (3, 2, 4),
                       "micro_batches": plan.config.micro_batches, "batch_size": 24,
                       "precision": "bf16", "gpu_type": "A100-80GB", "stage_bounds": (0, 3, 6)}
    m = plan.config.micro_batches
    for (r, s, k), a in W.nodes(data=True):
        assert (a["replica"], a["stage"], a["rank"], a["group"]) == (r, s, k, ("stage", s))
        assert a["memory"] == plan.memory[s]
        assert a["compute_time"] == pytest.approx(m * (plan.fwd_time[s] + plan.bwd_time[s]))
    # a DP ring over 3 replicas: each edge carries 2 (d-1)/d of the stage's gradient bytes
    e = W.edges[(0, 1, 2), (1, 1, 2)]
    assert e["kind"] == "dp" and e["bytes"] == pytest.approx(2 * 2 / 3 * plan.grad_bytes[1])
    # pipeline edges carry activations forward and gradients backward for every micro-batch
    assert W.edges[(2, 0, 3), (2, 1, 3)]["bytes"] == pytest.approx(2 * m * plan.boundary_bytes[0])
    assert plan.boundary_bytes[0] == pytest.approx(100 * 24 / 3 / m * 2 / 4)
    with pytest.raises(nx.NetworkXError):
        W.add_node("x")


def test_two_member_rings_are_one_edge_with_both_directions():
    G = uniform_layer_graph(2, params=100)
    plan = plan_for(G, Configuration(2, 1, 1, 2), "V100")
    W = worker_graph_for(plan)
    assert W.number_of_edges() == 1
    assert W.edges[(0, 0, 0), (1, 0, 0)]["bytes"] == pytest.approx(2 * plan.grad_bytes[0])


def test_worker_graph_cached_and_big_graph_is_complete():
    job = Job("big", 0, 512, model="llama-70b", parallelism=Parallelism(8, 8, 8), iterations=1)
    W = worker_graph(job, "H200")
    assert worker_graph(job, "H200") is W
    assert W.number_of_nodes() == 512 and W.number_of_edges() == 512 + 448 + 512
    assert nx.is_connected(W)
    assert worker_graph(job, cluster=Cluster.homogeneous(64, 8, "H200")) is W
