"""Classical results the proofs use or compare with (asrpt.theory.classical): CHK-04 (Phillips-Stein-
Wein), CHK-07 (WSPT on parallel machines, Kawaguchi-Kyan), CHK-08 (WSRPT), CHK-15 (SPJF and
PRR with predictions) and the negative control CHK-16 (SRPT on predicted sizes has no f(mu) bound
for flow time). Exact arithmetic throughout (ints and Fractions); irrational constants are
compared by squaring.
"""

from fractions import Fraction

import pytest
from hypothesis import example, given, note, settings, target
from hypothesis import strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.offline.bounds import lower_bounds
from asrpt.offline.bruteforce import bruteforce_rigid_nonpreemptive, greedy_rigid_starts
from asrpt.offline.opt import offline_opt
from asrpt.single import srpt_schedule, wspt_schedule
from asrpt.testing.strategies import job_arrays, weighted_job_arrays
from asrpt.theory import certify_instance
from asrpt.theory.classical import prr_schedule, psw_schedule, spjf_schedule, sprpt_schedule, wsrpt_schedule


def _total(values):
    return sum(values, 0)


# --- every rule gives a valid single-machine schedule --------------------------------------------


@given(weighted_job_arrays(max_jobs=7, exact=True), st.data())
def test_rules_give_valid_schedules(arrays, data):
    releases, sizes, weights = arrays
    weights = [w or 1 for w in weights]
    predicted = data.draw(st.lists(st.integers(0, 12), min_size=len(sizes), max_size=len(sizes)))
    for s in (wsrpt_schedule(releases, sizes, weights), psw_schedule(releases, sizes),
              sprpt_schedule(releases, sizes, predicted), spjf_schedule(sizes, predicted),
              prr_schedule(sizes, predicted, Fraction(1, 3))):
        assert s.problems() == [], s.rule


# --- CHK-04: the Phillips-Stein-Wein conversion ----------------------------------------------------


@given(job_arrays(max_jobs=8, exact=True, allow_zero=True))
def test_chk04_nonpreemptive_conversion_at_most_twice_srpt_per_job(arrays):
    """CHK-04: listing jobs non-preemptively in SRPT completion order gives C_j <= 2 C_j^SRPT."""
    releases, sizes = arrays
    srpt = srpt_schedule(releases, sizes)
    psw = psw_schedule(releases, sizes)
    assert all(c <= 2 * s for c, s in zip(psw.completion_times, srpt.completion_times))
    assert all(p.share == 1 for p in psw.pieces) and len(psw.pieces) == sum(1 for x in sizes if x)


# --- CHK-07: WSPT list scheduling on P || sum w_j C_j ----------------------------------------------


@settings(max_examples=40)
@given(st.integers(2, 3), weighted_job_arrays(min_jobs=1, max_jobs=6, same_release=True))
def test_chk07_wspt_within_kawaguchi_kyan_of_optimum(m, arrays):
    """CHK-07: WSPT list scheduling <= (1 + sqrt 2)/2 OPT on identical machines (OPT by brute force
    over orders with the order-preserving greedy, exact for P || sum w_j C_j)."""
    _, sizes, weights = arrays
    weights = [w or 1 for w in weights]
    n = len(sizes)
    inst = Instance(Cluster.homogeneous(1, m), tuple(
        Job(f"j{i}", 0, 1, processing_time=p or 1, weight=w) for i, (p, w) in enumerate(zip(sizes, weights))))
    sizes = [j.processing_time for j in inst.jobs]
    opt = bruteforce_rigid_nonpreemptive(inst).objective
    order = sorted(range(n), key=lambda j: (-Fraction(weights[j], sizes[j]), j))
    starts = greedy_rigid_starts([0] * n, sizes, [1] * n, m, order)
    alg = _total(w * (s + p) for w, s, p in zip(weights, starts, sizes))
    assert alg >= opt
    d = 2 * alg - opt                              # alg <= (1 + sqrt 2)/2 opt  <=>  d <= sqrt(2) opt
    assert d <= 0 or d * d <= 2 * opt * opt
    target(float(Fraction(alg, opt)), label="wspt/opt")


# --- CHK-08: WSRPT on 1 | r_j, pmtn | sum w_j C_j -----------------------------------------------


@settings(max_examples=25)
@given(weighted_job_arrays(min_jobs=1, max_jobs=5, max_size=5, max_gap=3))
def test_chk08_wsrpt_within_1_2259_of_a_feasible_schedule(arrays):
    """CHK-08: WSRPT <= 1.2259 OPT <= 1.226 UB, UB from the slotted ILP (the constant rounded up at
    its fourth decimal); WSRPT is at least every lower bound."""
    releases, sizes, weights = arrays
    sizes = [p or 1 for p in sizes]
    weights = [w or 1 for w in weights]
    inst = Instance(Cluster.homogeneous(1, 1), tuple(
        Job(f"j{i}", r, 1, processing_time=p, weight=w) for i, (r, p, w) in enumerate(zip(releases, sizes, weights))))
    alg = wsrpt_schedule(releases, sizes, weights, ids=[j.id for j in inst.jobs]).weighted_total(weights)
    opt = offline_opt(inst, time_limit=20)
    assert alg >= lower_bounds(inst).best
    assert alg <= Fraction(1226, 1000) * opt.upper_bound
    target(float(Fraction(alg) / Fraction(opt.upper_bound)), label="wsrpt/ub")


@given(weighted_job_arrays(max_jobs=7, same_release=True))
def test_wsrpt_without_releases_is_smiths_rule(arrays):
    _, sizes, weights = arrays
    weights = [w or 1 for w in weights]
    wsrpt = wsrpt_schedule([0] * len(sizes), sizes, weights)
    assert wsrpt.weighted_total(weights) == wspt_schedule(sizes, weights).weighted_total(weights)


# --- CHK-15: SPJF and PRR with predictions (all jobs at time 0) -------------------------------------

_SIZES = st.lists(st.integers(1, 12), min_size=1, max_size=7)


def _with_predictions(draw_sizes):
    return st.builds(lambda xs, noise: (xs, [max(0, x + e) for x, e in zip(xs, noise)]),
                     st.just(draw_sizes), st.lists(st.integers(-10, 10), min_size=len(draw_sizes),
                                                   max_size=len(draw_sizes)))


@given(_SIZES.flatmap(_with_predictions))
@example(([1, 2, 3, 4], [4, 3, 2, 1]))                # fully inverted predictions
def test_chk15_spjf_within_n_minus_1_eta_of_opt(pair):
    """CHK-15: SPJF - OPT = sum over inverted pairs |x_i - x_j| <= (n - 1) eta, and with x_j >= 1,
    SPJF / OPT <= 1 + 2 eta / n (Purohit, Svitkina, Kumar 2018)."""
    xs, ys = pair
    n = len(xs)
    eta = _total(abs(x - y) for x, y in zip(xs, ys))
    spjf = spjf_schedule(xs, ys).total_completion_time
    opt = srpt_schedule([0] * n, xs).total_completion_time
    order = sorted(range(n), key=lambda j: (ys[j], j))
    pos = {j: i for i, j in enumerate(order)}
    inverted = _total(xs[i] - xs[j] for i in range(n) for j in range(n) if pos[i] < pos[j] and xs[i] > xs[j])
    assert spjf - opt == inverted <= (n - 1) * eta
    assert Fraction(spjf, opt) <= 1 + Fraction(2 * eta, n)


@given(_SIZES.flatmap(_with_predictions), st.sampled_from([Fraction(1, 4), Fraction(1, 2), Fraction(3, 4),
                                                           Fraction(9, 10)]))
def test_chk15_prr_consistency_and_robustness(pair, lam):
    """CHK-15: PRR(lambda) <= min{(1/lambda)(1 + 2 eta/n), 2/(1 - lambda)} OPT (exact)."""
    xs, ys = pair
    n = len(xs)
    eta = _total(abs(x - y) for x, y in zip(xs, ys))
    prr = prr_schedule(xs, ys, lam).total_completion_time
    opt = srpt_schedule([0] * n, xs).total_completion_time
    bound = min((1 + Fraction(2 * eta, n)) / lam, 2 / (1 - lam))
    assert opt <= prr <= bound * opt
    note(f"PRR/OPT = {float(Fraction(prr) / opt):.4f}, bound {float(bound):.4f}")


# --- CHK-16: no f(mu) bound for SRPT on predicted sizes (negative control) -----------------------


def _sprpt_family(m: int):
    """A job of true size 2m predicted at m (mu = 2), then m unit jobs at m, m+1, ..., 2m-1."""
    releases = [0] + [m + i for i in range(m)]
    sizes = [2 * m] + [1] * m
    predicted = [m] + [1] * m
    return releases, sizes, predicted


@pytest.mark.parametrize("m", [2, 4, 8, 16, 32])
def test_chk16_sprpt_flow_time_ratio_grows_with_n_at_fixed_mu(m):
    """CHK-16: at distortion mu = 2 the SPRPT / SRPT flow-time ratio is (m + 3)/4, unbounded in n;
    the sum-of-completion-times ratio stays below 5/3 (damped by the releases)."""
    releases, sizes, predicted = _sprpt_family(m)
    sprpt = sprpt_schedule(releases, sizes, predicted)
    srpt = srpt_schedule(releases, sizes)
    assert Fraction(sprpt.total_flow_time, srpt.total_flow_time) == Fraction(m + 3, 4)
    assert Fraction(sprpt.total_completion_time, srpt.total_completion_time) < Fraction(5, 3)


def test_chk16_asrpt_on_one_gpu_has_the_same_flow_time_blow_up():
    """A-SRPT on one GPU follows SPRPT on the family (the virtually finished long job keeps the
    GPU): its flow time is unbounded at mu = 2 while Theorem 1's sum C_j bound 1 + mu holds."""
    m = 16
    releases, sizes, predicted = _sprpt_family(m)
    inst = Instance(Cluster.homogeneous(1, 1), tuple(
        Job(f"j{i}", r, 1, processing_time=p, predicted_processing_time=y)
        for i, (r, p, y) in enumerate(zip(releases, sizes, predicted))))
    cert = certify_instance(inst)
    sprpt = sprpt_schedule(releases, sizes, predicted, ids=[j.id for j in inst.jobs])
    assert cert.total_completion_time == sprpt.total_completion_time
    flow = cert.total_completion_time - sum(releases)
    assert Fraction(flow, srpt_schedule(releases, sizes).total_flow_time) == Fraction(m + 3, 4)
    assert cert.holds and cert.mu == 2 and cert.ratio_to_lb <= 1 + cert.rho * cert.mu


def test_chk16_search_finds_a_bad_instance_at_mu_2():
    """A seeded local search over instances with mu <= 2 and at most 20 jobs (moves: shift, grow or
    shrink a job, double a job with or without its prediction, add a copy one step later, drop a
    job) finds an SPRPT / SRPT flow-time ratio above 1.5 without being told the family above;
    the family shows that the ratio grows without bound (no f(mu) bound)."""
    import numpy as np

    rng = np.random.default_rng(2)

    def ratio(rows):
        rel, size, pred = (list(c) for c in zip(*rows))
        return Fraction(sprpt_schedule(rel, size, pred).total_flow_time, srpt_schedule(rel, size).total_flow_time)

    def valid(rows):
        hi = max(Fraction(y, x) for _, x, y in rows)
        lo = min(Fraction(y, x) for _, x, y in rows)
        return len(rows) <= 20 and max(hi, 1) / min(lo, 1) <= 2

    best = [(0, 2, 2), (1, 1, 1)]
    best_ratio = ratio(best)
    for _ in range(4000):
        cand = [list(r) for r in best]
        i = int(rng.integers(len(cand)))
        move = int(rng.integers(7))
        if move == 0:
            cand[i][0] = max(0, cand[i][0] + int(rng.choice([-1, 1])))
        elif move == 1:
            cand[i][1] = max(1, cand[i][1] + int(rng.choice([-1, 1])))
        elif move == 2:
            cand[i][2] = max(1, cand[i][2] + int(rng.choice([-1, 1])))
        elif move == 3:
            cand[i][1] *= 2
            cand[i][2] *= int(rng.integers(1, 3))
        elif move == 4:
            cand.append([cand[i][0] + 1, cand[i][1], cand[i][2]])
        elif move == 5 and len(cand) > 1:
            cand.pop(i)
        else:
            cand.append(list(cand[i]))
        cand = [tuple(r) for r in cand]
        if valid(cand):
            r = ratio(cand)
            if r >= best_ratio:
                best, best_ratio = cand, r
    assert best_ratio > Fraction(3, 2), (best, float(best_ratio))


# --- raise paths ------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: wsrpt_schedule([0], [1], [0]), "'weights' parameter of wsrpt_schedule"),
    (lambda: wsrpt_schedule([0, 1], [1], [1]), "must have the length of 'sizes'"),
    (lambda: psw_schedule([0], [-1]), "'sizes' parameter of psw_schedule"),
    (lambda: spjf_schedule([1, 2], [1]), "must have the length of 'sizes'"),
    (lambda: prr_schedule([1], [1], 1), "'lam' parameter of prr_schedule"),
    (lambda: sprpt_schedule([0], [1], [1], ids=["a", "a"]), "'ids' parameter of sprpt_schedule"),
])
def test_invalid_input_raises(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call()
