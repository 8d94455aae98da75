"""Predictors of a job's total work (iterations for DNN jobs, seconds for abstract jobs).

One interface for every predictor, used by A-SRPT and by the size-aware baselines alike:

- ``reset(seed=None)`` starts a run with no history (and validates parameters);
- ``observe(completed)`` learns online from jobs that completed (their true work is revealed
  then; nothing else is ever learned from);
- ``predict(job, *, attained=0, truth=None) -> work`` predicts a job's total work at submission
  (``attained=0``) or given the work already done (A-SRPT's adaptive re-prediction,
  proofs/model.md, Definition 4, step 2). ``truth`` is passed only to predictors that declare
  ``clairvoyant = True`` (the oracle and the synthetic noisy predictor, which are built from the
  truth by definition).

``fit(completed)`` is ``reset()`` followed by ``observe(completed)`` (scikit-learn style).

Two optional parts of the contract, with defaults here:

- ``quantiles(job, *, attained=0, truth=None, levels=QUANTILE_LEVELS) -> tuple``: the
  predictor's quantiles of the job's total work (by default the 10th, 50th and 90th
  percentiles), given the work already done (all of them exceed ``attained``). A robust policy
  reads the band (a guard against underestimates, a Gittins index over the distribution); the
  default returns the point prediction at every level (no model of the uncertainty). Learned
  predictors calibrate theirs online from their own earlier errors (:class:`ErrorBands`); the
  synthetic ones know their error law.
- ``sibling_keys(job) -> tuple``: keys whose completions change this job's prediction (its
  recurring group, its burst). :class:`PredictionTracker` re-predicts the waiting jobs (no work
  done yet) that share a key with a job that just completed, so a burst of resubmissions is
  ordered by its first completed member at once. Default: none (no re-prediction).
Predictors register by name in :data:`PREDICTORS` (:func:`asrpt.predict.make_predictor` builds
one from ``"noisy:sigma=0.5"``).

Registered here: ``oracle`` (the truth), ``instance`` (the instance's own prediction, truth where it
has none), ``noisy`` (truth x exp(sigma Z), Z standard normal drawn per job from
``(seed, job id)``), ``group_mean`` (mean true work of completed jobs of the same group, with
user / global fallbacks), ``constant`` (one processing time for every job: "no prediction") and
``helios`` (the truth distorted by the error distribution Helios, SC'21, measured for its
predictor on Philly-like jobs; clairvoyant, for comparisons at a known accuracy). ``forest``
(:mod:`.forest`) and ``hierarchy`` (:mod:`.hierarchy`, the default, :data:`DEFAULT_PREDICTOR`) are
learned online.
"""

from __future__ import annotations

import heapq
import math
import statistics
from bisect import bisect_right
from collections import defaultdict
from numbers import Integral, Real
from typing import Any

from .._validation import Interval
from ..errors import InvalidParameterError
from ..registry import Registry
from ..sizes import floaty
from ..random import job_generator
from ..state import QUANTILE_LEVELS, JobView, Predictor

__all__ = ["Predictor", "PredictionTracker", "prediction_reached", "PREDICTORS", "register_predictor",
           "OraclePredictor",
           "InstancePredictor", "NoisyPredictor", "GroupMeanPredictor", "ConstantPredictor",
           "HeliosPredictor", "ErrorBands", "group_key", "QUANTILE_LEVELS", "DEFAULT_PREDICTOR",
           "HELIOS_ERROR_CDF", "ADAPTIVE_RULES", "DEFAULT_ADAPTIVE"]

#: The registry name of the default predictor of prediction-using policies and commands (the
#: one that validated best; docs/prediction.md gives the numbers).
DEFAULT_PREDICTOR = "hierarchy"

#: The adaptive step's rules (:meth:`PredictionTracker.overrun`), the ``adaptive`` option of every
#: prediction-using policy: ``"off"`` keeps predictions static (the theorems' setting).
ADAPTIVE_RULES = ("off", "doubling", "repredict", "conditional")

#: The default rule of SRSF and A-SRPT since issue 45 (docs/asrpt.md, "The default since issue
#: 45": with A-SRPT, lower mean JCT than doubling on the whole Philly trace and on 8 of the 11
#: other workloads of the evaluation).
DEFAULT_ADAPTIVE = "conditional"


#: The predictors by name: ``PREDICTORS[name]`` is ``(class, preset parameters)``; build one with
#: :func:`asrpt.predict.make_predictor`.
PREDICTORS = Registry("predictor", base=Predictor)


def register_predictor(name: str, *, description: str | None = None, **preset: Any):
    """Class decorator registering a predictor under ``name`` (with preset parameters; the
    description defaults to the first line of the class docstring).

    >>> "oracle" in PREDICTORS and PREDICTORS.entry("oracle").description != ""
    True
    """
    return PREDICTORS.register(name, description=description, **preset)


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

    def quantiles(self, job, *, attained=0, truth=None, levels=QUANTILE_LEVELS) -> tuple:
        """The truth's quantiles given the prediction ``N^``: ``N^ exp(sigma z_q)`` (the noise law
        is known; the clip is ignored), each at least 1.05 x ``attained``.

        >>> p = NoisyPredictor(sigma=0.0).reset()
        >>> p.quantiles(JobView(0, "a", (0,), 0, 1, 1, True, 1), truth=10.0)
        (10.0, 10.0, 10.0)
        """
        value = self.predict(job, truth=truth)
        out = [value * math.exp(self.sigma * _NORMAL.inv_cdf(q)) for q in levels]
        return _above(out, attained)


def _above(values, attained) -> tuple:
    """Quantiles floored at 1.05 x the work done (a job outlives what it has done)."""
    floor = 1.05 * float(attained) if attained else 0.0
    return tuple(max(float(v), floor) for v in values)


_NORMAL = statistics.NormalDist()
_LOG_BOUND = 700.0      # |log| of the largest and smallest band a quantile may give (exp(709.8) overflows)

#: The Helios (SC'21) predictor's measured error on Philly-like jobs: (share of jobs, relative
#: error |N^ - N| / N at most). 10 % of jobs within 10 % error, 50 % within 50 %, 70 % within
#: 100 %, 90 % within 1000 %; the end points (0, 0) and (1, 100) are ours.
HELIOS_ERROR_CDF: tuple[tuple[float, float], ...] = ((0.0, 0.0), (0.1, 0.1), (0.5, 0.5), (0.7, 1.0),
                                                     (0.9, 10.0), (1.0, 100.0))


def helios_ratio(u: float, v: float) -> float:
    """The ratio ``N^ / N`` for uniform draws ``u`` (the error's quantile) and ``v`` (its sign).

    The relative error ``e`` is interpolated in :data:`HELIOS_ERROR_CDF` (linearly up to 10 %,
    log-linearly beyond); an error of 100 % or more can only be an overestimate
    (``N^ = (1 + e) N``); a smaller one is an under- or overestimate with probability 1/2 each
    (``v < 0.5``: ``N^ = (1 - e) N``).

    >>> helios_ratio(0.5, 0.9), helios_ratio(0.5, 0.1), round(helios_ratio(0.9, 0.1), 6)
    (1.5, 0.5, 11.0)
    """
    pts = HELIOS_ERROR_CDF
    for (u0, e0), (u1, e1) in zip(pts, pts[1:]):
        if u <= u1:
            w = (u - u0) / (u1 - u0)
            e = e0 + w * (e1 - e0) if e0 == 0 or e1 <= 0.1 else math.exp(
                math.log(e0) + w * (math.log(e1) - math.log(e0)))
            break
    else:  # pragma: no cover - u < 1 always
        e = pts[-1][1]
    if e >= 1 or v >= 0.5:
        return 1.0 + e
    return 1.0 - e


@register_predictor("helios")
class HeliosPredictor(Predictor):
    """The truth distorted by the Helios predictor's published error distribution
    (:data:`HELIOS_ERROR_CDF`, :func:`helios_ratio`): comparisons at a known, realistic accuracy.

    Like the Helios artifact, which synthesizes Philly predictions from the true durations, this
    predictor is built from the truth (clairvoyant); the two uniform draws of a job come from
    ``job_generator(seed, job.id)``. ``quantiles`` gives the truth's quantiles given the
    prediction, from the same law (a grid of 4,000 draws).

    Parameters
    ----------
    seed : int

    Examples
    --------
    >>> p = HeliosPredictor(seed=1).reset()
    >>> v = JobView(0, "j0", (0,), 0, 1, 1, True, 1)
    >>> p.predict(v, truth=100.0) / 100.0 == p.ratio("j0")
    True
    """

    clairvoyant = True
    parameter_constraints = {"seed": [Interval(Integral, 0, None, closed="left")]}
    _INVERSE: tuple | None = None

    def __init__(self, *, seed: int = 0):
        self.seed = seed

    def ratio(self, job_id: str) -> float:
        """``N^ / N`` of job ``job_id``."""
        u, v = job_generator(self.seed, job_id).random(2)
        return helios_ratio(float(u), float(v))

    def predict(self, job, *, attained=0, truth=None):
        self._check_fitted()
        value = truth * self.ratio(job.id)
        return value if not attained or value > attained else float(attained) * 2

    def quantiles(self, job, *, attained=0, truth=None, levels=QUANTILE_LEVELS) -> tuple:
        """Quantiles of ``N = N^ / r`` over the law of ``r`` (conditioned on ``N > attained``)."""
        value = truth * self.ratio(job.id)
        inv = HeliosPredictor._INVERSE
        if inv is None:
            grid = [(k + 0.5) / 2000 for k in range(2000)]
            inv = HeliosPredictor._INVERSE = tuple(sorted(1.0 / helios_ratio(u, v) for u in grid
                                                          for v in (0.25, 0.75)))
        values = [value * r for r in inv]
        if attained:
            values = [x for x in values if x > attained] or [float(attained) * 2]
        return _above([_quantile(values, q) for q in levels], attained)


def _quantile(ordered, q: float) -> float:
    """Linear-interpolation quantile of a sorted sequence."""
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return float(ordered[lo]) + (pos - lo) * (float(ordered[hi]) - float(ordered[lo]))


class ErrorBands:
    """Online calibration of prediction bands from a predictor's own earlier errors.

    ``add(stratum, predicted, true)`` records the error ``log(true / predicted)`` of a completed
    job (its prediction at submission). ``quantiles(stratum, value, levels, attained)`` returns
    ``value x exp(e_q)`` with ``e_q`` the empirical ``q``-quantiles of the last ``window`` errors
    of the stratum (e.g. "the job's group has history" or not); with work ``attained`` done, only
    the errors that would have let the job outlive it (``value x exp(e) > attained``) count, so the
    band is conditioned on survival. A stratum with fewer than ``min_errors`` errors borrows all
    strata's; with fewer than that overall, a log-normal band of spread ``prior_sigma``.

    **Adaptive calibration** (``adapt > 0``). Past errors are not exchangeable with the next
    one on a real trace (users change what they run; the errors of a burst arrive together), so
    the empirical quantiles alone cover less than they claim. With ``adapt = gamma`` each cell,
    a stratum and one of ``bins`` ranges of the predicted value (equal shares of the last 2,000
    predictions, ``bins = 1``: the stratum), keeps the levels it actually uses for the nominal
    10% and 90% and corrects them from the bands it *issued*: a predictor calls
    :meth:`issue` at submission and passes the result to :meth:`add` at completion, and the
    upper level moves by ``gamma (1{true above the band} - 0.1)``, the lower one by the mirror
    image (adaptive conformal inference, Gibbs and Candes 2021). The steps add up exactly: over
    the ``n`` bands a cell issued and heard back about, the share of truths above them is
    ``0.1 + (h - 0.9) / (gamma n)``, with ``h`` the cell's upper level now (:meth:`cells`), and
    below them ``0.1 + (0.1 - l) / (gamma n)``, in any order of feedback. So the share above is
    at most 10% in the long run whenever ``h`` stays bounded, which it does when the errors are
    bounded and finitely many jobs are in flight: a level past the errors seen widens the band by
    their span per unit of level, so a high enough level covers any bounded truth, and ``h``
    rises only on a miss (the same below). A side that covers more than it must lets its level
    drift outward without bound: its share then falls under 10%, never over. Other levels are
    mapped piecewise linearly through (10%, 50%, 90%), the 10% level never above the median's
    and the 90% level never below it, so a band stays ordered.

    Examples
    --------
    >>> b = ErrorBands(min_errors=2)
    >>> for e in (0.5, 1.0, 2.0):
    ...     b.add("seen", 10.0, 10.0 * e)
    >>> [round(x, 2) for x in b.quantiles("seen", 10.0, (0.1, 0.9))]
    [5.74, 17.41]

    Adaptive: four truths under the bands issued for them lower the level used for 10% by
    ``4 x 0.05 x 0.9`` (below 0: the band then reaches under the errors seen).

    >>> a = ErrorBands(min_errors=3, adapt=0.05)
    >>> for e in (0.5, 1.0, 2.0):
    ...     a.add("s", 10.0, 10.0 * e)
    >>> for _ in range(4):
    ...     a.add("s", 10.0, 10.0, issued=("s", 11.0, 12.0))
    >>> round(a.cells()["s"]["low_level"], 2), a.quantiles("s", 10.0, (0.1,))[0] < 5.0
    (-0.08, True)
    """

    _BIN_SAMPLE = 2000      # predictions the bins' edges are drawn from (the most recent)
    _BIN_EVERY = 200        # additions between two redraws of the edges

    def __init__(self, *, window: int = 1000, min_errors: int = 20, prior_sigma: float = 1.0,
                 adapt: float = 0.0, bins: int = 1):
        if not (isinstance(adapt, Real) and 0 <= adapt < 1):
            raise InvalidParameterError(f"ErrorBands: adapt must be a number in [0, 1), got {adapt!r}")
        if not (isinstance(bins, Integral) and bins >= 1):
            raise InvalidParameterError(f"ErrorBands: bins must be an int >= 1, got {bins!r}")
        self.window = window
        self.min_errors = min_errors
        self.prior_sigma = prior_sigma
        self.adapt = adapt
        self.bins = bins
        self._errors: dict = defaultdict(list)
        self._all: list[float] = []
        self._sorted: dict = {}                 # stratum -> its errors() sorted (until the next add)
        self._levels: dict = {}                 # cell -> (level used for 10%, level used for 90%)
        self._values: list[float] = []          # log predicted values, for the bins' edges
        self._edges: list[float] = []
        self._heard: dict = defaultdict(int)    # cell -> issued bands heard back about

    def add(self, stratum, predicted, true, issued=None) -> None:
        """Record the error of one completed job; ``issued``: what :meth:`issue` gave at its
        submission (adaptive calibration learns from it; None: nothing to learn)."""
        e = math.log(float(true) / float(predicted))
        for lst in (self._errors[stratum], self._all):
            lst.append(e)
            if len(lst) > 2 * self.window:
                del lst[:len(lst) - self.window]
        self._sorted.clear()
        if issued is not None and self.adapt:
            cell, low, high = issued
            lo, hi = self._levels.get(cell, (0.1, 0.9))
            t = float(true)
            self._levels[cell] = (lo - self.adapt * ((t < low) - 0.1), hi + self.adapt * ((t > high) - 0.1))
            self._heard[cell] += 1
        if self.bins > 1:
            values = self._values
            values.append(math.log(float(predicted)))
            if len(values) % self._BIN_EVERY == 0:
                recent = sorted(values[-self._BIN_SAMPLE:])
                self._edges = [_quantile(recent, k / self.bins) for k in range(1, self.bins)]
                del values[:-self._BIN_SAMPLE]

    def errors(self, stratum) -> list[float]:
        """The errors the stratum's bands use now (its own, else every stratum's)."""
        own = self._errors.get(stratum, [])
        src = own if len(own) >= self.min_errors else self._all
        return src[-self.window:]

    def _ordered(self, stratum) -> list[float]:
        """:meth:`errors` sorted, kept until the next :meth:`add`."""
        errs = self._sorted.get(stratum)
        if errs is None:
            errs = self._sorted[stratum] = sorted(self.errors(stratum))
        return errs

    def cell(self, stratum, value):
        """The calibration cell of a job of ``stratum`` predicted at ``value``."""
        if self.bins <= 1 or not value > 0:
            return stratum if self.bins <= 1 else (stratum, 0)
        return (stratum, bisect_right(self._edges, math.log(float(value))))

    def _level(self, cell, q: float) -> float:
        """The level the adaptive calibration uses for the nominal level ``q`` in ``cell``."""
        lo, hi = self._levels.get(cell, (0.1, 0.9))
        lo, hi = min(lo, 0.5), max(hi, 0.5)
        if q <= 0.1:
            return q / 0.1 * lo if lo > 0 else lo - (0.1 - q)
        if q <= 0.5:
            return lo + (q - 0.1) / 0.4 * (0.5 - lo)
        if q <= 0.9:
            return 0.5 + (q - 0.5) / 0.4 * (hi - 0.5)
        return hi + (q - 0.9) / 0.1 * (1 - hi) if hi < 1 else hi + (q - 0.9)

    def quantiles(self, stratum, value, levels=QUANTILE_LEVELS, attained=0) -> tuple:
        """The band for a job predicted at ``value`` (> 0) with ``attained`` work done."""
        if not value > 0:
            raise InvalidParameterError(f"ErrorBands.quantiles: the predicted value must be > 0, got {value!r}")
        errs = self._ordered(stratum)
        if len(errs) < self.min_errors:
            out = [value * math.exp(self.prior_sigma * _NORMAL.inv_cdf(q)) for q in levels]
            return _above(out, attained)
        if attained:
            lo = math.log(float(attained) / float(value))
            errs = errs[bisect_right(errs, lo):]
            if not errs:
                return tuple(float(attained) * 2 for _ in levels)
        span = (errs[-1] - errs[0]) or 1.0
        log_value = math.log(float(value))
        ts = list(levels)
        if self.adapt:      # (the piecewise-linear map rounds: keep the levels in the order of q)
            cell = self.cell(stratum, value)
            ts = [self._level(cell, q) for q in levels]
            top = -math.inf
            for i in sorted(range(len(ts)), key=lambda i: levels[i]):
                top = ts[i] = max(ts[i], top)
        out = []
        for t in ts:
            e = (errs[-1] + (t - 1) * span if t > 1 else errs[0] + t * span if t < 0
                 else _quantile(errs, t))
            # (a band stays a finite positive float: e^-700 to e^700 seconds, or iterations)
            e = min(max(e, -_LOG_BOUND - log_value), _LOG_BOUND - log_value)
            out.append(value * math.exp(e))
        return _above(out, attained)

    def cells(self) -> dict:
        """Per calibration cell: ``n`` (issued bands heard back about) and the levels now used
        for the nominal 10% and 90% (``low_level``, ``high_level``); the share of those ``n``
        truths above their bands is exactly ``0.1 + (high_level - 0.9) / (adapt n)``.

        >>> a = ErrorBands(min_errors=1, adapt=0.5)
        >>> a.add("s", 1.0, 1.0)
        >>> a.add("s", 1.0, 9.0, issued=a.issue("s", 1.0))    # above the band [1, 1]
        >>> {key: round(v, 3) for key, v in a.cells()["s"].items()}
        {'n': 1, 'low_level': 0.15, 'high_level': 1.35}
        """
        return {cell: {"n": n, "low_level": self._levels[cell][0], "high_level": self._levels[cell][1]}
                for cell, n in self._heard.items()}

    def issue(self, stratum, value):
        """The band issued at submission for a job of ``stratum`` predicted at ``value``, as
        ``(cell, low, high)`` (10% and 90%) for :meth:`add`; None without adaptive calibration
        or while the band is the prior's (nothing to learn from it)."""
        if not self.adapt or len(self._ordered(stratum)) < self.min_errors:
            return None
        low, high = self.quantiles(stratum, value, (0.1, 0.9))
        return (self.cell(stratum, value), low, high)


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


def prediction_reached(now, left, tau) -> bool:
    """The adaptive step's one test: a running job with ``left`` predicted work to go, at ``tau``
    seconds per unit, has reached its prediction at time ``now``: nothing is left, or the rest
    would take less time than ``now`` can resolve (a crossing that rounds to now in floating
    point). :meth:`PredictionTracker.reached` and the policies' one-pass adaptive steps use it.

    >>> prediction_reached(10.0, 0, 1.0), prediction_reached(1e9, 1e-9, 1e-9), prediction_reached(0, 1, 2)
    (True, True, False)
    """
    return left <= 0 or now + left * tau <= now


class PredictionTracker:
    """Per-run bookkeeping for policies that use a predictor.

    ``update(view)`` feeds the jobs completed since the last decision to the predictor, then
    predicts every newly arrived job once (passing the truth only to clairvoyant predictors).
    ``predicted[job.index]`` holds the current prediction; ``repredict(view, job)`` asks again
    given the work already done (the adaptive step) and ``set(job, value)`` records the new value.
    ``report()`` gives every job's first and last prediction by id, for the run's policy data.

    **Siblings.** With ``siblings=True`` (default), when a job completes, the waiting jobs that
    share one of its :meth:`Predictor.sibling_keys` and have done no work yet are predicted again
    (the new history may change them: the first completed member of a burst), before the
    arrivals; ``revised`` lists the jobs whose prediction changed in the last ``update`` (a policy
    that keeps its own copy of the sizes, like A-SRPT's virtual machine, applies them). Their
    ``initial`` prediction (at submission) is kept; the new one is their latest.
    """

    def __init__(self, predictor: Predictor, seed=None, *, siblings: bool = True):
        self.predictor = predictor
        self.predictor.reset(seed)
        self.siblings = siblings
        self.predicted: dict[int, Any] = {}
        self._array = None                        # float64 copy of `predicted`, from the first prediction_array()
        self._exact = False                       # a prediction a float cannot hold was recorded
        self.initial_by_id: dict[str, Any] = {}   # first prediction of every job seen
        self._id_keys: dict[str, tuple] = {}      # their id keys (JobView.key), for report's order
        self.latest_by_id: dict[str, Any] = {}    # its last prediction (after adaptive updates)
        self.revised: list = []                   # jobs re-predicted in the last update
        self.n_revised = 0                        # sibling re-predictions that changed a value
        self._by_key: dict = defaultdict(dict)    # sibling key -> {index: view} of waiting jobs
        self._keys: dict[int, tuple] = {}

    def _truth(self, view, job):
        return view.true_work(job) if self.predictor.clairvoyant else None

    def _check(self, job, value):
        if not value > 0:
            raise InvalidParameterError(
                f"predictor {self.predictor.name} predicted {value!r} for job {job.id}; predictions must be > 0")
        return value

    def update(self, view) -> list:
        """Observe completions, re-predict waiting siblings, predict arrivals; returns the newly
        predicted jobs."""
        self.revised = []
        if view.completed:
            self.predictor.observe(view.completed)
            touched: dict = {}
            for c in view.completed:
                self.predicted.pop(c.job.index, None)
                for key in self._keys.pop(c.job.index, ()):
                    waiting = self._by_key.get(key)
                    if waiting is not None:
                        waiting.pop(c.job.index, None)
                        touched.update(waiting)
            for i in sorted(touched):
                job = touched[i]
                if i not in self.predicted:
                    continue
                done = view.attained_work(job)
                if done > 0:
                    if done >= 1:
                        # Work done of at least one unit never returns to 0 (the engine snaps a
                        # stopped DNN job down to an iteration boundary only within 1e-9 of
                        # one), so this job is no sibling to re-predict again: it leaves the key
                        # lists, and each job is read O(1) times instead of at every completion.
                        for key in self._keys.pop(i, ()):
                            self._by_key[key].pop(i, None)
                    continue
                value = self._check(job, self.predictor.predict(job, truth=self._truth(view, job)))
                if value != self.predicted[i]:
                    self.set(job, value)
                    self.revised.append(job)
                    self.n_revised += 1
        for job in view.arrived:
            value = self._check(job, self.predictor.predict(job, truth=self._truth(view, job)))
            self._store(job.index, value)
            self.initial_by_id[job.id] = self.latest_by_id[job.id] = value
            self._id_keys[job.id] = job.key
            if self.siblings:
                keys = self.predictor.sibling_keys(job)
                if keys:
                    self._keys[job.index] = keys
                    for key in keys:
                        self._by_key[key][job.index] = job
        return list(view.arrived)

    def _store(self, i: int, value) -> None:
        self.predicted[i] = value
        if floaty(value):
            array = self._array
            if array is not None:
                if i >= len(array):
                    import numpy as np

                    grown = np.zeros(max(2 * len(array), i + 1))
                    grown[:len(array)] = array
                    array = self._array = grown
                array[i] = value
        else:
            self._exact = True

    def prediction_array(self):
        """``predicted`` as a float64 array indexed by job index (read-only use; entries of jobs
        not predicted are meaningless), or None once a prediction that is not a float or an int
        below 2**53 was recorded (exact runs): the values bit for bit where it is not None.

        >>> from asrpt.predict import make_predictor
        >>> t = PredictionTracker(make_predictor("oracle"))
        >>> t.prediction_array()[:2].tolist()
        [0.0, 0.0]
        """
        if self._exact:
            return None
        if self._array is None:   # built at the first call (policies that never ask load no numpy)
            import numpy as np

            array = np.zeros(max(64, 1 + max(self.predicted, default=0)))
            for i, value in self.predicted.items():
                array[i] = value
            self._array = array
        return self._array

    def repredict(self, view, job):
        """The predictor's new prediction given the work done (not yet recorded: see :meth:`set`)."""
        return self.predictor.predict(job, attained=view.attained_work(job), truth=self._truth(view, job))

    def set(self, job, value) -> None:
        """Record a new prediction for ``job`` (an adaptive update)."""
        self._store(job.index, value)
        self.latest_by_id[job.id] = value

    def overrun(self, view, job, rule: str):
        """The adaptive step, the one rule every policy uses: ``job`` has done at least its
        predicted work without finishing; return its new prediction (not yet recorded: see
        :meth:`set`), always above the work done.

        ``rule="doubling"`` doubles the prediction until it exceeds the work done;
        ``rule="repredict"`` asks the predictor again given the work done, and doubles the work
        done if the answer does not exceed it; ``rule="conditional"`` takes the larger of the
        predictor's answer and doubling's, so a job that has outlived its prediction is never
        told it has less left than doubling says (at the crossing, as much again as it has done)
        and a predictor that knows the runs outliving such work can only raise that (with a
        predictor that does not re-predict, it is doubling).

        >>> class Done:                                  # a view in which every job did 3 units
        ...     def attained_work(self, job): return 3.0
        >>> class Says(Predictor):                       # re-predicts `factor` x the work done
        ...     parameter_constraints = {"factor": [float]}
        ...     def __init__(self, factor): self.factor = factor
        ...     def predict(self, job, *, attained=0, truth=None): return self.factor * attained or 2.0
        >>> job = JobView(0, "a", (0,), 0, 1, 1, True, 1)
        >>> for factor in (1.25, 3.0, 0.5):
        ...     t = PredictionTracker(Says(factor).reset())
        ...     t.set(job, 2.0)                          # predicted 2, did 3: doubling says 4
        ...     print(factor, [t.overrun(Done(), job, r) for r in ("doubling", "repredict", "conditional")])
        1.25 [4.0, 3.75, 4.0]
        3.0 [4.0, 9.0, 9.0]
        0.5 [4.0, 6.0, 4.0]
        """
        if rule not in ADAPTIVE_RULES[1:]:
            raise InvalidParameterError(f"PredictionTracker.overrun: rule must be one of {ADAPTIVE_RULES[1:]}, "
                                        f"got {rule!r}")
        done = view.attained_work(job)
        if rule == "repredict":
            new = self.repredict(view, job)
            return new if new > done else done * 2
        doubled = self.predicted[job.index] * 2
        while doubled <= done:
            doubled *= 2
        if rule == "doubling":
            return doubled
        new = self.repredict(view, job)
        return new if new > doubled else doubled

    def reached(self, view, job, done=None) -> bool:
        """Whether ``job`` has done its predicted work (``done``: its work done, if the caller has
        it): the work done is at least the prediction, or the rest would take less time than
        ``view.now`` can resolve (a crossing that rounds to now in floating point; without this
        the wake-up at the crossing finds the job a few ulps short and no later wake-up exists,
        so the adaptive step waited for an unrelated event)."""
        left = self.predicted[job.index] - (view.attained_work(job) if done is None else done)
        return left <= 0 or prediction_reached(view.now, left, view.iteration_time(job))

    def next_crossing(self, view, left=None):
        """The first time after ``view.now`` at which a running job (not stopping) reaches its
        prediction, at its iteration time on its placement, or None: the adaptive step's wake-up.

        ``left`` may map job indices to their predicted remaining work at ``view.now`` (a policy
        that computed it while deciding, at the same time); other jobs are computed here. A
        restart after a preemption makes the true crossing later; an early wake-up just asks
        again. A crossing that rounds to ``now`` is no wake-up (:meth:`reached` counts it).
        """
        now = view.now
        predicted = self.predicted
        wake = None
        for job in view.running:
            i = job.index
            rest = left.get(i) if left is not None else None
            if rest is None:
                rest = predicted[i] - view.attained_work(job)
            if rest > 0 and not view.is_stopping(job):
                t = view.resume_time(job) + rest * view.iteration_time(job)
                if t > now and (wake is None or t < wake):
                    wake = t
        return wake

    def noted_crossing(self, view, left, noted, views):
        """:meth:`next_crossing` from crossings a policy noted while deciding (a one-pass
        adaptive step): ``noted`` is a heap of ``(time, index)`` at the decision (popped here as
        it goes stale), or an object read the same way with ``noted[0]`` and ``popleft()`` (entries
        in ascending order: a policy's sorted arrays), ``left`` the predicted remaining work
        then (read with ``get``), ``views`` index -> job view.
        The earliest noted crossing of a job still running (not stopping) counts; jobs started
        since the decision (their iteration time may be new) are computed afresh."""
        now = view.now
        pred = self.predicted
        wake = None
        fresh = set()
        for job in view.started:
            i = job.index
            fresh.add(i)
            if view.is_running(job) and not view.is_stopping(job):
                rest = left.get(i)
                if rest is None:
                    rest = pred[i] - view.attained_work(job)
                if rest > 0:
                    t = view.resume_time(job) + rest * view.iteration_time(job)
                    if t > now and (wake is None or t < wake):
                        wake = t
        while noted:
            t, i = noted[0]
            if t > now and i not in fresh:
                job = views.get(i)
                if job is not None and view.is_running(job) and not view.is_stopping(job):
                    if wake is None or t < wake:
                        wake = t
                    break
            if type(noted) is list:
                heapq.heappop(noted)
            else:
                noted.popleft()
        return wake

    def report(self) -> dict:
        """``{"initial_predictions": {id: N^}, "predictions": {id: last N^}}`` (what the certificate
        and the accuracy report read), in job-id order."""
        # (by the views' id keys, kept with each first prediction: every id of initial_by_id has one)
        order = sorted(self.initial_by_id, key=self._id_keys.__getitem__)
        return {"initial_predictions": {k: self.initial_by_id[k] for k in order},
                "predictions": {k: self.latest_by_id[k] for k in order}}
