"""Hypothesis strategies that generate valid asrpt instances.

For our own tests and for users who property-test their scheduling algorithms against asrpt's
optima and bounds. Strategies follow hypothesis's house style: keyword-only arguments with
``min_*``/``max_*`` bounds, arguments validated at once (an impossible combination raises
``InvalidArgument`` naming the arguments), and data drawn so that it shrinks well: the cluster is
drawn first, then each job's demand from a range that always fits; release times are cumulative
sums of non-negative gaps, so failures shrink towards simultaneous arrivals, one job, one server.

Examples
--------
>>> from hypothesis import given
>>> @given(instances(max_jobs=3))
... def test_demands_fit(inst):
...     assert all(j.gpus <= inst.cluster.total_gpus for j in inst.jobs)
>>> test_demands_fit()
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ..instance import Cluster, Instance, Job, Server

__all__ = ["clusters", "instances", "single_machine_instances"]


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise InvalidArgument(message)


@st.composite
def clusters(draw, *, min_servers: int = 1, max_servers: int = 4, min_gpus_per_server: int = 1,
             max_gpus_per_server: int = 8, homogeneous: bool | None = None) -> Cluster:
    """Clusters of ``min_servers..max_servers`` servers with ``min..max_gpus_per_server`` GPUs each.

    ``homogeneous=True`` gives identical servers, ``False`` allows different sizes, ``None``
    draws either.
    """
    _check(1 <= min_servers <= max_servers, f"need 1 <= min_servers={min_servers} <= max_servers={max_servers}")
    _check(1 <= min_gpus_per_server <= max_gpus_per_server,
           f"need 1 <= min_gpus_per_server={min_gpus_per_server} <= max_gpus_per_server={max_gpus_per_server}")
    n = draw(st.integers(min_servers, max_servers))
    same = draw(st.booleans()) if homogeneous is None else homogeneous
    sizes = st.integers(min_gpus_per_server, max_gpus_per_server)
    if same:
        g = draw(sizes)
        return Cluster(tuple(Server(g) for _ in range(n)))
    return Cluster(tuple(Server(draw(sizes)) for _ in range(n)))


def _time_values(exact: bool, max_value: int, min_value: int = 0):
    """Integers in [min_value, max_value] (shrinking towards min_value), and in exact mode also
    halves and thirds in the same range."""
    ints = st.integers(min_value, max_value)
    if not exact:
        return ints
    return st.one_of(ints, st.builds(lambda a, d: Fraction(a, d),
                                     st.integers(max(min_value, 0) * 3 or 1, 2 * max_value),
                                     st.sampled_from([2, 3])))


@st.composite
def instances(draw, *, min_jobs: int = 1, max_jobs: int = 6, cluster=None, min_servers: int = 1,
              max_servers: int = 3, max_gpus_per_server: int = 8, max_gpus: int | None = None,
              max_processing_time: int = 10, max_gap: int = 5, weighted: bool = False,
              predictions: bool = False, max_distortion: float = 4.0, exact: bool = False) -> Instance:
    """Valid instances of abstract jobs.

    Parameters
    ----------
    min_jobs, max_jobs : int
        Number of jobs.
    cluster : strategy of Cluster or None
        Where to draw the cluster from (default: :func:`clusters` within the server bounds).
    max_gpus : int or None
        Cap on a job's GPU demand (default: the cluster's GPU count).
    max_processing_time, max_gap : int
        Processing times are drawn from 1..max_processing_time and arrival gaps from 0..max_gap.
    weighted : bool
        Draw weights in 1..5 (else every weight is 1).
    predictions : bool
        Give each job a ``predicted_processing_time`` within a factor ``max_distortion`` of the truth.
    exact : bool
        Use Fractions (halves, thirds) as well as integers for times.
    """
    _check(0 <= min_jobs <= max_jobs, f"need 0 <= min_jobs={min_jobs} <= max_jobs={max_jobs}")
    _check(max_processing_time >= 1, f"max_processing_time={max_processing_time} must be >= 1")
    _check(max_gap >= 0, f"max_gap={max_gap} must be >= 0")
    _check(max_distortion >= 1, f"max_distortion={max_distortion} must be >= 1")
    _check(max_gpus is None or max_gpus >= 1, f"max_gpus={max_gpus} must be >= 1")
    c = draw(cluster if cluster is not None else clusters(min_servers=min_servers, max_servers=max_servers,
                                                         max_gpus_per_server=max_gpus_per_server))
    cap = c.total_gpus if max_gpus is None else min(max_gpus, c.total_gpus)
    n = draw(st.integers(min_jobs, max_jobs))
    jobs = []
    t = 0
    for i in range(n):
        t = t + draw(_time_values(exact, max_gap))
        p = draw(_time_values(exact, max_processing_time, min_value=1))
        kwargs = {}
        if weighted:
            kwargs["weight"] = draw(st.integers(1, 5))
        if predictions:
            factor = draw(st.floats(1.0 / max_distortion, max_distortion))
            kwargs["predicted_processing_time"] = (Fraction(factor).limit_denominator(64) * p
                                                   if exact else float(p) * factor)
        jobs.append(Job(f"j{i}", t, draw(st.integers(1, cap)), processing_time=p, **kwargs))
    return Instance(c, tuple(jobs))


def single_machine_instances(*, min_jobs: int = 1, max_jobs: int = 6, max_processing_time: int = 10,
                             max_gap: int = 5, weighted: bool = False, exact: bool = False):
    """Instances on one server with one GPU (every job needs it): the classical 1|r_j,pmtn| model."""
    return instances(min_jobs=min_jobs, max_jobs=max_jobs, cluster=st.just(Cluster((Server(1),))),
                     max_processing_time=max_processing_time, max_gap=max_gap, weighted=weighted,
                     exact=exact)


# ---------------------------------------------------------------------------------------------
# Plain arrays for the single-machine rules (asrpt.single) and the brute-force oracles.
# ---------------------------------------------------------------------------------------------

__all__ += ["job_arrays", "weighted_job_arrays"]


@st.composite
def job_arrays(draw, *, min_jobs: int = 0, max_jobs: int = 8, max_size: int = 10, max_gap: int = 5,
               allow_zero: bool = False, exact: bool = False, same_release: bool = False):
    """``(releases, sizes)`` lists for functions over plain arrays (``srpt_schedule`` and friends).

    Releases are cumulative sums of gaps in ``0..max_gap`` (so ties are common and failures shrink
    towards simultaneous arrivals), then assigned to job indices in a drawn order, so index order
    and release order differ. Sizes are in ``1..max_size`` (``0..max_size`` with
    ``allow_zero``); ``exact=True`` also draws halves and thirds as Fractions.
    ``same_release=True`` releases every job at 0.
    """
    _check(0 <= min_jobs <= max_jobs, f"need 0 <= min_jobs={min_jobs} <= max_jobs={max_jobs}")
    _check(max_size >= 1, f"max_size={max_size} must be >= 1")
    _check(max_gap >= 0, f"max_gap={max_gap} must be >= 0")
    n = draw(st.integers(min_jobs, max_jobs))
    releases, t = [], 0
    for _ in range(n):
        if not same_release:
            t = t + draw(_time_values(exact, max_gap))
        releases.append(t)
    perm = draw(st.permutations(range(n))) if n > 1 else list(range(n))
    releases = [releases[i] for i in perm]
    sizes = [draw(_time_values(exact, max_size, min_value=0 if allow_zero else 1)) for _ in range(n)]
    return releases, sizes


@st.composite
def weighted_job_arrays(draw, *, min_jobs: int = 0, max_jobs: int = 7, max_size: int = 10,
                        max_weight: int = 5, max_gap: int = 5, exact: bool = False,
                        same_release: bool = False):
    """``(releases, sizes, weights)``: :func:`job_arrays` plus integer weights in ``1..max_weight``."""
    _check(max_weight >= 1, f"max_weight={max_weight} must be >= 1")
    releases, sizes = draw(job_arrays(min_jobs=min_jobs, max_jobs=max_jobs, max_size=max_size,
                                      max_gap=max_gap, exact=exact, same_release=same_release))
    weights = [draw(st.integers(1, max_weight)) for _ in sizes]
    return releases, sizes, weights
