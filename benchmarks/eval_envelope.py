"""A-SRPT's guarded order guided by the gang machine (default) against the envelope machine.

For each workload of ``benchmarks/eval_asrpt.py`` (the same loaders, seeds and predictor) and
each ``kappa`` (default 16, the policy's default, and 2, where the guard fires more), runs
``a-srpt:virtual=gang`` and ``a-srpt:virtual=envelope`` (guarded order, doubling, the predictor
of ``--predictor``, default the registry's ``hierarchy`` as in ``asrpt run``) and prints one
Markdown table: mean and p99 JCT, the envelope's mean JCT relative to the gang machine's at the
same kappa, the number of jobs that became overdue (``len(policy_data["overdue_at"])``),
preemptions and the run's CPU seconds.

``--quick`` runs the small workloads only (``recurring`` with 1,000 jobs and ``pai``); the
default adds the 20,000-job Philly window. ``pai`` (and ``full``) read ``ASRPT_SHARED``; a
workload whose data is missing is skipped with a note.

Run::

    ASRPT_SHARED=/path/to/shared .venv/bin/python benchmarks/eval_envelope.py --quick
    ASRPT_SHARED=/path/to/shared .venv/bin/python benchmarks/eval_envelope.py --json out/eval_envelope.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

VIRTUALS = ("gang", "envelope")


def one_run(instance, virtual: str, kappa: float, predictor: str) -> dict:
    from asrpt.sim import simulate

    spec = f"a-srpt:virtual={virtual}:kappa={kappa}:predictor={json.dumps(predictor)}"
    cpu = time.process_time()
    res = simulate(instance, spec)
    cpu = time.process_time() - cpu
    jct = sorted(float(r.jct) for r in res.records)
    return {"virtual": virtual, "kappa": kappa, "jobs": len(jct),
            "mean_jct": statistics.fmean(jct),
            "p99_jct": jct[min(len(jct) - 1, math.ceil(0.99 * len(jct)) - 1)],
            "overdue": len(res.policy_data.get("overdue_at") or {}),
            "preemptions": res.summary["preemptions"], "cpu_s": cpu}


def main(argv=None) -> int:
    from asrpt.predict.base import DEFAULT_PREDICTOR
    from eval_asrpt import load

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=None,
                    help="comma-separated (window, full, recurring, pai); default window,recurring,pai "
                         "(--quick: recurring,pai)")
    ap.add_argument("--kappas", default="16,2")
    ap.add_argument("--predictor", default=DEFAULT_PREDICTOR)
    ap.add_argument("--recurring-jobs", type=int, default=None, help="default 4000 (--quick: 1000)")
    ap.add_argument("--full-abstract", action="store_true")
    ap.add_argument("--quick", action="store_true", help="small workloads only (recurring 1000 jobs, pai)")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    if args.workloads is None:
        args.workloads = "recurring,pai" if args.quick else "window,recurring,pai"
    if args.recurring_jobs is None:
        args.recurring_jobs = 1000 if args.quick else 4000
    kappas = [float(k) if "." in k else int(k) for k in args.kappas.split(",")]
    rows = []
    for name in args.workloads.split(","):
        try:
            instance = load(name, args)
        except (OSError, SystemExit) as exc:
            print(f"# {name}: skipped ({exc})", file=sys.stderr, flush=True)
            continue
        print(f"# {name}: {instance.n_jobs} jobs on {instance.cluster.total_gpus} GPUs", file=sys.stderr, flush=True)
        for kappa in kappas:
            runs = {}
            for virtual in VIRTUALS:
                run = runs[virtual] = {"workload": name, **one_run(instance, virtual, kappa, args.predictor)}
                print(f"  kappa {kappa:<4} {virtual:<9} mean {run['mean_jct']:>11.1f}  p99 {run['p99_jct']:>12.1f}  "
                      f"overdue {run['overdue']:>5}  cpu {run['cpu_s']:.1f}s", file=sys.stderr, flush=True)
            for virtual in VIRTUALS:
                runs[virtual]["vs_gang"] = runs[virtual]["mean_jct"] / runs["gang"]["mean_jct"]
                rows.append(runs[virtual])
    cols = ("workload", "jobs", "kappa", "virtual", "mean_jct", "p99_jct", "vs_gang", "overdue", "preemptions", "cpu_s")
    print(f"predictor: {args.predictor}; order guarded, adaptive doubling, share 0.5")
    print()
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        cells = [f"{r[c]:.4f}" if c == "vs_gang" else f"{r[c]:.1f}" if isinstance(r[c], float) else str(r[c])
                 for c in cols]
        print("| " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
