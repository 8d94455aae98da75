"""Plain-JSON conversion shared by results, the CLI and batch output."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

__all__ = ["jsonable"]


def jsonable(x: Any) -> Any:
    """Plain JSON types: Fractions become floats (ints when integral), tuples and sets lists,
    non-finite floats None, numpy scalars Python numbers, mappings dicts with string keys.

    >>> jsonable({"a": (Fraction(1, 2), Fraction(4, 2), float("inf"))})
    {'a': [0.5, 2, None]}
    """
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
