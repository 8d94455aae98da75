"""Offline schedules of rigid-job instances by time-indexed ILPs, and the schedule checker.

This module owns the two time-indexed ILPs (proofs/classical.md, Result 11; built with PuLP, solved
through :func:`asrpt.solve.solve`) and an independent feasibility check of rigid schedules
(:func:`schedule_problems`). The bracket around the optimum that uses them is
:func:`asrpt.offline.opt.offline_opt`.

**The problem.** Jobs j with arrival ``a_j``, GPU demand ``g_j``, processing time ``P_j`` (from
:mod:`asrpt.sizes`) and weight ``w_j`` on a cluster of M GPUs; minimise ``sum_j w_j C_j``. A job
holds g_j GPUs whenever it runs; GPUs are a cumulative resource (any g_j GPUs, across servers, as
proofs/model.md, Definition 1 allows; the ``instances`` field is ignored here). Preemptive:
``P | size_j, r_j, pmtn | sum w_j C_j`` (migration allowed); non-preemptive:
``P | size_j, r_j | sum w_j C_j``.

**The slot grid.** Slot ``t`` is ``[t delta, (t+1) delta)``. A job is released at slot
``ceil(a_j / delta)`` and needs ``k_j = ceil(P_j / delta)`` slots. Rounding *up* keeps every ILP
solution a feasible continuous schedule (the job uses its k_j slots, the last one only for the
remaining ``P_j - (k_j - 1) delta``), so the ILP optimum, and every incumbent, is an **upper
bound** on the continuous optimum OPT. Grid indices are computed exactly (floats are converted to
their exact rational value), so rounding never makes a schedule infeasible.

- :func:`slotted_ilp` (preemptive): binaries ``x_jt`` (j runs in slot t) with
  ``sum_t x_jt = k_j`` and ``sum_j g_j x_jt <= M``, and monotone binaries ``D_jt`` (j is done by
  the end of slot t): ``sum_{u > t} x_ju <= k_j (1 - D_jt)``, ``x_{j,t+1} + D_jt <= 1``; the
  completion slot count is ``C_j = 1 + sum_t (1 - D_jt)`` and the objective
  ``delta * sum_j w_j C_j``. The cut ``k_j C_j >= sum_t (t+1) x_jt + k_j (k_j - 1) / 2`` (the k_j
  slots of j end at distinct slots ``<= C_j``) only tightens the LP relaxation.
- :func:`start_time_ilp` (non-preemptive): binaries ``y_js`` (j starts at slot s),
  ``sum_s y_js = 1`` and ``sum_j g_j sum_{s = t-k_j+1}^{t} y_js <= M``; ``C_j = s delta + P_j``.

The horizon is ``T = max_j ceil(a_j/delta) + sum_j k_j`` slots (after the last release the jobs
can run one after another), unless a smaller ``horizon`` is given, which may make the ILP
infeasible. Within it, each job gets an exact **deadline**: a few list schedules on the grid
(preemptive with backfilling under SRPT-, Smith- and size-based priorities; the order-preserving
greedy without preemption) give the cost ``U`` of a feasible grid solution, and any solution at
least as good has ``w_j C_j <= U - LB_{-j}``, with ``LB_{-j}`` the lower bound of
:mod:`asrpt.offline.bounds` for the rounded instance without j. Variables past the deadline are
left out: the optimum, the solver's bound and every incumbent at least as good as ``U`` are
unchanged, and the models shrink a lot (``n = 10`` jobs on 8 GPUs with about 60 slots solve in
seconds).

**When is the ILP exact (``exact_grid``)?** Only then is the solver's best bound also a lower
bound on OPT; otherwise it only bounds the *slotted* optimum, which may exceed OPT.

Both need the default horizon (a caller's ``horizon`` may cut every optimal schedule off).

- Non-preemptive, every ``a_j`` and ``P_j`` a multiple of delta: exact. The order-preserving
  greedy (:mod:`asrpt.offline.bruteforce`) turns an optimal schedule into one no worse whose
  starts are releases or completions, hence multiples of delta.
- Preemptive: exact when every job needs one GPU (g_j = 1) and every ``a_j`` and ``P_j`` is a
  multiple of delta. Baptiste, Carlier, Kononov, Queyranne, Sevastyanov and Sviridenko
  (Integer preemptive scheduling on parallel machines, Oper. Res. Lett. 40 (2012) 440-444) show
  that on identical parallel machines with release dates and a regular unit-concave objective
  (their examples: total weighted tardiness, which is ``sum w_j C_j`` when every due date is 0)
  integer data admit an optimal schedule whose preemptions are at integer times; scaling time by
  delta gives the grid. For jobs on several GPUs no such property holds: on M = 4, three 2-GPU jobs
  of length 1 and two 4-GPU jobs of length 10 cost 38 on slots of 1 and 37 (the optimum) on slots of
  1/2, so the grid is not claimed exact there.

Models use float coefficients (the solvers are floating point); every reported cost and
completion time is recomputed exactly from the integral solution, in the instance's arithmetic.

Examples
--------
>>> from asrpt.instance import Cluster, Instance, Job
>>> worked = Instance(Cluster.homogeneous(1, 4), (Job("A", 0, 2, processing_time=4),
...     Job("B", 0, 4, processing_time=1), Job("C", 1, 1, processing_time=2)))
>>> r = slotted_ilp(worked)
>>> r.cost, r.status, r.exact_grid, dict(r.completion_times)
(9, 'optimal', False, {'A': 5, 'B': 1, 'C': 3})
"""

from __future__ import annotations

import math
from collections import abc
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

import pulp

from .._validation import InstanceOf, Interval, Options, validate_params
from ..errors import InvalidParameterError, SolverError
from ..instance import Cluster, Instance, Job, Server
from ..single._arrays import exact_sum
from ..sizes import processing_times
from ..solve import SOLVERS, SolveResult, solve
from .bounds import lower_bounds
from .bruteforce import _greedy

__all__ = [
    "RigidPiece",
    "IlpResult",
    "slotted_ilp",
    "start_time_ilp",
    "auto_slot",
    "schedule_problems",
]

_POSITIVE = Interval(Real, 0, None, closed="neither")
_COMMON = {
    "instance": [InstanceOf(Instance)],
    "slot": [_POSITIVE],
    "solver": [Options(str, SOLVERS)],
    "time_limit": [None, _POSITIVE],
    "gap": [Interval(Real, 0, 1, closed="left")],
    "horizon": [None, Interval(Integral, 1, None, closed="left")],
}


class RigidPiece(NamedTuple):
    """A job runs on ``gpus`` GPUs during ``[start, end)``."""

    start: Any
    end: Any
    gpus: int


def _pieces_to_json(schedule: Mapping[str, tuple]) -> dict:
    return {k: [{"start": p.start, "end": p.end, "gpus": p.gpus} for p in v] for k, v in schedule.items()}


@dataclass(frozen=True)
class IlpResult:
    """What one slotted or start-time ILP produced.

    Attributes
    ----------
    model : str
        "slotted" (preemptive) or "start_time" (non-preemptive).
    status : str
        The solve status: "optimal", "time_limit" or "infeasible".
    objective : number or None
        The ILP objective of the solution found, in time units, recomputed exactly
        (``sum w_j (last slot + 1) delta`` or ``sum w_j (s_j delta + P_j)``).
    cost : number or None
        ``sum w_j C_j`` of the continuous schedule read from the solution (the last slot used only
        as long as needed), ``<= objective``; an upper bound on OPT.
    bound : float or None
        The solver's best bound on the ILP optimum, in time units (a lower bound on OPT only when
        ``exact_grid``).
    completion_times : mapping
        Job id to completion time (empty without a solution).
    schedule : mapping
        Job id to its pieces (:class:`RigidPiece`), in time order.
    slot : number
        The slot length delta.
    horizon : int
        Number of slots T.
    exact_grid : bool
        True when the ILP optimum equals the continuous optimum (see the module docstring).
    solve : SolveResult
        The raw solver answer.
    """

    model: str
    status: str
    objective: Any
    cost: Any
    bound: float | None
    completion_times: Mapping[str, Any]
    schedule: Mapping[str, tuple]
    slot: Any
    horizon: int
    exact_grid: bool
    solve: SolveResult

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        return {
            "model": self.model, "status": self.status, "objective": self.objective,
            "cost": self.cost, "bound": self.bound, "slot": self.slot, "horizon": self.horizon,
            "exact_grid": self.exact_grid, "completion_times": dict(self.completion_times),
            "schedule": _pieces_to_json(self.schedule),
            "solver": {"name": self.solve.solver, "status": self.solve.status,
                       "objective": self.solve.objective, "bound": self.solve.bound,
                       "wall_time": self.solve.wall_time},
        }


class _Grid(NamedTuple):
    release: list  # release slot per job
    length: list  # slots per job
    horizon: int
    on_grid: bool


def _frac(x) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(x)


def _grid(arrivals: list, sizes: list, slot, horizon: int | None) -> _Grid:
    d = _frac(slot)
    rel = [math.ceil(_frac(a) / d) for a in arrivals]
    length = [math.ceil(_frac(p) / d) for p in sizes]
    on_grid = all(_frac(a) % d == 0 for a in arrivals) and all(_frac(p) % d == 0 for p in sizes)
    full = (max(rel) if rel else 0) + sum(length)
    slots = full if horizon is None else horizon
    if slots * max(len(rel), 1) > MAX_GRID_CELLS:
        raise InvalidParameterError(
            f"slot {slot}: the ILP would span {slots} slots x {len(rel)} jobs, more than "
            f"{MAX_GRID_CELLS} job-slots; choose a larger slot (or a smaller horizon)")
    return _Grid(rel, length, slots, on_grid)


def _data(instance: Instance):
    jobs = instance.jobs
    return ([j.arrival for j in jobs], list(processing_times(instance)), [j.gpus for j in jobs],
            [j.weight for j in jobs], [j.id for j in jobs], instance.cluster.total_gpus)


def _value(var) -> float:
    v = var.value()
    return 0.0 if v is None else v


def _empty_result(model: str, slot, horizon: int | None) -> IlpResult:
    return IlpResult(model, "optimal", 0, 0, 0.0, MappingProxyType({}), MappingProxyType({}), slot,
                     horizon or 0, True, SolveResult("optimal", 0.0, 0.0, "none", 0.0))


def _result(model, res: SolveResult, grid: _Grid, slot, exact_grid, ids, extract, bound_offset=0):
    if not res.has_solution:
        return IlpResult(model, res.status, None, None,
                         None if res.bound is None else res.bound * slot + bound_offset,
                         MappingProxyType({}), MappingProxyType({}), slot, grid.horizon,
                         exact_grid, res)
    objective, cost, completion, schedule = extract()
    bound = None if res.bound is None else res.bound * slot + bound_offset
    return IlpResult(model, res.status, objective, cost, bound,
                     MappingProxyType(dict(zip(ids, completion))),
                     MappingProxyType(dict(zip(ids, schedule))), slot, grid.horizon, exact_grid, res)


def _with_variables(objective, variables: list, total: int):
    """An objective without variables (every deadline tight) made non-constant without changing
    its value: ``+ sum(variables) - total``, where the constraints fix ``sum(variables) = total``.
    PuLP's CBC interface cannot read back a constant objective (it adds a dummy variable)."""
    if any(coef != 0 for coef in objective.values()):
        return objective
    return objective + pulp.lpSum(variables) - total


def _slot_heuristic(g: _Grid, gpus: list, weights: list, m: int, priority) -> list | None:
    """Preemptive list scheduling on the slot grid: in every slot, the released unfinished jobs in
    ``priority`` order take the GPUs they fit in (backfilling). Returns each job's completion slot
    count ``c_j`` (last slot + 1), or None if it does not finish within the horizon."""
    n = len(gpus)
    rem = list(g.length)
    done: list = [None] * n
    left = n
    for t in range(g.horizon):
        free = m
        for j in sorted((j for j in range(n) if g.release[j] <= t and rem[j] > 0),
                        key=lambda j: priority(j, rem)):
            if gpus[j] <= free:
                free -= gpus[j]
                rem[j] -= 1
                if rem[j] == 0:
                    done[j] = t + 1
                    left -= 1
        if left == 0:
            return done
    return None


def _nonpreemptive_heuristic(g: _Grid, gpus: list, m: int, order) -> list | None:
    """Order-preserving greedy on the slot grid; start slot per job, or None past the horizon."""
    starts = _greedy(g.release, g.length, gpus, m, order)
    if any(s + k > g.horizon for s, k in zip(starts, g.length)):
        return None
    return starts


def _deadlines(g: _Grid, gpus: list, weights: list, m: int, ends: list) -> list:
    """Latest completion slot count ``c_j`` of job j in any solution no worse than ``ends``.

    In a solution of cost at most ``U = sum w_i ends_i`` (slot units), ``w_j c_j <= U - sum_{i != j}
    w_i c_i <= U - LB_{-j}``, where ``LB_{-j}`` is a lower bound (LB1, LB2, LB_MBT) of the rounded
    instance without j: the other jobs' part of a slot solution is a schedule of that instance.
    Computed exactly (weights as rationals), so no optimal solution is cut off.
    """
    n = len(gpus)
    w = [_frac(x) for x in weights]
    cluster = Cluster((Server(m),))
    jobs = [Job(f"j{i}", g.release[i], gpus[i], weight=w[i], processing_time=g.length[i]) for i in range(n)]
    upper = exact_sum(wi * e for wi, e in zip(w, ends))
    out = []
    for j in range(n):
        others = jobs[:j] + jobs[j + 1:]
        lb = lower_bounds(Instance(cluster, tuple(others))).best if others else 0
        out.append(min(g.horizon, math.floor((upper - lb) / w[j])))
    return out


@validate_params(_COMMON)
def slotted_ilp(instance: Instance, *, slot: Real = 1, solver: str = "highs",
                time_limit: Real | None = None, gap: Real = 0.0,
                horizon: int | None = None) -> IlpResult:
    """The preemptive time-indexed ILP for ``P | size_j, r_j, pmtn | sum w_j C_j`` on a slot grid.

    Parameters
    ----------
    instance : Instance
        The instance (M = its GPU count).
    slot : number > 0
        Slot length delta (int, Fraction or float). Data that are not multiples of delta are
        rounded up (releases to the next slot, lengths to whole slots), which keeps every
        solution feasible: an upper bound.
    solver : {"highs", "cbc"}
        MILP backend.
    time_limit : float, optional
        Seconds before the solver stops with its incumbent (status "time_limit").
    gap : float in [0, 1)
        Relative MIP gap; 0 (default) proves optimality on the grid.
    horizon : int, optional
        Number of slots; default ``max release slot + sum of lengths`` (always enough).

    Returns
    -------
    IlpResult
        Objective, exact cost of the read schedule, solver bound, completion times, pieces.

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.
    SolverError
        The backend is missing or failed.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Instance, Job
    >>> inst = Instance(Cluster.homogeneous(1, 1), (Job("a", 0, 1, processing_time=3),
    ...                                             Job("b", 1, 1, processing_time=1)))
    >>> r = slotted_ilp(inst)
    >>> r.status, r.objective, dict(r.completion_times), r.exact_grid
    ('optimal', 6, {'a': 4, 'b': 2}, True)
    """
    arrivals, sizes, gpus, weights, ids, m = _data(instance)
    n = len(ids)
    if n == 0:
        return _empty_result("slotted", slot, horizon)
    g = _grid(arrivals, sizes, slot, horizon)
    T = g.horizon
    # a caller's horizon may cut optimal schedules off: then the grid optimum proves nothing
    exact_grid = g.on_grid and horizon is None and all(gj == 1 for gj in gpus)
    # Deadlines from the best of a few list schedules (all solutions at least as good obey them).
    rules = [lambda j, rem: (rem[j], j),
             lambda j, rem: (_frac(rem[j] * gpus[j]) / _frac(weights[j]), j),
             lambda j, rem: (_frac(g.length[j] * gpus[j]) / _frac(weights[j]), j),
             lambda j, rem: (-gpus[j], rem[j], j),
             lambda j, rem: (g.release[j], j)]
    candidates = [e for e in (_slot_heuristic(g, gpus, weights, m, r) for r in rules) if e is not None]
    if candidates:
        best = min(candidates, key=lambda e: exact_sum(_frac(w) * c for w, c in zip(weights, e)))
        last = _deadlines(g, gpus, weights, m, best)  # c_j <= last[j]: slots t < last[j]
    else:
        last = [T] * n
    prob = pulp.LpProblem("slotted", pulp.LpMinimize)
    x: dict = {}
    done: dict = {}
    completion_expr = []
    for j in range(n):
        r, k, d = g.release[j], g.length[j], last[j]
        first = r + k - 1  # earliest possible last slot
        for t in range(r, d):
            x[j, t] = prob.add_variable(f"x_{j}_{t}", 0, 1, cat="Binary")
        for t in range(first, d - 1):
            done[j, t] = prob.add_variable(f"D_{j}_{t}", 0, 1, cat="Binary")
        # C_j (in slots) = 1 + number of slots t with D_jt = 0 (D = 0 before first, 1 from d-1 on)
        completion_expr.append(1 + first + pulp.lpSum(1 - done[j, t] for t in range(first, d - 1)))
    prob += _with_variables(pulp.lpSum(float(weights[j]) * completion_expr[j] for j in range(n)),
                            list(x.values()), sum(g.length))
    for j in range(n):
        r, k, d = g.release[j], g.length[j], last[j]
        first = r + k - 1
        prob += pulp.lpSum(x[j, t] for t in range(r, d)) == k, f"work_{j}"
        for t in range(first, d - 2):
            prob += done[j, t + 1] >= done[j, t], f"mono_{j}_{t}"
        for t in range(first, d - 1):
            # done by the end of slot t: no work after it
            prob += pulp.lpSum(x[j, u] for u in range(t + 1, d)) <= k * (1 - done[j, t]), f"after_{j}_{t}"
            prob += x[j, t + 1] + done[j, t] <= 1, f"idle_{j}_{t}"
        prob += (k * completion_expr[j] >= pulp.lpSum((t + 1) * x[j, t] for t in range(r, d))
                 + k * (k - 1) / 2), f"mean_{j}"
    for t in range(T):
        present = [j for j in range(n) if (j, t) in x]
        if sum(gpus[j] for j in present) > m:
            prob += pulp.lpSum(gpus[j] * x[j, t] for j in present) <= m, f"cap_{t}"
    res = solve(prob, solver=solver, time_limit=time_limit, gap=gap)

    def extract():
        objective, cost, completion, schedule = [], [], [], []
        for j in range(n):
            used = [t for t in range(g.release[j], last[j]) if _value(x[j, t]) > 0.5]
            if len(used) != g.length[j]:
                raise SolverError(f"solver returned {len(used)} slots for job {ids[j]!r}, "
                                  f"expected {g.length[j]}")
            last_part = sizes[j] - (g.length[j] - 1) * slot  # in (0, slot]
            c = used[-1] * slot + last_part
            runs, start = [], used[0]
            for a, b in zip(used, used[1:] + [None]):
                if b != a + 1:
                    end = c if b is None else (a + 1) * slot
                    runs.append(RigidPiece(start * slot, end, gpus[j]))
                    start = b
            completion.append(c)
            schedule.append(tuple(runs))
            objective.append(weights[j] * (used[-1] + 1) * slot)
            cost.append(weights[j] * c)
        return exact_sum(objective), exact_sum(cost), completion, schedule

    return _result("slotted", res, g, slot, exact_grid, ids, extract)


@validate_params(_COMMON)
def start_time_ilp(instance: Instance, *, slot: Real = 1, solver: str = "highs",
                   time_limit: Real | None = None, gap: Real = 0.0,
                   horizon: int | None = None) -> IlpResult:
    """The non-preemptive start-time ILP for ``P | size_j, r_j | sum w_j C_j``.

    Each job starts at a slot boundary and runs ``P_j`` without interruption; it blocks its GPUs
    for ``ceil(P_j / delta)`` whole slots in the capacity rows, which keeps solutions feasible.

    Parameters
    ----------
    instance : Instance
        The instance.
    slot : number > 0
        Slot length delta.
    solver : {"highs", "cbc"}
        MILP backend.
    time_limit : float, optional
        Seconds before the solver stops with its incumbent.
    gap : float in [0, 1)
        Relative MIP gap; 0 proves optimality on the grid.
    horizon : int, optional
        Number of slots (default: always enough).

    Returns
    -------
    IlpResult
        ``exact_grid`` is True when all releases and lengths are multiples of delta.

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.
    SolverError
        The backend is missing or failed.

    Examples
    --------
    >>> r = start_time_ilp(two_server_instance)
    >>> r.objective, dict(r.completion_times)
    (8, {'a': 4, 'b': 1, 'c': 3})
    """
    arrivals, sizes, gpus, weights, ids, m = _data(instance)
    n = len(ids)
    if n == 0:
        return _empty_result("start_time", slot, horizon)
    g = _grid(arrivals, sizes, slot, horizon)
    T = g.horizon
    # Deadlines from the best order-preserving greedy over a few orders (see _deadlines).
    orders = [sorted(range(n), key=key) for key in (
        lambda j: (g.release[j], j),
        lambda j: (_frac(g.length[j] * gpus[j]) / _frac(weights[j]), j),
        lambda j: (_frac(g.length[j]) / _frac(weights[j]), j),
        lambda j: (-gpus[j], g.release[j], j))]
    candidates = [st for st in (_nonpreemptive_heuristic(g, gpus, m, o) for o in orders) if st is not None]
    if candidates:
        ends = [[s + k for s, k in zip(st, g.length)] for st in candidates]
        best = min(ends, key=lambda e: exact_sum(_frac(w) * c for w, c in zip(weights, e)))
        last = _deadlines(g, gpus, weights, m, best)  # start slots s <= last[j] - k_j
    else:
        last = [T] * n
    latest = [last[j] - g.length[j] for j in range(n)]
    prob = pulp.LpProblem("start_time", pulp.LpMinimize)
    y: dict = {}
    for j in range(n):
        for s in range(g.release[j], latest[j] + 1):
            y[j, s] = prob.add_variable(f"y_{j}_{s}", 0, 1, cat="Binary")
    prob += _with_variables(pulp.lpSum(float(weights[j]) * s * var for (j, s), var in y.items()),
                            list(y.values()), n)
    for j in range(n):
        prob += pulp.lpSum(y[j, s] for s in range(g.release[j], latest[j] + 1)) == 1, f"start_{j}"
    for t in range(T):
        covering = {}  # job -> the start slots that make it run in slot t
        for j in range(n):
            starts = [s for s in range(max(g.release[j], t - g.length[j] + 1), t + 1) if (j, s) in y]
            if starts:
                covering[j] = starts
        if sum(gpus[j] for j in covering) > m:
            prob += pulp.lpSum(gpus[j] * y[j, s] for j, ss in covering.items() for s in ss) <= m, f"cap_{t}"
    res = solve(prob, solver=solver, time_limit=time_limit, gap=gap)
    offset = exact_sum(w * p for w, p in zip(weights, sizes))

    def extract():
        objective, completion, schedule = [], [], []
        for j in range(n):
            starts = [s for s in range(g.release[j], latest[j] + 1) if _value(y[j, s]) > 0.5]
            if len(starts) != 1:
                raise SolverError(f"solver returned {len(starts)} starts for job {ids[j]!r}")
            begin = starts[0] * slot
            c = begin + sizes[j]
            completion.append(c)
            schedule.append((RigidPiece(begin, c, gpus[j]),))
            objective.append(weights[j] * c)
        total = exact_sum(objective)
        return total, total, completion, schedule

    return _result("start_time", res, g, slot, g.on_grid and horizon is None, ids, extract,
                   bound_offset=offset)


@validate_params({"instance": [InstanceOf(Instance)],
                  "max_slots": [Interval(Integral, 1, None, closed="left")]})
def auto_slot(instance: Instance, *, max_slots: int = 200):
    """The slot length :func:`asrpt.offline.opt.offline_opt` uses when none is given.

    The largest delta that divides every arrival and processing time (their rational gcd), so
    that the grid is exact where it can be, coarsened by an integer factor when the horizon would
    exceed ``max_slots`` slots. With float data the result is a float.

    Parameters
    ----------
    instance : Instance
        The instance.
    max_slots : int
        Target bound on the horizon ``max release + sum of lengths`` in slots (each length may
        still round up by one slot).

    Returns
    -------
    number
        An int or Fraction for exact data, a float when the data have floats.

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> auto_slot(two_server_instance), auto_slot(two_server_instance, max_slots=3)
    (1, 3)
    """
    arrivals, sizes, *_ = _data(instance)
    values = [_frac(v) for v in arrivals + sizes if v != 0]
    if not values:
        return 1
    lcm = 1
    for q in values:
        lcm = lcm * q.denominator // math.gcd(lcm, q.denominator)
    g = 0
    for q in values:
        g = math.gcd(g, q.numerator * (lcm // q.denominator))
    delta = Fraction(g, lcm)
    span = math.ceil(max(_frac(a) for a in arrivals) / delta) + sum(_frac(p) / delta for p in sizes)
    delta *= max(1, math.ceil(span / max_slots))
    if any(isinstance(v, float) for v in arrivals + sizes):
        return float(delta)
    return delta.numerator if delta.denominator == 1 else delta


#: Largest ILP grid (jobs x slots) the models build: beyond it model building alone takes minutes.
MAX_GRID_CELLS = 2_000_000


@validate_params({
    "instance": [InstanceOf(Instance)],
    "schedule": [InstanceOf(abc.Mapping)],
    "preemptive": ["boolean"],
    "rel_tol": [Interval(Real, 0, 1, closed="left")],
    "exact": ["boolean"],
})
def schedule_problems(instance: Instance, schedule: Mapping[str, tuple], *, preemptive: bool = True,
                      rel_tol: Real = 1e-9, exact: bool = False) -> list[str]:
    """Check a rigid schedule independently of how it was made; return its problems (empty if valid).

    Checks: every job of the instance has pieces and nothing else does; pieces are ordered,
    disjoint, start no earlier than the arrival, use exactly ``g_j`` GPUs and add up to ``P_j``
    (exactly for exact data, within ``rel_tol`` with floats); at most M GPUs are busy at any
    time; non-preemptive schedules have one piece per job.

    Parameters
    ----------
    instance : Instance
        The instance.
    schedule : mapping
        Job id to a sequence of :class:`RigidPiece` (or ``(start, end, gpus)`` tuples).
    preemptive : bool
        Whether several pieces per job are allowed.
    rel_tol : float
        Relative tolerance for float data.
    exact : bool
        Check in rational arithmetic, every float read as the binary number it is (no
        tolerance): a schedule computed in floats may then fail by a rounding.

    Returns
    -------
    list of str
        One line per problem.

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> schedule_problems(two_server_instance, slotted_ilp(two_server_instance).schedule)
    []
    >>> for line in schedule_problems(two_server_instance,
    ...                               {"a": [(0, 4, 2)], "b": [(0, 1, 4)], "c": [(0, 2, 4)]}):
    ...     print(line)
    job c: starts at 0, before its arrival 1
    job c: a piece uses 4 GPUs, the job needs 1
    at time 0: 10 GPUs busy, more than the 8 of the cluster
    """
    problems: list[str] = []
    times = dict(zip((j.id for j in instance.jobs), processing_times(instance)))
    m = instance.cluster.total_gpus
    arrival = {j.id: j.arrival for j in instance.jobs}
    if exact:
        times = {k: _frac(v) for k, v in times.items()}
        arrival = {k: _frac(v) for k, v in arrival.items()}
        schedule = {k: [(_frac(p[0]), _frac(p[1]), p[2]) for p in v] for k, v in schedule.items()}
        rel_tol = 0

    def close(a, b) -> bool:
        if isinstance(a, float) or isinstance(b, float):
            return abs(a - b) <= rel_tol * max(abs(a), abs(b), 1)
        return a == b

    events: list = []
    for job in instance.jobs:
        pieces = [RigidPiece(*p) for p in schedule.get(job.id, ())]
        if not pieces:
            problems.append(f"job {job.id}: no pieces")
            continue
        if not preemptive and len(pieces) > 1:
            problems.append(f"job {job.id}: {len(pieces)} pieces in a non-preemptive schedule")
        if pieces[0].start < arrival[job.id] and not close(pieces[0].start, arrival[job.id]):
            problems.append(f"job {job.id}: starts at {pieces[0].start}, before its arrival {job.arrival}")
        total = 0
        for a, b in zip(pieces, pieces[1:] + [None]):
            if a.end <= a.start:
                problems.append(f"job {job.id}: empty or reversed piece [{a.start}, {a.end})")
            if a.gpus != job.gpus:
                problems.append(f"job {job.id}: a piece uses {a.gpus} GPUs, the job needs {job.gpus}")
            if b is not None and b.start < a.end:
                problems.append(f"job {job.id}: pieces overlap or are out of order at {b.start}")
            total = total + (a.end - a.start)
            events.append((a.start, a.gpus))
            events.append((a.end, -a.gpus))
        if not close(total, times[job.id]):
            problems.append(f"job {job.id}: processed {total}, needs {times[job.id]}")
    for key in schedule:
        if key not in times:
            problems.append(f"job {key}: not in the instance")
    busy = 0
    events.sort(key=lambda e: (e[0], e[1]))  # releases of GPUs before new uses at the same time
    for i, (t, delta) in enumerate(events):
        busy += delta
        last_at_t = i + 1 == len(events) or events[i + 1][0] != t
        if last_at_t and busy > m:
            problems.append(f"at time {t}: {busy} GPUs busy, more than the {m} of the cluster")
    return problems
