"""The classical rules: CHK-05 (WSPT == brute force), CHK-09 (RR = 2 SPT - sum p), LAS, PS, FCFS,
the LP schedule's mean busy times, SRPT on m machines (the pinned 21-vs-20 case)."""

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import example, given, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.offline.bruteforce import bruteforce_weighted_single_machine
from asrpt.single import (Piece, fcfs_schedule, las_schedule, lp_schedule, multi_srpt_schedule, ps_schedule,
                          spt_schedule, srpt_schedule, wspt_schedule)
from asrpt.testing.strategies import job_arrays, weighted_job_arrays

RULES = {
    "fcfs": lambda r, p: fcfs_schedule(r, p),
    "spt": lambda r, p: spt_schedule(p, releases=r),
    "wspt": lambda r, p: wspt_schedule(p, [1] * len(p), releases=r),
    "lp": lambda r, p: lp_schedule(r, p, [1] * len(p)),
    "las": lambda r, p: las_schedule(r, p),
    "ps": lambda r, p: ps_schedule(r, p),
    "srpt-m1": lambda r, p: multi_srpt_schedule(r, p, 1),
}


@pytest.mark.parametrize("rule", sorted(RULES))
@given(arrays=job_arrays(exact=True, allow_zero=True))
def test_every_rule_gives_a_valid_schedule(rule, arrays):
    s = RULES[rule](*arrays)
    assert s.problems() == []
    assert s.rule == rule.replace("-m1", "-m")


@pytest.mark.parametrize("rule", sorted(RULES))
@given(arrays=job_arrays(exact=True))
def test_srpt_is_never_beaten_on_one_machine(rule, arrays):
    """Schrage: SRPT minimises sum C_j over every single-machine schedule."""
    assert srpt_schedule(*arrays).total_completion_time <= RULES[rule](*arrays).total_completion_time


# --- CHK-05 Smith's rule ------------------------------------------------------------------------


@given(weighted_job_arrays(max_jobs=6, exact=True, same_release=True))
def test_chk05_wspt_equals_brute_force(arrays):
    _, sizes, weights = arrays
    wspt = wspt_schedule(sizes, weights)
    assert wspt.weighted_total(weights) == bruteforce_weighted_single_machine(sizes, weights).objective


@given(weighted_job_arrays(min_jobs=2, max_jobs=6, exact=True, same_release=True), st.data())
def test_chk05_adjacent_interchange_identity(arrays, data):
    """Swapping adjacent i (first) and j changes the cost by exactly w_i p_j - w_j p_i."""
    _, p, w = arrays
    order = data.draw(st.permutations(range(len(p))))
    pos = data.draw(st.integers(0, len(p) - 2))

    def cost(seq):
        t, total = 0, 0
        for j in seq:
            t += p[j]
            total += w[j] * t
        return total

    swapped = list(order)
    swapped[pos], swapped[pos + 1] = swapped[pos + 1], swapped[pos]
    i, j = order[pos], order[pos + 1]
    assert cost(swapped) - cost(order) == w[i] * p[j] - w[j] * p[i]


def test_wspt_ties_and_zero_sizes():
    s = wspt_schedule([2, 0, 1], [1, 1, 2])
    assert s.finishing_order == (1, 2, 0)
    assert wspt_schedule([1, 1], [1, 1], ids=["b", "a"]).finishing_order == (1, 0)


def test_spt_without_and_with_releases():
    assert spt_schedule([3, 1, 2]).completion_times == (6, 1, 3)
    # non-preemptive: the long job released first is not interrupted
    assert spt_schedule([3, 1], releases=[0, 1]).completion_times == (3, 4)


def test_fcfs_order_and_idle():
    s = fcfs_schedule([2, 0, 0], [1, 2, 1], ids=["c", "b", "a"])
    assert s.by_id() == {"c": 4, "b": 3, "a": 1}
    assert fcfs_schedule([5], [1]).pieces == (Piece(0, 5, 6),)


# --- CHK-09 processor sharing -------------------------------------------------------------------


@given(job_arrays(min_jobs=1, exact=True, same_release=True))
@example(([0, 0, 0, 0], [1, 1, 1, 1]))
def test_chk09_rr_equals_twice_spt_minus_total_size(arrays):
    _, sizes = arrays
    ps = ps_schedule([0] * len(sizes), sizes).total_completion_time
    spt = spt_schedule(sizes).total_completion_time
    assert ps == 2 * spt - sum(sizes)


def test_rr_ratio_on_equal_jobs_is_2n_over_n_plus_1():
    n = 5
    ps = ps_schedule([0] * n, [1] * n).total_completion_time
    assert Fraction(ps, spt_schedule([1] * n).total_completion_time) == Fraction(2 * n, n + 1)


def test_ps_with_arrivals():
    # job 0 alone on [0,1], shares with job 1 on [1,3] (1 unit each), then alone
    s = ps_schedule([0, 1], [3, 1])
    assert s.completion_times == (4, 3)
    assert s.pieces == (Piece(0, 0, 1, 1), Piece(0, 1, 3, Fraction(1, 2)), Piece(1, 1, 3, Fraction(1, 2)),
                        Piece(0, 3, 4, 1))
    assert s.remaining_at(2) == (Fraction(3, 2), Fraction(1, 2))


@given(job_arrays(exact=True))
def test_ps_float_mode_agrees(arrays):
    r, p = arrays
    exact = ps_schedule(r, p).completion_times
    flt = ps_schedule([float(x) for x in r], [float(x) for x in p]).completion_times
    assert all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(exact, flt))


# --- LAS ----------------------------------------------------------------------------------------


def test_las_new_arrival_takes_the_machine_then_levels_merge():
    # job 0 alone to attained 1; job 1 (attained 0) alone until it catches up at level 1 (t=2);
    # then both share: job 1 needs 1 more -> done at t=4 (level 2); job 0 alone to 3: t=5
    s = las_schedule([0, 1], [3, 2])
    assert s.completion_times == (5, 4)
    assert s.pieces == (Piece(0, 0, 1, 1), Piece(1, 1, 2, 1), Piece(0, 2, 4, Fraction(1, 2)),
                        Piece(1, 2, 4, Fraction(1, 2)), Piece(0, 4, 5, 1))


def test_las_pinned_docstring_case():
    assert las_schedule([0, 1], [3, 1]).completion_times == (4, 2)


@given(job_arrays(exact=True, same_release=True))
def test_las_equals_ps_when_all_jobs_arrive_together(arrays):
    r, p = arrays
    assert las_schedule(r, p).completion_times == ps_schedule(r, p).completion_times


@given(job_arrays(exact=True))
@example(([Fraction(5, 3), Fraction(5, 3), Fraction(11, 3)], [1, 1, 1]))  # 5/3 + 2 rounds past 11/3
# a group reaching its jobs' size 2 where the group above stands at 2 (1.9999999999999998 in floats)
@example(([1, Fraction(14, 3), Fraction(26, 3), 2, Fraction(31, 6), Fraction(26, 3), Fraction(26, 3), Fraction(26, 3)],
          [3, 2, 1, Fraction(5, 3), 2, 1, 1, 1]))
def test_las_float_mode_agrees(arrays):
    r, p = arrays
    exact = las_schedule(r, p).completion_times
    flt = las_schedule([float(x) for x in r], [float(x) for x in p]).completion_times
    assert all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(exact, flt))


# --- the LP schedule ----------------------------------------------------------------------------


@given(weighted_job_arrays(max_jobs=6, exact=True))
def test_lp_schedule_minimises_weighted_mean_busy_time(arrays):
    """Goemans: sum w_j M_j of the LP schedule is at most that of any single-machine schedule."""
    r, p, w = arrays
    lp = lp_schedule(r, p, w)
    value = sum(wj * m for wj, m in zip(w, lp.mean_busy_times()))
    others = [srpt_schedule(r, p), fcfs_schedule(r, p), ps_schedule(r, p), las_schedule(r, p),
              wspt_schedule(p, w, releases=r)]
    for o in others:
        assert value <= sum(wj * m for wj, m in zip(w, o.mean_busy_times()))


def test_lp_schedule_is_not_srpt():
    # by original size job 1 (2) beats job 0 (3), by remaining size job 0 (1) wins at t=2
    assert lp_schedule([0, 2], [3, 2], [1, 1]).completion_times == (5, 4)
    assert srpt_schedule([0, 2], [3, 2]).completion_times == (3, 5)


# --- SRPT on m machines -------------------------------------------------------------------------

PINNED = {"A": (0, 5), "B": (5, 1), "C": (0, 1), "D": (5, 1), "E": (0, 1)}


@pytest.mark.parametrize("ids", [list(PINNED), list(reversed(list(PINNED)))])
def test_chk11_pinned_two_machine_srpt_costs_21_with_either_tie_break(ids):
    r = [PINNED[i][0] for i in ids]
    p = [PINNED[i][1] for i in ids]
    s = multi_srpt_schedule(r, p, 2, ids=ids)
    assert s.total_completion_time == 21
    assert s.by_id()["A"] == 6 and sorted(s.by_id().values()) == [1, 1, 6, 6, 7]


@given(job_arrays(exact=True, allow_zero=True))
def test_multi_srpt_on_one_machine_is_srpt(arrays):
    r, p = arrays
    assert multi_srpt_schedule(r, p, 1).completion_times == srpt_schedule(r, p).completion_times


@given(job_arrays(exact=True), st.integers(1, 4))
def test_multi_srpt_schedule_is_valid(arrays, m):
    r, p = arrays
    s = multi_srpt_schedule(r, p, m)
    assert s.problems(machines=m) == []
    if m > 1 and len(p) > 1:
        assert s.problems() == [] or "more than 1" in s.problems()[0]
    if m >= len(p):
        assert s.completion_times == tuple(a + b for a, b in zip(r, p))


@given(job_arrays(min_jobs=1, max_jobs=5, exact=True, same_release=True), st.integers(2, 3))
def test_chk06_spt_list_schedule_is_optimal_without_releases_small(arrays, m):
    """P || sum C_j: SRPT with all jobs at 0 is SPT list scheduling, optimal (Conway-Maxwell-Miller);
    checked against all orders of list scheduling."""
    _, p = arrays
    srpt = multi_srpt_schedule([0] * len(p), p, m).total_completion_time
    best = None
    for order in itertools.permutations(range(len(p))):
        free = [0] * m
        total = 0
        for j in order:
            i = min(range(m), key=free.__getitem__)
            free[i] += p[j]
            total += free[i]
        best = total if best is None else min(best, total)
    assert srpt == best


# --- raise paths --------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: wspt_schedule([1, 2], [1]), "'weights' parameter of wspt_schedule must have the length of 'sizes' \\(2\\)"),
    (lambda: wspt_schedule([1], [0]), "'weights' parameter of wspt_schedule must be a sequence of finite numbers > 0"),
    (lambda: lp_schedule([0], [1], [-1]), "'weights' parameter of lp_schedule"),
    (lambda: lp_schedule([0, 0], [1, 1], [1]), "'weights' parameter of lp_schedule must have the length"),
    (lambda: spt_schedule([1], releases=[0, 0]), "'releases' parameter of spt_schedule must have the length"),
    (lambda: fcfs_schedule([0], [-1]), "'sizes' parameter of fcfs_schedule"),
    (lambda: las_schedule([0], [1], ids=[""]), "'ids' parameter of las_schedule"),
    (lambda: ps_schedule([0, 0], [1]), "'releases' parameter of ps_schedule must have the length"),
    (lambda: multi_srpt_schedule([0], [1], 0), "'machines' parameter of multi_srpt_schedule must be an int in \\[1, inf\\)"),
    (lambda: multi_srpt_schedule([0], [1], 1.5), "'machines' parameter"),
])
def test_invalid_input_raises(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call()
