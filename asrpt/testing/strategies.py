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


# ---------------------------------------------------------------------------------------------
# Theory (issue 6): gang instances over 1..64 GPUs with arrival patterns and bounded distortion,
# and small DNN-job instances, for the Theorem 1 certificate and the worst-case search.
# ---------------------------------------------------------------------------------------------

from ..instance import Parallelism  # noqa: E402  (used by dnn_instances only)
from ..loading import check_instance  # noqa: E402  (used by dnn_instances only)

__all__ += ["arrival_times", "prediction_factors", "gang_instances", "dnn_instances"]

_ARRIVAL_PATTERNS = ("bunched", "spread")


@st.composite
def arrival_times(draw, *, n: int, pattern: str | None = None, max_gap: int = 10,
                  exact: bool = False):
    """``n`` non-decreasing arrival times, cumulative sums of gaps (shrinking to all at 0).

    ``pattern="bunched"`` draws gaps of 0 or at most 1 (in exact mode also halves and thirds), so
    many jobs arrive together; ``"spread"`` draws gaps in ``0..max_gap``; None draws either.
    """
    _check(n >= 0, f"n={n} must be >= 0")
    _check(max_gap >= 0, f"max_gap={max_gap} must be >= 0")
    _check(pattern is None or pattern in _ARRIVAL_PATTERNS,
           f"pattern={pattern!r} must be None or one of {_ARRIVAL_PATTERNS}")
    kind = draw(st.sampled_from(_ARRIVAL_PATTERNS)) if pattern is None else pattern
    gaps = _time_values(exact, 1 if kind == "bunched" else max_gap)
    out, t = [], 0
    for _ in range(n):
        t = t + draw(gaps)
        out.append(t)
    return out


@st.composite
def prediction_factors(draw, *, n: int, max_mu: float = 1.0, exact: bool = False):
    """``n`` factors ``N^_j / N_j`` whose distortion ``mu = mu_over * mu_under`` is <= ``max_mu``.

    A common level ``lo`` in ``[1/max_mu, 1]`` is drawn first, then each factor in
    ``[lo, lo * max_mu]``, so that ``mu_over <= max(1, lo * max_mu)`` and ``mu_under <= 1/lo``
    multiply to at most ``max_mu``. Factors shrink towards 1 (exact predictions). Exact mode
    gives Fractions (``lo = 1/k``, factors on a grid of 1/64), else floats.
    """
    _check(n >= 0, f"n={n} must be >= 0")
    _check(max_mu >= 1, f"max_mu={max_mu} must be >= 1")
    if exact:
        lo = Fraction(1, draw(st.integers(1, max(1, int(max_mu)))))
        steps = st.integers(64, max(64, int(64 * max_mu)))
        return [lo * Fraction(draw(steps), 64) for _ in range(n)]
    lo = 1.0 / draw(st.floats(1.0, float(max_mu)))
    return [lo * draw(st.floats(1.0, float(max_mu))) for _ in range(n)]


def _gang_demands(total: int):
    """A gang demand in 1..total, reaching the extremes (1, M/2 + 1, M) often."""
    special = sorted({1, total, min(total, total // 2 + 1)})
    return st.one_of(st.integers(1, total), st.sampled_from(special))


@st.composite
def gang_instances(draw, *, min_jobs: int = 1, max_jobs: int = 8, min_gpus: int = 1,
                   max_gpus: int = 64, max_servers: int = 8, max_job_gpus: int | None = None,
                   max_processing_time: int = 10, arrivals: str | None = None, max_gap: int = 10,
                   max_mu: float = 1.0, exact: bool = True) -> Instance:
    """Abstract-job instances on clusters of ``min_gpus..max_gpus`` GPUs with gangs up to M.

    Parameters
    ----------
    min_jobs, max_jobs : int
        Number of jobs.
    min_gpus, max_gpus : int
        Bounds on the cluster's GPU count M (1..64 by default); servers hold 1..8 GPUs each
        and there are at most ``max_servers`` of them.
    max_job_gpus : int or None
        Cap on g_j (default M); demands reach 1, M/2 + 1 and M often.
    max_processing_time : int
        Processing times in 1..max (exact mode: also halves and thirds).
    arrivals : {"bunched", "spread"} or None
        Arrival pattern (:func:`arrival_times`); None draws either.
    max_gap : int
        Largest gap of the spread pattern.
    max_mu : float >= 1
        Each job gets a ``predicted_processing_time`` with distortion ``mu <= max_mu``
        (:func:`prediction_factors`); with 1 the predictions are exact.
    exact : bool
        Ints and Fractions only (else predictions are floats).
    """
    _check(0 <= min_jobs <= max_jobs, f"need 0 <= min_jobs={min_jobs} <= max_jobs={max_jobs}")
    _check(1 <= min_gpus <= max_gpus, f"need 1 <= min_gpus={min_gpus} <= max_gpus={max_gpus}")
    _check(max_servers >= 1, f"max_servers={max_servers} must be >= 1")
    _check(min_gpus <= 8 * max_servers, f"min_gpus={min_gpus} needs more than max_servers={max_servers} servers of 8")
    _check(max_job_gpus is None or max_job_gpus >= 1, f"max_job_gpus={max_job_gpus} must be >= 1")
    _check(max_processing_time >= 1, f"max_processing_time={max_processing_time} must be >= 1")
    _check(max_mu >= 1, f"max_mu={max_mu} must be >= 1")
    # The cluster first: M, then a server split of M into servers of at most 8 GPUs.
    hi = min(max_gpus, 8 * max_servers)
    total = draw(st.integers(max(min_gpus, 1), hi))
    per = draw(st.integers(-(-total // max_servers), min(8, total)))
    sizes = [per] * (total // per) + ([total % per] if total % per else [])
    cluster = Cluster(tuple(Server(s) for s in sizes))
    cap = total if max_job_gpus is None else min(total, max_job_gpus)
    n = draw(st.integers(min_jobs, max_jobs))
    times = draw(arrival_times(n=n, pattern=arrivals, max_gap=max_gap, exact=exact))
    factors = draw(prediction_factors(n=n, max_mu=max_mu, exact=exact))
    jobs = []
    for i in range(n):
        p = draw(_time_values(exact, max_processing_time, min_value=1))
        kwargs = {}
        if max_mu > 1:
            kwargs["predicted_processing_time"] = p * factors[i] if exact else float(p) * factors[i]
        jobs.append(Job(f"j{i}", times[i], draw(_gang_demands(cap)), processing_time=p, **kwargs))
    return Instance(cluster, tuple(jobs))


_SMALL_MODELS = ("gpt2", "resnet18", "bert-base")


@st.composite
def dnn_instances(draw, *, min_jobs: int = 1, max_jobs: int = 5, max_servers: int = 4,
                  gpus_per_server=(1, 2, 4, 8), gpu_types=("A100", "H200"), models=_SMALL_MODELS,
                  max_iterations: int = 200, arrivals: str | None = None, max_gap: int = 10,
                  max_mu: float = 1.0) -> Instance:
    """Instances of DNN jobs (small zoo models that fit one GPU) on homogeneous clusters.

    The cluster is drawn first (a GPU type, 1..``max_servers`` servers of one size from
    ``gpus_per_server``), then each job's configuration from what fits: ``tp`` among the powers
    of two up to a server's GPUs, ``pp`` in {1, 2, 4} and ``dp`` so that ``dp * pp * tp <= M``.
    Iterations are in ``1..max_iterations`` and ``predicted_iterations = N * factor`` with
    distortion at most ``max_mu`` (floats; exact iterations when ``max_mu == 1``). Arrival times
    follow :func:`arrival_times` in seconds.
    """
    _check(0 <= min_jobs <= max_jobs, f"need 0 <= min_jobs={min_jobs} <= max_jobs={max_jobs}")
    _check(max_servers >= 1, f"max_servers={max_servers} must be >= 1")
    _check(len(gpus_per_server) > 0 and all(isinstance(g, int) and g >= 1 for g in gpus_per_server),
           f"gpus_per_server={gpus_per_server!r} must be a non-empty sequence of positive ints")
    _check(len(gpu_types) > 0, "gpu_types must not be empty")
    _check(len(models) > 0, "models must not be empty")
    _check(max_iterations >= 1, f"max_iterations={max_iterations} must be >= 1")
    _check(max_mu >= 1, f"max_mu={max_mu} must be >= 1")
    gpu_type = draw(st.sampled_from(tuple(gpu_types)))
    per = draw(st.sampled_from(sorted(gpus_per_server)))
    servers = draw(st.integers(1, max_servers))
    cluster = Cluster.homogeneous(servers, per, gpu_type)
    total = servers * per
    n = draw(st.integers(min_jobs, max_jobs))
    times = draw(arrival_times(n=n, pattern=arrivals, max_gap=max_gap))
    factors = draw(prediction_factors(n=n, max_mu=max_mu))
    jobs = []
    for i in range(n):
        tp = draw(st.sampled_from([t for t in (1, 2, 4, 8) if t <= per]))
        pp = draw(st.sampled_from([p for p in (1, 2, 4) if tp * p <= total]))
        dp = draw(st.integers(1, max(1, min(8, total // (tp * pp)))))
        iters = draw(st.integers(1, max_iterations))
        kwargs = {}
        if max_mu > 1:
            kwargs["predicted_iterations"] = iters * factors[i]
        jobs.append(Job(f"j{i}", times[i], dp * pp * tp, model=draw(st.sampled_from(tuple(models))),
                        parallelism=Parallelism(dp, pp, tp), iterations=iters, **kwargs))
    return check_instance(Instance(cluster, tuple(jobs)))  # what the loaders would accept


# ---------------------------------------------------------------------------------------------
# Generator families (issue 8): the families of asrpt.workloads.generators as strategies, for
# users who property-test their own schedulers against asrpt's optima and bounds
# (docs/workflows.md). Each draws a job count and a seed and calls the family's generator, so an
# example is exactly what ``asrpt generate`` writes for that seed; it shrinks towards
# ``min_jobs`` jobs and seed 0, and notes the call that regenerates it.
# ---------------------------------------------------------------------------------------------

__all__ += ["family_instances", "uniform_instances", "heavy_tailed_instances", "bursty_instances",
            "adversarial_instances", "philly_instances", "recurring_instances",
            "dnn_mix_instances"]

_SEEDS = st.integers(0, 2 ** 32 - 1)


def family_instances(family: str, *, min_jobs: int = 1, max_jobs: int = 8, **params):
    """Instances of a generator family (:mod:`asrpt.workloads.generators`) by name.

    Parameters
    ----------
    family : str
        A registered family (``uniform``, ``heavy_tailed``, ``bursty``, ``adversarial``,
        ``philly``, ``recurring``, ``dnn``).
    min_jobs, max_jobs : int
        Bounds on ``n_jobs`` (drawn; shrinks towards ``min_jobs``).
    **params
        The family's other parameters, as values (not strategies); ``n_jobs`` and ``seed`` are
        drawn. Checked at once against the family's constraints.

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> @settings(max_examples=5)
    ... @given(family_instances("bursty", max_jobs=6, cluster="1x4"))
    ... def test_bursts(inst):
    ...     assert inst.metadata["family"] == "bursty" and inst.cluster.total_gpus == 4
    >>> test_bursts()
    """
    from .._validation import validate_parameter_constraints
    from ..errors import AsrptError
    from ..workloads.generators import get_family

    try:
        fam = get_family(family)
    except AsrptError as exc:
        raise InvalidArgument(str(exc)) from None
    lowest = 2 if fam.name == "adversarial" else 1
    _check(lowest <= min_jobs <= max_jobs,
           f"need {lowest} <= min_jobs={min_jobs} <= max_jobs={max_jobs} for family {fam.name!r}")
    _check("n_jobs" not in params and "seed" not in params,
           "n_jobs and seed are drawn: use min_jobs/max_jobs instead of n_jobs, and no seed")
    allowed = set(fam.defaults) - {"n_jobs", "seed"}
    unknown = sorted(set(params) - allowed)
    _check(not unknown, f"family {fam.name!r} has no parameter {unknown[0] if unknown else ''!r}; "
                        f"its parameters: {', '.join(sorted(allowed))}")
    try:
        validate_parameter_constraints(fam.function.parameter_constraints, params,
                                       fam.function.__name__)
        if isinstance(params.get("cluster"), str):
            Cluster.from_spec(params["cluster"])
    except AsrptError as exc:
        raise InvalidArgument(str(exc)) from None
    _check(params.get("pattern") != "search",
           "the 'search' pattern runs hypothesis itself; use a fixed pattern in strategies")

    @st.composite
    def draw_instance(draw):
        from hypothesis import note

        n = draw(st.integers(min_jobs, max_jobs))
        seed = draw(_SEEDS)
        shown = "".join(f", {k}={v!r}" for k, v in sorted(params.items()))
        note(f"regenerate with asrpt.workloads.generators.generate_one({fam.name!r}, "
             f"n_jobs={n}, seed={seed}{shown})")
        return fam.function(n, seed=seed, **params)

    return draw_instance()


def uniform_instances(*, min_jobs: int = 1, max_jobs: int = 8, **params):
    """Instances of the ``uniform`` family (uniform sizes, gaps and demands).

    ``params`` are those of :func:`asrpt.workloads.generators.uniform_instance` (e.g.
    ``cluster="2x4"``, ``max_processing_time=10``, ``mu=4``).
    """
    return family_instances("uniform", min_jobs=min_jobs, max_jobs=max_jobs, **params)


def heavy_tailed_instances(*, min_jobs: int = 1, max_jobs: int = 8, **params):
    """Instances of the ``heavy_tailed`` family (Pareto or log-normal sizes at a load).

    ``params`` are those of :func:`asrpt.workloads.generators.heavy_tailed_instance` (e.g.
    ``distribution="lognormal"``, ``alpha=1.1``, ``integer=True``).
    """
    return family_instances("heavy_tailed", min_jobs=min_jobs, max_jobs=max_jobs, **params)


def bursty_instances(*, min_jobs: int = 1, max_jobs: int = 8, **params):
    """Instances of the ``bursty`` family (batch or Poisson-burst arrivals).

    ``params`` are those of :func:`asrpt.workloads.generators.bursty_instance` (e.g.
    ``mode="poisson"``, ``burst_size=4``).
    """
    return family_instances("bursty", min_jobs=min_jobs, max_jobs=max_jobs, **params)


def adversarial_instances(*, min_jobs: int = 2, max_jobs: int = 6, pattern: str | None = None,
                          **params):
    """Instances of the ``adversarial`` family: the bad patterns of the worst-case search.

    ``pattern`` is ``"blocker"``, ``"gang"`` or ``"mispredict"``, or None to draw one (shrinking
    towards ``"blocker"``); ``params`` are the other parameters of
    :func:`asrpt.workloads.generators.adversarial_instance` (``gpus``, ``mu``, ...).
    """
    if pattern is not None:
        return family_instances("adversarial", min_jobs=min_jobs, max_jobs=max_jobs,
                                pattern=pattern, **params)
    options = [family_instances("adversarial", min_jobs=min_jobs, max_jobs=max_jobs, pattern=p,
                                **params) for p in ("blocker", "gang", "mispredict")]
    return st.one_of(*options)


def philly_instances(*, min_jobs: int = 1, max_jobs: int = 8, **params):
    """Philly-like instances: windows or resamples of the bundled Philly trace.

    ``params`` are those of :func:`asrpt.workloads.generators.philly_instance` (e.g.
    ``cluster="2x8"``, ``mode="sample"``, ``load=0.9``, ``dnn=True``). The first example reads
    the trace (about a second); later ones reuse it.
    """
    return family_instances("philly", min_jobs=min_jobs, max_jobs=max_jobs, **params)


def recurring_instances(*, min_jobs: int = 1, max_jobs: int = 8, **params):
    """Recurring DNN workloads (:func:`asrpt.workloads.generators.recurring_instance`).

    The first example calibrates the generator (under a second); later ones reuse it.
    """
    return family_instances("recurring", min_jobs=min_jobs, max_jobs=max_jobs, **params)


def dnn_mix_instances(*, min_jobs: int = 1, max_jobs: int = 6, **params):
    """DNN jobs mixing zoo models and parallel configurations
    (:func:`asrpt.workloads.generators.dnn_instance`; e.g. ``models=("gpt2", "resnet50")``).

    Unlike :func:`dnn_instances`, whose every choice is drawn by hypothesis, this draws a seed:
    configurations are chosen among those that fit GPU memory, and iterations follow durations.
    """
    return family_instances("dnn", min_jobs=min_jobs, max_jobs=max_jobs, **params)
