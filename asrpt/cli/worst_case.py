"""``asrpt worst-case --gpus M --max-jobs n --mu MU``: search for instances where A-SRPT is worst.

Runs :func:`asrpt.theory.worstcase.worst_case`: hypothesis ``target()`` then a local search over
small abstract instances of one server of M GPUs, scoring A-SRPT (Theorem 1's setting) against
the preemptive offline optimum of :func:`asrpt.offline.opt.offline_opt` (exact bounds and an
exact branch and bound; the worst instance gets a final 60 s run). Prints ALG, OPT and
``ALG / OPT`` when OPT is proven, else the bracket ``LB <= OPT <= UB`` and
``ALG / UB .. ALG / LB`` (``ALG / UB`` a certified lower bound on ``ALG / OPT``), Theorem 1's bound
for that instance and for the cell, and the worst instance's jobs; ``--out FILE`` also saves it as
an instance file (nothing is written unless asked). Exit status 0, or 1 when the search found a
certified violation of Theorem 1 (``ALG / UB`` above the bound); 2 on bad input.
"""

from __future__ import annotations

import sys

from ..instance import save_instance
from ..theory.worstcase import worst_case
from ._common import add_json, add_plot, distortion, emit_json, format_table, positive_float, positive_int, write_plot


def register(sub) -> None:
    p = sub.add_parser(
        "worst-case",
        help="search for instances that maximise A-SRPT's ratio to the offline optimum",
        description="Search small abstract instances (one server of M GPUs, integer data, "
                    "predictions with distortion <= MU) for the largest ALG / OPT, where ALG is "
                    "A-SRPT under Theorem 1's assumptions and OPT the preemptive offline optimum "
                    "(asrpt opt: exact bounds and branch and bound). Reports ALG / OPT where OPT is "
                    "proven, else the bracket ALG / UB .. ALG / LB (ALG / UB a certified lower bound "
                    "on the ratio), Theorem 1's bound beta (1 + rho mu), and the worst instance (saved with --out). "
                    "The search refutes, it never proves a bound. Exit status 1 when it finds a "
                    "certified violation of Theorem 1.",
    )
    p.add_argument("--gpus", type=positive_int, required=True, metavar="M", help="GPUs of the server")
    p.add_argument("--max-jobs", type=positive_int, required=True, metavar="N",
                   help="most jobs per instance (1..8; proving OPT grows quickly with it)")
    p.add_argument("--mu", type=distortion, default=1, metavar="MU",
                   help="bound on the predictions' distortion mu_over * mu_under (default 1: exact)")
    p.add_argument("--max-job-gpus", type=positive_int, default=None, metavar="G",
                   help="largest gang (default M)")
    p.add_argument("--budget", type=positive_float, default=60.0, metavar="S",
                   help="seconds for the search (default 60)")
    p.add_argument("--max-evals", type=positive_int, default=None, metavar="K",
                   help="stop after K distinct instances (reproducible short searches)")
    p.add_argument("--seed", type=int, default=0, help="seed of the search (default 0)")
    p.add_argument("--max-processing-time", type=positive_int, default=6, metavar="P",
                   help="processing times are 1..P (default 6)")
    p.add_argument("--max-arrival", type=int, default=8, metavar="R", help="arrivals are 0..R (default 8)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="save the worst instance to FILE (default: not saved)")
    add_json(p)
    add_plot(p, "the search progress (best ratio against evaluations)")
    p.set_defaults(func=run)


def _progress_figure(result):
    from ..plots import worstcase_progress

    return worstcase_progress([result])


def run(args) -> int:
    log = None if args.json else (lambda line: print(line, file=sys.stderr))
    r = worst_case(gpus=args.gpus, max_jobs=args.max_jobs, mu=args.mu, max_job_gpus=args.max_job_gpus,
                   budget=args.budget, max_evals=args.max_evals, seed=args.seed,
                   max_processing_time=args.max_processing_time, max_arrival=args.max_arrival, log=log)
    path = args.out
    if path is not None:
        save_instance(r.instance, path)
    write_plot(args.plot, lambda: _progress_figure(r))
    if args.json:
        emit_json({"instance_file": path, **r.to_dict()})
    else:
        c = r.cell
        print(f"worst case found for M = {c.gpus}, g_j <= {c.max_job_gpus}, mu <= {c.mu}, "
              f"<= {c.max_jobs} jobs: {r.evaluations} instances in {r.seconds:.1f} s")
        if r.opt_exact:
            opt_rows = [["ALG (A-SRPT sum C_j)", r.alg], ["OPT (proven)", r.opt_upper],
                        ["ALG / OPT", r.ratio],
                        ["flow time: ALG / OPT", f"{float(r.flow_ratio):.4g}"]]
        else:
            opt_rows = [["ALG (A-SRPT sum C_j)", r.alg], ["OPT upper bound (best schedule)", r.opt_upper],
                        ["OPT lower bound", r.opt_lower],
                        ["ALG / OPT, bracket", f"{float(r.ratio):.4g} .. {float(r.ratio_upper):.4g}"],
                        ["flow time: ALG / OPT, bracket",
                         f"{float(r.flow_ratio):.4g} .. {float(r.flow_ratio_upper):.4g}"]]
        print(format_table(["quantity", "value"], opt_rows + [
            ["OPT known exactly", "yes" if r.opt_exact else "no"],
            ["Theorem 1 bound, this instance", r.bound], ["Theorem 1 bound, cell", r.cell_bound],
            ["certificate", "holds" if r.certificate_holds else "FAILS"]]))
        print()
        print(format_table(["job", "arrival", "gpus", "P", "predicted P"],
                           [[j.id, j.arrival, j.gpus, j.processing_time,
                             j.predicted_processing_time if j.predicted_processing_time is not None else ""]
                            for j in r.instance.jobs]))
        if path is not None:
            print(f"\nsaved {path}")
        if r.violation:
            print("asrpt worst-case: certified violation of Theorem 1 (ALG / UB above the bound)",
                  file=sys.stderr)
    return 1 if r.violation or not r.certificate_holds else 0
