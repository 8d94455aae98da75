"""The policy interface, the decision it returns, and the registry of policies by name.

A policy is a small plugin: ``decide(view) -> Decision`` (:class:`~asrpt.state.Policy`,
:class:`~asrpt.state.Decision`). It sees a read-only :class:`~asrpt.state.ClusterView` (never the true job sizes unless it declares
``clairvoyant = True``) and returns a priority order of jobs. The engine
(:mod:`asrpt.engine.core`) turns the order into starts and preemptions:

- **preemptive** policies list the jobs they want running, best first; the engine selects greedily
  by GPU count in that order (``backfill=True``: a job that does not fit is skipped and the scan
  goes on; ``False``: the scan stops at the first job that does not fit), preempts running jobs
  left out, and places the selected waiting jobs in order;
- **non-preemptive** policies list waiting jobs only; running jobs always keep their GPUs, and
  the engine starts jobs in order on the idle GPUs (skip or stop as above).

A policy may also ask to be consulted again at a time: ``Decision.wake_at`` (known when deciding,
e.g. the next round of a round-based policy), or :meth:`Policy.next_wake`, asked after the
decision was applied (e.g. Tiresias at the next queue demotion of a job that just started).
What happened since the previous call (arrivals, completions, starts, stops) is shown once, to
whichever of ``decide``/``next_wake`` comes first. An order given as a
:class:`~asrpt.order.MergedOrder` (sorted running and waiting entries) lets the engine find, from
the entries (checked against its running set), the passes where it would select exactly the
running jobs, and skip reading it. A preemptive decision may hold until a time
(``Decision.stands_until``: a round-based policy's round end): until then, at passes where no
job arrived or completed, the policy is not asked; the engine applies "the running jobs, then
the held order" itself (the reference engine too), and shows those passes' deltas with the
policy's next view.

Policies follow the plugin contract of ``docs/design.md``: keyword-only constructors that only
store parameters, ``parameter_constraints``, state built in ``reset``. They register by name with
:func:`register_policy` (optionally with preset parameters, e.g. ``"fifo-strict"``) in
:data:`POLICIES` (an :class:`asrpt.registry.Registry`), and :func:`asrpt.policies.make_policy`
builds one from a spec such as ``"a-srpt"`` or ``"tiresias:thresholds=[3250,7200]"``.
docs/policies.md shows how to add one, and how to run your own from the command line.
"""

from __future__ import annotations

from typing import Any, Callable

from ..instance import Cluster
from ..registry import Registry
from ..state import Decision, Policy

__all__ = ["Decision", "Policy", "PredictorPolicy", "POLICIES", "register_policy", "predictor_of"]


class PredictorPolicy(Policy):
    """Base class of policies with a ``predictor`` parameter (A-SRPT, SJF, SRSF, QSSF, Themis).

    ``reset`` starts a :class:`~asrpt.predict.base.PredictionTracker` (``tracker_``); the policy is
    clairvoyant exactly when its predictor is; ``report`` records every job's first and last
    prediction by id (subclasses add their own data to it).
    """

    @property
    def clairvoyant(self) -> bool:  # type: ignore[override]
        from ..predict import make_predictor

        tracker = getattr(self, "tracker_", None)
        return (tracker.predictor if tracker else make_predictor(self.predictor)).clairvoyant

    def reset(self, cluster: Cluster, *, seed=None) -> None:
        from ..predict.base import PredictionTracker
        from ..predict import make_predictor

        super().reset(cluster, seed=seed)
        self.tracker_ = PredictionTracker(make_predictor(self.predictor), seed)

    def report(self) -> dict:
        return self.tracker_.report()


def predictor_of(params) -> str:
    """The predictor named by a policy's parameters (``get_params()``, or a run's recorded
    ``policy_params``): its ``predictor``, or ``"none"`` for a policy that takes none (FIFO,
    Tiresias, Gavel). What tables and batch rows print beside each run.

    >>> predictor_of({"predictor": "oracle", "key": "gpu_time"}), predictor_of({"backfill": True})
    ('oracle', 'none')
    """
    value = params.get("predictor")
    return "none" if value is None else str(value)


#: The policies by name: ``POLICIES[name]`` is ``(class, preset parameters)``; build one with
#: :func:`asrpt.policies.make_policy`.
POLICIES = Registry("policy", base=Policy)


def register_policy(name: str, *, description: str | None = None, **preset: Any) -> Callable[[type], type]:
    """Class decorator registering a policy class under ``name`` with preset parameters.

    A class may be registered under several names (e.g. ``fifo`` and ``fifo-strict``); the
    description (one line, for ``asrpt simulate --list-policies``) defaults to the first line of
    the class docstring.

    >>> @register_policy("doc-example-idle", description="starts nothing")
    ... class Idle(Policy):
    ...     def decide(self, view):
    ...         return Decision(())
    >>> POLICIES.create("doc-example-idle").name
    'doc-example-idle'
    >>> POLICIES.unregister("doc-example-idle")
    """
    return POLICIES.register(name, description=description, **preset)
