"""Instance generator families: seeded instances for batch experiments and property tests.

This module owns the families of ``asrpt generate`` (one function per family, registered by name
in :data:`FAMILIES`), the derivation of per-file seeds (:func:`instance_seed`), and writing a
numbered series of instance files (:func:`generate_files`). It assumes the instance model
(:mod:`asrpt.instance`); the Philly-like, recurring, adversarial and DNN families reuse
:mod:`asrpt.traces`, :mod:`asrpt.workloads.recurring`, :mod:`asrpt.theory.worstcase` and the
performance model of :mod:`asrpt.dnn`.

Families (each function returns one :class:`~asrpt.instance.Instance`):

==============  ======================================  ==========================================
name            function                                jobs
==============  ======================================  ==========================================
uniform         :func:`uniform_instance`                abstract; uniform sizes, gaps and gangs
heavy_tailed    :func:`heavy_tailed_instance`           abstract; Pareto or log-normal sizes,
                                                        Poisson arrivals at an offered load
bursty          :func:`bursty_instance`                 abstract; batch or Poisson-burst arrivals
starvation      :func:`starvation_instance`             abstract; one wide job in a stream of
                                                        one-GPU jobs (starved by SRSF)
adversarial     :func:`adversarial_instance`            abstract, one server; the bad patterns the
                                                        worst-case search found, or the search
philly          :func:`philly_instance`                 Philly trace windows or resampled jobs
recurring       :func:`recurring_instance`              DNN; recurring users and groups
dnn             :func:`dnn_instance`                    DNN; zoo models x parallel configurations
==============  ======================================  ==========================================

Conventions shared by every family:

- **Seeded**: everything random comes from ``seed`` (:func:`asrpt.random.as_generator`), split
  into one child stream per aspect (arrivals, sizes, demands, predictions), so changing one
  aspect's parameters leaves the others' draws alone. Same arguments, same instance, same bytes
  (:func:`asrpt.instance.dumps_instance`).
- **Recorded**: the instance's metadata holds ``family``, ``generator`` (the function),
  ``params`` (every parameter but the seed, defaults included, JSON-ready) and ``seed``, so
  :func:`regenerate` rebuilds it from the file alone. Family-specific facts are added beside
  them (e.g. the adversarial pattern's source cells, the realised offered load).
- **Clusters** are given as specs (``"2x4"``: 2 servers of 4 GPUs; ``"8,8,4"``).
- **Predictions** (``mu > 1``, abstract families): each job gets a predicted size ``P_j f_j``
  with factors on a grid of 1/8 drawn so that the distortion ``max(1, max f) / min(1, min f)``
  is at most ``mu``: a level ``l`` in ``[1/mu, 1]`` first, then each ``f_j`` in
  ``[l, l mu]`` (the construction of :func:`asrpt.testing.strategies.prediction_factors`).
- **Integer mode** (``integer=True``): integer arrivals and processing times (and exact
  rational predictions), so exact arithmetic and the unit-slot ILP of :mod:`asrpt.offline` apply.

A series of files (``asrpt generate FAMILY --n N --seed S``) uses the seed
:func:`instance_seed(S, i) <instance_seed>` for file ``i`` and records ``series = {seed: S,
index: i}`` in its metadata; file ``i`` does not depend on ``N``.

Examples
--------
>>> inst = generate_one("uniform", n_jobs=4, cluster="1x4", seed=3)
>>> inst.n_jobs, inst.metadata["family"], inst.metadata["seed"]
(4, 'uniform', 3)
>>> regenerate(inst) == inst
True
>>> sorted(FAMILIES)
['adversarial', 'bursty', 'dnn', 'heavy_tailed', 'philly', 'recurring', 'starvation', 'uniform']
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .._validation import Interval, Options, validate_params
from ..errors import InvalidInstance, InvalidParameterError, did_you_mean
from ..registry import Registry
from ..instance import Cluster, Instance, Job, Parallelism, dumps_instance, save_instance
from ..loading import check_instance
from ..random import as_generator
from .profiles import PROFILES

__all__ = [
    "Family",
    "FAMILIES",
    "family_names",
    "get_family",
    "instance_seed",
    "generate_one",
    "generate",
    "generate_files",
    "regenerate",
    "uniform_instance",
    "heavy_tailed_instance",
    "starvation_instance",
    "bursty_instance",
    "adversarial_instance",
    "philly_instance",
    "recurring_instance",
    "dnn_instance",
    "ADVERSARIAL_PATTERNS",
    "DNN_MODELS",
]

_GRID = 8  # prediction factors are multiples of 1/_GRID (as in asrpt.theory.worstcase)


@dataclass(frozen=True)
class Family:
    """A registered generator family.

    Attributes
    ----------
    name : str
        The registry name (``asrpt generate NAME``).
    function : callable
        The generator; keyword arguments are the family's parameters, plus ``seed``.
    summary : str
        One line for ``asrpt generate --list``.

    Examples
    --------
    >>> get_family("bursty").summary
    'abstract jobs arriving in bursts (batches or Poisson bursts)'
    """

    name: str
    function: Callable[..., Instance]
    summary: str

    @property
    def defaults(self) -> dict:
        """Every parameter (``seed`` included) with its default value."""
        return {k: p.default for k, p in inspect.signature(self.function).parameters.items()}


#: Generator families by name.
FAMILIES = Registry("generator family", item=lambda e: e.target,
                    normalize=lambda name: name.strip().replace("-", "_"))


def _jsonable_param(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable_param(v) for v in value]
    if isinstance(value, list):
        return [_jsonable_param(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _coerce(value: Any) -> Any:
    """Fractions become floats before generation, so the recorded value is the one used."""
    if isinstance(value, Fraction):
        return float(value)
    return value


def _family(name: str, summary: str):
    """Register a family: record its parameters and seed in the metadata of what it returns.

    The decorated body returns ``(cluster, jobs, extra_metadata)``.
    """

    def decorate(body: Callable) -> Callable:
        sig = inspect.signature(body)

        @functools.wraps(body)
        def generator(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = {k: _coerce(v) for k, v in bound.arguments.items()}
            cluster, jobs, extra = body(**arguments)
            params = {k: _jsonable_param(v) for k, v in arguments.items() if k != "seed"}
            metadata = {"family": name, "generator": f"{__name__}.{generator.__name__}",
                        "params": params, "seed": arguments["seed"], **extra}
            return check_instance(Instance(cluster, tuple(jobs), metadata))

        FAMILIES.register(name, Family(name, generator, summary), description=summary)
        return generator

    return decorate


# ---------------------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------------------

def _cluster(spec: str, caller: str, gpu_type: str | None = None) -> Cluster:
    try:
        return Cluster.from_spec(spec, gpu_type)
    except InvalidInstance:
        raise InvalidParameterError(
            f"The 'cluster' parameter of {caller} must be a cluster spec such as '2x4' or "
            f"'8,8,4'. Got {spec!r} instead.") from None


def _demands(rng: np.random.Generator, n: int, cap: int, choice: str) -> list[int]:
    """``n`` GPU demands in 1..cap: uniform, or uniform over the powers of two up to cap."""
    u = rng.random(n)
    if choice == "pow2":
        support = [1 << k for k in range(cap.bit_length()) if (1 << k) <= cap]
    else:
        support = list(range(1, cap + 1))
    return [support[min(len(support) - 1, int(x * len(support)))] for x in u]


def _factors(rng: np.random.Generator, n: int, mu: float) -> list[Fraction] | None:
    """Prediction factors on the 1/8 grid with distortion at most mu (None when mu == 1)."""
    level_u, factor_u = rng.random(), rng.random(n)  # drawn whatever mu is: streams stay aligned
    if mu <= 1:
        return None
    lo = max(1, math.ceil(_GRID / mu - 1e-12))
    level = lo + min(_GRID - lo, int(level_u * (_GRID - lo + 1)))
    top = max(level, math.floor(level * mu + 1e-12))
    return [Fraction(level + min(top - level, int(x * (top - level + 1))), _GRID) for x in factor_u]


def _grid_ceil(x: float) -> Fraction:
    """The smallest multiple of 1/8 that is >= x (at least 1/8)."""
    return Fraction(max(1, math.ceil(x * _GRID - 1e-9)), _GRID)


def _grid_floor(x: float) -> Fraction:
    """The largest multiple of 1/8 that is <= x (at least 1/8)."""
    return Fraction(max(1, math.floor(x * _GRID + 1e-9)), _GRID)


def _num(q: Fraction):
    return q.numerator if q.denominator == 1 else q


def _predicted(size, factor: Fraction | None):
    if factor is None:
        return None
    if isinstance(size, (int, Fraction)):
        return _num(Fraction(size) * factor)
    return float(size) * factor.numerator / factor.denominator


def _load_arrivals(rng: np.random.Generator, n: int, gpu_seconds: float, total_gpus: int,
                   load: float, integer: bool) -> list:
    """Poisson arrivals (first at 0) scaled so that the offered load of the sample,
    ``sum g_j P_j / (M * last arrival)``, equals ``load`` (exactly in float mode)."""
    gaps = rng.exponential(1.0, n)
    if n <= 1:
        return [0] * n if integer else [0.0] * n
    mass = np.cumsum(gaps)
    mass = mass - mass[0]
    span = gpu_seconds / (total_gpus * load)
    t = mass * (span / mass[-1]) if mass[-1] > 0 else mass
    if integer:
        return [int(math.floor(x)) for x in t]
    return [float(x) for x in t]


def _offered_load(jobs: Sequence[Job], sizes: Sequence, total_gpus: int):
    span = max((j.arrival for j in jobs), default=0) - min((j.arrival for j in jobs), default=0)
    if not span:
        return None
    return float(sum(j.gpus * float(p) for j, p in zip(jobs, sizes)) / (total_gpus * float(span)))


_POSITIVE_INT = Interval(Integral, 1, None, closed="left")
_SEED = [Interval(Integral, 0, None, closed="left")]
_MU = [Interval(Real, 1, None, closed="left")]
_LOAD = [Interval(Real, 0, None, closed="neither")]


# ---------------------------------------------------------------------------------------------
# Abstract families
# ---------------------------------------------------------------------------------------------

@_family("uniform", "abstract jobs: uniform sizes, arrival gaps and GPU demands")
@validate_params({
    "n_jobs": [_POSITIVE_INT],
    "cluster": [str],
    "min_processing_time": [Interval(Real, 0, None, closed="neither")],
    "max_processing_time": [Interval(Real, 0, None, closed="neither")],
    "max_gap": [Interval(Real, 0, None, closed="left")],
    "max_job_gpus": [None, _POSITIVE_INT],
    "gpu_choice": [Options(str, {"uniform", "pow2"})],
    "max_weight": [_POSITIVE_INT],
    "integer": ["boolean"],
    "mu": _MU,
    "seed": _SEED,
})
def uniform_instance(n_jobs: int = 10, *, cluster: str = "2x4", min_processing_time: float = 1,
                     max_processing_time: float = 10, max_gap: float = 5,
                     max_job_gpus: int | None = None, gpu_choice: str = "uniform",
                     max_weight: int = 1, integer: bool = True, mu: float = 1.0, seed: int = 0):
    """Uniform random abstract jobs.

    Parameters
    ----------
    n_jobs : int
        Number of jobs ``j0 .. j{n-1}``, in arrival order.
    cluster : str
        Cluster spec (``"2x4"``, ``"8,8,4"``).
    min_processing_time, max_processing_time : number
        Processing times are uniform in this range (integers in integer mode).
    max_gap : number
        Arrival gaps are uniform in ``[0, max_gap]`` (first arrival at 0).
    max_job_gpus : int or None
        Largest GPU demand (default: the cluster's GPUs).
    gpu_choice : {"uniform", "pow2"}
        Demands uniform in ``1..max``, or uniform over the powers of two up to it.
    max_weight : int
        Weights uniform in ``1..max_weight`` (1: unweighted, no weights written).
    integer : bool
        Integer times (and exact rational predictions).
    mu : float >= 1
        Distortion bound of the predictions (1: no predictions).
    seed : int
        The seed.

    Returns
    -------
    Instance

    Raises
    ------
    InvalidParameterError
        A parameter out of range, ``min_processing_time > max_processing_time``, or a bad
        cluster spec.

    Examples
    --------
    >>> inst = uniform_instance(5, cluster="1x4", max_processing_time=3, seed=1)
    >>> [j.processing_time for j in inst.jobs], [j.arrival for j in inst.jobs]
    ([3, 2, 1, 2, 3], [0, 4, 8, 9, 13])
    >>> inst.metadata["params"]["cluster"], inst.metadata["seed"]
    ('1x4', 1)
    """
    if min_processing_time > max_processing_time:
        raise InvalidParameterError(
            f"uniform_instance: min_processing_time={min_processing_time} exceeds "
            f"max_processing_time={max_processing_time}")
    c = _cluster(cluster, "uniform_instance")
    cap = c.total_gpus if max_job_gpus is None else min(max_job_gpus, c.total_gpus)
    r_arr, r_size, r_gpu, r_pred, r_weight = as_generator(seed).spawn(5)
    if integer:
        lo, hi = math.ceil(min_processing_time), math.floor(max_processing_time)
        if lo > hi:
            raise InvalidParameterError(
                f"uniform_instance: no integer processing time in [{min_processing_time}, "
                f"{max_processing_time}]")
        sizes = [int(x) for x in r_size.integers(lo, hi + 1, n_jobs)]
        gaps = [int(x) for x in r_arr.integers(0, math.floor(max_gap) + 1, n_jobs)]
    else:
        sizes = [float(x) for x in r_size.uniform(min_processing_time, max_processing_time, n_jobs)]
        gaps = [float(x) for x in r_arr.uniform(0, max_gap, n_jobs)]
    gaps[0] = 0 if integer else 0.0
    demands = _demands(r_gpu, n_jobs, cap, gpu_choice)
    factors = _factors(r_pred, n_jobs, mu)
    weights = r_weight.integers(1, max_weight + 1, n_jobs)
    jobs, t = [], 0
    for i in range(n_jobs):
        t = t + gaps[i]
        kwargs = {}
        if max_weight > 1:
            kwargs["weight"] = int(weights[i])
        pred = _predicted(sizes[i], factors[i] if factors else None)
        if pred is not None:
            kwargs["predicted_processing_time"] = pred
        jobs.append(Job(f"j{i}", t, demands[i], processing_time=sizes[i], **kwargs))
    return c, jobs, {}


@_family("heavy_tailed", "abstract jobs: Pareto or log-normal sizes, Poisson arrivals at a load")
@validate_params({
    "n_jobs": [_POSITIVE_INT],
    "cluster": [str],
    "distribution": [Options(str, {"pareto", "lognormal"})],
    "alpha": [Interval(Real, 0, None, closed="neither")],
    "sigma": [Interval(Real, 0, None, closed="left")],
    "scale": [Interval(Real, 0, None, closed="neither")],
    "max_processing_time": [None, Interval(Real, 0, None, closed="neither")],
    "load": _LOAD,
    "max_job_gpus": [None, _POSITIVE_INT],
    "gpu_choice": [Options(str, {"uniform", "pow2"})],
    "integer": ["boolean"],
    "mu": _MU,
    "seed": _SEED,
})
def heavy_tailed_instance(n_jobs: int = 10, *, cluster: str = "2x4", distribution: str = "pareto",
                          alpha: float = 1.5, sigma: float = 1.5, scale: float = 1.0,
                          max_processing_time: float | None = None, load: float = 0.9,
                          max_job_gpus: int | None = None, gpu_choice: str = "uniform",
                          integer: bool = False, mu: float = 1.0, seed: int = 0):
    """Abstract jobs with heavy-tailed sizes and Poisson arrivals at an offered load.

    Sizes are Pareto (``P = scale * U^(-1/alpha)``: minimum ``scale``, tail index ``alpha``;
    infinite mean for ``alpha <= 1``) or log-normal (median ``scale``, log-sd ``sigma``),
    optionally clipped at ``max_processing_time``. Arrivals are a Poisson process whose time
    scale is set so that the sample's offered load ``sum g_j P_j / (M * last arrival)`` is
    ``load`` (the sample's, since a heavy-tailed population mean says little about a few jobs).

    Parameters
    ----------
    n_jobs : int
        Number of jobs.
    cluster : str
        Cluster spec.
    distribution : {"pareto", "lognormal"}
        Size distribution.
    alpha : float > 0
        Pareto tail index.
    sigma : float >= 0
        Log-normal log-sd.
    scale : float > 0
        Pareto minimum, or log-normal median (seconds).
    max_processing_time : float or None
        Clip sizes here.
    load : float > 0
        Offered load of the sample.
    max_job_gpus : int or None
        Largest GPU demand (default: the cluster's GPUs).
    gpu_choice : {"uniform", "pow2"}
        How demands are drawn (see :func:`uniform_instance`).
    integer : bool
        Round sizes up and arrivals down to integers (the load is then approximate).
    mu : float >= 1
        Distortion bound of the predictions (1: none).
    seed : int
        The seed.

    Returns
    -------
    Instance
        Metadata adds ``offered_load`` (realised).

    Raises
    ------
    InvalidParameterError
        A parameter out of range or a bad cluster spec.

    Examples
    --------
    >>> inst = heavy_tailed_instance(50, distribution="pareto", alpha=1.1, seed=2)
    >>> min(j.processing_time for j in inst.jobs) >= 1.0
    True
    >>> round(inst.metadata["offered_load"], 9)
    0.9
    """
    c = _cluster(cluster, "heavy_tailed_instance")
    cap = c.total_gpus if max_job_gpus is None else min(max_job_gpus, c.total_gpus)
    r_arr, r_size, r_gpu, r_pred = as_generator(seed).spawn(4)
    if distribution == "pareto":
        u = 1.0 - r_size.random(n_jobs)  # in (0, 1]
        raw = scale * u ** (-1.0 / alpha)
    else:
        raw = scale * np.exp(sigma * r_size.standard_normal(n_jobs))
    if max_processing_time is not None:
        raw = np.minimum(raw, max_processing_time)
    sizes = [max(1, math.ceil(float(x))) for x in raw] if integer else [float(x) for x in raw]
    demands = _demands(r_gpu, n_jobs, cap, gpu_choice)
    gpu_seconds = float(sum(g * float(p) for g, p in zip(demands, sizes)))
    arrivals = _load_arrivals(r_arr, n_jobs, gpu_seconds, c.total_gpus, load, integer)
    factors = _factors(r_pred, n_jobs, mu)
    jobs = []
    for i in range(n_jobs):
        pred = _predicted(sizes[i], factors[i] if factors else None)
        kwargs = {"predicted_processing_time": pred} if pred is not None else {}
        jobs.append(Job(f"j{i}", arrivals[i], demands[i], processing_time=sizes[i], **kwargs))
    return c, jobs, {"offered_load": _offered_load(jobs, sizes, c.total_gpus)}


@_family("bursty", "abstract jobs arriving in bursts (batches or Poisson bursts)")
@validate_params({
    "n_jobs": [_POSITIVE_INT],
    "cluster": [str],
    "mode": [Options(str, {"batch", "poisson"})],
    "burst_size": [Interval(Real, 1, None, closed="left")],
    "burst_gap": [Interval(Real, 0, None, closed="neither")],
    "burst_width": [Interval(Real, 0, None, closed="left")],
    "max_processing_time": [Interval(Real, 1, None, closed="left")],
    "max_job_gpus": [None, _POSITIVE_INT],
    "gpu_choice": [Options(str, {"uniform", "pow2"})],
    "integer": ["boolean"],
    "mu": _MU,
    "seed": _SEED,
})
def bursty_instance(n_jobs: int = 12, *, cluster: str = "2x4", mode: str = "batch",
                    burst_size: float = 4, burst_gap: float = 20.0, burst_width: float = 2.0,
                    max_processing_time: float = 10, max_job_gpus: int | None = None,
                    gpu_choice: str = "uniform", integer: bool = True, mu: float = 1.0,
                    seed: int = 0):
    """Abstract jobs arriving in bursts.

    ``mode="batch"``: bursts of exactly ``round(burst_size)`` jobs (the last may be smaller),
    all released at the same instant; ``mode="poisson"``: bursts of ``1 + Poisson(burst_size -
    1)`` jobs arriving as a Poisson process over about ``burst_width`` from the burst's start. Burst starts are a Poisson process with mean gap ``burst_gap``. Sizes are
    uniform in ``1..max_processing_time``.

    Parameters
    ----------
    n_jobs : int
        Number of jobs.
    cluster : str
        Cluster spec.
    mode : {"batch", "poisson"}
        Burst shape.
    burst_size : float >= 1
        Jobs per burst (batch), or their mean (poisson).
    burst_gap : float > 0
        Mean time between burst starts.
    burst_width : float >= 0
        Poisson mode: the jobs of a burst arrive at exponential gaps of mean
        ``burst_width / burst_size`` (a burst lasts about ``burst_width``).
    max_processing_time : number >= 1
        Sizes are uniform in ``[1, max]`` (integers in integer mode).
    max_job_gpus : int or None
        Largest GPU demand (default: the cluster's GPUs).
    gpu_choice : {"uniform", "pow2"}
        How demands are drawn (see :func:`uniform_instance`).
    integer : bool
        Integer arrivals (rounded down) and sizes.
    mu : float >= 1
        Distortion bound of the predictions (1: none).
    seed : int
        The seed.

    Returns
    -------
    Instance
        Metadata adds ``bursts`` (their number).

    Raises
    ------
    InvalidParameterError
        A parameter out of range or a bad cluster spec.

    Examples
    --------
    >>> inst = bursty_instance(7, burst_size=3, seed=0)
    >>> [j.arrival for j in inst.jobs], inst.metadata["bursts"]
    ([0, 0, 0, 15, 15, 15, 40], 3)
    """
    c = _cluster(cluster, "bursty_instance")
    cap = c.total_gpus if max_job_gpus is None else min(max_job_gpus, c.total_gpus)
    r_arr, r_size, r_gpu, r_pred, r_count = as_generator(seed).spawn(5)
    # burst sizes, then the burst starts (one exponential gap per possible burst), then offsets
    if mode == "batch":
        k = max(1, int(round(burst_size)))
        counts = [k] * (n_jobs // k) + ([n_jobs % k] if n_jobs % k else [])
    else:
        counts, left = [], n_jobs
        draws = r_count.poisson(burst_size - 1, n_jobs)
        for d in draws:
            if left <= 0:
                break
            take = min(left, 1 + int(d))
            counts.append(take)
            left -= take
    starts = np.cumsum(r_arr.exponential(burst_gap, n_jobs))[:len(counts)]
    starts = starts - starts[0]
    spread = r_arr.exponential(burst_width / max(burst_size, 1), n_jobs)
    times, i = [], 0
    for b, count in enumerate(counts):
        offset = 0.0
        for k in range(count):
            if mode == "poisson" and k > 0:
                offset += float(spread[i])
            times.append(float(starts[b]) + offset)
            i += 1
    times.sort()  # overlapping Poisson bursts: jobs j0, j1, ... stay in arrival order
    if integer:
        arrivals = [int(math.floor(t)) for t in times]
        sizes = [int(x) for x in r_size.integers(1, math.floor(max_processing_time) + 1, n_jobs)]
    else:
        arrivals = times
        sizes = [float(x) for x in r_size.uniform(1.0, max_processing_time, n_jobs)]
    demands = _demands(r_gpu, n_jobs, cap, gpu_choice)
    factors = _factors(r_pred, n_jobs, mu)
    jobs = []
    for i in range(n_jobs):
        pred = _predicted(sizes[i], factors[i] if factors else None)
        kwargs = {"predicted_processing_time": pred} if pred is not None else {}
        jobs.append(Job(f"j{i}", arrivals[i], demands[i], processing_time=sizes[i], **kwargs))
    return c, jobs, {"bursts": len(counts)}


@_family("starvation", "a wide job and a stream of narrow ones that starves it under SRSF")
@validate_params({
    "n_jobs": [Interval(Integral, 2, None, closed="left")],
    "cluster": [str],
    "load": [Interval(Real, 0, 1, closed="neither")],
    "wide_gpus": [None, _POSITIVE_INT],
    "wide_processing_time": [Interval(Real, 0, None, closed="neither")],
    "narrow_processing_time": [Interval(Real, 0, None, closed="neither")],
    "wide_after": [None, Interval(Integral, 0, None, closed="left")],
    "integer": ["boolean"],
    "mu": _MU,
    "seed": _SEED,
})
def starvation_instance(n_jobs: int = 200, *, cluster: str = "1x8", load: float = 0.875,
                        wide_gpus: int | None = None, wide_processing_time: float = 100,
                        narrow_processing_time: float = 50, wide_after: int | None = None,
                        integer: bool = False, mu: float = 1.0, seed: int = 0):
    """One wide job among a Poisson stream of one-GPU jobs: the case where an order by remaining
    GPU-time starves a job and A-SRPT's guard does not.

    The narrow jobs ``n0 ..`` (one GPU, ``narrow_processing_time`` each) arrive as a Poisson
    stream at offered ``load`` of the cluster (the sample's, below 1). The job ``wide``, of
    ``wide_gpus`` GPUs (default one server's) and ``wide_processing_time``, arrives with the
    narrow job number ``wide_after`` (default a tenth of the stream in). When its GPU-time
    exceeds a narrow job's, SRSF ranks every narrow job ahead of it, and the narrow jobs keep
    some of its GPUs busy almost all the time: it starts only when the stream leaves a server
    idle, so its completion time grows with the length of the stream. A virtual single machine
    at the load below 1 finishes it by a time that does not: guarded A-SRPT runs it once it is
    ``kappa`` times late. First come first served with backfilling (FIFO, Tiresias's queues)
    serves it at once only when it arrives first; later, the narrow jobs backfill around it
    too. Policies that share the GPUs by fairness (Gavel, Themis) serve it within minutes.

    Parameters
    ----------
    n_jobs : int >= 2
        Number of jobs: the wide one and ``n_jobs - 1`` narrow ones.
    cluster : str
        Cluster spec.
    load : float in (0, 1)
        Offered load of the narrow stream (the sample's: ``sum P / (M * span)``).
    wide_gpus : int or None
        The wide job's GPUs (default: the largest server's; at most that, so it can run).
    wide_processing_time, narrow_processing_time : number
        The two sizes (integers in integer mode).
    wide_after : int or None
        How many narrow jobs arrive before the wide one (default ``(n_jobs - 1) // 10``).
    integer : bool
        Integer arrivals (floored) and sizes, and exact rational predictions.
    mu : float >= 1
        Distortion bound of the predictions (1: no predictions).
    seed : int
        The seed.

    Returns
    -------
    Instance
        Metadata adds ``offered_load`` (the narrow stream's, realised).

    Raises
    ------
    InvalidParameterError
        A parameter out of range, a wide job larger than every server, ``wide_after`` past the
        stream, or a size that is not an integer in integer mode.
    InvalidInstance
        Values in range whose instance is not valid (a load so low, or sizes so small or large,
        that the arrival times or sizes leave the floats an instance accepts).

    Examples
    --------
    The wide job's time in the system under SRSF, the default A-SRPT (``kappa = 16``) and
    A-SRPT with ``kappa = 2`` (its deadline comes sooner), on a stream of about 7,000 s:

    >>> from asrpt.sim import simulate
    >>> inst = starvation_instance(1000, seed=0)
    >>> def wide_jct(policy):
    ...     rec = next(r for r in simulate(inst, policy).records if r.id == "wide")
    ...     return round(rec.completion - rec.arrival)
    >>> wide_jct("srsf"), wide_jct("a-srpt"), wide_jct("a-srpt:kappa=2")
    (6583, 5241, 743)
    """
    who = "starvation_instance"
    c = _cluster(cluster, who)
    widest = max(c.server_gpus)
    g = widest if wide_gpus is None else wide_gpus
    if g > widest:
        raise InvalidParameterError(
            f"{who}: wide_gpus={g} exceeds the largest server of {cluster!r} ({widest} GPUs); the job could never run")
    n_narrow = n_jobs - 1
    after = n_narrow // 10 if wide_after is None else wide_after
    if after > n_narrow:
        raise InvalidParameterError(f"{who}: wide_after={after} exceeds the {n_narrow} narrow jobs")
    if integer and not all(float(x).is_integer() for x in (wide_processing_time, narrow_processing_time)):
        raise InvalidParameterError(
            f"{who}: integer=True takes integer sizes; got wide_processing_time={wide_processing_time}, "
            f"narrow_processing_time={narrow_processing_time}")
    wide_p, narrow_p = ((int(wide_processing_time), int(narrow_processing_time)) if integer
                        else (float(wide_processing_time), float(narrow_processing_time)))
    r_arr, r_pred = as_generator(seed).spawn(2)
    arrivals = _load_arrivals(r_arr, n_narrow, n_narrow * float(narrow_p), c.total_gpus, load, integer)
    factors = _factors(r_pred, n_jobs, mu)
    specs = [(f"n{i}", t, 1, narrow_p) for i, t in enumerate(arrivals)]
    specs.insert(after, ("wide", arrivals[min(after, n_narrow - 1)], g, wide_p))   # with narrow job `after`
    jobs = []
    for k, (name, t, gpus, p) in enumerate(specs):
        pred = _predicted(p, factors[k] if factors else None)
        extra = {} if pred is None else {"predicted_processing_time": pred}
        jobs.append(Job(name, t, gpus, processing_time=p, **extra))
    narrow = [j for j in jobs if j.id != "wide"]
    return c, jobs, {"offered_load": _offered_load(narrow, [narrow_p] * n_narrow, c.total_gpus)}


# ---------------------------------------------------------------------------------------------
# Adversarial family: the patterns of proofs/worst-case-table.md, or the search itself
# ---------------------------------------------------------------------------------------------

#: Pattern name -> (description, the worst-case-table cells where the search found it).
ADVERSARIAL_PATTERNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "blocker": ("a long gang, under-predicted by mu, blocks unit jobs that cannot run beside it "
                "(ALG/UB = 2 in these cells)", ("M2-g2-mu4", "M4-g3-mu4", "M8-g8-mu4")),
    "gang": ("a narrow long job holds GPUs while full-width unit jobs queue behind it "
             "(exact predictions)", ("M4-g4-mu1", "M8-g8-mu1", "M4-g3-mu1")),
    "mispredict": ("short jobs over-predicted, long ones under-predicted, distortion mu; the "
                   "long ones run first", ("M1-g1-mu100", "M2-g1-mu100", "M1-g1-mu4")),
    "search": ("the worst instance found by asrpt.theory.worstcase.worst_case in the cell "
               "(gpus, max_job_gpus, mu, n_jobs), with a fixed evaluation budget", ()),
}


@_family("adversarial", "the bad cases of the worst-case search (patterns, or the search itself)")
@validate_params({
    "n_jobs": [Interval(Integral, 2, None, closed="left")],
    "pattern": [Options(str, set(ADVERSARIAL_PATTERNS))],
    "gpus": [Interval(Integral, 1, 64, closed="both")],
    "max_job_gpus": [None, _POSITIVE_INT],
    "mu": _MU,
    "max_processing_time": [Interval(Integral, 2, 20, closed="both")],
    "evals": [_POSITIVE_INT],
    "seed": _SEED,
})
def adversarial_instance(n_jobs: int = 5, *, pattern: str = "blocker", gpus: int = 4,
                         max_job_gpus: int | None = None, mu: float = 4, max_processing_time: int = 6,
                         evals: int = 40, seed: int = 0):
    """Adversarial abstract instances for A-SRPT on one server of ``gpus`` GPUs.

    The patterns generalise the worst instances that :func:`asrpt.theory.worstcase.worst_case`
    found for the table of ``proofs/worst-case-table.md`` (:data:`ADVERSARIAL_PATTERNS` names
    the cells), with seeded sizes and arrivals:

    - ``"blocker"``: a long job of ``g = max_job_gpus`` GPUs (default ``M - 1``, at least 1)
      arrives at 0 with size ``L`` in ``[max/2, max]``; the others are unit jobs of ``M - g + 1``
      GPUs (they cannot run beside it) arriving at ``1 .. L/2``; every prediction is the truth
      times the smallest multiple of 1/8 that is at least ``1/mu`` (all under-predicted: the
      long job looks nearly done, and keeps its GPUs); exact predictions when ``mu = 1``;
    - ``"gang"``: a one-GPU job of size ``L`` arrives at 0; the others need ``max_job_gpus``
      GPUs (default M), have size 1 and arrive at 1 or 2 (predictions within ``mu``);
    - ``"mispredict"``: one-GPU jobs; two thirds are short (size 1 or 2, arriving at 0 or 1)
      and over-predicted by ``h``, the largest multiple of 1/8 up to ``sqrt(mu)``; the others
      are long (``max - 1`` or ``max``), arrive 1 or 2 after the last short one, and are
      under-predicted by the smallest multiple of 1/8 that is at least ``h / mu`` (distortion at
      most ``mu``);
    - ``"search"``: the worst instance of a search with ``max_evals=evals`` and this seed
      (``n_jobs <= 8``; a few seconds: one ILP per evaluation). Metadata adds ``search``: the
      bracket and Theorem 1's bound for it.

    Parameters
    ----------
    n_jobs : int >= 2
        Number of jobs (at most 8 for ``"search"``).
    pattern : {"blocker", "gang", "mispredict", "search"}
        The construction.
    gpus : int in 1..64
        M, the one server's GPUs.
    max_job_gpus : int or None
        The largest gang (defaults per pattern, capped at M).
    mu : float >= 1
        Distortion bound of the predictions.
    max_processing_time : int in 2..20
        Longest job.
    evals : int
        Distinct instances the search evaluates (``"search"`` only).
    seed : int
        The seed.

    Returns
    -------
    Instance
        Metadata adds ``pattern_source`` (the cells) and ``cell_bound`` (``1 + rho mu`` with
        ``rho = M / (M - max g + 1)``, Theorem 1's ratio for the cell).

    Raises
    ------
    InvalidParameterError
        A parameter out of range (``n_jobs > 8`` for the search).

    Examples
    --------
    >>> inst = adversarial_instance(5, pattern="blocker", gpus=4, mu=4, seed=0)
    >>> [(j.arrival, j.gpus, j.processing_time, j.predicted_processing_time) for j in inst.jobs][:2]
    [(0, 3, 6, Fraction(3, 2)), (1, 2, 1, Fraction(1, 4))]
    >>> from asrpt.theory import certify_instance
    >>> float(certify_instance(inst).ratio_to_lb) > 1.5
    True
    """
    M = gpus
    r_size, r_arr, r_pred = as_generator(seed).spawn(3)
    hi = max_processing_time
    L = int(r_size.integers(max(2, -(-hi // 2)), hi + 1))
    arr_u = r_arr.random(n_jobs)
    size_u = r_size.random(n_jobs)
    under = _grid_ceil(1 / mu)                       # >= 1/mu: every job under-predicted by <= mu
    high = max(Fraction(1), _grid_floor(math.sqrt(mu)))
    split_low = _grid_ceil(float(high) / mu)         # high / split_low <= mu
    extra: dict[str, Any] = {}
    rows: list[tuple] = []  # (arrival, gpus, size, factor or None)
    if pattern == "blocker":
        g = min(M, max_job_gpus) if max_job_gpus is not None else max(1, M - 1)
        small = M - g + 1
        f = under if mu > 1 else None
        rows.append((0, g, L, f))
        last = max(1, L // 2)
        times = sorted(1 + min(last - 1, int(u * last)) for u in arr_u[1:])
        rows += [(t, small, 1, f) for t in times]
        g_max = max(g, small)
    elif pattern == "gang":
        g = min(M, max_job_gpus) if max_job_gpus is not None else M
        rows.append((0, 1, L, None))
        times = sorted(1 + int(u * 2) for u in arr_u[1:])
        rows += [(t, g, 1, None) for t in times]
        if mu > 1:  # predictions within mu: level in [1/mu, 1], factors in [level, level mu]
            factors = _factors(r_pred, n_jobs, mu)
            rows = [(a, gg, p, f) for (a, gg, p, _), f in zip(rows, factors)]
        g_max = max(1, g)
    elif pattern == "mispredict":
        g = 1
        n_long = max(1, n_jobs // 3)
        n_short = n_jobs - n_long
        short_sizes = [1 + int(u * 2) for u in size_u[:n_short]]
        long_sizes = [hi - 1 + int(u * 2) for u in size_u[n_short:]]
        f_short = high if mu > 1 else None
        f_long = split_low if mu > 1 else None
        t_short = sorted(int(u * 2) for u in arr_u[:n_short])
        t_long = sorted(1 + max(t_short) + int(u * 2) for u in arr_u[n_short:])
        rows += [(t, 1, p, f_short) for t, p in zip(t_short, short_sizes)]
        rows += [(t, 1, p, f_long) for t, p in zip(t_long, long_sizes)]
        g_max = 1
    else:  # search
        if n_jobs > 8:
            raise InvalidParameterError(
                f"The 'n_jobs' parameter of adversarial_instance must be at most 8 for the search "
                f"pattern. Got {n_jobs} instead.")
        from ..theory.worstcase import worst_case

        w = worst_case(gpus=M, max_jobs=n_jobs, mu=mu, max_job_gpus=max_job_gpus, budget=1e9,
                       max_evals=evals, seed=seed, max_processing_time=max_processing_time,
                       refine=False)
        jobs = list(w.instance.jobs)
        extra["search"] = {"ratio": float(w.ratio), "ratio_upper": float(w.ratio_upper),
                           "alg": float(w.alg), "opt_lower": float(w.opt_lower),
                           "opt_upper": float(w.opt_upper), "bound": float(w.bound),
                           "evaluations": w.evaluations}
        g_max = max(j.gpus for j in jobs)
        rows = None
    if rows is not None:
        jobs = []
        for i, (a, g, p, f) in enumerate(rows):
            pred = _predicted(p, f)
            kwargs = {"predicted_processing_time": pred} if pred is not None else {}
            jobs.append(Job(f"j{i}", a, g, processing_time=p, **kwargs))
    rho = Fraction(M, M - g_max + 1)
    extra["pattern_source"] = list(ADVERSARIAL_PATTERNS[pattern][1])
    extra["cell_bound"] = float(1 + rho * Fraction(mu).limit_denominator(10**6))
    return Cluster.homogeneous(1, M), jobs, extra


# ---------------------------------------------------------------------------------------------
# Trace-based families
# ---------------------------------------------------------------------------------------------

def _bundled_philly() -> str:
    from importlib import resources

    return str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))


@functools.lru_cache(maxsize=8)
def _philly_jobs(path: str, cluster: Cluster, gang: str, min_duration: float) -> tuple[Job, ...]:
    """Every job of a Philly file on ``cluster`` (read once per process)."""
    from ..traces.philly import read_philly

    inst, _ = read_philly(path, cluster=cluster, gang=gang, min_duration=float(min_duration))
    return inst.jobs


@_family("philly", "Philly trace jobs: consecutive windows or resampled jobs")
@validate_params({
    "n_jobs": [_POSITIVE_INT],
    "cluster": [str],
    "gpu_type": [str],
    "mode": [Options(str, {"window", "sample"})],
    "load": [None, Interval(Real, 0, None, closed="neither")],
    "gang": [Options(str, {"any", "server"})],
    "dnn": ["boolean"],
    "min_duration": [Interval(Real, 0, None, closed="left")],
    "max_duration": [None, Interval(Real, 0, None, closed="neither")],
    "trace": [None, str],
    "seed": _SEED,
})
def philly_instance(n_jobs: int = 20, *, cluster: str = "8x8", gpu_type: str = "A100",
                    mode: str = "window", load: float | None = None, gang: str = "any",
                    dnn: bool = False, min_duration: float = 0.0, max_duration: float | None = None,
                    trace: str | None = None, seed: int = 0):
    """Philly-like jobs from the Microsoft Philly trace (:func:`asrpt.traces.read_philly`).

    ``mode="window"``: ``n_jobs`` consecutive jobs (in submission order) from a seeded start,
    with the trace's own arrival process (or rescaled to ``load``); job ids are the trace rows.
    ``mode="sample"``: ``n_jobs`` jobs drawn with replacement from the trace (GPU count,
    duration, virtual cluster), ids ``j0..``, Poisson arrivals at ``load`` (default: the trace's
    mean arrival rate). Jobs needing more GPUs than the cluster are left out before drawing.

    Parameters
    ----------
    n_jobs : int
        Number of jobs.
    cluster : str
        Cluster spec (default 8 servers of 8 GPUs).
    gpu_type : str
        GPU type of the cluster (DNN jobs).
    mode : {"window", "sample"}
        Consecutive window or resampled jobs.
    load : float or None
        Rescale arrivals so that the offered load ``sum g_j P_j / (M * last arrival)`` is this;
        None keeps the trace's times (window) or its mean rate (sample).
    gang : {"any", "server"}
        ``"server"`` splits jobs larger than a server into gang instances.
    dnn : bool
        Give jobs zoo models, configurations and iterations (:func:`asrpt.traces.assign_models`
        with this seed).
    min_duration : float
        Leave out shorter jobs (e.g. 60 s, as in Pollux).
    max_duration : float or None
        Clip durations here (``meta["trace_duration"]`` keeps the trace's).
    trace : str or None
        A Philly-format file (default: the 20,000-job window bundled with asrpt).
    seed : int
        The seed.

    Returns
    -------
    Instance
        Metadata adds ``first_row`` (window) and ``offered_load``.

    Raises
    ------
    InvalidParameterError
        A parameter out of range, a bad cluster spec, or more jobs than the trace has.
    TraceError
        The trace file is missing or malformed.

    Examples
    --------
    >>> inst = philly_instance(5, cluster="2x8", seed=4)
    >>> inst.n_jobs, inst.jobs[0].arrival, inst.jobs[0].meta["trace_duration"] > 0
    (5, 0.0, True)
    """
    c = _cluster(cluster, "philly_instance", gpu_type)
    path = trace if trace is not None else _bundled_philly()
    pool = _philly_jobs(path, c, gang, float(min_duration))
    if not pool:
        raise InvalidParameterError(f"philly_instance: no job of {path} fits cluster {cluster}")
    r_pick, r_arr = as_generator(seed).spawn(2)
    extra: dict[str, Any] = {}
    if mode == "window":
        if n_jobs > len(pool):
            raise InvalidParameterError(
                f"philly_instance: n_jobs={n_jobs} exceeds the {len(pool)} usable jobs of {path}")
        start = int(r_pick.integers(0, len(pool) - n_jobs + 1))
        chosen = pool[start:start + n_jobs]
        t0 = chosen[0].meta["submitted"]
        arrivals = [j.meta["submitted"] - t0 for j in chosen]
        ids = [j.id for j in chosen]
        extra["first_row"] = chosen[0].meta["row"]
    else:
        picks = r_pick.integers(0, len(pool), n_jobs)
        chosen = [pool[int(k)] for k in picks]
        ids = [f"j{i}" for i in range(n_jobs)]
        arrivals = None
    sizes = [j.processing_time if max_duration is None else min(j.processing_time, float(max_duration))
             for j in chosen]
    gpu_seconds = float(sum(j.gpus * float(p) for j, p in zip(chosen, sizes)))
    if mode == "sample" and load is None:
        first, last = pool[0].meta["submitted"], pool[-1].meta["submitted"]
        rate = (len(pool) - 1) / (last - first) if last > first and len(pool) > 1 else 1.0
        gaps = r_arr.exponential(1.0 / rate, n_jobs)
        arrivals = [float(x) for x in np.cumsum(gaps) - gaps[0]]
    elif load is not None:
        arrivals = _load_arrivals(r_arr, n_jobs, gpu_seconds, c.total_gpus, load, False) \
            if mode == "sample" else _rescale(arrivals, gpu_seconds, c.total_gpus, load)
    jobs = []
    for i, (j, a, p) in enumerate(zip(chosen, arrivals, sizes)):
        jobs.append(Job(ids[i], a, j.gpus, processing_time=p, instances=j.instances, user=j.user,
                        meta=dict(j.meta)))
    extra["offered_load"] = _offered_load(jobs, sizes, c.total_gpus)
    if dnn:
        from ..traces.assign import assign_models

        assigned = assign_models(Instance(c, tuple(jobs)), seed=seed)
        jobs = list(assigned.jobs)
        extra["model_assignment"] = dict(assigned.metadata["model_assignment"])
    return c, jobs, extra


def _rescale(arrivals: list, gpu_seconds: float, total_gpus: int, load: float) -> list:
    span = arrivals[-1] - arrivals[0] if arrivals else 0
    if not span:
        return [float(a) for a in arrivals]
    k = gpu_seconds / (total_gpus * load) / span
    return [float(a * k) for a in arrivals]


@_family("recurring", "recurring DNN jobs of users and groups (asrpt.workloads.recurring)")
@validate_params({
    "n_jobs": [_POSITIVE_INT],
    "load": _LOAD,
    "cluster": [None, str],
    "gpu_type": [str],
    "profile": [Options(str, set(PROFILES))],
    "max_duration": [None, Interval(Real, 0, None, closed="neither")],
    "one_off_fraction": [Interval(Real, 0, 1, closed="both")],
    "fail_fraction": [Interval(Real, 0, 0.5, closed="left")],
    "sigma_within": [Interval(Real, 0, None, closed="left")],
    "diurnal": ["boolean"],
    "seed": _SEED,
})
def recurring_instance(n_jobs: int = 50, *, load: float = 0.8, cluster: str | None = "2x8",
                       gpu_type: str = "A100", profile: str = "philly",
                       max_duration: float | None = 86400.0, one_off_fraction: float = 0.2,
                       fail_fraction: float = 0.2, sigma_within: float = 0.25,
                       diurnal: bool = True, seed: int = 0):
    """A recurring DNN workload: :func:`asrpt.workloads.recurring_workload` with these parameters.

    Parameters
    ----------
    n_jobs : int
        Number of jobs.
    load : float
        Offered load of the sample.
    cluster : str or None
        Cluster spec (None: the profile's default, e.g. 8x8 for Philly).
    gpu_type : str
        GPU type of the cluster.
    profile : str
        Calibration profile (:data:`asrpt.workloads.PROFILES`).
    max_duration : float or None
        Clip run times (seconds; default one day, as scheduling evaluations do).
    one_off_fraction, fail_fraction, sigma_within : float
        As in :func:`~asrpt.workloads.recurring_workload`.
    diurnal : bool
        Modulate arrivals by hour of day and weekday.
    seed : int
        The seed.

    Returns
    -------
    Instance
        Metadata keeps the workload's own records (``calibration``, ``groups``, ``users``,
        ``offered_load``; its full parameters as ``recurring_params``).

    Raises
    ------
    InvalidParameterError
        A parameter out of range or a bad cluster spec.
    Infeasible
        No model configuration fits the cluster.

    Examples
    --------
    >>> inst = recurring_instance(10, cluster="2x8", seed=1)
    >>> inst.metadata["family"], inst.jobs[0].group is not None, inst.is_abstract
    ('recurring', True, False)
    """
    from .recurring import recurring_workload

    c = _cluster(cluster, "recurring_instance", gpu_type) if cluster is not None else None
    inst = recurring_workload(n_jobs, load=load, cluster=c, gpu_type=gpu_type, profile=profile,
                              max_duration=max_duration, one_off_fraction=one_off_fraction,
                              fail_fraction=fail_fraction, sigma_within=sigma_within,
                              diurnal=diurnal, seed=seed)
    meta = {k: v for k, v in inst.metadata.items() if k not in ("family", "generator", "seed", "params")}
    meta["recurring_params"] = inst.metadata["params"]
    return inst.cluster, list(inst.jobs), meta


# ---------------------------------------------------------------------------------------------
# DNN jobs: zoo models x parallel configurations
# ---------------------------------------------------------------------------------------------

#: Default models of :func:`dnn_instance`: CNNs, ViT, BERT, GPT-2 and a small LLaMA.
DNN_MODELS: tuple[str, ...] = ("resnet18_cifar", "resnet50", "vgg16", "mobilenet_v2",
                               "densenet121", "vit_b_16", "bert-base", "bert-large", "gpt2",
                               "gpt2-medium", "gpt2-large", "llama-1b")


@functools.lru_cache(maxsize=4096)
def _dnn_config(model: str, dp: int, pp: int, tp: int, cluster: Cluster) -> float | None:
    """tau* of (model, configuration) on ``cluster``, or None when it does not fit."""
    from ..dnn.perf import best_iteration_time
    from ..dnn.validate import job_problems

    probe = Job("probe", 0, dp * pp * tp, model=model, parallelism=Parallelism(dp, pp, tp),
                iterations=1)
    if job_problems(probe, cluster):
        return None
    return float(best_iteration_time(probe, cluster))


@_family("dnn", "DNN jobs mixing zoo models and parallel configurations")
@validate_params({
    "n_jobs": [_POSITIVE_INT],
    "cluster": [str],
    "gpu_type": [str],
    "models": [list, tuple],
    "max_job_gpus": [None, _POSITIVE_INT],
    "median_duration": [Interval(Real, 0, None, closed="neither")],
    "sigma": [Interval(Real, 0, None, closed="left")],
    "load": _LOAD,
    "mu": _MU,
    "seed": _SEED,
})
def dnn_instance(n_jobs: int = 8, *, cluster: str = "2x8", gpu_type: str = "A100",
                 models: Sequence[str] = DNN_MODELS, max_job_gpus: int | None = None,
                 median_duration: float = 3600.0, sigma: float = 1.0, load: float = 0.9,
                 mu: float = 1.0, seed: int = 0):
    """DNN jobs mixing the zoo's models and parallel configurations.

    Each job draws a model (uniform over ``models``), a GPU count (uniform over the powers of
    two up to ``max_job_gpus``), then a configuration uniformly among those of that many GPUs
    that fit GPU memory (:func:`asrpt.traces.assign.candidate_configurations`: data, tensor,
    and tensor x pipeline parallelism); a model with no fitting configuration is replaced by the
    next one of the list that has one, then the GPU count is halved. A target duration is
    log-normal (median ``median_duration``, log-sd ``sigma``), and ``iterations = max(1,
    round(D / tau*))``. Arrivals are Poisson at the sample's offered ``load`` (as in
    :func:`heavy_tailed_instance`).

    Parameters
    ----------
    n_jobs : int
        Number of jobs.
    cluster : str
        Cluster spec.
    gpu_type : str
        GPU type of the cluster.
    models : sequence of str
        Zoo model names to mix.
    max_job_gpus : int or None
        Largest GPU count (default: the cluster's GPUs).
    median_duration : float
        Median run time on the best placement (seconds).
    sigma : float
        Log-sd of the run times.
    load : float
        Offered load of the sample.
    mu : float >= 1
        Distortion bound of ``predicted_iterations`` (1: none).
    seed : int
        The seed.

    Returns
    -------
    Instance
        Metadata adds ``offered_load``.

    Raises
    ------
    InvalidParameterError
        A parameter out of range, a bad cluster spec, an unknown model, or no model fits.

    Examples
    --------
    >>> inst = dnn_instance(4, cluster="1x8", models=("gpt2", "resnet50"), seed=2)
    >>> sorted({j.model for j in inst.jobs}), all(j.iterations >= 1 for j in inst.jobs)
    (['gpt2', 'resnet50'], True)
    """
    from ..dnn.zoo import model_names
    from ..traces.assign import candidate_configurations

    known = set(model_names())
    models = tuple(models)
    if not models or any(not isinstance(m, str) or m not in known for m in models):
        bad = [m for m in models if m not in known]
        hint = did_you_mean(bad[0], known) if bad and isinstance(bad[0], str) else ""
        raise InvalidParameterError(
            f"The 'models' parameter of dnn_instance must be a non-empty list of zoo models. "
            f"Got {bad[0] if bad else 'an empty list'!r}{hint} instead.")
    c = _cluster(cluster, "dnn_instance", gpu_type)
    cap = c.total_gpus if max_job_gpus is None else min(max_job_gpus, c.total_gpus)
    r_model, r_gpu, r_conf, r_dur, r_arr, r_pred = as_generator(seed).spawn(6)
    u_model, u_conf = r_model.random(n_jobs), r_conf.random(n_jobs)
    demands = _demands(r_gpu, n_jobs, cap, "pow2")
    durations = median_duration * np.exp(sigma * r_dur.standard_normal(n_jobs))
    picked = []
    for i in range(n_jobs):
        first = int(u_model[i] * len(models))
        order = models[first:] + models[:first]
        g, choice = demands[i], None
        while choice is None and g >= 1:
            for model in order:
                fits = [(p, tau) for p in candidate_configurations(g)
                        if (tau := _dnn_config(model, p.dp, p.pp, p.tp, c)) is not None]
                if fits:
                    choice = (model,) + fits[min(len(fits) - 1, int(u_conf[i] * len(fits)))]
                    break
            g //= 2
        if choice is None:
            raise InvalidParameterError(
                f"dnn_instance: none of the models {list(models)} fits one GPU of cluster {cluster}")
        picked.append(choice)
    iterations = [max(1, int(round(float(d) / tau))) for d, (_, _, tau) in zip(durations, picked)]
    sizes = [n * tau for n, (_, _, tau) in zip(iterations, picked)]
    gpu_seconds = float(sum(p.gpus * s for (_, p, _), s in zip(picked, sizes)))
    arrivals = _load_arrivals(r_arr, n_jobs, gpu_seconds, c.total_gpus, load, False)
    factors = _factors(r_pred, n_jobs, mu)
    jobs = []
    for i, ((model, par, _), n) in enumerate(zip(picked, iterations)):
        kwargs = {}
        if factors:
            kwargs["predicted_iterations"] = float(n) * factors[i].numerator / factors[i].denominator
        jobs.append(Job(f"j{i}", arrivals[i], par.gpus, model=model, parallelism=par,
                        iterations=n, **kwargs))
    return c, jobs, {"offered_load": _offered_load(jobs, sizes, c.total_gpus)}


# ---------------------------------------------------------------------------------------------
# The registry and series of files
# ---------------------------------------------------------------------------------------------

@validate_params({})
def family_names() -> tuple[str, ...]:
    """The registered family names, sorted (:meth:`asrpt.registry.Registry.names`).

    >>> "heavy_tailed" in family_names()
    True
    """
    return FAMILIES.names()


@validate_params({"name": [str]})
def get_family(name: str) -> Family:
    """The :class:`Family` called ``name`` (hyphens read as underscores); an unknown name raises
    InvalidParameterError with a did-you-mean and the known names.

    >>> get_family("heavy-tailed").name
    'heavy_tailed'
    >>> get_family("bursti")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: unknown generator family 'bursti' (did you mean 'bursty'?); known: adversarial, bursty, dnn, heavy_tailed, philly, recurring, starvation, uniform
    """
    return FAMILIES.get_item(name)


@validate_params({"seed": _SEED, "index": [Interval(Integral, 0, None, closed="left")]})
def instance_seed(seed: int, index: int) -> int:
    """The seed of file ``index`` of a series generated with ``seed`` (a 32-bit integer).

    Derived with :class:`numpy.random.SeedSequence` from ``(seed, index)``, so the series of two
    seeds do not overlap and file ``index`` does not depend on the length of the series.

    Parameters
    ----------
    seed : int
        The series' seed.
    index : int
        The file's position (0-based).

    Returns
    -------
    int

    Examples
    --------
    >>> instance_seed(0, 0) == instance_seed(0, 0) != instance_seed(0, 1)
    True
    """
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1)[0])


def _check_params(family: Family, params: Mapping[str, Any]) -> None:
    allowed = set(family.defaults) - {"seed"}
    for key in params:
        if key not in allowed:
            raise InvalidParameterError(
                f"family {family.name!r} has no parameter {key!r}{did_you_mean(key, allowed)}; "
                f"its parameters: {', '.join(sorted(allowed))}")


@validate_params({"family": [str], "seed": _SEED, "params": "no_validation"})
def generate_one(family: str, *, seed: int = 0, **params) -> Instance:
    """One instance of a family by name.

    Parameters
    ----------
    family : str
        A registered family.
    seed : int
        The instance's seed.
    **params
        The family's parameters.

    Returns
    -------
    Instance

    Raises
    ------
    InvalidParameterError
        Unknown family or parameter, or a bad value.

    Examples
    --------
    >>> generate_one("bursty", n_jobs=3, seed=5).metadata["params"]["n_jobs"]
    3
    >>> generate_one("uniform", n_job=3)
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: family 'uniform' has no parameter 'n_job' (did you mean 'n_jobs'?); its parameters: ...
    """
    fam = get_family(family)
    _check_params(fam, params)
    return fam.function(seed=seed, **params)


@validate_params({"family": [str], "n": [_POSITIVE_INT], "seed": _SEED, "params": "no_validation"})
def generate(family: str, *, n: int, seed: int = 0, **params) -> list[Instance]:
    """A series of ``n`` instances: instance ``i`` has seed :func:`instance_seed(seed, i)
    <instance_seed>` and records ``series = {"seed": seed, "index": i}``.

    Parameters
    ----------
    family : str
        A registered family.
    n : int
        Number of instances.
    seed : int
        The series' seed.
    **params
        The family's parameters.

    Returns
    -------
    list of Instance

    Raises
    ------
    InvalidParameterError
        Unknown family or parameter, or a bad value.

    Examples
    --------
    >>> a = generate("uniform", n=3, seed=1, n_jobs=4)
    >>> [i.metadata["series"]["index"] for i in a], a == generate("uniform", n=3, seed=1, n_jobs=4)
    ([0, 1, 2], True)
    """
    return [_series_member(family, seed, i, params) for i in range(n)]


def _series_member(family: str, seed: int, index: int, params: Mapping[str, Any]) -> Instance:
    inst = generate_one(family, seed=instance_seed(seed, index), **params)
    meta = dict(inst.metadata)
    meta["series"] = {"seed": seed, "index": index}
    return Instance(inst.cluster, inst.jobs, meta)


@validate_params({"instance": [Instance, dict]})
def regenerate(instance) -> Instance:
    """Rebuild a generated instance from its metadata alone (family, params, seed, series).

    Parameters
    ----------
    instance : Instance or dict
        A generated instance, or its metadata.

    Returns
    -------
    Instance
        Equal to the original (same bytes once saved) with the same asrpt version.

    Raises
    ------
    InvalidParameterError
        The metadata does not name a family.

    Examples
    --------
    >>> inst = generate("heavy_tailed", n=2, seed=9, n_jobs=5)[1]
    >>> regenerate(inst) == inst
    True
    """
    from ..instance import _thaw

    meta = _thaw(instance.metadata) if isinstance(instance, Instance) else dict(instance)
    if "family" not in meta or "params" not in meta or "seed" not in meta:
        raise InvalidParameterError("regenerate: the metadata has no family, params and seed")
    params = dict(meta["params"])
    if "series" in meta:
        s = meta["series"]
        return _series_member(meta["family"], s["seed"], s["index"], params)
    return generate_one(meta["family"], seed=meta["seed"], **params)


@validate_params({
    "family": [str],
    "out": [str, os.PathLike],
    "n": [_POSITIVE_INT],
    "seed": _SEED,
    "force": ["boolean"],
    "progress": [None, callable],
    "params": "no_validation",
})
def generate_files(family: str, out, *, n: int, seed: int = 0, force: bool = False,
                   progress: Callable[[int, int], None] | None = None, **params) -> list[str]:
    """Write the series of :func:`generate` to ``out/FAMILY-00000.json``, ...

    Files are written atomically (:func:`asrpt.instance.save_instance`); a file that already
    holds the same bytes is left alone, so the same call is idempotent.

    Parameters
    ----------
    family : str
        A registered family.
    out : str or path
        Directory (created if missing).
    n : int
        Number of files.
    seed : int
        The series' seed.
    force : bool
        Replace existing files whose content differs (else that is an error).
    progress : callable or None
        Called as ``progress(done, n)`` after each file.
    **params
        The family's parameters.

    Returns
    -------
    list of str
        The paths, in series order (zero-padded to at least 5 digits).

    Raises
    ------
    InvalidParameterError
        Unknown family or parameter, a bad value, or an existing different file without
        ``force``.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> paths = generate_files("uniform", d, n=2, seed=0, n_jobs=3)
    >>> [os.path.basename(p) for p in paths]
    ['uniform-00000.json', 'uniform-00001.json']
    """
    fam = get_family(family)
    _check_params(fam, params)
    out = os.fspath(out)
    os.makedirs(out, exist_ok=True)
    width = max(5, len(str(n - 1)))
    paths = []
    for i in range(n):
        inst = _series_member(fam.name, seed, i, params)
        path = os.path.join(out, f"{fam.name}-{i:0{width}d}.json")
        text = dumps_instance(inst)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                same = fh.read() == text
            if not same and not force:
                raise InvalidParameterError(
                    f"{path} exists with other content (another series?); use force=True "
                    "(--force) to replace it")
            if not same:
                save_instance(inst, path)
        else:
            save_instance(inst, path)
        paths.append(path)
        if progress is not None:
            progress(i + 1, n)
    return paths
