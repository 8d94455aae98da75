"""``asrpt run``: the main job on the bundled default.

A window of the Philly trace (20,000 jobs from rank 40,000, shipped in ``asrpt/data``) on a
64-server x 8-GPU cluster, each job given a DNN model and configuration by the seeded rule of
:mod:`asrpt.traces.assign` (``--no-dnn`` keeps the trace's durations as abstract jobs), A-SRPT
against the main baselines, with a progress bar, the comparison
table, per-job CSVs, ``summary.json`` and a JCT plot (``jct_ccdf.png``, a complementary CDF: the
fraction of jobs with a JCT above each x, log-log, so the tail that decides the mean is visible)
in ``--out``.

Predictions are honest: every policy that uses one (A-SRPT, SRSF, SJF, QSSF, Themis) gets the
same predictor, the registry's default (``hierarchy``, learned online from the jobs completed so
far, docs/prediction.md; ``--predictor`` changes it), and the table says which predictor each row
used. Clairvoyant references (A-SRPT and
SRSF with the true sizes) appear only with ``--oracle``, labelled ``[oracle]``.
"""

from __future__ import annotations

import os
import sys
from importlib import resources

from ..instance import Cluster
from ..traces.philly import read_philly
from .simulate import add_run_options, comparison_table, policies_from, run_policies, wall_line, write_outputs
from ._common import emit_json

DEFAULT_POLICIES = "a-srpt,srsf,sjf,qssf,tiresias,gavel,themis,fifo"
# With --oracle: the clairvoyant references, labelled as such.
ORACLE_POLICIES = "a-srpt,srsf"


def register(sub) -> None:
    p = sub.add_parser(
        "run",
        help="the main job: A-SRPT against the baselines on the bundled Philly window",
        description="Simulate A-SRPT and the main baselines on the bundled default (20,000 Philly jobs "
                    "from rank 40,000 on 64 x 8 GPUs, or --trace), print the comparison table and "
                    "write per-job CSVs, summary.json and a complementary JCT CDF plot (jct_ccdf.png: the "
                    "fraction of jobs with a JCT above each x) to --out (default out/run).",
    )
    p.add_argument("--trace", metavar="FILE", help="another Philly-format trace instead of the bundled window")
    p.add_argument("--oracle", action="store_true",
                   help=f"also run the clairvoyant references ({ORACLE_POLICIES} with the true sizes)")
    add_run_options(p, dnn_default=True)
    p.set_defaults(func=run)


def guard_lines(results) -> list[str]:
    """One line per run of a guarded order (A-SRPT's default): how often its guard did
    something, as the jobs that became overdue (``policy_data``'s ``overdue_at``; the guard puts
    them first, within ``share`` of the GPUs). A property of the schedule, not of how many
    passes the run took.

    >>> from asrpt.sim import simulate
    >>> guard_lines([simulate(two_server_instance, "a-srpt"), simulate(two_server_instance, "fifo")])
    ['guard of a-srpt: 0 of 3 jobs became overdue']
    """
    out = []
    for r in results:
        overdue = (r.policy_data or {}).get("overdue_at")
        if overdue is not None:
            out.append(f"guard of {r.label}: {len(overdue)} of {len(r.records)} jobs became overdue")
    return out


def run(args) -> int:
    path = args.trace or str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
    cluster = Cluster.from_spec(args.cluster or "64x8", args.gpu_type)
    instance, report = read_philly(path, start=args.start, limit=args.limit, cluster=cluster, dnn=args.dnn,
                                   seed=args.seed)
    if not args.json:
        print(report.summary(), file=sys.stderr)
        print(f"cluster: {cluster.n_servers} servers, {cluster.total_gpus} GPUs; {instance.n_jobs} jobs",
              file=sys.stderr)
    from ..predict.base import DEFAULT_PREDICTOR

    # Every policy that takes a predictor gets the same real one, learned online from completed jobs.
    policies = policies_from(args.policies or DEFAULT_POLICIES, args.predictor or DEFAULT_PREDICTOR)
    if args.oracle:
        policies += policies_from(ORACLE_POLICIES, "oracle")
    show = args.progress if args.progress is not None else (sys.stderr.isatty() and not args.json)
    results = run_policies(instance, policies, args, progress=show)
    out = args.out or os.path.join("out", "run")
    write_outputs(out, instance, results, report)
    from ..plots import jct_cdf, save_png

    png = save_png(jct_cdf(results, complementary=True,
                           title=f"{instance.n_jobs} Philly jobs on {cluster.total_gpus} GPUs"),
                   os.path.join(out, "jct_ccdf.png"))
    if args.json:
        emit_json({"jobs": instance.n_jobs, "gpus": cluster.total_gpus, "out": out, "plot": png,
                   "results": [r.to_dict() for r in results]})
    else:
        print(comparison_table(instance, results))
        print(wall_line(results), file=sys.stderr)
        guards = guard_lines(results)
        if guards:
            print("\n" + "\n".join(guards))
        print(f"\nper-job CSVs, summary.json and {png} written to {out}/", file=sys.stderr)
    return 0
