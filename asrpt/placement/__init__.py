"""Placement: the placement problem and its methods, and the simulator's placers (issues 4, 5).

A job's worker graph (:func:`asrpt.dnn.parallel.worker_graph`: workers as vertices, bytes per
iteration on edges) and the free GPUs per server go in; a frozen :class:`Placement` comes out:
which server each worker runs on, the bytes that cross servers, the servers used, the iteration
time when a cluster is given, and the solver status. One entry point, :func:`place`; methods are
plugins registered by name (:func:`register`):

- ``ilp`` (exact): certified shortcuts, then the count formulation (ring-aware symmetry
  reduction) or the plain one; ``objective="tau"`` minimises the modelled iteration time;
- ``brute_force`` (exact, tiny graphs);
- heuristics ``consolidate``, ``greedy``, ``metis`` (optional pymetis), ``kl``, and the controls
  ``random`` and ``spread_workers`` (the old names ``best_fit`` and ``spread`` are still read; the
  simulator's count placers of those names are another idea, see :mod:`.placers`).

:func:`validate_placement` recomputes every reported number from the assignment alone.

The simulator's placers live here too (:func:`make_placer`, :data:`PLACERS`): the count placers
and yarn (:mod:`.placers`, no heavy import) and the graph placers "ilp", "ilp_tau", "greedy",
"metis", "kl" that wrap the methods above (:mod:`.graph_placers`, loaded on first use). Importing
this package loads neither networkx nor the ILP stack: the names below are imported on first
access. ``docs/placement.md`` has the formulations, the shortcuts and measured figures.

Examples
--------
>>> from asrpt.instance import Job, Parallelism
>>> from asrpt.dnn.parallel import worker_graph
>>> from asrpt.placement import place, validate_placement
>>> W = worker_graph(Job("j", 0, 16, model="gpt2", parallelism=Parallelism(2, 2, 4),
...                      iterations=1), "A100")
>>> p = place(W, [8, 4, 4])
>>> p.status, p.servers_used, validate_placement(W, [8, 4, 4], p)
('optimal', 3, ())
"""

from __future__ import annotations

import importlib

from ..registry import parse_spec
from .placers import PLACERS, register_placer

#: name -> the module that defines it (imported on first access: networkx, numpy, the ILP stack)
_LAZY = {
    **dict.fromkeys(("METHODS", "OBJECTIVES", "FrozenMapping", "MethodResult", "Placement",
                     "PlacementMethod", "PlacementProblem", "available_methods", "is_worker_graph",
                     "make_method", "place", "register", "validate_placement"), "base"),
    **dict.fromkeys(("BestFit", "Greedy", "KernighanLin", "Metis", "RandomPlacement", "Spread",
                     "consolidation_servers", "has_pymetis", "packings"), "heuristics"),
    **dict.fromkeys(("FORMULATIONS", "BruteForce", "ILPPlacement", "RingStructure",
                     "cut_lower_bound", "fiedler_bound", "ring_structure"), "ilp"),
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if module == "base":
        from . import ilp  # noqa: F401  (the methods register themselves on import)
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def _load_graph_placers() -> None:
    from . import graph_placers  # noqa: F401  (registers "ilp", "ilp_tau", "greedy", "metis", "kl")


def make_placer(spec, **params):
    """A simulator placer from ``"name[:key=value...]"`` (or a Placer, validated and returned).

    Count placers need no heavy import; the graph placers are loaded on the first name the count
    placers do not know.

    Examples
    --------
    >>> make_placer("best_fit").name, make_placer("ilp:time_limit=5").time_limit
    ('best_fit', 5)
    >>> make_placer("bestfit")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: unknown placement 'bestfit' (did you mean 'best_fit'?); known: ...
    """
    if isinstance(spec, str) and parse_spec(spec, "placement")[0] not in PLACERS:
        _load_graph_placers()
    return PLACERS.create(spec, **params)


def placer_names() -> tuple[tuple[str, str], ...]:
    """``(name, one-line description)`` of every simulator placer (``asrpt simulate --list-placers``).

    >>> dict(placer_names())["yarn"]
    "the Tiresias simulator's yarn: whole servers first, never across switches"
    """
    _load_graph_placers()
    return PLACERS.describe()


__all__ = ["PLACERS", "register_placer", "make_placer", "placer_names", *_LAZY]
