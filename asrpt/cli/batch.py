"""``asrpt batch DIR_OR_GLOB... --task T --out RESULTS``: one task over many instance files.

Runs ``--task`` (srpt, opt, certify, certify-guarded, certify-robust, simulate, compare-opt,
place; ``--list-tasks`` shows each one's options) on every instance file matched (a directory
means its ``*.json``; globs may use ``**``), on
``--jobs`` worker processes or on dask.distributed (``--executor dask``: a LocalCluster of
``--jobs`` workers, or the cluster at ``--scheduler``). Task options are ``-o KEY=VALUE``
(VALUE read as JSON when it parses, else as text: ``-o predictor=noisy:sigma=0.5``,
``-o backfill=false``, ``-o slot=1/2``).

Each finished instance appends one row to RESULTS (JSON Lines; Parquet when the name ends in
``.parquet`` and pyarrow is installed): path, instance hash, task, options, status
(ok/error/timeout), error, figures, wall time, worker, asrpt version. Rerunning the same
command skips instances already in RESULTS, so a killed run resumes where it stopped;
``--retry-failed`` reruns the failed ones. ``--time-limit S`` stops an instance after S seconds
(status "timeout"); a failing instance is recorded and the batch goes on. Exit status 0 when
every instance's latest row is ok, 1 when some failed or timed out, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import InvalidParameterError
from ..registry import plain_text
from ._common import add_json, emit_json, format_table, positive_float, positive_int

__all__ = ["register", "parse_option"]


def parse_option(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as JSON when it parses, else as text.

    Hyphens in KEY become underscores; JSON lists and objects stay text (options are scalars).

    Parameters
    ----------
    text : str
        One ``-o`` argument.

    Returns
    -------
    (str, object)

    Raises
    ------
    argparse.ArgumentTypeError
        No ``=`` or no key (argparse turns it into a usage error, exit status 2).

    Examples
    --------
    >>> parse_option("seed=3"), parse_option("predictor=noisy:sigma=0.5"), parse_option("x=null")
    (('seed', 3), ('predictor', 'noisy:sigma=0.5'), ('x', None))
    """
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    key, value = text.split("=", 1)
    key = key.strip().replace("-", "_")
    if not key:
        raise argparse.ArgumentTypeError(f"{text!r} has no KEY")
    try:
        parsed = json.loads(value)
        if isinstance(parsed, (list, dict)):
            parsed = value
    except ValueError:
        parsed = value
    return key, parsed


def register(sub) -> None:
    from ..batch.executors import EXECUTORS

    p = sub.add_parser("batch", help="run a task (srpt, opt, certify, certify-guarded, certify-robust, simulate, "
                                     "compare-opt, place) over many instance files, resumably",
                       description=plain_text(__doc__.split("\n\n", 1)[1].strip()),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="*", metavar="DIR_OR_GLOB", help="instance directories, globs or files")
    p.add_argument("--task", metavar="TASK",
                   help="srpt, opt, certify, certify-guarded, certify-robust, simulate, compare-opt or place")
    p.add_argument("-o", "--option", dest="options", type=parse_option, action="append", default=[],
                   metavar="KEY=VALUE", help="a task option (repeatable; see --list-tasks)")
    p.add_argument("--exact", action="store_true", help="read numbers exactly (the option exact=true)")
    p.add_argument("--out", metavar="RESULTS", help="results file (.jsonl, or .parquet with pyarrow)")
    p.add_argument("--jobs", type=positive_int, default=1, metavar="N",
                   help="worker processes (default 1)")
    p.add_argument("--time-limit", type=positive_float, default=None, metavar="S",
                   help="seconds per instance; later ones are recorded as timeouts")
    p.add_argument("--executor", choices=EXECUTORS, default="processes",
                   help="worker processes on this machine (default) or dask.distributed")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="an existing dask scheduler (with --executor dask; default: a LocalCluster)")
    p.add_argument("--retry-failed", action="store_true",
                   help="also rerun instances whose latest row is an error or a timeout")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar with rate and ETA (default: when stderr is a terminal)")
    p.add_argument("--list-tasks", action="store_true", help="list the tasks and their options, and exit")
    add_json(p)
    p.set_defaults(func=run)


def _list_tasks() -> int:
    from ..batch.tasks import TASKS, task_names

    names = task_names()
    width = max(map(len, names))
    for name in names:
        t = TASKS[name]
        opts = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(t.defaults.items()))
        print(f"{name:<{width}}  {t.summary}\n{'':<{width}}  options: {opts}")
    return 0


def run(args) -> int:
    from ..batch.runner import run_batch

    if args.list_tasks:
        return _list_tasks()
    if not args.inputs:
        raise InvalidParameterError("give instance directories, globs or files (DIR_OR_GLOB)")
    if not args.task:
        raise InvalidParameterError("--task is required (srpt, opt, certify, certify-guarded, certify-robust, "
                                    "simulate, compare-opt, place)")
    if not args.out:
        raise InvalidParameterError("--out RESULTS is required")
    options = dict(args.options)
    if args.exact:
        options["exact"] = True
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    s = run_batch(args.inputs, args.task, out=args.out, options=options, jobs=args.jobs,
                  time_limit=args.time_limit, executor=args.executor, scheduler=args.scheduler,
                  retry_failed=args.retry_failed, progress=show)
    for note in s.notes:
        print(f"asrpt batch: {note}", file=sys.stderr)
    if args.json:
        emit_json(s.to_dict())
    else:
        rate = f"{s.rate:.4g} instances/s" if s.rate else "-"
        print(f"batch {args.task} on {s.inputs} instance file(s), {s.executor} x {s.jobs}: "
              f"results in {s.out}")
        print(format_table(["run", "ok", "error", "timeout", "skipped", "duplicates", "wall_s", "rate"],
                           [[s.done, s.ok, s.error, s.timeout, s.skipped, s.duplicates,
                             s.wall_time, rate]]))
        if s.failed_total:
            print(f"{s.failed_total} instance(s) failed or timed out (see the rows' error field)")
    return 1 if s.failed_total else 0
