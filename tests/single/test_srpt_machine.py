"""SRPTMachine: agrees with srpt_schedule however it is driven; resize; priority order (F1); errors."""

from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.single import Piece, SRPTMachine, srpt_schedule
from asrpt.testing.strategies import job_arrays


def _int_machine():
    return SRPTMachine(tie_key=lambda k: k)


@given(job_arrays(exact=True, allow_zero=True))
def test_all_jobs_added_up_front_match_srpt_schedule(arrays):
    releases, sizes = arrays
    m = _int_machine()
    for j, (r, p) in enumerate(zip(releases, sizes)):
        m.add(j, r, p)
    m.run()
    s = srpt_schedule(releases, sizes)
    assert m.completion_times() == dict(enumerate(s.completion_times))
    assert m.pieces == s.pieces
    assert m.finishing_order == s.finishing_order
    assert m.n_unfinished == 0 and m.running is None


@given(job_arrays(exact=True, allow_zero=True), st.lists(st.fractions(0, 3), max_size=6))
def test_incremental_arrivals_and_extra_advances_match(arrays, extra_steps):
    """Jobs added when they arrive, with advances to arbitrary intermediate times in between."""
    releases, sizes = arrays
    s = srpt_schedule(releases, sizes)
    m = _int_machine()
    order = sorted(range(len(sizes)), key=lambda j: (releases[j], j))
    steps = iter(extra_steps)
    for j in order:
        step = next(steps, None)
        if step is not None and m.now + step < releases[j]:
            m.advance(m.now + step)
            assert m.remaining(m.running) > 0 if m.running is not None else True
        m.advance(releases[j])
        m.add(j, releases[j], sizes[j])
        # the state at this instant matches the one-shot schedule's
        for k in m.priority_order():
            assert m.remaining(k) == s.remaining_at(m.now)[k]
    m.run()
    assert m.completion_times() == dict(enumerate(s.completion_times))
    assert m.pieces == s.pieces


@given(job_arrays(exact=True))
def test_priority_order_is_the_virtual_finishing_order(arrays):
    """F1: at any time, unfinished jobs finish in priority order; the first one is running."""
    releases, sizes = arrays
    s = srpt_schedule(releases, sizes)
    for t in sorted(set(releases)):
        m = _int_machine()
        for j, (r, p) in enumerate(zip(releases, sizes)):
            m.add(j, r, p)
        m.advance(t)
        order = m.priority_order()
        assert order == sorted(order, key=lambda j: s.completion_times[j])
        if order:
            assert m.running == order[0]
        finished = [j for j in range(len(sizes)) if m.completion_time(j) is not None]
        keys = sorted(finished + order, key=m.priority_key)
        assert keys == sorted(finished, key=lambda j: s.completion_times[j]) + order


def test_string_keys_use_id_key_for_ties():
    m = SRPTMachine()
    m.add("j10", 0, 1)
    m.add("j9", 0, 1)
    m.run()
    assert m.finishing_order == ("j9", "j10")


def test_docstring_example_state():
    m = SRPTMachine()
    m.add("A", 0, 2)
    m.add("B", 0, 1)
    m.add("C", 1, Fraction(1, 2))
    m.advance(Fraction(6, 5))
    assert m.running == "C" and m.remaining("C") == Fraction(3, 10)
    assert m.attained("C") == Fraction(1, 5) and m.size("A") == 2 and m.remaining("A") == 2
    assert m.completion_time("B") == 1 and m.completion_time("A") is None
    assert m.priority_key("B") == (0, 1, m.priority_key("B")[2])
    assert m.pieces[-1] == Piece("C", 1, Fraction(6, 5))
    assert "C" in m and len(m) == 3 and "running='C'" in repr(m)


def test_future_release_waits_for_advance():
    m = _int_machine()
    m.add(0, 3, 1)
    assert m.remaining(0) == 1 and m.running is None and m.priority_order() == []
    m.advance(2)
    assert m.now == 2 and m.running is None
    m.advance(3)
    assert m.running == 0
    m.advance(10)
    assert m.completion_time(0) == 4 and m.now == 10


def test_resize_running_job_grows_and_may_lose_the_machine():
    m = _int_machine()
    m.add(0, 0, 2)
    m.add(1, 0, 3)
    m.advance(1)
    m.resize(0, 5)  # remaining 4 > 3: job 1 takes over now
    assert m.running == 1 and m.remaining(0) == 4
    m.run()
    assert m.completion_times() == {1: 4, 0: 8}
    assert m.pieces == (Piece(0, 0, 1), Piece(1, 1, 4), Piece(0, 4, 8))


def test_resize_reopens_a_finished_job_and_shrinks_to_attained():
    m = _int_machine()
    m.add(0, 0, 1)
    m.add(1, 0, 5)
    m.advance(2)
    assert m.completion_time(0) == 1
    m.resize(0, 2)  # one more unit at time 2: job 0 (remaining 1) preempts job 1 (remaining 4)
    assert m.completion_time(0) is None and m.running == 0
    m.advance(Fraction(5, 2))
    m.resize(0, Fraction(3, 2))  # exactly what it has received: done now
    assert m.completion_time(0) == Fraction(5, 2) and m.running == 1
    m.run()
    assert m.finishing_order == (0, 1) and m.completion_time(1) == Fraction(13, 2)


def test_resize_waiting_and_pending_jobs():
    m = _int_machine()
    m.add(0, 0, 3)
    m.add(1, 0, 4)
    m.add(2, 5, 1)
    m.advance(1)
    m.resize(1, 1)  # a waiting job shrinks below the running one: it runs now
    assert m.running == 1
    m.resize(2, 2)  # not yet released: only its size changes
    m.resize(1, 0)  # a waiting or running job whose size equals its (zero) attained service
    assert m.completion_time(1) == 1
    m.run()
    assert m.completion_times() == {1: 1, 0: 3, 2: 7}


def test_resize_of_a_waiting_job_to_its_attained_service_completes_it():
    m = _int_machine()
    m.add(0, 0, 2)
    m.add(1, 1, 1)
    m.advance(1)  # equal remaining 1, smaller tie key 0: job 0 keeps the machine
    assert m.running == 0
    m.add(2, 1, Fraction(1, 2))  # preempts 0, which has attained 1
    assert m.running == 2
    m.resize(0, 1)
    assert m.completion_time(0) == 1 and m.n_unfinished == 2


@pytest.mark.parametrize("call, message", [
    (lambda m: m.add(0, 0, 1), "must be a new job"),
    (lambda m: m.add(5, -1, 1), "'release' parameter of SRPTMachine.add must be >= the machine's time"),
    (lambda m: m.add(5, 2, -1), "'size' parameter of SRPTMachine.add must be >= 0"),
    (lambda m: m.add(5, 2, float("nan")), "'size' parameter of SRPTMachine.add must be a finite number"),
    (lambda m: m.advance(0), "'t' parameter of SRPTMachine.advance must be >= the machine's time"),
    (lambda m: m.advance(float("inf")), "'t' parameter of SRPTMachine.advance must be a finite number"),
    (lambda m: m.remaining(9), "'key' parameter of SRPTMachine.remaining must be a job added"),
    (lambda m: m.completion_time(9), "'key' parameter of SRPTMachine.completion_time"),
    (lambda m: m.resize(0, Fraction(1, 2)), "'size' parameter of SRPTMachine.resize must be >= the attained service 1"),
    (lambda m: m.resize(9, 1), "'key' parameter of SRPTMachine.resize"),
])
def test_invalid_calls_raise(call, message):
    m = _int_machine()
    m.add(0, 0, 3)
    m.advance(1)
    with pytest.raises(InvalidParameterError, match=message):
        call(m)


def test_invalid_start_time():
    with pytest.raises(InvalidParameterError, match="'start' parameter of SRPTMachine.__init__"):
        SRPTMachine(start=float("nan"))


def test_advance_cost_does_not_grow_with_finished_jobs():
    """Each event touches only the heap: a machine with 20000 finished jobs advances one more
    event as cheaply as it touches the running job (counted through the tie-key calls)."""
    calls = []
    m = SRPTMachine(tie_key=lambda k: calls.append(k) or k)
    for j in range(20000):
        m.add(j, j, 1)
        m.advance(j + 1)
    assert len(calls) == 20000  # one tie key per job, computed once, never again
    before = len(m._pieces)
    m.add("late", 20000, 1)  # non-int key with its own tie key type is fine when alone
    m.advance(20001)
    assert len(m._pieces) == before + 1
