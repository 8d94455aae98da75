"""A seeded generator of recurring DNN training workloads, calibrated to production traces.

This module owns :func:`recurring_workload` (and its frozen parameter record
:class:`RecurringParams`) and :func:`workload_statistics` (the statistics it is calibrated on,
measured on any instance). It assumes the model zoo and the performance model of
:mod:`asrpt.dnn` (iteration counts are durations divided by tau*).

The model (every step seeded from ``seed`` through :func:`asrpt.random.as_generator`, each step on
its own child stream, so changing one step's parameters leaves the others' draws alone):

1. **Users and groups**: ``G = round(n_jobs (1 - one_off_fraction) / mean_group_size)`` recurring
   groups owned by ``ceil(G / groups_per_user)`` users (each user at least one). A group fixes a
   model, dataset, parallel configuration, batch size and learning rate (``meta["lr"]``); its GPU
   count follows the profile's distribution (truncated to the cluster; for a profile with a
   ``gpu_mean`` target, Philly's shape exponentially tilted, ``P(g) ~ P_philly(g) g^theta``,
   to that mean). Configurations come from a small table of zoo models checked against the
   cluster's GPU memory (:func:`asrpt.dnn.validate.job_problems`). A group is *active* during
   ``L = group_lifetime * n_jobs`` consecutive arrivals, from a birth uniform on ``[-L, n_jobs]``
   (as many groups live at any time, new ones keep appearing), and has a popularity weight
   (log-normal, sd 1).
2. **Which job is which**: each arrival is a one-off job (its own new group, a uniformly chosen
   user) with probability ``one_off_fraction``, else a resubmission of an active group drawn by
   popularity.
3. **Durations** (seconds on the job's best placement). A run fails at startup with probability
   ``fail_fraction`` and then lasts ``fail_duration * exp(0.3 xi)`` (Philly's spike of 16 % of
   jobs between 56 and 100 s: unpredictable, whatever the group; its job's ``status`` is
   ``"failed"``, the others' ``"succeeded"``). Otherwise, in log space::

       log D = c + sigma_group * eta_g + gpu_slope * log2(g) + d_gk + sigma_within * eps_j

   with ``eta_g = sqrt(user_share) u_user + sqrt(1 - user_share) e_g`` (unit-variance Student t
   user and group effects with ``group_tail_df`` degrees of freedom: users differ, groups of a
   user share a scale, and a few groups run very long), ``d_gk`` the group's drift, a stationary
   AR(1) over its k-th resubmission (sd ``sigma_drift``, correlation ``drift_corr``: the last run
   tells more than the mean), and ``eps_j`` unit-variance Student t noise with ``tail_df``
   degrees of freedom (heavy tails). ``D`` is clipped to the profile's [duration_min,
   duration_max]. ``c`` and ``sigma_group`` are **calibrated** so that the population median and
   mean of ``D`` equal the profile's (Monte Carlo on 200,000 fixed draws, cached per parameter
   set); the fitted values are recorded in the metadata.
4. **Iterations** ``N_j = max(1, round(D_j / tau*_j))`` (:func:`asrpt.dnn.perf.best_iteration_time`).
5. **Arrivals**: a Poisson process modulated by the profile's submission shares per hour of day
   and weekday (``diurnal``), its mean rate solved so that the *offered load* of the generated
   jobs, ``sum_j g_j P*_j / (M * (last arrival - first arrival))``, equals ``load`` (``M`` GPUs).
   The load is the sample's, not the population's: with heavy-tailed run times the sample mean
   GPU-time of a few thousand jobs is usually well below its expectation, so a population-based
   rate would leave most samples lightly loaded. Submission epochs are ``start + t``
   (``meta["submitted"]``, for hour/weekday features).

Statistics matched (:func:`workload_statistics`, checked side by side in
``tests/workloads/test_recurring.py``): the median and mean run time and the GPU-count
distribution (Philly: shares of 1, 2, 4, 8 and >= 16 GPUs; Helios: mean and median GPUs), and
the submission shares by hour of day and weekday. Not matched (no published target): recurrence
itself (the share of jobs whose group was seen before is ``~ 1 - one_off_fraction`` minus each
group's first run), drift and noise levels.

Examples
--------
>>> inst = recurring_workload(40, seed=1)
>>> inst.n_jobs, inst.metadata["family"], inst.jobs[0].group is not None
(40, 'recurring', True)
>>> recurring_workload(40, seed=1) == inst
True
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from .._validation import InstanceOf, Interval, Options, validate_params
from ..errors import Infeasible, InvalidParameterError
from ..instance import Cluster, Instance, Job, Parallelism
from ..loading import check_instance
from ..random import as_generator
from .profiles import PROFILES, get_profile

__all__ = ["RecurringParams", "recurring_workload", "workload_statistics", "gpu_distribution",
           "MODEL_TABLE"]

#: (model, datasets, per-replica batch sizes, tensor-parallel degree). A group of g GPUs runs
#: (dp, pp, tp) = (g / tp, 1, tp) with global batch = per-replica batch x dp; models whose tp
#: exceeds g, or whose configuration does not fit the cluster's GPU memory, are skipped.
MODEL_TABLE: tuple[tuple[str, tuple[str, ...], tuple[int, ...], int], ...] = (
    ("resnet18_cifar", ("cifar10", "cifar100"), (64, 128), 1),
    ("resnet50", ("imagenet", "places365"), (32, 64), 1),
    ("vgg16", ("imagenet",), (32, 64), 1),
    ("mobilenet_v2", ("imagenet", "inaturalist"), (64, 128), 1),
    ("densenet121", ("imagenet", "chexpert"), (32, 64), 1),
    ("vit_b_16", ("imagenet",), (32, 64), 1),
    ("bert-base", ("wikipedia", "squad", "glue"), (16, 32), 1),
    ("bert-large", ("wikipedia", "squad"), (8, 16), 1),
    ("gpt2", ("openwebtext", "wikitext-103"), (4, 8), 1),
    ("gpt2-large", ("openwebtext",), (2, 4), 4),
    ("gpt3-1.3b", ("pile", "c4"), (2, 4), 8),
    ("llama-7b", ("c4", "redpajama"), (1, 2), 8),
)
_LEARNING_RATES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
_N_REFERENCE = 200_000
_REFERENCE_SEED = 250105563
_FAIL_SIGMA = 0.3
_POP_SIGMA = 1.0


@dataclass(frozen=True)
class RecurringParams:
    """The parameters of one :func:`recurring_workload` call (recorded in the instance metadata).

    See :func:`recurring_workload` for each field.

    Examples
    --------
    >>> RecurringParams(n_jobs=10).to_dict()["profile"]
    'philly'
    """

    n_jobs: int = 1000
    load: float = 0.8
    cluster: str | None = None
    gpu_type: str = "A100"
    profile: str = "philly"
    one_off_fraction: float = 0.2
    mean_group_size: float = 15.0
    groups_per_user: float = 3.0
    user_share: float = 0.3
    group_tail_df: float | None = 6.0
    sigma_within: float = 0.25
    tail_df: float | None = 3.0
    sigma_drift: float = 0.4
    drift_corr: float = 0.8
    fail_fraction: float = 0.2
    fail_duration: float = 60.0
    gpu_slope: float = 0.8
    max_duration: float | None = None
    group_lifetime: float = 0.25
    diurnal: bool = True
    start: float = 1506902400.0

    def to_dict(self) -> dict:
        """The fields as a plain dict."""
        return asdict(self)


@validate_params({"support": [tuple, list], "counts": [tuple, list],
                  "mean": [None, Interval(Real, 1, None, closed="left")]})
def gpu_distribution(support, counts, mean=None) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """A GPU-count distribution from counts, exponentially tilted to a target mean.

    ``P(g) ~ counts(g) * g**theta`` with ``theta`` solved so that the mean is ``mean``
    (``theta = 0``: the counts as shares).

    Parameters
    ----------
    support : sequence of int
        GPU counts.
    counts : sequence of number
        Jobs per GPU count (the shape).
    mean : float or None
        Target mean GPUs per job.

    Returns
    -------
    (support, probabilities)

    Raises
    ------
    InvalidParameterError
        The target mean is out of reach on this support.

    Examples
    --------
    >>> s, p = gpu_distribution((1, 2, 4), (6, 3, 1))
    >>> [round(x, 2) for x in p]
    [0.6, 0.3, 0.1]
    >>> s, p = gpu_distribution((1, 2, 4), (6, 3, 1), mean=2.0)
    >>> round(sum(g * q for g, q in zip(s, p)), 6)
    2.0
    """
    g = np.asarray(support, dtype=float)
    c = np.asarray(counts, dtype=float)

    def probs(theta):
        w = c * g ** theta
        return w / w.sum()

    if mean is None:
        return tuple(int(x) for x in support), tuple(float(x) for x in probs(0.0))
    lo, hi = float(g.min()), float(g.max())
    if not lo < mean < hi:
        raise InvalidParameterError(f"a mean of {mean} GPUs is out of reach on GPU counts {tuple(support)}")
    theta = brentq(lambda t: float(probs(t) @ g) - mean, -20.0, 20.0, xtol=1e-12)
    return tuple(int(x) for x in support), tuple(float(x) for x in probs(theta))


# ---------------------------------------------------------------------------------------------
# configurations
# ---------------------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _config_table(cluster: Cluster, gpu_counts: tuple[int, ...]) -> dict:
    """GPU count -> list of (model, datasets, per-replica batches, (dp, pp, tp)) valid on the cluster."""
    from ..dnn.validate import job_problems

    table: dict[int, list] = {}
    for g in gpu_counts:
        options = []
        for model, datasets, batches, tp in MODEL_TABLE:
            if tp > g or g % tp or tp > cluster.max_server_gpus:
                continue
            dp = g // tp
            ok = [b for b in batches if not job_problems(
                Job("probe", 0, g, model=model, parallelism=Parallelism(dp, 1, tp),
                    batch_size=b * dp, iterations=1), cluster)]
            if ok:
                options.append((model, datasets, tuple(ok), (dp, 1, tp)))
        if options:
            table[g] = options
    return table


# ---------------------------------------------------------------------------------------------
# calibration
# ---------------------------------------------------------------------------------------------

def _unit_t(rng, df, n) -> np.ndarray:
    """n draws of unit variance: Student t with ``df`` > 2 degrees of freedom, or normal (None)."""
    if df is None:
        return rng.standard_normal(n)
    return rng.standard_t(df, n) * math.sqrt((df - 2.0) / df)


@lru_cache(maxsize=128)
def _calibrate(median: float, mean: float, d_min: float, d_max: float, support: tuple,
               probs: tuple, group_tail_df, user_share: float, sigma_within: float, tail_df,
               sigma_drift: float, fail_fraction: float, fail_duration: float,
               gpu_slope: float) -> dict:
    """Fit (c, sigma_group) so that the population median and mean of D hit the targets."""
    rng = np.random.default_rng(_REFERENCE_SEED)
    n = _N_REFERENCE
    gpus = rng.choice(np.asarray(support), size=n, p=np.asarray(probs))
    eta = (math.sqrt(user_share) * _unit_t(rng, group_tail_df, n)  # as the generator composes it
           + math.sqrt(1.0 - user_share) * _unit_t(rng, group_tail_df, n))
    rest = (gpu_slope * np.log2(gpus) + sigma_drift * rng.standard_normal(n)
            + sigma_within * _unit_t(rng, tail_df, n))
    failed = rng.random(n) < fail_fraction
    fail_d = fail_duration * np.exp(_FAIL_SIGMA * rng.standard_normal(n))
    # the mixture's median is `median` iff the main part's CDF there is q
    below = fail_fraction * float(ndtr((math.log(median) - math.log(fail_duration)) / _FAIL_SIGMA))
    q = (0.5 - below) / (1.0 - fail_fraction)  # in (0, 1) since fail_fraction < 0.5

    def durations(sigma):
        z = sigma * eta + rest
        c = math.log(median) - float(np.quantile(z, q))
        return c, np.clip(np.where(failed, fail_d, np.exp(c + z)), d_min, d_max)

    def gap(sigma):
        return float(durations(sigma)[1].mean()) - mean

    lo, hi = 0.0, 6.0
    if gap(lo) > 0:
        raise InvalidParameterError(
            f"the noise alone gives a mean run time of {gap(lo) + mean:.4g} s, above the target "
            f"{mean:.4g} s: lower sigma_within, sigma_drift or gpu_slope")
    if gap(hi) < 0:
        raise InvalidParameterError(f"cannot reach a mean run time of {mean:.4g} s within the clip")
    sigma = brentq(gap, lo, hi, xtol=1e-10)
    c, d = durations(sigma)
    return {"log_location": c, "sigma_group": sigma, "mean_duration": float(d.mean()),
            "mean_gpu_seconds": float((gpus * d).mean()), "reference_draws": n}


# ---------------------------------------------------------------------------------------------
# arrivals
# ---------------------------------------------------------------------------------------------

def _arrival_times(mass: np.ndarray, rate: float, start: float, hour_shares, weekday_shares,
                   diurnal: bool) -> np.ndarray:
    """Arrival times (s after ``start``) of a Poisson process of mean rate ``rate`` modulated per
    hour of the week, from the cumulative unit-rate arrival masses ``mass``."""
    if not diurnal:
        return mass / rate
    h = np.asarray(hour_shares, dtype=float)
    h /= h.sum()
    d = np.asarray(weekday_shares, dtype=float)
    d /= d.sum()
    t0 = _dt.datetime.fromtimestamp(start, _dt.timezone.utc)
    offset = t0.minute * 60 + t0.second + t0.microsecond / 1e6  # seconds into the first hour
    first = t0.weekday() * 24 + t0.hour
    bins = int(mass[-1] / (rate * 3600.0 * float(24 * h.min() * 7 * d.min()))) + 170
    idx = (first + np.arange(bins)) % 168
    factor = 24 * h[idx % 24] * 7 * d[idx // 24]
    per_hour = rate * 3600.0 * factor
    per_hour[0] *= (3600.0 - offset) / 3600.0  # the first bin is the rest of the starting hour
    edges = np.concatenate(([0.0], np.cumsum(per_hour)))
    k = np.searchsorted(edges, mass, side="right") - 1
    hour_start = np.where(k == 0, 0.0, k * 3600.0 - offset)
    return hour_start + (mass - edges[k]) / (rate * factor[k])


def _rate_for_load(mass, gpu_seconds: float, gpus: int, load: float, fallback: float, start, hours,
                   days, diurnal) -> float:
    """The mean arrival rate at which the offered load over the arrival span equals ``load``."""
    if len(mass) < 2 or gpu_seconds <= 0:
        return fallback
    guess = load * gpus * float(mass[-1] - mass[0]) / gpu_seconds
    if not diurnal:
        return guess

    def gap(log_rate):
        t = _arrival_times(mass, math.exp(log_rate), start, hours, days, True)
        return math.log(gpu_seconds / (gpus * float(t[-1] - t[0]))) - math.log(load)

    lo, hi = math.log(guess) - 1.0, math.log(guess) + 1.0
    while gap(lo) > 0:
        lo -= 1.0
    while gap(hi) < 0:
        hi += 1.0
    return math.exp(brentq(gap, lo, hi, xtol=1e-12))


# ---------------------------------------------------------------------------------------------
# the generator
# ---------------------------------------------------------------------------------------------

def _float(x):
    return None if x is None else float(x)


def _cluster_spec(cluster) -> str | None:
    if cluster is None or isinstance(cluster, str):
        return cluster
    return ",".join(str(g) for g in cluster.server_gpus)


# ---------------------------------------------------------------------------------------------

_CONSTRAINTS = {
    "n_jobs": [Interval(Integral, 1, None, closed="left")],
    "load": [Interval(Real, 0, None, closed="neither")],
    "cluster": [None, str, InstanceOf(Cluster)],
    "gpu_type": [str],
    "profile": [Options(str, set(PROFILES))],
    "one_off_fraction": [Interval(Real, 0, 1, closed="both")],
    "mean_group_size": [Interval(Real, 1, None, closed="left")],
    "groups_per_user": [Interval(Real, 1, None, closed="left")],
    "user_share": [Interval(Real, 0, 1, closed="both")],
    "group_tail_df": [None, Interval(Real, 2, None, closed="neither")],
    "sigma_within": [Interval(Real, 0, None, closed="left")],
    "tail_df": [None, Interval(Real, 2, None, closed="neither")],
    "sigma_drift": [Interval(Real, 0, None, closed="left")],
    "drift_corr": [Interval(Real, 0, 1, closed="both")],
    "fail_fraction": [Interval(Real, 0, 0.5, closed="left")],
    "fail_duration": [Interval(Real, 0, None, closed="neither")],
    "gpu_slope": [Interval(Real, None, None)],
    "max_duration": [None, Interval(Real, 0, None, closed="neither")],
    "group_lifetime": [Interval(Real, 0, None, closed="neither")],
    "diurnal": ["boolean"],
    "start": [Interval(Real, 0, None, closed="left")],
    "seed": [Interval(Integral, 0, None, closed="left")],
}


@validate_params(_CONSTRAINTS)
def recurring_workload(n_jobs: int = 1000, *, load: float = 0.8, cluster: "str | Cluster | None" = None,
                       gpu_type: str = "A100", profile: str = "philly",
                       one_off_fraction: float = 0.2, mean_group_size: float = 15.0,
                       groups_per_user: float = 3.0, user_share: float = 0.3,
                       group_tail_df: float | None = 6.0, sigma_within: float = 0.25,
                       tail_df: float | None = 3.0, sigma_drift: float = 0.4,
                       drift_corr: float = 0.8, fail_fraction: float = 0.2,
                       fail_duration: float = 60.0, gpu_slope: float = 0.8,
                       max_duration: float | None = None,
                       group_lifetime: float = 0.25, diurnal: bool = True,
                       start: float = 1506902400.0, seed: int = 0) -> Instance:
    """A recurring DNN training workload (see the module docstring for the model).

    Parameters
    ----------
    n_jobs : int
        Number of jobs.
    load : float
        Offered load of the generated jobs: their GPU-time over the cluster's GPU-time during
        the arrival span (the arrival rate is solved for it).
    cluster : str, Cluster or None
        The cluster (``"8x8"``: 8 servers of 8 GPUs); None: the profile's default (Philly 8x8,
        Helios 16x8).
    gpu_type : str
        GPU type of a cluster given as a string.
    profile : str
        Calibration target, one of :data:`asrpt.workloads.profiles.PROFILES`.
    one_off_fraction : float
        Share of jobs that are one-off (their own group, never resubmitted).
    mean_group_size : float
        Mean submissions per recurring group.
    groups_per_user : float
        Mean recurring groups per user.
    user_share : float
        Share of the group effect's variance common to a user's groups.
    group_tail_df : float > 2 or None
        Degrees of freedom of the user and group effects (None: normal).
    sigma_within : float
        Sd of the heavy-tailed log-noise of one run around its group's value.
    tail_df : float > 2 or None
        Degrees of freedom of that noise (None: normal).
    sigma_drift : float
        Stationary sd of a group's drift (log scale).
    drift_corr : float
        Correlation of the drift between consecutive runs of a group.
    fail_fraction : float in [0, 0.5)
        Share of runs that fail at startup.
    fail_duration : float
        Median seconds of a failed run.
    gpu_slope : float
        Increase of log run time per doubling of GPUs (Philly: medians 1,117 s at 1 GPU,
        23,684 s at 8).
    max_duration : float or None
        Clip run times at this many seconds instead of the profile's maximum (Philly's 53 days);
        the median and mean are still matched (the calibration widens the spread). With the
        profile's clip, the 1 % longest jobs carry well over half of the GPU-time of a
        thousand-job sample, so the offered load says little about contention among the others;
        scheduling evaluations cap run times (e.g. one day).
    group_lifetime : float
        How long a group stays active, as a fraction of the workload's arrivals (0.25: during a
        quarter of them).
    diurnal : bool
        Modulate arrivals by the profile's hour-of-day and weekday shares.
    start : float
        Epoch seconds (UTC) of time 0 (default 2017-10-02 00:00, a Monday).
    seed : int
        The seed; the same arguments give the same instance.

    Returns
    -------
    Instance
        DNN jobs ``j0, j1, ...`` in arrival order (first arrival at 0) with ``user``, ``group``,
        ``dataset``, ``meta = {"submitted": epoch s, "lr": learning rate}``; metadata
        ``family``, ``params``, ``seed``, ``calibration`` (fitted location and group sd, arrival
        rate, mean GPU-time) and ``offered_load`` (realised).

    Raises
    ------
    InvalidParameterError
        A parameter out of range, or targets out of reach.
    Infeasible
        No model configuration fits the cluster for the profile's GPU counts.

    Examples
    --------
    >>> inst = recurring_workload(30, load=0.5, cluster="2x8", seed=3)
    >>> inst.cluster.total_gpus, sorted(inst.metadata["calibration"])[:2]
    (16, ['arrival_rate', 'log_location'])
    >>> j = inst.jobs[0]
    >>> j.arrival, j.iterations > 0, sorted(j.meta)
    (0.0, True, ['lr', 'submitted'])
    """
    params = RecurringParams(
        n_jobs=n_jobs, load=load, cluster=_cluster_spec(cluster),
        gpu_type=gpu_type, profile=profile, one_off_fraction=one_off_fraction,
        mean_group_size=mean_group_size, groups_per_user=groups_per_user, user_share=user_share,
        group_tail_df=group_tail_df, sigma_within=sigma_within, tail_df=tail_df,
        sigma_drift=sigma_drift, drift_corr=drift_corr, fail_fraction=fail_fraction,
        fail_duration=fail_duration, gpu_slope=gpu_slope, max_duration=max_duration,
        group_lifetime=group_lifetime,
        diurnal=diurnal, start=start)
    prof = get_profile(profile)
    d_max = float(prof["duration_max"] if max_duration is None else min(max_duration, prof["duration_max"]))
    if isinstance(cluster, Cluster):
        the_cluster = cluster
    else:
        the_cluster = Cluster.from_spec(cluster or prof["default_cluster"], gpu_type)
    M = the_cluster.total_gpus

    # GPU counts: the profile's, within the cluster and with at least one valid configuration
    counts = {g: c for g, c in prof["gpu_counts"].items() if g <= M}
    table = _config_table(the_cluster, tuple(sorted(counts)))
    counts = {g: c for g, c in counts.items() if g in table}
    if not counts:
        raise Infeasible(f"recurring_workload: no model configuration of the table fits cluster {the_cluster}")
    support, probs = gpu_distribution(tuple(counts), tuple(counts.values()), prof["gpu_mean"])
    cal = dict(_calibrate(prof["duration_median"], prof["duration_mean"], prof["duration_min"],
                          d_max, support, probs, _float(group_tail_df), float(user_share),
                          float(sigma_within), _float(tail_df), float(sigma_drift),
                          float(fail_fraction), float(fail_duration), float(gpu_slope)))
    r_arrivals, r_kinds, r_groups, r_choice, r_jobs = as_generator(seed).spawn(5)

    # 1. users and groups (recurring groups first, then one group per one-off job)
    one_off = r_kinds.random(n_jobs) < one_off_fraction
    n_rec_jobs = int((~one_off).sum())
    n_groups = max(1, round(n_rec_jobs / mean_group_size)) if n_rec_jobs else 0
    n_users = max(1, math.ceil(max(n_groups, 1) / groups_per_user))
    n_once = int(one_off.sum())
    n_all = n_groups + n_once
    user_effect = _unit_t(r_groups, group_tail_df, n_users)
    owner = np.concatenate([np.arange(min(n_users, n_groups)),
                            r_groups.integers(0, n_users, max(0, n_groups - n_users)),
                            r_groups.integers(0, n_users, n_once)]).astype(int)
    eta = (math.sqrt(user_share) * user_effect[owner]
           + math.sqrt(1.0 - user_share) * _unit_t(r_groups, group_tail_df, n_all))
    gpus = r_groups.choice(np.asarray(support), size=n_all, p=np.asarray(probs))
    pick_model = r_groups.random(n_all)
    pick_batch = r_groups.random(n_all)
    pick_data = r_groups.random(n_all)
    lr = np.asarray(_LEARNING_RATES)[r_groups.integers(0, len(_LEARNING_RATES), n_all)]
    popularity = r_groups.lognormal(0.0, _POP_SIGMA, n_all)
    span = group_lifetime * n_jobs  # in arrivals
    birth = r_groups.uniform(-span, n_jobs, n_all)
    configs = []
    for k in range(n_all):
        options = table[int(gpus[k])]
        model, datasets, batches, (dp, pp, tp) = options[int(pick_model[k] * len(options))]
        configs.append((model, datasets[int(pick_data[k] * len(datasets))],
                        batches[int(pick_batch[k] * len(batches))] * dp, Parallelism(dp, pp, tp)))

    # 2. which group each job belongs to (activity counted in arrivals: rate-free)
    group_of = np.empty(n_jobs, dtype=int)
    group_of[one_off] = n_groups + np.arange(n_once)
    rec_idx = np.flatnonzero(~one_off)
    if n_groups:
        b = birth[:n_groups]
        death = b + span
        edges = np.unique(np.clip(np.concatenate([b, death]), 0.0, None))
        seg = np.searchsorted(edges, rec_idx, side="right") - 1
        for s in np.unique(seg):
            jobs_here = rec_idx[seg == s]
            t_s = edges[s] if s >= 0 else 0.0
            active = np.flatnonzero((b <= t_s) & (death > t_s))
            if active.size == 0:  # nobody alive: the groups born so far, else the first to be born
                active = np.flatnonzero(b <= t_s)
                if active.size == 0:
                    active = np.array([int(np.argmin(b))])
            w = popularity[active]
            group_of[jobs_here] = r_choice.choice(active, size=jobs_here.size, p=w / w.sum())

    # 3. durations
    noise = r_jobs.standard_normal(n_jobs)
    eps = _unit_t(r_jobs, tail_df, n_jobs)
    failed = r_jobs.random(n_jobs) < fail_fraction
    fail_d = fail_duration * np.exp(_FAIL_SIGMA * r_jobs.standard_normal(n_jobs))
    drift = np.empty(n_jobs)
    state: dict[int, float] = {}
    innovation = math.sqrt(max(0.0, 1.0 - drift_corr ** 2))
    for j in range(n_jobs):
        g = int(group_of[j])
        prev = state.get(g)
        d = sigma_drift * noise[j] if prev is None else drift_corr * prev + innovation * sigma_drift * noise[j]
        state[g] = drift[j] = d
    g_of = group_of
    log_d = (cal["log_location"] + cal["sigma_group"] * eta[g_of] + gpu_slope * np.log2(gpus[g_of])
             + drift + sigma_within * eps)
    duration = np.clip(np.where(failed, fail_d, np.exp(log_d)), prof["duration_min"], d_max)

    # 4. iterations
    from ..dnn.perf import best_iteration_time

    tau_cache: dict = {}
    iterations = np.empty(n_jobs, dtype=np.int64)
    taus = np.empty(n_jobs)
    for j in range(n_jobs):
        model, _, batch, par = configs[int(g_of[j])]
        key = (model, batch, par)
        if key not in tau_cache:
            tau_cache[key] = best_iteration_time(
                Job("probe", 0, par.gpus, model=model, parallelism=par, batch_size=batch, iterations=1),
                the_cluster)
        taus[j] = tau_cache[key]
        iterations[j] = max(1, int(round(float(duration[j]) / taus[j])))
    job_gpus = gpus[g_of]
    gpu_seconds = float((job_gpus * iterations * taus).sum())

    # 5. arrivals: the mean rate that makes the offered load over the arrival span equal `load`
    mass = np.cumsum(r_arrivals.exponential(1.0, n_jobs))
    fallback = load * M / cal["mean_gpu_seconds"]
    rate = _rate_for_load(mass, gpu_seconds, M, load, fallback, float(start), prof["hour_shares"],
                          prof["weekday_shares"], diurnal)
    cal["arrival_rate"] = rate
    t = _arrival_times(mass, rate, float(start), prof["hour_shares"], prof["weekday_shares"], diurnal)
    rel = t - t[0]
    horizon = float(rel[-1])

    jobs = []
    width = len(str(max(n_all - 1, 0)))
    uwidth = len(str(max(n_users - 1, 0)))
    for j in range(n_jobs):
        g = int(g_of[j])
        model, dataset, batch, par = configs[g]
        jobs.append(Job(f"j{j}", float(rel[j]), par.gpus, model=model, parallelism=par,
                        batch_size=batch, iterations=int(iterations[j]),
                        user=f"u{int(owner[g]):0{uwidth}d}", group=f"g{g:0{width}d}", dataset=dataset,
                        status="failed" if failed[j] else "succeeded",
                        meta={"submitted": float(start) + float(t[j]), "lr": float(lr[g])}))
    metadata = {
        "family": "recurring",
        "generator": "asrpt.workloads.recurring.recurring_workload",
        "seed": seed,
        "params": params.to_dict(),
        "profile_source": prof["source"],
        "calibration": cal,
        "groups": n_groups,
        "one_off_jobs": n_once,
        "users": n_users,
        "offered_load": gpu_seconds / (M * horizon) if horizon > 0 else None,
    }
    return check_instance(Instance(the_cluster, tuple(jobs), metadata))


# ---------------------------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------------------------

@validate_params({"instance": [InstanceOf(Instance)]})
def workload_statistics(instance: Instance) -> dict[str, Any]:
    """The statistics the generator is calibrated on, measured on any instance.

    Run times are the best processing times ``P*_j`` (:func:`asrpt.sizes.processing_times`).

    Parameters
    ----------
    instance : Instance

    Returns
    -------
    dict
        ``jobs``, ``duration_median``, ``duration_mean``, ``duration_percentiles`` (10, 25, 75,
        90, 99; numpy's linear interpolation), ``gpu_mean``, ``gpu_median``, ``gpu_shares``
        (``{gpus: share}``), ``hour_shares`` and ``weekday_shares`` (from ``meta["submitted"]``,
        None if a job lacks it), ``users``, ``groups`` and ``recurring_share`` (share of jobs
        whose group appeared before; None without groups).

    Examples
    --------
    >>> s = workload_statistics(two_server_instance)
    >>> s["jobs"], s["duration_median"], s["gpu_shares"]
    (3, 2.0, {1: 0.3333333333333333, 2: 0.3333333333333333, 4: 0.3333333333333333})
    """
    from ..sizes import processing_times

    d = np.asarray([float(x) for x in processing_times(instance)])
    g = np.asarray([j.gpus for j in instance.jobs])
    n = len(d)
    shares: dict[int, float] = {}
    for x in g:
        shares[int(x)] = shares.get(int(x), 0) + 1.0 / n
    submitted = [j.meta.get("submitted") for j in instance.jobs]
    if all(s is not None for s in submitted):
        when = [_dt.datetime.fromtimestamp(float(s), _dt.timezone.utc) for s in submitted]
        hours = [sum(1 for w in when if w.hour == h) / n for h in range(24)]
        days = [sum(1 for w in when if w.weekday() == k) / n for k in range(7)]
    else:
        hours = days = None
    groups = [j.group for j in instance.jobs]
    if any(x is not None for x in groups):
        seen: set = set()
        repeat = 0
        for j in sorted(instance.jobs, key=lambda j: j.arrival):
            if j.group is not None:
                repeat += j.group in seen
                seen.add(j.group)
        recurring = repeat / n
    else:
        recurring = None
    return {
        "jobs": n,
        "duration_median": float(np.median(d)),
        "duration_mean": float(d.mean()),
        "duration_percentiles": {q: float(np.percentile(d, q)) for q in (10, 25, 75, 90, 99)},
        "gpu_mean": float(g.mean()),
        "gpu_median": float(np.median(g)),
        "gpu_shares": dict(sorted(shares.items())),
        "hour_shares": hours,
        "weekday_shares": days,
        "users": len({j.user for j in instance.jobs if j.user is not None}),
        "groups": len({x for x in groups if x is not None}),
        "recurring_share": recurring,
    }
