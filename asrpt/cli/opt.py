"""``asrpt opt FILE``: bracket the offline optimum with lower bounds and a slotted ILP.

Solves the preemptive slotted ILP (``--no-preemptive``: the start-time ILP) with HiGHS or CBC and
prints what is proven (``OPT = x`` when the two sides meet, else ``lower <= OPT <= upper``), the
ILP's own status (its "optimal" is optimal *on the slot grid*, not a proof about OPT) and the best
schedule found (see :func:`asrpt.offline.ilp.offline_opt` for why each side of the bracket is
valid). The solver stops after ``--time-limit`` seconds (default 60). Exit status 0 with a
bracket; 1 when the ILP is infeasible within ``--horizon`` (the bracket is still printed, its upper
side from a greedy schedule) or when the two sides cross ("not proven"); 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction

from ..offline.opt import offline_opt
from ..solve import SOLVERS
from ._common import (add_instance, add_json, emit_json, format_table, load_from_args, positive_float,
                      positive_int, positive_rational, relative_gap)


def register(sub) -> None:
    p = sub.add_parser(
        "opt",
        help="bracket the offline optimum: lower bounds and a slotted ILP",
        description="Bracket the optimal total weighted completion time of an instance: the lower "
                    "bounds LB1, LB2, LB_MBT (raised to the ILP value where the slot grid is exact) "
                    "and the best schedule found by a time-indexed ILP on slots of length DELTA "
                    "(preemptive by default; --no-preemptive solves the start-time ILP). Data off "
                    "the grid are rounded up, so the ILP's schedule is always feasible.",
    )
    add_instance(p)
    p.add_argument("--slot", type=positive_rational, default=None, metavar="DELTA",
                   help="slot length (e.g. 1, 0.5, 1/3); default: the largest that divides every "
                        "arrival and processing time, coarsened to about --max-slots slots")
    p.add_argument("--solver", choices=SOLVERS, default="highs", help="MILP backend (default highs)")
    p.add_argument("--time-limit", type=positive_float, default=60.0, metavar="S",
                   help="seconds for the solver (default 60); the bracket stays valid when it "
                        "stops early")
    p.add_argument("--gap", type=relative_gap, default=0.0, metavar="G",
                   help="relative MIP gap at which the solver may stop (default 0: proven optimum)")
    p.add_argument("--preemptive", action=argparse.BooleanOptionalAction, default=True,
                   help="bracket the preemptive optimum (default) or the non-preemptive one")
    p.add_argument("--horizon", type=positive_int, default=None, metavar="SLOTS",
                   help="number of slots in the ILP (default: always enough)")
    p.add_argument("--max-slots", type=positive_int, default=200, metavar="N",
                   help="horizon target for the default slot length (default 200)")
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    inst = load_from_args(args)
    r = offline_opt(inst, preemptive=args.preemptive, slot=args.slot, solver=args.solver,
                    time_limit=args.time_limit, gap=args.gap, horizon=args.horizon,
                    max_slots=args.max_slots)
    if args.json:
        emit_json({"file": args.instance, **r.to_dict()})
    else:
        kind = "preemptive" if r.preemptive else "non-preemptive"
        print(f"offline optimum of {args.instance}: {inst.n_jobs} jobs, {inst.cluster.total_gpus} GPUs, "
              f"{kind}, slot {r.slot}, {r.solve.solver}")
        print(f"proven: {r.verdict}")
        ilp_status = {"optimal": "optimal on the slot grid", "time_limit": "stopped at the time limit",
                      "infeasible": "infeasible within the horizon"}.get(r.status, r.status)
        print(format_table(["lower bound", "upper bound", "gap", "ILP status", "schedule from"],
                           [[r.lower_bound, r.upper_bound, r.gap, ilp_status, r.source]]))
        print()
        rows = []
        for j in inst.jobs:
            pieces = " ".join(f"[{_show(p.start)},{_show(p.end)})" for p in r.schedule.get(j.id, ()))
            rows.append([j.id, j.arrival, j.gpus, r.completion_times.get(j.id), pieces])
        print(format_table(["job", "arrival", "gpus", "C", "runs"], rows))
    if not r.proven:
        print(f"asrpt opt: not proven: the lower bound {r.lower_bound} exceeds the upper bound "
              f"{r.upper_bound} (floating-point rounding in the solver's answer); treat neither as "
              "certain", file=sys.stderr)
        return 1
    if r.status == "infeasible":
        print(f"asrpt opt: the ILP has no solution within {r.ilp.horizon} slots; the upper bound "
              "comes from a greedy schedule", file=sys.stderr)
        return 1
    return 0


def _show(x) -> str:
    if isinstance(x, Fraction):
        return str(x)
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)
