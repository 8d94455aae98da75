"""The placement result: :class:`Placement` (frozen), :class:`MethodResult` (what a method
returns) and :class:`FrozenMapping` (the read-only worker -> server assignment).

A :class:`Placement` holds the worker -> server ``assignment``, the GPUs used per server, the
bytes that cross servers, the servers used, the iteration time ``tau`` when a cluster is given,
the method, the solver status and the best proven lower ``bound`` on the objective
(``docs/design.md``). :func:`asrpt.placement.place` builds it; :func:`asrpt.placement.validate_placement`
recomputes every number of it from the assignment alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from .._frozen import FrozenMapping


__all__ = ["FrozenMapping", "Placement", "MethodResult"]

# ---------------------------------------------------------------------------------------------
# The result
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """Where each worker of a job runs, and what that costs.

    Attributes
    ----------
    assignment : Mapping
        Worker -> server index (read-only).
    server_gpus : tuple of (int, int)
        ``(server, gpus)`` for every server the job uses, in server order (the simulator's
        :class:`~asrpt.sim.placer.Allocation` shape).
    cut_bytes : float
        Bytes per iteration on edges whose ends sit on different servers.
    servers_used : int
    tau : float or None
        Seconds per iteration (:func:`asrpt.dnn.perf.iteration_time`) when a cluster was given.
    method : str
        The registered method name.
    status : str
        "optimal" (proven: by the solver or by a shortcut's certificate), "time_limit" (the
        solver stopped with an incumbent) or "heuristic".
    objective : str
        "cut" or "tau": what was minimised.
    bound : float or None
        A proven lower bound on the optimum of the objective (None for heuristics).
    solve_time : float
        Wall seconds spent in :func:`place` (not compared by ``==``).
    detail : Mapping
        Method-specific facts (formulation, shortcut, solver, ...; not compared by ``==``).

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_edge(0, 1, bytes=4.0)
    >>> from asrpt.placement import place
    >>> p = place(G, [1, 1], method="best_fit")
    >>> p.cut_bytes, p.server_gpus, p.value
    (4.0, ((0, 1), (1, 1)), 4.0)
    >>> p.to_dict()["assignment"]
    [[0, 0], [1, 1]]
    """

    assignment: Mapping
    server_gpus: tuple
    cut_bytes: float
    servers_used: int
    tau: float | None
    method: str
    status: str
    objective: str = "cut"
    bound: float | None = None
    solve_time: float = field(default=0.0, compare=False)
    detail: Mapping = field(default_factory=FrozenMapping, compare=False)

    @property
    def value(self) -> float | None:
        """The objective's value: ``cut_bytes`` or ``tau``."""
        return self.cut_bytes if self.objective == "cut" else self.tau

    @property
    def gap(self) -> float | None:
        """Relative gap between the value and the bound (0 when proven optimal), or None."""
        if self.bound is None or self.value is None:
            return None
        if self.value == 0:
            return 0.0
        return max(0.0, (self.value - self.bound) / abs(self.value))

    def to_dict(self) -> dict:
        """A JSON-ready dict; workers that are tuples become lists."""

        def key(w):
            return list(w) if isinstance(w, tuple) else w

        return {
            "assignment": [[key(w), int(h)] for w, h in self.assignment.items()],
            "server_gpus": [[int(h), int(g)] for h, g in self.server_gpus],
            "cut_bytes": self.cut_bytes,
            "servers_used": self.servers_used,
            "tau": self.tau,
            "method": self.method,
            "status": self.status,
            "objective": self.objective,
            "bound": self.bound,
            "solve_time": self.solve_time,
            "detail": dict(self.detail),
        }


@dataclass(frozen=True)
class MethodResult:
    """What a :class:`PlacementMethod` returns: a server index per worker (in
    ``problem.nodes`` order), a status ("optimal", "time_limit", "heuristic"), a proven lower
    bound on the objective (or None) and method-specific details.

    Examples
    --------
    >>> r = MethodResult(np.array([0, 0]), "heuristic")
    >>> r.status, r.bound
    ('heuristic', None)
    """

    assignment: np.ndarray
    status: str = "heuristic"
    bound: float | None = None
    detail: Mapping = field(default_factory=dict)
