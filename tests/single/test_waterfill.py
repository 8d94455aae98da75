"""Water-filling (asrpt.single.waterfill): processor sharing generalized to gangs, Lemma 5's rigid
realization of its shares and Lemma 6's waiting bound (proofs/theorem3.md)."""

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.single.rules import ps_schedule
from asrpt.single.waterfill import strict_list_makespan, water_shares, waterfill_schedule

small = st.integers(0, 6)


@st.composite
def gang_jobs(draw, max_jobs=7):
    m = draw(st.integers(1, 8))
    n = draw(st.integers(1, max_jobs))
    arrivals = draw(st.lists(small, min_size=n, max_size=n))
    sizes = draw(st.lists(st.integers(1, 6).map(lambda x: Fraction(x, draw(st.sampled_from([1, 2, 3])))),
                          min_size=n, max_size=n))
    gpus = draw(st.lists(st.integers(1, m), min_size=n, max_size=n))
    return arrivals, sizes, gpus, m


@settings(max_examples=80)
@given(st.lists(st.tuples(small, small), min_size=1, max_size=8))
def test_unit_gangs_on_one_gpu_are_processor_sharing(jobs):
    a, p = [x for x, _ in jobs], [y for _, y in jobs]
    assert waterfill_schedule(a, p, [1] * len(a), 1).completion_times == ps_schedule(a, p).completion_times


@settings(max_examples=80)
@given(st.lists(st.integers(1, 8), min_size=1, max_size=10), st.integers(1, 16))
def test_shares_use_the_capacity_and_nobody_gets_more_than_a_job_below_its_cap(gpus, m):
    gpus = [min(g, m) for g in gpus]
    x = water_shares(gpus, m)
    used = sum(g * s for g, s in zip(gpus, x))
    assert all(0 < s <= 1 for s in x)
    assert used == min(m, sum(gpus))
    below = [g * s for g, s in zip(gpus, x) if s < 1]
    if below:       # the level: every job below its cap gets the same GPUs, the most anyone gets
        assert len(set(below)) == 1 and max(g * s for g, s in zip(gpus, x)) == below[0]


@settings(max_examples=60)
@given(gang_jobs(), st.sampled_from([1, Fraction(1, 2), Fraction(1, 6)]))
def test_speed_scales_the_sizes(jobs, speed):
    a, p, g, m = jobs
    slow = waterfill_schedule(a, p, g, m, speed=speed).completion_times
    assert slow == waterfill_schedule(a, [x / speed for x in p], g, m).completion_times


@settings(max_examples=60)
@given(gang_jobs())
def test_pieces_account_for_every_job_exactly(jobs):
    a, p, g, m = jobs
    s = waterfill_schedule(a, p, g, m, record=True)
    done = {k: 0 for k in range(len(p))}
    for piece in s.pieces:
        assert sum(g[k] * x for k, x in piece.shares) <= m
        for k, x in piece.shares:
            assert piece.start >= a[k]
            done[k] += x * (piece.end - piece.start)
    assert done == dict(enumerate(p))
    assert all(c >= ai + pi for c, ai, pi in zip(s.completion_times, a, p))


@settings(max_examples=100)
@given(gang_jobs())
def test_lemma6_waiting_bound(jobs):
    a, p, g, m = jobs
    for speed in (1, Fraction(1, 3)):
        c = waterfill_schedule(a, p, g, m, speed=speed).completion_times
        area = [gi * pi for gi, pi in zip(g, p)]
        for j in range(len(p)):
            near = sum(min(area[k], area[j]) for k in range(len(p)) if k == j or (a[k] < c[j] and c[k] > a[j]))
            assert c[j] <= a[j] + (p[j] + Fraction(near, 1) / m) / speed


def test_gangs_that_fit_together_run_at_full_rate():
    c = waterfill_schedule([0, 1, 2], [4, 2, Fraction(1, 2)], [2, 1, 1], 4, speed=Fraction(1, 2)).completion_times
    assert c == (8, 5, 3)


@settings(max_examples=150)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=10), st.integers(1, 12), st.data())
def test_lemma5_a_third_of_any_feasible_shares_fits_one_slice(widths, m, data):
    widths = [min(w, m) for w in widths]
    # any fractional shares with sum g x <= M (not only water-filling's)
    x = [Fraction(r, 12) for r in data.draw(st.lists(st.integers(0, 12), min_size=len(widths),
                                                      max_size=len(widths)))]
    used = sum(w * xi for w, xi in zip(widths, x))
    if used > m:
        x = [xi * m / used for xi in x]
    assert sum(w * xi for w, xi in zip(widths, x)) <= m and all(xi <= 1 for xi in x)
    assert strict_list_makespan(widths, [xi / 3 for xi in x], m) <= 1
    assert strict_list_makespan(widths, [xi / 3 for xi in water_shares(widths, m)], m) <= 1


def test_lemma5_factor_one_fails():
    # three 3-GPU gangs on 5 GPUs at water-filling's share 5/9 run one after another: 5/3 at full
    # length, so the fractional shares are not rigid by themselves; a factor c fits iff c <= 3/5
    x = water_shares([3, 3, 3], 5)
    assert strict_list_makespan([3, 3, 3], x, 5) == Fraction(5, 3)
    assert strict_list_makespan([3, 3, 3], [xi * Fraction(3, 5) for xi in x], 5) == 1
    assert strict_list_makespan([3, 3, 3], [xi / 3 for xi in x], 5) == Fraction(5, 9)


@pytest.mark.parametrize("m", [5, 9, 101])
def test_lemma5_no_factor_above_about_one_half(m):
    """proofs/theorem3.md, after Lemma 5: k gangs of width w = floor(M/2) + 1 cannot overlap, so
    their water-filling shares M / (k w) fit one slice at a factor c iff c <= w / M, which tends to
    1/2: the best universal factor lies between Lemma 5's 1/3 and 1/2."""
    w, k = m // 2 + 1, 3
    x = water_shares([w] * k, m)
    assert x == [Fraction(m, k * w)] * k
    c = Fraction(w, m)
    assert strict_list_makespan([w] * k, [xi * c for xi in x], m) == 1
    assert strict_list_makespan([w] * k, [xi * (c + Fraction(1, 1000)) for xi in x], m) > 1


def test_floats_complete_every_job():
    s = waterfill_schedule([0.0, 0.1, 0.2], [1.0, 0.3, 2.5], [2, 1, 3], 4)
    assert all(c is not None for c in s.completion_times)
    exact = waterfill_schedule([0, Fraction(1, 10), Fraction(1, 5)], [1, Fraction(3, 10), Fraction(5, 2)], [2, 1, 3], 4)
    assert s.completion_times == pytest.approx([float(c) for c in exact.completion_times])


@pytest.mark.parametrize("kwargs, message", [
    (dict(releases=[0], sizes=[1], gpus=[5], capacity=4), r"gpus\[0\] = 5 must be an int in \[1, 4\]"),
    (dict(releases=[0], sizes=[1], gpus=[1], capacity=4, speed=0), "speed"),
    (dict(releases=[0, 1], sizes=[1], gpus=[1], capacity=4), "same length|length"),
    (dict(releases=[0], sizes=[-1], gpus=[1], capacity=4), "sizes"),
])
def test_bad_input_is_refused(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        waterfill_schedule(**kwargs)
