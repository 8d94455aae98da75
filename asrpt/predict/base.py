"""Predictors of a job's total work (iterations for DNN jobs, seconds for abstract jobs).

One interface for every predictor, used by A-SRPT and by the size-aware baselines alike:

- ``reset(seed=None)`` starts a run with no history (and validates parameters);
- ``observe(completed)`` learns online from jobs that completed (their true work is revealed
  then; nothing else is ever learned from);
- ``predict(job, *, attained=0, truth=None) -> work`` predicts a job's total work at submission
  (``attained=0``) or given the work already done (the adaptive re-prediction of model.md
  section 6, step 3). ``truth`` is passed only to predictors that declare ``clairvoyant = True``
  (the oracle and the synthetic noisy predictor, which are built from the truth by definition).

``fit(completed)`` is ``reset()`` followed by ``observe(completed)`` (scikit-learn style).
Predictors register by name (:func:`make_predictor` builds one from ``"noisy:sigma=0.5"``).

Registered here: ``oracle`` (the truth), ``instance`` (the instance's own prediction, truth where it
has none), ``noisy`` (truth x exp(sigma Z), Z standard normal drawn per job from
``(seed, job id)``), ``group_mean`` (mean true work of completed jobs of the same group, with
user / global fallbacks) and ``constant`` (one processing time for every job: "no prediction").
"""

from __future__ import annotations

import abc
import math
import statistics
from collections import defaultdict
from numbers import Integral, Real
from typing import Any, Sequence

from .._validation import Interval, Params
from ..errors import InvalidParameterError, NotFittedError, unknown_name
from ..random import job_generator
from ..sim.view import CompletedJob, JobView

__all__ = ["Predictor", "PredictionTracker", "PREDICTORS", "register_predictor", "make_predictor", "OraclePredictor",
           "InstancePredictor", "NoisyPredictor", "GroupMeanPredictor", "ConstantPredictor",
           "group_key"]


class Predictor(Params, abc.ABC):
    """Base class; see the module docstring for the protocol."""

    name = "predictor"
    clairvoyant = False

    def reset(self, seed=None) -> "Predictor":
        """Start over with no history; validates the parameters."""
        self._validate_params()
        self.seed_ = seed
        self.n_observed_ = 0
        return self

    def observe(self, completed: Sequence[CompletedJob]) -> None:
        """Learn from newly completed jobs (default: only count them)."""
        self._check_fitted()
        self.n_observed_ += len(completed)

    def fit(self, completed: Sequence[CompletedJob], seed=None) -> "Predictor":
        """``reset(seed)`` then ``observe(completed)``; returns self."""
        self.reset(seed)
        self.observe(completed)
        return self

    @abc.abstractmethod
    def predict(self, job: JobView, *, attained=0, truth=None):
        """Predicted total work of ``job`` (> 0)."""

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_observed_"):
            raise NotFittedError(f"{type(self).__name__}: call reset() or fit() before predict() or observe()")


PREDICTORS: dict[str, tuple[type, dict]] = {}


def register_predictor(name: str, **preset: Any):
    """Class decorator registering a predictor under ``name`` (with preset parameters)."""

    def deco(cls):
        if name in PREDICTORS:
            raise ValueError(f"predictor {name!r} registered twice")
        PREDICTORS[name] = (cls, preset)
        if "name" not in cls.__dict__:
            cls.name = name
        return cls

    return deco


def make_predictor(spec: "str | Predictor") -> Predictor:
    """A predictor from a name with optional ``:key=value`` parameters, or a Predictor as is.

    >>> make_predictor("noisy:sigma=0.5:seed=3")
    NoisyPredictor(clip=None, seed=3, sigma=0.5)
    """
    if isinstance(spec, Predictor):
        return spec
    if not isinstance(spec, str):
        raise InvalidParameterError(f"a predictor must be a name or a Predictor, got {type(spec).__name__}")
    from ..policies.base import parse_policy_spec  # the same "name:key=value" syntax

    from . import forest  # noqa: F401  (registers the random forest; forest imports this module)
    name, params = parse_policy_spec(spec)
    if name not in PREDICTORS:
        raise unknown_name("predictor", name, PREDICTORS)
    cls, preset = PREDICTORS[name]
    kwargs = {**preset, **params}
    unknown = sorted(set(kwargs) - set(cls._param_names()))
    if unknown:
        raise InvalidParameterError(f"predictor {name!r} has no parameter {unknown[0]!r}")
    pred = cls(**kwargs)
    pred._validate_params()
    return pred


@register_predictor("oracle")
class OraclePredictor(Predictor):
    """The true work (clairvoyant).

    >>> p = OraclePredictor().reset()
    >>> p.predict(None, truth=120)
    120
    """

    clairvoyant = True
    parameter_constraints: dict = {}

    def predict(self, job, *, attained=0, truth=None):
        self._check_fitted()
        return truth


@register_predictor("instance")
class InstancePredictor(Predictor):
    """The instance's own prediction (``predicted_iterations`` / ``predicted_processing_time``),
    the truth for jobs without one. Clairvoyant only in that fallback; this is the predictor of
    the theory runs (Theorem 1 with static predictions N^_j from the instance)."""

    clairvoyant = True
    parameter_constraints: dict = {}

    def predict(self, job, *, attained=0, truth=None):
        self._check_fitted()
        return job.predicted_work if job.predicted_work is not None else truth


@register_predictor("noisy")
class NoisyPredictor(Predictor):
    """Multiplicative log-normal noise on the truth: ``N^ = N exp(sigma Z)``.

    Z is drawn from ``job_generator(seed, job.id)``, so a job's prediction does not depend on the
    order jobs arrive in. ``clip`` bounds the factor to [1/clip, clip] (a known distortion
    ``mu <= clip**2``). Clairvoyant by construction (it perturbs the truth).

    Parameters
    ----------
    sigma : float >= 0
    seed : int
    clip : float >= 1 or None
    """

    clairvoyant = True
    parameter_constraints = {"sigma": [Interval(Real, 0, None, closed="left")],
                             "seed": [Interval(Integral, 0, None, closed="left")],
                             "clip": [None, Interval(Real, 1, None, closed="left")]}

    def __init__(self, *, sigma: float = 0.5, seed: int = 0, clip: float | None = None):
        self.sigma = sigma
        self.seed = seed
        self.clip = clip

    def factor(self, job_id: str) -> float:
        """The multiplicative factor applied to job ``job_id``'s true work."""
        z = float(job_generator(self.seed, job_id).standard_normal())
        f = math.exp(self.sigma * z)
        if self.clip is not None:
            f = min(max(f, 1.0 / self.clip), float(self.clip))
        return f

    def predict(self, job, *, attained=0, truth=None):
        self._check_fitted()
        return truth * self.factor(job.id)


def group_key(job: JobView) -> tuple | None:
    """The recurring-job group of a job: its ``group`` if set, else None (no fake groups)."""
    return ("group", job.group) if job.group is not None else None


@register_predictor("group_mean")
class GroupMeanPredictor(Predictor):
    """Mean true work of completed jobs of the same group, with cold-start fallbacks.

    Fallback chain for a job: its group's mean work; else the mean processing time of the same
    user's completed jobs divided by the job's tau*; else the median processing time of all
    completed jobs over tau*; else ``prior`` seconds over tau*. With ``attained`` work already
    done, the prediction is at least ``attained`` times ``growth``.

    Attributes
    ----------
    group_means_ : dict
        Group key -> mean work of its completed jobs.
    n_groups_ : int
    """

    parameter_constraints = {"prior": [Interval(Real, 0, None, closed="neither")],
                             "growth": [Interval(Real, 1, None, closed="left")]}

    def __init__(self, *, prior: float = 3600.0, growth: float = 2.0):
        self.prior = prior
        self.growth = growth

    def reset(self, seed=None):
        super().reset(seed)
        self._group_sums: dict = defaultdict(lambda: [0.0, 0])
        self._user_sums: dict = defaultdict(lambda: [0.0, 0])
        self._times: list[float] = []
        self.group_means_: dict = {}
        self.n_groups_ = 0
        return self

    def observe(self, completed):
        super().observe(completed)
        for c in completed:
            p = float(c.work) * float(c.job.tau_star)
            self._times.append(p)
            g = group_key(c.job)
            if g is not None:
                acc = self._group_sums[g]
                acc[0] += float(c.work)
                acc[1] += 1
                self.group_means_[g] = acc[0] / acc[1]
            if c.job.user is not None:
                acc = self._user_sums[c.job.user]
                acc[0] += p
                acc[1] += 1
        self.n_groups_ = len(self.group_means_)

    def predict(self, job, *, attained=0, truth=None):
        self._check_fitted()
        g = group_key(job)
        if g is not None and g in self.group_means_:
            work = self.group_means_[g]
        else:
            tau = float(job.tau_star)
            acc = self._user_sums.get(job.user) if job.user is not None else None
            if acc and acc[1]:
                work = acc[0] / acc[1] / tau
            elif self._times:
                work = statistics.median(self._times) / tau
            else:
                work = self.prior / tau
        if attained and work <= attained:
            work = float(attained) * self.growth
        return work


@register_predictor("constant")
class ConstantPredictor(Predictor):
    """Every job is predicted to take ``processing_time`` seconds (work = that / tau*): the
    "no prediction" baseline, which orders jobs by GPU demand alone."""

    parameter_constraints = {"processing_time": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, *, processing_time: float = 3600.0):
        self.processing_time = processing_time

    def predict(self, job, *, attained=0, truth=None):
        self._check_fitted()
        work = self.processing_time / float(job.tau_star)
        return max(work, float(attained) * 2) if attained else work


class PredictionTracker:
    """Per-run bookkeeping for policies that use a predictor.

    ``update(view)`` feeds the jobs completed since the last decision to the predictor, then
    predicts every newly arrived job once (passing the truth only to clairvoyant predictors).
    ``predicted[job.index]`` holds the current prediction; ``repredict(view, job)`` asks again
    given the work already done (the adaptive step) and ``set(job, value)`` records the new value.
    ``report()`` gives every job's first and last prediction by id, for the run's policy data.
    """

    def __init__(self, predictor: Predictor, seed=None):
        self.predictor = predictor
        self.predictor.reset(seed)
        self.predicted: dict[int, Any] = {}
        self.initial_by_id: dict[str, Any] = {}   # first prediction of every job seen
        self.latest_by_id: dict[str, Any] = {}    # its last prediction (after adaptive updates)

    def _truth(self, view, job):
        return view.true_work(job) if self.predictor.clairvoyant else None

    def update(self, view) -> list:
        """Observe completions, predict arrivals; returns the newly predicted jobs."""
        if view.completed:
            self.predictor.observe(view.completed)
            for c in view.completed:
                self.predicted.pop(c.job.index, None)
        for job in view.arrived:
            value = self.predictor.predict(job, truth=self._truth(view, job))
            if not value > 0:
                raise InvalidParameterError(
                    f"predictor {self.predictor.name} predicted {value!r} for job {job.id}; predictions must be > 0")
            self.predicted[job.index] = value
            self.initial_by_id[job.id] = self.latest_by_id[job.id] = value
        return list(view.arrived)

    def repredict(self, view, job):
        """The predictor's new prediction given the work done (not yet recorded: see :meth:`set`)."""
        return self.predictor.predict(job, attained=view.attained_work(job), truth=self._truth(view, job))

    def set(self, job, value) -> None:
        """Record a new prediction for ``job`` (an adaptive update)."""
        self.predicted[job.index] = value
        self.latest_by_id[job.id] = value

    def report(self) -> dict:
        """``{"initial_predictions": {id: N^}, "predictions": {id: last N^}}`` (what the certificate
        and the accuracy report read), in job-id order."""
        from ..instance import id_key

        order = sorted(self.initial_by_id, key=id_key)
        return {"initial_predictions": {k: self.initial_by_id[k] for k in order},
                "predictions": {k: self.latest_by_id[k] for k in order}}
