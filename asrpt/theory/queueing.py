"""M/M/1 with size predictions: simulated and analytic mean response times (proofs/classical.md,
Result 13).

This module owns a small discrete-event simulator of a single-server queue with Poisson arrivals
(rate ``lam``), exponential sizes of mean 1 and predictions ``Y`` drawn with each job, and the
classical priority-queue formulas it is checked against (Mitzenmacher, ITCS 2020):

- **predictions** ``"exponential"``: ``Y | X = x ~ Exp(mean x)``; ``"exact"``: ``Y = X``;
- **policies** ``"fcfs"``; ``"spjf"`` (non-preemptive, smallest prediction first); ``"pspjf"``
  (preemptive-resume, smallest prediction first); ``"srpt"`` (true remaining size; the reference).

With ``rho(y) = lam E[X 1{Y < y}]`` (the load of jobs predicted smaller than y),
``R = lam E[X^2] / 2`` and ``m2(y) = E[X^2 1{Y < y}]``:

- SPJF: ``E[T] = E[X] + E[ R / (1 - rho(Y))^2 ]``;
- PSPJF: ``E[T] = E[ X / (1 - rho(Y)) ] + E[ (lam / 2) m2(Y) / (1 - rho(Y))^2 ]``;
- FCFS (M/M/1): ``E[T] = 1 / (1 - lam)``.

For exponential predictions the inner integrals are Bessel functions
(``int_0^inf x^(v-1) exp(-x - y/x) dx = 2 y^(v/2) K_v(2 sqrt y)``), leaving one numerical
integral over y (:func:`mean_response_time`). Simulated means come with a batch-means 95%
confidence half-width (:func:`simulate_queue`). Randomness only through ``seed``.

Examples
--------
>>> round(mean_response_time(0.5, "fcfs"), 6)
2.0
>>> r = simulate_queue(0.5, "fcfs", n_jobs=20000, seed=1)
>>> abs(r.mean - 2.0) < 3 * r.half_width
True
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .._validation import Interval, Options, validate_params
from ..random import as_generator

__all__ = ["QueueResult", "simulate_queue", "mean_response_time", "QUEUE_POLICIES"]

#: Policies of :func:`simulate_queue`.
QUEUE_POLICIES = ("fcfs", "spjf", "pspjf", "srpt")
_PREDICTIONS = ("exponential", "exact")


@dataclass(frozen=True)
class QueueResult:
    """A simulated mean response time with its batch-means 95% confidence half-width.

    Attributes
    ----------
    mean : float
        Mean response time (completion minus arrival) over the measured jobs.
    half_width : float
        95% confidence half-width from ``batches`` batch means (Student t).
    jobs : int
        Measured jobs (after the warm-up).
    batches : int

    Examples
    --------
    >>> QueueResult(2.0, 0.1, 1000, 20).interval
    (1.9, 2.1)
    """

    mean: float
    half_width: float
    jobs: int
    batches: int

    @property
    def interval(self) -> tuple[float, float]:
        """``(mean - half_width, mean + half_width)``."""
        return (self.mean - self.half_width, self.mean + self.half_width)


def _draw(lam: float, n: int, predictions: str, seed):
    rng = as_generator(seed)
    arrivals = np.cumsum(rng.exponential(1.0 / lam, n))
    sizes = rng.exponential(1.0, n)
    preds = sizes.copy() if predictions == "exact" else rng.exponential(1.0, n) * sizes
    return arrivals.tolist(), sizes.tolist(), preds.tolist()


def _nonpreemptive(arrivals, sizes, keys):
    n = len(sizes)
    done = [0.0] * n
    heap: list = []
    t, i = 0.0, 0
    while i < n or heap:
        if not heap:
            t = max(t, arrivals[i])
        while i < n and arrivals[i] <= t:
            heapq.heappush(heap, (keys[i], i))
            i += 1
        _, j = heapq.heappop(heap)
        t += sizes[j]
        done[j] = t
    return done


def _preemptive(arrivals, sizes, keys, remaining_key: bool):
    """Preemptive-resume priority by a fixed key, or by the remaining size (SRPT)."""
    n = len(sizes)
    done = [0.0] * n
    left = list(sizes)
    heap: list = []
    t, i = 0.0, 0
    while i < n or heap:
        if not heap:
            t = max(t, arrivals[i])
            heapq.heappush(heap, (left[i] if remaining_key else keys[i], i))
            i += 1
            continue
        key, j = heap[0]
        finish = t + left[j]
        if i < n and arrivals[i] < finish:
            dt = arrivals[i] - t
            left[j] -= dt
            t = arrivals[i]
            if remaining_key:
                heapq.heapreplace(heap, (left[j], j))
            heapq.heappush(heap, (left[i] if remaining_key else keys[i], i))
            i += 1
        else:
            heapq.heappop(heap)
            t = finish
            left[j] = 0.0
            done[j] = t
    return done


@validate_params({
    "lam": [Interval(Real, 0, 1, closed="neither")],
    "policy": [Options(str, set(QUEUE_POLICIES))],
    "predictions": [Options(str, set(_PREDICTIONS))],
    "n_jobs": [Interval(Integral, 100, None, closed="left")],
    "warmup": [Interval(Real, 0, 1, closed="left")],
    "batches": [Interval(Integral, 2, None, closed="left")],
    "seed": ["seed"],
})
def simulate_queue(lam: float, policy: str, *, predictions: str = "exponential", n_jobs: int = 100_000,
                   warmup: float = 0.1, batches: int = 30, seed=0) -> QueueResult:
    """Simulate the M/M/1 queue with predictions under ``policy``; mean response time and CI.

    Parameters
    ----------
    lam : float in (0, 1)
        Arrival rate (= load: sizes have mean 1).
    policy : {"fcfs", "spjf", "pspjf", "srpt"}
        The discipline.
    predictions : {"exponential", "exact"}
        How predictions are drawn (see the module docstring).
    n_jobs : int >= 100
        Jobs simulated (the same arrival, size and prediction streams for every policy).
    warmup : float in [0, 1)
        Fraction of the first jobs left out of the mean.
    batches : int >= 2
        Batch means for the confidence interval.
    seed : int, Generator or None

    Returns
    -------
    QueueResult

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> a = simulate_queue(0.5, "srpt", predictions="exact", n_jobs=5000, seed=2).mean
    >>> b = simulate_queue(0.5, "fcfs", predictions="exact", n_jobs=5000, seed=2).mean
    >>> a < b
    True
    """
    arrivals, sizes, preds = _draw(lam, n_jobs, predictions, seed)
    if policy == "fcfs":
        done = _nonpreemptive(arrivals, sizes, list(range(n_jobs)))
    elif policy == "spjf":
        done = _nonpreemptive(arrivals, sizes, preds)
    elif policy == "pspjf":
        done = _preemptive(arrivals, sizes, preds, remaining_key=False)
    else:
        done = _preemptive(arrivals, sizes, None, remaining_key=True)
    start = int(warmup * n_jobs)
    response = np.asarray(done[start:]) - np.asarray(arrivals[start:])
    groups = np.array_split(response, batches)
    means = np.array([g.mean() for g in groups])
    from scipy import stats  # imported where used: scipy.stats costs ~0.6 s of start-up

    half = float(stats.t.ppf(0.975, batches - 1) * means.std(ddof=1) / math.sqrt(batches))
    return QueueResult(float(response.mean()), half, int(response.size), batches)


def _bessel_moment(v: int, y: float) -> float:
    """``int_0^inf x^(v-1) exp(-x - y/x) dx``."""
    if y == 0:
        return math.gamma(v) if v > 0 else math.inf
    from scipy import special

    s = 2.0 * math.sqrt(y)
    return 2.0 * y ** (v / 2.0) * float(special.kv(v, s))


def _exp_terms(y: float, predictions: str, lam: float):
    """(density of Y, rho(y), m2(y), E[X 1{...}] density term) at y."""
    if predictions == "exact":
        f = math.exp(-y)
        rho = lam * (1.0 - math.exp(-y) * (1.0 + y))
        m2 = 2.0 - math.exp(-y) * (y * y + 2.0 * y + 2.0)
        x_density = y * math.exp(-y)         # E[X ; Y in dy] / dy
    else:
        f = _bessel_moment(0, y)
        rho = lam * (1.0 - _bessel_moment(2, y))
        m2 = 2.0 - _bessel_moment(3, y)
        x_density = _bessel_moment(1, y)
    return f, rho, m2, x_density


@validate_params({
    "lam": [Interval(Real, 0, 1, closed="neither")],
    "policy": [Options(str, {"fcfs", "spjf", "pspjf"})],
    "predictions": [Options(str, set(_PREDICTIONS))],
})
def mean_response_time(lam: float, policy: str, *, predictions: str = "exponential") -> float:
    """The analytic mean response time of the M/M/1 queue with predictions (module docstring).

    Parameters
    ----------
    lam : float in (0, 1)
        Arrival rate.
    policy : {"fcfs", "spjf", "pspjf"}
        The discipline.
    predictions : {"exponential", "exact"}
        The prediction model (``"exact"``: SPJF is SJF and PSPJF is PSJF).

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> round(mean_response_time(0.5, "pspjf", predictions="exact"), 4) < 2
    True
    """
    if policy == "fcfs":
        return 1.0 / (1.0 - lam)
    r = lam  # lam E[X^2] / 2 with E[X^2] = 2

    def waiting(y):
        f, rho, m2, _ = _exp_terms(y, predictions, lam)
        if policy == "spjf":
            return f * r / (1.0 - rho) ** 2
        return f * (lam / 2.0) * m2 / (1.0 - rho) ** 2

    from scipy import integrate

    total = 1.0 if policy == "spjf" else 0.0
    total += integrate.quad(waiting, 0, np.inf, limit=400)[0]
    if policy == "pspjf":
        def running(y):
            _, rho, _, xd = _exp_terms(y, predictions, lam)
            return xd / (1.0 - rho)

        total += integrate.quad(running, 0, np.inf, limit=400)[0]
    return float(total)
