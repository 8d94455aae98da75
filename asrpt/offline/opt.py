"""The offline optimum OPT, exactly where it can be proven and honestly bracketed elsewhere.

This module owns :func:`offline_opt`, the one entry point that every competitive ratio of the
toolkit is measured against, and its answer :class:`OptResult`. It composes the solvers of
:mod:`asrpt.offline`:

**Which optimum.** ``OPT = min sum_j w_j C_j`` over the schedules of the rigid jobs on the
cluster's M GPUs taken as **one pool**: job j holds any g_j GPUs (across servers) whenever it
runs and may migrate when it resumes (proofs/model.md, Definition 1). Preemptive by default
(``P | size_j, r_j, pmtn | sum w_j C_j``); ``preemptive=False`` asks for the non-preemptive
optimum. If gangs had to stay inside one server, fewer schedules would be allowed and OPT could
only grow: every lower bound here stays valid, the upper bounds need not (docs/design.md says
more).

**Preemptive.** The bracket ``lower_bound <= OPT <= upper_bound`` takes

- on the lower side the largest of LB1, LB2, LB_MBT (:mod:`.bounds`), the configuration-LP bound
  (:func:`asrpt.offline.exact.configuration_lp_bound`, proofs/config-lp-bound.md) and the lower
  bound of the event-sequence branch and bound (:func:`asrpt.offline.exact.exact_preemptive_opt`,
  proofs/exact-opt.md), all exact; and, where the slot grid is **exact** (every job needs one GPU
  and every arrival and size is a multiple of the slot: integer preemption points suffice,
  Baptiste et al. 2012), the slotted ILP's optimum, proven by HiGHS in floating point;
- on the upper side the cheapest schedule found by the ILP, the branch and bound and a greedy
  schedule, checked by :func:`schedule_problems`.

The run: the configuration LP (a fifth of the time limit at most), a short exact search (2 s at
most, which proves small instances), then, unless OPT is proven, the ILP (``ilp_share`` of the
time limit) and the exact search again from the ILP's schedule until the time limit. ``closed`` is True only when the two sides are equal; ``proof`` then
says what proved it: ``"exact"`` (rational arithmetic throughout) or ``"mip"`` (the exact-grid
ILP, whose optimality HiGHS established with floating-point tolerances).

**Non-preemptive.** The start-time ILP on the slot grid is exact when every arrival and size is a
multiple of the slot (an order-preserving greedy turns any optimal schedule into one whose starts
are releases or completions, hence on the grid); its proven optimum then closes the bracket with
``proof="mip"``. The lower side is otherwise LB1, LB2, LB_MBT and the configuration LP (valid
without preemption too).

Examples
--------
>>> from asrpt.instance import Cluster, Instance, Job
>>> worked = Instance(Cluster.homogeneous(1, 4), (Job("A", 0, 2, processing_time=4),
...     Job("B", 0, 4, processing_time=1), Job("C", 1, 1, processing_time=2)))
>>> r = offline_opt(worked)
>>> r.verdict, r.closed, r.proof, dict(r.completion_times)
('OPT = 9 (proven)', True, 'exact', {'A': 5, 'B': 1, 'C': 3})
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from types import MappingProxyType
from typing import Any, Mapping

from .._validation import InstanceOf, Interval, Options, validate_params
from ..errors import InvalidParameterError, SolverError
from ..instance import Instance, id_key
from ..single._arrays import exact_sum
from ..sizes import processing_times
from ..solve import SOLVERS
from .bounds import Bounds, _any_float, lower_bounds
from .bruteforce import _greedy
from .exact import (ConfigurationBound, ExactResult, _plain, configuration_lp_bound,
                    exact_preemptive_opt)
from .ilp import IlpResult, RigidPiece, _pieces_to_json, auto_slot, schedule_problems, slotted_ilp, start_time_ilp

__all__ = ["OptResult", "offline_opt"]

_QUICK_SEARCH = 2.0  # seconds of exact search before the ILP (small instances close in it)


@dataclass(frozen=True)
class OptResult:
    """A bracket ``lower_bound <= OPT <= upper_bound`` with the best schedule found.

    Attributes
    ----------
    lower_bound, upper_bound : number
        Exact for exact data; ``upper_bound`` is the cost ``sum w_j C_j`` of ``schedule``.
    closed : bool
        True when ``lower_bound == upper_bound``: OPT is known.
    proof : str or None
        When closed, what proved the lower side: ``"exact"`` (rational arithmetic) or ``"mip"``
        (an ILP on an exact grid, solved by HiGHS in floating point). None when open.
    lower_source, upper_source : str
        Which method gave each side ("lb1", "lb2", "lb_mbt", "configuration_lp",
        "event_sequence", "ilp" / "event_sequence", "ilp", "greedy").
    completion_times : mapping
        Job id to completion time in ``schedule``.
    schedule : mapping
        Job id to its pieces (:class:`RigidPiece`), checked exactly. For instances with float
        data the times are rounded to floats for the report (the exact schedule was checked), so
        ``schedule_problems(..., exact=True)`` may then see roundings.
    preemptive : bool
        Which problem was bracketed.
    slot : number
        The ILP's slot length.
    bounds : Bounds
        LB1, LB2, LB_MBT.
    configuration : ConfigurationBound or None
        The configuration-LP bound (None when not computed).
    exact : ExactResult or None
        The event-sequence search (preemptive only).
    ilp : IlpResult or None
        The ILP's own answer (None when it was skipped or failed: see ``notes``).
    notes : tuple of str
        What was skipped or failed, in words.
    wall_time : float
        Seconds spent.
    """

    lower_bound: Any
    upper_bound: Any
    closed: bool
    proof: str | None
    lower_source: str
    upper_source: str
    completion_times: Mapping[str, Any]
    schedule: Mapping[str, tuple]
    preemptive: bool
    slot: Any
    bounds: Bounds
    configuration: ConfigurationBound | None
    exact: ExactResult | None
    ilp: IlpResult | None
    notes: tuple
    wall_time: float

    @property
    def status(self) -> str:
        """``"closed"`` (OPT known) or ``"open"`` (a bracket)."""
        return "closed" if self.closed else "open"

    @property
    def verdict(self) -> str:
        """What is known, in words: ``"OPT = x (proven)"`` or ``"l <= OPT <= u (gap g)"``."""
        if self.closed:
            return f"OPT = {_fmt(self.upper_bound)} (proven)"
        return (f"{_fmt(self.lower_bound)} <= OPT <= {_fmt(self.upper_bound)} "
                f"(gap {float(self.gap):.3%})")

    @property
    def gap(self):
        """Relative width ``(upper - lower) / upper`` of the bracket (0 when closed)."""
        if self.upper_bound == 0:
            return 0
        return (self.upper_bound - self.lower_bound) / self.upper_bound

    def ratio(self, alg) -> tuple:
        """``(ALG / upper_bound, ALG / lower_bound)``: the bracket of the ratio ``ALG / OPT``
        (equal when closed). A zero side gives 1 for a zero ``alg`` and None otherwise."""
        def div(a, b):
            if b == 0:
                return 1 if a == 0 else None
            q = Fraction(a) / Fraction(b) if not (isinstance(a, float) or isinstance(b, float)) else a / b
            return int(q) if isinstance(q, Fraction) and q.denominator == 1 else q
        return div(alg, self.upper_bound), div(alg, self.lower_bound)

    def to_dict(self) -> dict:
        """A JSON-ready dict: ``closed`` says whether OPT is known; there is no other verdict.

        A side that no float holds exactly is written rounded outwards (the optimum, when closed,
        to the nearest float), with its exact value as a string beside it
        (``lower_bound_exact``, ``upper_bound_exact``)."""
        low, up = self.lower_bound, self.upper_bound
        exact_text = {}
        if isinstance(low, Fraction) and Fraction(float(low)) != low:
            exact_text["lower_bound_exact"] = str(low)
            low = float(up) if self.closed else _float_down(low)
        if isinstance(up, Fraction) and Fraction(float(up)) != up:
            exact_text["upper_bound_exact"] = str(up)
            up = float(up) if self.closed else _float_up(up)
        return {
            "closed": self.closed, "status": self.status, "proof": self.proof, "verdict": self.verdict,
            "lower_bound": low, "upper_bound": up, **exact_text, "gap": self.gap,
            "lower_source": self.lower_source, "upper_source": self.upper_source,
            "preemptive": self.preemptive, "slot": self.slot,
            "completion_times": dict(self.completion_times),
            "schedule": _pieces_to_json(self.schedule),
            "bounds": self.bounds.to_dict(),
            "configuration_lp": None if self.configuration is None else {
                "value": self.configuration.value, "intervals": self.configuration.intervals,
                "cuts": self.configuration.cuts, "wall_time": self.configuration.wall_time},
            "event_sequence": None if self.exact is None else {
                "lower_bound": self.exact.lower_bound, "upper_bound": self.exact.upper_bound,
                "closed": self.exact.closed, "stopped": self.exact.stopped,
                "nodes": self.exact.nodes, "wall_time": self.exact.wall_time},
            "ilp": None if self.ilp is None else {
                "model": self.ilp.model, "status": self.ilp.status, "objective": self.ilp.objective,
                "cost": self.ilp.cost, "bound": self.ilp.bound, "horizon": self.ilp.horizon,
                "exact_grid": self.ilp.exact_grid, "wall_time": self.ilp.solve.wall_time},
            "notes": list(self.notes), "wall_time": self.wall_time,
        }


def _fmt(x) -> str:
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return str(x.numerator)
        if x.denominator > 1000:  # a bound from float duals: its digits mean nothing past these
            return f"{float(x):.7g}"
        return f"{x} ({float(x):.6g})"
    if isinstance(x, float):
        return repr(x)
    return str(x)


def _greedy_schedule(instance: Instance, floats: bool | None = None):
    """The order-preserving greedy schedule and its cost; in rationals when the data have floats
    (``floats``, found when None), so that the schedule is exactly feasible."""
    jobs = instance.jobs
    times = processing_times(instance)
    floats = _any_float(instance, times) if floats is None else floats
    sizes = [Fraction(p) if floats else p for p in times]
    arrivals = [Fraction(j.arrival) if floats else j.arrival for j in jobs]
    m = instance.cluster.total_gpus
    order = sorted(range(len(jobs)), key=lambda j: (arrivals[j], id_key(jobs[j].id)))
    starts = _greedy(arrivals, sizes, [j.gpus for j in jobs], m, order)
    schedule = {jobs[j].id: ((starts[j], starts[j] + sizes[j], jobs[j].gpus),) for j in range(len(jobs))}
    cost = exact_sum(jobs[j].weight * (starts[j] + sizes[j]) for j in range(len(jobs)))
    return cost, schedule


def _float_down(x) -> float:
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > Fraction(x) else f


def _float_up(x) -> float:
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < Fraction(x) else f


def _completion(schedule: Mapping) -> dict:
    return {jid: pieces[-1][1] for jid, pieces in schedule.items() if pieces}


@validate_params({
    "instance": [InstanceOf(Instance)],
    "preemptive": ["boolean"],
    "time_limit": [None, Interval(Real, 0, None, closed="neither")],
    "slot": [None, Interval(Real, 0, None, closed="neither")],
    "solver": [Options(str, SOLVERS)],
    "gap": [Interval(Real, 0, 1, closed="left")],
    "horizon": [None, Interval(Integral, 1, None, closed="left")],
    "max_slots": [Interval(Integral, 1, None, closed="left")],
    "ilp_share": [Interval(Real, 0, 1, closed="both")],
    "epsilon": [Interval(Real, 0, 1, closed="right")],
    "ilp": [Options(str, {"auto", "always", "never"})],
})
def offline_opt(instance: Instance, *, preemptive: bool = True, time_limit: Real | None = 60,
                slot: Real | None = None, solver: str = "highs", gap: Real = 0.0,
                horizon: int | None = None, max_slots: int = 200, ilp_share: Real = 0.3,
                epsilon: Real = Fraction(1, 50), ilp: str = "auto") -> OptResult:
    """The offline optimum: exact where proven, a bracket ``lower <= OPT <= upper`` elsewhere.

    Parameters
    ----------
    instance : Instance
        The instance (its GPUs as one pool: see the module docstring).
    preemptive : bool
        The preemptive optimum (default) or the non-preemptive one.
    time_limit : float, optional
        Seconds in all (default 60; None: until proven, which may take very long beyond a dozen
        jobs). The bracket stays valid when time runs out.
    slot : number > 0, optional
        The ILP's slot length; default :func:`asrpt.offline.ilp.auto_slot`.
    solver : {"highs", "cbc"}
        The ILP's backend.
    gap : float in [0, 1)
        The ILP's relative MIP gap.
    horizon : int, optional
        Slots in the ILP (default: always enough).
    max_slots : int
        Horizon target for the automatic slot.
    ilp_share : float in [0, 1]
        Share of ``time_limit`` given to the ILP (preemptive; 0 skips it), the rest to the
        event-sequence search.
    epsilon : float in (0, 1]
        Grid of the configuration-LP bound.
    ilp : {"auto", "always", "never"}
        Whether to run the ILP: "auto" (default) runs it unless a first short exact search (2 s
        at most) already proved OPT; "always" runs it (for its own answer in ``ilp``).

    Returns
    -------
    OptResult

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> r = offline_opt(two_server_instance, preemptive=False)
    >>> r.verdict, r.proof, r.lower_source, dict(r.completion_times)
    ('OPT = 8 (proven)', 'exact', 'lb1', {'a': 4, 'b': 1, 'c': 3})
    """
    start = time.monotonic()
    total = None if time_limit is None else float(time_limit)
    notes: list[str] = []
    bounds = lower_bounds(instance)
    lows = [(bounds.lb1, "lb1"), (bounds.lb2, "lb2"), (bounds.lb_mbt, "lb_mbt")]
    weights = {j.id: j.weight for j in instance.jobs}
    floats = _any_float(instance, processing_times(instance))
    ups: list = []  # (exact cost, source, schedule) of schedules checked exactly

    def offer(src: str, sched: Mapping) -> bool:
        """Check a candidate schedule and cost it exactly; one computed in floats (the greedy's
        or the ILP's on float data) that is feasible only up to rounding is not used."""
        if schedule_problems(instance, sched, preemptive=preemptive, exact=True):
            notes.append(f"the {src} schedule is feasible only up to floating-point rounding: not used")
            return False
        cost = sum(Fraction(weights[jid]) * Fraction(pieces[-1][1]) for jid, pieces in sched.items())
        ups.append((_plain(cost), src, dict(sched)))
        return True

    offer("greedy", _greedy_schedule(instance, floats)[1])
    config = None
    fine_data = None  # why the LP-based methods cannot run, if they cannot
    if instance.n_jobs:
        try:
            config = configuration_lp_bound(
                instance, epsilon=epsilon, time_limit=None if total is None else total * 0.2)
            lows.append((config.value, "configuration_lp"))
        except InvalidParameterError as e:
            fine_data = str(e)
            notes.append(f"configuration LP and event-sequence search skipped: {e}")
    delta = auto_slot(instance, max_slots=max_slots) if slot is None else slot
    exact = None
    searchable = preemptive and instance.n_jobs and fine_data is None
    if searchable:  # a short search first: small instances close without the ILP
        first = _QUICK_SEARCH if total is None else min(_QUICK_SEARCH, 0.1 * total)
        exact = exact_preemptive_opt(instance, time_limit=first)
    model = slotted_ilp if preemptive else start_time_ilp
    ilp_time = None if total is None else total * (ilp_share if preemptive else 1.0)
    run_ilp, ilp = ilp, None
    mip_lower = None
    if instance.n_jobs and (ilp_time is None or ilp_time > 0) and run_ilp != "never" and not (
            run_ilp == "auto" and exact and exact.closed):
        try:
            ilp = model(instance, slot=delta, solver=solver, time_limit=ilp_time, gap=gap, horizon=horizon)
        except InvalidParameterError as e:  # a grid too large to build
            notes.append(f"ILP skipped: {e}")
        except SolverError as e:
            notes.append(f"ILP failed: {e}")
    ilp_usable = False
    if ilp is not None:
        if ilp.cost is not None:
            ilp_usable = offer("ilp", ilp.schedule)
        if ilp.exact_grid and ilp.status == "optimal" and ilp.objective is not None and gap == 0:
            mip_lower = ilp.objective
            lows.append((ilp.objective, "ilp"))
        if ilp.status == "infeasible":
            notes.append(f"ILP infeasible within the horizon of {ilp.horizon} slots")
    if searchable and not exact.closed:
        left = None if total is None else max(total - (time.monotonic() - start), 0.01)
        start_from = dict(exact.schedule)
        if ilp_usable and ilp.cost < exact.upper_bound:
            start_from = dict(ilp.schedule)
        lows.append((exact.lower_bound, "event_sequence"))  # the quick search's bracket stays valid
        offer("event_sequence", exact.schedule)
        exact = exact_preemptive_opt(instance, time_limit=left, schedule=start_from)
    if exact is not None:
        lows.append((exact.lower_bound, "event_sequence"))
        offer("event_sequence", exact.schedule)
    upper, up_source, schedule = min(ups, key=lambda u: u[0])
    if up_source == "event_sequence" and any(u[0] == upper and u[1] == "ilp" for u in ups):
        upper, up_source, schedule = next(u for u in ups if u[1] == "ilp")
    crossed = [(v, src) for v, src in lows if v > upper]
    for v, src in crossed:
        if src != "ilp":  # an exact lower bound above a checked schedule: a defect, never hidden
            raise RuntimeError(f"offline_opt: the {src} lower bound {v} exceeds the cost {upper} of "
                               f"a feasible schedule ({up_source}); please report this instance")
        notes.append(f"the ILP's grid optimum {v} exceeds a schedule of cost {upper}: HiGHS's "
                     "optimality claim is wrong here and was not used")
        lows.remove((v, src))
        mip_lower = None
    lower, low_source = max(lows, key=lambda u: u[0])
    closed = lower == upper
    proof = None
    if closed:
        exact_sides = [v for v, src in lows if src != "ilp"]
        proof = "exact" if max(exact_sides) == upper else "mip"
        if proof == "mip" and mip_lower is None:  # cannot happen: a closed bracket needs a proof
            proof = None
    if floats:  # report in floats: each side rounded outwards, OPT to nearest
        lower, upper = (float(upper),) * 2 if closed else (_float_down(lower), _float_up(upper))
        schedule = {k: tuple(RigidPiece(float(a), float(b), gp) for a, b, gp in v)
                    for k, v in schedule.items()}
    return OptResult(lower, upper, closed, proof, low_source, up_source,
                     MappingProxyType(_completion(schedule)),
                     MappingProxyType({k: tuple(RigidPiece(*p) for p in v) for k, v in schedule.items()}),
                     preemptive, delta, bounds, config, exact, ilp, tuple(notes),
                     time.monotonic() - start)

