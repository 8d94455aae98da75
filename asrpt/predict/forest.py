"""The random-forest predictor of a job's work, learned online from completed jobs (issue 7).

This module owns :class:`RandomForestPredictor`, registered as ``"forest"``. It follows the
:class:`~asrpt.predict.base.Predictor` protocol: it learns only from ``observe(completed)`` (the
jobs completed since the previous decision, with their true work) and predicts at submission from
what is known then.

**Target.** The log of the job's best processing time in seconds, ``y = log(work * tau*)`` (work
is iterations for DNN jobs, seconds for abstract jobs, whose ``tau*`` is 1). Seconds make jobs of
different models comparable (a user's history mixes models), and within a group (one
configuration, one ``tau*``) they are the iterations up to a constant. The forest learns the
*correction* ``y - b`` to a history baseline ``b``, the group's median log time (the user's mean
without group history, else ``log(prior)``; the ``group_median`` feature), and a prediction is
``exp(b + r^) / tau*``. Leaves are read as in a quantile regression forest: ``r^`` is the weighted
median of the training corrections in the leaves the job reaches (``leaf="median"``), robust to
the startup failures that drag a mean of logs down; ``leaf="mean"`` is scikit-learn's average.
Where the other features carry no signal, the corrections are noise around 0 and the forest
stays near the robust baseline; where they do (drift, the last run, configuration effects on a
new group), it learns them.

**Features** (:data:`FEATURES`), all known at submission: ``log tau*``, GPUs, the parallel
configuration (dp, pp, tp), log2 batch size, integer codes of the model, dataset, user, group key
(:func:`~asrpt.predict.base.group_key`) and precision (codes in order of first completion; a
value not seen completed by then gets -1), the submission hour and weekday (from
``meta["submitted"]``, epoch seconds UTC; -1 without it), ``log10`` of ``meta["lr"]`` (1 without
it), and history statistics of completed jobs: the group's count, median, mean, last, recent
(exponentially weighted mean, weights halving per older run) and standard deviation of the
target, the user's count and mean, and the mean, last, recent and user mean minus the group
median (the baseline above). Without group history the group statistics take the user's mean,
else ``log(prior)`` (the count says so). Trace jobs without a group get no group statistics (no
fake groups); abstract jobs get -1 for every DNN feature.

**No look-ahead.** A completed job becomes a training row with its features *as of its
submission*: the history statistics use only jobs that completed no later than it arrived, exactly
what the prediction at its arrival saw. Per-group and per-user histories are kept sorted by
completion time, with running sums and sorted values for the as-of-now statistics (O(log k) per
update).

**Completion bias.** Completed jobs are a biased sample of recent arrivals: of the jobs that
arrived lately only the short ones have completed (more so under a scheduler that runs short
jobs first), so a regression on every completed job learns durations that are too short for
their features. The predictor knows which jobs it predicted and has not seen complete (the
scheduler's queue, nothing from the future) and trains only on jobs that arrived no later than
the ``maturity`` quantile of the arrival times of those pending jobs: cohorts old enough that
almost all of their jobs, long ones included, have completed. Rows of later jobs join the
training set once their cohort has matured. (If that leaves fewer than ``min_train`` rows, all
rows are used.) The history statistics are not cut: they use every completed job, exactly as
at prediction time.

**Schedule.** The forest (scikit-learn ``RandomForestRegressor``, ``random_state=seed``,
``n_jobs=1``) is fitted once ``min_train`` jobs have completed and refitted whenever
``min(retrain_every, n_fit)`` more have (``n_fit`` the completions at the last fit: the training
set doubles between early fits), on the most recent ``max_train`` rows; the fit happens at the
next prediction that needs it. Before the first fit predictions come from the cold-start chain of
:class:`~asrpt.predict.base.GroupMeanPredictor` (group mean, user mean, global median, prior).
Fitted trees are compiled into flat arrays and evaluated for all trees at once, one level per
step: a prediction costs O(depth) numpy operations over the trees, not a scikit-learn call.

**Re-prediction given the work done** (A-SRPT's adaptive step, proofs/model.md, Definition 4;
``attained > 0``). A second
forest learns the time ``P`` of a job *known to have run* ``l`` seconds, from the completed jobs:
each contributes one row per level ``l`` strictly below its true time ``P`` (``attained_levels``
levels at evenly spaced quantiles of the training targets; at most ``max_train`` rows, a seeded
subsample), with the base features plus the "attained" features ``log l`` and ``log l`` minus
the group's median and last, and the target ``log P`` itself (a job that has outlived its
baseline is no longer described by it). A leaf thus holds jobs that outlived ``l``: the
estimate is conditioned on survival (``P > l``), which is exactly what A-SRPT knows when a job
outlives its prediction (a re-prediction from the base forest would repeat the estimate the job
just outlived). The answer is the estimate, at least ``1.05 *
attained`` (so a job is re-predicted O(log N) times); if the estimate does not exceed the work
done (the job outlived what the training data knows), or before the conditional forest can be
fitted (or with ``attained_levels=0``), it is the base prediction if that exceeds the work done,
else ``growth * attained`` (doubling by default).

Examples
--------
>>> from asrpt.sim.view import CompletedJob, JobView
>>> def view(i, group):
...     return JobView(index=i, id=f"j{i}", key=(i,), arrival=i, gpus=1, weight=1,
...                    is_abstract=True, tau_star=1, group=group)
>>> p = RandomForestPredictor(n_estimators=10, min_train=20).reset()
>>> p.predict(view(0, "a"))  # cold start: the prior (3600 s / tau*)
3600.0
>>> p.observe([CompletedJob(view(i, "ab"[i % 2]), i + 1, 10.0 if i % 2 else 100.0) for i in range(40)])
>>> a, b = p.predict(view(40, "a")), p.predict(view(41, "b"))  # groups a: 100 s, b: 10 s
>>> 70 < a < 130 and 7 < b < 13, p.n_fits_
(True, 1)
>>> p.predict(view(41, "b"), attained=12.0) > 12.0
True
"""

from __future__ import annotations

import bisect
import math
from numbers import Integral, Real
from typing import TYPE_CHECKING, Sequence

from sortedcontainers import SortedList

if TYPE_CHECKING:   # (annotations only: numpy is imported where it is used)
    import numpy as np

from .._validation import Interval, Options
from ..errors import NotFittedError
from .base import GroupMeanPredictor, Predictor, group_key, register_predictor

__all__ = ["RandomForestPredictor", "FEATURES", "CONDITIONAL_FEATURES"]

FEATURES: tuple[str, ...] = (
    "log_tau", "gpus", "dp", "pp", "tp", "log2_batch", "model", "dataset", "user", "group",
    "precision", "hour", "weekday", "log10_lr", "group_count", "group_median", "group_mean",
    "group_last", "group_recent", "group_std", "user_count", "user_mean", "group_mean_vs_median",
    "group_last_vs_median", "group_recent_vs_median", "user_mean_vs_median")
CONDITIONAL_FEATURES: tuple[str, ...] = FEATURES + ("log_attained", "attained_vs_group_median",
                                                    "attained_vs_group_last")
_MIN_GROWTH = 1.05
_RECENT_WEIGHTS = tuple(0.5 ** k for k in range(15, -1, -1))
_BASELINE = FEATURES.index("group_median")
_LAST = FEATURES.index("group_last")
_CATEGORIES = ("model", "dataset", "user", "group", "precision")


class _History:
    """Targets of completed jobs of one group (or user), sorted by completion time."""

    __slots__ = ("times", "values", "sorted", "total", "squares")

    def __init__(self):
        self.times: list = []
        self.values: list[float] = []
        self.sorted = SortedList()
        self.total = 0.0
        self.squares = 0.0

    def add(self, time, value: float) -> None:
        k = bisect.bisect_right(self.times, time)
        self.times.insert(k, time)
        self.values.insert(k, value)
        self.sorted.add(value)
        self.total += value
        self.squares += value * value

    def stats(self, as_of=None) -> tuple[int, float, float, float, float, float]:
        """(count, mean, median, last, recent, std) of the values completed no later than
        ``as_of``; ``recent`` is the exponentially weighted mean (weight halving per older run,
        over the last 16 runs)."""
        n = len(self.times)
        if as_of is not None:
            n = bisect.bisect_right(self.times, as_of)
        if n == 0:
            return 0, 0.0, 0.0, 0.0, 0.0, 0.0
        if n == len(self.times):
            ordered, total, squares = self.sorted, self.total, self.squares
        else:
            part = self.values[:n]
            ordered, total, squares = sorted(part), math.fsum(part), math.fsum(v * v for v in part)
        mean = total / n
        mid = n // 2
        median = ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2
        std = math.sqrt(max(0.0, squares / n - mean * mean)) if n > 1 else 0.0
        tail = self.values[max(0, n - 16):n]
        weights = _RECENT_WEIGHTS[-len(tail):]
        recent = math.fsum(w * v for w, v in zip(weights, tail)) / math.fsum(weights)
        return n, mean, median, self.values[n - 1], recent, std


class _CompiledForest:
    """A fitted RandomForestRegressor as flat node arrays, evaluated one tree level per step for
    all trees at once.

    With training data ``X, y`` given, a prediction is the weighted median of the training
    targets in the leaves the row reaches (each tree's leaf weighted 1 / its size / the number of
    trees): the median of a quantile regression forest (Meinshausen 2006), instead of the mean
    of the trees' leaf means."""

    def __init__(self, forest, X=None, y=None):
        import numpy as np  # (here, not at import: the simulate command's predictors need none)
        trees = [est.tree_ for est in forest.estimators_]
        sizes = [t.node_count for t in trees]
        self.roots = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.intp)
        left, right, feature, threshold, value = [], [], [], [], []
        for root, t in zip(self.roots, trees):
            c = t.node_count
            leaf = t.children_left[:c] < 0
            own = np.arange(c)
            left.append(root + np.where(leaf, own, t.children_left[:c]))
            right.append(root + np.where(leaf, own, t.children_right[:c]))
            feature.append(np.where(leaf, 0, t.feature[:c]))
            threshold.append(np.where(leaf, np.inf, t.threshold[:c]))
            value.append(t.value[:c, 0, 0])
        self.left = np.concatenate(left).astype(np.intp)
        self.right = np.concatenate(right).astype(np.intp)
        self.feature = np.concatenate(feature).astype(np.intp)
        self.threshold = np.concatenate(threshold)
        self.value = np.concatenate(value)
        self.depth = max(t.max_depth for t in trees)
        self.pooled = X is not None
        if self.pooled:
            # every tree's training targets sorted by (leaf, target), one flat array for all trees
            leaves = forest.apply(np.asarray(X, dtype=np.float32))
            m, n = len(y), len(trees)
            self.start = np.zeros(len(self.value), dtype=np.intp)
            self.count = np.zeros(len(self.value), dtype=np.intp)
            flat = np.empty(n * m)
            for i in range(n):
                order = np.lexsort((y, leaves[:, i]))
                lv = leaves[order, i]
                flat[i * m:(i + 1) * m] = y[order]
                first = np.flatnonzero(np.r_[True, lv[1:] != lv[:-1]])
                self.start[self.roots[i] + lv[first]] = i * m + first
                self.count[self.roots[i] + lv[first]] = np.diff(np.r_[first, m])
            self.targets = flat

    def predict_one(self, x: np.ndarray) -> float:
        # scikit-learn compares float32 features with float64 thresholds; so do we
        import numpy as np  # (here, not at import: the simulate command's predictors need none)
        x = np.asarray(x, dtype=np.float32).astype(np.float64)
        node = self.roots
        left, right, feature, threshold = self.left, self.right, self.feature, self.threshold
        for _ in range(self.depth):
            go_left = x.take(feature.take(node)) <= threshold.take(node)
            node = np.where(go_left, left.take(node), right.take(node))
        if not self.pooled:
            return float(self.value.take(node).mean())
        start, count = self.start.take(node), self.count.take(node)
        total = int(count.sum())
        ends = np.cumsum(count)
        values = self.targets.take(np.repeat(start - (ends - count), count) + np.arange(total))
        weights = np.repeat(1.0 / count, count)
        order = np.argsort(values, kind="stable")
        cum = np.cumsum(weights.take(order))
        return float(values[order[int(np.searchsorted(cum, 0.5 * cum[-1]))]])


@register_predictor("forest")
class RandomForestPredictor(Predictor):
    """Random forest on log processing time, trained online on completed jobs only.

    See the module docstring for the features, the training schedule and the re-prediction.

    Parameters
    ----------
    n_estimators : int
        Trees per forest.
    max_depth : int or None
        Maximum tree depth (None: unlimited).
    min_samples_leaf : int
        Minimum training rows per leaf.
    max_features : float in (0, 1]
        Share of the features tried at each split.
    retrain_every : int
        Completed jobs between refits (sooner while the training set is small: a refit also
        comes when the completions since the last fit equal those it was fitted on).
    min_train : int
        Completed jobs before the first fit (cold start below).
    max_train : int or None
        Train on the most recent rows only (None: all); also caps the conditional forest's
        rows (a seeded subsample).
    attained_levels : int
        Levels per job for the conditional (re-prediction) forest; 0 disables it.
    leaf : {"median", "mean"}
        ``"median"`` (default): the weighted median of the training targets in the leaves a job
        reaches (a quantile regression forest's median; robust to the startup failures that drag
        a mean of logs down); ``"mean"``: scikit-learn's mean of the trees' leaf means.
    maturity : float in [0, 1]
        Train only on jobs that arrived no later than this quantile of the arrival times of the
        jobs still pending (predicted, not completed): 0 is before the oldest pending job, 1
        keeps every completed job. See "Completion bias" in the module docstring.
    prior : float
        Seconds assumed for a job with no history at all (cold start, imputation).
    growth : float
        Re-prediction factor over the work done when no conditional forest is available.
    seed : int
        The forests' ``random_state`` (the run seed given to ``reset`` is not used).

    Attributes
    ----------
    fallback_ : GroupMeanPredictor
        The cold-start predictor, fed the same observations.
    forest_ : sklearn.ensemble.RandomForestRegressor or None
        The current base forest (None before the first fit).
    conditional_forest_ : sklearn.ensemble.RandomForestRegressor or None
        The current re-prediction forest.
    n_fits_ : int
        Base-forest fits so far.
    fitted_at_ : int
        Completed jobs seen at the last base fit (0 before).
    n_train_ : int
        Training rows of the last base fit.

    Examples
    --------
    >>> p = RandomForestPredictor(n_estimators=5).reset()
    >>> p.forest_ is None, p.n_fits_
    (True, 0)
    """

    parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_depth": [None, Interval(Integral, 1, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_features": [Interval(Real, 0, 1, closed="right")],
        "retrain_every": [Interval(Integral, 1, None, closed="left")],
        "min_train": [Interval(Integral, 2, None, closed="left")],
        "max_train": [None, Interval(Integral, 2, None, closed="left")],
        "attained_levels": [Interval(Integral, 0, None, closed="left")],
        "leaf": [Options(str, {"median", "mean"})],
        "maturity": [Interval(Real, 0, 1, closed="both")],
        "prior": [Interval(Real, 0, None, closed="neither")],
        "growth": [Interval(Real, 1, None, closed="neither")],
        "seed": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, *, n_estimators: int = 30, max_depth: int | None = 10,
                 min_samples_leaf: int = 10, max_features: float = 0.5, retrain_every: int = 1000,
                 min_train: int = 50, max_train: int | None = 4000, attained_levels: int = 8,
                 leaf: str = "median", maturity: float = 0.1, prior: float = 3600.0,
                 growth: float = 2.0, seed: int = 0):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.retrain_every = retrain_every
        self.min_train = min_train
        self.max_train = max_train
        self.attained_levels = attained_levels
        self.leaf = leaf
        self.maturity = maturity
        self.prior = prior
        self.growth = growth
        self.seed = seed

    # -- state ---------------------------------------------------------------------------------
    def reset(self, seed=None) -> "RandomForestPredictor":
        super().reset(seed)
        self.fallback_ = GroupMeanPredictor(prior=self.prior, growth=self.growth).reset(seed)
        self.forest_ = None
        self.conditional_forest_ = None
        self.n_fits_ = 0
        self.fitted_at_ = 0
        self.n_train_ = 0
        self._compiled = None
        self._conditional = None
        self._conditional_at = -1
        self._groups: dict = {}
        self._users: dict = {}
        self._codes: dict[str, dict] = {name: {} for name in _CATEGORIES}
        self._rows: list[np.ndarray] = []
        self._targets: list[float] = []
        self._log_prior = math.log(self.prior)
        self._row_arrivals: list = []
        self._pending: dict = {}                 # id -> arrival of jobs predicted, not yet observed
        self._observed_ids: set = set()
        return self

    def observe(self, completed: Sequence) -> None:
        """Learn from newly completed jobs (each becomes a row with its features at submission)."""
        super().observe(completed)
        self.fallback_.observe(completed)
        for c in sorted(completed, key=lambda c: (c.completion, c.job.key)):
            job = c.job
            target = math.log(float(c.work) * float(job.tau_star))
            self._rows.append(self._features(job, as_of=job.arrival))
            self._targets.append(target)
            self._row_arrivals.append(job.arrival)
            self._pending.pop(job.id, None)
            self._observed_ids.add(job.id)
            for name in _CATEGORIES:
                value = _category(job, name)
                if value is not None:
                    codes = self._codes[name]
                    codes.setdefault(value, (len(codes), c.completion))
            g = group_key(job)
            if g is not None:
                self._groups.setdefault(g, _History()).add(c.completion, target)
            if job.user is not None:
                self._users.setdefault(job.user, _History()).add(c.completion, target)

    # -- features ------------------------------------------------------------------------------
    def _features(self, job, as_of=None) -> np.ndarray:
        import numpy as np  # (here, not at import: the simulate command's predictors need none)
        par = job.parallelism
        meta = job.meta or {}
        submitted = meta.get("submitted")
        lr = meta.get("lr")
        row = [math.log(float(job.tau_star)) if not job.is_abstract else -1.0,
               float(job.gpus),
               float(par.dp) if par is not None else -1.0,
               float(par.pp) if par is not None else -1.0,
               float(par.tp) if par is not None else -1.0,
               math.log2(job.batch_size) if job.batch_size else -1.0]
        for name in _CATEGORIES:
            code = self._codes[name].get(_category(job, name))
            row.append(float(code[0]) if code is not None and (as_of is None or code[1] <= as_of) else -1.0)
        if isinstance(submitted, (int, float)) and not isinstance(submitted, bool):
            s = float(submitted)
            row += [(s % 86400.0) / 3600.0, float((int(s // 86400) + 3) % 7)]
        else:
            row += [-1.0, -1.0]
        row.append(math.log10(lr) if isinstance(lr, (int, float)) and not isinstance(lr, bool) and lr > 0 else 1.0)
        user = self._users.get(job.user) if job.user is not None else None
        u_count, u_mean = user.stats(as_of)[:2] if user is not None else (0, 0.0)
        g = group_key(job)
        hist = self._groups.get(g) if g is not None else None
        count, mean, median, last, recent, std = hist.stats(as_of) if hist is not None else (0,) + (0.0,) * 5
        if not u_count:
            u_mean = self._log_prior
        if count == 0:
            mean = median = last = recent = u_mean
        row += [float(count), median, mean, last, recent, std, float(u_count), u_mean,
                mean - median, last - median, recent - median, u_mean - median]
        return np.asarray(row, dtype=np.float64)

    # -- fitting -------------------------------------------------------------------------------
    def _new_forest(self):
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(n_estimators=self.n_estimators, max_depth=self.max_depth,
                                     min_samples_leaf=self.min_samples_leaf,
                                     max_features=self.max_features, random_state=self.seed,
                                     n_jobs=1)

    def _window(self):
        """Training rows: those of jobs that arrived no later than the ``maturity`` quantile of the
        arrivals of the jobs still pending (all rows if that leaves fewer than ``min_train``),
        the most recent ``max_train`` of them."""
        import numpy as np  # (here, not at import: the simulate command's predictors need none)
        n = len(self._rows)
        keep = np.arange(n)
        if self._pending and self.maturity < 1:
            cutoff = float(np.quantile(np.asarray(list(self._pending.values()), dtype=float),
                                       self.maturity, method="lower"))
            mature = np.flatnonzero(np.asarray(self._row_arrivals, dtype=float) <= cutoff)
            if mature.size >= self.min_train:
                keep = mature
        if self.max_train is not None:
            keep = keep[-self.max_train:]
        return np.vstack([self._rows[i] for i in keep]), np.asarray(self._targets)[keep]

    def _model(self):
        """The base forest, refitted first if the schedule says so (None during cold start)."""
        n = self.n_observed_
        if n >= self.min_train and (self.forest_ is None
                                    or n - self.fitted_at_ >= min(self.retrain_every, self.fitted_at_)):
            X, y = self._window()
            r = y - X[:, _BASELINE]  # learn corrections to the history baseline
            self.forest_ = self._new_forest().fit(X, r)
            self._compiled = _CompiledForest(self.forest_, *((X, r) if self.leaf == "median" else ()))
            self.n_fits_ += 1
            self.fitted_at_ = n
            self.n_train_ = len(y)
        return self._compiled

    def _conditional_model(self):
        """The survival-conditioned forest for the current base fit (None if unavailable)."""
        import numpy as np  # (here, not at import: the simulate command's predictors need none)
        if self.attained_levels == 0 or self._model() is None:
            return None
        if self._conditional_at != self.fitted_at_:
            self._conditional_at = self.fitted_at_
            X, y = self._window()
            probs = np.arange(1, self.attained_levels + 1) / (self.attained_levels + 1)
            levels = np.unique(np.quantile(y, probs))
            above = y[:, None] > levels[None, :]
            i, k = np.nonzero(above)
            if i.size < 2:
                self.conditional_forest_, self._conditional = None, None
                return None
            if self.max_train is not None and i.size > self.max_train:  # a seeded subsample
                keep = np.sort(np.random.default_rng(self.seed).choice(i.size, self.max_train, replace=False))
                i, k = i[keep], k[keep]
            lv = levels[k]
            Xc = np.column_stack([X[i], lv, lv - X[i, _BASELINE], lv - X[i, _LAST]])
            yc = y[i]
            self.conditional_forest_ = self._new_forest().fit(Xc, yc)
            self._conditional = _CompiledForest(self.conditional_forest_,
                                                *((Xc, yc) if self.leaf == "median" else ()))
        return self._conditional

    # -- predicting ----------------------------------------------------------------------------
    def predict(self, job, *, attained=0, truth=None):
        """Predicted total work of ``job`` (> ``attained``); see the module docstring."""
        self._check_fitted()
        if attained and attained > 0:
            return self._repredict(job, float(attained))
        if job.id not in self._observed_ids:
            self._pending.setdefault(job.id, job.arrival)
        model = self._model()
        if model is None:
            return self.fallback_.predict(job)
        x = self._features(job)
        return math.exp(x[_BASELINE] + model.predict_one(x)) / float(job.tau_star)

    def _repredict(self, job, attained: float):
        import numpy as np  # (here, not at import: the simulate command's predictors need none)
        cond = self._conditional_model()
        if cond is not None:
            x = self._features(job)
            tau = float(job.tau_star)
            level = math.log(attained * tau)
            xc = np.concatenate([x, [level, level - x[_BASELINE], level - x[_LAST]]])
            value = math.exp(cond.predict_one(xc)) / tau
            if value > attained:
                return max(value, _MIN_GROWTH * attained)
        base = self.predict(job)
        return base if base > attained else attained * self.growth

    # -- inspection ----------------------------------------------------------------------------
    def training_data(self) -> tuple[np.ndarray, np.ndarray]:
        """The base forest's training rows so far (features as of each job's submission) and
        targets (log seconds), oldest first; shape (n, len(FEATURES)).

        Raises
        ------
        NotFittedError
            Before ``reset()``.
        """
        import numpy as np  # (here, not at import: the simulate command's predictors need none)
        self._check_fitted()
        if not self._rows:
            return np.zeros((0, len(FEATURES))), np.zeros(0)
        return np.vstack(self._rows), np.asarray(self._targets)

    def feature_importances(self) -> dict[str, float]:
        """Impurity importances of the current base forest, by feature name.

        Raises
        ------
        NotFittedError
            No forest has been fitted yet.
        """
        if getattr(self, "forest_", None) is None:
            raise NotFittedError("RandomForestPredictor: no forest fitted yet (fewer than min_train completions)")
        return dict(zip(FEATURES, (float(v) for v in self.forest_.feature_importances_)))


def _category(job, name: str):
    if name == "group":
        return group_key(job)
    return getattr(job, name, None)
