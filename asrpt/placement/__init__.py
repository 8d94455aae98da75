"""Placement of a job's workers on servers with free GPUs (issue 4).

A job's worker graph (:func:`asrpt.dnn.parallel.worker_graph`: workers as vertices, bytes per
iteration on edges) and the free GPUs per server go in; a frozen :class:`Placement` comes out:
which server each worker runs on, the bytes that cross servers, the servers used, the iteration
time when a cluster is given, and the solver status. One entry point, :func:`place`; methods are
plugins registered by name (:func:`register`):

- ``ilp`` (exact): certified shortcuts, then the count formulation (ring-aware symmetry
  reduction) or the plain one; ``objective="tau"`` minimises the modelled iteration time;
- ``brute_force`` (exact, tiny graphs);
- heuristics ``best_fit``, ``greedy``, ``metis`` (optional pymetis), ``kl``, and the controls
  ``random`` and ``spread``.

:func:`validate_placement` recomputes every reported number from the assignment alone.
Importing this package also registers the simulator placers of :mod:`asrpt.placement.sim`
("ilp", "ilp_tau", "greedy", "metis", "kl"). ``docs/placement.md`` has the formulations, the
shortcuts and measured figures.

Examples
--------
>>> from asrpt.instance import Job, Parallelism
>>> from asrpt.dnn.parallel import worker_graph
>>> W = worker_graph(Job("j", 0, 16, model="gpt2", parallelism=Parallelism(2, 2, 4),
...                      iterations=1), "A100")
>>> p = place(W, [8, 4, 4])
>>> p.status, p.servers_used, validate_placement(W, [8, 4, 4], p)
('optimal', 3, ())
"""

from .base import (METHODS, OBJECTIVES, FrozenMapping, MethodResult, Placement, PlacementMethod,
                   PlacementProblem, available_methods, is_worker_graph, make_method, place,
                   register, validate_placement)
from .heuristics import (BestFit, Greedy, KernighanLin, Metis, RandomPlacement, Spread,
                         consolidation_servers, has_pymetis, packings)
from .ilp import (FORMULATIONS, BruteForce, ILPPlacement, RingStructure, cut_lower_bound,
                  fiedler_bound, ring_structure)
from . import sim  # noqa: F401  (registers the simulator placers)

__all__ = [
    "METHODS",
    "OBJECTIVES",
    "FORMULATIONS",
    "FrozenMapping",
    "MethodResult",
    "Placement",
    "PlacementMethod",
    "PlacementProblem",
    "available_methods",
    "is_worker_graph",
    "make_method",
    "place",
    "register",
    "validate_placement",
    "BestFit",
    "Greedy",
    "KernighanLin",
    "Metis",
    "RandomPlacement",
    "Spread",
    "consolidation_servers",
    "has_pymetis",
    "packings",
    "BruteForce",
    "ILPPlacement",
    "RingStructure",
    "cut_lower_bound",
    "fiedler_bound",
    "ring_structure",
]
