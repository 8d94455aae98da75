"""``simulate(instance, policy, placement=None, ...)``: a run from names or objects.

This module owns the one step that turns what a user names (a policy spec such as
``"tiresias:thresholds=[3250]"``, a placement name) into the objects the engine
(:func:`asrpt.engine.core.run_engine`) takes, and it copies the policy so that runs never share
state. The engine itself knows no names.
"""

from __future__ import annotations

from typing import Callable

from .._validation import validate_params
from ..instance import Instance
from ..engine.core import RUN_OPTIONS, run_engine
from ..engine.records import SimResult

__all__ = ["simulate"]


@validate_params({"instance": [Instance], "policy": "no_validation", "placement": "no_validation",
                  **RUN_OPTIONS})
def simulate(instance: Instance, policy, placement=None, *, preemption_cost=0,
             preemption_point: str = "iteration", seed=0, check_invariants: bool = False,
             progress: Callable | None = None, observer=None, label: str | None = None) -> SimResult:
    """Simulate ``policy`` on ``instance``; return the per-job records and summary metrics.

    Parameters
    ----------
    instance : Instance
        Cluster and jobs (abstract or DNN).
    policy : str or Policy
        A registered policy name (e.g. ``"a-srpt"``, ``"fifo"``, ``"tiresias:thresholds=[3250]"``)
        or a Policy object. A fresh copy is used, so a Policy object can be reused across runs.
    placement : str, Placer or None
        Placement step for starting jobs (``"best_fit"``, ``"first_fit"``, ``"most_free"``,
        ``"spread"``, ``"yarn"``, or a graph placement such as ``"ilp"``, ``"greedy"``; see
        :mod:`asrpt.placement.placers`). None: the policy's :meth:`~asrpt.state.Policy.preferred_placement`
        if it names one, else ``"best_fit"``.
    preemption_cost : number
        Seconds a preempted job spends restarting when it runs again (0: the theory's setting).
    preemption_point : {"iteration", "immediate"}
        Where a preempted DNN job stops: at its next iteration boundary (its GPUs stay busy until
        then), or at once, keeping the fraction of the iteration done (a mid-iteration
        checkpoint; Theorem 1's assumption). Abstract jobs always stop at once.
    seed : int, Generator or None
        Passed to the policy's ``reset`` (for predictors that draw noise).
    check_invariants : bool
        Check allocations, GPU accounting and work conservation after every decision, and the
        records at the end (slower; for tests).
    progress : callable or None
        Called as ``progress(jobs_done, jobs_total)`` from time to time.
    observer : callable, Observer or None
        Sees every decision pass read-only (:class:`asrpt.engine.core.Observer`).
    label : str or None
        The run's display label (:attr:`SimResult.label`); None: the policy's name.

    Returns
    -------
    SimResult

    Raises
    ------
    AsrptError
        The policy listed an inactive job, or left jobs waiting with nothing left to happen.

    Examples
    --------
    >>> res = simulate(two_server_instance, "fifo")
    >>> {r.id: r.completion for r in res.records}
    {'a': 4, 'b': 1, 'c': 3}
    """
    from ..placement import make_placer
    from ..policies import make_policy

    template = make_policy(policy)
    pol = type(template)(**template.get_params())  # a fresh copy: runs never share policy state
    pol.name = template.name                        # the registered name (e.g. "fifo-strict")
    if placement is None:
        placement = pol.preferred_placement() or "best_fit"
    return run_engine(instance, pol, make_placer(placement), preemption_cost=preemption_cost,
                      preemption_point=preemption_point, seed=seed, check_invariants=check_invariants,
                      progress=progress, observer=observer, label=label)
