"""Accuracy and distortion of work predictions: from a run's records, or a predictor replayed.

This module owns the prediction-error measures that asrpt reports (proofs/model.md, Definition 6):

- accuracy (float only): :func:`mae` (mean absolute error, in work units), :func:`mape` (mean
  absolute error relative to the truth, as a fraction), :func:`r2_log` (coefficient of
  determination of log predictions against log truths), :func:`spearman` (rank correlation: what
  an SRPT-style order depends on), the mean and median absolute log ratio, and :func:`coverage`
  of prediction bands;
- :class:`Scores`, the headline of ``asrpt predict-eval`` and the benchmark (issue 14): Spearman
  rho, median |log error|, share within 2x, R^2 on log over successful runs, 80 % band coverage
  (MAPE is left out of it: it measures the failed runs more than the predictor);
- distortion (exact for int and Fraction inputs): ``mu_over = max(1, max_j N^_j / N_j)``,
  ``mu_under = max(1, max_j N_j / N^_j)``, ``mu = mu_over * mu_under`` (Theorem 1's ``mu``,
  proofs/model.md, Definition 5), and nearest-rank percentiles of the per-job ratio ``N^_j / N_j``
  (:func:`distortion`).

Where the pairs (truth, prediction) come from:

- :func:`run_predictions`: a simulation's records (true work) and the predictions the policy
  recorded in ``policy_data`` (A-SRPT: ``"initial_predictions"`` at submission and
  ``"predictions"``, the last value after adaptive updates);
- :func:`replay_predictions`: a predictor replayed on an instance without a scheduler. Jobs are
  predicted in arrival order (ties by id), each after observing every job that completed no later
  than its arrival (the engine's order: completions, then arrivals). Completion times are given
  (e.g. a run's) or, by default, ``arrival + P*_j`` (no queueing).

:func:`accuracy` bundles everything into a :class:`PredictionAccuracy`.

Examples
--------
>>> acc = accuracy([10, 20, 40], [10, 40, 20])
>>> acc.mae, acc.distortion.mu_over, acc.distortion.mu_under, acc.distortion.mu
(13.333333333333334, 2, 2, 4)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from numbers import Real
from typing import Any, Mapping

import numpy as np

from .._validation import InstanceOf, Options, validate_params
from ..errors import InvalidParameterError
from ..instance import Instance
from ..engine.metrics import percentile
from ..engine.records import SimResult
from ..sizes import exact_div, exact_mul
from ..state import CompletedJob, Predictor, job_views
from . import make_predictor

__all__ = ["mae", "mape", "r2_log", "spearman", "coverage", "distortion", "accuracy", "Distortion",
           "PredictionAccuracy", "PredictionLog", "Scores", "run_predictions", "replay_predictions",
           "job_views", "RATIO_PERCENTILES"]

RATIO_PERCENTILES: tuple[int, ...] = (1, 5, 25, 50, 75, 95, 99)


def _pairs(true, predicted, who: str) -> tuple[list, list]:
    t, p = list(true), list(predicted)
    if len(t) != len(p):
        raise InvalidParameterError(f"{who}: {len(t)} true values but {len(p)} predictions")
    if not t:
        raise InvalidParameterError(f"{who}: no (true, predicted) pairs")
    for x in t + p:
        if isinstance(x, bool) or not isinstance(x, Real) or not x > 0 or not math.isfinite(x):
            raise InvalidParameterError(f"{who}: values must be finite numbers > 0, got {x!r}")
    return t, p


_SEQ = [list, tuple, InstanceOf(np.ndarray)]  # of numbers > 0, checked in _pairs


@validate_params({"true": _SEQ, "predicted": _SEQ})
def mae(true, predicted) -> float:
    """Mean absolute error ``mean |N^_j - N_j|`` (work units).

    Parameters
    ----------
    true, predicted : sequence of number > 0

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        Different lengths, no pairs, or a value that is not a finite number > 0.

    Examples
    --------
    >>> mae([10, 20], [12, 16])
    3.0
    """
    t, p = _pairs(true, predicted, "mae")
    return math.fsum(abs(float(a) - float(b)) for a, b in zip(t, p)) / len(t)


@validate_params({"true": _SEQ, "predicted": _SEQ})
def mape(true, predicted) -> float:
    """Mean absolute percentage error as a fraction: ``mean |N^_j - N_j| / N_j``.

    Parameters
    ----------
    true, predicted : sequence of number > 0

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        As :func:`mae`.

    Examples
    --------
    >>> mape([10, 20], [12, 16])
    0.2
    """
    t, p = _pairs(true, predicted, "mape")
    return math.fsum(abs(float(b) - float(a)) / float(a) for a, b in zip(t, p)) / len(t)


@validate_params({"true": _SEQ, "predicted": _SEQ})
def r2_log(true, predicted) -> float | None:
    """Coefficient of determination of ``log N^`` against ``log N``: ``1 - SS_res / SS_tot``.

    1 for perfect predictions, 0 for predicting the mean log truth, negative when worse. None
    when the log truths have no variance (undefined).

    Parameters
    ----------
    true, predicted : sequence of number > 0

    Returns
    -------
    float or None

    Raises
    ------
    InvalidParameterError
        As :func:`mae`.

    Examples
    --------
    >>> r2_log([1, 10, 100], [1, 10, 100]), r2_log([5, 5], [4, 6])
    (1.0, None)
    """
    t, p = _pairs(true, predicted, "r2_log")
    lt = [math.log(float(x)) for x in t]
    lp = [math.log(float(x)) for x in p]
    mean = math.fsum(lt) / len(lt)
    ss_tot = math.fsum((x - mean) ** 2 for x in lt)
    if ss_tot == 0:
        return None
    return 1.0 - math.fsum((a - b) ** 2 for a, b in zip(lt, lp)) / ss_tot


def _ranks(values) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    k = 0
    while k < len(order):
        m = k
        while m + 1 < len(order) and values[order[m + 1]] == values[order[k]]:
            m += 1
        for r in range(k, m + 1):
            ranks[order[r]] = (k + m) / 2.0
        k = m + 1
    return ranks


@validate_params({"true": _SEQ, "predicted": _SEQ})
def spearman(true, predicted) -> float | None:
    """Spearman rank correlation of predictions with the truth (ties get mean ranks); None when
    either side is constant.

    Parameters
    ----------
    true, predicted : sequence of number > 0

    Returns
    -------
    float or None

    Raises
    ------
    InvalidParameterError
        As :func:`mae`.

    Examples
    --------
    >>> spearman([1, 2, 3], [10, 30, 20]), spearman([1, 2], [5, 5])
    (0.5, None)
    """
    t, p = _pairs(true, predicted, "spearman")
    a, b = _ranks([float(x) for x in t]), _ranks([float(x) for x in p])
    n = len(a)
    ma, mb = math.fsum(a) / n, math.fsum(b) / n
    sa = math.fsum((x - ma) ** 2 for x in a)
    sb = math.fsum((x - mb) ** 2 for x in b)
    if sa == 0 or sb == 0:
        return None
    return math.fsum((x - ma) * (y - mb) for x, y in zip(a, b)) / math.sqrt(sa * sb)


@validate_params({"true": _SEQ, "low": _SEQ, "high": _SEQ})
def coverage(true, low, high) -> float:
    """Share of jobs whose truth lies in its band ``[low, high]``.

    Parameters
    ----------
    true, low, high : sequence of number > 0

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        As :func:`mae`, or a band with ``low > high``.

    Examples
    --------
    >>> coverage([1, 5, 10], [0.5, 6, 9], [2, 8, 11])
    0.6666666666666666
    """
    t, lo = _pairs(true, low, "coverage")
    _, hi = _pairs(true, high, "coverage")
    if any(a > b for a, b in zip(lo, hi)):
        raise InvalidParameterError("coverage: a band has low > high")
    return sum(1 for x, a, b in zip(t, lo, hi) if a <= x <= b) / len(t)


@dataclass(frozen=True)
class Distortion:
    """Distortion of predictions (proofs/model.md, Definitions 5 and 6).

    Attributes
    ----------
    mu_over, mu_under, mu : number
        ``max(1, max N^/N)``, ``max(1, max N/N^)`` and their product (exact for exact inputs).
    ratio_percentiles : dict
        Nearest-rank percentiles of ``N^_j / N_j`` (keys :data:`RATIO_PERCENTILES`).
    share_over : float
        Share of jobs overestimated (``N^ > N``).
    share_within_2x : float
        Share of jobs with ``N / 2 <= N^ <= 2 N``.

    Examples
    --------
    >>> distortion([2, 2], [1, 2]).to_dict()["ratio_percentiles"]["p50"]
    Fraction(1, 2)
    """

    mu_over: Any
    mu_under: Any
    mu: Any
    ratio_percentiles: Mapping[int, Any]
    share_over: float
    share_within_2x: float

    def to_dict(self) -> dict:
        """A JSON-ready dict (percentile keys as strings ``"p50"``)."""
        d = asdict(self)
        d["ratio_percentiles"] = {f"p{q}": v for q, v in self.ratio_percentiles.items()}
        return d


@validate_params({"true": _SEQ, "predicted": _SEQ})
def distortion(true, predicted) -> Distortion:
    """Distortion statistics ``mu_over``, ``mu_under``, ``mu`` and the per-job ratio percentiles.

    Exact for int and Fraction inputs (ratios by :func:`asrpt.sizes.exact_div`).

    Parameters
    ----------
    true, predicted : sequence of number > 0

    Returns
    -------
    Distortion

    Raises
    ------
    InvalidParameterError
        As :func:`mae`.

    Examples
    --------
    >>> d = distortion([4, 4, 4], [2, 4, 12])
    >>> d.mu_over, d.mu_under, d.mu, d.ratio_percentiles[50]
    (3, 2, 6, 1)
    >>> d.share_over, round(d.share_within_2x, 3)
    (0.3333333333333333, 0.667)
    """
    t, p = _pairs(true, predicted, "distortion")
    ratios = sorted((exact_div(b, a) for a, b in zip(t, p)), key=float)
    mu_over = max(1, ratios[-1])
    mu_under = max(1, exact_div(1, ratios[0]))
    n = len(ratios)
    return Distortion(
        mu_over=mu_over, mu_under=mu_under, mu=exact_mul(mu_over, mu_under),
        ratio_percentiles={q: percentile(ratios, q) for q in RATIO_PERCENTILES},
        share_over=sum(1 for r in ratios if r > 1) / n,
        share_within_2x=sum(1 for r in ratios if exact_div(1, 2) <= r <= 2) / n)


@dataclass(frozen=True)
class PredictionAccuracy:
    """Accuracy and distortion of one set of predictions (see the module docstring).

    Attributes
    ----------
    n : int
    mae, mape : float
    r2_log : float or None
    mean_abs_log, median_abs_log : float
        Mean and median of ``|log(N^_j / N_j)|``.
    distortion : Distortion

    Examples
    --------
    >>> sorted(accuracy([1, 2], [1, 2]).to_dict())
    ['distortion', 'mae', 'mape', 'mean_abs_log', 'median_abs_log', 'n', 'r2_log']
    """

    n: int
    mae: float
    mape: float
    r2_log: float | None
    mean_abs_log: float
    median_abs_log: float
    distortion: Distortion

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        d = {k: getattr(self, k) for k in ("n", "mae", "mape", "r2_log", "mean_abs_log", "median_abs_log")}
        d["distortion"] = self.distortion.to_dict()
        return d


@validate_params({"true": _SEQ, "predicted": _SEQ})
def accuracy(true, predicted) -> PredictionAccuracy:
    """Every measure of the module at once.

    Parameters
    ----------
    true, predicted : sequence of number > 0

    Returns
    -------
    PredictionAccuracy

    Raises
    ------
    InvalidParameterError
        As :func:`mae`.

    Examples
    --------
    >>> a = accuracy([100, 200], [100, 100])
    >>> a.mape, a.median_abs_log == math.log(2) / 2, a.distortion.mu
    (0.25, True, 2)
    """
    t, p = _pairs(true, predicted, "accuracy")
    logs = sorted(abs(math.log(float(b) / float(a))) for a, b in zip(t, p))
    n = len(logs)
    median = logs[n // 2] if n % 2 else (logs[n // 2 - 1] + logs[n // 2]) / 2
    return PredictionAccuracy(n=n, mae=mae(t, p), mape=mape(t, p), r2_log=r2_log(t, p),
                              mean_abs_log=math.fsum(logs) / n, median_abs_log=median,
                              distortion=distortion(t, p))


@dataclass(frozen=True)
class PredictionLog:
    """Predictions of a set of jobs beside their true work (in the jobs' order).

    Attributes
    ----------
    ids : tuple of str
    true : tuple of number
        True work (iterations, or seconds for abstract jobs).
    predicted : tuple of number
        Predicted work.
    status : tuple of str or None
        Each job's run status (``Job.status``), where known.
    low, high : tuple of number or None
        Each job's 10 %-90 % band at submission, where the predictor gives bands.
    level : tuple of str or None
        What predicted each job at submission, for predictors that say
        (:meth:`asrpt.predict.hierarchy.HierarchyPredictor.level_of`: ``group``, ``burst``,
        ``user_gpus``, ..., ``prior``).

    Examples
    --------
    >>> log = PredictionLog(("a", "b"), (10, 20), (10, 40))
    >>> log.accuracy().distortion.mu, log.to_dict()["b"]
    (2, [20, 40])
    """

    ids: tuple
    true: tuple
    predicted: tuple
    status: tuple | None = None
    low: tuple | None = None
    high: tuple | None = None
    level: tuple | None = None

    def accuracy(self) -> PredictionAccuracy:
        """:func:`accuracy` of the log."""
        return accuracy(self.true, self.predicted)

    def succeeded(self) -> "PredictionLog":
        """The jobs whose run did not fail or get killed (all jobs without a status)."""
        if self.status is None:
            return self
        keep = [k for k, s in enumerate(self.status) if s not in ("failed", "killed")]
        return self._pick(keep)

    def _pick(self, keep) -> "PredictionLog":
        pick = lambda xs: None if xs is None else tuple(xs[k] for k in keep)  # noqa: E731
        return PredictionLog(pick(self.ids), pick(self.true), pick(self.predicted), pick(self.status),
                             pick(self.low), pick(self.high), pick(self.level))

    def subset(self, ids) -> "PredictionLog":
        """The jobs among ``ids``, in the log's order."""
        wanted = set(ids)
        return self._pick([k for k, i in enumerate(self.ids) if i in wanted])

    def band_coverage(self, by: str = "size", *, bins: int = 10) -> list[dict]:
        """Coverage of the 10 %-90 % band per group of jobs: overall coverage can hold while it
        fails where a scheduler needs it (the largest jobs, or the jobs predicted from a broad
        level).

        Parameters
        ----------
        by : {"size", "predicted", "level"}
            ``"size"``: ``bins`` groups of equal count by true work (deciles by default),
            smallest first; ``"predicted"``: the same by predicted work (what a scheduler knows
            at submission, so what a band can be calibrated on: the largest true jobs are
            largely the under-predicted ones, and no band fitted on what is known can cover
            them at 80% without widening every band); ``"level"``: by what predicted each job
            (``level``).
        bins : int >= 1

        Returns
        -------
        list of dict
            Per group: ``group`` (the true- or predicted-work range ``"lo-hi"``, or the level), ``n``,
            ``coverage`` (share of truths inside the band; 0.8 is calibrated), ``below`` (share
            under the band: over-predicted) and ``above`` (over it: under-predicted).

        Raises
        ------
        InvalidParameterError
            The log has no bands, or no levels for ``by="level"``, or a bad ``by`` or ``bins``.

        Examples
        --------
        >>> log = PredictionLog(("a", "b", "c", "d"), (1, 2, 30, 40), (1, 2, 3, 4),
        ...                     low=(0.5, 3, 2, 3), high=(2, 4, 6, 8), level=("group", "group", "user", "user"))
        >>> [(g["group"], g["coverage"], g["below"], g["above"]) for g in log.band_coverage(bins=2)]
        [('1-2', 0.5, 0.5, 0.0), ('30-40', 0.0, 0.0, 1.0)]
        >>> [(g["group"], g["n"], g["coverage"]) for g in log.band_coverage("level")]
        [('group', 2, 0.5), ('user', 2, 0.0)]
        >>> [(g["group"], g["coverage"]) for g in log.band_coverage("predicted", bins=2)]
        [('1-2', 0.5), ('3-4', 0.0)]
        """
        if self.low is None or self.high is None:
            raise InvalidParameterError("band_coverage: the log has no bands (a predictor without quantiles)")
        if by not in ("size", "predicted", "level"):
            raise InvalidParameterError(f"band_coverage: by must be 'size', 'predicted' or 'level', got {by!r}")
        if not isinstance(bins, int) or bins < 1:
            raise InvalidParameterError(f"band_coverage: bins must be an int >= 1, got {bins!r}")
        n = len(self.true)
        if by == "level":
            if self.level is None:
                raise InvalidParameterError("band_coverage: the log has no levels (a predictor without level_of)")
            groups: dict = {}
            for k, lev in enumerate(self.level):
                groups.setdefault(lev, []).append(k)
            named = list(groups.items())
        else:
            values = self.true if by == "size" else self.predicted
            order = sorted(range(n), key=lambda k: float(values[k]))
            named = []
            for b in range(min(bins, n)):
                part = order[b * n // min(bins, n):(b + 1) * n // min(bins, n)]
                if part:
                    named.append((f"{float(values[part[0]]):.4g}-{float(values[part[-1]]):.4g}", part))
        out = []
        for name, part in named:
            below = sum(1 for k in part if float(self.true[k]) < float(self.low[k]))
            above = sum(1 for k in part if float(self.true[k]) > float(self.high[k]))
            m = len(part)
            out.append({"group": name, "n": m, "coverage": (m - below - above) / m, "below": below / m,
                        "above": above / m})
        return out

    def scores(self) -> "Scores":
        """:class:`Scores` of the log (coverage and successful-run R^2 where it has the data)."""
        t, p = self.true, self.predicted
        ok = self.succeeded()
        logs = sorted(abs(math.log(float(b) / float(a))) for a, b in zip(t, p))
        n = len(logs)
        return Scores(
            n=n, spearman=spearman(t, p),
            median_abs_log=logs[n // 2] if n % 2 else (logs[n // 2 - 1] + logs[n // 2]) / 2,
            within_2x=sum(1 for a, b in zip(t, p) if 0.5 * float(a) <= float(b) <= 2 * float(a)) / n,
            r2_log=r2_log(t, p), r2_log_succeeded=r2_log(ok.true, ok.predicted) if len(ok.true) > 1 else None,
            n_succeeded=len(ok.true),
            coverage_80=coverage(t, self.low, self.high) if self.low is not None else None)

    def to_dict(self) -> dict:
        """``{id: [true, predicted]}``."""
        return {i: [t, p] for i, t, p in zip(self.ids, self.true, self.predicted)}


@dataclass(frozen=True)
class Scores:
    """What a scheduler needs of predictions (issue 14's headline).

    Attributes
    ----------
    n : int
    spearman : float or None
        Rank correlation with the truth (an SRPT-style order depends on ranks).
    median_abs_log : float
        Median ``|log(N^ / N)|`` (0.69 is a factor 2).
    within_2x : float
        Share of jobs with ``N / 2 <= N^ <= 2 N``.
    r2_log : float or None
        R^2 of log predictions over all jobs.
    r2_log_succeeded : float or None
        The same over the jobs whose run did not fail (all jobs without a status).
    n_succeeded : int
    coverage_80 : float or None
        Share of truths inside the 10 %-90 % band (None without bands; 0.8 is calibrated).

    Examples
    --------
    >>> s = PredictionLog(("a", "b", "c"), (1, 2, 4), (1, 4, 4)).scores()
    >>> s.within_2x, round(s.spearman, 3), s.coverage_80
    (1.0, 0.866, None)
    """

    n: int
    spearman: float | None
    median_abs_log: float
    within_2x: float
    r2_log: float | None
    r2_log_succeeded: float | None
    n_succeeded: int
    coverage_80: float | None

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        return asdict(self)


@validate_params({"result": [InstanceOf(SimResult)], "which": [Options(str, {"initial", "final"})],
                  "status_of": [None, InstanceOf(Mapping)]})
def run_predictions(result: SimResult, which: str = "initial", status_of: Mapping | None = None) -> PredictionLog:
    """The predictions a policy recorded in a run, beside the records' true work.

    Parameters
    ----------
    result : SimResult
        A run of a policy that records ``policy_data["initial_predictions"]`` and
        ``["predictions"]`` (A-SRPT does).
    which : {"initial", "final"}
        Predictions at submission, or the last ones (after adaptive updates; biased: a job is
        re-predicted only once it outlives its prediction).
    status_of : mapping or None
        Job id -> ``Job.status`` (e.g. ``{j.id: j.status for j in instance.jobs}``), for the
        successful-run scores.

    Returns
    -------
    PredictionLog
        Jobs with a recorded prediction, in the records' order.

    Raises
    ------
    InvalidParameterError
        The run recorded no predictions.

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> res = simulate(two_server_instance, "a-srpt:predictor=\\"noisy:sigma=0\\"")
    >>> run_predictions(res).accuracy().distortion.mu
    1
    """
    key = "initial_predictions" if which == "initial" else "predictions"
    recorded = result.policy_data.get(key)
    if not recorded:
        raise InvalidParameterError(
            f"run of {result.policy!r} recorded no {key!r} in its policy_data (A-SRPT records them)")
    ids, true, pred = [], [], []
    for r in result.records:
        if r.id in recorded:
            ids.append(r.id)
            true.append(r.work)
            pred.append(recorded[r.id])
    status = None
    if status_of is not None:
        status = tuple(status_of.get(i) for i in ids)
    return PredictionLog(tuple(ids), tuple(true), tuple(pred), status)


def _true_work(job):
    return job.processing_time if job.is_abstract else job.iterations


@validate_params({"predictor": [str, InstanceOf(Predictor)], "instance": [InstanceOf(Instance)],
                  "completions": [None, InstanceOf(Mapping)], "seed": ["seed"], "bands": ["boolean"]})
def replay_predictions(predictor, instance: Instance, *, completions: Mapping | None = None,
                       seed=None, bands: bool = True) -> PredictionLog:
    """Replay a predictor on an instance without a scheduler (see the module docstring).

    Parameters
    ----------
    predictor : str or Predictor
        A spec (``"forest"``, ``"group_mean"``, ...) or a Predictor (reset here).
    instance : Instance
    completions : mapping or None
        Job id -> completion time (e.g. a run's ``completion_times``); None: ``arrival + P*_j``.
        Jobs without one are never observed.
    seed : int or None
        Passed to ``predictor.reset``.
    bands : bool
        Also record each job's 10 %-90 % band at submission (``predictor.quantiles``), for
        predictors with a model of their uncertainty (the base class's quantiles, the point at
        every level, are no band: the log then has none).

    Returns
    -------
    PredictionLog
        Every job, in the instance's order, with the jobs' status and (``bands``) bands.

    Examples
    --------
    >>> log = replay_predictions("group_mean", two_server_instance)
    >>> log.predicted  # a, b: the 3600 s prior; c arrives at 1, when b (1 s) has completed
    (3600.0, 3600.0, 1.0)
    """
    pred = make_predictor(predictor)
    pred.reset(seed)
    bands = bands and type(pred).quantiles is not Predictor.quantiles
    views = job_views(instance)
    works = [_true_work(j) for j in instance.jobs]
    if completions is None:
        done_at = [exact_mul(w, v.tau_star) + v.arrival for w, v in zip(works, views)]
    else:
        done_at = [completions.get(v.id) for v in views]
    finishing = sorted((i for i, c in enumerate(done_at) if c is not None),
                       key=lambda i: (done_at[i], views[i].key))
    arriving = sorted(range(len(views)), key=lambda i: (views[i].arrival, views[i].key))
    out: list = [None] * len(views)
    low: list = [None] * len(views)
    high: list = [None] * len(views)
    level_of = getattr(pred, "level_of", None)
    levels: list = [None] * len(views)
    k = 0
    for i in arriving:
        v = views[i]
        batch = []
        while k < len(finishing) and done_at[finishing[k]] <= v.arrival:
            f = finishing[k]
            batch.append(CompletedJob(views[f], done_at[f], works[f], instance.jobs[f].status))
            k += 1
        if batch:
            pred.observe(batch)
        truth = works[i] if pred.clairvoyant else None
        value = pred.predict(v, truth=truth)
        if not value > 0:
            raise InvalidParameterError(f"predictor {pred.name} predicted {value!r} for job {v.id}")
        out[i] = value
        if level_of is not None:
            levels[i] = level_of(v)
        if bands:
            q = pred.quantiles(v, truth=truth, levels=(0.1, 0.9))
            low[i], high[i] = q
    return PredictionLog(tuple(v.id for v in views), tuple(works), tuple(out),
                         tuple(j.status for j in instance.jobs),
                         tuple(low) if bands else None, tuple(high) if bands else None,
                         tuple(levels) if level_of is not None else None)
