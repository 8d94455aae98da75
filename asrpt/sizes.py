"""How long each job is: the one owner of "processing time" in asrpt.

- Abstract jobs carry their processing time P_j (seconds on their g_j GPUs, any placement) and
  optionally a prediction of it.
- DNN jobs carry iterations N_j (and a prediction N^_j); their best processing time is
  P*_j = N_j * tau*_j, with tau*_j the best iteration time from the performance model
  (:func:`asrpt.dnn.perf.best_iteration_time`), computed once per job.

The virtual single machine (:mod:`asrpt.single.virtual`), the lower bounds
(:mod:`asrpt.offline.bounds`), the simulator and the certificate all ask this module.

Arithmetic keeps exact inputs exact: ``exact_div`` of ints and Fractions is a Fraction (an int
when integral); any float makes the result a float.

Examples
--------
>>> from asrpt.instance import Cluster, Instance, Job
>>> inst = Instance(Cluster.homogeneous(1, 4), (Job("a", 0, 2, processing_time=4),
...                                             Job("b", 1, 1, processing_time=2, predicted_processing_time=3)))
>>> processing_times(inst), predicted_processing_times(inst)
((4, 2), (4, 3))
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Integral
from typing import Sequence

from .instance import Instance, Job, Number

__all__ = [
    "floaty",
    "integral",
    "exact_div",
    "exact_mul",
    "best_iteration_times",
    "processing_times",
    "predicted_processing_times",
    "processing_time",
]


def _is_exact(x) -> bool:
    t = type(x)
    if t is int or t is Fraction:      # the common cases, without the slow ABC checks
        return True
    if t is float or t is bool:
        return False
    return isinstance(x, (Integral, Fraction)) and not isinstance(x, bool)


def integral(x: Number) -> Number:
    """An integral float as an int (a parameter such as ``kappa=2.0`` keeps exact runs exact);
    anything else unchanged.

    >>> integral(2.0), integral(2.5), integral(3)
    (2, 2.5, 3)
    """
    return int(x) if isinstance(x, float) and x.is_integer() else x


def floaty(x) -> bool:
    """True when ``x`` is a float or an int below 2**53 in magnitude: a float holds it exactly, so
    float64 arithmetic on it (numpy's) gives the bits of Python's mixed int/float arithmetic.

    >>> from fractions import Fraction
    >>> floaty(0.5), floaty(3), floaty(2 ** 53), floaty(Fraction(1, 2))
    (True, True, False, False)
    """
    t = type(x)
    return t is float or (t is int and -_FLOAT_EXACT < x < _FLOAT_EXACT)


_FLOAT_EXACT = 2 ** 53


def exact_div(a: Number, b: Number) -> Number:
    """a / b, exact when both are ints or Fractions.

    >>> exact_div(6, 4), exact_div(6, 3), exact_div(1.5, 3)
    (Fraction(3, 2), 2, 0.5)
    """
    ta, tb = type(a), type(b)
    if ta is float or tb is float:
        return a / b
    if ta is int and tb is int:         # the common exact case: one gcd, no intermediate Fractions
        q, r = divmod(a, b)
        return q if not r else Fraction(a, b)
    if _is_exact(a) and _is_exact(b):
        q = Fraction(a) / Fraction(b)
        return q.numerator if q.denominator == 1 else q
    return float(a) / float(b)


def exact_mul(a: Number, b: Number) -> Number:
    """a * b, exact when both are ints or Fractions (an int when integral).

    >>> exact_mul(Fraction(1, 2), 4), exact_mul(0.5, 4), exact_mul(3, 4)
    (2, 2.0, 12)
    """
    ta, tb = type(a), type(b)
    if ta is float or tb is float:
        return float(a) * float(b)
    if ta is int and tb is int:
        return a * b
    if _is_exact(a) and _is_exact(b):
        q = Fraction(a) * Fraction(b)
        return q.numerator if q.denominator == 1 else q
    return float(a) * float(b)


def best_iteration_times(instance: Instance) -> tuple[float | None, ...]:
    """tau*_j (seconds per iteration, consolidated placement) per job; None for abstract jobs."""
    if instance.is_abstract:
        return tuple(None for _ in instance.jobs)
    from .dnn.perf import _best_iteration_times  # DNN jobs only; keeps abstract paths light

    return tuple(_best_iteration_times(instance.jobs, instance.cluster))


def processing_time(job: Job, tau_star: float | None) -> Number:
    """P*_j of one job given its tau*_j (ignored for abstract jobs)."""
    if job.is_abstract:
        return job.processing_time  # type: ignore[return-value]
    assert tau_star is not None and job.iterations is not None
    return exact_mul(job.iterations, tau_star)


def processing_times(instance: Instance, taus: Sequence[float | None] | None = None) -> tuple[Number, ...]:
    """True best processing times P*_j, in job order.

    ``taus`` (from :func:`best_iteration_times`) may be passed to avoid recomputing them.
    """
    taus = best_iteration_times(instance) if taus is None else taus
    return tuple(processing_time(j, t) for j, t in zip(instance.jobs, taus))


def predicted_processing_times(instance: Instance,
                               taus: Sequence[float | None] | None = None) -> tuple[Number, ...]:
    """Predicted processing times: the job's own prediction where it has one, else the truth.

    Abstract jobs use ``predicted_processing_time``; DNN jobs ``predicted_iterations * tau*``.
    """
    taus = best_iteration_times(instance) if taus is None else taus
    out = []
    for j, t in zip(instance.jobs, taus):
        if j.is_abstract:
            out.append(j.predicted_processing_time if j.predicted_processing_time is not None
                       else j.processing_time)
        else:
            n_hat = j.predicted_iterations if j.predicted_iterations is not None else j.iterations
            out.append(exact_mul(n_hat, t))
    return tuple(out)
