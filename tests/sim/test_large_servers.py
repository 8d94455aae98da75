"""Servers as large as the published simulators use (LIMITS["server_gpus"] = 65,536): the
Alibaba PAI simulator's flat node of 6,500 GPUs and a node at the limit load, simulate under
every policy and count placer, and place DNN jobs, in memory of the jobs and the number of
servers, never of the GPUs of a server.

Memory is compared with tracemalloc, not timed: the same jobs, scaled with the server (a job of
g GPUs on one 8-GPU server becomes a job of k g GPUs on one 8k-GPU server, gang instances k times
larger), make the same decisions on one server of 8 GPUs and on one of 65,536, so the two runs do
the same work; one list of 65,536 entries would cost over 512 KiB, far above the tolerance.
"""

import json
import tracemalloc

import pytest

import asrpt.policies._registry  # noqa: F401  (every policy registered)
from asrpt.errors import InvalidInstance
from asrpt.instance import LIMITS, Cluster, Instance, Job, Parallelism, Server, loads_instance
from asrpt.placement import make_placer, place
from asrpt.policies import policy_names
from asrpt.sim import simulate

BIG = LIMITS["server_gpus"]
COUNT_PLACERS = ("best_fit", "first_fit", "most_free", "spread", "yarn")
#: 4 KiB: a structure with one entry per GPU of the big server (512 KiB or more) is far above it.
SLACK = 4096


def jobs(n: int = 200, k: int = 1) -> tuple:
    """``n`` abstract jobs for one server of 8k GPUs: 1 to 8 GPUs (times k), a third of them in
    gang instances; arrivals close enough for jobs to wait."""
    out = []
    for i in range(n):
        g = (1, 2, 4, 8, 2, 1, 4, 3)[i % 8]
        inst = (2 if g in (2, 4, 8) else None) if i % 3 == 0 else None
        out.append(Job(f"j{i}", (i * 7) % 500 + i // 4, g * k, processing_time=20 + (i * 37) % 300,
                       instances=inst))
    return tuple(out)


def one_server(gpus: int, n: int = 200) -> Instance:
    return Instance(Cluster((Server(gpus),)), jobs(n, gpus // 8))


def peak(fn) -> tuple[int, object]:
    """(tracemalloc peak in bytes above what was held before, fn's result)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn()
        return tracemalloc.get_traced_memory()[1] - base, out
    finally:
        tracemalloc.stop()


def decisions(result) -> list:
    return [(r.id, r.start, r.completion) for r in result.records]


def test_the_limit_is_the_parallel_degree_limit():
    assert BIG == LIMITS["parallel_degree"] == 65536
    assert Server(6500).gpus == 6500 and Server(BIG).gpus == BIG
    assert Cluster.from_spec(f"1x{BIG}").total_gpus == BIG
    with pytest.raises(InvalidInstance, match="gpus: must be <= 65536"):
        Server(BIG + 1)
    with pytest.raises(InvalidInstance, match="at most 65536 GPUs"):
        Cluster.from_spec(f"2x{BIG + 1}")


@pytest.mark.parametrize("gpus", [6500, BIG])
def test_a_flat_node_loads_from_a_file(gpus):
    text = json.dumps({"cluster": {"servers": [{"gpus": gpus}]},
                       "jobs": [{"id": "a", "arrival": 0, "gpus": gpus, "processing_time": 5},
                                {"id": "b", "arrival": 0, "gpus": 8, "processing_time": 5, "instances": 2}]})
    inst = loads_instance(text)
    assert inst.cluster.server_gpus == (gpus,)
    assert simulate(inst, "fifo").record("b").start == 5


def _check_policy(name: str, placement: str, n: int) -> None:
    ref = simulate(one_server(8, n), name, placement=placement)
    res = simulate(one_server(BIG, n), name, placement=placement)
    if not name.startswith(("tiresias", "dlas")):   # (their queues count GPU-seconds)
        assert decisions(res) == decisions(ref), (name, placement)
    # (6,500 is not 812 x 8: policies that read the cluster's GPUs, A-SRPT's, may decide otherwise)
    flat = simulate(Instance(Cluster((Server(6500),)), jobs(n, 812)), name, placement=placement)
    assert len(res.records) == len(flat.records) == n and all(r.completion is not None for r in flat.records)


def test_every_policy_decides_on_a_node_at_the_limit_as_on_an_8_gpu_server():
    """Every registered policy, each under one of the count placers in turn: the scaled jobs run
    on one 65,536-GPU server and on one 6,500-GPU server (jobs of 812 x 8 = 6,496 GPUs at most),
    every job completes, and on the 65,536-GPU server the policies that read no GPU-seconds
    (Tiresias' queues do) give the 8-GPU server's decisions exactly."""
    for i, name in enumerate(policy_names()):
        _check_policy(name, COUNT_PLACERS[i % len(COUNT_PLACERS)], 30)


@pytest.mark.slow
@pytest.mark.parametrize("placement", COUNT_PLACERS)
def test_every_policy_under_every_count_placer_on_large_nodes(placement):
    for name in policy_names():
        _check_policy(name, placement, 200)


def _tiresias(k: int):
    from asrpt.policies.tiresias import Tiresias

    return Tiresias(thresholds=(3250 * k, 7200 * k))   # the default queues, in scaled GPU-seconds


MEMORY_CASES = ([(p, "best_fit") for p in ("fifo", "a-srpt", "srsf", "gavel", "themis", "tiresias")]
                + [(p, pl) for pl in COUNT_PLACERS[1:] for p in ("fifo", "a-srpt")])


@pytest.mark.parametrize("policy, placement", MEMORY_CASES)
def test_memory_does_not_grow_with_the_gpus_of_a_server(policy, placement):
    """tracemalloc peak of a 100-job run on one 65,536-GPU server against the same jobs on one
    8-GPU server (the same decisions) and, unscaled, on 64 x 8 GPUs: within a quarter plus
    4 KiB."""
    def run(inst, k):
        return simulate(inst, _tiresias(k) if policy == "tiresias" else policy, placement=placement)

    run(one_server(8, 20), 1)   # (imports and registries outside the measured spans)
    small, ref = peak(lambda: run(one_server(8, 100), 1))
    big, res = peak(lambda: run(one_server(BIG, 100), BIG // 8))
    flat, _ = peak(lambda: run(Instance(Cluster.from_spec("64x8"), jobs(100)), 1))
    assert decisions(res) == decisions(ref)
    assert big <= 1.25 * small + SLACK, (big, small)
    assert big <= 1.25 * flat + SLACK, (big, flat)


def test_a_job_as_large_as_the_server_takes_it_whole():
    inst = Instance(Cluster((Server(BIG),)),
                    (Job("all", 0, BIG, processing_time=10), Job("half", 0, BIG // 2, processing_time=5,
                                                                  instances=2)))
    for placement in COUNT_PLACERS:
        res = simulate(inst, "fifo", placement=placement, check_invariants=True)
        assert res.record("all").placement == f"0:{BIG}" and res.record("half").start == 10


DNN = (Job("t", 0, 64, model="gpt2", parallelism=Parallelism(8, 1, 8), iterations=50),
       Job("p", 5, 32, model="gpt2", parallelism=Parallelism(2, 4, 4), iterations=40),
       Job("r", 9, 16, model="resnet50", parallelism=Parallelism(16, 1, 1), iterations=60))


@pytest.mark.parametrize("placement", ["best_fit", "first_fit", "spread", "yarn", "greedy", "ilp",
                                       "ilp_tau", "kl"])
def test_dnn_jobs_are_placed_on_a_node_at_the_limit(placement):
    """The performance model and the graph placers (the ILP takes its one-server shortcut) on
    one 65,536-GPU server: the iteration times of one 128-GPU server, in the same memory."""
    on = {g: Instance(Cluster((Server(g),), "A100"), DNN) for g in (128, 6500, BIG)}
    for inst in on.values():   # (imports, and the per-cluster caches of the performance model)
        simulate(inst, "fifo", placement=placement)
    small, ref = peak(lambda: simulate(on[128], "fifo", placement=placement, check_invariants=True))
    for g in (6500, BIG):
        big, res = peak(lambda: simulate(on[g], "fifo", placement=placement, check_invariants=True))
        assert decisions(res) == decisions(ref), (placement, g)
        assert big <= 1.25 * small + SLACK, (placement, g, big, small)


@pytest.mark.parametrize("method", ["consolidate", "greedy", "kl", "random", "spread_workers", "ilp"])
def test_placement_methods_on_a_node_at_the_limit(method):
    from asrpt.dnn.parallel import worker_graph

    job = DNN[1]
    W = worker_graph(job, "A100")
    on = {g: Cluster((Server(g), Server(g)), "A100") for g in (64, BIG)}
    place(W, [64, 64], method=method, seed=0, cluster=on[64], job=job)
    small, p = peak(lambda: place(W, [64, 64], method=method, seed=0, cluster=on[64], job=job))
    big, q = peak(lambda: place(W, [BIG, BIG], method=method, seed=0, cluster=on[BIG], job=job))
    assert sum(n for _, n in q.server_gpus) == job.gpus
    if method != "random":   # (the control draws other slots from a larger pool)
        assert q.server_gpus == p.server_gpus and q.cut_bytes == p.cut_bytes and q.tau == p.tau
    assert big <= 1.25 * small + SLACK, (method, big, small)


def test_brute_force_refuses_by_the_job_not_by_the_servers():
    """Brute force enumerates servers^workers: refused alike on 64- and 65,536-GPU servers."""
    from asrpt.dnn.parallel import worker_graph
    from asrpt.errors import InvalidParameterError

    W = worker_graph(DNN[1], "A100")
    for g in (64, BIG):
        with pytest.raises(InvalidParameterError, match=r"would enumerate 2\^32 = 4294967296 assignments"):
            place(W, [g, g], method="brute_force")


def test_the_random_control_draws_slots_uniformly_on_huge_servers():
    """The random control draws n of the free slots without listing them all: on two servers of
    65,536 free GPUs each worker lands on either, about half and half, in memory of the job."""
    from asrpt.placement.heuristics import _random_slots
    from asrpt.random import as_generator

    rng = as_generator(3)
    draw = [_random_slots(rng, [BIG, BIG, 0], 64) for _ in range(50)]
    counts = [sum(int((a == h).sum()) for a in draw) for h in range(3)]
    assert counts[2] == 0 and abs(counts[0] - counts[1]) < 400 and sum(counts) == 3200
    used, _ = peak(lambda: _random_slots(rng, [BIG, BIG, 0], 64))
    assert used < 32 * 1024    # the list of the 131,072 free slots alone takes 1 MiB


def test_the_gantt_rows_of_a_node_at_the_limit_cost_what_the_jobs_hold():
    """gpu_rows gives each segment the lowest free GPUs of its server without listing all
    65,536: the same rows as on a 64-GPU server, in the same memory."""
    from asrpt.plots import gpu_rows

    inst = one_server(8, 30)
    records = list(simulate(inst, "fifo").records)
    gpu_rows(records, [8])
    (small, (bars, caps)), (big, (bars_big, caps_big)) = (
        min((peak(lambda: gpu_rows(records, [g])) for _ in range(3)), key=lambda m: m[0]) for g in (8, BIG))
    assert bars_big == bars and caps == (8,) and caps_big == (BIG,)
    assert big <= 1.25 * small + SLACK, (big, small)
