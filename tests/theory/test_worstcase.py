"""Theorem 1 against the offline optimum and the worst-case search (asrpt.theory.worstcase).

The certification rule: with LB <= OPT <= UB, ``ALG <= c LB``
certifies Theorem 1 on the instance, ``ALG > c UB`` would be a certified bug. The search only
refutes; the tests check that it reaches ratios above 1 where they exist (a search that never
leaves 1.0 signals a broken adversary or a broken OPT) and stays within the
theorem where OPT is known.
"""

from fractions import Fraction

import pytest
from hypothesis import event, given, note, settings, target

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job, load_instance
from asrpt.offline.opt import offline_opt
from asrpt.testing.strategies import gang_instances
from asrpt.theory import certify_instance
from asrpt.theory.worstcase import (DEFAULT_CELLS, Cell, WorstCase, _cell_rows_strategy, _make, evaluate,
                                    main, render_table, worst_case, worst_case_table)

TWO_MACHINES = "instances/srpt-two-machines.json"


# --- Theorem 1 against the OPT bracket ----------------------------------------------------------


@settings(max_examples=20)
@given(gang_instances(max_jobs=4, max_gpus=4, max_servers=1, max_processing_time=4, max_gap=3,
                      max_mu=100))
def test_theorem1_ratio_against_the_offline_bracket(inst):
    """ALG <= beta (1 + rho mu) LB on every instance (certified), hence <= bound * UB; the bracket
    [ALG / UB, ALG / LB] of the true ratio ALG / OPT is reported (note) and targeted."""
    cert = certify_instance(inst)
    opt = offline_opt(inst, time_limit=10, max_slots=60)    # a coarser grid keeps every ILP small
    alg, c = cert.total_completion_time, cert.ratio_bound
    lower = max(opt.lower_bound, cert.lower_bound)
    assert lower <= opt.upper_bound
    assert alg <= c * lower                        # certified on this instance
    assert alg <= c * opt.upper_bound              # a violation here would be a certified bug
    bracket = (Fraction(alg) / Fraction(opt.upper_bound), Fraction(alg) / Fraction(lower))
    note(f"ALG / OPT in [{float(bracket[0]):.4f}, {float(bracket[1]):.4f}], bound {float(c):.3f}")
    event("OPT known exactly" if lower == opt.upper_bound else "OPT bracketed")
    target(float(bracket[0]), label="asrpt/opt_upper")


def test_evaluate_pinned_two_machines_21_over_20():
    """A-SRPT with g = 1 is SRPT on M machines: the pinned instance costs 21 against OPT 20."""
    e = evaluate(load_instance(TWO_MACHINES))
    assert (e.alg, e.opt_upper, e.ratio, e.bound) == (21, 20, Fraction(21, 20), 2)
    assert e.certificate_holds and not e.violation


# --- the search ---------------------------------------------------------------------------------


def test_one_gpu_with_exact_predictions_is_optimal():
    r = worst_case(gpus=1, max_jobs=4, budget=30, max_evals=25, seed=3)
    assert r.ratio == 1 and r.opt_exact and r.bound == 2


def test_search_reaches_ratios_above_one_and_stays_within_the_bound():
    r = worst_case(gpus=2, max_jobs=5, budget=60, max_evals=40, seed=0, start=load_instance(TWO_MACHINES))
    assert r.ratio >= Fraction(21, 20)             # at least the known bad case
    assert r.ratio <= r.ratio_upper and r.ratio <= r.bound and not r.violation
    assert r.certificate_holds
    assert list(r.history) == sorted(r.history, key=lambda h: h[1])


def test_search_is_reproducible_for_a_fixed_evaluation_budget():
    runs = [worst_case(gpus=3, max_jobs=3, mu=4, budget=120, max_evals=30, seed=7) for _ in range(2)]
    assert runs[0].instance == runs[1].instance and runs[0].ratio == runs[1].ratio
    assert runs[0].evaluations == 30


def test_cell_instances_respect_the_cell():
    from hypothesis import given as given_, settings as settings_

    cell = Cell(4, 3, Fraction(5, 2), 4)

    @settings_(max_examples=30)
    @given_(_cell_rows_strategy(cell))
    def check(rows):
        inst = _make(cell, rows)
        assert 1 <= inst.n_jobs <= 4 and all(j.gpus <= 3 for j in inst.jobs)
        cert = certify_instance(inst)
        assert cert.mu <= Fraction(5, 2) and cert.covered

    check()


def test_table_renders_and_main_writes_it(tmp_path):
    rows = worst_case_table([(1, 1, 1), (2, 2, 4)], max_jobs=2, budget=30, max_evals=8)
    text = render_table(rows, command="cmd", instances_dir="dir")
    assert text.count("\n| ") == 3 and "Violations of Theorem 1 found: 0." in text
    assert all(r.opt_exact for r in rows) and "OPT proven on 2 of 2 rows" in text
    out = tmp_path / "table.md"
    assert main(["table", "--out", str(out), "--instances", str(tmp_path / "inst"), "--cells", "1:1:1",
                 "--budget", "30", "--max-evals", "5", "--max-jobs", "2"]) == 0
    assert "| 1 | 1 | 1 |" in out.read_text()
    assert load_instance(tmp_path / "inst" / "M1-g1-mu1.json").n_jobs >= 1
    assert (1, 1, 1) in DEFAULT_CELLS and (8, 5, 100) in DEFAULT_CELLS


def _row(alg, lower, upper, proof="exact", cell=(2, 1, 1)):
    """A WorstCase with a given bracket, built by hand (no search)."""
    m, g, mu = cell
    inst = Instance(Cluster.homogeneous(1, m), (Job("a", 0, 1, processing_time=2),))
    closed, c = lower == upper, Cell(m, g, mu, 5)
    return WorstCase(c, inst, alg, lower, upper, Fraction(alg) / Fraction(upper),
                     Fraction(alg) / Fraction(lower), c.bound, c.bound, True, closed, 7, 0.1,
                     opt_proof=proof if closed else None)


def _table_lines(text):
    return [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| M ")]


def test_a_proven_row_reports_alg_over_opt_exactly_and_no_bracket():
    text = render_table([_row(75, 59, 59)], command="cmd")
    [line] = _table_lines(text)
    assert line.split(" | ")[4:8] == ["75", "59", "yes", "1.2712 (75/59)"]
    assert "<= ratio <=" not in text.split("| M |")[1] and " .. " not in line
    assert "OPT proven on 1 of 1 rows (every proof in exact arithmetic)." in text
    assert "Largest ratio found: ALG/OPT = 1.2712 (75/59), cell M2-g1-mu1" in text
    assert "Open rows" not in text
    # a fractional OPT is shown as its fraction, a proof by the exact-grid ILP is marked
    [line] = _table_lines(render_table([_row(30, Fraction(113, 4), Fraction(113, 4), "mip")], command="c"))
    assert line.split(" | ")[5:8] == ["113/4 (28.25)", "yes (mip)", "1.0619 (120/113)"]


def test_an_open_row_reports_the_bracket():
    text = render_table([_row(48, 43, 46), _row(75, 59, 59, cell=(1, 1, 4))], command="cmd")
    open_line, proven_line = _table_lines(text)
    assert open_line.split(" | ")[4:8] == ["48", "43 .. 46", "no", "1.0435 <= ratio <= 1.1163"]
    assert open_line.split(" | ")[10] == "0.522 .. 0.558"      # against the cell bound 2
    assert "<= ratio <=" not in proven_line
    assert "OPT proven on 1 of 2 rows" in text
    assert "Open rows: 1; the largest upper end of a bracket is ALG/LB = 1.1163 (cell M2-g1-mu1)." in text
    assert "Closest to its cell bound: 0.522 of it, cell M2-g1-mu1 (ALG/UB = 1.0435, OPT not proven" in text


def test_the_table_says_how_opt_is_computed():
    text = render_table([_row(21, 20, 20)], command="cmd", instances_dir="dir")
    assert "`asrpt.offline.opt.offline_opt`" in text and "branch and bound" in text
    assert "slotted ILP (slot 1" not in text and "ALG/UB | ALG/LB" not in text
    assert "The search only refutes" in text
    assert "| ALG | OPT | OPT proven | ALG/OPT | instance bound | cell bound |" in text


def test_the_worst_instance_gets_a_final_offline_opt_run(monkeypatch):
    """The search's bracket is left open on purpose (its lower side lowered); the final run of
    final_time_limit seconds proves OPT, and the result reports ALG / OPT exactly."""
    import dataclasses

    import asrpt.theory.worstcase as wc

    real, calls = wc._bracket, []

    def bracket(instance, *, time_limit, preemptive, slot=None):
        calls.append(time_limit)
        r = real(instance, time_limit=time_limit, preemptive=preemptive, slot=slot)
        if time_limit != 45:     # the search's runs: open
            return dataclasses.replace(r, lower_bound=r.lower_bound - 2, closed=False, proof=None)
        return r

    monkeypatch.setattr(wc, "_bracket", bracket)
    r = worst_case(gpus=2, max_jobs=5, budget=30, max_evals=1, start=load_instance(TWO_MACHINES),
                   time_limit=7, final_time_limit=45)
    assert calls == [7, 45]
    assert r.opt_exact and r.opt_proof == "exact" and (r.alg, r.opt_upper, r.ratio) == (21, 20, Fraction(21, 20))
    calls.clear()
    r = worst_case(gpus=2, max_jobs=5, budget=30, max_evals=1, start=load_instance(TWO_MACHINES),
                   time_limit=7, refine=False)
    assert calls == [7] and not r.opt_exact and r.opt_proof is None and r.ratio_upper > r.ratio


def test_a_table_rerun_starts_from_the_saved_worst_instances(tmp_path):
    """start_dir: each cell evaluates its saved instance first (here the only evaluation), so a
    rerun cannot report less; an instance outside the cell (too many jobs) is ignored."""
    import shutil

    shutil.copy(TWO_MACHINES, tmp_path / "M2-g1-mu1.json")
    [r] = worst_case_table([(2, 1, 1)], max_jobs=5, budget=30, max_evals=1, start_dir=str(tmp_path))
    assert (r.ratio, r.opt_exact, r.evaluations) == (Fraction(21, 20), True, 1)
    [r] = worst_case_table([(2, 1, 1)], max_jobs=2, budget=30, max_evals=1, start_dir=str(tmp_path))
    assert r.instance.n_jobs <= 2
    text = render_table([r], command="cmd", start_dir="saved")
    assert "worst instance saved for it in `saved/`" in text


@pytest.mark.parametrize("kwargs, message", [
    ({"gpus": 0, "max_jobs": 2}, "'gpus' parameter of worst_case"),
    ({"gpus": 2, "max_jobs": 9}, "'max_jobs' parameter of worst_case"),
    ({"gpus": 2, "max_jobs": 2, "mu": 0.5}, "'mu' parameter of worst_case"),
    ({"gpus": 2, "max_jobs": 2, "budget": 0}, "'budget' parameter of worst_case"),
    ({"gpus": 2, "max_jobs": 2, "seed": -1}, "'seed' parameter of worst_case"),
])
def test_invalid_search_parameters(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        worst_case(**kwargs)


def test_invalid_evaluate_parameters():
    with pytest.raises(InvalidParameterError, match="'instance' parameter of evaluate"):
        evaluate("x")
    with pytest.raises(InvalidParameterError, match="'time_limit' parameter of evaluate"):
        evaluate(Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=1),)), time_limit=0)


# --- the deep search (slow) --------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("m, g, mu", [(2, 2, 1), (4, 3, 1), (4, 4, 4), (3, 2, 100)])
def test_deep_search_finds_no_violation_of_theorem_1(m, g, mu):
    """Hypothesis-driven (target) plus local search for 3 minutes per cell: no certified violation,
    and ratios above 1 are reached (the adversary works)."""
    r = worst_case(gpus=m, max_jobs=5, mu=mu, max_job_gpus=g, budget=180, seed=11)
    assert not r.violation and r.certificate_holds
    assert r.ratio > 1


# --- outside the theorem (the open questions) -----------------------------------------------------


def test_evaluate_outside_the_theorem_keeps_the_bracket_valid():
    inst = load_instance(TWO_MACHINES)
    base = evaluate(inst)
    costly = evaluate(inst, preemption_cost=2)
    # with a restart cost the upper bound is the non-preemptive optimum (it pays no restart)
    assert costly.opt_upper >= base.opt_upper and costly.opt_lower <= costly.opt_upper
    assert costly.bound == base.bound == 2
    strict = evaluate(inst, backfill=False)
    assert strict.opt_upper == base.opt_upper and strict.alg >= base.opt_lower


def test_search_records_its_setting():
    r = worst_case(gpus=2, max_jobs=3, budget=60, max_evals=10, seed=1, adaptive="doubling", mu=4)
    assert r.setting == {"adaptive": "doubling", "backfill": True, "preemption_cost": 0}
    assert r.to_dict()["setting"]["adaptive"] == "doubling"
    with pytest.raises(InvalidParameterError, match="'adaptive' parameter of worst_case"):
        worst_case(gpus=2, max_jobs=2, adaptive="sometimes")


@pytest.mark.slow
@given(gang_instances(max_jobs=5, max_gpus=8, max_servers=1, max_processing_time=6, max_gap=4,
                      max_mu=16, exact=False))
def test_deep_targeted_search_against_the_exact_optimum(inst):
    """Run with HYPOTHESIS_PROFILE=deep -m slow (2000 examples): hypothesis target() climbs towards
    large ALG / UB; Theorem 1 must never be violated against the feasible upper bound."""
    e = evaluate(inst, time_limit=10)
    note(f"ALG / OPT in [{float(e.ratio):.4f}, {float(e.ratio_upper):.4f}], bound {float(e.bound):.3f}")
    assert not e.violation and e.certificate_holds
    target(float(e.ratio), label="asrpt/opt_upper")


def test_evaluation_reports_the_flow_time_bracket():
    from asrpt.instance import load_instance
    from asrpt.theory.worstcase import evaluate

    e = evaluate(load_instance("instances/srpt-two-machines.json"))
    arrivals = sum(j.arrival for j in e.instance.jobs)
    assert e.flow_ratio == Fraction(e.alg - arrivals, e.opt_upper - arrivals)
    assert e.flow_ratio_upper == Fraction(e.alg - arrivals, e.opt_lower - arrivals) >= e.flow_ratio >= 1
