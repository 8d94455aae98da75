"""The key-hierarchy predictor: robust history statistics along a chain of fallbacks (issue 14).

This module owns :class:`HierarchyPredictor`, registered as ``"hierarchy"`` (the default
predictor, :data:`~asrpt.predict.base.DEFAULT_PREDICTOR`; docs/prediction.md gives the numbers
that made it so). It learns only from completed jobs (``observe``) and follows the
:class:`~asrpt.predict.base.Predictor` protocol, quantiles and sibling keys included.

**Target.** A job's best processing time in seconds, ``P = work * tau*``, in logs. Seconds make
jobs of different configurations comparable (a user's history mixes them); within a group they
are the iterations up to a constant.

**Status-aware history.** Only runs that completed with a status other than ``failed`` or
``killed`` (``CompletedJob.status``; an unknown status counts as a success) enter the duration
history: a failed run stops after about a minute whatever the job, and one of them among a
group's few completed runs ruins its mean. Failures are modelled separately: the probability
that a job of a key fails, smoothed toward its parent key (``(f + k p_parent) / (n + k)``,
``k = failure_prior``), from which :meth:`HierarchyPredictor.failure_probability` answers; where
it exceeds one half, the median of the mixture is a failure and the job is predicted at the
median duration of the key's failed runs.

**The hierarchy** (:data:`LEVELS`), finest first; a job is predicted by the first level with at
least ``min_count`` successful runs:

1. ``group``: the job's recurring group (``Job.group``; traces without groups have none);
2. ``burst``: the job's burst, consecutive submissions of one user (a VC in Philly) with one GPU
   count, each at most ``burst_gap`` seconds after the previous one (Philly recurs this way: 86 %
   of its jobs sit in bursts whose members have similar run times);
3. ``user_gpus``: the user with that GPU count; 4. ``user``; 5. ``gpus``; 6. ``global``.

A level's estimate is the median log time of its last ``recent`` successful runs (the group and
burst levels; a drifting group is described by its recent runs) or its last ``broad_recent``
(the broader levels). Without any completed job the prediction is ``prior`` seconds.

**Siblings.** :meth:`HierarchyPredictor.sibling_keys` are the job's group and burst: when a member
completes, the tracker re-predicts the waiting members (:class:`~asrpt.predict.base.PredictionTracker`),
so a burst is ordered by its first completion at once.

**Uncertainty.** Every prediction at submission is remembered; when the job completes, its error
``log(P / P^)`` is added to an :class:`~asrpt.predict.base.ErrorBands` stratum, by whether the
prediction came from the job's group or burst ("seen") or from a broader level ("unseen").
:meth:`HierarchyPredictor.quantiles` puts the band of the job's current stratum around its
current point prediction (conditioned on survival when work is done). The bands are calibrated
online (``band_adapt``, ``band_bins``): the band issued at each submission is remembered too, and
each cell (stratum and fifth of the predicted range) moves the levels it uses by whether the truths
fell inside its issued bands, so the share outside stays near 10% on each side per cell however
the trace drifts. On the bundled Philly window this raises coverage from 0.767 to 0.791 (and in the
worst-covered decile of the predicted work from 0.61 to 0.73), with bands 1.24 times as wide in
log terms (docs/asrpt.md, "Where the predictor's bands hold").

**Residual model** (``residual="gbm"``; off by default: it costs a scikit-learn call, several
milliseconds, per prediction). A scikit-learn ``HistGradientBoostingRegressor`` with absolute
loss learns the correction ``log P - b`` to the hierarchy's value ``b`` from successful runs
(features as of each job's submission: ``b``, its level and count, ``log tau*``, GPUs, batch,
pipeline and tensor degrees, learning rate, hour and weekday, the user x GPUs, user, GPUs and
global medians, and user, model, dataset and precision as native categories), refitted every
``refit_every`` successful completions on the last ``max_train`` rows, no row dropped. It
corrects a stratum's predictions only while it validates: over the stratum's last 300
successful completions predicted with a model, its mean |log error| is below the hierarchy's.

**Re-prediction given the work done** (``attained > 0``, the adaptive step of SRSF and A-SRPT):
the median of the level's successful runs that outlived the work done (the survival-conditioned
median), the first level that has one; else ``growth * attained``. With ``repredict="capped"``
(default) it is at most the median of the job's band conditioned on the same survival (the
stratum's errors that would have let it outlive its work: the population's tail), which keeps one
long run of the level from setting the new prediction. It is at least ``1.05 * attained``; the
policies' default rule (``adaptive="conditional"``,
:meth:`~asrpt.predict.base.PredictionTracker.overrun`) raises it to doubling's value, so it
matters where the runs that outlived the work done say a job has more than that left.

Examples
--------
>>> from asrpt.sim.view import CompletedJob, JobView
>>> def view(i, group, user="u"):
...     return JobView(index=i, id=f"j{i}", key=(i,), arrival=i, gpus=1, weight=1,
...                    is_abstract=True, tau_star=1, user=user, group=group)
>>> p = HierarchyPredictor().reset()
>>> p.predict(view(0, "a"))  # nothing completed yet: the prior
3600.0
>>> p.observe([CompletedJob(view(0, "a"), 100, 100.0, "succeeded"),
...            CompletedJob(view(1, "a"), 160, 60.0, "failed"),
...            CompletedJob(view(2, "b"), 200, 10.0, "succeeded")])
>>> round(p.predict(view(3, "a")), 6), round(p.predict(view(4, "b")), 6), p.level_of(view(5, "c", user="v"))
(100.0, 10.0, 'gpus')
>>> round(p.failure_probability(view(3, "a")), 3)
0.417
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections import deque
from numbers import Integral, Real
from typing import Sequence

from sortedcontainers import SortedList

from .._validation import Interval, Options
from .base import QUANTILE_LEVELS, ErrorBands, Predictor, register_predictor

__all__ = ["HierarchyPredictor", "LEVELS", "FAILED_STATUSES"]

LEVELS: tuple[str, ...] = ("group", "burst", "user_gpus", "user", "gpus", "global")
#: Completed runs with these statuses stay out of the duration history.
FAILED_STATUSES: frozenset = frozenset({"failed", "killed"})
_MIN_GROWTH = 1.05
_SEEN = frozenset({"group", "burst"})
_CATEGORIES = ("user", "model", "dataset", "precision")
_MAX_CODE = 250          # HistGradientBoosting's categories must be below its 255 bins
_CHECK = 300             # completions per stratum the residual model is validated on
_MIN_CHECKS = 50


class _Stats:
    """Successful and failed runs of one key: recent log times (in arrival order, and sorted, so
    that their median is read in place), all successful log times sorted (for
    survival-conditioned medians; sorted when first read after new runs, since only
    re-predictions read them and the broad keys hold every run of the trace), failure counts;
    the median of the recent failed runs, kept until the next failure. A key's stats exist from
    the first prediction of a job that has it (``n`` is 0 until a run is added)."""

    __slots__ = ("recent", "recent_sorted", "ordered", "pending", "n", "failed", "failed_logs",
                 "_failed_median")

    def __init__(self, window: int):
        self.recent: deque = deque(maxlen=window)
        self.recent_sorted: list[float] = []
        self.ordered = SortedList()
        self.pending: list[float] = []        # successful log times not yet in `ordered`
        self.n = 0
        self.failed = 0
        self.failed_logs: deque = deque(maxlen=window)
        self._failed_median = None

    def add(self, value: float, failed: bool) -> None:
        self.n += 1
        if failed:
            self.failed += 1
            self.failed_logs.append(value)
            self._failed_median = None
        else:
            recent, window = self.recent, self.recent_sorted
            if len(recent) == recent.maxlen:   # the oldest leaves the window (an equal value is the same float)
                del window[bisect_left(window, recent[0])]
            recent.append(value)
            insort(window, value)
            self.pending.append(value)

    def median(self) -> float:
        return _median(self.recent_sorted)

    def failed_median(self) -> float:
        """The median of the recent failed runs (there must be one)."""
        m = self._failed_median
        if m is None:
            m = self._failed_median = _median(sorted(self.failed_logs))
        return m

    def median_above(self, level: float) -> float | None:
        """The median of the successful log times above ``level`` (None if there is none): the
        middle of the sorted runs past ``level``, read in place."""
        ordered = self.ordered
        if self.pending:
            ordered.update(self.pending)
            self.pending.clear()
        k = ordered.bisect_right(level)
        n = len(ordered) - k
        if not n:
            return None
        mid = k + n // 2
        return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _completion_order(c):
    return (c.completion, c.job.key)


def _key_of(job, level: str):
    if level == "user_gpus":
        return ("user_gpus", job.user, job.gpus) if job.user is not None else None
    if level == "user":
        return ("user", job.user) if job.user is not None else None
    if level == "gpus":
        return ("gpus", job.gpus)
    return ("global",)


def _median(ordered) -> float:
    n = len(ordered)
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


@register_predictor("hierarchy")
class HierarchyPredictor(Predictor):
    """Median log time of successful runs along a key hierarchy, with failure modelling and
    calibrated bands; see the module docstring.

    Parameters
    ----------
    burst_gap : float >= 0
        Seconds between consecutive submissions of one (user, GPU count) within a burst; 0
        disables the burst level.
    min_count : int >= 1
        Successful runs a level needs to predict.
    recent : int >= 1
        Successful runs of a group or burst whose median is its estimate.
    broad_recent : int >= 1
        The same for the broader levels (user x GPUs, user, GPUs, global).
    failure_prior : float > 0
        Pseudo-count pulling a key's failure probability toward its parent's.
    prior : float > 0
        Seconds predicted before anything has completed.
    growth : float > 1
        Re-prediction factor over the work done when no run outlived it.
    band_window : int >= 1
        Errors per stratum the bands use (the most recent).
    band_adapt : float in [0, 1)
        Step of the bands' adaptive calibration (:class:`~asrpt.predict.base.ErrorBands`,
        ``adapt``): each cell corrects the levels it uses from the bands it issued at
        submission; 0: the plain empirical quantiles.
    band_bins : int >= 1
        Cells per stratum by the predicted value (equal shares of the recent predictions).
    repredict : {"capped", "level"}
        Re-prediction given the work done: the level's survival-conditioned median capped by the
        band's (default), or that median alone (see the module docstring). With the policies'
        default adaptive rule (``"conditional"``) the answer is raised to doubling's where it is
        below (docs/asrpt.md measures both, and the rules without that floor).
    residual : {"gbm", "none"}
        ``"gbm"``: a gradient-boosted correction on top where it validates (see "Residual
        model" in the module docstring); ``"none"``: the hierarchy alone.
    refit_every : int >= 1
        Successful completions between refits of the residual model.
    min_train : int >= 2
        Successful completions before its first fit.
    max_train : int >= 2
        Most recent rows it trains on.
    seed : int
        The residual model's ``random_state``.

    Attributes
    ----------
    bands_ : ErrorBands
    level_counts_ : dict
        How many predictions at submission each level made.

    Examples
    --------
    >>> HierarchyPredictor(burst_gap=0).reset().sibling_keys(None) is not None
    True
    """

    parameter_constraints = {
        "burst_gap": [Interval(Real, 0, None, closed="left")],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "recent": [Interval(Integral, 1, None, closed="left")],
        "broad_recent": [Interval(Integral, 1, None, closed="left")],
        "failure_prior": [Interval(Real, 0, None, closed="neither")],
        "prior": [Interval(Real, 0, None, closed="neither")],
        "growth": [Interval(Real, 1, None, closed="neither")],
        "band_window": [Interval(Integral, 1, None, closed="left")],
        "band_adapt": [Interval(Real, 0, 1, closed="left")],
        "band_bins": [Interval(Integral, 1, None, closed="left")],
        "repredict": [Options(str, {"capped", "level"})],
        "residual": [Options(str, {"gbm", "none"})],
        "refit_every": [Interval(Integral, 1, None, closed="left")],
        "min_train": [Interval(Integral, 2, None, closed="left")],
        "max_train": [Interval(Integral, 2, None, closed="left")],
        "seed": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, *, burst_gap: float = 60.0, min_count: int = 1, recent: int = 16,
                 broad_recent: int = 256, failure_prior: float = 2.0, prior: float = 3600.0,
                 growth: float = 2.0, band_window: int = 1000, band_adapt: float = 0.005, band_bins: int = 5,
                 repredict: str = "capped", residual: str = "none", refit_every: int = 200, min_train: int = 200,
                 max_train: int = 5000, seed: int = 0):
        self.burst_gap = burst_gap
        self.min_count = min_count
        self.recent = recent
        self.broad_recent = broad_recent
        self.failure_prior = failure_prior
        self.prior = prior
        self.growth = growth
        self.band_window = band_window
        self.band_adapt = band_adapt
        self.band_bins = band_bins
        self.repredict = repredict
        self.residual = residual
        self.refit_every = refit_every
        self.min_train = min_train
        self.max_train = max_train
        self.seed = seed

    def reset(self, seed=None) -> "HierarchyPredictor":
        super().reset(seed)
        self._stats: dict = {}
        self._burst_of: dict[str, tuple] = {}
        self._streams: dict = {}               # (user, gpus) -> [last arrival, burst number]
        self._first: dict[str, tuple] = {}     # id -> (prediction at submission, stratum)
        self._chains: dict[str, tuple] = {}    # id -> the job's (level, stats), until it completes
        self._broad: dict = {}                 # (user, gpus) -> the (level, stats) of the broad levels
        self.bands_ = ErrorBands(window=self.band_window, adapt=self.band_adapt, bins=self.band_bins)
        self._issued: dict[str, tuple] = {}    # id -> the band issued at submission (adaptive calibration)
        self.level_counts_ = {name: 0 for name in LEVELS + ("prior",)}
        self.model_ = None
        self.n_fits_ = 0
        self._rows: list = []                  # residual training rows (features at submission)
        self._targets: list[float] = []
        self._since_fit = 0
        self._cache: dict = {}                 # (id, fit, base, level, count) -> corrected value
        self._codes: dict = {name: {} for name in _CATEGORIES}
        self._checks: dict = {"seen": deque(maxlen=_CHECK), "unseen": deque(maxlen=_CHECK)}
        return self

    # -- keys ----------------------------------------------------------------------------------
    def _burst(self, job):
        if self.burst_gap <= 0 or job.user is None:
            return None
        b = self._burst_of.get(job.id)
        if b is None:
            stream = (job.user, job.gpus)
            last = self._streams.get(stream)
            t = float(job.arrival)
            if last is None or t - last[0] > self.burst_gap:
                last = self._streams[stream] = [t, 0 if last is None else last[1] + 1]
            else:
                last[0] = max(last[0], t)
            b = self._burst_of[job.id] = ("burst", job.user, job.gpus, last[1])
        return b

    def _seen_keys(self, job) -> list:
        """``(level, key)`` of the job's group and burst, finest first (either left out where
        it has none)."""
        out = []
        if job.group is not None:
            out.append(("group", ("group", job.group)))
        b = self._burst(job)
        if b is not None:
            out.append(("burst", b))
        return out

    @staticmethod
    def _broad_keys(job) -> list:
        """``(level, key)`` of the broad levels, finest first (user x GPUs and user left out
        without a user)."""
        out = []
        if job.user is not None:
            out.append(("user_gpus", ("user_gpus", job.user, job.gpus)))
            out.append(("user", ("user", job.user)))
        out.append(("gpus", ("gpus", job.gpus)))
        out.append(("global", ("global",)))
        return out

    def _chain(self, job) -> tuple:
        """``(level, stats)`` of the job's keys, finest first: built at its first prediction (the
        stats of a key no run has yet are created empty) and kept until it completes, so that a
        prediction neither builds nor hashes the keys again. The broad levels' part (user x
        GPUs, user, GPUs, global) is shared by every job of one (user, GPU count), built once."""
        chain = self._chains.get(job.id)
        if chain is None:
            broad = self._broad.get((job.user, job.gpus))
            if broad is None:
                broad = self._broad[(job.user, job.gpus)] = self._stats_of(self._broad_keys(job))
            chain = self._chains[job.id] = self._stats_of(self._seen_keys(job)) + broad
        return chain

    def _stats_of(self, keys) -> tuple:
        """``(level, stats)`` of ``(level, key)`` pairs, the stats of a new key created empty."""
        stats = self._stats
        out = []
        for level, key in keys:
            st = stats.get(key)
            if st is None:
                st = stats[key] = _Stats(self.recent if level in _SEEN else self.broad_recent)
            out.append((level, st))
        return tuple(out)

    def sibling_keys(self, job) -> tuple:
        """The job's group and burst keys (see the module docstring)."""
        if job is None:
            return ()
        return tuple(key for _, key in self._seen_keys(job))

    # -- learning ------------------------------------------------------------------------------
    def observe(self, completed: Sequence) -> None:
        """Add completed jobs to the history of each of their keys; record their errors."""
        super().observe(completed)
        for c in sorted(completed, key=_completion_order) if len(completed) > 1 else completed:
            job = c.job
            value = math.log(float(c.work) * float(job.tau_star))
            failed = c.status in FAILED_STATUSES
            chain = self._chain(job)
            del self._chains[job.id]
            for _, st in chain:
                st.add(value, failed)
            first = self._first.pop(job.id, None)
            if first is not None:
                work, stratum, base, row, corrected = first
                self.bands_.add(stratum, work, float(c.work), issued=self._issued.pop(job.id, None))
                if not failed and row is not None:
                    self._rows.append(row)
                    self._targets.append(value - base)
                    self._since_fit += 1
                    if corrected is not None:
                        self._checks[stratum].append((abs(value - base), abs(value - corrected)))

    # -- predicting ----------------------------------------------------------------------------
    def _level(self, job, chain=None):
        """``(level, stats)`` of the first level with ``min_count`` successful runs, or
        ``("prior", None)``; ``chain``: the job's :meth:`_chain`, if known."""
        min_count = self.min_count
        for level, st in self._chain(job) if chain is None else chain:
            if len(st.recent) >= min_count:
                return level, st
        return "prior", None

    def level_of(self, job) -> str:
        """The hierarchy level that predicts ``job`` now (``"prior"`` before any completion)."""
        self._check_fitted()
        return self._level(job)[0]

    def failure_probability(self, job) -> float:
        """Probability that ``job`` fails, from its keys' failure counts (each smoothed toward
        its parent's, from the global rate down to the finest key)."""
        self._check_fitted()
        return self._failure_p(self._chain(job))

    def _failure_p(self, chain) -> float:
        p = 0.0
        prior = self.failure_prior
        for level, st in reversed(chain):
            n = st.n
            if not n:
                continue
            if level == "global":
                p = (st.failed + 0.5) / (n + 1.0)
            else:
                p = (st.failed + prior * p) / (n + prior)
        return p

    def _failure_median(self, chain):
        for _, st in chain:
            if st.failed_logs:
                return st.failed_median()
        return None

    def _base(self, job, chain=None):
        """(log seconds from the hierarchy or None, stratum, level index, count at the level)."""
        if chain is None:
            chain = self._chain(job)
        level, st = self._level(job, chain)
        if st is None:
            return None, "unseen", len(LEVELS), 0
        value = st.median()
        if self._failure_p(chain) > 0.5:
            fail = self._failure_median(chain)
            if fail is not None:
                value = fail
        return value, "seen" if level in _SEEN else "unseen", LEVELS.index(level), len(st.recent)

    def _point(self, job, details: bool = False, chain=None):
        """(log seconds at submission or None for the prior, stratum); with ``details`` also the
        hierarchy's own value, the residual features and the corrected value (or None); ``chain``:
        the job's :meth:`_chain`, if known."""
        base, stratum, level, count = self._base(job, chain)
        row = corrected = None
        if self.residual == "gbm" and base is not None:
            row = self._features(job, base, level, count)
            model = self._model()
            if model is not None:
                key = (job.id, self.n_fits_, base, level, count)
                corrected = self._cache.get(key)
                if corrected is None:
                    corrected = base + float(model.predict(row[None, self._columns])[0])
                    if len(self._cache) > 4096:
                        self._cache.clear()
                    self._cache[key] = corrected
        value = base
        if corrected is not None and self.uses_residual(stratum):
            value = corrected
        if details:
            return value, stratum, base, row, corrected
        return value, stratum

    def uses_residual(self, stratum: str) -> bool:
        """Whether the residual model corrects predictions of ``stratum`` ("seen" / "unseen") now:
        over the last successful completions it had predicted, its mean |log error| beat the
        hierarchy's."""
        checks = self._checks[stratum]
        if len(checks) < _MIN_CHECKS:
            return False
        return sum(c for _, c in checks) < sum(b for b, _ in checks)

    def _features(self, job, base: float, level: int, count: int):
        import numpy as np

        par = job.parallelism
        meta = job.meta or {}
        submitted = meta.get("submitted")
        lr = meta.get("lr")
        nan = float("nan")
        row = [base, float(level), math.log1p(count), math.log(float(job.tau_star)), float(job.gpus),
               math.log2(job.batch_size) if job.batch_size else nan,
               float(par.pp) if par is not None else nan, float(par.tp) if par is not None else nan,
               math.log10(lr) if isinstance(lr, (int, float)) and not isinstance(lr, bool) and lr > 0 else nan]
        if isinstance(submitted, (int, float)) and not isinstance(submitted, bool):
            row += [(float(submitted) % 86400.0) / 3600.0, float((int(float(submitted) // 86400) + 3) % 7)]
        else:
            row += [nan, nan]
        for name in ("user_gpus", "user", "gpus", "global"):
            st = self._stats.get(_key_of(job, name))
            row.append(st.median() if st is not None and st.recent else nan)
        for name in _CATEGORIES:
            value = getattr(job, name, None)
            codes = self._codes[name]
            code = codes.setdefault(value, len(codes)) if value is not None else None
            row.append(float(code) if code is not None and code < _MAX_CODE else nan)
        return np.asarray(row, dtype=np.float64)

    def _model(self):
        """The residual model, refitted first when ``refit_every`` successful completions came."""
        n = len(self._rows)
        if n >= self.min_train and (self.model_ is None or self._since_fit >= self.refit_every):
            import numpy as np
            from sklearn.ensemble import HistGradientBoostingRegressor

            X = np.vstack(self._rows[-self.max_train:])
            y = np.asarray(self._targets[-self.max_train:])
            first_cat = X.shape[1] - len(_CATEGORIES)
            cats = np.zeros(X.shape[1], dtype=bool)
            cats[first_cat:] = True
            keep = ~np.all(np.isnan(X), axis=0)     # a feature the jobs never have is left out
            self._columns = np.flatnonzero(keep)
            X, cats = X[:, keep], cats[keep]
            self.model_ = HistGradientBoostingRegressor(
                loss="absolute_error", max_iter=100, learning_rate=0.1, max_leaf_nodes=15,
                min_samples_leaf=20, categorical_features=cats, early_stopping=False,
                random_state=self.seed).fit(X, y)
            self.n_fits_ += 1
            self._since_fit = 0
        return self.model_

    def predict(self, job, *, attained=0, truth=None):
        """Predicted total work of ``job`` (> ``attained``); see the module docstring."""
        self._check_fitted()
        tau = float(job.tau_star)
        if attained and attained > 0:
            return self._repredict(job, float(attained), tau)
        chain = self._chain(job)
        value, stratum, base, row, corrected = self._point(job, details=True, chain=chain)
        work = math.exp(value) / tau if value is not None else self.prior / tau
        if job.id not in self._first:
            self._first[job.id] = (work, stratum, base, row, corrected)
            if self.band_adapt:
                issued = self.bands_.issue(stratum, work)
                if issued is not None:
                    self._issued[job.id] = issued
            self.level_counts_[self._level(job, chain)[0]] += 1
        return work

    def _repredict(self, job, attained: float, tau: float) -> float:
        level = math.log(attained * tau)
        value = attained * self.growth
        for _, st in self._chain(job):
            above = st.median_above(level)
            if above is not None:
                value = max(math.exp(above) / tau, _MIN_GROWTH * attained)
                break
        if self.repredict == "capped":
            band = self.quantiles(job, attained=attained, levels=(0.5,))[0]
            value = max(min(value, band), _MIN_GROWTH * attained)
        return value

    def quantiles(self, job, *, attained=0, truth=None, levels=QUANTILE_LEVELS) -> tuple:
        """Calibrated quantiles of ``job``'s total work (see "Uncertainty" in the module docstring).

        >>> from asrpt.sim.view import JobView
        >>> v = JobView(0, "a", (0,), 0, 1, 1, True, 1)
        >>> [round(x) for x in HierarchyPredictor().reset().quantiles(v)]  # prior band, sigma 1
        [999, 3600, 12968]
        """
        self._check_fitted()
        work, stratum = self._band_center(job)
        return self.bands_.quantiles(stratum, work, levels, attained)

    def _band_center(self, job) -> tuple:
        """``(work, stratum)``: the current point prediction a band is drawn around, and its
        stratum in :attr:`bands_`."""
        value, stratum = self._point(job)
        return (math.exp(value) if value is not None else self.prior) / float(job.tau_star), stratum
