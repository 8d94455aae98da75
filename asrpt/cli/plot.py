"""``asrpt plot KIND ... --out FILE.png|.pdf|.svg``: the figures of :mod:`asrpt.plots`, from files.

Kinds (``asrpt plot KIND --help`` shows every option):

- ``gantt INPUT --policy P``: simulate one policy on an instance or trace and draw the cluster's
  GPUs over time, with the virtual single-machine SRPT schedule below (``--virtual``);
- ``jct INPUT... --policy P,Q``: JCT CDFs (``--chart cdf``) or mean/p99 bars (``--chart bars``,
  one panel per statistic, ``--log`` for logarithmic axes); INPUT is an instance or trace (the
  policies are simulated) or the ``--out`` directory of ``asrpt simulate`` / ``asrpt run``
  (per-job CSVs are read, nothing is simulated);
- ``placement INSTANCE --job ID [--free 8,8] [--method ilp]``: one DNN job's worker graph placed
  on its servers, edges between servers in red;
- ``ratio RESULTS.jsonl...``: each policy's ratio to the offline optimum across instances, from
  the rows of ``asrpt batch --task compare-opt`` (your own policy among them); or empirical
  ratios against Theorem 1's bound, from the rows of ``asrpt batch --task certify``;
- ``worst-case --gpus M --max-jobs N --mu 1,4``: run the worst-case search per mu and draw its
  progress against the cell bounds;
- ``accuracy WORKLOAD --predictor hierarchy[,forest,...]``: predicted against true iterations,
  log-log (WORKLOAD as in ``asrpt predict-eval``: a file or a generator spec).

Every kind writes one figure (``--out``, required) and prints its path: PNG, PDF or SVG from the
file's suffix, byte for byte the same for the same input. ``--width`` and ``--height`` set its
size in inches (give one and the other keeps the figure's proportions); ``--dpi`` the resolution
of a PNG. ``--style paper`` draws for a two-column paper: 8 pt text, thin lines, fonts embedded
as TrueType in PDF (text kept as text in SVG), 3.5 in wide (one column) unless ``--width`` says
otherwise; for example ``asrpt plot jct out/sim --out jct.pdf --style paper``. Errors are one
line with exit status 2, as for every command.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys

from ..errors import InvalidParameterError
from ..registry import plain_text
from ._common import (distortion, free_gpu_list, positive_float, positive_int, relative_gap, safe_filename,
                      split_specs)
from .predict_eval import add_workload_arguments, load_workload

__all__ = ["register"]

_VIRTUAL = ("predicted", "true", "none")


def register(sub) -> None:
    p = sub.add_parser(
        "plot",
        help="draw a figure (Gantt, JCT, placement, ratio vs bound, worst-case search, accuracy) as PNG, PDF "
             "or SVG",
        description=plain_text(__doc__.split("\n\n", 1)[1].strip()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)

    g = kinds.add_parser("gantt", help="GPUs over time for one policy, the virtual SRPT schedule beside it",
                         description="Simulate one policy on an instance or a trace and draw every job's "
                                     "segments on the cluster's GPUs over time; below, the virtual "
                                     "single-machine SRPT schedule (A-SRPT follows it while its "
                                     "predictions are static: --policy 'a-srpt:adaptive=\"off\"').")
    g.add_argument("input", metavar="INSTANCE_OR_TRACE", help="instance (.json) or trace (.csv)")
    g.add_argument("--policy", default="a-srpt", metavar="P", help="one policy spec (default a-srpt)")
    g.add_argument("--virtual", choices=_VIRTUAL, default="predicted",
                   help="the virtual SRPT schedule on predicted sizes (default), true sizes, or none")
    g.add_argument("--no-labels", dest="labels", action="store_false", default=None,
                   help="no job ids on the bars (default: ids when at most 40 jobs)")
    _sim_options(g)
    _out_options(g)
    g.set_defaults(func=_styled(_gantt))

    j = kinds.add_parser("jct", help="JCT CDFs or mean/p99 bars (a panel each) across policies",
                         description="Job completion times across policies. INPUT is an instance or "
                                     "trace (the --policy list is simulated) or a directory written by "
                                     "'asrpt simulate --out' or 'asrpt run' (its per-job CSVs are read; "
                                     "--policy then selects among them).")
    j.add_argument("input", metavar="INPUT", help="instance, trace or results directory")
    j.add_argument("--policy", "--policies", dest="policies", default=None, metavar="P[,P...]",
                   help="policies (default a-srpt,fifo; for a directory: every policy in it)")
    j.add_argument("--chart", choices=("cdf", "bars"), default="cdf",
                   help="CDF of the JCTs (default) or bars of --stats")
    j.add_argument("--stats", default="mean,p99", metavar="S[,S...]",
                   help="bars: statistics among mean, median, p95, p99, max (default mean,p99)")
    j.add_argument("--linear", action="store_true", help="CDF: linear time axis (default: logarithmic)")
    j.add_argument("--log", action="store_true",
                   help="bars: logarithmic value axes (default: linear; each statistic has its own panel)")
    _sim_options(j)
    _out_options(j)
    j.set_defaults(func=_styled(_jct))

    from ..placement import METHODS, OBJECTIVES
    from ..solve import SOLVERS

    pl = kinds.add_parser("placement", help="a DNN job's worker graph placed on servers, cut edges in red",
                          description="Place one DNN job of an instance (as 'asrpt place' does) and draw "
                                      "its worker graph on the servers used, edges between servers in red.")
    pl.add_argument("instance", metavar="INSTANCE", help="instance file with DNN jobs")
    pl.add_argument("--job", required=True, metavar="ID", help="the job to place (a DNN job)")
    pl.add_argument("--free", type=free_gpu_list, default=None, metavar="F1,F2,...",
                    help="free GPUs per server, in the cluster's order (default: all GPUs)")
    pl.add_argument("--method", default="ilp", choices=METHODS.choices(), help="placement method (default ilp)")
    pl.add_argument("--objective", default="cut", choices=OBJECTIVES, help="cut (default) or tau")
    pl.add_argument("--solver", default="highs", choices=SOLVERS, help="MILP backend (default highs)")
    pl.add_argument("--time-limit", type=positive_float, default=60.0, metavar="S", help="solver seconds")
    pl.add_argument("--gap", type=relative_gap, default=0.0, metavar="G", help="relative MIP gap (default 0)")
    pl.add_argument("--seed", type=_nonneg_int, default=0, metavar="N", help="seed of randomised methods")
    _out_options(pl)
    pl.set_defaults(func=_styled(_placement))

    r = kinds.add_parser("ratio", help="policies' ratios to the optimum (compare-opt rows), or ratios against "
                                       "Theorem 1's bound (certify rows)",
                         description="From the results of 'asrpt batch --task compare-opt': each policy's "
                                     "ALG / OPT across the instances (the fraction of instances at or "
                                     "below each ratio; the upper end of the bracket where OPT is not "
                                     "proven). From the results of 'asrpt batch --task certify': each "
                                     "instance's sum C_j / LB against Theorem 1's bound beta (1 + rho mu). "
                                     "Rows that are not ok are skipped.")
    r.add_argument("results", nargs="+", metavar="RESULTS", help="results files (.jsonl or .parquet)")
    r.add_argument("--policy", "--policies", dest="policies", default=None, metavar="P[,P...]",
                   help="compare-opt rows: the policies to draw, in this order (default: all)")
    r.add_argument("--color", choices=("rho", "mu", "beta", "bound"), default="rho",
                   help="quantity shown by colour (default rho)")
    r.add_argument("--x", choices=("rho", "mu", "beta", "bound"), default="mu",
                   help="horizontal axis of the right panel (default mu)")
    _out_options(r)
    r.set_defaults(func=_styled(_ratio))

    w = kinds.add_parser("worst-case", aliases=["progress"], help="worst-case search progress per mu",
                         description="Run the worst-case search of 'asrpt worst-case' once per --mu "
                                     "value and draw the best ratio found against the evaluations, "
                                     "beside each cell's bound 1 + rho mu.")
    w.add_argument("--gpus", type=positive_int, required=True, metavar="M", help="GPUs of the server")
    w.add_argument("--max-jobs", type=positive_int, required=True, metavar="N", help="most jobs (1..8)")
    w.add_argument("--mu", type=lambda t: [distortion(x) for x in t.split(",") if x.strip()], default=[1],
                   metavar="MU[,MU...]", help="distortion bounds, one search each (default 1)")
    w.add_argument("--max-job-gpus", type=positive_int, default=None, metavar="G", help="largest gang")
    w.add_argument("--budget", type=positive_float, default=20.0, metavar="S",
                   help="seconds per search (default 20)")
    w.add_argument("--max-evals", type=positive_int, default=None, metavar="K",
                   help="distinct instances per search at most")
    w.add_argument("--seed", type=_nonneg_int, default=0, help="seed of the searches (default 0)")
    _out_options(w)
    w.set_defaults(func=_styled(_worst_case))

    a = kinds.add_parser("accuracy", help="predicted against true iterations (log-log)",
                         description="Run each predictor on a workload (inside a policy, as "
                                     "'asrpt predict-eval' does, or --replay) and draw its predictions "
                                     "at submission against the true work.")
    a.add_argument("--predictor", default="hierarchy,forest", metavar="SPEC[,SPEC...]",
                   help="predictors, one series each (default hierarchy,forest)")
    a.add_argument("--policy", default="a-srpt:adaptive=\"repredict\"", metavar="SPEC",
                   help="policy that uses the predictor (default a-srpt with adaptive re-prediction)")
    a.add_argument("--replay", action="store_true", help="score the predictors without a scheduler")
    a.add_argument("--seed", type=_nonneg_int, default=0, help="seed of the run and of a generated workload")
    add_workload_arguments(a)
    _out_options(a)
    a.set_defaults(func=_styled(_accuracy))


def _formats() -> tuple:
    from ..traces.detect import FORMATS

    return ("auto",) + FORMATS


def _nonneg_int(text: str) -> int:
    try:
        value = int(text)
        if value < 0:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a non-negative integer") from None
    return value


def _sim_options(p: argparse.ArgumentParser) -> None:
    """The input and simulation options of ``gantt`` and ``jct`` (as in ``asrpt simulate``)."""
    from ._common import nonneg_float

    p.add_argument("--cluster", metavar="SPEC", help="cluster such as 8x8 (replaces the file's)")
    p.add_argument("--gpu-type", metavar="TYPE", help="GPU type of the --cluster servers")
    p.add_argument("--predictor", metavar="SPEC", help="predictor for every policy that takes one")
    p.add_argument("--placement", metavar="NAME", help="placement for starting jobs (default: the policy's)")
    p.add_argument("--preemption-cost", type=nonneg_float, default=0.0, metavar="S",
                   help="seconds a preempted job spends restarting (default 0)")
    p.add_argument("--seed", type=_nonneg_int, default=0, help="seed of predictors and trace models")
    p.add_argument("--format", choices=_formats(), default="auto", help="input format (default: detected)")
    p.add_argument("--start", type=int, default=0, metavar="N", help="trace window: first job by arrival")
    p.add_argument("--limit", type=positive_int, metavar="N", help="trace window: number of jobs")
    p.add_argument("--dnn", action=argparse.BooleanOptionalAction, default=False,
                   help="give trace jobs DNN models and configurations (default off)")


_SUFFIXES = (".png", ".pdf", ".svg")
_STYLES = ("screen", "paper")


def _inches(text: str) -> float:
    """A figure size in inches, 1 to 50 (the range :func:`asrpt.plots.save_figure` takes)."""
    try:
        value = float(text)
        if not 1 <= value <= 50:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size in inches between 1 and 50") from None
    return value


def _out_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", "-o", required=True, metavar="FILE.{png,pdf,svg}",
                   help="the figure to write: PNG, PDF or SVG from the suffix")
    p.add_argument("--dpi", type=positive_int, default=120, help="resolution of a PNG (default 120)")
    p.add_argument("--width", type=_inches, default=None, metavar="INCHES",
                   help="width in inches (default: the figure's own; 3.5, one column, with --style paper)")
    p.add_argument("--height", type=_inches, default=None, metavar="INCHES",
                   help="height in inches (default: keeps the figure's proportions)")
    p.add_argument("--style", choices=_STYLES, default="screen",
                   help="screen (default) or paper: 8 pt text, thin lines, TrueType fonts embedded, "
                        "one column wide")
    p.add_argument("--title", default=None, help="the figure's title (default: one describing it)")


def _styled(func):
    """``func`` run after checking ``--out`` (before any work) and, with ``--style paper``, inside
    :func:`asrpt.plots.paper_style` (the figure is built and written in it)."""

    def run(args) -> int:
        if not args.out.lower().endswith(_SUFFIXES):
            raise InvalidParameterError(f"--out must name a .png, .pdf or .svg file, got {args.out!r}")
        if args.style != "paper":
            return func(args)
        from ..plots import paper_style

        with paper_style():
            return func(args)

    run.__name__ = run.__qualname__ = func.__name__
    run.__doc__ = func.__doc__
    return run


def _width(args) -> float | None:
    """The width to draw at: ``--width``, else one column (3.5 in) for ``--style paper``."""
    from ..plots import PAPER_WIDTH

    return args.width if args.width is not None else PAPER_WIDTH if args.style == "paper" else None


def _write(fig, args) -> int:
    from ..plots import save_figure

    path = save_figure(fig, args.out, dpi=args.dpi, width=_width(args), height=args.height)
    print(path)
    return 0


def _load(args):
    from .simulate import load_input

    instance, report = load_input(args)
    if report is not None:
        print(report.summary(), file=sys.stderr)
    return instance


def _simulate(instance, spec: str, args) -> list:
    from .simulate import policies_from, run_policies

    return run_policies(instance, policies_from(spec, args.predictor), args, progress=False)


def _gantt(args) -> int:
    from ..plots import gantt
    from ..single import virtual_schedule

    instance = _load(args)
    results = _simulate(instance, args.policy, args)
    if len(results) != 1:
        raise InvalidParameterError(f"--policy names {len(results)} policies; gantt draws one")
    virtual = None if args.virtual == "none" else virtual_schedule(instance, predicted=args.virtual == "predicted")
    fig = gantt(results[0], virtual=virtual, cluster=instance.cluster, labels=args.labels, title=args.title)
    return _write(fig, args)


def _results_dir_jcts(path: str, wanted: list[str] | None) -> dict:
    """``{policy: [JCT, ...]}`` from the per-job CSVs of an ``asrpt simulate --out`` directory."""

    summary = os.path.join(path, "summary.json")
    if not os.path.exists(summary):
        raise InvalidParameterError(f"{path}: no summary.json (not a directory of 'asrpt simulate --out')")
    with open(summary, encoding="utf-8") as fh:
        policies = [r["policy"] for r in json.load(fh).get("results", [])]
    if wanted:
        unknown = [w for w in wanted if w not in policies]
        if unknown:
            raise InvalidParameterError(
                f"{path}: no results of {', '.join(map(repr, unknown))}; it holds {', '.join(policies)}")
        policies = wanted
    out = {}
    for policy in policies:
        csv_path = os.path.join(path, f"{safe_filename(policy)}.jobs.csv")
        if not os.path.exists(csv_path):
            raise InvalidParameterError(f"{path}: summary.json names {policy!r} but {csv_path} is missing")
        with open(csv_path, encoding="utf-8", newline="") as fh:
            out[policy] = [float(row["jct"]) for row in csv.DictReader(fh) if row.get("jct")]
    return out


def _jct(args) -> int:
    from ..plots import jct_bars, jct_cdf

    if os.path.isdir(args.input):
        wanted = split_specs(args.policies) if args.policies else None
        data = _results_dir_jcts(args.input, wanted)
    else:
        instance = _load(args)
        data = _simulate(instance, args.policies or "a-srpt,fifo", args)
    if args.chart == "cdf":
        fig = jct_cdf(data, log_x=not args.linear, title=args.title)
    else:
        stats = [s.strip() for s in args.stats.split(",") if s.strip()]
        fig = jct_bars(data, stats=stats, log_y=args.log, title=args.title)
    return _write(fig, args)


def _placement(args) -> int:
    from ..dnn.parallel import worker_graph
    from ..dnn.perf import best_gpu_type
    from ..loading import load_instance
    from ..placement import place
    from ..plots import placement_graph

    instance = load_instance(args.instance)
    try:
        job = instance.job(args.job)
    except (KeyError, InvalidParameterError, LookupError):
        raise InvalidParameterError(f"no job {args.job!r} in {args.instance}") from None
    if job.is_abstract:
        raise InvalidParameterError(f"job {args.job!r} is abstract (no model): only DNN jobs have a worker graph")
    cluster = instance.cluster
    free = args.free if args.free is not None else list(cluster.server_gpus)
    if len(free) != cluster.n_servers:
        raise InvalidParameterError(f"--free lists {len(free)} servers, the cluster has {cluster.n_servers}")
    graph = worker_graph(job, best_gpu_type(job, cluster))
    p = place(graph, free, method=args.method, objective=args.objective, solver=args.solver,
              time_limit=args.time_limit, gap=args.gap, cluster=cluster, job=job, seed=args.seed)
    fig = placement_graph(graph, p, free_gpus=free, title=args.title, width=_width(args))
    return _write(fig, args)


def _ratio(args) -> int:
    from ..batch import read_results
    from ..plots import policy_ratios, ratio_vs_bound

    rows = []
    for path in args.results:
        rows.extend(read_results(path))
    tasks = {r.get("task") for r in rows}
    if tasks == {"compare-opt"}:
        wanted = split_specs(args.policies) if args.policies else None
        return _write(policy_ratios(rows, policies=wanted, title=args.title), args)
    other = sorted(tasks - {"certify"}, key=str)
    if other:
        raise InvalidParameterError(
            f"the results hold rows of task {', '.join(map(repr, other))}; 'asrpt plot ratio' reads the "
            "results of 'asrpt batch --task compare-opt' or of '--task certify', one of them at a time")
    if args.policies:
        raise InvalidParameterError("--policy selects among compare-opt rows; certify rows are A-SRPT's")
    return _write(ratio_vs_bound(rows, color=args.color, x=args.x, title=args.title), args)


def _worst_case(args) -> int:
    from ..plots import worstcase_progress
    from ..theory.worstcase import worst_case

    results = []
    for mu in args.mu:
        results.append(worst_case(gpus=args.gpus, max_jobs=args.max_jobs, mu=mu,
                                  max_job_gpus=args.max_job_gpus, budget=args.budget,
                                  max_evals=args.max_evals, seed=args.seed))
        r = results[-1]
        print(f"{r.cell.name}: ALG / UB = {float(r.ratio):.4g} (bound {float(r.cell_bound):.4g}) after "
              f"{r.evaluations} instances, {r.seconds:.1f} s", file=sys.stderr)
    return _write(worstcase_progress(results, title=args.title), args)


def _accuracy(args) -> int:
    from ..plots import prediction_scatter
    from ..policies import make_policy
    from ..predict import make_predictor
    from ..predict.metrics import replay_predictions, run_predictions
    from ..sim import simulate

    instance, _ = load_workload(args)
    specs = split_specs(args.predictor)
    if not specs:
        raise InvalidParameterError("--predictor names no predictor")
    logs = {}
    for spec in specs:
        make_predictor(spec)  # a bad spec fails before any run
        if args.replay:
            logs[spec] = replay_predictions(spec, instance, seed=args.seed)
            continue
        if "predictor" not in make_policy(args.policy).get_params():
            raise InvalidParameterError(f"policy {args.policy!r} takes no predictor")
        result = simulate(instance, make_policy(args.policy, predictor=spec), seed=args.seed)
        if result.policy_data.get("initial_predictions"):
            logs[spec] = run_predictions(result)
        else:
            logs[spec] = replay_predictions(spec, instance, seed=args.seed,
                                            completions=result.completion_times)
    title = args.title or f"{instance.n_jobs} jobs: predictions at submission" + (" (replay)" if args.replay else "")
    return _write(prediction_scatter(logs, title=title), args)
