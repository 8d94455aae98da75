"""Tiresias 2D-Gittins (Gu et al., NSDI'19): index values by hand, order within a queue, online
learning and its cold start."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.policies import make_policy
from asrpt.policies.gittins import TiresiasGittins, gittins_index
from asrpt.sim import simulate


def inst(cluster, *jobs):
    return Instance(cluster, tuple(Job(j[0], j[1], j[2], processing_time=j[3]) for j in jobs))


@pytest.mark.parametrize("attained, quantum, expected", [
    # samples {1, 2, 4}: G(a, D) = P(S - a <= D | S > a) / E[min(S - a, D) | S > a]
    (0, 2, (2 / 3) / ((1 + 2 + 2) / 3)),  # S <= 2 w.p. 2/3; min(S, 2) = 1, 2, 2 -> 2/5
    (1, 2, (1 / 2) / ((1 + 2) / 2)),      # S in {2, 4}: S - 1 = 1, 3 -> 1/3
    (2, 2, 1 / 2),                        # S = 4: S - 2 = 2 <= 2 surely, E = 2
    (3, 2, 1.0),                          # S = 4: S - 3 = 1
    (4, 2, 0.0),                          # beyond the support
    (0, 1, (1 / 3) / 1),                  # S <= 1 w.p. 1/3; min(S, 1) = 1 always
    (0.5, 1, (1 / 3) / ((0.5 + 1 + 1) / 3)),  # S - 0.5 = 0.5, 1.5, 3.5 -> 2/5
])
def test_index_matches_the_hand_computation(attained, quantum, expected):
    assert gittins_index([4, 1, 2], attained, quantum=quantum) == pytest.approx(expected, rel=1e-12)
    assert gittins_index(np.array([1.0, 2.0, 4.0]), attained, quantum=quantum) == pytest.approx(expected, rel=1e-12)


def test_index_raise_paths():
    with pytest.raises(InvalidParameterError, match="'samples' parameter of gittins_index"):
        gittins_index([], 0)
    with pytest.raises(InvalidParameterError, match="'samples' parameter of gittins_index"):
        gittins_index([1, -2], 0)
    with pytest.raises(InvalidParameterError, match="'quantum' parameter of gittins_index"):
        gittins_index([1], 0, quantum=0)


# One GPU. a (0, P=8), b (2, P=2); one queue in practice (threshold 100), quantum 2.
PAIR = inst(Cluster.homogeneous(1, 1), ("a", 0, 1, 8), ("b", 2, 1, 2))


def test_higher_index_preempts_within_a_queue():
    # samples {2, 8}: at t=2, a has a = 2 (given S > 2, S = 8: index 0) and b has a = 0 (index
    # (1/2) / ((2 + 2) / 2) = 1/4): b preempts a, runs 2-4; a ends at 10.
    res = simulate(PAIR, TiresiasGittins(thresholds=(100,), quantum=2, samples=[2, 8]),
                   check_invariants=True)
    assert res.completion_times == {"a": 10, "b": 4}
    # 2D-LAS keeps the running job first within the queue: a 0-8, b 8-10.
    assert simulate(PAIR, "tiresias:thresholds=[100]").completion_times == {"a": 8, "b": 10}


# One GPU, quantum 2. X (0, P=1), Y (0, P=4), Z (2, P=1).
TRIO = inst(Cluster.homogeneous(1, 1), ("X", 0, 1, 1), ("Y", 0, 1, 4), ("Z", 2, 1, 1))


def test_online_learning_from_completed_jobs():
    # samples=None. t=0: no samples, every index 0: arrival then id order, X runs 0-1.
    # t=1: X's GPU-time 1 is learned; Y runs. t=2: Y has a = 1, beyond the support {1}: index 0;
    # Z has a = 0: index 1 / 1 = 1: Z preempts Y and runs 2-3; Y ends 3-6.
    res = simulate(TRIO, "tiresias-gittins:thresholds=[100]:quantum=2", check_invariants=True)
    assert res.completion_times == {"X": 1, "Y": 6, "Z": 3}
    assert res.policy_data == {"promotions": 0, "table_size": 3}


def test_given_samples_are_not_updated_and_ties_go_to_the_earlier_arrival():
    # samples {100}: at t=2 both Y (a = 1) and Z (a = 0) have index 0 (nothing ends within the
    # quantum); the earlier arrival Y keeps running: Y 1-5, Z 5-6.
    res = simulate(TRIO, "tiresias-gittins:thresholds=[100]:quantum=2:samples=[100]", check_invariants=True)
    assert res.completion_times == {"X": 1, "Y": 5, "Z": 6}
    assert res.policy_data["table_size"] == 1


def test_parameters():
    p = make_policy("tiresias-gittins")
    assert (p.thresholds, p.quantum, p.samples, p.promote_knob) == ((3250.0, 7200.0), 3250.0, None, 0.0)
    assert not p.clairvoyant
    q = TiresiasGittins(samples=np.array([1.0, 2.0]))
    assert q == type(q)(**q.get_params()) and q != TiresiasGittins(samples=[1.0, 3.0])
    with pytest.raises(InvalidParameterError, match="'samples' parameter of TiresiasGittins"):
        make_policy("tiresias-gittins:samples=[0]")
    with pytest.raises(InvalidParameterError, match="'quantum' parameter of TiresiasGittins"):
        make_policy("tiresias-gittins:quantum=0")


# -- the running jobs' entries as arrays (_QueueIndexRun) ---------------------------------------
_QUEUES = st.integers(0, 2)
_NEGATIVES = st.sampled_from([-1.5, -0.5, -0.25, -0.0, 0.0])   # ties, and -0.0 against 0.0


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_queue_index_run_reads_as_its_sorted_tuples(data):
    """The array run of 2D-Gittins's running entries ``((queue, -index, arrival, key), index)``,
    merged with sorted waiting entries of the same form (ties on queue and index broken by
    arrival rank, skipped jobs left out), lists the jobs as the merge of the sorted tuples does,
    and its keep check answers as the tuples' does."""
    from asrpt.policies._incremental import MergedOrder, selects_running
    from asrpt.policies._running import merged_chunks
    from asrpt.policies.gittins import _QueueIndexRun

    from .test_running_arrays import dnn_trace, table_of

    views, table, by_index = table_of(dnn_trace(24, data.draw(st.integers(0, 50), label="trace")))
    chosen = data.draw(st.lists(st.sampled_from(range(len(views))), unique=True, max_size=20), label="jobs")
    cut = data.draw(st.integers(0, len(chosen)), label="running")
    run, wait = chosen[:cut], chosen[cut:]
    key = {i: (data.draw(_QUEUES), data.draw(_NEGATIVES)) for i in chosen}
    skip = set(data.draw(st.lists(st.sampled_from(run), unique=True, max_size=2))) if run else set()
    entry = lambda i: ((*key[i], views[i].arrival, views[i].key), i)
    running, waiting = sorted(map(entry, run)), sorted(map(entry, wait))
    arrays = _QueueIndexRun(np.array([key[i][0] for i in run], dtype=np.intp),
                            np.array([key[i][1] for i in run]), np.array(run, dtype=np.intp), table)
    for left_out in ((), skip):
        want = [i for _, i in sorted(running + waiting) if i not in left_out]
        got = MergedOrder(arrays, waiting, by_index, skip=left_out, merge=merged_chunks)
        assert [v.index for v in got] == want
        budget = sum(views[i].gpus for i in run if i not in left_out) + data.draw(st.integers(0, 8))
        assert (selects_running(arrays, waiting, by_index, budget, left_out)
                == selects_running(running, waiting, by_index, budget, left_out))


@settings(max_examples=200, deadline=None)
@given(samples=st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.25, 7.0, 40.0, 1e6]), max_size=12),
       attained=st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 6.9, 7.0, 39.0, 1e6, 2e6]), min_size=1, max_size=8),
       quantum=st.sampled_from([0.5, 1.0, 3.25, 100.0]))
def test_the_index_array_is_the_index_of_each(samples, attained, quantum):
    """``_EmpiricalGittins.indices`` (the numpy form 2D-Gittins keys its running jobs with) gives
    ``index`` of each service bit for bit: services on sample values, beyond the support (0),
    and an empty table (every index 0)."""
    from asrpt.policies.gittins import _EmpiricalGittins

    table = _EmpiricalGittins(samples)
    got = table.indices(np.array(attained), quantum)
    want = [table.index(a, quantum) for a in attained]
    assert got.tolist() == want
    assert all(np.signbit(got) == np.signbit(want))
