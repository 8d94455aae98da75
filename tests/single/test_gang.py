"""The gang-aware virtual machine (asrpt.single.gang): special cases equal known rules, every
schedule is feasible for the relaxation, and the facts the proofs use hold on every example."""

from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.single.gang import GangSRPTMachine, gang_schedule
from asrpt.single.rules import multi_srpt_schedule
from asrpt.single.srpt import srpt_schedule


@st.composite
def gang_jobs(draw, max_jobs=7, capacity=None):
    m = capacity if capacity is not None else draw(st.integers(1, 6))
    n = draw(st.integers(1, max_jobs))
    releases = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
    times = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
    gpus = draw(st.lists(st.integers(1, m), min_size=n, max_size=n))
    return m, releases, times, gpus


def _machine(m, releases, times, gpus):
    mach = GangSRPTMachine(m, record=True)
    for j, (a, p, g) in enumerate(zip(releases, times, gpus)):
        mach.add(j, a, p, g)
    mach.run()
    return mach


def test_worked_example():
    # The worked example (instances/worked-example.json): the gang machine finishes jobs exactly when the cluster does.
    assert gang_schedule([0, 0, 1], [4, 1, 2], [2, 4, 1], 4, ids=["A", "B", "C"]) == (5, 1, 3)


@given(gang_jobs(), st.data())
def test_unit_gangs_are_srpt_on_m_machines(case, data):
    m, releases, times, _ = case
    assert gang_schedule(releases, times, [1] * len(times), m) == \
        multi_srpt_schedule(releases, times, m).completion_times


@given(gang_jobs())
def test_full_gangs_are_single_machine_srpt(case):
    m, releases, times, _ = case
    assert gang_schedule(releases, times, [m] * len(times), m) == srpt_schedule(releases, times).completion_times


@given(gang_jobs())
def test_schedule_is_feasible_for_the_relaxation(case):
    m, releases, times, gpus = case
    mach = _machine(m, releases, times, gpus)
    received = [0] * len(times)
    for piece in mach.pieces:
        assert sum(r for _, r in piece.rates) <= m
        for j, r in piece.rates:
            assert 0 < r <= gpus[j] and piece.start >= releases[j]
            received[j] += r * (piece.end - piece.start)
    for j, (a, p, g) in enumerate(zip(releases, times, gpus)):
        assert received[j] == g * p
        assert mach.completion_time(j) >= a + p          # C~_j >= a_j + P_j


@given(gang_jobs())
def test_jobs_below_full_rate_wait_behind_earlier_finishers(case):
    """While j is released, unfinished and below its full rate, jobs finishing no later than j hold
    at least M - g_j + 1 GPUs (F1 and the capacity fact of the module docstring)."""
    m, releases, times, gpus = case
    mach = _machine(m, releases, times, gpus)
    done = mach.completion_times()
    for piece in mach.pieces:
        rates = dict(piece.rates)
        for j in range(len(times)):
            if releases[j] <= piece.start and done[j] >= piece.end and rates.get(j, 0) < gpus[j]:
                ahead = sum(r for k, r in rates.items() if k != j and (done[k], k) < (done[j], j))
                assert ahead >= m - gpus[j] + 1 or ahead + rates.get(j, 0) == m


def test_exact_fractional_rates():
    mach = GangSRPTMachine(3)
    mach.add("a", 0, 1, 2)
    mach.add("b", 0, 2, 2)
    assert mach.rates() == {"a": 2, "b": 1}
    mach.advance(1)
    assert mach.remaining("b") == Fraction(3, 2) and mach.completion_time("a") == 1
    mach.run()
    assert mach.completion_time("b") == Fraction(5, 2)   # 1/2 rate for 1 s, then full


def test_incremental_resize_reopens_and_completes():
    mach = GangSRPTMachine(2)
    mach.add("a", 0, 1, 2)
    mach.advance(2)
    assert mach.completion_time("a") == 1
    mach.resize("a", 3)                       # a new prediction: two more seconds at full rate
    assert mach.completion_time("a") is None and mach.remaining("a") == 2
    mach.resize("a", 1)                       # back to what it attained: done now
    assert mach.completion_time("a") == 2


def test_incremental_equals_batch_on_floats():
    releases, times, gpus = [0.0, 0.5, 0.25, 3.0], [2.5, 0.1, 1.0, 0.75], [3, 1, 2, 4]
    mach = GangSRPTMachine(4)
    for t, j in sorted((a, j) for j, a in enumerate(releases)):
        mach.advance(t)
        mach.add(j, t, times[j], gpus[j])
    mach.run()
    assert tuple(mach.completion_time(j) for j in range(4)) == gang_schedule(releases, times, gpus, 4)


@pytest.mark.parametrize("call, message", [
    (lambda: GangSRPTMachine(0), "capacity"),
    (lambda: GangSRPTMachine(2).add("a", 0, 1, 3), "gpus"),
    (lambda: GangSRPTMachine(2).add("a", 0, -1, 1), "time"),
    (lambda: GangSRPTMachine(2, start=5).add("a", 1, 1, 1), "release"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call()


def _lower_bounds(m, releases, times, gpus):
    lb1 = sum(a + p for a, p in zip(releases, times))
    lb2 = srpt_schedule(releases, [Fraction(g * p, m) for g, p in zip(gpus, times)]).total_completion_time
    return lb1, lb2


def test_counterexample_3_the_gang_machine_costs_more_than_twice_the_lower_bound():
    """proofs/theorem2.md, Counterexample 3 (the retracted Finding 1): on 6 GPUs, five one-GPU
    jobs of length 8 and two 6-GPU jobs of length 7 released at 0 and 7. The wide jobs rank
    ahead (7 < 8) and take the whole machine until 14: sum C~ = 131 > 2 max(LB1, LB2) = 122."""
    m, releases, times, gpus = 6, [0] * 5 + [0, 7], [8] * 5 + [7, 7], [1] * 5 + [6, 6]
    c = gang_schedule(releases, times, gpus, m)
    assert c == (22, 22, 22, 22, 22, 7, 14)
    lb1, lb2 = _lower_bounds(m, releases, times, gpus)
    assert (sum(c), lb1, lb2) == (131, 61, Fraction(163, 3))
    assert sum(c) > 2 * max(lb1, lb2)


def starvation_family(m: int):
    """m one-GPU jobs of length 8 at 0 against k = round(sqrt(2m)) m-GPU jobs of length 7
    released at 0, 7, 14, ...: each wide job arrives as the previous one finishes virtually."""
    k = round((2 * m) ** 0.5)
    releases = [0] * m + [7 * i for i in range(k)]
    return releases, [8] * m + [7] * k, [1] * m + [m] * k


@pytest.mark.parametrize("m, at_least", [(8, 2.1), (32, 4.0), (128, 7.7)])
def test_the_gang_machine_is_not_within_a_constant_of_the_optimum(m, at_least):
    """Counterexample 3's family: sum C~ of the gang machine against a feasible schedule (the
    simulated guarded A-SRPT run, so against OPT at least as much) grows like sqrt(m / 2)."""
    from asrpt.instance import Cluster, Instance, Job, Server
    from asrpt.sim import simulate

    releases, times, gpus = starvation_family(m)
    virtual = sum(gang_schedule(releases, times, gpus, m))
    inst = Instance(Cluster((Server(m),)), tuple(
        Job(f"j{i}", a, g, processing_time=p) for i, (a, p, g) in enumerate(zip(releases, times, gpus))))
    feasible = sum(r.completion for r in simulate(inst, "a-srpt:adaptive=off").records)
    assert virtual / feasible >= at_least


@st.composite
def running_machines(draw):
    """A gang machine part-way through a run, with float or exact times: jobs added at their
    releases (some still pending), advances between events, and resizes."""
    m = draw(st.integers(1, 6))
    exact = draw(st.booleans())
    number = st.integers(0, 16).map(lambda k: Fraction(k, 4)) if exact else st.floats(0, 4).map(lambda x: round(x, 3))
    mach = GangSRPTMachine(m, start=0 if exact else 0.0)
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
            mach.add(j, release, draw(number), draw(st.integers(1, m)))
    return mach


def _state(mach):
    return (mach.now, list(mach._queue), list(mach._full), mach._full_gpus, None if mach._frac is None else
            list(mach._frac), dict(mach._done), list(mach._log), list(mach._pending))


@given(running_machines(), st.data())
def test_upcoming_completions_are_the_ones_advance_records(mach, data):
    """What the read ahead lists is what the machine records when it is next advanced, bit for
    bit, up to the horizon; and the read changes nothing."""
    until = data.draw(st.none() | st.floats(0, 12).map(lambda x: mach.now + round(x, 2)), label="until")
    limit = data.draw(st.integers(0, 5), label="limit")
    before = _state(mach)
    events, horizon = mach.upcoming_completions(until, limit)
    assert _state(mach) == before
    assert all(mach.now < c and (horizon is None or c < horizon) for c, _ in events)
    assert [c for c, _ in events] == sorted(c for c, _ in events)
    if events:      # the read stops once it listed `limit` (simultaneous completions come together)
        assert len([c for c, _ in events if c < events[-1][0]]) < limit
    release = min((r for r, _, _ in mach._pending), default=None)
    t = data.draw(st.none() | st.floats(0, 14).map(lambda x: mach.now + round(x, 2)), label="t")
    mach.pop_finished()
    if t is None:
        mach.run()
    else:
        mach.advance(t)
    recorded = [(mach.completion_time(k), k) for k in mach.pop_finished()]
    assert [e for e in recorded if horizon is None or e[0] < horizon] == [e for e in events if t is None or e[0] <= t]
    if horizon is not None and horizon != until and horizon != release and (t is None or t >= horizon):
        # the read stopped at its limit: the horizon is the next completion's time
        assert any(c == horizon for c, _ in recorded)


def test_upcoming_completions_stop_at_a_release():
    mach = GangSRPTMachine(2)
    mach.add("a", 0, 1, 2)
    mach.add("b", 0, 3, 2)
    mach.add("c", 2, 1, 2)
    assert mach.upcoming_completions() == ([(1, "a")], 2)
    assert mach.upcoming_completions(until=0.5) == ([], 0.5)
    assert mach.upcoming_completions(until=1) == ([], 1)         # a completion at `until` is not listed
    assert mach.upcoming_completions(limit=0) == ([], 1)
    both = GangSRPTMachine(2)
    both.add("a", 0, 1, 1)
    both.add("b", 0, 2, 1)
    assert both.upcoming_completions(until=2) == ([(1, "a")], 2)
