"""Helpers shared by the CLI commands: common options, JSON output and plain-text tables."""

from __future__ import annotations

import argparse
import json
import math
import sys
from fractions import Fraction
from typing import Any, Iterable, Sequence

from .._json import jsonable
from ..errors import InvalidParameterError
from ..instance import Instance, load_instance

__all__ = [
    "add_json",
    "add_instance",
    "load_from_args",
    "jsonable",
    "emit_json",
    "format_table",
    "positive_float",
    "nonneg_float",
    "positive_int",
]


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")


def add_instance(parser: argparse.ArgumentParser, *, exact: bool = True) -> None:
    parser.add_argument("instance", metavar="FILE", help="instance file (JSON; see docs/instance-format.md)")
    if exact:
        parser.add_argument("--exact", action="store_true",
                            help="read every number as an exact rational and compute in fractions")


def load_from_args(args: argparse.Namespace) -> Instance:
    return load_instance(args.instance, exact=bool(getattr(args, "exact", False)))


def emit_json(payload: dict) -> None:
    json.dump(jsonable(payload), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")


def _fmt_cell(x: Any) -> str:
    if isinstance(x, Fraction):
        x = float(x) if x.denominator != 1 else x.numerator
    if isinstance(x, float):
        return f"{x:.6g}"
    return "" if x is None else str(x)


def format_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain aligned text table.

    >>> print(format_table(["job", "C"], [["a", 1.5], ["bb", 10]]))
    job     C
    a     1.5
    bb     10
    """
    cells = [[_fmt_cell(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values):
        out = []
        for i, v in enumerate(values):
            out.append(v.ljust(widths[i]) if i == 0 else v.rjust(widths[i]))
        return "  ".join(out).rstrip()

    return "\n".join([line(list(headers))] + [line(r) for r in cells])


def _typed(kind, test, what):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not test(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return value

    parse.__name__ = what
    return parse


positive_float = _typed(float, lambda v: math.isfinite(v) and v > 0, "a positive number")
nonneg_float = _typed(float, lambda v: math.isfinite(v) and v >= 0, "a non-negative number")
positive_int = _typed(int, lambda v: v > 0, "a positive integer")


def parameter_error(message: str) -> InvalidParameterError:
    return InvalidParameterError(message)
