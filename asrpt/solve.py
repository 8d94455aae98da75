"""One entry point to the MILP solvers: ``solve(problem, solver=, time_limit=, gap=)``.

Models are written with PuLP (the offline-optimum ILPs in :mod:`asrpt.offline`, the placement ILP
in :mod:`asrpt.placement`); this module owns how they are solved and how the answer is reported:

- ``solver="highs"`` (default): HiGHS in process through ``highspy``; reports the best bound too.
  When HiGHS's presolve fails on a model ("Solve error", a known HiGHS 1.16 defect on some small
  MIPs), the model is solved again with presolve off.
- ``solver="cbc"``: the CBC binary bundled with PuLP 3.x, as an independent cross-check. CBC does
  not report a best bound when it stops on the time limit (``bound`` is then ``None``).

``gap`` is the relative MIP gap at which the solver may stop; the default 0 asks for a proven
optimum. A :class:`SolveResult` says ``status`` ("optimal", "time_limit", "infeasible",
"unbounded"), the incumbent ``objective`` (None when no solution was found), the best ``bound``
and the wall time. Variable values are read from the PuLP variables after the call.

Examples
--------
>>> import pulp
>>> prob = pulp.LpProblem("tiny", pulp.LpMinimize)
>>> x = prob.add_variable("x", 0, 10, cat="Integer")
>>> prob += x
>>> prob += x >= 2.5
>>> res = solve(prob)
>>> res.status, res.objective, x.value()
('optimal', 3.0, 3.0)
"""

from __future__ import annotations

import functools
import math
import os
import sys
import time
from dataclasses import dataclass
from numbers import Integral, Real

import pulp

from ._validation import Interval, Options, validate_params
from .errors import SolverError

__all__ = ["SolveResult", "solve", "SOLVERS", "available_solvers"]

SOLVERS = ("highs", "cbc")


@dataclass(frozen=True)
class SolveResult:
    """What a MILP solve produced.

    Attributes
    ----------
    status : str
        "optimal", "time_limit" (stopped early; ``objective`` may be None if nothing was found),
        "infeasible" or "unbounded".
    objective : float or None
        Value of the best solution found.
    bound : float or None
        Best proven bound on the optimum (equals ``objective`` when optimal).
    solver : str
        The backend used.
    wall_time : float
        Seconds spent in the solver call (model transfer included).
    """

    status: str
    objective: float | None
    bound: float | None
    solver: str
    wall_time: float

    @property
    def has_solution(self) -> bool:
        """True when a feasible solution is available (optimal or an incumbent at the limit)."""
        return self.objective is not None


def _cbc_path() -> str | None:
    try:
        from pulp.apis.coin_api import pulp_cbc_path
    except ImportError:  # pragma: no cover - PuLP without the bundled binary
        pulp_cbc_path = None
    for path in (pulp_cbc_path, pulp.COIN_CMD().path if hasattr(pulp, "COIN_CMD") else None):
        if path and os.path.isfile(path):
            if not os.access(path, os.X_OK):
                try:
                    os.chmod(path, 0o755)
                except OSError:
                    continue
            return path
    return None


def _objective_value(problem: pulp.LpProblem) -> float:
    """The objective at the current variable values; a constant objective (no variables, which
    PuLP's CBC interface never reads back) is its constant."""
    if problem.objective is None:
        return 0.0
    value = pulp.value(problem.objective)
    return float(problem.objective.constant if value is None else value)


@functools.lru_cache(maxsize=1)
def _silence_highs_banner() -> None:
    """HiGHS prints a banner on stdout the first time a solver object is built in a process,
    before any option can turn it off; build that first object with stdout pointed at /dev/null
    so ``--json`` output stays clean."""
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


class _HiGHSWarm(pulp.HiGHS):
    """PuLP's HiGHS interface that hands HiGHS the variables' current values as a start."""

    def callSolver(self, lp):
        import numpy as np

        idx, val = [], []
        for var in lp.variables():
            if var.varValue is not None:
                idx.append(var.index)
                val.append(float(var.varValue))
        if idx:
            lp.solverModel.setSolution(len(idx), np.array(idx, dtype=np.int32),
                                       np.array(val, dtype=np.float64))
        lp.solverModel.run()


def available_solvers() -> tuple[str, ...]:
    """The solver names usable on this machine.

    >>> "highs" in available_solvers()
    True
    """
    out = []
    try:
        import highspy  # noqa: F401

        out.append("highs")
    except ImportError:  # pragma: no cover
        pass
    if _cbc_path():
        out.append("cbc")
    return tuple(out)


@validate_params(
    {
        "problem": [pulp.LpProblem],
        "solver": [Options(str, SOLVERS)],
        "time_limit": [None, Interval(Real, 0, None, closed="neither")],
        "gap": [Interval(Real, 0, 1, closed="left")],
        "threads": [Interval(Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
    }
)
def solve(problem: pulp.LpProblem, *, solver: str = "highs", time_limit: float | None = None,
          gap: float = 0.0, threads: int = 1, warm_start: bool = False) -> SolveResult:
    """Solve a PuLP model with the chosen backend and report status, objective and bound.

    Parameters
    ----------
    problem : pulp.LpProblem
        The model; its variables receive the solution values.
    solver : {"highs", "cbc"}
        Backend. HiGHS runs in process; CBC is PuLP's bundled binary. Where HiGHS's presolve
        fails, or calls the model infeasible, the model is solved again without presolve
        (HiGHS 1.16's presolve is wrong on some small MIPs), within the same time limit.
    time_limit : float or None
        Seconds before the solver stops with its incumbent (status "time_limit").
    gap : float in [0, 1)
        Relative MIP gap at which to stop; 0 (default) proves optimality.
    threads : int
        Solver threads (1 by default, for reproducible runs).
    warm_start : bool
        Start from the variables' current values (``var.varValue`` where set, e.g. a
        heuristic's solution): HiGHS takes them as its first incumbent when they are feasible
        and ignores them otherwise; CBC is passed PuLP's ``warmStart``. The optimum is the same.

    Returns
    -------
    SolveResult

    Raises
    ------
    SolverError
        The backend is not installed, or failed without an answer.
    """
    start = time.perf_counter()
    if solver == "highs":
        try:
            import highspy
        except ImportError:  # pragma: no cover
            raise SolverError("solver 'highs' needs the highspy package: pip install highspy") from None
        _silence_highs_banner()
        S = highspy.HighsModelStatus
        for presolve in ("choose", "off"):
            highs = _HiGHSWarm if warm_start else pulp.HiGHS
            limit = time_limit
            if limit is not None and presolve == "off":     # (the time left of the limit)
                limit = max(limit - (time.perf_counter() - start), 1e-3)
            backend = highs(msg=False, timeLimit=limit, gapRel=gap,
                            gapAbs=0.0 if gap == 0 else None, threads=threads, random_seed=0,
                            presolve=presolve)
            try:
                problem.solve(backend)
            except pulp.PulpSolverError as exc:
                raise SolverError(f"HiGHS failed: {exc}") from None
            model_status = problem.solverModel.getModelStatus()
            # HiGHS 1.16's presolve can reduce a small MIP to an infeasible point and stop with
            # "Solve error" (or leave the status unset), or declare a feasible one infeasible
            # (a 4-job start-time ILP: tests/offline/test_ilp.py); the same model solves without
            # presolve, so such answers are asked again without it.
            if model_status not in (S.kSolveError, S.kNotset, S.kInfeasible, S.kUnboundedOrInfeasible):
                break
        h = problem.solverModel
        info = h.getInfo()
        is_mip = any(v.cat == pulp.LpInteger for v in problem.variables())
        if model_status == S.kOptimal:
            status = "optimal"
        elif model_status == S.kInfeasible or model_status == S.kUnboundedOrInfeasible:
            status = "infeasible"
        elif model_status == S.kUnbounded:
            status = "unbounded"
        elif model_status in (S.kTimeLimit, S.kIterationLimit, S.kInterrupt):
            status = "time_limit"
        else:
            raise SolverError(f"HiGHS stopped with status {h.modelStatusToString(model_status)}")
        objective = None
        if status == "optimal" or (status == "time_limit" and info.primal_solution_status == 2):
            objective = _objective_value(problem)
        bound = objective if status == "optimal" else None
        if is_mip and status in ("optimal", "time_limit") and math.isfinite(info.mip_dual_bound):
            # HiGHS minimises obj_mult * (objective - constant): PuLP passes no constant and
            # negates maximisation problems. Map its dual bound back to the model's objective.
            obj_mult = -1.0 if problem.sense == pulp.LpMaximize else 1.0
            constant = float(problem.objective.constant) if problem.objective is not None else 0.0
            bound = obj_mult * float(info.mip_dual_bound) + constant
        return SolveResult(status, objective, bound, "highs", time.perf_counter() - start)

    path = _cbc_path()
    if path is None:
        raise SolverError("solver 'cbc' is not available: PuLP's bundled CBC binary was not found")
    backend = pulp.COIN_CMD(path=path, msg=False, timeLimit=time_limit, gapRel=gap, threads=threads,
                            warmStart=warm_start)
    try:
        problem.solve(backend)
    except pulp.PulpSolverError as exc:
        raise SolverError(f"CBC failed: {exc}") from None
    st, sol = problem.status, problem.sol_status
    objective = None
    if st == pulp.LpStatusOptimal and sol == pulp.LpSolutionOptimal:
        status = "optimal"
        objective = _objective_value(problem)
        bound = objective
    elif sol == pulp.LpSolutionIntegerFeasible:
        status = "time_limit"
        objective = _objective_value(problem)
        bound = None
    elif st == pulp.LpStatusInfeasible:
        status, bound = "infeasible", None
    elif st == pulp.LpStatusUnbounded:
        status, bound = "unbounded", None
    elif st == pulp.LpStatusNotSolved:
        status, bound = "time_limit", None
    else:
        raise SolverError(f"CBC stopped with status {pulp.LpStatus.get(st, st)}")
    return SolveResult(status, objective, bound, "cbc", time.perf_counter() - start)
