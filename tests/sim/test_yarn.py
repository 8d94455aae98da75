"""The Tiresias simulator's yarn placement (issue 19)."""

from asrpt.instance import Cluster, Instance, Job
from asrpt.sim import simulate
from asrpt.sim.placer import yarn_allocation


def test_small_jobs_take_the_first_node_that_holds_them():
    assert yarn_allocation([1, 3, 8], [8, 8, 8], None, 3) == ((1, 3),)
    assert yarn_allocation([1, 2, 2], [8, 8, 8], None, 3) is None  # never split below a node


def test_large_jobs_take_whole_idle_nodes_plus_one_remainder_node():
    assert yarn_allocation([8, 5, 8, 8], [8] * 4, None, 12) == ((0, 8), (1, 4))
    assert yarn_allocation([8, 3, 8, 8], [8] * 4, None, 12) == ((0, 8), (2, 4))
    assert yarn_allocation([8, 7, 7, 8], [8] * 4, None, 16) == ((0, 8), (3, 8))
    assert yarn_allocation([8, 7, 7, 7], [8] * 4, None, 16) is None


def test_a_job_never_spans_switches():
    # two switches of two 4-GPU nodes: 2 + 2 idle GPUs in switch 0 do not make room for 4 ... 8
    assert yarn_allocation([2, 2, 4, 4], [4] * 4, 2, 4) == ((2, 4),)
    assert yarn_allocation([4, 0, 4, 0], [4] * 4, 2, 8) is None
    assert yarn_allocation([4, 0, 4, 0], [4] * 4, None, 8) == ((0, 4), (2, 4))


def test_the_yarn_placer_in_a_run():
    inst = Instance(Cluster.from_spec("2x2x4"), (Job("a", 0, 4, processing_time=5), Job("b", 0, 4, processing_time=5),
                                                Job("c", 0, 8, processing_time=5)))
    res = simulate(inst, "fifo-strict", placement="yarn", check_invariants=True)
    assert [res.record(j).placement for j in "abc"] == ["0:4", "1:4", "2:4;3:4"]
    assert [res.record(j).start for j in "abc"] == [0, 0, 0]
