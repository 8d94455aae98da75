"""The envelope virtual machine (asrpt.single.envelope): Lemma 7 of proofs/theorem2.md on every
example (the length and area properties the proof of Theorem 2 uses, and the cost within
LB1 + LB2), and the starvation family that defeats the gang machine costs it little."""

from fractions import Fraction

import pytest
from hypothesis import given

from asrpt.errors import InvalidParameterError
from asrpt.single.envelope import envelope_schedule
from asrpt.single.gang import gang_schedule
from asrpt.single.srpt import srpt_schedule

from .test_gang import _lower_bounds, gang_jobs, starvation_family


@given(gang_jobs(max_jobs=8))
def test_lemma7_length_area_and_cost(case):
    m, releases, times, gpus = case
    c = envelope_schedule(releases, times, gpus, m)
    # length: no job finishes before its own processing time has passed
    assert all(cj >= a + p for cj, a, p in zip(c, releases, times))
    # area: the jobs finished by each C~_j did at most M C~_j of GPU-time
    for cj in c:
        assert sum(g * p for ck, g, p in zip(c, gpus, times) if ck <= cj) <= m * cj
    # cost: at most LB1 + LB2 (so at most twice the optimum)
    lb1, lb2 = _lower_bounds(m, releases, times, gpus)
    assert sum(c) <= lb1 + lb2


@given(gang_jobs(max_jobs=8))
def test_envelope_is_the_max_of_its_two_lower_bound_schedules(case):
    m, releases, times, gpus = case
    fluid = srpt_schedule(releases, [Fraction(g * p, m) for g, p in zip(gpus, times)]).completion_times
    assert envelope_schedule(releases, times, gpus, m) == tuple(
        max(f, a + p) for f, a, p in zip(fluid, releases, times))


@pytest.mark.parametrize("m", [6, 8, 32, 128])
def test_envelope_absorbs_the_starvation_family(m):
    """Where the gang machine is at 2.6-8.3 times max(LB1, LB2), the envelope stays below 1.25."""
    releases, times, gpus = starvation_family(m)
    lb = max(_lower_bounds(m, releases, times, gpus))
    assert sum(envelope_schedule(releases, times, gpus, m)) <= Fraction(5, 4) * lb
    assert sum(gang_schedule(releases, times, gpus, m)) >= 2 * lb


@pytest.mark.parametrize("args, message", [
    (([0], [1, 2], [1], 2), "same length"),
    (([0], [1], [3], 2), r"every gang must be an int in \[1, 2\]"),
    (([0], [1], [1], 0), "capacity must be an int >= 1"),
])
def test_bad_input_is_named(args, message):
    with pytest.raises(InvalidParameterError, match=message):
        envelope_schedule(*args)


@pytest.mark.parametrize("n", [8, 80])
def test_counterexample_4_no_per_job_flow_bound_in_the_virtual_flow(n):
    """proofs/theorem2.md, Counterexample 4: on 3 GPUs, a 2-GPU job of length 1/2 at 0, then
    2-GPU jobs of length 1 released every 3/4. Each virtual machine's C~ - a takes the same few
    values whatever n (envelope {1/2, 1}, gang {1/2, 5/4}, fluid six values up to 1), but no two
    of the jobs fit together, so in *any* schedule the jobs complete one after another and the
    last has flow at least (n + 5)/4. Theorem 2's bound, in absolute time, still holds and is
    certified, also where the guard fires (n = 80: the later jobs become overdue)."""
    from asrpt.instance import Cluster, Instance, Job, Server
    from asrpt.sim import simulate
    from asrpt.theory.guarded import certify_guarded_instance

    releases = [Fraction(0)] + [Fraction(3, 4) * k for k in range(n)]
    times, gpus = [Fraction(1, 2)] + [1] * n, [2] * (n + 1)
    fluid = srpt_schedule(releases, [Fraction(g * p, 3) for g, p in zip(gpus, times)]).completion_times
    for machine, values in ((envelope_schedule(releases, times, gpus, 3), {Fraction(1, 2), 1}),
                            (gang_schedule(releases, times, gpus, 3), {Fraction(1, 2), Fraction(5, 4)}),
                            (fluid, {Fraction(k, 12) for k in (4, 8, 9, 10, 11, 12)})):
        assert {c - a for c, a in zip(machine, releases)} == values
    inst = Instance(Cluster((Server(3),)), tuple(Job(f"j{k}", a, 2, processing_time=p)
                                                 for k, (a, p) in enumerate(zip(releases, times))))
    cert = certify_guarded_instance(inst)
    assert cert.holds and cert.covered and cert.exact
    run = simulate(inst, "a-srpt:adaptive=off")
    assert sorted(r.completion for r in run.records) == [Fraction(1, 2) + k for k in range(n + 1)]
    flows = [r.completion - r.arrival for r in run.records]
    assert max(flows) == Fraction(n + 5, 4)            # the least any schedule can have
    assert bool(run.policy_data["overdue_at"]) == (n == 80)
