"""``asrpt predict-eval``: how well do predictors order and size the jobs of a workload, and what
distortion do they give Theorem 1?

WORKLOAD is an instance file, a trace (any format ``asrpt simulate`` reads) or a generator spec
such as ``recurring_users:n_jobs=2000:load=0.9`` (:func:`asrpt.workloads.make_workload`; the old
spelling ``recurring`` still works; ``--seed``
seeds it unless the spec names a seed). ``--predictor`` takes one or several specs (comma
separated); each gets one row of the table. By default each predictor runs inside a policy
(``--policy``, default the default A-SRPT) in the simulator and its predictions at submission are scored
against the true work; the 80 % bands (``Predictor.quantiles``) come from a replay on that run's
completion times, which gives the same predictions at submission. For a policy that does not
record its predictions, the predictions come from that replay too. ``--replay`` skips the
scheduler: jobs are predicted in arrival order, each after the jobs that completed by then
(completion = arrival + best time).

The table's columns: Spearman rho with the truth (what an SRPT-style order depends on), median
|log(predicted / true)| (0.69 is a factor 2), share within 2x, R^2 of the logs over all jobs and
over the jobs whose run did not fail (``Job.status``), coverage of the 10 %-90 % band, and the
distortion mu. For predictors with bands, three more tables say where the band holds: its
coverage by decile of the true work (and the shares under and over the band), by decile of the
predicted work (known at submission, so what a band can be calibrated on), and by the level that
predicted each job (the key hierarchy's). ``--json`` adds MAE and MAPE (fraction of the truth)
and everything else.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from ..errors import InvalidParameterError
from ..registry import plain_text
from ..instance import Cluster
from ..policies import make_policy
from ..predict import DEFAULT_PREDICTOR, make_predictor
from ..predict.metrics import PredictionLog, replay_predictions, run_predictions
from ..sim import simulate
from ..traces.detect import FORMATS, read_trace
from ._common import add_json, add_plot, emit_json, format_table, positive_int, split_specs, write_plot

__all__ = ["register", "load_workload"]


def register(sub) -> None:
    p = sub.add_parser(
        "predict-eval",
        help="accuracy (Spearman rho, median |log|, within 2x, R^2 log, band coverage) and distortion of predictors",
        description=plain_text(__doc__.split("\n\n", 1)[1].strip()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--predictor", default=DEFAULT_PREDICTOR, metavar="SPEC[,SPEC...]",
                   help=f"predictor specs, one row each (default {DEFAULT_PREDICTOR}), "
                        "e.g. 'hierarchy,forest,group_mean,helios'")
    p.add_argument("--policy", default="a-srpt", metavar="SPEC",
                   help="policy that uses the predictor (default a-srpt, the default A-SRPT; "
                        "'a-srpt:adaptive=\"repredict\"' scores re-predictions given the work done)")
    p.add_argument("--replay", action="store_true", help="score the predictors without a scheduler")
    p.add_argument("--seed", type=int, default=0, help="seed of the run and of a generated workload")
    add_workload_arguments(p)
    add_json(p)
    add_plot(p, "predicted against true work (log-log)")
    p.set_defaults(func=run)


def add_workload_arguments(p) -> None:
    """The WORKLOAD argument and the options :func:`load_workload` reads besides ``--seed``
    (shared with ``asrpt plot accuracy``)."""
    p.add_argument("workload", metavar="WORKLOAD",
                   help="instance (.json), trace (.csv) or generator spec (recurring_users:key=value:...)")
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
    from ..registry import parse_spec
    from ..workloads import WORKLOADS, make_workload

    name, params = parse_spec(spec)
    if name not in WORKLOADS:
        raise InvalidParameterError(
            f"{spec!r}: no such file, and not a generator spec (families: {', '.join(sorted(WORKLOADS))})")
    if "seed" not in params:
        spec = f"{spec}:seed={args.seed}"
    if args.cluster and "cluster" not in params:
        spec = f'{spec}:cluster="{args.cluster}"'
    instance = make_workload(spec)
    return instance, {"source": spec, "family": name, "params": dict(instance.metadata.get("params", {}))}


def _scatter_figure(logs):
    from ..plots import prediction_scatter

    return prediction_scatter(logs)


def _evaluate(spec, instance, args) -> tuple[dict, object]:
    """One predictor's payload entry and its log at submission."""
    started = time.perf_counter()
    status_of = {j.id: j.status for j in instance.jobs}
    policy_name = summary = final = updates = None
    if args.replay:
        log = replay_predictions(spec, instance, seed=args.seed)
    else:
        policy = make_policy(args.policy, predictor=spec)
        policy_name = f"{args.policy}[{spec}]"
        result = simulate(instance, policy, seed=args.seed)
        summary = {k: result.summary.get(k) for k in ("mean_jct", "median_jct", "p99_jct", "makespan",
                                                       "gpu_utilization", "preemptions")}
        replayed = replay_predictions(spec, instance, seed=args.seed, completions=result.completion_times)
        if result.policy_data.get("initial_predictions"):
            ran = run_predictions(result, status_of=status_of)
            bands = replayed.subset(ran.ids)
            log = PredictionLog(ran.ids, ran.true, ran.predicted, ran.status, bands.low, bands.high, bands.level)
            final = run_predictions(result, which="final").accuracy()
            updates = result.policy_data.get("adaptive_updates")
        else:
            log = replayed
    coverage = None
    if log.low is not None:
        coverage = {"by_size": log.band_coverage("size"), "by_predicted": log.band_coverage("predicted"),
                    "by_level": log.band_coverage("level") if log.level is not None else None}
    entry = {"predictor": spec, "policy": policy_name, "scores": log.scores().to_dict(), "band_coverage": coverage,
             "initial": log.accuracy().to_dict(), "final": final.to_dict() if final else None,
             "adaptive_updates": updates, "summary": summary, "wall_s": time.perf_counter() - started}
    return entry, log


def _f3(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def _coverage_table(group: str, groups) -> str:
    """One table of ``PredictionLog.band_coverage`` groups, the first column named ``group``."""
    return format_table([group, "n", "coverage", "below", "above"],
                        [[g["group"], g["n"], _f3(g["coverage"]), _f3(g["below"]), _f3(g["above"])]
                         for g in groups])


def run(args) -> int:
    instance, described = load_workload(args)
    specs = split_specs(args.predictor)
    if not specs:
        raise InvalidParameterError("--predictor names no predictor")
    for spec in specs:
        make_predictor(spec)  # a bad spec fails before any run
    if not args.replay and "predictor" not in make_policy(args.policy).get_params():
        raise InvalidParameterError(f"policy {args.policy!r} takes no predictor")
    entries, logs = [], {}
    for spec in specs:
        entry, logs[spec] = _evaluate(spec, instance, args)
        entries.append(entry)
    write_plot(args.plot, lambda: _scatter_figure(logs))
    payload = {"workload": {**described, "jobs": instance.n_jobs, "gpus": instance.cluster.total_gpus},
               "mode": "replay" if args.replay else "run", "policy": None if args.replay else args.policy,
               "results": entries}
    if args.json:
        emit_json(payload)
        return 0
    rows = []
    for e in entries:
        s, d = e["scores"], e["initial"]["distortion"]
        rows.append([e["predictor"], s["n"]] + [_f3(s[k]) for k in ("spearman", "median_abs_log", "within_2x",
                                                                  "r2_log", "r2_log_succeeded", "coverage_80")]
                    + [f"{float(d['mu']):.3g}"])
    print(f"{instance.n_jobs} jobs on {instance.cluster.total_gpus} GPUs; "
          + ("replay" if args.replay else f"policy {args.policy}") + "; predictions at submission",
          file=sys.stderr)
    print(format_table(["predictor", "n", "rho", "med |log|", "within 2x", "R2 log", "R2 log (ok)",
                        "cov 80%", "mu"], rows))
    for e in entries:        # where the bands hold and where they do not (issue 45)
        cov = e["band_coverage"]
        if cov is None:
            continue
        print(f"\n{e['predictor']}: coverage of the 10%-90% band (0.8 is calibrated) by true-work decile, "
              "smallest first; below / above: the truth under the band (over-predicted) / over it")
        print(_coverage_table("true work", cov["by_size"]))
        print(f"{e['predictor']}: the same by predicted-work decile (known at submission: what a band can be "
              "calibrated on)")
        print(_coverage_table("predicted work", cov["by_predicted"]))
        if cov["by_level"]:
            print(f"{e['predictor']}: the same by the level that predicted the job")
            print(_coverage_table("level", cov["by_level"]))
    if not args.replay:
        print()
        keys = list(entries[0]["summary"])
        print(format_table(["predictor"] + keys, [[e["predictor"]] + [e["summary"][k] for k in keys]
                                                  for e in entries]))
    return 0
