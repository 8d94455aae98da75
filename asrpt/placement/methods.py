"""Placement methods: the plugin base :class:`PlacementMethod` and its registry
(:data:`METHODS`, :func:`register`, :func:`make_method`, :func:`available_methods`).

A method is a ``Params`` subclass with a keyword-only constructor whose ``run(problem)`` returns
a :class:`~asrpt.placement.result.MethodResult`; the exact ones (``ilp``, ``brute_force``) live in
:mod:`asrpt.placement.ilp`, the heuristics in :mod:`asrpt.placement.heuristics`.
"""

from __future__ import annotations

import abc
from typing import Any, Callable


from .._validation import Params, validate_params
from ..registry import Registry
from .problem import PlacementProblem
from .result import MethodResult

__all__ = ["PlacementMethod", "METHODS", "register", "make_method", "available_methods"]

# ---------------------------------------------------------------------------------------------
# Methods and their registry
# ---------------------------------------------------------------------------------------------


class PlacementMethod(Params, abc.ABC):
    """Base class of placement methods (plugins).

    A method is a :class:`~asrpt._validation.Params` subclass with a keyword-only constructor
    that only stores its parameters, registered by name with :func:`register`. :func:`place`
    builds a :class:`PlacementProblem` and calls :meth:`run`, which returns a
    :class:`MethodResult`; :func:`place` turns it into a :class:`Placement`.

    Attributes
    ----------
    name : str
        The registered name.
    exact : bool
        True when the method proves optimality (its results are lower bounds for the others).

    Examples
    --------
    >>> import networkx as nx, numpy as np
    >>> from asrpt.placement import place
    >>> class Everything(PlacementMethod):
    ...     def run(self, problem):
    ...         return MethodResult(np.zeros(problem.n, dtype=int))
    >>> import networkx as nx
    >>> place(nx.empty_graph(2), [2], method=Everything()).server_gpus
    ((0, 2),)
    """

    name = "custom"
    exact = False

    @abc.abstractmethod
    def run(self, problem: PlacementProblem) -> MethodResult:
        """Place the workers of ``problem``; the assignment must respect ``problem.free``."""


class _MethodSpec:
    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, (str, PlacementMethod))

    def __str__(self) -> str:
        return "a registered method name or a PlacementMethod"


#: Registered methods: ``METHODS[name]`` is the class (an :class:`asrpt.registry.Registry`).
METHODS = Registry("placement method", base=PlacementMethod, item=lambda e: e.target, validate_instances=True)


@validate_params({"name": [str], "description": [None, str]})
def register(name: str, *, description: str | None = None) -> Callable[[type], type]:
    """Class decorator registering a :class:`PlacementMethod` under ``name``.

    Parameters
    ----------
    name : str
    description : str or None
        One line for listings (default: the first line of the class docstring).

    Returns
    -------
    callable
        The decorator; it sets ``cls.name`` and returns the class.

    Raises
    ------
    ValueError
        When the name is taken (a programming error, raised at import time).

    Examples
    --------
    >>> import numpy as np
    >>> @register("doc-example-all-on-first")
    ... class AllOnFirst(PlacementMethod):
    ...     def run(self, problem):
    ...         return MethodResult(np.full(problem.n, problem.servers[0]))
    >>> "doc-example-all-on-first" in available_methods()
    True
    >>> _ = METHODS.pop("doc-example-all-on-first")
    """

    def deco(cls: type) -> type:
        if not (isinstance(cls, type) and issubclass(cls, PlacementMethod)):
            raise TypeError(f"{cls!r} is not a PlacementMethod subclass")
        METHODS.register(name, cls, description=description)
        cls.name = name
        return cls

    return deco


@validate_params({})
def available_methods() -> tuple[str, ...]:
    """Every method name :func:`place` accepts, sorted: the registered names and the old
    spellings ``best_fit`` and ``spread`` (of ``consolidate`` and ``spread_workers``), which
    listings do not show (``METHODS.names()``, ``METHODS.describe()``).

    Examples
    --------
    >>> {"ilp", "best_fit", "greedy", "kl"} <= set(available_methods())
    True
    """
    return tuple(sorted(METHODS))


@validate_params({"spec": [_MethodSpec()]})
def make_method(spec) -> PlacementMethod:
    """A method instance from a registered name (or an instance, validated and returned).

    Parameters
    ----------
    spec : str or PlacementMethod

    Returns
    -------
    PlacementMethod

    Raises
    ------
    InvalidParameterError
        Unknown name (the message lists the known ones, with a did-you-mean), or an instance
        with invalid parameters.

    Examples
    --------
    >>> make_method("greedy").name
    'greedy'
    >>> make_method("gredy")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: unknown placement method 'gredy' (did you mean 'greedy'?); known: ...
    """
    return METHODS.create(spec)
