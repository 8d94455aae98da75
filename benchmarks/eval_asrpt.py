"""Evaluation of A-SRPT against the registered baselines on four workloads: one table, one run.

Workloads (``--workloads``, comma-separated):

- ``window``: the bundled default of ``asrpt run`` (20,000 Philly jobs from rank 40,000, DNN
  models by the seeded assignment rule, 64 x 8 GPUs);
- ``full``: the whole Philly trace (82,247 jobs, read through ``ASRPT_SHARED``), 64 x 8 GPUs,
  DNN models (``--full-abstract`` keeps the trace's durations as abstract jobs: much faster);
- ``recurring``: the recurring-job generator (Philly profile, ``--recurring-jobs`` jobs at load
  0.9 on 8 x 8 A100), DNN jobs with users, groups and models to learn from;
- ``pai``: the Alibaba 2023 GPU pods (openb) by the existing importer, on its node list (6,212
  GPUs for about 5.4 busy on average: no policy ever makes a job wait, so every policy ties);
- ``pai8``: the same pods on one 8-GPU server (the overloaded variant: bursts of pods queue);
- ``philly:RANK``: a window of 6,000 Philly jobs from rank RANK (of the whole trace, read through
  ``ASRPT_SHARED``) on 24 x 8 GPUs, DNN models; ``--philly-windows`` lists the ranks of the
  ``windows`` workload, ``--held-out`` marks the ranks not tuned on (the table says which).

Every policy that takes a predictor gets the same one (``--predictor``, default the registry's
``DEFAULT_PREDICTOR``, ``hierarchy``, learned online from completed jobs), as in ``asrpt run``. For each run the table has
mean, median and p99 JCT, the mean JCT relative to SRSF on the same workload, the mean queueing
delay of jobs under one GPU-hour, preemptions and the process CPU seconds of the run. With
``--plot FILE`` (.png, .pdf or .svg) it draws the mean waiting time by job size per policy
(:func:`asrpt.plots.wait_by_size`), one figure per workload (``FILE-<workload>`` when there are
several); ``--classes POLICY`` prints each job-size class's part of the mean JCT (< 1, 1-10,
10-100 and >= 100 GPU-hours) and its difference to POLICY's (where a policy wins or loses);
``--json FILE`` keeps every figure.

Run (the window alone takes a few minutes)::

    .venv/bin/python benchmarks/eval_asrpt.py --workloads window,recurring,pai --json out/eval_asrpt.json
    .venv/bin/python benchmarks/eval_asrpt.py --workloads full --full-abstract
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from importlib import resources

POLICIES = ("a-srpt", "a-srpt-virtual", "a-srpt-fluid", "a-srpt-srsf-order", "srsf", "sjf", "qssf",
            "tiresias", "gavel", "themis", "fifo")
EDGES = (1, 10, 100)     # job-size classes in GPU-hours (asrpt.engine.metrics.size_classes)


def load(name: str, args):
    from asrpt.instance import Cluster
    from asrpt.traces.base import shared_path
    from asrpt.traces.philly import read_philly

    if name == "window":
        path = str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
        return read_philly(path, cluster=Cluster.from_spec("64x8"), dnn=True, seed=0)[0]
    if name == "full":
        path = shared_path("traces", "philly-pollux-processed", "philly.csv")
        return read_philly(path, cluster=Cluster.from_spec("64x8"), dnn=not args.full_abstract, seed=0)[0]
    if name == "recurring":
        from asrpt.workloads import recurring_workload

        return recurring_workload(args.recurring_jobs, load=0.9, cluster="8x8", seed=0)
    if name in ("pai", "pai8"):
        from asrpt.traces.alibaba import read_alibaba_pods

        return read_alibaba_pods(shared_path("traces", "alibaba-pai-gpu-v2023-openb", "openb_pod_list_default.csv"),
                                 cluster=Cluster.from_spec("1x8") if name == "pai8" else None)[0]
    if name.startswith("philly:"):
        path = shared_path("traces", "philly-pollux-processed", "philly.csv")
        return read_philly(path, start=int(name.split(":", 1)[1]), limit=6000, cluster=Cluster.from_spec("24x8"),
                           dnn=True, seed=0)[0]
    raise SystemExit(f"eval_asrpt: unknown workload {name!r} (window, full, recurring, pai, pai8, philly:RANK, "
                     "windows)")


def one_run(instance, policy: str, predictor: str, keep: list | None = None) -> dict:
    from asrpt.sim import simulate

    from asrpt.policies import predictor_of, with_predictor

    # (the predictor where the policy takes one and its spec sets none: as --predictor does)
    made = with_predictor(policy, predictor)[0]
    cpu = time.process_time()
    res = simulate(instance, made, label=policy)
    cpu = time.process_time() - cpu
    if keep is not None:
        keep.append(res)
    jct = sorted(r.jct for r in res.records)
    from asrpt.engine.metrics import size_classes

    labels, classes = size_classes(res.records, EDGES)
    waits = [[] for _ in labels]
    jcts = [[] for _ in labels]
    for r, k in zip(res.records, classes):
        waits[k].append(float(r.completion - r.arrival - r.processing_time))
        jcts[k].append(float(r.jct))
    return {"policy": policy, "predictor": predictor_of(made.get_params()),
            "mean_jct": statistics.fmean(jct), "median_jct": statistics.median(jct),
            "p99_jct": jct[min(len(jct) - 1, math.ceil(0.99 * len(jct)) - 1)],
            "preemptions": res.summary["preemptions"], "cpu_s": cpu,
            "wait_by_size": [statistics.fmean(w) if w else None for w in waits],
            "jobs_by_size": [len(c) for c in jcts],
            # each class's part of the mean JCT (seconds per job of the workload; they sum to the mean)
            "mean_jct_part_by_size": [math.fsum(c) / len(res.records) for c in jcts],
            "small_wait": statistics.fmean(waits[0]) if waits[0] else None}


def main(argv=None) -> int:
    from asrpt.registry import split_specs

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default="window,recurring,pai")
    ap.add_argument("--philly-windows", default="0,10000,20000,30000,40000,50000,60000,76000",
                    help="the ranks of the 6,000-job windows of the 'windows' workload")
    ap.add_argument("--held-out", default="10000,50000,60000",
                    help="the window ranks not tuned on (marked in the table)")
    ap.add_argument("--policies", default=",".join(POLICIES))
    from asrpt.predict.base import DEFAULT_PREDICTOR

    ap.add_argument("--predictor", default=DEFAULT_PREDICTOR)
    ap.add_argument("--recurring-jobs", type=int, default=4000)
    ap.add_argument("--full-abstract", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--plot", metavar="FILE", help="waiting time by job size per policy (.png, .pdf, .svg)")
    ap.add_argument("--classes", metavar="POLICY",
                    help="also print each job-size class's part of the mean JCT, and its difference to POLICY's")
    args = ap.parse_args(argv)
    rows = []
    names = []
    for name in args.workloads.split(","):
        names += [f"philly:{r}" for r in args.philly_windows.split(",")] if name == "windows" else [name]
    held_out = {f"philly:{r}" for r in args.held_out.split(",")}
    for name in names:
        instance = load(name, args)
        print(f"# {name}: {instance.n_jobs} jobs on {instance.cluster.total_gpus} GPUs", file=sys.stderr, flush=True)
        runs = []
        kept = [] if args.plot else None
        for policy in split_specs(args.policies):
            run = {"workload": name + (" (held out)" if name in held_out else ""),
                   **one_run(instance, policy, args.predictor, kept)}
            runs.append(run)
            print(f"  {policy:<18} mean {run['mean_jct']:>12.1f}  p99 {run['p99_jct']:>12.1f}  "
                  f"cpu {run['cpu_s']:.1f}s", file=sys.stderr, flush=True)
        ref = next((r for r in runs if r["policy"] == "srsf"), None)
        best = min(r["mean_jct"] for r in runs)
        for r in runs:
            r["vs_srsf"] = r["mean_jct"] / ref["mean_jct"] if ref else None
            r["vs_best"] = r["mean_jct"] / best
        rows += runs
        if args.plot:           # the figure of mean waiting time by job size, one per workload
            from asrpt.plots import save_figure, wait_by_size

            root, ext = os.path.splitext(args.plot)
            path = args.plot if len(names) == 1 else f"{root}-{name.replace(':', '_')}{ext}"
            save_figure(wait_by_size(kept, title=f"{name}: {instance.n_jobs} jobs on "
                                                 f"{instance.cluster.total_gpus} GPUs"), path)
            print(f"  wrote {path}", file=sys.stderr, flush=True)
    cols = ("workload", "policy", "predictor", "mean_jct", "median_jct", "p99_jct", "vs_srsf", "vs_best",
            "small_wait", "preemptions", "cpu_s")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        cells = [f"{r[c]:.3f}" if c in ("vs_srsf", "vs_best") and r[c] is not None else
                 f"{r[c]:.1f}" if isinstance(r[c], float) else str(r[c]) for c in cols]
        print("| " + " | ".join(cells) + " |")
    if args.classes:
        print()
        print("Each job-size class's part of the mean JCT (s per job of the workload; the parts sum to the "
              "mean), and its difference to " + args.classes + ":")
        from asrpt.engine.metrics import size_classes

        labels = size_classes((), EDGES)[0]
        print("| workload | policy | " + " | ".join(f"{b} GPU-h" for b in labels) + " | "
              + " | ".join(f"{b} vs {args.classes}" for b in labels) + " |")
        print("|" + "---|" * (2 + 2 * len(labels)))
        for r in rows:
            ref = next((q for q in rows if q["workload"] == r["workload"] and q["policy"] == args.classes), None)
            parts = [f"{x:,.0f}" for x in r["mean_jct_part_by_size"]]
            diffs = [f"{x - y:+,.0f}" for x, y in zip(r["mean_jct_part_by_size"], ref["mean_jct_part_by_size"])] \
                if ref else [""] * len(labels)
            print(f"| {r['workload']} | {r['policy']} | " + " | ".join(parts) + " | " + " | ".join(diffs) + " |")
        sizes = {r["workload"]: r["jobs_by_size"] for r in rows}
        print("jobs per class: " + "; ".join(f"{w}: {', '.join(map(str, n))}" for w, n in sizes.items()))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
