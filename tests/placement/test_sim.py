"""Graph placements in the simulator: registration, invariants on a DNN instance, fallback for
abstract jobs, the cache over interchangeable servers."""

import pytest

from asrpt.instance import Cluster, Instance, Job, Parallelism, Server
from asrpt.placement import Placement, has_pymetis, validate_placement
from asrpt.placement.sim import GraphPlacer
from asrpt.sim import simulate
from asrpt.sim.placer import PLACERS, make_placer
from asrpt.sim.view import JobView


def dnn_instance():
    jobs = (
        Job("a", 0, 8, model="gpt2", parallelism=Parallelism(2, 1, 4), iterations=30),
        Job("b", 0, 6, model="gpt2", parallelism=Parallelism(3, 1, 2), iterations=20),
        Job("c", 1, 4, model="bert-base", parallelism=Parallelism(2, 2, 1), iterations=40),
        Job("d", 2, 12, model="gpt2", parallelism=Parallelism(3, 2, 2), iterations=10),
        Job("e", 3, 2, processing_time=5),
    )
    return Instance(Cluster.homogeneous(3, 8, "A100", inter_bandwidth=12.5e9), jobs)


def test_graph_placers_are_registered_by_importing_placement():
    for name in ("ilp", "ilp_tau", "greedy", "metis", "kl"):
        assert name in PLACERS
        assert make_placer(name).name == name
    for name in ("first_fit", "most_free", "best_fit", "spread"):
        assert not issubclass(PLACERS[name], GraphPlacer)


@pytest.mark.parametrize("placement", ["ilp", "ilp_tau", "greedy", "kl"]
                         + (["metis"] if has_pymetis() else []))
def test_simulate_with_graph_placement_keeps_the_invariants(placement):
    inst = dnn_instance()
    res = simulate(inst, "a-srpt", placement=placement, check_invariants=True)
    assert set(res.completion_times) == {"a", "b", "c", "d", "e"}
    assert all(c is not None for c in res.completion_times.values())
    assert all(r.beta >= 1 - 1e-9 for r in res.records)


def view(job: Job, index=0) -> JobView:
    return JobView(index, job.id, (), job.arrival, job.gpus, 1, job.is_abstract, 1.0,
                   instances=job.instances, model=job.model, parallelism=job.parallelism,
                   batch_size=job.batch_size, precision=job.precision)


def test_allocation_carries_the_placement_and_its_tau():
    cluster = Cluster.homogeneous(3, 8, "A100", inter_bandwidth=12.5e9)
    job = Job("g", 0, 12, model="gpt2", parallelism=Parallelism(3, 1, 4), iterations=1)
    placer = make_placer("ilp")
    alloc = placer.allocate(view(job), [8, 6, 4], cluster)
    p = alloc.detail
    assert isinstance(p, Placement) and alloc.servers == p.server_gpus and alloc.tau == p.tau
    from asrpt.dnn.parallel import worker_graph
    from asrpt.dnn.perf import best_gpu_type

    W = worker_graph(job, best_gpu_type(job, cluster))
    assert validate_placement(W, [8, 6, 4], p, cluster, job=job) == ()
    assert placer.allocate(view(job), [4, 4, 2], cluster) is None


def test_cache_maps_placements_onto_interchangeable_servers():
    cluster = Cluster.homogeneous(4, 8, "A100")
    job = Job("g", 0, 12, model="gpt2", parallelism=Parallelism(3, 1, 4), iterations=1)
    placer = make_placer("ilp")
    first = placer.allocate(view(job), [8, 0, 4, 4], cluster)
    second = placer.allocate(view(job), [4, 8, 0, 4], cluster)
    assert placer.misses_ == 1 and placer.hits_ == 1
    free1, free2 = [8, 0, 4, 4], [4, 8, 0, 4]
    # the same multiset of (free GPUs, GPUs used), mapped onto the servers at hand
    assert sorted((free1[h], g) for h, g in first.servers) == \
        sorted((free2[h], g) for h, g in second.servers)
    assert first.tau == pytest.approx(second.tau)
    assert first.detail.cut_bytes == second.detail.cut_bytes
    assert all(free2[h] > 0 for h in second.detail.assignment.values())
    # a different signature is a miss
    placer.allocate(view(job), [8, 8, 0, 0], cluster)
    assert placer.misses_ == 2


def test_abstract_and_instance_jobs_fall_back_to_count_best_fit():
    cluster = Cluster.homogeneous(2, 4)
    placer = make_placer("greedy")
    alloc = placer.allocate(view(Job("x", 0, 3, processing_time=1)), [4, 4], cluster)
    assert alloc.servers == ((0, 3),) and alloc.tau is None
    inst = Job("y", 0, 4, model="gpt2", parallelism=Parallelism(4, 1, 1), iterations=1,
               instances=2)
    alloc = placer.allocate(view(inst), [3, 3], Cluster.homogeneous(2, 4, "A100"))
    assert alloc.servers == ((0, 2), (1, 2))


def test_graph_placer_parameters_are_validated_where_work_starts():
    from asrpt.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="unknown placement method 'nope'"):
        make_placer(GraphPlacer(method="nope"))
    with pytest.raises(InvalidParameterError, match="The 'time_limit' parameter"):
        make_placer(GraphPlacer(time_limit=-1))
    p = make_placer(GraphPlacer(method="kl", objective="tau", time_limit=None))
    assert type(p)(**p.get_params()).get_params() == p.get_params()


def test_mixed_gpu_cluster_with_ilp_tau():
    cluster = Cluster((Server(4, "A100"), Server(8, "V100"), Server(4, "A100")),
                      inter_bandwidth=1.25e9)
    jobs = (Job("a", 0, 4, model="gpt2", parallelism=Parallelism(2, 1, 2), iterations=5,
                batch_size=16),
            Job("b", 0, 8, model="gpt2", parallelism=Parallelism(4, 1, 2), iterations=5,
                batch_size=16))
    res = simulate(Instance(cluster, jobs), "fifo", placement="ilp_tau", check_invariants=True)
    assert all(c is not None for c in res.completion_times.values())
