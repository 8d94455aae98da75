"""``asrpt srpt FILE``: the virtual single-machine SRPT schedule of an instance (proofs/model.md,
Definition 3).

Each job becomes a single-machine job released at its arrival with size ``g_j P_j / M``; the
command prints the virtual completion times ``C~_j``, their sum (with true sizes this is the lower
bound LB2 for unit weights) and the virtual finishing order. ``--predicted`` uses the jobs'
predicted processing times (what A-SRPT sees online); ``--exact`` computes in fractions.

``--machine`` picks which virtual machine: ``fluid`` (default), the single machine above, the
reference model's and ``a-srpt-fluid``'s; ``envelope``, the default A-SRPT's guard,
``C~_j = max(C^f_j, a_j + P_j)`` (:mod:`asrpt.single.envelope`); ``gang``, the gang-capped SRPT
of ``a-srpt-gang`` (:mod:`asrpt.single.gang`). Only the fluid machine's total is LB2.
"""

from __future__ import annotations

from ..single.virtual import virtual_schedule, virtual_sizes
from ._common import add_instance, add_json, emit_json, format_table, load_from_args


def register(sub) -> None:
    p = sub.add_parser(
        "srpt",
        help="the virtual single-machine SRPT schedule of an instance",
        description="Map every job to one machine (release a_j, size g_j * P_j / M, M the cluster's "
                    "GPU count) and run exact preemptive SRPT, ties broken by job id. Prints the "
                    "virtual completion times, their total and the finishing order. Exit status 2 "
                    "on bad input.",
    )
    add_instance(p)
    p.add_argument("--predicted", action="store_true",
                   help="use each job's predicted processing time where it has one")
    p.add_argument("--machine", choices=("fluid", "envelope", "gang"), default="fluid",
                   help="fluid (default: the single machine, the reference model's; its total is LB2), "
                        "envelope (the default A-SRPT's guard: max(C^f, a + P)) or gang (gang-capped SRPT)")
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    inst = load_from_args(args)
    if args.machine != "fluid":
        return _other_machine(args, inst)
    sizes = virtual_sizes(inst, predicted=args.predicted)
    s = virtual_schedule(inst, predicted=args.predicted)
    ids = [j.id for j in inst.jobs]
    if args.json:
        emit_json({
            "file": args.instance,
            "machine": "fluid",
            "predicted": args.predicted,
            "gpus": inst.cluster.total_gpus,
            "total_completion_time": s.total_completion_time,
            "total_flow_time": s.total_flow_time,
            "completion_times": s.by_id(),
            "virtual_sizes": dict(zip(ids, sizes)),
            "finishing_order": [ids[j] for j in s.finishing_order],
            "pieces": [{"job": ids[p.job], "start": p.start, "end": p.end} for p in s.pieces],
        })
        return 0
    print(f"virtual SRPT of {args.instance}: {inst.n_jobs} jobs on one machine "
          f"(sizes g*P/{inst.cluster.total_gpus}{', predicted' if args.predicted else ''}; the fluid "
          "machine of the reference model; the default A-SRPT guards with --machine envelope)")
    rows = [[ids[j], inst.jobs[j].arrival, inst.jobs[j].gpus, sizes[j], s.completion_times[j]]
            for j in s.finishing_order]
    print(format_table(["job", "arrival", "gpus", "virtual size", "C~"], rows))
    total = s.total_completion_time
    print(f"total completion time: {total if isinstance(total, int) else f'{float(total):.6g}'}")
    return 0


def _other_machine(args, inst) -> int:
    """``--machine envelope`` or ``gang``: the virtual completions of that machine."""
    from ..sizes import predicted_processing_times, processing_times
    from ..single.envelope import envelope_schedule
    from ..single.gang import gang_schedule

    ids = [j.id for j in inst.jobs]
    times = predicted_processing_times(inst) if args.predicted else processing_times(inst)
    machine = envelope_schedule if args.machine == "envelope" else gang_schedule
    done = machine([j.arrival for j in inst.jobs], times, [j.gpus for j in inst.jobs], inst.cluster.total_gpus,
                   ids=ids)
    order = sorted(range(len(ids)), key=lambda k: (done[k], k))
    total = sum(done, 0)
    if args.json:
        emit_json({"file": args.instance, "machine": args.machine, "predicted": args.predicted,
                   "gpus": inst.cluster.total_gpus, "total_completion_time": total,
                   "total_flow_time": total - sum((j.arrival for j in inst.jobs), 0),
                   "completion_times": dict(zip(ids, done)), "processing_times": dict(zip(ids, times)),
                   "finishing_order": [ids[k] for k in order]})
        return 0
    what = ("the envelope max(C^f, a + P) of the fluid machine, the default A-SRPT's guard"
            if args.machine == "envelope" else "gang-capped SRPT on the GPUs, a-srpt-gang's")
    print(f"virtual {args.machine} machine of {args.instance}: {inst.n_jobs} jobs, {what}"
          f"{' (predicted times)' if args.predicted else ''}")
    rows = [[ids[k], inst.jobs[k].arrival, inst.jobs[k].gpus, times[k], done[k]] for k in order]
    print(format_table(["job", "arrival", "gpus", "P", "C~"], rows))
    print(f"total completion time: {total if isinstance(total, int) else f'{float(total):.6g}'}")
    return 0
