"""``asrpt generate FAMILY --n N --seed S --out DIR [family options]``: write N instance files.

Each family of :mod:`asrpt.workloads.generators` is a sub-command whose options are the family's
parameters (``asrpt generate uniform --help`` lists them with their defaults). File ``i`` is
``DIR/FAMILY-0000i.json``, generated with the seed ``instance_seed(S, i)``; its metadata records
the family, every parameter, its seed and ``series = {seed: S, index: i}``. The same call writes
byte-identical files (and leaves files that already hold them alone); a file with other content
is an error unless ``--force``. ``asrpt generate --list-families`` (or ``--list``) lists the families.
"""

from __future__ import annotations

import argparse
import inspect
import numbers
import re
import sys

from .._validation import Interval, Options
from ..errors import InvalidParameterError
from ..registry import plain_text
from ._common import add_json, emit_json, positive_int

__all__ = ["register", "family_options"]


def _doc_params(doc: str) -> dict[str, str]:
    """Parameter descriptions from a numpydoc Parameters section (of a dedented docstring)."""
    out: dict[str, str] = {}
    m = re.search(r"^Parameters\n-+\n(.*?)(?=^\S+\n-+\n|\Z)", doc or "", re.S | re.M)
    if not m:
        return out
    names: list[str] = []
    for line in m.group(1).splitlines():
        head = re.match(r"^(\w[\w, ]*?)\s*:", line)
        if head:
            names = [n.strip() for n in head.group(1).split(",")]
            for n in names:
                out[n] = ""
        elif names and line.strip():
            for n in names:
                out[n] = (out[n] + " " + line.strip()).strip()
    return out


def _value_parser(name: str, constraints: list):
    """An argparse type for one parameter, from its constraints."""
    allows_none = None in constraints
    kinds = set()
    for c in constraints:
        if isinstance(c, Interval):
            kinds.add("int" if c.type in (int, numbers.Integral) else "real")
        elif isinstance(c, Options) or c is str:
            kinds.add("str")
        elif c in (list, tuple):
            kinds.add("list")
        elif c == "boolean":
            kinds.add("bool")

    def parse(text: str):
        t = text.strip()
        if allows_none and t.lower() in ("none", "null"):
            return None
        if "list" in kinds:
            return [p.strip() for p in t.split(",") if p.strip()]
        if kinds & {"int", "real"}:
            try:
                return int(t)
            except ValueError:
                pass
            if "real" in kinds:
                try:
                    return float(t)
                except ValueError:
                    pass
            if "str" not in kinds:
                raise argparse.ArgumentTypeError(f"{text!r} is not a number")
        return text

    parse.__name__ = name
    return parse


def family_options(parser: argparse.ArgumentParser, function) -> list[str]:
    """Add one option per parameter of a generator (but ``seed``); return the parameter names.

    Option ``--max-job-gpus`` sets ``args.param_max_job_gpus`` (None when not given, so the
    generator's default applies); booleans get ``--x/--no-x``; the help shows the parameter's
    description from the generator's docstring and its default.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The family's sub-parser.
    function : callable
        A registered generator (with ``parameter_constraints``).

    Returns
    -------
    list of str
        The parameter names, in signature order.

    Examples
    --------
    >>> import argparse
    >>> from asrpt.workloads.generators import get_family
    >>> p = argparse.ArgumentParser()
    >>> "n_jobs" in family_options(p, get_family("uniform").function)
    True
    >>> a = p.parse_args(["--n-jobs", "3", "--no-integer", "--max-job-gpus", "none"])
    >>> a.param_n_jobs, a.param_integer, a.param_max_job_gpus, a.param_mu
    (3, False, None, None)
    """
    docs = _doc_params(inspect.getdoc(function) or "")
    constraints = function.parameter_constraints
    names = []
    for name, param in inspect.signature(function).parameters.items():
        if name == "seed":
            continue
        names.append(name)
        default = param.default
        flag = "--" + name.replace("_", "-")
        help_text = plain_text(docs.get(name, "")).replace("%", "%%")
        shown = ",".join(default) if isinstance(default, (tuple, list)) else default
        help_text = f"{help_text} (default: {shown})"
        if constraints.get(name) == ["boolean"]:
            parser.add_argument(flag, dest=f"param_{name}", action=argparse.BooleanOptionalAction,
                                default=None, help=help_text)
        else:
            parser.add_argument(flag, dest=f"param_{name}", type=_value_parser(name, constraints[name]),
                                default=None, metavar=name.upper(), help=help_text)
    return names


def register(sub) -> None:
    from ..workloads.generators import FAMILIES, family_names

    p = sub.add_parser(
        "generate",
        help="write N seeded instance files of a generator family",
        description=plain_text(__doc__.split("\n\n", 1)[1].strip()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--list", "--list-families", dest="list", action="store_true",
                   help="list the families, one line each, and exit")
    families = p.add_subparsers(dest="family", metavar="FAMILY", parser_class=type(p))
    for name in family_names():
        fam = FAMILIES[name]
        fp = families.add_parser(name, help=fam.summary, allow_abbrev=False,
                                 description=f"{fam.summary}. Options are the parameters of "
                                             f"asrpt.workloads.generators.{fam.function.__name__}.")
        fp.add_argument("--n", type=positive_int, default=1, metavar="N",
                        help="number of instance files (default 1)")
        fp.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the series (default 0)")
        fp.add_argument("--out", required=True, metavar="DIR", help="directory to write into")
        fp.add_argument("--force", action="store_true",
                        help="replace existing files whose content differs")
        fp.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar (default: when stderr is a terminal)")
        add_json(fp)
        fp.set_defaults(func=run, param_names=family_options(fp, fam.function))
    p.set_defaults(func=run, param_names=[])


def run(args) -> int:
    from ..workloads.generators import FAMILIES, generate_files

    if getattr(args, "family", None) is None:
        if args.list:
            print(FAMILIES.listing())
            return 0
        raise InvalidParameterError("choose a FAMILY (asrpt generate --list shows them)")
    if args.seed < 0:
        raise InvalidParameterError(f"--seed must be >= 0, got {args.seed}")
    params = {n: getattr(args, f"param_{n}") for n in args.param_names
              if getattr(args, f"param_{n}") is not None}
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    bar = None
    callback = None
    if show:
        from tqdm import tqdm

        bar = tqdm(total=args.n, desc=f"generate {args.family}", unit="file", dynamic_ncols=True)

        def callback(done, total):
            bar.update(done - bar.n)
    try:
        paths = generate_files(args.family, args.out, n=args.n, seed=args.seed, force=args.force,
                               progress=callback, **params)
    finally:
        if bar is not None:
            bar.close()
    fam = FAMILIES[args.family]
    if args.json:
        full = {k: v for k, v in fam.defaults.items() if k != "seed"}
        full.update(params)
        emit_json({"family": args.family, "seed": args.seed, "n": args.n, "params": full,
                   "out": args.out, "files": paths})
    else:
        print(f"wrote {len(paths)} {args.family} instance file(s) to {args.out} (seed {args.seed})")
    return 0
