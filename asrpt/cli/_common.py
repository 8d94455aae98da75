"""Helpers shared by the CLI commands: common options, JSON output and plain-text tables."""

from __future__ import annotations

import argparse
import json
import math
import sys
from fractions import Fraction
from typing import Any, Iterable, Sequence

from .._json import jsonable
from ..instance import Instance
from ..loading import load_instance
from ..registry import split_specs  # (re-exported: the commands' comma-separated specs)

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
    "relative_gap",
    "positive_rational",
    "distortion",
    "free_gpu_list",
    "split_specs",
    "add_plot",
    "write_plot",
    "safe_filename",
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
    """Six significant digits, but large values (epoch times, totals of a trace) in plain digits
    with two decimals at most: ``1663190000.5`` stays readable, not ``1.66319e+09``."""
    if isinstance(x, Fraction):
        x = float(x) if x.denominator != 1 else x.numerator
    if isinstance(x, float):
        if math.isfinite(x) and 1e6 <= abs(x) < 1e15:
            return f"{x:.2f}".rstrip("0").rstrip(".")
        return f"{x:.6g}"
    return "" if x is None else str(x)


def format_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain aligned text table.

    >>> print(format_table(["job", "C"], [["a", 1.5], ["bb", 10], ["c", 1663190000.5]]))
    job             C
    a             1.5
    bb             10
    c    1663190000.5
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
relative_gap = _typed(float, lambda v: 0 <= v < 1, "a relative gap in [0, 1)")
nonneg_float = _typed(float, lambda v: math.isfinite(v) and v >= 0, "a non-negative number")
positive_int = _typed(int, lambda v: v > 0, "a positive integer")


def positive_rational(text: str):
    """An exact positive number: ``1``, ``0.5`` (read as 1/2) or ``1/3``."""
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number such as 1, 0.5 or 1/3") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number such as 1, 0.5 or 1/3")
    return value.numerator if value.denominator == 1 else value


def distortion(text: str):
    """A prediction distortion mu >= 1, exact (``1``, ``4``, ``5/2``)."""
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number >= 1 such as 1, 4 or 5/2") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number >= 1 such as 1, 4 or 5/2")
    return value.numerator if value.denominator == 1 else value


def free_gpu_list(text: str) -> list[int]:
    """Free GPUs per server, ``8,8,4``."""
    try:
        values = [int(p) for p in text.replace(" ", "").split(",") if p != ""]
        if not values or min(values) < 0:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a list of free GPUs per server such as 8,8,4") from None
    return values


def add_plot(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--plot", metavar="FILE",
                        help=f"also write {what} (asrpt.plots): PDF or SVG for a name ending in .pdf or .svg, "
                             "else PNG")


def write_plot(path: str | None, make_figure) -> None:
    """Write ``make_figure()`` to ``path`` when a path was given (and say so on stderr): PDF or
    SVG for a name ending in ``.pdf`` or ``.svg``, PNG otherwise (whatever the suffix, as
    before vector output existed)."""
    if path:
        from ..plots import save_figure

        vector = path.lower().endswith((".pdf", ".svg"))
        save_figure(make_figure(), path, format=None if vector else "png")
        print(f"wrote {path}", file=sys.stderr)




def safe_filename(name: str) -> str:
    """A policy label as a file name: letters, digits, '-', '_' and '.'; anything else '_'."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
