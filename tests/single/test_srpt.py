"""srpt_schedule: exact preemptive SRPT (CHK-02, CHK-03), ties, zero sizes, exactness, raise paths."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.single import Piece, Schedule, SRPTMachine, fcfs_schedule, las_schedule, ps_schedule, spt_schedule, srpt_schedule
from asrpt.testing.strategies import job_arrays


# --- pinned examples ----------------------------------------------------------------------------


def test_model_md_section_9_virtual_srpt():
    # A (0, 2), B (0, 1), C (1, 1/2): B on [0,1], C on [1,1.5], A on [1.5,3.5]
    s = srpt_schedule([0, 0, 1], [2, 1, Fraction(1, 2)], ids=["A", "B", "C"])
    assert s.by_id() == {"A": Fraction(7, 2), "B": 1, "C": Fraction(3, 2)}
    assert s.total_completion_time == 6
    assert [p[:3] for p in s.pieces] == [(1, 0, 1), (2, 1, Fraction(3, 2)), (0, Fraction(3, 2), Fraction(7, 2))]
    assert s.finishing_order == (1, 2, 0)
    assert s.problems() == []


def test_arrival_with_smaller_size_preempts_and_resumes():
    s = srpt_schedule([0, 1], [4, 1])
    assert s.completion_times == (5, 2)
    assert s.pieces == (Piece(0, 0, 1), Piece(1, 1, 2), Piece(0, 2, 5))
    assert s.remaining_at(1) == (3, 1) and s.remaining_at(2) == (3, 0) and s.remaining_at(0) == (4, 1)
    assert s.attained_at(10) == (4, 1)


def test_ties_equal_sizes_by_index_or_by_id_key():
    assert srpt_schedule([0, 0], [2, 2]).completion_times == (2, 4)
    # ids: "j10" > "j9" in natural order, so j9 (index 0) first; plain string order would say otherwise
    assert srpt_schedule([0, 0], [2, 2], ids=["j9", "j10"]).completion_times == (2, 4)
    assert srpt_schedule([0, 0], [2, 2], ids=["j10", "j9"]).completion_times == (4, 2)


def test_equal_remaining_arrival_with_smaller_tie_key_preempts():
    # a runs [0,1]; at t=1 its remaining 1 equals b's size; the smaller tie key wins
    s = srpt_schedule([0, 1], [2, 1], ids=["b", "a"])
    assert s.by_id() == {"b": 3, "a": 2}
    s = srpt_schedule([0, 1], [2, 1], ids=["a", "b"])
    assert s.by_id() == {"a": 2, "b": 3}
    assert len(s.pieces) == 2


def test_completion_at_an_arrival_instant_comes_first():
    s = srpt_schedule([0, 2], [2, 1])
    assert s.completion_times == (2, 3) and s.finishing_order == (0, 1)
    assert s.pieces == (Piece(0, 0, 2), Piece(1, 2, 3))
    # a zero-size job released when another completes is recorded after that completion
    assert srpt_schedule([0, 2], [2, 0]).finishing_order == (0, 1)


def test_zero_size_jobs_complete_at_release_without_pieces():
    s = srpt_schedule([0, 1, 1], [3, 0, 0])
    assert s.completion_times == (3, 1, 1)
    assert s.pieces == (Piece(0, 0, 3),)
    assert s.finishing_order == (1, 2, 0)
    assert s.mean_busy_times()[1] == 1


def test_problems_detects_each_kind_of_error():
    good = srpt_schedule([0, 1], [2, 1])
    assert good.problems() == []
    bad = Schedule((3, 2), (Piece(0, 0, 1), Piece(1, 0, 2), Piece(0, 2, 2)), (0, 1), (2, 1), (0, 1))
    text = "\n".join(bad.problems())
    assert "job 0: empty piece [2, 2)" in text
    assert "job 1: runs at 0, before its release 1" in text
    assert "job 0: received 1, needs 2" in text and "job 1: received 2, needs 1" in text
    assert "job 0: completes at 3, its last piece ends at 2" in text
    assert "at time 0: total rate 2, more than 1" in text
    assert "the finishing order is not in time order" in text
    assert "at time 0: job 0 rate 2, more than 1" in "\n".join(
        Schedule((1,), (Piece(0, 0, 1), Piece(0, 0, 1)), (0,), (2,), (0,)).problems(machines=2))
    assert "not a permutation" in "\n".join(Schedule((1,), (Piece(0, 0, 1),), (0,), (1,), ()).problems())


def test_idle_gaps_and_empty_input():
    s = srpt_schedule([5, 0], [1, 1])
    assert s.completion_times == (6, 1)
    empty = srpt_schedule([], [])
    assert empty.completion_times == () and empty.total_completion_time == 0 and empty.makespan == 0


def test_schedule_helpers():
    s = srpt_schedule([0, 1], [4, 1], ids=["x", "y"])
    assert s.total_flow_time == 5 + 1
    assert s.flow_times == (5, 1)
    assert s.weighted_total([2, 3]) == 2 * 5 + 3 * 2
    assert s.number_present(0) == 1 and s.number_present(1) == 2 and s.number_present(5) == 0
    assert s.mean_busy_times() == (Fraction(1 + (25 - 4), 2 * 4), Fraction(3, 2))
    d = s.to_dict()
    assert d["completion_times"] == {"x": 5, "y": 2} and d["finishing_order"] == ["y", "x"]
    assert d["pieces"][1] == {"job": "y", "start": 1, "end": 2, "share": 1}
    assert "srpt" in repr(s)


def test_numpy_input_and_float_mode():
    s = srpt_schedule(np.array([0.0, 1.0]), np.array([4.0, 1.0]))
    assert s.completion_times == (5.0, 2.0)
    assert srpt_schedule(np.array([0, 1]), np.array([4, 1])).completion_times == (5, 2)


# --- properties ---------------------------------------------------------------------------------


@given(job_arrays(exact=True, allow_zero=True))
def test_schedule_is_valid(arrays):
    assert srpt_schedule(*arrays).problems() == []


@given(job_arrays(exact=True))
@example(([0, 0, 1], [3, 1, 1]))
def test_chk03_order_property(arrays):
    """CHK-03: among jobs present together, SRPT completes them in increasing (remaining, tie key)."""
    releases, sizes = arrays
    s = srpt_schedule(releases, sizes)
    for t in sorted(set(releases) | set(s.completion_times)):
        rem = s.remaining_at(t)
        present = [j for j in range(s.n) if releases[j] <= t < s.completion_times[j]]
        by_priority = sorted(present, key=lambda j: (rem[j], j))
        completions = [s.completion_times[j] for j in by_priority]
        assert completions == sorted(completions)
        assert len(set(completions)) == len(completions)


@given(job_arrays(exact=True))
def test_chk03_never_overtaken_by_a_later_longer_job(arrays):
    releases, sizes = arrays
    s = srpt_schedule(releases, sizes)
    for j in range(s.n):
        for k in range(s.n):
            if releases[k] > releases[j] and releases[k] < s.completion_times[j]:
                if sizes[k] > s.remaining_at(releases[k])[j]:
                    assert s.completion_times[j] < s.completion_times[k]


@given(job_arrays(exact=True))
def test_chk02_fewest_jobs_present_at_every_event(arrays):
    """CHK-02: SRPT minimises N(t) at every time among work-conserving rules, and so sum F."""
    releases, sizes = arrays
    s = srpt_schedule(releases, sizes)
    others = [fcfs_schedule(releases, sizes), las_schedule(releases, sizes), ps_schedule(releases, sizes),
              spt_schedule(sizes, releases=releases)]
    times = set(releases) | set(s.completion_times)
    for o in others:
        times |= set(o.completion_times)
    for t in times:
        for o in others:
            assert s.number_present(t) <= o.number_present(t)
    for o in others:
        assert s.total_completion_time <= o.total_completion_time


@given(job_arrays(exact=True))
def test_chk02_flow_time_is_the_integral_of_n(arrays):
    releases, sizes = arrays
    s = srpt_schedule(releases, sizes)
    times = sorted(set(releases) | set(s.completion_times))
    integral = sum((b - a) * s.number_present(a) for a, b in zip(times, times[1:]))
    assert integral == s.total_flow_time


@given(job_arrays(exact=True))
@example(([0, Fraction(25, 3), 3, 0, 6], [1, Fraction(11, 3), 1, 1, 6]))  # a tie decided by rounding
def test_float_run_agrees_with_exact_run(arrays):
    """Tolerance 1e-9 relative. At an exact tie of remaining sizes rounding may pick the other job,
    which swaps the two jobs' completion times: the sorted completion times (and so the total) agree."""
    releases, sizes = arrays
    exact = srpt_schedule(releases, sizes)
    flt = srpt_schedule([float(r) for r in releases], [float(p) for p in sizes])
    for a, b in zip(sorted(exact.completion_times), sorted(flt.completion_times)):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(exact.total_completion_time, flt.total_completion_time, rel_tol=1e-9, abs_tol=1e-9)


@given(job_arrays())
def test_float_run_of_integer_data_is_identical(arrays):
    releases, sizes = arrays
    exact = srpt_schedule(releases, sizes)
    flt = srpt_schedule([float(r) for r in releases], [float(p) for p in sizes])
    assert exact.completion_times == flt.completion_times and exact.pieces == flt.pieces


@given(job_arrays(exact=True), st.randoms(use_true_random=False))
def test_relabelling_jobs_permutes_the_result(arrays, rnd):
    """Job indices only matter through ties: with distinct ids the schedule follows the ids."""
    releases, sizes = arrays
    n = len(sizes)
    ids = [f"j{i}" for i in range(n)]
    perm = list(range(n))
    rnd.shuffle(perm)
    s = srpt_schedule(releases, sizes, ids=ids)
    t = srpt_schedule([releases[i] for i in perm], [sizes[i] for i in perm], ids=[ids[i] for i in perm])
    assert s.by_id() == t.by_id()


# --- raise paths --------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, message", [
    ({"releases": [0, 0], "sizes": [1, -1]}, "'sizes' parameter of srpt_schedule must be a sequence of finite numbers >= 0"),
    ({"releases": [0], "sizes": [float("nan")]}, "'sizes' parameter"),
    ({"releases": [0], "sizes": [float("inf")]}, "'sizes' parameter"),
    ({"releases": [float("nan")], "sizes": [1]}, "'releases' parameter"),
    ({"releases": [0], "sizes": ["1"]}, "'sizes' parameter"),
    ({"releases": [0], "sizes": [True]}, "'sizes' parameter"),
    ({"releases": [0], "sizes": 3}, "'sizes' parameter"),
    ({"releases": np.zeros((1, 1)), "sizes": [1]}, "'releases' parameter"),
    ({"releases": [0, 1], "sizes": [1]}, "'releases' parameter of srpt_schedule must have the length of 'sizes' \\(1\\)"),
    ({"releases": [0, 1], "sizes": [1, 1], "ids": ["a"]}, "'ids' parameter of srpt_schedule must have the length"),
    ({"releases": [0, 1], "sizes": [1, 1], "ids": ["a", "a"]}, "'ids' parameter of srpt_schedule must be None or a sequence of distinct"),
])
def test_invalid_input_raises_one_line(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        srpt_schedule(**kwargs)


def test_weighted_total_checks_its_weights():
    s = srpt_schedule([0], [1])
    with pytest.raises(InvalidParameterError, match="'weights' parameter of weighted_total must have the length"):
        s.weighted_total([1, 2])
    with pytest.raises(InvalidParameterError, match="'weights' parameter of weighted_total"):
        s.weighted_total([float("nan")])


@st.composite
def running_srpt_machines(draw):
    """An SRPT machine part-way through a run, with float or exact times: jobs added at their
    releases (some still pending), advances between events, and resizes."""
    exact = draw(st.booleans())
    number = (st.integers(0, 16).map(lambda k: Fraction(k, 4)) if exact
              else st.floats(0, 4).map(lambda x: round(x, 3)))
    mach = SRPTMachine(start=0 if exact else 0.0)
    for j in range(draw(st.integers(1, 9))):
        step = draw(st.sampled_from(["add", "pending", "advance", "resize"]))
        if step == "advance":
            mach.advance(mach.now + draw(number))
        elif step == "resize" and len(mach):
            key = draw(st.sampled_from(sorted(mach._size)))
            if key not in mach._pending_keys:
                mach.resize(key, mach.attained(key) + draw(number))
        else:
            release = mach.now + (draw(number) if step == "pending" else 0)
            mach.add(j, release, draw(number))
    return mach


@given(running_srpt_machines(), st.data())
def test_upcoming_completions_are_the_ones_advance_records(mach, data):
    """What the read ahead lists is what the machine records when it is next advanced, bit for
    bit, up to the horizon; and the read changes nothing (the envelope policy wakes by it)."""
    until = data.draw(st.none() | st.floats(0, 12).map(lambda x: mach.now + round(x, 2)), label="until")
    limit = data.draw(st.integers(0, 5), label="limit")
    before = (mach.now, mach.running, dict(mach._done), sorted(mach._rem.items()))
    events, horizon = mach.upcoming_completions(until, limit)
    assert (mach.now, mach.running, dict(mach._done), sorted(mach._rem.items())) == before
    assert all(horizon is None or c < horizon for c, _ in events) and len(events) <= limit
    assert [c for c, _ in events] == sorted(c for c, _ in events)
    done_before = set(mach._done)
    t = data.draw(st.none() | st.floats(0, 14).map(lambda x: mach.now + round(x, 2)), label="t")
    if t is None:
        mach.run()
    else:
        mach.advance(t)
    recorded = [(c, k) for k, c in mach._done.items() if k not in done_before]
    assert ([e for e in recorded if horizon is None or e[0] < horizon]
            == [e for e in events if t is None or e[0] <= t])
