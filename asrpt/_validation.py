"""Parameter constraints declared as data and checked once, at the boundary.

Borrowed from scikit-learn's ``_param_validation``: every public function and every plugin class
declares a ``parameter_constraints`` dict mapping each parameter name to a list of accepted
constraints; a value is accepted when it satisfies any of them. Violations raise
:class:`~asrpt.errors.InvalidParameterError` with one line:

    The 'gap' parameter of solve must be a float in [0, 1]. Got -0.1 instead.

Constraints understood here:

- ``Interval(Real | Integral, left, right, closed=...)``
- ``Options(str, {...})`` (a fixed set of values)
- ``InstanceOf(cls)``
- ``None`` (the value ``None``), ``"boolean"``, ``"seed"`` (None, a non-negative int or a
  ``numpy.random.Generator``), ``callable``.

Tests derive invalid values from the constraints (:func:`make_invalid_value`), so every declared
parameter is exercised without hand-written lists.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

from .errors import InvalidParameterError

__all__ = [
    "Interval",
    "Options",
    "InstanceOf",
    "validate_parameter_constraints",
    "validate_params",
    "make_invalid_value",
    "Params",
    "is_number",
    "is_integer",
]

Real = numbers.Real
Integral = numbers.Integral


def is_number(value: Any) -> bool:
    """True for int, float, Fraction and numpy numbers, False for bool and everything else."""
    if type(value) in (int, float):  # the common case, without the abstract-class check
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, bool)  # numpy.bool_ is not Real


def is_integer(value: Any) -> bool:
    """True for int and numpy integers, False for bool, floats (even integral ones) and others."""
    if type(value) is int:
        return True
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _fmt(x: Any) -> str:
    if x is None:
        return "inf"
    if isinstance(x, Fraction):
        return str(x)
    return repr(x) if not isinstance(x, float) else f"{x:g}"


@dataclass(frozen=True)
class Interval:
    """A number in an interval; ``type`` is ``Real`` (any number) or ``Integral`` (an integer).

    (``int`` and ``float`` are accepted as aliases.) ``closed`` is one of ``"both"``, ``"left"``, ``"right"``, ``"neither"``; ``None`` as a bound
    means unbounded on that side. NaN and infinities are never accepted: asrpt parameters are
    finite.

    >>> Interval(Real, 0, 1, closed="left").is_satisfied_by(0.5)
    True
    >>> str(Interval(Integral, 1, None, closed="left"))
    'an int in [1, inf)'
    """

    type: type
    left: Any
    right: Any
    closed: str = "both"

    def is_satisfied_by(self, value: Any) -> bool:
        if self.type in (Integral, int):
            if not is_integer(value):
                return False
        elif not is_number(value) or not math.isfinite(value):
            return False
        if self.left is not None:
            if value < self.left or (value == self.left and self.closed in ("right", "neither")):
                return False
        if self.right is not None:
            if value > self.right or (value == self.right and self.closed in ("left", "neither")):
                return False
        return True

    def __str__(self) -> str:
        kind = "an int" if self.type in (Integral, int) else "a float"
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        left = "-inf" if self.left is None else _fmt(self.left)
        return f"{kind} in {lb}{left}, {_fmt(self.right)}{rb}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values, e.g. ``Options(str, {"highs", "cbc"})``."""

    type: type
    options: frozenset

    def __init__(self, type_: type, options):
        object.__setattr__(self, "type", type_)
        object.__setattr__(self, "options", frozenset(options))

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, self.type) and value in self.options

    def __str__(self) -> str:
        shown = ", ".join(repr(o) for o in sorted(self.options, key=str))
        return f"a {self.type.__name__} among {{{shown}}}"


@dataclass(frozen=True)
class InstanceOf:
    """An instance of a class (or tuple of classes)."""

    type: Any

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, self.type)

    def __str__(self) -> str:
        types = self.type if isinstance(self.type, tuple) else (self.type,)
        names = " or ".join(f"{t.__module__}.{t.__qualname__}".removeprefix("builtins.") for t in types)
        return f"an instance of {names}"


def _is_numpy_bool(value: Any) -> bool:
    # numpy is not imported here (this module is on every command's start-up path): before numpy
    # is loaded no value can be a numpy one
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.bool_)


def _is_numpy_generator(value: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.random.Generator)


def _satisfied(constraint: Any, value: Any) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, str):
        if constraint == "boolean":
            return isinstance(value, bool) or _is_numpy_bool(value)
        if constraint == "seed":
            return value is None or _is_numpy_generator(value) or (
                is_integer(value) and value >= 0
            )
        raise ValueError(f"unknown constraint {constraint!r}")
    if constraint is callable:
        return callable(value)
    if isinstance(constraint, type):
        return isinstance(value, constraint) and not (
            constraint in (int, float) and isinstance(value, bool)
        )
    return constraint.is_satisfied_by(value)


def _accepts(accepted: list, value: Any) -> bool:
    for c in accepted:  # a loop, not any(<generator>): this runs on every validated call
        if _satisfied(c, value):
            return True
    return False


def _describe(constraint: Any) -> str:
    if constraint is None:
        return "None"
    if constraint == "boolean":
        return "a bool"
    if constraint == "seed":
        return "None, a non-negative int or a numpy.random.Generator"
    if constraint is callable:
        return "a callable"
    if isinstance(constraint, type):
        return f"an instance of {constraint.__qualname__}"
    return str(constraint)


def _describe_all(constraints: list) -> str:
    parts = [_describe(c) for c in constraints]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def validate_parameter_constraints(constraints: dict, params: dict, caller_name: str) -> None:
    """Check ``params`` against ``constraints``; raise InvalidParameterError on the first violation.

    Parameters missing from ``constraints`` are a programming error (every parameter must be
    declared), reported as such.

    >>> validate_parameter_constraints({"gap": [Interval(Real, 0, 1)]}, {"gap": -0.1}, "solve")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: The 'gap' parameter of solve must be a float in [0, 1]. Got -0.1 instead.
    """
    for name, value in params.items():
        if name not in constraints:
            raise InvalidParameterError(
                f"The '{name}' parameter of {caller_name} has no declared constraint."
            )
        accepted = constraints[name]
        if accepted == "no_validation":
            continue
        if _accepts(accepted, value):
            continue
        shown = repr(value) if not isinstance(value, float) else f"{value:g}"
        if len(shown) > 60:
            shown = shown[:57] + "..."
        raise InvalidParameterError(
            f"The '{name}' parameter of {caller_name} must be {_describe_all(accepted)}. "
            f"Got {shown} instead."
        )


def validate_params(constraints: dict) -> Callable:
    """Decorator: validate a public function's arguments against ``constraints`` on each call.

    The constraints are attached as ``func.parameter_constraints`` so tests can read them.
    """

    def decorator(func: Callable) -> Callable:
        sig = inspect.signature(func)
        missing = set(sig.parameters) - set(constraints)
        if missing:  # a programming error, caught at import time
            raise TypeError(f"{func.__qualname__}: no constraint declared for {sorted(missing)}")

        binder = _fast_binder(sig)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            arguments = binder(args, kwargs) if binder is not None else None
            if arguments is None:  # the general (slower) path; raises TypeError on bad calls
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                arguments = dict(bound.arguments)
            validate_parameter_constraints(constraints, arguments, func.__name__)
            return func(*args, **kwargs)

        wrapper.parameter_constraints = constraints  # type: ignore[attr-defined]
        return wrapper

    return decorator


def _fast_binder(sig: inspect.Signature) -> Callable | None:
    """A function ``(args, kwargs) -> {name: value}`` in signature order, defaults applied, equal
    to ``sig.bind(...)`` + ``apply_defaults()`` for well-formed calls and None for anything else
    (then the caller binds the slow way, which raises the right TypeError); None when the
    signature has ``*args``, ``**kwargs`` or positional-only parameters.

    ``inspect.Signature.bind`` costs several microseconds a call, which added up to a tenth of a
    whole simulation with DNN jobs (validated helpers are called in its loop).

    >>> bind = _fast_binder(inspect.signature(lambda a, b=2, *, c=3: None))
    >>> bind((1,), {"c": 4}), bind((), {}), bind((1, 2, 3), {})
    ({'a': 1, 'b': 2, 'c': 4}, None, None)
    """
    params = list(sig.parameters.values())
    if any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        return None
    names = [p.name for p in params]
    positional = [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
    n_positional = len(positional)
    missing = object()
    defaults = {p.name: (missing if p.default is p.empty else p.default) for p in params}

    def bind(args: tuple, kwargs: dict) -> dict | None:
        if len(args) > n_positional:
            return None
        given = dict(zip(positional, args))
        if kwargs:
            for name in kwargs:
                if name in given or name not in defaults:
                    return None
            given.update(kwargs)
        out = {}
        for name in names:
            value = given.get(name, missing)
            if value is missing:
                value = defaults[name]
                if value is missing:
                    return None
            out[name] = value
        return out

    return bind


class _Fresh:
    """A value of a type nobody accepts."""

    def __repr__(self) -> str:
        return "<fresh object>"


def make_invalid_value(constraints: list) -> Any:
    """Return a value that satisfies none of ``constraints`` (for parameter-validation tests).

    >>> make_invalid_value([Interval(Real, 0, 1)])
    -1
    """
    candidates: list[Any] = []
    for c in constraints:
        if isinstance(c, Interval):
            if c.left is not None:
                candidates.append(c.left - 1)
            if c.right is not None:
                candidates.append(c.right + 1)
            candidates.append(float("nan"))
        elif isinstance(c, Options):
            candidates.append("__not_an_option__" if c.type is str else _Fresh())
    candidates.append(_Fresh())
    for value in candidates:
        if not any(_satisfied(c, value) for c in constraints):
            return value
    raise ValueError(f"cannot build an invalid value for {constraints}")


class Params:
    """Mixin for plugin classes: keyword-only constructor that only stores its parameters.

    Subclasses declare ``parameter_constraints`` (a class dict) and call
    ``self._validate_params()`` where they start work (``reset``/``fit``/``__call__``), never in
    ``__init__``. ``get_params()`` reads the constructor signature, so ``type(p)(**p.get_params())``
    rebuilds an equal object.
    """

    parameter_constraints: dict = {}

    @classmethod
    def _param_names(cls) -> list[str]:
        init = cls.__init__
        if init is object.__init__:
            return []
        sig = inspect.signature(init)
        names = []
        for p in sig.parameters.values():
            if p.name == "self":
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ must not take *args or **kwargs")
            names.append(p.name)
        return sorted(names)

    def get_params(self) -> dict:
        """The constructor parameters and their current values."""
        return {name: getattr(self, name) for name in self._param_names()}

    def _validate_params(self) -> None:
        validate_parameter_constraints(
            self.parameter_constraints, self.get_params(), type(self).__name__
        )

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.get_params() == other.get_params()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(sorted(self.get_params().items(), key=lambda kv: kv[0]))))
