"""Private helpers for functions over plain arrays: constraints for number and id sequences,
tie ranks, exact sums.

The two constraint classes follow the protocol of :mod:`asrpt._validation` (``is_satisfied_by``
and ``__str__``), so they can sit in any ``@validate_params`` dict. They check a whole sequence in
a few C-speed passes (10^6 floats in a few tens of milliseconds).
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Real
from typing import Any, Sequence

import numpy as np

from .._validation import is_number
from ..errors import InvalidParameterError
from ..instance import id_key

__all__ = ["NumberSequence", "IdSequence", "as_list", "tie_ranks", "check_lengths", "exact_sum"]

_EXACT_TYPES = frozenset((int, Fraction))
_INT_FLOAT = frozenset((int, float))


class NumberSequence:
    """A 1-D sequence (list, tuple or numpy array) of finite real numbers, optionally bounded below.

    >>> NumberSequence(0).is_satisfied_by([0, 1.5, Fraction(1, 3)])
    True
    >>> NumberSequence(0).is_satisfied_by([1, -2]), NumberSequence(0, strict=True).is_satisfied_by([0])
    (False, False)
    >>> str(NumberSequence(0))
    'a sequence of finite numbers >= 0'
    """

    def __init__(self, minimum: Real | None = None, *, strict: bool = False):
        self.minimum = minimum
        self.strict = strict

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NumberSequence) and other.minimum == self.minimum
                and other.strict == self.strict)

    def __hash__(self) -> int:
        return hash((NumberSequence, self.minimum, self.strict))

    def _above(self, low) -> bool:
        if self.minimum is None:
            return True
        return low > self.minimum if self.strict else low >= self.minimum

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, np.ndarray):
            if value.ndim != 1:
                return False
            if value.dtype.kind in "iu":
                return value.size == 0 or self._above(value.min())
            if value.dtype.kind == "f":
                return bool(np.isfinite(value).all()) and (value.size == 0 or self._above(value.min()))
            if value.dtype.kind != "O":
                return False
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            return False
        if not value:
            return True
        types = set(map(type, value))
        if types <= _EXACT_TYPES:  # ints and Fractions are finite; min is exact
            return self._above(min(value))
        if types <= _INT_FLOAT:  # one vectorised pass (float64 keeps the sign of every int)
            try:
                arr = np.asarray(value, dtype=float)
            except OverflowError:
                return False
            return bool(np.isfinite(arr).all()) and self._above(arr.min())
        if not all(is_number(x) for x in value):
            return False
        if not all(math.isfinite(x) for x in value if not isinstance(x, (int, Fraction))):
            return False
        return self._above(min(value))

    def __str__(self) -> str:
        if self.minimum is None:
            return "a sequence of finite numbers"
        return f"a sequence of finite numbers {'>' if self.strict else '>='} {self.minimum}"

    def __repr__(self) -> str:
        return f"NumberSequence({self.minimum!r}, strict={self.strict})"


class IdSequence:
    """A list or tuple of distinct non-empty strings (job ids).

    >>> IdSequence().is_satisfied_by(["a", "b"]), IdSequence().is_satisfied_by(["a", "a"])
    (True, False)
    """

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IdSequence)

    def __hash__(self) -> int:
        return hash(IdSequence)

    def is_satisfied_by(self, value: Any) -> bool:
        if not isinstance(value, (list, tuple)):
            return False
        if not all(isinstance(x, str) and x for x in value):
            return False
        return len(set(value)) == len(value)

    def __str__(self) -> str:
        return "a sequence of distinct non-empty strings"

    def __repr__(self) -> str:
        return "IdSequence()"


def as_list(values: Sequence | np.ndarray) -> list:
    """A plain list of Python numbers (numpy arrays through ``tolist``, which is exact)."""
    if isinstance(values, np.ndarray):
        return values.tolist()
    return list(values)


def tie_ranks(n: int, ids: Sequence[str] | None) -> list[int]:
    """Rank of each job in the tie-breaking order: ``id_key(ids[i])`` when ids are given, else i.

    >>> tie_ranks(3, ["j10", "j9", "a"])
    [2, 1, 0]
    """
    if ids is None:
        return list(range(n))
    order = sorted(range(n), key=lambda i: id_key(ids[i]))
    ranks = [0] * n
    for r, i in enumerate(order):
        ranks[i] = r
    return ranks


def check_lengths(caller: str, first: str, n: int, **others: Sequence | None) -> None:
    """Raise InvalidParameterError when a sequence's length differs from ``n`` (that of ``first``)."""
    for name, seq in others.items():
        if seq is not None and len(seq) != n:
            raise InvalidParameterError(
                f"The '{name}' parameter of {caller} must have the length of '{first}' ({n}). "
                f"Got length {len(seq)} instead."
            )


def exact_sum(values) -> Any:
    """Sum that stays exact for ints and Fractions (an int when integral) and uses ``math.fsum``
    as soon as a float is involved.

    >>> exact_sum([Fraction(1, 2), Fraction(1, 2)]), exact_sum([0.1] * 10), exact_sum([])
    (1, 1.0, 0)
    """
    values = list(values)
    if any(isinstance(v, float) for v in values):
        return math.fsum(values)
    total = sum(values, 0)
    if isinstance(total, Fraction) and total.denominator == 1:
        return total.numerator
    return total
