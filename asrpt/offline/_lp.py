"""Linear programs over configurations, solved in floating point and bounded exactly.

This module owns the small LP engine that the exact preemptive optimum (:mod:`.sequence`,
:mod:`.exact`) and the configuration-LP lower bound (:mod:`.config_lp`) share. A
:class:`ConfigLP` is ``min c x`` over

- explicit columns (interval lengths, completion times, ...) with finite bounds, and
- **configuration groups**: a group stands for every set S of its jobs whose GPU widths sum to at
  most M; the column ``x_S >= 0`` (time spent running exactly the jobs of S) has a 1 in the
  group's capacity row and, for each job of S, that job's coefficients. The columns are generated
  when the LP prices them out (a knapsack over the jobs, :func:`knapsack`), never all listed.

Rows are ``lo <= a x <= hi`` with ``lo`` or ``hi`` possibly infinite. All data are exact
(int or :class:`~fractions.Fraction`); HiGHS solves a float copy.

**Exact answers from a float solver.** Nothing the toolkit reports rests on the float optimum:

- :meth:`ConfigLP.dual_bound` turns *any* row multipliers ``y`` into a lower bound on the LP
  optimum, computed in rationals: ``sum_i y_i b_i + sum_j min(d_j l_j, d_j u_j)`` over the
  explicit columns (``d = c - A^T y``, the reduced costs), plus, for each group,
  ``U_g * min(0, min_S d_S)`` where ``U_g`` bounds the group's total time and ``min_S d_S`` is
  computed over *every* configuration by an exact knapsack. Multipliers of the wrong sign are
  set to 0 first. This is weak duality and holds for every ``y`` (proofs/exact-opt.md, Lemma 3),
  so a float answer can only make the bound weaker, never wrong.
- :meth:`ConfigLP.exact_solution` rebuilds the optimal basis HiGHS reports in rationals: the
  basic columns solve the tight rows exactly, the result is checked against every row and bound,
  and the dual of the same basis is fed to :meth:`dual_bound`. When the primal point is feasible
  and its value equals that bound, the LP optimum is known exactly.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import numpy as np

__all__ = ["ConfigLP", "Group", "knapsack", "LpAnswer"]

_PRICE_TOL = 1e-9


def _num(x):
    """An exact number: ints stay ints (fast), anything else becomes a Fraction."""
    return x if type(x) is int or isinstance(x, Fraction) else Fraction(x)


def _magnitude(v) -> float:
    return 0.0 if v is None else abs(float(v))


def _exponent(v) -> int:
    """The power of two about ``|v|`` (0 for 0)."""
    f = abs(float(v))
    return 0 if f == 0 else math.floor(math.log2(f))


def knapsack(values: Sequence, widths: Sequence[int], capacity: int) -> tuple:
    """The most valuable set of items whose widths fit in ``capacity``: ``(value, items)``.

    Exact for exact values (Fractions, ints) and plain for floats; items of value <= 0 never
    help and are skipped. A dynamic program over the Pareto frontier of (width, value).

    >>> knapsack([3, 2, 2], [2, 1, 1], 2)
    (4, (1, 2))
    >>> knapsack([-1], [1], 1)
    (0, ())
    """
    frontier = {0: (0, ())}  # width used -> (best value, items)
    for i, (v, wd) in enumerate(zip(values, widths)):
        if v <= 0 or wd > capacity:
            continue
        new = dict(frontier)
        for used, (val, items) in frontier.items():
            u = used + wd
            if u > capacity:
                continue
            cand = val + v
            old = new.get(u)
            if old is None or cand > old[0]:
                new[u] = (cand, items + (i,))
        # keep the Pareto frontier: a larger width must bring a larger value
        best = None
        frontier = {}
        for u in sorted(new):
            val = new[u]
            if best is None or val[0] > best:
                frontier[u] = val
                best = val[0]
    return max(frontier.values(), key=lambda e: e[0])


@dataclass
class Group:
    """Configuration columns of one interval: jobs with widths, a capacity row, a time bound.

    ``job_rows[i]`` lists the ``(row, coefficient)`` pairs job ``jobs[i]`` adds to a
    configuration column; ``bound`` is an upper bound on the group's total time (used by
    :meth:`ConfigLP.dual_bound` for the columns not generated).
    """

    cap_row: int
    jobs: tuple
    widths: tuple
    job_rows: tuple
    capacity: int
    bound: Fraction
    columns: dict = field(default_factory=dict)  # frozenset of positions in jobs -> column index


@dataclass(frozen=True)
class LpAnswer:
    """What one solve of a :class:`ConfigLP` gave.

    ``status`` is "optimal" or "infeasible"; ``value`` the float optimum; ``bound`` an exact lower
    bound on the LP optimum (None when infeasible). ``infeasible_proven`` is True when HiGHS's
    dual ray, checked in rationals, proves the infeasibility; an unproven "infeasible" must not be
    used to discard anything.
    """

    status: str
    value: float | None
    bound: Fraction | None
    infeasible_proven: bool = False


class ConfigLP:
    """``min c x`` over explicit columns and configuration groups (see the module docstring)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.row_lo: list = []
        self.row_hi: list = []
        self.cost: list = []
        self.col_lo: list = []
        self.col_hi: list = []
        self.col_entries: list = []  # list of (rows tuple, coefs tuple)
        self.groups: list[Group] = []
        self._group_of_col: dict = {}  # column -> (group, frozenset)
        self._highs = None
        self._rows_sent = 0
        self._cols_sent = 0
        self.y: list | None = None
        self.x: list | None = None
        self.constant = 0
        self._ints = None  # the data in integers, for the exact bounds (see _scaled)

    # -- building -------------------------------------------------------------------------
    def add_row(self, lo=None, hi=None) -> int:
        self.row_lo.append(lo)
        self.row_hi.append(hi)
        return len(self.row_lo) - 1

    def add_cut(self, lo, hi, entries: dict) -> int:
        """A row over existing columns (``entries``: column -> coefficient), sent to HiGHS at
        once when the model exists."""
        if self._highs is not None and self._rows_sent != len(self.row_lo):
            raise RuntimeError("add_cut: rows added since the last solve must be sent first")
        row = self.add_row(_num(lo) if lo is not None else None, _num(hi) if hi is not None else None)
        for c, a in entries.items():
            rows, coefs = self.col_entries[c]
            self.col_entries[c] = (rows + (row,), coefs + (_num(a),))
        if self._highs is not None:
            import highspy
            inf = highspy.kHighsInf
            cols = sorted(entries)
            size = max([_magnitude(lo), _magnitude(hi)]
                       + [_magnitude(entries[c]) * 2.0 ** self._col_exp[c] for c in cols])
            e = 0 if size == 0 else math.floor(math.log2(size))
            self._row_exp.append(e)
            self._highs.addRow(-inf if lo is None else math.ldexp(float(lo), -e),
                               inf if hi is None else math.ldexp(float(hi), -e), len(cols),
                               np.array(cols, dtype=np.int32),
                               np.array([math.ldexp(float(entries[c]), self._col_exp[c] - e)
                                         for c in cols]))
            self._rows_sent += 1
        self._ints = None
        return row

    def add_col(self, cost, lo, hi, entries: dict) -> int:
        if hi is None:
            raise ValueError("every explicit column needs a finite upper bound")
        rows = tuple(entries)
        self.cost.append(_num(cost))
        self.col_lo.append(_num(lo))
        self.col_hi.append(_num(hi))
        self.col_entries.append((rows, tuple(_num(entries[r]) for r in rows)))
        return len(self.cost) - 1

    def add_group(self, cap_row: int, jobs, widths, job_rows, bound) -> Group:
        g = Group(cap_row, tuple(jobs), tuple(widths), tuple(tuple(r) for r in job_rows),
                  self.capacity, _num(bound))
        self.groups.append(g)
        for i in range(len(g.jobs)):  # every single job alone is a configuration (g_j <= M)
            self._config_column(g, frozenset((i,)))
        return g

    def _config_column(self, g: Group, members: frozenset) -> int:
        if members in g.columns:
            return g.columns[members]
        entries: dict = {g.cap_row: 1}
        for i in members:
            for r, a in g.job_rows[i]:
                entries[r] = entries.get(r, 0) + a
        c = self.add_col(0, 0, g.bound, entries)
        g.columns[members] = c
        self._group_of_col[c] = (g, members)
        return c

    # -- float solve ------------------------------------------------------------------------
    def _sync(self):
        """Send new rows and columns to HiGHS, scaled by powers of two (exact data may be huge
        integers: float instances in their binary units). Column c is sent as ``x_c / 2^e_c``
        (``2^e_c`` about its upper bound) and row i multiplied by ``2^-f_i`` (about its largest
        entry or bound); :meth:`_unscale_duals` maps HiGHS's row duals back."""
        import highspy
        first = self._highs is None
        if first:
            from ..solve import _silence_highs_banner
            _silence_highs_banner()  # HiGHS's banner would land on stdout (``--json``)
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            # one thread, as asrpt.solve uses: HiGHS's global scheduler keeps the thread count of
            # its first run, and a later run asking for another count fails ("Not Set")
            h.setOptionValue("threads", 1)
            h.setOptionValue("random_seed", 0)
            self._highs = h
            self._col_exp = []
            self._row_exp = []
        h = self._highs
        inf = highspy.kHighsInf
        for c in range(len(self._col_exp), len(self.cost)):
            self._col_exp.append(_exponent(self.col_hi[c]))
        if first:  # the objective as well, by 2^-g (duals and the value scale with it)
            size = max((_magnitude(c) * 2.0 ** e for c, e in zip(self.cost, self._col_exp)), default=0)
            self._obj_exp = 0 if size == 0 else math.floor(math.log2(size))
        n_rows = len(self.row_lo)
        if n_rows > self._rows_sent:
            size = [max(_magnitude(self.row_lo[i]), _magnitude(self.row_hi[i]))
                    for i in range(self._rows_sent, n_rows)]
            if first:
                for c in range(len(self.cost)):
                    rows, coefs = self.col_entries[c]
                    for r, a in zip(rows, coefs):
                        if r >= self._rows_sent:
                            size[r - self._rows_sent] = max(size[r - self._rows_sent],
                                                            _magnitude(a) * 2.0 ** self._col_exp[c])
            exps = [0 if v == 0 else math.floor(math.log2(v)) for v in size]
            self._row_exp.extend(exps)
            lo = np.array([-inf if v is None else math.ldexp(float(v), -e)
                           for v, e in zip(self.row_lo[self._rows_sent:], exps)])
            hi = np.array([inf if v is None else math.ldexp(float(v), -e)
                           for v, e in zip(self.row_hi[self._rows_sent:], exps)])
            h.addRows(n_rows - self._rows_sent, lo, hi, 0, np.zeros(0, dtype=np.int32),
                      np.zeros(0, dtype=np.int32), np.zeros(0))
            self._rows_sent = n_rows
        new = range(self._cols_sent, len(self.cost))
        if len(new):  # one call for all new columns
            costs, lower, upper, starts, index, value = [], [], [], [], [], []
            row_exp, obj_exp = self._row_exp, self._obj_exp
            for c in new:
                rows, coefs = self.col_entries[c]
                e = self._col_exp[c]
                costs.append(math.ldexp(float(self.cost[c]), e - obj_exp))
                lower.append(math.ldexp(float(self.col_lo[c]), -e))
                upper.append(math.ldexp(float(self.col_hi[c]), -e))
                starts.append(len(index))
                index.extend(rows)
                value.extend(math.ldexp(float(a), e - row_exp[r]) for r, a in zip(rows, coefs))
            h.addCols(len(new), np.array(costs), np.array(lower), np.array(upper), len(index),
                      np.array(starts, dtype=np.int32), np.array(index, dtype=np.int32),
                      np.array(value))
        self._cols_sent = len(self.cost)

    def _unscale_duals(self, y, objective: bool = True) -> list:
        g = self._obj_exp if objective else 0
        return [math.ldexp(v, g - e) for v, e in zip(y, self._row_exp)]

    def _unscale_primal(self, x) -> list:
        return [math.ldexp(v, e) for v, e in zip(x, self._col_exp)]

    def solve(self, max_rounds: int = 500, deadline: float | None = None) -> LpAnswer:
        """Column generation to a float optimum, then an exact lower bound from its duals.

        Past ``deadline`` (a :func:`time.monotonic` time) or ``max_rounds`` the generation stops
        early: the answer's ``bound`` stays valid (it prices every configuration exactly), its
        ``value`` is then only the restricted LP's."""
        import highspy
        for _ in range(max_rounds):
            self._sync()
            h = self._highs
            h.run()
            status = h.getModelStatus()
            if status != highspy.HighsModelStatus.kOptimal:
                self.y = self.x = None
                if status != highspy.HighsModelStatus.kInfeasible:
                    raise RuntimeError(f"HiGHS: {h.modelStatusToString(status)}")
                # Farkas pricing: a configuration not generated yet may make the LP feasible
                answer = h.getDualRay()
                has, ray = answer[-2], answer[-1]  # (status, has_ray, ray)
                if not has:
                    return LpAnswer("infeasible", None, None, False)
                ray = self._unscale_duals(list(ray), objective=False)
                if self._price(ray) + self._price([-v for v in ray]):
                    continue
                return LpAnswer("infeasible", None, None, self._proves_infeasible(ray))
            sol = h.getSolution()
            y = self._unscale_duals(list(sol.row_dual))
            if deadline is not None and time.monotonic() > deadline:
                break
            if not self._price(y):
                break
        self.y = y
        self.x = self._unscale_primal(list(sol.col_value))
        value = math.ldexp(h.getInfo().objective_function_value, self._obj_exp) + float(self.constant)
        return LpAnswer("optimal", value, self.scaled_dual_bound(y), False)

    _SCALE_BITS = 40

    def _scaled(self):
        """The LP's data as integers over one common denominator D (cached)."""
        if self._ints is not None and self._ints[0] == len(self.cost):
            return self._ints
        D = 1
        for v in itertools.chain(self.row_lo, self.row_hi, self.cost, self.col_lo, self.col_hi,
                                 (g.bound for g in self.groups), (self.constant,),
                                 itertools.chain.from_iterable(c for _, c in self.col_entries),
                                 (a for g in self.groups for rows in g.job_rows for _, a in rows)):
            if v is not None and type(v) is not int:
                q = v.denominator
                D = D * q // math.gcd(D, q)

        def i(v):
            if v is None:
                return None
            return v * D if type(v) is int else int(v * D)
        self._ints = (len(self.cost), D, [i(v) for v in self.row_lo], [i(v) for v in self.row_hi],
                      [i(v) for v in self.cost], [i(v) for v in self.col_lo],
                      [i(v) for v in self.col_hi],
                      [(rows, [i(a) for a in coefs]) for rows, coefs in self.col_entries],
                      [[[(r, i(a)) for r, a in rows] for rows in g.job_rows] for g in self.groups],
                      [i(g.bound) for g in self.groups], i(self.constant))
        return self._ints

    def scaled_dual_bound(self, y_float, *, costs: bool = True) -> Fraction:
        """:meth:`dual_bound` of float multipliers rounded to multiples of a power of two (small
        enough for the smallest of them), which is just another choice of multipliers."""
        small = min((math.frexp(v)[1] for v in y_float if v), default=0)
        bits = self._SCALE_BITS + min(max(0, -small), 400)
        return self._integer_bound([int(round(math.ldexp(v, bits))) for v in y_float], 1 << bits, costs)

    def _integer_bound(self, Y: list, S: int, costs: bool) -> Fraction:
        """Lemma E4's bound for the multipliers ``y_i = Y_i / S``, in integers: the data are
        integers over one common denominator D (:meth:`_scaled`), every term is a numerator over
        ``S D^2``."""
        _, D, row_lo, row_hi, cost, col_lo, col_hi, entries, job_rows, gbound, const = self._scaled()
        Y = list(Y)
        total = 0
        for k, v in enumerate(Y):
            if v > 0:
                if row_lo[k] is None:
                    Y[k] = 0  # a multiplier of the wrong sign for its row: dropped
                else:
                    total += v * row_lo[k] * D
            elif v < 0:
                if row_hi[k] is None:
                    Y[k] = 0
                else:
                    total += v * row_hi[k] * D
        for c in range(len(cost)):
            if c in self._group_of_col:
                continue  # configuration columns are bounded group by group below
            rows, coefs = entries[c]
            dn = (cost[c] * S if costs else 0) - sum(Y[r] * a for r, a in zip(rows, coefs))
            total += dn * (col_lo[c] if dn >= 0 else col_hi[c])
        for gi, g in enumerate(self.groups):
            values = [sum(Y[r] * a for r, a in rows) for rows in job_rows[gi]]
            best, _ = knapsack(values, g.widths, g.capacity)
            dmin = -Y[g.cap_row] * D - best
            if dmin < 0:
                total += dmin * gbound[gi]
        if costs:
            total += const * S * D
        return Fraction(total, S * D * D)

    def _price(self, y) -> int:
        """Add, per group, the configuration of most negative reduced cost under multipliers ``y``
        (float pricing); the number of columns added."""
        added = 0
        for g in self.groups:
            values = [sum(y[r] * float(a) for r, a in rows) for rows in g.job_rows]
            best, items = knapsack(values, g.widths, g.capacity)
            # relative to the multipliers' own size: exact units may make them tiny (1e-18)
            if -y[g.cap_row] - best < -_PRICE_TOL * max(abs(y[g.cap_row]), abs(best)):
                members = frozenset(items)
                if members not in g.columns:
                    self._config_column(g, members)
                    added += 1
        return added

    def _proves_infeasible(self, ray) -> bool:
        """Whether a dual ray proves, in rationals, that the LP has no feasible point.

        With every cost set to 0 the LP optimum of a feasible LP is 0, so a multiplier vector whose
        :meth:`dual_bound` (costs 0) is positive proves infeasibility (Farkas); configurations not
        generated are covered by the exact pricing inside :meth:`dual_bound`."""
        for scale in (1, -1):
            for den in (None, 10 ** 6):
                y = [Fraction(scale * v) if den is None else Fraction(scale * v).limit_denominator(den)
                     for v in ray]
                if self.dual_bound(y, costs=False) > 0:
                    return True
        return False

    # -- exact bounds ---------------------------------------------------------------------------
    def dual_bound(self, y: Sequence[Fraction], *, costs: bool = True) -> Fraction:
        """An exact lower bound on the LP optimum from any row multipliers ``y`` (weak duality).

        With ``costs=False`` the bound is that of the same LP with every cost 0 (and no constant):
        a positive value then proves the LP infeasible."""
        y = [Fraction(v) for v in y]
        S = 1
        for v in y:
            S = S * v.denominator // math.gcd(S, v.denominator)
        return self._integer_bound([int(v * S) for v in y], S, costs)

    def exact_solution(self):
        """The optimal basis rebuilt in rationals: ``(x, value, bound)`` or None.

        ``x`` is an exactly feasible point (every row and bound checked), ``value`` its exact
        objective and ``bound`` the exact dual bound of the same basis; ``value == bound`` proves
        ``x`` optimal. None when the basis cannot be rebuilt (singular) or its point is infeasible.
        """
        import highspy
        h = self._highs
        basis = h.getBasis()
        col_status = list(basis.col_status)
        row_status = list(basis.row_status)
        basic = [c for c, s in enumerate(col_status) if s == highspy.HighsBasisStatus.kBasic]
        tight = [i for i, s in enumerate(row_status) if s != highspy.HighsBasisStatus.kBasic]
        if len(basic) != len(tight):
            return None
        x = [Fraction(0)] * len(self.cost)
        for c, s in enumerate(col_status):
            if s == highspy.HighsBasisStatus.kUpper:
                x[c] = self.col_hi[c]
            elif s != highspy.HighsBasisStatus.kBasic:
                x[c] = self.col_lo[c]
        rhs = {}
        for i in tight:
            s = row_status[i]
            lo, hi = self.row_lo[i], self.row_hi[i]
            if s == highspy.HighsBasisStatus.kUpper or lo is None:
                rhs[i] = hi
            else:
                rhs[i] = lo
            if rhs[i] is None:
                return None
        pos = {i: k for k, i in enumerate(tight)}
        cpos = {c: k for k, c in enumerate(basic)}
        n = len(tight)
        mat = [[Fraction(0)] * n for _ in range(n)]
        b = [Fraction(rhs[i]) for i in tight]
        for c in range(len(self.cost)):
            rows, coefs = self.col_entries[c]
            for r, a in zip(rows, coefs):
                if r in pos:
                    if c in cpos:
                        mat[pos[r]][cpos[c]] += a
                    elif x[c]:
                        b[pos[r]] -= a * x[c]
        sol = _solve_exact(mat, b)
        if sol is None:
            return None
        for c, k in cpos.items():
            x[c] = sol[k]
        # the dual of the same basis: A_B^T y_T = c_B, y = 0 on the rows whose slack is basic
        mat_t = [[mat[r][k] for r in range(n)] for k in range(n)]
        ysol = _solve_exact(mat_t, [self.cost[c] for c in basic])
        y = [Fraction(0)] * len(self.row_lo)
        if ysol is not None:
            for i, k in pos.items():
                y[i] = ysol[k]
        if not self.feasible(x):
            return None
        value = sum((c * v for c, v in zip(self.cost, x)), Fraction(0)) + self.constant
        bound = self.dual_bound(y)
        return x, value, bound

    def feasible(self, x: Sequence[Fraction]) -> bool:
        """Whether ``x`` satisfies every bound and row exactly."""
        act = [Fraction(0)] * len(self.row_lo)
        for c, v in enumerate(x):
            if v < self.col_lo[c] or v > self.col_hi[c]:
                return False
            if v:
                rows, coefs = self.col_entries[c]
                for r, a in zip(rows, coefs):
                    act[r] += a * v
        for i, a in enumerate(act):
            lo, hi = self.row_lo[i], self.row_hi[i]
            if (lo is not None and a < lo) or (hi is not None and a > hi):
                return False
        return True

    def best_bound(self) -> Fraction | None:
        """The best exact lower bound from the last float duals and a few rational roundings."""
        if self.y is None:
            return None
        cands = [self.dual_bound([Fraction(v) for v in self.y])]
        for den in (10 ** 3, 10 ** 6, 10 ** 9):
            cands.append(self.dual_bound([Fraction(v).limit_denominator(den) for v in self.y]))
        return max(cands)

    def configuration_times(self, x: Sequence) -> list:
        """Per group, the generated configurations with positive time: ``[(jobs, time), ...]``."""
        out = []
        for g in self.groups:
            runs = []
            for members, c in sorted(g.columns.items(), key=lambda e: e[1]):
                if x[c] > 0:
                    runs.append((tuple(g.jobs[i] for i in sorted(members)), x[c]))
            out.append(runs)
        return out


def _solve_exact(mat: list, b: list):
    """Gaussian elimination in rationals; None when the matrix is singular."""
    n = len(b)
    a = [row[:] + [b[i]] for i, row in enumerate(mat)]
    for col in range(n):
        piv = next((r for r in range(col, n) if a[r][col] != 0), None)
        if piv is None:
            return None
        a[col], a[piv] = a[piv], a[col]
        p = a[col][col]
        prow = a[col]
        nz = [k for k in range(col, n + 1) if prow[k] != 0]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col] / p
                row = a[r]
                for k in nz:
                    row[k] -= f * prow[k]
    return [a[i][n] / a[i][i] for i in range(n)]
