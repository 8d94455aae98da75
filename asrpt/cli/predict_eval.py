"""``asrpt predict-eval``: how accurate is a predictor on a workload, and what distortion does it
give Theorem 1?

WORKLOAD is an instance file, a trace (any format ``asrpt simulate`` reads) or a generator spec
such as ``recurring:n_jobs=2000:load=0.9`` (:func:`asrpt.workloads.make_workload`; ``--seed``
seeds it unless the spec names a seed). By default the predictor runs inside a policy (A-SRPT,
adaptive re-prediction) in the simulator and its predictions at submission are scored against the
true work, with the last predictions (after adaptive updates) beside them. For a policy that does
not record its predictions, the predictor is replayed with that run's completion times, which
gives the same predictions at submission. ``--replay`` skips the scheduler: jobs are predicted in
arrival order, each after the jobs that completed by then (completion = arrival + best time).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from ..errors import InvalidParameterError
from ..instance import Cluster
from ..policies.base import make_policy
from ..predict.base import make_predictor
from ..predict.metrics import replay_predictions, run_predictions
from ..sim import simulate
from ..traces.detect import FORMATS, read_trace
from ._common import add_json, add_plot, emit_json, format_table, positive_int, write_plot

__all__ = ["register", "load_workload"]


def register(sub) -> None:
    p = sub.add_parser(
        "predict-eval",
        help="accuracy (MAE, MAPE, R^2 log) and distortion (mu) of a predictor on a workload",
        description=__doc__.split("\n\n", 1)[1].strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--predictor", default="forest", metavar="SPEC",
                   help="predictor spec (default forest), e.g. group_mean, 'forest:n_estimators=50'")
    p.add_argument("--policy", default="a-srpt:adaptive=\"repredict\"", metavar="SPEC",
                   help="policy that uses the predictor (default a-srpt with adaptive re-prediction)")
    p.add_argument("--replay", action="store_true", help="score the predictor without a scheduler")
    p.add_argument("--seed", type=int, default=0, help="seed of the run and of a generated workload")
    add_workload_arguments(p)
    add_json(p)
    add_plot(p, "predicted against true work (log-log)")
    p.set_defaults(func=run)


def add_workload_arguments(p) -> None:
    """The WORKLOAD argument and the options :func:`load_workload` reads besides ``--seed``
    (shared with ``asrpt plot accuracy``)."""
    p.add_argument("workload", metavar="WORKLOAD",
                   help="instance (.json), trace (.csv) or generator spec (recurring:key=value:...)")
    p.add_argument("--cluster", metavar="SPEC", help="cluster such as 8x8 (traces and instance files)")
    p.add_argument("--gpu-type", metavar="TYPE", help="GPU type of the --cluster servers")
    p.add_argument("--format", choices=("auto",) + FORMATS, default="auto", help="input file format")
    p.add_argument("--start", type=int, default=0, metavar="N", help="trace window: first job")
    p.add_argument("--limit", type=positive_int, metavar="N", help="trace window: number of jobs")
    p.add_argument("--dnn", action="store_true", help="give trace jobs DNN models (asrpt.traces.assign)")


def load_workload(args) -> tuple:
    """(instance, description) for a WORKLOAD argument (file or generator spec)."""
    spec = args.workload
    if os.path.exists(spec):
        cluster = Cluster.from_spec(args.cluster, args.gpu_type) if args.cluster else None
        instance, report = read_trace(spec, format=args.format, cluster=cluster, start=args.start,
                                      limit=args.limit, dnn=args.dnn, seed=max(args.seed, 0))
        return instance, {"source": spec, "trace": report.to_dict() if report else None}
    from ..policies.base import parse_policy_spec
    from ..workloads import WORKLOADS, make_workload

    name, params = parse_policy_spec(spec)
    if name not in WORKLOADS:
        raise InvalidParameterError(
            f"{spec!r}: no such file, and not a generator spec (families: {', '.join(sorted(WORKLOADS))})")
    if "seed" not in params:
        spec = f"{spec}:seed={args.seed}"
    if args.cluster and "cluster" not in params:
        spec = f'{spec}:cluster="{args.cluster}"'
    instance = make_workload(spec)
    return instance, {"source": spec, "family": name, "params": dict(instance.metadata.get("params", {}))}


def _scatter_figure(log):
    from ..plots import prediction_scatter

    return prediction_scatter(log)


def run(args) -> int:
    instance, described = load_workload(args)
    predictor = make_predictor(args.predictor)  # validates the spec early
    started = time.perf_counter()
    policy_name = summary = final = None
    updates = None
    if args.replay:
        log = replay_predictions(predictor, instance, seed=args.seed)
    else:
        policy = make_policy(args.policy)
        if "predictor" not in policy.get_params():
            raise InvalidParameterError(f"policy {args.policy!r} takes no predictor")
        policy = make_policy(args.policy, predictor=args.predictor)
        policy_name = f"{args.policy}[{args.predictor}]"
        result = simulate(instance, policy, seed=args.seed)
        summary = {k: result.summary.get(k) for k in ("mean_jct", "median_jct", "p99_jct", "makespan",
                                                       "gpu_utilization", "preemptions")}
        if result.policy_data.get("initial_predictions"):
            log = run_predictions(result)
            final = run_predictions(result, which="final").accuracy()
            updates = result.policy_data.get("adaptive_updates")
        else:
            log = replay_predictions(predictor, instance, seed=args.seed,
                                     completions=result.completion_times)
    initial = log.accuracy()
    wall = time.perf_counter() - started
    write_plot(args.plot, lambda: _scatter_figure(log))
    payload = {"workload": {**described, "jobs": instance.n_jobs, "gpus": instance.cluster.total_gpus},
               "predictor": args.predictor, "policy": policy_name,
               "mode": "replay" if args.replay else "run",
               "initial": initial.to_dict(), "final": final.to_dict() if final else None,
               "adaptive_updates": updates, "summary": summary, "wall_s": wall}
    if args.json:
        emit_json(payload)
        return 0
    rows = []
    for label, acc in (("at submission", initial), ("last (adaptive)", final)):
        if acc is None:
            continue
        d = acc.distortion
        rows.append([label, acc.n, acc.mae, acc.mape, acc.r2_log, acc.median_abs_log, d.mu_over,
                     d.mu_under, d.mu, d.ratio_percentiles[50], d.share_within_2x])
    print(f"{instance.n_jobs} jobs on {instance.cluster.total_gpus} GPUs; predictor {args.predictor}"
          + (f"; policy {policy_name}" if policy_name else "; replay"), file=sys.stderr)
    print(format_table(["predictions", "n", "MAE", "MAPE", "R2 log", "med |log|", "mu_over",
                        "mu_under", "mu", "ratio p50", "within 2x"], rows))
    if summary:
        print(format_table(list(summary), [list(summary.values())]))
    return 0
