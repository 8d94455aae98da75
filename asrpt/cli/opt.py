"""``asrpt opt FILE``: the offline optimum, exact where proven and bracketed elsewhere.

Runs :func:`asrpt.offline.opt.offline_opt`: the lower bounds (LB1, LB2, LB_MBT, the configuration
LP), a slotted ILP for a share of the time, and the exact event-sequence search for the rest
(preemptive; ``--no-preemptive`` solves the start-time ILP). Prints ``OPT = X (proven)`` only when
the two sides meet, otherwise ``L <= OPT <= U (gap g)``, with which method gave each side, and the
best schedule found. ``--time-limit`` (default 60 s) bounds the whole run; the bracket stays valid
when it runs out. Exit status 0 with an answer (closed or open); 2 on bad input.
"""

from __future__ import annotations

import argparse
from fractions import Fraction

from ..offline.opt import offline_opt
from ..solve import SOLVERS
from ._common import (add_instance, add_json, emit_json, format_table, load_from_args, positive_float,
                      positive_int, positive_rational, relative_gap)


def register(sub) -> None:
    p = sub.add_parser(
        "opt",
        help="the offline optimum: exact where proven, a bracket elsewhere",
        description="The optimal total weighted completion time of an instance, the cluster's GPUs "
                    "taken as one pool (migration allowed): proven exactly by a branch and bound "
                    "over event sequences where it finishes in time, otherwise bracketed between "
                    "the best lower bound (LB1, LB2, LB_MBT, a configuration LP) and the best "
                    "schedule found (that search, or a time-indexed ILP on slots of length DELTA). "
                    "--no-preemptive solves the start-time ILP instead.",
    )
    add_instance(p)
    p.add_argument("--slot", type=positive_rational, default=None, metavar="DELTA",
                   help="slot length (e.g. 1, 0.5, 1/3); default: the largest that divides every "
                        "arrival and processing time, coarsened to about --max-slots slots")
    p.add_argument("--solver", choices=SOLVERS, default="highs", help="MILP backend (default highs)")
    p.add_argument("--time-limit", type=positive_float, default=60.0, metavar="S",
                   help="seconds in all (default 60; a third for the ILP); the bracket stays valid "
                        "when time runs out")
    p.add_argument("--gap", type=relative_gap, default=0.0, metavar="G",
                   help="relative MIP gap at which the solver may stop (default 0: proven optimum)")
    p.add_argument("--preemptive", action=argparse.BooleanOptionalAction, default=True,
                   help="bracket the preemptive optimum (default) or the non-preemptive one")
    p.add_argument("--horizon", type=positive_int, default=None, metavar="SLOTS",
                   help="number of slots in the ILP (default: always enough)")
    p.add_argument("--max-slots", type=positive_int, default=200, metavar="N",
                   help="horizon target for the default slot length (default 200)")
    p.add_argument("--ilp", choices=("auto", "always", "never"), default="auto",
                   help="run the slotted ILP: auto (default) unless a first short exact search "
                        "already proved OPT; always; never")
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    inst = load_from_args(args)
    r = offline_opt(inst, preemptive=args.preemptive, slot=args.slot, solver=args.solver,
                    time_limit=args.time_limit, gap=args.gap, horizon=args.horizon,
                    max_slots=args.max_slots, ilp=args.ilp)
    if args.json:
        emit_json({"file": args.instance, **r.to_dict()})
        return 0
    kind = "preemptive" if r.preemptive else "non-preemptive"
    print(f"offline optimum of {args.instance}: {inst.n_jobs} jobs, {inst.cluster.total_gpus} GPUs "
          f"as one pool, {kind}")
    how = {"exact": "exact arithmetic", "mip": "the ILP on an exact grid (HiGHS, floating point)"}
    print(r.verdict + (f" by {how[r.proof]}" if r.closed else ""))
    ilp = "skipped" if r.ilp is None else {
        "optimal": "optimal on its grid", "time_limit": "stopped at its time limit",
        "infeasible": "infeasible within the horizon"}.get(r.ilp.status, r.ilp.status)
    search = "-" if r.exact is None else f"{r.exact.stopped} after {r.exact.nodes} LPs"
    print(format_table(["lower bound", "from", "upper bound", "from", "gap", "ILP (slot " + _show(r.slot) + ")",
                        "event-sequence search"],
                       [[r.lower_bound, r.lower_source, r.upper_bound, r.upper_source, r.gap, ilp, search]]))
    for note in r.notes:
        print(f"note: {note}")
    print()
    rows = []
    for j in inst.jobs:
        pieces = " ".join(f"[{_show(p.start)},{_show(p.end)})" for p in r.schedule.get(j.id, ()))
        rows.append([j.id, j.arrival, j.gpus, r.completion_times.get(j.id), pieces])
    print(format_table(["job", "arrival", "gpus", "C", "runs"], rows))
    return 0


def _show(x) -> str:
    if isinstance(x, Fraction):
        return str(x)
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)
