"""The event-sequence LP oracle (tests/offline/_sequence_oracle.py) on instances whose continuous
preemptive optimum of P | size_j, r_j, pmtn | sum w_j C_j is known by hand."""

from fractions import Fraction
from pathlib import Path

import pytest

from asrpt.instance import Cluster, Instance, Job
from asrpt.loading import load_instance

from ._sequence_oracle import event_sequences, oracle_opt, oracle_opt_instance, rational_guess

ROOT = Path(__file__).resolve().parents[2]


def _valid_sequence(seq, releases):
    """Releases in sorted order, merged; each job completes exactly once, after its release."""
    n = len(releases)
    rel_times = [v for kind, v in seq if kind == "r"]
    assert rel_times == sorted(set(releases))
    comps = [v for kind, v in seq if kind == "c"]
    assert sorted(comps) == list(range(n))
    released = set()
    for kind, v in seq:
        if kind == "r":
            released |= {j for j in range(n) if releases[j] == v}
        else:
            assert v in released


# --- the known optima ---------------------------------------------------------------------------


def test_fractional_sharing_m4_opt_37():
    # Three width-2 size-1 jobs share 4 GPUs so that they finish at 1, 1.5, 1.5 (sum 4, area 1.5),
    # then the two width-4 size-10 jobs finish at 11.5 and 21.5: 4 + 33 = 37 (the integral
    # 1, 1, 2 start gives 38).
    releases, widths = [0] * 5, [2, 2, 2, 4, 4]
    sizes, weights = [1, 1, 1, 10, 10], [1] * 5
    value, seq = oracle_opt(releases, widths, sizes, weights, 4)
    assert value == pytest.approx(37, rel=1e-9)
    assert rational_guess(value) == 37
    _valid_sequence(seq, releases)
    assert {v for _, v in seq[1:4]} == {0, 1, 2}   # the small jobs complete first


def test_worked_example_file_opt_9():
    inst = load_instance(ROOT / "instances" / "worked-example.json")
    assert oracle_opt_instance(inst) == pytest.approx(9, rel=1e-9)


def test_instance_api_matches_list_api():
    inst = Instance(Cluster.homogeneous(1, 4), (
        Job("A", 0, 2, processing_time=4), Job("B", 0, 4, processing_time=1),
        Job("C", 1, 1, processing_time=2)))
    value, seq = oracle_opt([0, 0, 1], [2, 4, 1], [4, 1, 2], [1, 1, 1], 4)
    assert oracle_opt_instance(inst) == pytest.approx(value, rel=1e-12) == pytest.approx(9)
    # B (full width) first at 1 (tied with C's release, so either may come first), C 3, A 5
    assert [v for kind, v in seq if kind == "c"] == [1, 2, 0]


@pytest.mark.parametrize("jobs, srpt", [
    ([(0, 3), (1, 1)], 6),                   # b done 2, a done 4
    ([(0, 2), (0, 1), (1, 1)], 7),           # 1, 2, 4
    ([(0, 4), (1, 2), (2, 1)], 14),          # b 3, c 4, a 7
    ([(0, 3), (0.5, 1)], 5.5),               # b 1.5, a 4
    ([(0, 1), (3, 2)], 1 + 5),               # idle gap between the jobs
    ([(2, 1), (0, 5), (2, 1)], 3 + 4 + 7),   # releases out of order, two merged at 2
])
def test_single_machine_equal_weights_is_srpt(jobs, srpt):
    releases, sizes = [r for r, _ in jobs], [p for _, p in jobs]
    n = len(jobs)
    value, seq = oracle_opt(releases, [1] * n, sizes, [1] * n, 1)
    assert value == pytest.approx(srpt, rel=1e-9)
    _valid_sequence(seq, releases)


def test_single_machine_weighted_is_smith_rule():
    # Both at 0: p/w = 2/3 < 1/1, so job 0 first: 3*2 + 1*3 = 9 (the other order gives 10).
    value, seq = oracle_opt([0, 0], [1, 1], [2, 1], [3, 1], 1)
    assert value == pytest.approx(9, rel=1e-9)
    assert seq == (("r", 0), ("c", 0), ("c", 1))


def test_m2_two_narrow_then_one_wide_opt_4():
    value, seq = oracle_opt([0, 0, 0], [1, 1, 2], [1, 1, 1], [1, 1, 1], 2)
    assert value == pytest.approx(4, rel=1e-9)
    assert seq[-1] == ("c", 2)


def test_two_machine_five_jobs_opt_20():
    # tests/offline/test_ilp.py's pinned case: two unit-width machines, OPT 20 (SRPT gives 21).
    inst = Instance(Cluster.homogeneous(2, 1), tuple(
        Job(i, r, 1, processing_time=p) for i, r, p in
        [("A", 0, 5), ("B", 5, 1), ("C", 0, 1), ("D", 5, 1), ("E", 0, 1)]))
    assert oracle_opt_instance(inst) == pytest.approx(20, rel=1e-9)


# --- the machinery ------------------------------------------------------------------------------


def test_event_sequence_counts():
    assert len(event_sequences([0, 0, 0])) == 6          # 3! completion orders
    assert len(event_sequences([0] * 5)) == 120
    # distinct releases 0, 1: r0 r1 then 2 orders, or r0 c0 r1 c1
    assert len(event_sequences([0, 1])) == 3
    for seq in event_sequences([0, 1, 1, 2]):
        _valid_sequence(seq, [0, 1, 1, 2])


def test_deterministic():
    args = ([0, 1, 1, 2], [1, 2, 1, 2], [3, 1, 2, 1], [1, 2, 1, 3], 2)
    assert oracle_opt(*args) == oracle_opt(*args)


def test_rational_guess():
    assert rational_guess(36.9999999999) == 37
    assert rational_guess(1 / 3 + 1e-12) == Fraction(1, 3)
    assert rational_guess(0.123456, max_den=10) == Fraction(1, 8)


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        oracle_opt([0] * 6, [1] * 6, [1] * 6, [1] * 6, 1)   # too many jobs
    with pytest.raises(ValueError):
        oracle_opt([0], [3], [1], [1], 2)                   # wider than the cluster
    with pytest.raises(ValueError):
        oracle_opt([0], [1], [0], [1], 1)                   # zero processing time
    with pytest.raises(ValueError):
        oracle_opt([0], [1], [1], [0], 1)                   # zero weight
