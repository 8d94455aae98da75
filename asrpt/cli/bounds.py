"""``asrpt bounds FILE``: the lower bounds LB1, LB2, LB_MBT on the offline optimum and their maximum.

See :mod:`asrpt.offline.bounds` for what each bound is and why it holds (weighted instances: LB2
is the smallest weight times the virtual SRPT total).
"""

from __future__ import annotations

from ..offline.bounds import lower_bounds
from ._common import add_instance, add_json, emit_json, format_table, load_from_args

_MEANING = {
    "lb1": "sum w (arrival + P): release/height bound",
    "lb2": "w_min * virtual SRPT total (sizes g P / M)",
    "lb_mbt": "sum w (mean busy time in the LP schedule + P/2)",
    "best": "max of the three: OPT >= best",
}


def register(sub) -> None:
    p = sub.add_parser(
        "bounds",
        help="lower bounds LB1, LB2, LB_MBT on the offline optimum",
        description="Compute three lower bounds on the optimal total weighted completion time of an "
                    "instance (any schedule, preemptive or not): LB1 (release + processing), LB2 "
                    "(squashed area: SRPT on one machine with sizes g P / M) and LB_MBT (mean busy "
                    "time), and their maximum. Exit status 2 on bad input.",
    )
    add_instance(p)
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    inst = load_from_args(args)
    b = lower_bounds(inst).to_dict()
    if args.json:
        emit_json({"file": args.instance, **b})
        return 0
    print(f"lower bounds on OPT for {args.instance} ({inst.n_jobs} jobs, {inst.cluster.total_gpus} GPUs)")
    print(format_table(["bound", "value", "what"], [[k, v, _MEANING[k]] for k, v in b.items()]))
    return 0
