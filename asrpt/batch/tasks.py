"""Batch tasks: what ``asrpt batch --task NAME`` computes on one instance, as a pure function.

This module owns the task registry (:data:`TASKS`), the normalisation of task options (the
second part of a result's resume key), the instance hash (the first part), and the worker-side
step :func:`execute` that turns one instance file's bytes into the task part of a result row.
It assumes nothing about how work is scheduled (see :mod:`asrpt.batch.executors`) or written
(:mod:`asrpt.batch.runner`).

A task is a function ``task(instance, **options) -> figures`` with validated keyword options;
``figures`` is a JSON-ready dict (numbers through :func:`asrpt._json.jsonable`: Fractions become
floats, ints stay ints). Figures never hold wall times or anything else that differs between two
runs of the same instance, so that two runs (or two executors) give identical rows apart from
``wall_time`` and ``worker``.

==========  ====================================================================================
task        figures
==========  ====================================================================================
srpt        virtual single-machine SRPT (:func:`asrpt.single.virtual_schedule`): total completion
            and flow time, makespan
opt         the offline optimum (:func:`asrpt.offline.offline_opt`): lower and upper bound,
            closed (OPT known), proof, gap, LB1/LB2/LB_MBT and the configuration-LP bound
certify     Theorem 1's certificate of A-SRPT (:func:`asrpt.theory.certify_instance`): holds,
            ratio to the lower bound, bound, beta, rho, mu, failures
simulate    one policy in the simulator (:func:`asrpt.sim.simulate`): its summary metrics
compare-opt policies in the simulator against the offline optimum: each one's ratio ALG / OPT,
            exact where OPT is proven, else bracketed
place       every DNN job placed alone on the empty cluster (:func:`asrpt.placement.place`): cut
            bytes, servers used, iteration-time stretch tau / tau*
==========  ====================================================================================

Every task also takes the common option ``exact`` (read the file's numbers as exact rationals,
as ``--exact`` does for the single-instance commands).

Examples
--------
>>> item = WorkItem("x.json", instance_hash(b"{}"), "srpt", normalize_options("srpt"), b"{}")
>>> execute(item)["status"]
'error'
>>> sorted(TASKS)
['certify', 'certify-guarded', 'certify-robust', 'compare-opt', 'opt', 'place', 'simulate', 'srpt']
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from typing import Any, Callable, Mapping

from .._json import jsonable
from .._validation import InstanceOf, Interval, Options, validate_parameter_constraints, validate_params
from ..errors import AsrptError, InvalidParameterError, did_you_mean, unknown_name
from ..registry import Registry
from ..instance import Instance
from ..loading import loads_instance
from ..predict.base import ADAPTIVE_RULES

__all__ = [
    "Task",
    "TASKS",
    "task_names",
    "get_task",
    "normalize_options",
    "options_key",
    "instance_hash",
    "WorkItem",
    "execute",
    "srpt_task",
    "opt_task",
    "certify_task",
    "simulate_task",
    "compare_opt_task",
    "place_task",
]

_INSTANCE = [InstanceOf(Instance)]
_POSITIVE = Interval(Real, 0, None, closed="neither")


def _common(instance: Instance) -> dict:
    return {"n_jobs": instance.n_jobs, "total_gpus": instance.cluster.total_gpus}


@validate_params({"instance": _INSTANCE, "predicted": ["boolean"]})
def srpt_task(instance: Instance, *, predicted: bool = False) -> dict:
    """The virtual single-machine SRPT schedule (``asrpt srpt``).

    Parameters
    ----------
    instance : Instance
        The instance.
    predicted : bool
        Use predicted sizes (what A-SRPT sees online).

    Returns
    -------
    dict
        ``n_jobs``, ``total_gpus``, ``total_completion_time`` (LB2 with true sizes and unit
        weights), ``total_flow_time``, ``makespan`` (Fractions as floats).

    Raises
    ------
    InvalidParameterError
        A bad option.

    Examples
    --------
    >>> srpt_task(two_server_instance)
    {'n_jobs': 3, 'total_gpus': 8, 'total_completion_time': 3.5, 'total_flow_time': 2.5, 'makespan': 1.75}
    """
    from ..single.virtual import virtual_schedule

    s = virtual_schedule(instance, predicted=predicted)
    return jsonable({**_common(instance), "total_completion_time": s.total_completion_time,
                     "total_flow_time": s.total_flow_time, "makespan": s.makespan})


def _slot(value):
    if isinstance(value, str):
        try:
            q = Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            raise InvalidParameterError(
                f"The 'slot' parameter of opt_task must be a positive number such as 1, 0.5 or "
                f"'1/3'. Got {value!r} instead.") from None
        if q <= 0:
            raise InvalidParameterError(
                f"The 'slot' parameter of opt_task must be positive. Got {value!r} instead.")
        return q.numerator if q.denominator == 1 else q
    return value


@validate_params({
    "instance": _INSTANCE,
    "preemptive": ["boolean"],
    "slot": [None, _POSITIVE, str],
    "solver": [Options(str, {"highs", "cbc"})],
    "time_limit": [None, _POSITIVE],
    "gap": [Interval(Real, 0, 1, closed="left")],
    "max_slots": [Interval(Integral, 1, None, closed="left")],
})
def opt_task(instance: Instance, *, preemptive: bool = True, slot=None, solver: str = "highs",
             time_limit: float | None = 60, gap: float = 0.0, max_slots: int = 200) -> dict:
    """The offline optimum, exact where proven and bracketed elsewhere (``asrpt opt``).

    Parameters
    ----------
    instance : Instance
        The instance.
    preemptive : bool
        The preemptive optimum or the non-preemptive one.
    slot : number, str or None
        The ILP's slot length (``"1/3"`` is read exactly); None: automatic.
    solver : {"highs", "cbc"}
        The ILP's backend.
    time_limit : float or None
        Seconds in all (default 60); the bracket stays valid when time runs out.
    gap : float in [0, 1)
        The ILP's relative MIP gap.
    max_slots : int
        Horizon target of the automatic slot.

    Returns
    -------
    dict
        ``lower_bound``, ``upper_bound``, ``closed`` (True when OPT is known), ``status``
        ("closed" or "open"), ``proof``, ``gap``, ``lower_source``, ``upper_source``, ``slot``,
        ``preemptive``, ``bounds`` (``lb1``, ``lb2``, ``lb_mbt``, ``best``) and
        ``configuration_lp``.

    Raises
    ------
    InvalidParameterError
        A bad option.

    Examples
    --------
    >>> f = opt_task(two_server_instance)
    >>> f["lower_bound"], f["upper_bound"], f["closed"], f["status"]
    (8, 8, True, 'closed')
    """
    from ..offline.opt import offline_opt

    r = offline_opt(instance, preemptive=preemptive, slot=_slot(slot), solver=solver,
                    time_limit=time_limit, gap=gap, max_slots=max_slots)
    return jsonable({**_common(instance), "lower_bound": r.lower_bound, "upper_bound": r.upper_bound,
                     "closed": r.closed, "status": r.status, "proof": r.proof, "gap": r.gap,
                     "lower_source": r.lower_source, "upper_source": r.upper_source,
                     "slot": r.slot, "preemptive": r.preemptive, "bounds": r.bounds.to_dict(),
                     "configuration_lp": None if r.configuration is None else r.configuration.value})


_CERT_FIELDS = ("holds", "covered", "not_covered", "exact", "ratio_to_lb", "ratio_bound", "bound",
                "total_completion_time", "lower_bound", "lb1", "lb2", "virtual_total", "beta", "rho",
                "mu", "mu_over", "mu_under")


@validate_params({
    "instance": _INSTANCE,
    "predictor": [str],
    "placement": [None, str],
    "seed": [Interval(Integral, 0, None, closed="left")],
    "adaptive": [Options(str, set(ADAPTIVE_RULES))],
    "backfill": ["boolean"],
    "preemption_cost": [Interval(Real, 0, None, closed="left")],
    "tolerance": [Interval(Real, 0, 1, closed="left")],
    "opt_time_limit": [Interval(Real, 0, None, closed="left")],
    "opt_max_jobs": [Interval(Integral, 0, None, closed="left")],
})
def certify_task(instance: Instance, *, predictor: str = "instance", placement: str | None = None,
                 seed: int = 0, adaptive: str = "off", backfill: bool = True,
                 preemption_cost: float = 0, tolerance: float = 1e-9,
                 opt_time_limit: float = 10, opt_max_jobs: int = 12) -> dict:
    """Run A-SRPT under Theorem 1's assumptions and check its certificate (``asrpt certify``),
    and measure its total against the offline optimum.

    Parameters
    ----------
    instance : Instance
        The instance.
    predictor : str
        Where predictions come from (``"instance"``, ``"oracle"``, ``"noisy:sigma=0.5"``, ...).
    placement : str or None
        Placement method of starting jobs (None: the simulator's default).
    seed : int
        Seed of the run (noisy predictors).
    adaptive : {"off", "doubling", "repredict", "conditional"}
        A-SRPT's adaptive step (off: the theorem's setting).
    backfill : bool
        Backfilling (on: the theorem's setting).
    preemption_cost : number >= 0
        Restart cost in seconds (0: the theorem's setting).
    tolerance : float in [0, 1)
        Relative tolerance of float comparisons.
    opt_time_limit : float >= 0
        Seconds for :func:`asrpt.offline.offline_opt` (default 10; 0 skips it).
    opt_max_jobs : int
        The optimum is computed for instances of at most this many jobs (default 12, where the
        exact search usually finishes; larger ones would spend ``opt_time_limit`` each on a
        bracket).

    Returns
    -------
    dict
        ``holds``, ``covered``, ``not_covered`` (which premise fails, where and when; "" when
        covered), ``exact``, ``ratio_to_lb``, ``ratio_bound``, ``bound``,
        ``total_completion_time``, ``lower_bound``, ``lb1``, ``lb2``, ``virtual_total``, ``beta``,
        ``rho``, ``mu``, ``mu_over``, ``mu_under`` and ``failures`` (the inequalities that fail);
        with the optimum: ``opt_lower``, ``opt_upper``, ``opt_closed`` and the ratio
        ``ALG / OPT`` as ``ratio_to_opt`` when OPT is proven (else None) and as the bracket
        ``ratio_to_opt_low`` .. ``ratio_to_opt_high`` (equal when proven).

    Raises
    ------
    InvalidParameterError
        A bad option.

    Examples
    --------
    >>> f = certify_task(two_server_instance)
    >>> f["holds"], f["ratio_to_lb"], f["failures"], f["opt_closed"], f["ratio_to_opt"]
    (True, 1, [], True, 1)
    """
    from ..theory.certificate import certify_instance

    cost = int(preemption_cost) if float(preemption_cost).is_integer() else preemption_cost
    cert = certify_instance(instance, predictor=predictor, placement=placement, seed=seed,
                            adaptive=adaptive, backfill=backfill, preemption=True,
                            preemption_cost=cost, tolerance=tolerance)
    out = {**_common(instance), **{k: getattr(cert, k) for k in _CERT_FIELDS}}
    out["failures"] = cert.failures()
    if opt_time_limit > 0 and instance.n_jobs <= opt_max_jobs:
        out.update(_opt_figures(instance, cert.total_completion_time, opt_time_limit))
    return jsonable(out)


def _opt_figures(instance: Instance, alg, time_limit) -> dict:
    """``opt_lower``, ``opt_upper``, ``opt_closed`` and ALG / OPT (exact when proven, else None)
    with its bracket; the run's own lower bound is not used (the optimum is recomputed)."""
    from ..offline.opt import offline_opt

    r = offline_opt(instance, time_limit=time_limit)
    low, high = r.ratio(alg)
    return {"opt_lower": r.lower_bound, "opt_upper": r.upper_bound, "opt_closed": r.closed,
            "ratio_to_opt": low if r.closed else None, "ratio_to_opt_low": low,
            "ratio_to_opt_high": high}


@validate_params({
    "instance": _INSTANCE,
    "predictor": [str],
    "kappa": [Interval(Real, 1, None, closed="left")],
    "share": [Interval(Real, 0, 1, closed="right")],
    "seed": [Interval(Integral, 0, None, closed="left")],
    "tolerance": [Interval(Real, 0, 1, closed="left")],
    "virtual": [Options(str, {"envelope", "gang", "fluid"})],
    "epsilon": [None, Interval(Real, 0, 1, closed="left")],
})
def certify_guarded_task(instance: Instance, *, predictor: str = "instance", kappa: float = 16,
                         share: float = 0.5, seed: int = 0, tolerance: float = 1e-9,
                         virtual: str = "envelope", epsilon: float | None = None) -> dict:
    """Run the default guarded A-SRPT under Theorem 2's assumptions and check its certificate
    (``asrpt certify --theorem 2``), with the flow-time figures (``epsilon``: the hysteresis,
    None for the policy's default).

    Returns
    -------
    dict
        ``holds``, ``covered``, ``not_covered``, ``exact``, ``virtual`` (the virtual machine,
        option ``virtual``: ``"gang"`` or ``"envelope"``), ``epsilon`` (the hysteresis the run
        used), ``total_completion_time``,
        ``lower_bound``, ``flow_time``, ``flow_lower_bound``, ``flow_ratio_to_lb``,
        ``virtual_total``, ``rho_prime``, ``ratio_bound`` (Corollary 2's, proven for the
        envelope), ``mu_over``, ``mu_under``, ``overdue_jobs`` and ``failures``.

    Examples
    --------
    >>> f = certify_guarded_task(two_server_instance, kappa=1)
    >>> f["holds"], f["flow_ratio_to_lb"], f["failures"]
    (True, 1, [])
    """
    from ..theory.guarded import certify_guarded_instance

    from ..sizes import integral

    cert = certify_guarded_instance(instance, predictor=predictor, kappa=integral(kappa), share=share, seed=seed,
                                    virtual=virtual, epsilon=epsilon)
    fields = ("holds", "covered", "not_covered", "exact", "virtual", "epsilon", "total_completion_time", "lower_bound",
              "flow_time", "flow_lower_bound", "flow_ratio_to_lb", "virtual_total", "rho_prime", "ratio_bound",
              "mu_over", "mu_under", "overdue_jobs")
    out = {**_common(instance), **{k: getattr(cert, k) for k in fields}}
    out["failures"] = cert.failures()
    return jsonable(out)


@validate_params({
    "instance": _INSTANCE,
    "lam": [Interval(Real, 0, 1, closed="neither")],
    "predictor": [str],
    "kappa": [Interval(Real, 1, None, closed="left")],
    "share": [Interval(Real, 0, 1, closed="right")],
    "seed": [Interval(Integral, 0, None, closed="left")],
    "tolerance": [Interval(Real, 0, 1, closed="left")],
    "virtual": [Options(str, {"envelope", "gang", "fluid"})],
})
def certify_robust_task(instance: Instance, *, lam: float = 0.5, predictor: str = "instance", kappa: float = 16,
                        share: float = 0.5, seed: int = 0, tolerance: float = 1e-9, virtual: str = "envelope") -> dict:
    """Build Theorem 3's time-shared combination of guarded A-SRPT (share ``lam``) and water-filling
    and check its certificate (``asrpt certify --theorem 3``), with the flow-time figures.

    Returns
    -------
    dict
        ``holds``, ``covered``, ``exact``, ``lam``, ``total_completion_time``, ``lower_bound``,
        ``ratio_to_lb``, ``flow_time``, ``flow_lower_bound``, ``flow_ratio_to_lb``,
        ``consistent_ratio``, ``robust_ratio``, ``robust_ratio_bound``,
        ``consistent_ratio_bound`` (with the envelope machine, option ``virtual``), ``assumed``
        (premises not checkable on a run) and ``failures``.

    Examples
    --------
    >>> f = certify_robust_task(two_server_instance)
    >>> f["holds"], f["robust_ratio_bound"], f["failures"]
    (True, 18, [])
    """
    from ..sizes import integral
    from ..theory.robust import certify_robust_instance

    cert = certify_robust_instance(instance, lam=lam, predictor=predictor, kappa=integral(kappa), share=share,
                                   seed=seed, virtual=virtual)
    fields = ("holds", "covered", "exact", "lam", "total_completion_time", "lower_bound", "ratio_to_lb",
              "flow_time", "flow_lower_bound", "flow_ratio_to_lb", "consistent_ratio", "robust_ratio",
              "robust_ratio_bound", "consistent_ratio_bound", "assumed")
    out = {**_common(instance), **{k: getattr(cert, k) for k in fields}}
    out["failures"] = cert.failures()
    return jsonable(out)


@validate_params({
    "instance": _INSTANCE,
    "policy": [str],
    "placement": [None, str],
    "predictor": [None, str],
    "preemption_cost": [Interval(Real, 0, None, closed="left")],
    "seed": [Interval(Integral, 0, None, closed="left")],
})
def simulate_task(instance: Instance, *, policy: str = "a-srpt", placement: str | None = None,
                  predictor: str | None = None, preemption_cost: float = 0, seed: int = 0) -> dict:
    """Simulate one policy (``asrpt simulate``) and return its summary metrics.

    Parameters
    ----------
    instance : Instance
        The instance.
    policy : str
        A policy spec (``"a-srpt"``, ``"fifo"``, ``"tiresias:thresholds=[3250]"``, ...).
    placement : str or None
        Placement of starting jobs (None: the policy's own, else best_fit).
    predictor : str or None
        Predictor for a policy that takes one (None: the policy's default).
    preemption_cost : number >= 0
        Restart cost in seconds.
    seed : int
        Seed of the run.

    Returns
    -------
    dict
        ``policy``, ``predictor`` (the one the run used: the option, else the policy's own
        default; "none" for a policy that takes none) and the run's summary (mean/median/p95/p99
        JCT, makespan, utilisation, preemptions, ...) without its wall time.

    Raises
    ------
    InvalidParameterError
        A bad option or an unknown policy.

    Examples
    --------
    >>> f = simulate_task(two_server_instance, policy="fifo")
    >>> f["policy"], f["predictor"], f["makespan"]
    ('fifo', 'none', 4)
    >>> simulate_task(two_server_instance, policy="srsf")["predictor"]    # SRSF's default: the truth
    'oracle'
    """
    from ..policies import predictor_of
    from ..sim import simulate

    pol = _policy(policy, predictor)
    res = simulate(instance, pol, placement=placement, preemption_cost=preemption_cost, seed=seed, label=policy)
    summary = {k: v for k, v in res.summary.items() if k != "wall_time"}
    return jsonable({**_common(instance), "policy": policy, "predictor": predictor_of(pol.get_params()), **summary})


def _exact_total(records):
    """``sum w_j C_j`` of a run in exact arithmetic (a float is the binary number it holds): no
    rounding of the sum on top of the run's own, so the ratio to an exact optimum is not pushed
    below 1 by the summation."""
    total = sum((Fraction(r.weight) * Fraction(r.completion) for r in records), Fraction(0))
    return total.numerator if total.denominator == 1 else total


def _policy(spec: str, predictor: str | None):
    """The policy of ``spec``, with ``predictor`` where it takes one and the spec sets none."""
    from ..policies import with_predictor

    return with_predictor(spec, predictor)[0]


@validate_params({
    "instance": _INSTANCE,
    "policies": [str],
    "placement": [None, str],
    "predictor": [None, str],
    "preemption_cost": [Interval(Real, 0, None, closed="left")],
    "seed": [Interval(Integral, 0, None, closed="left")],
    "opt_time_limit": [_POSITIVE],
})
def compare_opt_task(instance: Instance, *, policies: str = "a-srpt", placement: str | None = None,
                     predictor: str | None = None, preemption_cost: float = 0, seed: int = 0,
                     opt_time_limit: float = 10) -> dict:
    """Simulate each policy and measure its total against the offline optimum (``asrpt opt``):
    the toolkit's main question, "how far from optimal is my policy on these instances".

    ``OPT`` is :func:`asrpt.offline.offline_opt`'s ``min sum_j w_j C_j`` of the jobs on the
    cluster's GPUs as one pool, at their best processing times, with free preemption: every
    schedule the simulator can make (gangs inside servers, slower placements, preemption costs
    and iteration boundaries) is one of that problem's schedules or costs more, so ``ALG / OPT``
    is at least the policy's ratio to the cluster's own optimum, never flattering. Where OPT is
    proven the ratio is exact (``ratio_to_opt``); elsewhere only its bracket is known,
    ``ratio_to_opt_low = ALG / upper <= ALG / OPT <= ALG / lower = ratio_to_opt_high``. ``ALG``
    is summed exactly from the run's completion times; on float data those carry the
    simulator's rounding, so a ratio can fall below 1 by a few units in the last place (exact
    instances, ``-o exact=true``, give exact ratios).

    Parameters
    ----------
    instance : Instance
        The instance.
    policies : str
        Comma-separated policy specs, registered names or your own class
        (``"a-srpt,fifo,path/to/my_policy.py:MyPolicy"``); each is simulated once and the
        optimum is computed once for all of them.
    placement, predictor, preemption_cost, seed
        As for the ``simulate`` task (``predictor``: for every policy that takes one and whose
        spec sets none).
    opt_time_limit : float > 0
        Seconds for :func:`asrpt.offline.offline_opt` (default 10): small instances are proven
        within it, larger ones get a bracket.

    Returns
    -------
    dict
        ``opt_lower``, ``opt_upper``, ``opt_closed``, ``opt_proof`` (``"exact"``, ``"mip"`` or
        None) and ``results``: one dict per policy, in the order given, with ``policy``,
        ``predictor`` (the one its run used), ``total_weighted_completion_time``, ``mean_jct``,
        ``ratio_to_opt`` (None unless OPT is proven), ``ratio_to_opt_low`` and
        ``ratio_to_opt_high``. :func:`asrpt.batch.ratio_rows`
        flattens a results file into one record per instance and policy (a pandas DataFrame's
        rows); ``asrpt plot ratio`` draws them.

    Raises
    ------
    InvalidParameterError
        A bad option, an unknown policy, or a policy named twice.

    Examples
    --------
    >>> f = compare_opt_task(two_server_instance, policies="a-srpt,fifo")
    >>> f["opt_closed"], [(r["policy"], r["ratio_to_opt"]) for r in f["results"]]
    (True, [('a-srpt', 1), ('fifo', 1)])
    """
    from ..offline.opt import offline_opt
    from ..policies import predictor_of
    from ..registry import split_specs
    from ..sim import simulate

    specs = split_specs(policies)
    if not specs:
        raise InvalidParameterError("compare-opt: option policies names no policy")
    twice = sorted({s for s in specs if specs.count(s) > 1})
    if twice:
        raise InvalidParameterError(f"compare-opt: option policies names {', '.join(map(repr, twice))} twice")
    built = [_policy(spec, predictor) for spec in specs]       # (a bad spec fails before any run)
    runs = [simulate(instance, pol, placement=placement, preemption_cost=preemption_cost, seed=seed, label=spec)
            for spec, pol in zip(specs, built)]                  # (a bad placement fails before the optimum)
    opt = offline_opt(instance, time_limit=opt_time_limit)
    results = []
    for spec, pol, res in zip(specs, built, runs):
        total = _exact_total(res.records)
        low, high = opt.ratio(total)
        results.append({"policy": spec, "predictor": predictor_of(pol.get_params()),
                        "total_weighted_completion_time": total, "mean_jct": res.summary["mean_jct"],
                        "ratio_to_opt": low if opt.closed else None, "ratio_to_opt_low": low,
                        "ratio_to_opt_high": high})
    return jsonable({**_common(instance), "opt_lower": opt.lower_bound, "opt_upper": opt.upper_bound,
                     "opt_closed": opt.closed, "opt_proof": opt.proof if opt.closed else None, "results": results})


@validate_params({
    "instance": _INSTANCE,
    "method": [str],
    "objective": [Options(str, {"cut", "tau"})],
    "solver": [Options(str, {"highs", "cbc"})],
    "solver_time_limit": [None, _POSITIVE],
    "gap": [Interval(Real, 0, 1, closed="left")],
    "seed": [Interval(Integral, 0, None, closed="left")],
})
def place_task(instance: Instance, *, method: str = "ilp", objective: str = "cut",
               solver: str = "highs", solver_time_limit: float | None = None, gap: float = 0.0,
               seed: int = 0) -> dict:
    """Place every DNN job of the instance alone on its empty cluster (``asrpt place``).

    Parameters
    ----------
    instance : Instance
        An instance with DNN jobs (abstract jobs are counted and skipped).
    method : str
        Placement method (:func:`asrpt.placement.available_methods`).
    objective : {"cut", "tau"}
        Minimise the bytes crossing servers, or the iteration time.
    solver : {"highs", "cbc"}
        MILP backend of exact methods.
    solver_time_limit : float or None
        Seconds per placement for the solver.
    gap : float in [0, 1)
        Relative MIP gap.
    seed : int
        Seed of randomised methods.

    Returns
    -------
    dict
        ``placed`` and ``abstract`` (job counts), ``cut_bytes`` (sum over jobs, per iteration),
        ``servers_used_mean``, ``stretch_mean`` and ``stretch_max`` (``tau / tau*``) and
        ``statuses`` (count per solver status).

    Raises
    ------
    InvalidParameterError
        A bad option, or no DNN job in the instance.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Instance, Job
    >>> inst = Instance(Cluster.homogeneous(2, 4, "A100"),
    ...                 (Job("a", 0, 4, model="gpt2", iterations=10),))
    >>> f = place_task(inst, method="best_fit")
    >>> f["placed"], f["servers_used_mean"], f["stretch_max"] >= 1
    (1, 1.0, True)
    """
    from ..dnn.parallel import worker_graph
    from ..dnn.perf import best_gpu_type, best_iteration_time
    from ..placement import available_methods, place

    if method not in available_methods():
        raise unknown_name("placement method", method, available_methods())
    dnn = [j for j in instance.jobs if not j.is_abstract]
    if not dnn:
        raise InvalidParameterError("place: the instance has no DNN job (abstract jobs have no "
                                    "worker graph)")
    cluster = instance.cluster
    free = list(cluster.server_gpus)
    cut, servers, stretches, statuses = 0.0, [], [], Counter()
    for job in dnn:
        graph = worker_graph(job, best_gpu_type(job, cluster))
        p = place(graph, free, method=method, objective=objective, solver=solver,
                  time_limit=solver_time_limit, gap=gap, cluster=cluster, job=job, seed=seed)
        cut += float(p.cut_bytes)
        servers.append(p.servers_used)
        if p.tau is not None:
            stretches.append(float(p.tau) / float(best_iteration_time(job, cluster)))
        statuses[p.status] += 1
    return jsonable({
        **_common(instance), "placed": len(dnn), "abstract": instance.n_jobs - len(dnn),
        "cut_bytes": cut, "servers_used_mean": sum(servers) / len(servers),
        "stretch_mean": sum(stretches) / len(stretches) if stretches else None,
        "stretch_max": max(stretches) if stretches else None,
        "statuses": dict(sorted(statuses.items())),
    })


# ---------------------------------------------------------------------------------------------
# The registry and options
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Task:
    """A registered batch task.

    Attributes
    ----------
    name : str
        ``--task NAME``.
    function : callable
        ``function(instance, **options) -> figures``.
    summary : str
        One line for ``asrpt batch --list-tasks``.

    Examples
    --------
    >>> get_task("certify").defaults["predictor"]
    'instance'
    """

    name: str
    function: Callable[..., dict]
    summary: str

    @property
    def defaults(self) -> dict:
        """Every option with its default (``exact`` included)."""
        import inspect

        out = {k: p.default for k, p in inspect.signature(self.function).parameters.items()
               if k != "instance"}
        return {**out, "exact": False}


#: Batch tasks by name: ``TASKS[name]`` is the :class:`Task` (an :class:`asrpt.registry.Registry`).
TASKS = Registry("task", item=lambda e: e.target)
for _task in (
    Task("srpt", srpt_task, "virtual single-machine SRPT: total completion and flow time"),
    Task("opt", opt_task, "the offline optimum: exact where proven, a bracket elsewhere"),
    Task("certify", certify_task, "A-SRPT under Theorem 1's assumptions and its certificate"),
    Task("certify-guarded", certify_guarded_task,
         "the default guarded A-SRPT under Theorem 2's assumptions, its certificate, flow time"),
    Task("certify-robust", certify_robust_task,
         "Theorem 3: guarded A-SRPT time-shared with water-filling, its certificate, flow time"),
    Task("simulate", simulate_task, "one policy in the simulator: summary metrics"),
    Task("compare-opt", compare_opt_task, "policies against the offline optimum: each one's ratio ALG / OPT"),
    Task("place", place_task, "place each DNN job alone: cut bytes, stretch tau/tau*"),
):
    TASKS.register(_task.name, _task, description=_task.summary)
del _task


@validate_params({})
def task_names() -> tuple[str, ...]:
    """The registered task names, sorted (:meth:`asrpt.registry.Registry.names`).

    >>> task_names()
    ('certify', 'certify-guarded', 'certify-robust', 'compare-opt', 'opt', 'place', 'simulate', 'srpt')
    """
    return TASKS.names()


@validate_params({"name": [str]})
def get_task(name: str) -> Task:
    """The :class:`Task` called ``name``; an unknown name raises InvalidParameterError with a
    did-you-mean and the known names.

    >>> get_task("certfy")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: unknown task 'certfy' (did you mean 'certify'?); known: certify, certify-guarded, certify-robust, compare-opt, opt, place, simulate, srpt
    """
    return TASKS.get_item(name)


_JSON_SCALARS = (str, int, float, bool, type(None))


@validate_params({"task": [str], "options": [None, dict]})
def normalize_options(task: str, options: Mapping[str, Any] | None = None) -> dict:
    """A task's options with every default filled in, validated, keys sorted (JSON-ready).

    Parameters
    ----------
    task : str
        A registered task.
    options : dict or None
        Options given (JSON scalars: str, int, float, bool or None).

    Returns
    -------
    dict
        The full option set; two equal results mean the same computation.

    Raises
    ------
    InvalidParameterError
        Unknown task or option (with a did-you-mean), or a value outside the option's
        constraints.

    Examples
    --------
    >>> normalize_options("srpt")
    {'exact': False, 'predicted': False}
    >>> normalize_options("certify", {"seeed": 1})
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: task 'certify' has no option 'seeed' (did you mean 'seed'?); its options: adaptive, backfill, exact, opt_max_jobs, opt_time_limit, placement, predictor, preemption_cost, seed, tolerance
    """
    t = get_task(task)
    defaults = t.defaults
    given = dict(options or {})
    for key, value in given.items():
        if key not in defaults:
            raise InvalidParameterError(f"task {task!r} has no option {key!r}"
                                        f"{did_you_mean(key, defaults)}; its options: "
                                        f"{', '.join(sorted(defaults))}")
        if not isinstance(value, _JSON_SCALARS) or (isinstance(value, float) and value != value):
            raise InvalidParameterError(f"option {key!r} of task {task!r} must be a JSON scalar "
                                        f"(str, number, bool or null). Got {value!r} instead.")
    full = {**defaults, **given}
    constraints = dict(t.function.parameter_constraints)
    constraints.pop("instance")
    constraints["exact"] = ["boolean"]
    validate_parameter_constraints(constraints, full, f"{task} (task option)")
    if task == "opt":
        _slot(full["slot"])
    return {k: full[k] for k in sorted(full)}


@validate_params({"options": [dict]})
def options_key(options: Mapping[str, Any]) -> str:
    """The canonical JSON text of normalised options (part of the resume key).

    Parameters
    ----------
    options : dict
        Normalised options (:func:`normalize_options`).

    Returns
    -------
    str

    Examples
    --------
    >>> options_key({"b": 1, "a": None})
    '{"a":null,"b":1}'
    """
    return json.dumps(options, sort_keys=True, separators=(",", ":"), allow_nan=False)


@validate_params({"data": [bytes]})
def instance_hash(data: bytes) -> str:
    """``"sha256:<hex>"`` of an instance file's bytes (part of the resume key).

    Files written by asrpt (:func:`asrpt.instance.save_instance`, ``asrpt generate``) are
    canonical, so equal instances have equal hashes.

    Parameters
    ----------
    data : bytes
        The file's content.

    Returns
    -------
    str

    Examples
    --------
    >>> instance_hash(b"{}")[:15]
    'sha256:44136fa3'
    """
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class WorkItem:
    """One instance to solve: where it came from, its key, and its bytes.

    Attributes
    ----------
    path : str
        The instance file, as matched.
    hash : str
        :func:`instance_hash` of ``data``.
    task : str
        The task.
    options : dict
        Normalised options.
    data : bytes
        The file's content (sent to the worker, which may be on another machine).

    Examples
    --------
    >>> WorkItem("a.json", "sha256:0", "srpt", {}, b"").key
    ('sha256:0', 'srpt', '{}')
    """

    path: str
    hash: str
    task: str
    options: dict
    data: bytes

    @property
    def key(self) -> tuple[str, str, str]:
        """The resume key ``(hash, task, options_key)``."""
        return (self.hash, self.task, options_key(self.options))


def _one_line(text: str, limit: int = 500) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


@validate_params({"item": [WorkItem]})
def execute(item: WorkItem) -> dict:
    """Run one work item in the worker: load the instance, run the task, catch its error.

    Parameters
    ----------
    item : WorkItem
        The instance and what to do with it.

    Returns
    -------
    dict
        ``status`` ("ok" or "error"), ``error`` (one line, or None), ``figures`` (the task's,
        or None), ``wall_time`` (seconds) and ``worker`` (``"pid:N"``). Timeouts are decided by
        the executor around this call.

    Raises
    ------
    InvalidParameterError
        ``item`` is not a WorkItem (errors of the task itself are returned, not raised).

    Examples
    --------
    >>> from asrpt.instance import dumps_instance
    >>> data = dumps_instance(two_server_instance).encode()
    >>> r = execute(WorkItem("t.json", instance_hash(data), "srpt", normalize_options("srpt"), data))
    >>> r["status"], r["figures"]["total_completion_time"]
    ('ok', 3.5)
    """
    t0 = time.perf_counter()
    options = dict(item.options)
    exact = bool(options.pop("exact", False))
    try:
        text = item.data.decode("utf-8")
        instance = loads_instance(text, source=item.path, exact=exact)
        figures = TASKS[item.task].function(instance, **options)
        status, error = "ok", None
    except AsrptError as exc:
        figures, status, error = None, "error", _one_line(f"{type(exc).__name__}: {exc}")
    except UnicodeDecodeError as exc:
        figures, status, error = None, "error", _one_line(f"not UTF-8 text: {exc}")
    except Exception as exc:  # a bug in a task: recorded, the batch goes on
        figures, status, error = None, "error", _one_line(f"internal error: {type(exc).__name__}: {exc}")
    return {"status": status, "error": error, "figures": figures,
            "wall_time": time.perf_counter() - t0, "worker": f"pid:{os.getpid()}"}
