"""Plain-JSON conversion shared by results, the CLI and batch output."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from json.encoder import encode_basestring_ascii as _encode
from typing import Any

__all__ = ["jsonable", "dumps_indented"]

_PLAIN = frozenset((int, str, bool, type(None)))   # returned as they are by jsonable


def jsonable(x: Any) -> Any:
    """Plain JSON types: Fractions become floats (ints when integral), tuples and sets lists,
    non-finite floats None, numpy scalars Python numbers, mappings dicts with string keys.

    >>> jsonable({"a": (Fraction(1, 2), Fraction(4, 2), float("inf"))})
    {'a': [0.5, 2, None]}
    """
    t = type(x)
    if t in _PLAIN:   # (the common case, before the checks below, which leave these as they are)
        return x
    if t is dict:
        return {str(k): (v if type(v) in _PLAIN else jsonable(v)) for k, v in x.items()}
    if isinstance(x, Fraction):
        return x.numerator if x.denominator == 1 else float(x)
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict) or hasattr(x, "items") and callable(x.items):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in x]
    if hasattr(x, "item") and callable(x.item):  # numpy scalars
        return jsonable(x.item())
    return x


class _Unusual(Exception):
    """A value :func:`dumps_indented` leaves to the json module."""


def dumps_indented(obj: Any, indent: int = 2) -> str:
    """``json.dumps(obj, indent=indent, allow_nan=False)``, the same text, faster on large objects
    (with an indent the json module encodes in Python, value by value). Plain JSON data (what
    :func:`jsonable` returns: dicts, lists, tuples, str, int, float, bool, None) is written here;
    anything else, and any error, is left to the json module, so the result and the errors are
    always its own.

    >>> dumps_indented({"a": [1, 2.5, None], "b": {}, "c": "x"}) == json.dumps(
    ...     {"a": [1, 2.5, None], "b": {}, "c": "x"}, indent=2, allow_nan=False)
    True
    """
    out: list[str] = []
    try:
        _write(obj, 0, out, " " * indent)
    except (_Unusual, RecursionError):
        return json.dumps(obj, indent=indent, allow_nan=False)
    return "".join(out)


def _key(k) -> str:
    t = type(k)
    if t is str:
        return _encode(k)
    if t is int:
        return _encode(int.__repr__(k))
    if k is True or k is False or k is None:
        return '"true"' if k is True else '"false"' if k is False else '"null"'
    if t is float and math.isfinite(k):
        return _encode(float.__repr__(k))
    raise _Unusual


def _write(o, level: int, out: list, unit: str) -> None:
    t = type(o)
    if t is str:
        out.append(_encode(o))
    elif t is int:
        out.append(int.__repr__(o))
    elif o is None or t is bool:
        out.append("null" if o is None else "true" if o else "false")
    elif t is float:
        if not math.isfinite(o):
            raise _Unusual     # (json raises its own ValueError)
        out.append(float.__repr__(o))
    elif t is dict or t is list or t is tuple:
        if not o:
            out.append("{}" if t is dict else "[]")
            return
        pad = "\n" + unit * (level + 1)
        sep = "," + pad
        append = out.append
        append("{" + pad if t is dict else "[" + pad)
        first = True
        for item in (o.items() if t is dict else o):
            if first:
                first = False
            else:
                append(sep)
            if t is dict:
                k, v = item
                append(_key(k))
                append(": ")
            else:
                v = item
            tv = type(v)
            if tv is int:
                append(int.__repr__(v))
            elif tv is str:
                append(_encode(v))
            else:
                _write(v, level + 1, out, unit)
        append("\n" + unit * level + ("}" if t is dict else "]"))
    else:
        raise _Unusual
