"""Worst-case instance search for A-SRPT against the offline optimum, and the tightness table.

This module owns the search for small abstract instances that maximise ``ALG / OPT``, where ALG is
A-SRPT's ``sum C_j`` under Theorem 1's assumptions (:func:`asrpt.theory.certificate.run_asrpt`)
and OPT the preemptive offline optimum of :func:`asrpt.offline.opt.offline_opt` (the M GPUs as one
pool): its lower bounds (LB1, LB2, LB_MBT, the configuration LP) and its event-sequence branch and
bound are exact rational arithmetic, and on the small instances searched here (at most 8 jobs,
usually 5) the branch and bound proves OPT, typically in well under a second. Where it does,
the ratio is ``ALG / OPT`` exactly; where the time limit stops it first, only the bracket
``LB <= OPT <= UB`` is known and the ratio is reported as ``ALG / UB <= ALG / OPT <= ALG / LB``.
The search maximises ``ALG / UB`` (``ALG / OPT`` where OPT is proven). It **only refutes, never
proves**: an ``ALG / UB`` above the instance's ``beta (1 + rho mu)`` would be a certified violation
of Theorem 1 (a bug); staying below proves nothing about the true worst case.

A *cell* fixes the cluster (one server of ``gpus`` GPUs: abstract jobs run anywhere, so the
server split does not matter), the largest gang ``max_job_gpus``, the distortion bound ``mu`` of
the predictions and the number of jobs. Instances have integer arrivals ``0..max_arrival`` and
processing times ``1..max_processing_time``, and predicted processing times ``P_j * f_j`` with
factors on a grid of 1/8 whose distortion ``max(1, max f) * max(1, max 1/f)`` is at most ``mu``.

The search (:func:`worst_case`) runs two phases on one evaluation cache:

1. hypothesis with ``target(ALG / UB)`` (its generate and targeted phases, seeded), which
   hill-climbs the choice sequence towards bad instances;
2. a local search from the best instances found so far: random moves (a job's arrival, length,
   gang or prediction; add, duplicate or remove a job), accepting moves that do not lower the
   ratio, restarting from the best after a run of failures.

Every instance scored gets ``offline_opt`` with ``time_limit`` (20 s by default); the final worst
instance, when its OPT is not yet proven, gets a last ``offline_opt`` run of ``final_time_limit``
(60 s by default). :func:`worst_case_table` runs the search over a grid of cells and renders the
Markdown table of ``proofs/worst-case-table.md`` (:func:`render_table`: ALG, OPT and ALG / OPT
exactly where OPT is proven, the bracket elsewhere); ``python -m asrpt.theory.worstcase table
--out FILE`` regenerates it.

Examples
--------
>>> r = worst_case(gpus=2, max_jobs=3, mu=1, budget=2, max_evals=30, seed=1)
>>> r.ratio >= 1 and r.ratio <= r.bound and r.certificate_holds
True
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Integral, Real
from typing import Any, Callable, Sequence

from .._validation import Interval, Options, validate_params
from ..instance import Cluster, Instance, Job, dumps_instance, load_instance, save_instance
from ..errors import SolverError
from ..offline.bruteforce import bruteforce_rigid_nonpreemptive
from ..offline.opt import offline_opt
from ..predict.base import ADAPTIVE_RULES
from ..random import as_generator
from .certificate import certify, run_asrpt

__all__ = ["Cell", "Evaluation", "WorstCase", "evaluate", "worst_case", "worst_case_table",
           "render_table", "DEFAULT_CELLS", "main"]

_GRID = 8  # prediction factors are multiples of 1/_GRID
_SEARCH_TIME_LIMIT = 20.0  # seconds of offline_opt per instance scored
_FINAL_TIME_LIMIT = 60.0   # seconds of the final offline_opt run on a cell's worst instance
_THEOREM_SETTING = {"adaptive": "off", "backfill": True, "preemption_cost": 0}


@dataclass(frozen=True)
class Cell:
    """One search cell: cluster size, largest gang, distortion bound and instance size.

    Attributes
    ----------
    gpus : int
        M, the cluster's GPUs (one server).
    max_job_gpus : int
        Largest g_j (1..M).
    mu : number
        Upper bound on the predictions' distortion (1: exact predictions).
    max_jobs : int
        Most jobs in an instance.
    max_processing_time, max_arrival : int
        Ranges of the integer data.

    Examples
    --------
    >>> c = Cell(4, 3, 1, 4)
    >>> c.rho, c.bound
    (Fraction(2, 1), Fraction(3, 1))
    """

    gpus: int
    max_job_gpus: int
    mu: Any
    max_jobs: int
    max_processing_time: int = 6
    max_arrival: int = 8

    @property
    def rho(self) -> Fraction:
        """``M / (M - max g + 1)``, the largest ``rho_j`` in the cell."""
        return Fraction(self.gpus, self.gpus - self.max_job_gpus + 1)

    @property
    def bound(self) -> Fraction:
        """Theorem 1's ratio for the cell (beta = 1): ``1 + rho mu``."""
        return 1 + self.rho * Fraction(self.mu)

    @property
    def name(self) -> str:
        """``M{gpus}-g{max_job_gpus}-mu{mu}`` (a fraction's slash as ``_``), used for file names."""
        return f"M{self.gpus}-g{self.max_job_gpus}-mu{str(self.mu).replace('/', '_')}"


@dataclass(frozen=True)
class Evaluation:
    """A-SRPT against the offline bracket on one instance.

    Attributes
    ----------
    instance : Instance
    alg : number
        A-SRPT's ``sum C_j``.
    opt_lower, opt_upper : number
        The bracket ``LB <= OPT <= UB``.
    ratio : number
        ``alg / opt_upper`` (a lower bound on ``alg / OPT``).
    ratio_upper : number
        ``alg / opt_lower`` (an upper bound on ``alg / OPT``).
    bound : number
        The instance's ``beta (1 + rho mu)``.
    certificate_holds : bool
        Whether the certificate held on the run.
    status : str
        "closed" when OPT is known exactly (``opt_lower == opt_upper``), "open" otherwise.
    failures : tuple of str
        The certificate's inequalities that failed on the run.
    flow_ratio, flow_ratio_upper : number
        The same bracket in flow time: ``(alg - sum a_j) / (opt_upper - sum a_j)`` and
        ``(alg - sum a_j) / (opt_lower - sum a_j)`` (every schedule has the same ``sum a_j``).
    opt_proof : str or None
        What proved OPT when closed: ``"exact"`` (rational arithmetic: ``offline_opt``'s exact
        bounds and branch and bound, or the certificate's lower bound) or ``"mip"``
        (``offline_opt``'s exact-grid ILP, HiGHS's floating-point proof); None when open.
    """

    instance: Instance
    alg: Any
    opt_lower: Any
    opt_upper: Any
    ratio: Any
    ratio_upper: Any
    bound: Any
    certificate_holds: bool
    status: str
    failures: tuple = ()
    flow_ratio: Any = None
    flow_ratio_upper: Any = None
    opt_proof: str | None = None

    @property
    def violation(self) -> bool:
        """``ALG / UB > beta (1 + rho mu)``: a certified violation of Theorem 1."""
        return self.ratio > self.bound


@dataclass(frozen=True)
class WorstCase:
    """The worst instance a search found, with OPT (or its bracket) and Theorem 1's bound.

    Attributes
    ----------
    cell : Cell
    instance : Instance
    alg, opt_lower, opt_upper, ratio, ratio_upper, bound : number
        As in :class:`Evaluation`, for the worst instance (after its final ``offline_opt`` run).
    cell_bound : number
        ``1 + rho_max mu`` for the cell.
    certificate_holds : bool
    opt_exact : bool
        ``opt_lower == opt_upper``: OPT is proven and ``ratio`` is the true ratio ``ALG / OPT``.
    evaluations : int
        Distinct instances evaluated.
    seconds : float
        Wall time of the search.
    history : tuple of (int, float)
        (evaluation count, best ratio) each time the best improved.
    setting : mapping
        A-SRPT's options in the search (``adaptive``, ``backfill``, ``preemption_cost``); the
        theorem's setting by default.
    failures : tuple of str
        The certificate's failed inequalities on the worst instance.
    flow_ratio, flow_ratio_upper : number
        The bracket of ``ALG / OPT`` in flow time ``sum (C_j - a_j)`` for the worst instance.
    opt_proof : str or None
        As in :class:`Evaluation`: ``"exact"``, ``"mip"`` or None (open).
    """

    cell: Cell
    instance: Instance
    alg: Any
    opt_lower: Any
    opt_upper: Any
    ratio: Any
    ratio_upper: Any
    bound: Any
    cell_bound: Any
    certificate_holds: bool
    opt_exact: bool
    evaluations: int
    seconds: float
    history: tuple = field(default=(), repr=False)
    setting: Any = field(default_factory=lambda: dict(_THEOREM_SETTING))
    failures: tuple = ()
    flow_ratio: Any = None
    flow_ratio_upper: Any = None
    opt_proof: str | None = None

    @property
    def violation(self) -> bool:
        """A certified violation of Theorem 1 (``ratio > bound``)."""
        return self.ratio > self.bound

    def to_dict(self) -> dict:
        """A JSON-ready summary, with the instance as a dict of the instance file format."""
        return {
            "cell": {"gpus": self.cell.gpus, "max_job_gpus": self.cell.max_job_gpus,
                     "mu": self.cell.mu, "max_jobs": self.cell.max_jobs},
            "ratio": self.ratio, "ratio_upper": self.ratio_upper, "flow_ratio": self.flow_ratio,
            "flow_ratio_upper": self.flow_ratio_upper, "alg": self.alg,
            "opt_lower": self.opt_lower, "opt_upper": self.opt_upper, "opt_exact": self.opt_exact,
            "opt_proof": self.opt_proof,
            "bound": self.bound, "cell_bound": self.cell_bound, "violation": self.violation,
            "certificate_holds": self.certificate_holds, "failures": list(self.failures),
            "setting": dict(self.setting), "evaluations": self.evaluations,
            "seconds": self.seconds, "instance": json.loads(dumps_instance(self.instance)),
        }


# ---------------------------------------------------------------------------------------------
# Instances of a cell and their evaluation
# ---------------------------------------------------------------------------------------------

def _make(cell: Cell, rows: Sequence[tuple]) -> Instance:
    """rows: (arrival, gpus, processing_time, factor numerator on the 1/_GRID grid)."""
    jobs = []
    for i, (a, g, p, f) in enumerate(rows):
        kwargs = {}
        if f != _GRID:
            kwargs["predicted_processing_time"] = _num(Fraction(p * f, _GRID))
        jobs.append(Job(f"j{i}", a, g, processing_time=p, **kwargs))
    return Instance(Cluster.homogeneous(1, cell.gpus), tuple(jobs))


def _num(q: Fraction):
    return q.numerator if q.denominator == 1 else q


def _rows(inst: Instance) -> tuple:
    out = []
    for j in inst.jobs:
        f = _GRID if j.predicted_processing_time is None else int(
            Fraction(j.predicted_processing_time) * _GRID / Fraction(j.processing_time))
        out.append((j.arrival, j.gpus, j.processing_time, f))
    return tuple(out)


def _mu_of(factors: Sequence[int]) -> Fraction:
    hi = max([Fraction(f, _GRID) for f in factors] + [Fraction(1)])
    lo = min([Fraction(f, _GRID) for f in factors] + [Fraction(1)])
    return hi / lo


def _factor_range(cell: Cell) -> tuple[int, int]:
    mu = Fraction(cell.mu)
    lo = max(1, math.ceil(_GRID / mu))
    hi = max(_GRID, math.floor(_GRID * mu))
    return lo, hi


def _static_bound(instance: Instance, beta) -> Fraction:
    """``beta (1 + rho mu)`` with mu from the instance's own (initial) predictions."""
    m = instance.cluster.total_gpus
    rho = max(Fraction(m, m - j.gpus + 1) for j in instance.jobs)
    ratios = [Fraction(j.predicted_processing_time) / Fraction(j.processing_time)
              if j.predicted_processing_time is not None else Fraction(1) for j in instance.jobs]
    mu = max(ratios + [Fraction(1)]) / min(ratios + [Fraction(1)])
    return _num(Fraction(beta) * (1 + rho * mu))


def _bracket(instance: Instance, *, time_limit, preemptive: bool, slot=None):
    """``offline_opt``, retried with CBC when HiGHS fails without an answer (HiGHS 1.16 reports
    "Solve error" on some tiny start-time models that CBC solves)."""
    try:
        return offline_opt(instance, time_limit=time_limit, preemptive=preemptive, slot=slot)
    except SolverError:
        return offline_opt(instance, time_limit=time_limit, preemptive=preemptive, slot=slot, solver="cbc")


def _nonpreemptive_upper(instance: Instance, time_limit):
    """The non-preemptive optimum (feasible whatever the restart cost): brute force up to 7 jobs."""
    if instance.n_jobs <= 7:
        return bruteforce_rigid_nonpreemptive(instance, max_jobs=7).objective
    return _bracket(instance, time_limit=time_limit, preemptive=False).upper_bound


_SETTING_CONSTRAINTS = {
    "adaptive": [Options(str, set(ADAPTIVE_RULES))],
    "backfill": ["boolean"],
    "preemption_cost": [Interval(Real, 0, None, closed="left")],
}


@validate_params({"instance": [Instance], "time_limit": [None, Interval(Real, 0, None, closed="neither")],
                  **_SETTING_CONSTRAINTS})
def evaluate(instance: Instance, *, time_limit: float | None = _SEARCH_TIME_LIMIT, adaptive: str = "off",
             backfill: bool = True, preemption_cost=0) -> Evaluation:
    """A-SRPT against the offline optimum on ``instance`` (by default in Theorem 1's setting).

    OPT is :func:`asrpt.offline.opt.offline_opt`'s preemptive optimum (exact lower bounds and an
    exact branch and bound, which proves OPT on small instances), its lower side raised to the
    certificate's lower bound where that is larger.

    Parameters
    ----------
    instance : Instance
        A small abstract instance (a few jobs: OPT is proven quickly up to about 6).
    time_limit : float or None
        Seconds for ``offline_opt``; when it stops before proving OPT the bracket stays valid.
    adaptive, backfill, preemption_cost
        A-SRPT's options (:func:`asrpt.theory.certificate.run_asrpt`); other values than the
        defaults leave the theorem's assumptions (for the open questions). With a preemption
        cost the upper bound comes from the non-preemptive optimum (the preemptive optimum ignores
        restart costs, so only schedules without preemptions are sure to be feasible; exact by
        brute force up to 7 jobs) and the lower one from the certificate. When HiGHS fails
        without an answer ``offline_opt`` is retried with CBC.

    Returns
    -------
    Evaluation
        ``bound`` is ``beta (1 + rho mu)`` with mu from the instance's own predictions;
        ``status`` is "closed" and ``opt_proof`` set where OPT is proven.

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> e = evaluate(asrpt.instance.load_instance("instances/srpt-two-machines.json"))
    >>> e.alg, e.opt_lower, e.opt_upper, e.ratio, e.bound
    (21, 20, 20, Fraction(21, 20), 2)
    >>> e.status, e.opt_proof
    ('closed', 'exact')
    """
    result = run_asrpt(instance, adaptive=adaptive, backfill=backfill, preemption_cost=preemption_cost)
    cert = certify(instance, result)
    alg = cert.total_completion_time
    proof = None
    if preemption_cost == 0:
        opt = _bracket(instance, time_limit=time_limit, preemptive=True)
        lower, upper = max(opt.lower_bound, cert.lower_bound), opt.upper_bound
        if lower == upper:
            proof = "exact" if cert.lower_bound >= upper else opt.proof
    else:
        lower, upper = cert.lower_bound, _nonpreemptive_upper(instance, time_limit)
        if lower == upper:
            proof = "exact"
    status = "closed" if lower == upper else "open"
    ratio = _num(Fraction(alg) / Fraction(upper)) if upper else 1
    ratio_upper = _num(Fraction(alg) / Fraction(lower)) if lower else 1
    flow, flow_upper = _flow_ratios(instance, alg, lower, upper)
    return Evaluation(instance, alg, lower, upper, ratio, ratio_upper, _static_bound(instance, cert.beta),
                      cert.holds, status, tuple(cert.failures()), flow, flow_upper, proof)


def _flow_ratios(instance: Instance, alg, lower, upper) -> tuple:
    """``(ALG_flow / UB_flow, ALG_flow / LB_flow)``: the completion-time bracket minus sum a_j."""
    arrivals = sum(Fraction(j.arrival) for j in instance.jobs)
    flow = Fraction(alg) - arrivals
    hi, lo = Fraction(upper) - arrivals, Fraction(lower) - arrivals
    return (_num(flow / hi) if hi > 0 else 1), (_num(flow / lo) if lo > 0 else 1)


# ---------------------------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------------------------

class _Search:
    def __init__(self, cell: Cell, budget: float, max_evals: int | None, time_limit: float | None,
                 log: Callable[[str], None] | None, setting: dict):
        self.cell = cell
        self.setting = setting
        self.deadline = time.monotonic() + budget
        self.max_evals = max_evals
        self.time_limit = time_limit
        self.cache: dict[tuple, Evaluation] = {}
        self.best: Evaluation | None = None
        self.history: list[tuple[int, float]] = []
        self.log = log

    def out_of_budget(self) -> bool:
        return time.monotonic() >= self.deadline or (
            self.max_evals is not None and len(self.cache) >= self.max_evals)

    def valid(self, rows) -> bool:
        c = self.cell
        return (1 <= len(rows) <= c.max_jobs and _mu_of([r[3] for r in rows]) <= Fraction(c.mu)
                and all(0 <= a <= c.max_arrival and 1 <= g <= c.max_job_gpus
                        and 1 <= p <= c.max_processing_time for a, g, p, _ in rows))

    def canonical(self, rows) -> tuple:
        # Job order and names do not matter to the ratio: sort so that relabellings share a cache entry.
        return tuple(sorted(rows))

    def score(self, rows) -> Evaluation | None:
        rows = self.canonical(rows)
        if rows in self.cache:
            return self.cache[rows]
        if self.out_of_budget() or not self.valid(rows):
            return None
        ev = evaluate(_make(self.cell, rows), time_limit=self.time_limit, **self.setting)
        self.cache[rows] = ev
        if self.best is None or ev.ratio > self.best.ratio:
            self.best = ev
            self.history.append((len(self.cache), float(ev.ratio)))
            if self.log:
                opt = f"OPT {ev.opt_upper}" if ev.status == "closed" else f"UB {ev.opt_upper}"
                self.log(f"{self.cell.name}: eval {len(self.cache)}: ratio {float(ev.ratio):.4f} "
                         f"(ALG {ev.alg}, {opt})")
        return ev


def _cell_rows_strategy(cell: Cell):
    from hypothesis import strategies as st

    lo, hi = _factor_range(cell)

    @st.composite
    def rows(draw):
        n = draw(st.integers(1, cell.max_jobs))
        t, out = 0, []
        # The smallest factor first, the others in [level, level * mu]: distortion <= mu.
        level = draw(st.integers(lo, _GRID))
        top = max(level, min(hi, math.floor(level * Fraction(cell.mu))))
        for _ in range(n):
            t = min(cell.max_arrival, t + draw(st.integers(0, cell.max_arrival)))
            g = draw(st.integers(1, cell.max_job_gpus))
            p = draw(st.integers(1, cell.max_processing_time))
            f = draw(st.integers(level, top))
            out.append((t, g, p, f))
        return out

    return rows()


def _hypothesis_phase(search: _Search, max_examples: int, seed: int) -> None:
    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import seed as hseed

    @hseed(seed)
    @settings(max_examples=max_examples, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate, Phase.target],
              # one ILP per example: slow by design (see tests/conftest.py's deep profile)
              suppress_health_check=[HealthCheck.too_slow])
    @given(_cell_rows_strategy(search.cell))
    def probe(rows):
        ev = search.score(rows)
        if ev is not None:
            target(float(ev.ratio), label="asrpt/opt_upper")

    probe()


def _mutate(rows: list, cell: Cell, rng) -> list:
    rows = [list(r) for r in rows]
    lo, hi = _factor_range(cell)
    move = int(rng.integers(8))
    i = int(rng.integers(len(rows)))
    if move == 0:
        rows[i][0] = int(min(cell.max_arrival, max(0, rows[i][0] + rng.choice([-2, -1, 1, 2]))))
    elif move == 1:
        rows[i][2] = int(min(cell.max_processing_time, max(1, rows[i][2] + rng.choice([-2, -1, 1, 2]))))
    elif move == 2:
        rows[i][1] = int(rng.integers(1, cell.max_job_gpus + 1))
    elif move == 3:
        rows[i][3] = int(rng.integers(lo, hi + 1))
    elif move == 4 and len(rows) < cell.max_jobs:
        rows.append([int(rng.integers(0, cell.max_arrival + 1)), int(rng.integers(1, cell.max_job_gpus + 1)),
                     int(rng.integers(1, cell.max_processing_time + 1)), _GRID])
    elif move == 5 and len(rows) < cell.max_jobs:
        rows.append(list(rows[i]))
    elif move == 6 and len(rows) > 1:
        rows.pop(i)
    else:
        rows[i][0] = rows[int(rng.integers(len(rows)))][0]    # align two arrivals
    return [tuple(r) for r in rows]


def _local_search(search: _Search, rng, patience: int = 40) -> None:
    if search.best is None:
        return
    current = search.canonical(_rows(search.best.instance))
    current_ratio = search.best.ratio
    stale = 0
    while not search.out_of_budget():
        cand = _mutate(list(current), search.cell, rng)
        if rng.random() < 0.3:
            cand = _mutate(cand, search.cell, rng)
        ev = search.score(cand)
        if ev is None:
            stale += 1
        elif ev.ratio >= current_ratio:
            if ev.ratio > current_ratio:
                stale = 0
            current, current_ratio = search.canonical(cand), ev.ratio
        else:
            stale += 1
        if stale >= patience:               # restart: the best, or a random earlier instance
            stale = 0
            keys = list(search.cache)
            pick = search.best.instance if rng.random() < 0.5 else search.cache[keys[int(rng.integers(len(keys)))]].instance
            current = search.canonical(_rows(pick))
            current_ratio = search.cache[current].ratio


@validate_params({
    "gpus": [Interval(Integral, 1, 64, closed="both")],
    "max_jobs": [Interval(Integral, 1, 8, closed="both")],
    "mu": [Interval(Real, 1, None, closed="left")],
    "max_job_gpus": [None, Interval(Integral, 1, 64, closed="both")],
    "budget": [Interval(Real, 0, None, closed="neither")],
    "max_evals": [None, Interval(Integral, 1, None, closed="left")],
    "seed": [Interval(Integral, 0, None, closed="left")],
    "max_processing_time": [Interval(Integral, 1, 20, closed="both")],
    "max_arrival": [Interval(Integral, 0, 30, closed="both")],
    "time_limit": [None, Interval(Real, 0, None, closed="neither")],
    "refine": ["boolean"],
    "final_time_limit": [None, Interval(Real, 0, None, closed="neither")],
    "start": [None, Instance],
    "log": [None, callable],
    **_SETTING_CONSTRAINTS,
})
def worst_case(*, gpus: int, max_jobs: int, mu=1, max_job_gpus: int | None = None, budget: float = 60,
               max_evals: int | None = None, seed: int = 0, max_processing_time: int = 6,
               max_arrival: int = 8, time_limit: float | None = _SEARCH_TIME_LIMIT, refine: bool = True,
               final_time_limit: float | None = _FINAL_TIME_LIMIT, start: Instance | None = None,
               log: Callable[[str], None] | None = None,
               adaptive: str = "off", backfill: bool = True, preemption_cost=0) -> WorstCase:
    """Search for an instance of the cell that maximises ``ALG / OPT`` (see the module docstring).

    Instances are ranked by ``ALG / UB``, which is ``ALG / OPT`` wherever OPT is proven.

    Parameters
    ----------
    gpus : int in 1..64
        M (one server).
    max_jobs : int in 1..8
        Most jobs per instance (the optimum's proof grows quickly with it: 5 close in under a
        second, 8 may take a minute).
    mu : number >= 1
        Bound on the predictions' distortion (1: exact predictions).
    max_job_gpus : int or None
        Largest gang (default M; capped at M).
    budget : float > 0
        Seconds for the whole search (the optima dominate; the final run of the worst instance
        comes on top).
    max_evals : int or None
        Stop after this many distinct instances (for reproducible short searches).
    seed : int >= 0
        Seeds both phases.
    max_processing_time, max_arrival : int
        Ranges of the integer data.
    time_limit : float or None
        Seconds per ``offline_opt`` call during the search.
    refine : bool
        Give the final worst instance, when its OPT is not proven yet, a last ``offline_opt`` run
        of ``final_time_limit`` seconds (only in the preemption-free setting, where OPT is the
        preemptive optimum).
    final_time_limit : float or None
        Seconds for that last run (default 60; None: until OPT is proven).
    start : Instance or None
        An instance of the cell to evaluate first (e.g. a known bad case).
    log : callable or None
        Called with a line whenever the best ratio improves.
    adaptive, backfill, preemption_cost
        A-SRPT's options (:func:`evaluate`); the defaults are Theorem 1's setting.

    Returns
    -------
    WorstCase

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> r = worst_case(gpus=1, max_jobs=3, budget=2, max_evals=10)
    >>> r.ratio, r.opt_exact, r.opt_proof  # one GPU, exact predictions: A-SRPT is SRPT, optimal
    (1, True, 'exact')
    """
    t0 = time.monotonic()
    g_max = gpus if max_job_gpus is None else min(max_job_gpus, gpus)
    cell = Cell(gpus, g_max, _num(Fraction(mu)) if not isinstance(mu, float) else mu, max_jobs,
                max_processing_time, max_arrival)
    setting = {"adaptive": adaptive, "backfill": backfill, "preemption_cost": preemption_cost}
    search = _Search(cell, budget, max_evals, time_limit, log, setting)
    if start is not None:
        search.score(_rows(start))
    share = max(1, (max_evals or 10**9) // 2)
    _hypothesis_phase(search, max_examples=min(share, 400), seed=seed)
    rng = as_generator(seed)
    if search.best is None:   # the hypothesis phase ran out of budget before any evaluation
        search.deadline = max(search.deadline, time.monotonic() + 1)
        search.score([(0, 1, 1, _GRID)])
    _local_search(search, rng)
    best = search.best
    lower, upper, proof = best.opt_lower, best.opt_upper, best.opt_proof
    if refine and lower != upper and preemption_cost == 0:
        final = _bracket(best.instance, time_limit=final_time_limit, preemptive=True)
        upper = min(upper, final.upper_bound)
        lower = max(lower, final.lower_bound)
        if final.closed:
            proof = final.proof
        elif lower == upper:   # the two runs' brackets meet (an open run's lower side is exact:
            # an exact-grid ILP optimum would have closed it with its own schedule)
            proof = "mip" if best.opt_lower < upper and final.lower_source == "ilp" else "exact"
    ratio = _num(Fraction(best.alg) / Fraction(upper)) if upper else 1
    ratio_upper = _num(Fraction(best.alg) / Fraction(lower)) if lower else 1
    return WorstCase(cell, best.instance, best.alg, lower, upper, ratio, ratio_upper, best.bound,
                     _num(cell.bound), best.certificate_holds, lower == upper, len(search.cache),
                     time.monotonic() - t0, tuple(search.history), setting, best.failures,
                     *_flow_ratios(best.instance, best.alg, lower, upper), proof)


# ---------------------------------------------------------------------------------------------
# The table of proofs/worst-case-table.md
# ---------------------------------------------------------------------------------------------

def _default_cells() -> tuple:
    cells = []
    for m in (1, 2, 4, 8):
        for g in sorted({1, m // 2 + 1, m}):
            for mu in (1, 4, 100):
                cells.append((m, g, mu))
    return tuple(cells)


#: (M, max g, mu) cells of the default table.
DEFAULT_CELLS: tuple = _default_cells()


@validate_params({
    "cells": "no_validation",
    "max_jobs": [Interval(Integral, 1, 8, closed="both")],
    "budget": [Interval(Real, 0, None, closed="neither")],
    "max_evals": [None, Interval(Integral, 1, None, closed="left")],
    "seed": [Interval(Integral, 0, None, closed="left")],
    "instances_dir": [None, str],
    "start_dir": [None, str],
    "log": [None, callable],
})
def worst_case_table(cells: Sequence[tuple] = DEFAULT_CELLS, *, max_jobs: int = 5, budget: float = 30,
                     max_evals: int | None = None, seed: int = 0, instances_dir: str | None = None,
                     start_dir: str | None = None,
                     log: Callable[[str], None] | None = None) -> list[WorstCase]:
    """Run :func:`worst_case` on every ``(M, max g, mu)`` cell; optionally save each worst instance.

    Parameters
    ----------
    cells : sequence of (int, int, number)
        The cells.
    max_jobs : int
        Jobs per instance.
    budget : float
        Seconds per cell.
    max_evals : int or None
        Distinct instances per cell at most.
    seed : int
        Seed of every cell's search.
    instances_dir : str or None
        Directory to write ``<cell name>.json`` instance files into.
    start_dir : str or None
        Directory of earlier worst instances: a cell whose ``<cell name>.json`` is there evaluates
        it first (the ``start`` of :func:`worst_case`), so the cell's ratio cannot fall below
        that instance's. It may be ``instances_dir`` itself (a rerun continues from the saved
        instances). An instance outside the cell (more jobs than ``max_jobs``, ...) is ignored.
    log : callable or None
        Progress lines.

    Returns
    -------
    list of WorstCase

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> rows = worst_case_table([(1, 1, 1)], max_jobs=2, budget=5, max_evals=5)
    >>> rows[0].ratio
    1
    """
    out = []
    for m, g, mu in cells:
        start = None
        if start_dir is not None:
            path = os.path.join(start_dir, f"{Cell(m, min(g, m), mu, max_jobs).name}.json")
            if os.path.isfile(path):
                start = load_instance(path, exact=True)
        r = worst_case(gpus=m, max_jobs=max_jobs, mu=mu, max_job_gpus=g, budget=budget,
                       max_evals=max_evals, seed=seed, start=start, log=log)
        if instances_dir is not None:
            os.makedirs(instances_dir, exist_ok=True)
            save_instance(r.instance, os.path.join(instances_dir, f"{r.cell.name}.json"))
        out.append(r)
    return out


def _f(x, digits: int = 3) -> str:
    return f"{float(x):.{digits}f}"


def _value(x) -> str:
    """An exact number for the table: ``59``, ``113/4 (28.25)``; a fraction with a long
    denominator (a bound from LP duals) only as a decimal."""
    q = Fraction(x)
    if q.denominator == 1:
        return str(q.numerator)
    if q.denominator > 1000:
        return f"{float(q):.4f}"
    return f"{q} ({float(q):.4g})"


def _exact_ratio(x) -> str:
    """``ALG / OPT`` as its decimal (4 places) and, in parentheses, the fraction it comes from."""
    q = Fraction(x)
    return f"{float(q):.4f} ({q})"


def _proven(r) -> str:
    if not r.opt_exact:
        return "no"
    return "yes (mip)" if r.opt_proof == "mip" else "yes"


def _table_row(r) -> str:
    c = r.cell
    cell_bound = Fraction(r.cell_bound)
    if r.opt_exact:
        opt, ratio = _value(r.opt_upper), _exact_ratio(r.ratio)
        to_bound = _f(Fraction(r.ratio) / cell_bound)
    else:
        opt = f"{_value(r.opt_lower)} .. {_value(r.opt_upper)}"
        ratio = f"{_f(r.ratio, 4)} <= ratio <= {_f(r.ratio_upper, 4)}"
        to_bound = f"{_f(Fraction(r.ratio) / cell_bound)} .. {_f(Fraction(r.ratio_upper) / cell_bound)}"
    return (f"| {c.gpus} | {c.max_job_gpus} | {c.mu} | {r.instance.n_jobs} | {_value(r.alg)} | {opt} "
            f"| {_proven(r)} | {ratio} | {_f(r.bound)} | {_f(r.cell_bound)} | {to_bound} "
            f"| {'holds' if r.certificate_holds else 'FAILS'} | {r.evaluations} |")


def _table_summary(rows: Sequence[WorstCase]) -> list[str]:
    proven = [r for r in rows if r.opt_exact]
    by_mip = sum(r.opt_proof == "mip" for r in proven)
    open_rows = [r for r in rows if not r.opt_exact]
    top = max(rows, key=lambda r: Fraction(r.ratio))
    close = max(rows, key=lambda r: Fraction(r.ratio) / Fraction(r.cell_bound))

    def what(r) -> str:
        if r.opt_exact:
            return f"ALG/OPT = {_exact_ratio(r.ratio)}"
        return f"ALG/UB = {_f(r.ratio, 4)}, OPT not proven (ratio <= {_f(r.ratio_upper, 4)})"

    out = [
        "",
        f"OPT proven on {len(proven)} of {len(rows)} rows"
        + (f" ({by_mip} of them by the exact-grid ILP)" if by_mip else " (every proof in exact arithmetic)")
        + ".",
        f"Largest ratio found: {what(top)}, cell {top.cell.name} (instance bound {_f(top.bound)}, "
        f"cell bound {_f(top.cell_bound)}).",
        f"Closest to its cell bound: {_f(Fraction(close.ratio) / Fraction(close.cell_bound))} of it, "
        f"cell {close.cell.name} ({what(close)} against {_f(close.cell_bound)}).",
    ]
    if open_rows:
        worst_open = max(open_rows, key=lambda r: Fraction(r.ratio_upper))
        out.append(f"Open rows: {len(open_rows)}; the largest upper end of a bracket is ALG/LB = "
                   f"{_f(worst_open.ratio_upper, 4)} (cell {worst_open.cell.name}).")
    out.append(f"Violations of Theorem 1 found: {sum(r.violation for r in rows)}.")
    return out


@validate_params({"rows": [list, tuple], "command": [str], "instances_dir": [None, str],
                  "start_dir": [None, str]})
def render_table(rows: Sequence[WorstCase], *, command: str, instances_dir: str | None = None,
                 start_dir: str | None = None) -> str:
    """The Markdown document of the worst ratios found per cell beside Theorem 1's bound.

    A row whose OPT is proven (``opt_exact``) gives ALG, OPT and ``ALG / OPT`` exactly (the
    decimal beside the fraction it is computed from); a row whose OPT is not proven gives the
    bracket ``LB .. UB`` of OPT and ``ALG / UB <= ratio <= ALG / LB``.

    Parameters
    ----------
    rows : list of WorstCase
        One search result per cell (:func:`worst_case_table`).
    command : str
        The command that regenerates the document (printed in it).
    instances_dir : str or None
        Where the worst instances were saved (mentioned in the document).
    start_dir : str or None
        Where the searches' starting instances came from (:func:`worst_case_table`), if anywhere
        (mentioned in the document).

    Returns
    -------
    str
        Markdown text.

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> print(render_table([], command="x").splitlines()[0])
    # Worst ratios found for A-SRPT beside Theorem 1's bound
    """
    lines = [
        "# Worst ratios found for A-SRPT beside Theorem 1's bound",
        "",
        f"Generated by `{command}` (do not edit by hand).",
        "",
        "Each row is one search cell: one server of M GPUs, gangs g_j <= max g, predictions with",
        "distortion mu_over * mu_under <= mu, at most the stated number of jobs, integer arrivals",
        "and processing times; the row shows the worst instance the search found for the cell.",
        "ALG is A-SRPT's sum C_j under Theorem 1's assumptions (no adaptive step, backfilling, free",
        "preemption). OPT is the preemptive offline optimum with the M GPUs as one pool, computed by",
        "`asrpt.offline.opt.offline_opt`: exact lower bounds (LB1, LB2, LB_MBT, the configuration LP)",
        "and an exact branch and bound over event sequences (proofs/exact-opt.md), all in rational",
        "arithmetic, against schedules that are re-checked and re-costed exactly. Every instance the",
        f"search scored got `offline_opt` with {_SEARCH_TIME_LIMIT:g} s; the worst instance of each cell, "
        "if its OPT was",
        f"still open, a final run of {_FINAL_TIME_LIMIT:g} s. The search ranks instances by ALG/UB, "
        "which is ALG/OPT",
        "wherever OPT is proven.",
        "",
        "- **OPT proven** `yes`: the bracket closed in exact arithmetic (`yes (mip)`: closed by the",
        "  slotted ILP on an exact grid, HiGHS's floating-point optimality proof). The row then",
        "  gives ALG, OPT and **ALG/OPT** exactly: a decimal computed from the fraction beside it.",
        "- **OPT proven** `no`: OPT is only bracketed, `LB .. UB`, and the ratio column gives",
        "  `ALG/UB <= ratio <= ALG/LB`; ALG/UB is then a certified lower bound on the ratio.",
        "- **instance bound** is beta (1 + rho mu) for the worst instance itself (beta = 1 for abstract",
        "  jobs); **cell bound** is 1 + rho_max mu with rho_max = M / (M - max g + 1).",
        "- The search only refutes: a ratio above the bound would be a certified violation of",
        "  Theorem 1; ratios below it prove nothing about the true worst case.",
    ]
    if start_dir:
        lines += [
            f"- Each cell's search first evaluated the worst instance saved for it in `{start_dir}/`",
            "  by an earlier run (where there was one), so a row never falls below that instance's ratio.",
        ]
    lines += [
        "",
        "| M | max g | mu | jobs | ALG | OPT | OPT proven | ALG/OPT | instance bound | cell bound "
        "| ALG/OPT / cell bound | certificate | evals |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_table_row(r) for r in rows]
    if rows:
        lines += _table_summary(rows)
    if instances_dir:
        lines += ["", f"The worst instance of each cell is saved as `{instances_dir}/<M..-g..-mu..>.json`."]
    return "\n".join(lines) + "\n"


@validate_params({"argv": [None, list]})
def main(argv: list[str] | None = None) -> int:
    """``python -m asrpt.theory.worstcase table --out FILE``: regenerate the table of ``proofs/``.

    Parameters
    ----------
    argv : list of str or None
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status (0).

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "t.md")
    >>> main(["table", "--out", out, "--instances", os.path.dirname(out), "--cells", "1:1:1",
    ...       "--max-jobs", "1", "--max-evals", "2"])
    0
    """
    parser = argparse.ArgumentParser(prog="python -m asrpt.theory.worstcase",
                                     description="Regenerate the worst-case table of proofs/.")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table", help="search every cell and write the Markdown table")
    t.add_argument("--out", default="proofs/worst-case-table.md")
    t.add_argument("--instances", default="proofs/worst-cases", help="directory for the worst instances")
    t.add_argument("--budget", type=float, default=30.0, help="seconds per cell (default 30)")
    t.add_argument("--max-jobs", type=int, default=5)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--max-evals", type=int, default=None, help="distinct instances per cell at most")
    t.add_argument("--start-from", default=None, metavar="DIR",
                   help="start each cell's search from DIR/<cell>.json where present (e.g. the "
                        "--instances directory of an earlier run: a rerun then keeps its bad cases)")
    t.add_argument("--cells", default=None,
                   help='comma-separated M:g:mu cells, e.g. "2:1:1,4:3:4" (default: the full grid)')
    args = parser.parse_args(argv)
    cells = DEFAULT_CELLS if args.cells is None else tuple(
        tuple(Fraction(x) if i == 2 else int(x) for i, x in enumerate(c.split(":"))) for c in args.cells.split(","))
    cells = tuple((m, g, _num(Fraction(mu))) for m, g, mu in cells)
    rows = worst_case_table(cells, max_jobs=args.max_jobs, budget=args.budget, max_evals=args.max_evals,
                            seed=args.seed, instances_dir=args.instances, start_dir=args.start_from,
                            log=lambda s: print(s, file=sys.stderr))
    command = (f"python -m asrpt.theory.worstcase table --out {args.out} --instances {args.instances} "
               f"--budget {args.budget:g} --max-jobs {args.max_jobs} --seed {args.seed}"
               + (f" --start-from {args.start_from}" if args.start_from else "")
               + (f" --max-evals {args.max_evals}" if args.max_evals else "")
               + (f" --cells {args.cells}" if args.cells else ""))
    text = render_table(rows, command=command, instances_dir=args.instances, start_dir=args.start_from)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    raise SystemExit(main())
