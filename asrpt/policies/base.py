"""The policy interface, the decision it returns, and the registry of policies by name.

A policy is a small plugin: ``decide(view) -> Decision``. It sees a read-only
:class:`~asrpt.sim.view.ClusterView` (never the true job sizes unless it declares
``clairvoyant = True``) and returns a priority order of jobs. The engine
(:mod:`asrpt.sim.engine`) turns the order into starts and preemptions:

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
whichever of ``decide``/``next_wake`` comes first.

Policies follow the plugin contract of ``docs/design.md``: keyword-only constructors that only
store parameters, ``parameter_constraints``, state built in ``reset``. They register by name with
:func:`register_policy` (optionally with preset parameters, e.g. ``"fifo-strict"``), and
:func:`make_policy` builds one from a spec such as ``"a-srpt"`` or
``"tiresias:thresholds=[3250,7200]"``.
"""

from __future__ import annotations

import abc
import json
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .._validation import Params
from ..errors import InvalidParameterError, unknown_name
from ..instance import Cluster, Number
from ..sim.view import ClusterView, JobView

__all__ = ["Decision", "Policy", "PredictorPolicy", "POLICIES", "register_policy", "make_policy", "policy_names",
           "parse_policy_spec", "split_outside"]


@dataclass(frozen=True)
class Decision:
    """A policy's answer at one decision point.

    Attributes
    ----------
    order : sequence of JobView
        Jobs in priority order (see the module docstring for what preemptive and non-preemptive
        policies list).
    backfill : bool
        Skip jobs that do not fit and go on (True), or stop at the first that does not (False).
    wake_at : number or None
        Consult the policy again at this time even if nothing else happens.
    """

    order: Sequence[JobView]
    backfill: bool = True
    wake_at: Number | None = None


class Policy(Params, abc.ABC):
    """Base class of scheduling policies.

    Class attributes describe the policy to the engine and to the common tests:
    ``preemptive`` (may stop running jobs), ``clairvoyant`` (reads true sizes; may be a property
    that depends on parameters, e.g. the predictor), ``work_conserving`` (never leaves a job
    waiting when it fits in the idle GPUs after the decision).
    """

    name = "policy"
    preemptive: bool = False
    clairvoyant: bool = False
    work_conserving: bool = False

    def reset(self, cluster: Cluster, *, seed=None) -> None:
        """Prepare for a new run on ``cluster`` (validate parameters, build state)."""
        self._validate_params()

    @abc.abstractmethod
    def decide(self, view: ClusterView) -> Decision:
        """The decision at ``view.now``."""

    def next_wake(self, view: ClusterView) -> Number | None:
        """Called after the engine applied a decision (``view`` shows the jobs it started and
        stopped); return the next time the policy must be consulted even if nothing happens
        (e.g. when a running job will cross a threshold), or None. Policies that do not override
        it are never asked. Return the earliest time needed every time: the engine wakes the policy
        at the earliest requested time and asks again."""
        return None

    def report(self) -> dict:
        """JSON-ready data the policy wants recorded with the run (default: nothing)."""
        return {}

    def describe(self) -> str:
        """The registered name plus the parameters that differ from the preset's."""
        return self.name


class PredictorPolicy(Policy):
    """Base class of policies with a ``predictor`` parameter (A-SRPT, SJF, SRSF, QSSF, Themis).

    ``reset`` starts a :class:`~asrpt.predict.base.PredictionTracker` (``tracker_``); the policy is
    clairvoyant exactly when its predictor is; ``report`` records every job's first and last
    prediction by id (subclasses add their own data to it).
    """

    @property
    def clairvoyant(self) -> bool:  # type: ignore[override]
        from ..predict.base import make_predictor

        tracker = getattr(self, "tracker_", None)
        return (tracker.predictor if tracker else make_predictor(self.predictor)).clairvoyant

    def reset(self, cluster: Cluster, *, seed=None) -> None:
        from ..predict.base import PredictionTracker, make_predictor

        super().reset(cluster, seed=seed)
        self.tracker_ = PredictionTracker(make_predictor(self.predictor), seed)

    def report(self) -> dict:
        return self.tracker_.report()


# name -> (class, preset parameters)
POLICIES: dict[str, tuple[type, dict]] = {}


def register_policy(name: str, **preset: Any) -> Callable[[type], type]:
    """Class decorator registering a policy class under ``name`` with preset parameters.

    A class may be registered under several names (e.g. ``fifo`` and ``fifo-strict``).
    """

    def deco(cls: type) -> type:
        if name in POLICIES:
            raise ValueError(f"policy {name!r} registered twice")
        POLICIES[name] = (cls, dict(preset))
        if "name" not in cls.__dict__:
            cls.name = name
        return cls

    return deco


def _load_all() -> None:
    from . import _registry  # noqa: F401  (imports every policy module)


def policy_names() -> tuple[str, ...]:
    """Every registered policy name, sorted."""
    _load_all()
    return tuple(sorted(POLICIES))


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def split_outside(text: str, sep: str) -> list[str]:
    """Split ``text`` on ``sep`` where it is outside quotes and brackets (a spec's own values
    may contain the separator).

    >>> split_outside('a-srpt:predictor="noisy:sigma=1",fifo', ",")
    ['a-srpt:predictor="noisy:sigma=1"', 'fifo']
    >>> split_outside("tiresias:thresholds=[1,2]", ":")
    ['tiresias', 'thresholds=[1,2]']
    """
    parts, depth, quote, cur = [], 0, None, []
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def parse_policy_spec(spec: str) -> tuple[str, dict]:
    """Split ``"name:key=value:key=value"`` into the name and a parameter dict.

    Values are read as JSON when they parse (numbers, true/false, lists, quoted strings), else as
    plain strings; quote a value that itself contains ':' (a nested spec).

    >>> parse_policy_spec("tiresias:thresholds=[3250,7200]:promote_knob=0")
    ('tiresias', {'thresholds': [3250, 7200], 'promote_knob': 0})
    >>> parse_policy_spec('a-srpt:predictor="noisy:sigma=1"')
    ('a-srpt', {'predictor': 'noisy:sigma=1'})
    """
    name, *parts = split_outside(spec.strip(), ":")
    params = {}
    for part in parts:
        if "=" not in part:
            raise InvalidParameterError(f"policy spec {spec!r}: {part!r} is not key=value")
        key, value = part.split("=", 1)
        params[key.strip()] = _parse_value(value.strip())
    return name.strip(), params


def make_policy(spec: "str | Policy", **params: Any) -> Policy:
    """Build a policy from a registered name (with optional ``:key=value`` parameters) or return a
    Policy instance as is. Unknown names and parameters raise InvalidParameterError."""
    if isinstance(spec, Policy):
        return spec
    if not isinstance(spec, str):
        raise InvalidParameterError(f"a policy must be a name or a Policy, got {type(spec).__name__}")
    _load_all()
    name, spec_params = parse_policy_spec(spec)
    if name not in POLICIES:
        raise unknown_name("policy", name, POLICIES)
    cls, preset = POLICIES[name]
    kwargs = {**preset, **spec_params, **params}
    known = set(cls._param_names())
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise InvalidParameterError(
            f"policy {name!r} has no parameter {unknown[0]!r}; its parameters: {', '.join(sorted(known)) or 'none'}")
    policy = cls(**kwargs)
    policy.name = name
    policy._validate_params()
    return policy
