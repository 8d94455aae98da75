"""``asrpt run``: the main job on the bundled default.

A window of the Philly trace (20,000 jobs from rank 40,000, shipped in ``asrpt/data``) on a
64-server x 8-GPU cluster, each job given a DNN model and configuration by the seeded rule of
:mod:`asrpt.traces.assign` (``--no-dnn`` keeps the trace's durations as abstract jobs), A-SRPT
against the main baselines, with a progress bar, the comparison
table, per-job CSVs, ``summary.json`` and a JCT CDF plot (``jct_cdf.png``) in ``--out``.
"""

from __future__ import annotations

import os
import sys
from importlib import resources

from ..instance import Cluster
from ..traces.philly import read_philly
from .simulate import add_run_options, comparison_rows, policies_from, run_policies, write_outputs, SUMMARY_COLUMNS
from ._common import emit_json, format_table

DEFAULT_POLICIES = "a-srpt,srsf,sjf,qssf,tiresias,gavel,themis,fifo"


def register(sub) -> None:
    p = sub.add_parser(
        "run",
        help="the main job: A-SRPT against the baselines on the bundled Philly window",
        description="Simulate A-SRPT and the main baselines on the bundled default (20,000 Philly jobs "
                    "from rank 40,000 on 64 x 8 GPUs, or --trace), print the comparison table and "
                    "write per-job CSVs, summary.json and a JCT CDF plot to --out (default out/run).",
    )
    p.add_argument("--trace", metavar="FILE", help="another Philly-format trace instead of the bundled window")
    add_run_options(p, dnn_default=True)
    p.set_defaults(func=run)


def run(args) -> int:
    path = args.trace or str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
    cluster = Cluster.from_spec(args.cluster or "64x8", args.gpu_type)
    instance, report = read_philly(path, start=args.start, limit=args.limit, cluster=cluster, dnn=args.dnn,
                                   seed=args.seed)
    if not args.json:
        print(report.summary(), file=sys.stderr)
        print(f"cluster: {cluster.n_servers} servers, {cluster.total_gpus} GPUs; {instance.n_jobs} jobs",
              file=sys.stderr)
    policies = policies_from(args.policies or DEFAULT_POLICIES, args.predictor)
    show = args.progress if args.progress is not None else not args.json
    results = run_policies(instance, policies, args, progress=show)
    out = args.out or os.path.join("out", "run")
    write_outputs(out, instance, results, report)
    from ..plots import jct_cdf, save_png

    png = save_png(jct_cdf(results, title=f"{instance.n_jobs} Philly jobs on {cluster.total_gpus} GPUs"),
                   os.path.join(out, "jct_cdf.png"))
    if args.json:
        emit_json({"jobs": instance.n_jobs, "gpus": cluster.total_gpus, "out": out, "plot": png,
                   "results": [r.to_dict() for r in results]})
    else:
        print(format_table(("policy",) + SUMMARY_COLUMNS + ("wall_s",), comparison_rows(results)))
        print(f"\nper-job CSVs, summary.json and {png} written to {out}/", file=sys.stderr)
    return 0
