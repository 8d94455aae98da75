"""``asrpt simulate``: run policies on an instance or a trace and compare them in one table."""

from __future__ import annotations

import argparse
import os
import sys

from .._gc import gc_paused
from ..errors import InvalidParameterError
from ..instance import Cluster
from ..policies import predictor_of, user_policy_spec, with_predictor
from ..sim import simulate
from ..traces.detect import FORMATS, read_trace
from ._common import (add_json, add_plot, emit_json, format_table, nonneg_float, positive_int, safe_filename,
                      split_specs, write_plot)

SUMMARY_COLUMNS = ("mean_jct", "median_jct", "p95_jct", "p99_jct", "makespan", "gpu_utilization",
                   "preemptions", "total_weighted_flow_time")


def add_run_options(p: argparse.ArgumentParser, *, dnn_default: bool = False) -> None:
    """Options shared by ``simulate`` and ``run``."""
    p.add_argument("--policy", "--policies", dest="policies", metavar="P[,P...]",
                   help="comma-separated policies, each NAME or NAME:key=value:... "
                        "(asrpt simulate --list-policies shows the names), or your own class as "
                        "MODULE:CLASS or path/to/file.py:CLASS (docs/policies.md)")
    p.add_argument("--cluster", metavar="SPEC",
                   help="cluster such as 64x8, 4x32x4 (switches x servers x GPUs) or 8,8,4 (replaces the file's)")
    p.add_argument("--gpu-type", metavar="TYPE", help="GPU type of the --cluster servers (DNN jobs)")
    p.add_argument("--predictor", metavar="SPEC",
                   help="predictor for every policy that takes one, e.g. oracle, group_mean, noisy:sigma=0.5 "
                        "(asrpt simulate --list-predictors shows the names)")
    p.add_argument("--placement", metavar="NAME",
                   help="placement for starting jobs (best_fit, first_fit, most_free, spread, yarn, ilp, ...; "
                        "asrpt simulate --list-placers shows them); default: each policy's own, else best_fit")
    p.add_argument("--preemption-cost", type=nonneg_float, default=0.0, metavar="S",
                   help="seconds a preempted job spends restarting (default 0)")
    p.add_argument("--seed", type=int, default=0, help="seed for predictors and trace model assignment")
    p.add_argument("--format", choices=("auto",) + FORMATS, default="auto",
                   help="input format (default: detected from the file)")
    p.add_argument("--start", type=int, default=0, metavar="N", help="trace window: first job by arrival rank")
    p.add_argument("--limit", type=positive_int, metavar="N", help="trace window: number of jobs")
    p.add_argument("--dnn", action=argparse.BooleanOptionalAction, default=dnn_default,
                   help="give trace jobs DNN models and configurations (asrpt.traces.assign; "
                        f"default {'on' if dnn_default else 'off'})")
    p.add_argument("--out", metavar="DIR", help="write per-job CSVs, summary.json and comparison.csv here")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
    add_json(p)


def register(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="simulate policies on an instance or trace and compare them",
        description="Run one or more scheduling policies on an instance file or a trace (Philly, "
                    "Alibaba PAI 2020 job CSV, Alibaba 2023 pods, Helios cluster_log; detected from "
                    "the header) with the exact event-driven simulator, and print one comparison table.",
    )
    p.add_argument("input", metavar="INSTANCE_OR_TRACE", nargs="?", help="instance (.json) or trace (.csv)")
    p.add_argument("--list-policies", action="store_true",
                   help="list the registered policies, one line each, and exit")
    p.add_argument("--list-placers", action="store_true",
                   help="list the placements of --placement, one line each, and exit")
    p.add_argument("--list-predictors", action="store_true",
                   help="list the predictors of --predictor, one line each, and exit")
    add_run_options(p)
    add_plot(p, "the JCT CDF of the runs")
    p.set_defaults(func=run, policies_default="a-srpt,fifo")


def policies_from(spec: str, predictor: str | None) -> list:
    """``(label, policy)`` for every comma-separated policy spec: the label is the spec itself
    when it has parameters, else the policy's name (a user's ``MODULE:CLASS`` too), followed by
    ``[PREDICTOR]`` when ``predictor`` is given to a policy whose spec does not set one (two
    variants of one policy never share a label).

    >>> [label for label, _ in policies_from("a-srpt,a-srpt:kappa=4,fifo", "hierarchy")]
    ['a-srpt[hierarchy]', 'a-srpt:kappa=4[hierarchy]', 'fifo']
    """
    out = []
    for item in split_specs(spec):
        user = user_policy_spec(item)
        policy, given = with_predictor(item, predictor)
        label = item if (":" in item if user is None else user[2]) else policy.name
        out.append((f"{label}[{predictor}]" if given else label, policy))
    if not out:
        raise InvalidParameterError("no policy given (--policy a-srpt,fifo,...)")
    return out


def load_input(args):
    cluster = Cluster.from_spec(args.cluster, args.gpu_type) if args.cluster else None
    return read_trace(args.input, format=args.format, cluster=cluster, start=args.start, limit=args.limit,
                      dnn=args.dnn, seed=args.seed)


def run_policies(instance, policies, args, *, progress: bool):
    results = []
    for label, policy in policies:
        bar = None
        callback = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=instance.n_jobs, desc=f"{label:>14}", unit="job", file=sys.stderr,
                       dynamic_ncols=True, leave=True)

            def callback(done, total, bar=bar):
                bar.update(done - bar.n)
        try:
            results.append(simulate(instance, policy, placement=args.placement, label=label,
                                    preemption_cost=args.preemption_cost, seed=args.seed, progress=callback))
        finally:
            if bar is not None:
                bar.close()
    return results


def predictor_label(result) -> str:
    """Which predictor a run used: its policy's ``predictor`` parameter, or "none" for policies
    that use no prediction (FIFO, Tiresias, Gavel).

    >>> from asrpt.sim import simulate
    >>> predictor_label(simulate(two_server_instance, "fifo")), predictor_label(simulate(two_server_instance, "srsf"))
    ('none', 'oracle')
    """
    return predictor_of(result.options.get("policy_params", {}))


def job_model_label(instance) -> str:
    """The job model of an instance's jobs: ``"dnn"`` (each a model with a configuration, whose
    iteration time the performance model gives), ``"abstract"`` (a processing time and a GPU
    count) or ``"mixed"``.

    >>> job_model_label(two_server_instance)
    'abstract'
    """
    dnn = sum(1 for j in instance.jobs if not j.is_abstract)
    return "dnn" if dnn == instance.n_jobs and dnn else "abstract" if not dnn else "mixed"


def comparison_table(instance, results) -> str:
    """The table of ``asrpt simulate`` and ``asrpt run``: one row per run, its label, the
    predictor it used (:func:`predictor_label`), the job model (:func:`job_model_label`) and
    :data:`SUMMARY_COLUMNS`."""
    jobs = job_model_label(instance)
    rows = [[row[0], predictor_label(r), jobs] + row[1:] for row, r in zip(comparison_rows(results), results)]
    return format_table(("policy", "predictor", "jobs") + SUMMARY_COLUMNS, rows)


def predictor_note(results) -> str | None:
    """A note when the runs that use predictions do not all use the same predictor (the
    registered defaults differ: SRSF, SJF and QSSF know the true sizes, ``oracle``; A-SRPT reads
    the instance's predictions, ``instance``), so that nobody compares a policy against
    clairvoyant baselines without knowing it. None when they agree.

    >>> from asrpt.sim import simulate
    >>> predictor_note([simulate(two_server_instance, p) for p in ("a-srpt", "srsf", "fifo")])
    'note: the rows use different predictors (instance: a-srpt; oracle: srsf); --predictor P gives every policy the same one'
    """
    used = {}
    for r in results:
        label = predictor_label(r)
        if label != "none":
            used.setdefault(label, []).append(r.label)
    if len(used) < 2:
        return None
    return ("note: the rows use different predictors (" + "; ".join(f"{k}: {', '.join(v)}" for k, v in used.items())
            + "); --predictor P gives every policy the same one")


def comparison_rows(results, *, wall: bool = False):
    """One row per run: its label and :data:`SUMMARY_COLUMNS` (and its wall seconds, with ``wall``)."""
    return [[r.label] + [r.summary.get(c) for c in SUMMARY_COLUMNS] + ([r.summary["wall_time"]] if wall else [])
            for r in results]


def wall_line(results) -> str:
    """The runs' wall seconds on one line (stderr: a measurement of this machine, not a result).

    >>> from types import SimpleNamespace as R
    >>> wall_line([R(label="fifo", summary={"wall_time": 0.123}), R(label="srsf", summary={"wall_time": 2.5})])
    'wall seconds: fifo 0.123, srsf 2.5'
    """
    return "wall seconds: " + ", ".join(f"{r.label} {r.summary['wall_time']:.3g}" for r in results)


def write_outputs(out_dir: str, instance, results, report) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for r in results:
        path = os.path.join(out_dir, f"{safe_filename(r.label)}.jobs.csv")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(r.jobs_csv())
        written.append(path)
    summary = {"input": instance.metadata.get("file") or None, "jobs": instance.n_jobs,
               "gpus": instance.cluster.total_gpus, "servers": instance.cluster.n_servers,
               "trace": report.to_dict() if report else None,
               "results": [r.to_dict() for r in results]}
    path = os.path.join(out_dir, "summary.json")
    from .._json import dumps_indented, jsonable

    with open(path, "w", encoding="utf-8") as fh:
        fh.write(dumps_indented(jsonable(summary)))   # json.dump(..., indent=2, allow_nan=False)
    written.append(path)
    path = os.path.join(out_dir, "comparison.csv")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(",".join(("policy",) + SUMMARY_COLUMNS + ("wall_time",)) + "\n")
        for row in comparison_rows(results, wall=True):
            fh.write(",".join("" if v is None else str(float(v)) if not isinstance(v, str) else v for v in row) + "\n")
    written.append(path)
    return written


def _jct_figure(results):
    from ..plots import jct_cdf

    return jct_cdf(results)


def run(args) -> int:
    if args.list_policies or args.list_placers or args.list_predictors:
        from ..registry import format_listing

        if args.list_policies:
            from ..policies import describe_policies

            print(format_listing(describe_policies()))
        if args.list_placers:
            from ..placement import placer_names

            print(format_listing(placer_names()))
        if args.list_predictors:
            from ..predict import describe_predictors

            print(format_listing(describe_predictors()))
        return 0
    if not args.input:
        raise InvalidParameterError("INSTANCE_OR_TRACE is required (or --list-policies, --list-placers, "
                                    "--list-predictors)")
    instance, report = load_input(args)
    if report is not None and not args.json:
        print(report.summary(), file=sys.stderr)
    policies = policies_from(args.policies or args.policies_default, args.predictor)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    results = run_policies(instance, policies, args, progress=show)
    write_plot(args.plot, lambda: _jct_figure(results))
    if args.out:
        with gc_paused():
            written = write_outputs(args.out, instance, results, report)
        if not args.json:
            print(f"wrote {len(written)} files to {args.out}", file=sys.stderr)
    if args.json:
        emit_json({"jobs": instance.n_jobs, "gpus": instance.cluster.total_gpus,
                   "trace": report.to_dict() if report else None,
                   "results": [r.to_dict() for r in results]})
    else:
        print(comparison_table(instance, results))
        note = predictor_note(results)
        if note:
            print(note, file=sys.stderr)
        print(wall_line(results), file=sys.stderr)
    return 0
