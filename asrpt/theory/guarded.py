"""The per-instance certificate of Theorem 2: guarded A-SRPT, in completion and in flow time.

Guarded A-SRPT (the default ``a-srpt``, :mod:`asrpt.policies.asrpt`) runs every job that is not
overdue in any order it likes (predicted remaining GPU-time), but from its deadline
``d_j = a_j + kappa (C~_j - a_j)`` on, a job is overdue and the overdue jobs, by virtual
completion ``C~``, are admitted first within ``floor(share M)`` GPUs (the first always). The
virtual machine is the gang-aware one (:mod:`asrpt.single.gang`), whose ``C~_j >= a_j + P^_j``.

**Theorem 2** (``proofs/theorem2.md``). With static predictions, backfilling, preemption at zero
cost taking effect at once, a placer that places a job whenever enough GPUs are idle, and
placement stretch at most ``beta``:

    C_j <= d_j + beta_j P*_j + beta mu_under rho'_j C~_j    for every job,
    rho'_j = M / max(1, floor(share M) - g_j + 1),

because after ``d_j`` a job that waits has overdue jobs with ``C~_k <= C~_j`` ahead of it holding
at least ``max(1, floor(share M) - g_j + 1)`` GPUs, and their true GPU-time is at most
``beta mu_under M C~_j`` (the virtual machine did their predicted work by ``C~_j`` at rate <= M).
Summing, ``sum C_j <= beta LB1 + (kappa + beta mu_under rho') sum C~_j``.

**Flow time.** Every certificate here also reports ``F = sum_j (C_j - a_j)`` against the flow
lower bound ``max(LB1, LB2) - sum_j a_j`` (both LBs are lower bounds on the optimal
``sum C_j``, and every schedule has the same ``sum a_j``), and the virtual machine's own flow
time ``sum (C~_j - a_j)``; the ratio is what users see (on traces ``sum a_j`` dwarfs the flow
time, so completion-time ratios are all near 1).

This module reads only the run's records and ``policy_data`` (never the simulator's internals).

Examples
--------
>>> from asrpt.instance import load_instance
>>> cert = certify_guarded_instance(load_instance("instances/worked-example.json"))
>>> cert.holds, cert.covered, cert.flow_time, cert.flow_lower_bound, cert.rho_prime
(True, True, 8, 7, 4)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, Mapping

from .._validation import InstanceOf, Interval, validate_params
from ..instance import Instance
from ..sim.records import SimResult
from ..single._arrays import exact_sum
from ..sizes import integral
from .certificate import CheckedInequalities, Inequality, _beta, _check_result, _div, _exact, _lower_bounds, _mul, _norm, _require

__all__ = ["GuardCertificate", "certify_guarded", "run_guarded", "certify_guarded_instance"]

_STATEMENTS = {
    "per_job": "C_j <= d_j + beta_j P*_j + beta mu_under rho'_j C~_j for every job",
    "total": "sum C_j <= sum_j (d_j + beta_j P*_j + beta mu_under rho'_j C~_j)",
    "closed_form": "sum C_j <= beta LB1 + (kappa + beta mu_under rho') sum C~_j",
    "gang_machine": "C~_j >= a_j + P^_j for every job (the virtual machine respects gangs)",
}


@dataclass(frozen=True)
class GuardCertificate(CheckedInequalities):
    """Theorem 2's certificate of one guarded A-SRPT run, with flow-time figures.

    Attributes
    ----------
    holds : bool
        ``per_job`` and ``total`` hold.
    covered : bool
        The run satisfies every assumption of Theorem 2 (``assumptions``): a failure is a bug.
    kappa, share : number
        The guard's parameters; ``rho_prime`` is ``max_j rho'_j``.
    flow_time, flow_lower_bound, flow_ratio_to_lb : number
        ``sum (C_j - a_j)``, ``max(LB1, LB2) - sum a_j`` and their ratio.
    virtual_flow_time : number
        ``sum (C~_j - a_j)`` of the gang machine.
    """

    holds: bool
    covered: bool
    assumptions: Mapping[str, bool]
    exact: bool
    kappa: Any
    share: Any
    total_gpus: int
    n_jobs: int
    total_completion_time: Any
    lower_bound: Any
    flow_time: Any
    flow_lower_bound: Any
    flow_ratio_to_lb: Any
    virtual_total: Any
    virtual_flow_time: Any
    beta: Any
    mu_over: Any
    mu_under: Any
    rho_prime: Any
    overdue_jobs: int
    inequalities: tuple = ()
    per_job_slack: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        """A JSON-ready summary."""
        return {
            "theorem": 2, "holds": self.holds, "covered": self.covered, "assumptions": dict(self.assumptions),
            "exact": self.exact, "kappa": self.kappa, "share": self.share, "n_jobs": self.n_jobs,
            "total_gpus": self.total_gpus, "total_completion_time": self.total_completion_time,
            "lower_bound": self.lower_bound, "flow_time": self.flow_time,
            "flow_lower_bound": self.flow_lower_bound, "flow_ratio_to_lb": self.flow_ratio_to_lb,
            "virtual_total": self.virtual_total, "virtual_flow_time": self.virtual_flow_time,
            "beta": self.beta, "mu_over": self.mu_over, "mu_under": self.mu_under,
            "rho_prime": self.rho_prime, "overdue_jobs": self.overdue_jobs,
            "inequalities": {q.name: q.to_dict() for q in self.inequalities}, "failures": self.failures(),
        }


@validate_params({"instance": [InstanceOf(Instance)], "result": [InstanceOf(SimResult)],
                  "tolerance": [Interval(Real, 0, 1, closed="left")]})
def certify_guarded(instance: Instance, result: SimResult, *, tolerance: float = 1e-9) -> GuardCertificate:
    """Check Theorem 2's certificate on a finished guarded A-SRPT run of ``instance``.

    Raises
    ------
    InvalidParameterError
        A run that is not guarded A-SRPT on the gang machine, or records that do not belong to
        ``instance``.

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> cert = certify_guarded(two_server_instance, simulate(two_server_instance, "a-srpt:adaptive=off"))
    >>> cert.holds, cert.inequality("per_job").slack
    (True, 24)
    """
    run = _check_result(instance, result)
    params = result.options.get("policy_params", {})
    _require(params.get("order") == "guarded" and run.virtual == "gang",
             f"certify_guarded: run {result.policy!r} is not guarded A-SRPT on the gang machine "
             f"(order={params.get('order')!r}, virtual={run.virtual!r})")
    m = instance.cluster.total_gpus
    kappa, share = integral(params["kappa"]), params["share"]
    share_gpus = max(1, math.floor(share * m))
    records = result.records
    adaptive_ran = bool(run.adaptive_updates)
    preds = run.final_predictions()
    c_virtual = run.completion_times

    beta_j = {r.id: _beta(r.beta) for r in records}
    beta = max(beta_j.values(), default=1)
    mu_over = max([1] + [_div(preds[r.id], r.work) for r in records])
    mu_under = max([1] + [_div(r.work, preds[r.id]) for r in records])
    rho_j = {r.id: _div(m, max(1, share_gpus - r.gpus + 1)) for r in records}
    rho = max(rho_j.values(), default=1)

    total = exact_sum(r.completion for r in records)
    arrivals = exact_sum(r.arrival for r in records)
    lb1, lb2 = _lower_bounds(instance, records, "certify_guarded")
    lower = max(lb1, lb2)
    virtual_total = exact_sum(c_virtual[r.id] for r in records)
    numbers = [total, lb1, lb2, virtual_total, beta, mu_over, mu_under, kappa]
    numbers += [x for r in records for x in (r.completion, r.processing_time, preds[r.id], r.work)]
    exact = all(_exact(x) for x in numbers)

    def le(lhs, rhs) -> bool:
        return lhs <= rhs if exact else lhs <= rhs + tolerance * max(1.0, abs(lhs), abs(rhs))

    rows, gang_rows, bounds = [], [], []
    for r in records:
        c = c_virtual[r.id]
        deadline = r.arrival + _mul(kappa, c - r.arrival)
        bound = deadline + _mul(beta_j[r.id], r.processing_time) + _mul(beta, mu_under, rho_j[r.id], c)
        bounds.append(bound)
        rows.append((r.id, r.completion, bound))
        tau = 1 if r.tau_star is None else r.tau_star
        gang_rows.append((r.id, r.arrival + _mul(preds[r.id], tau), c))

    def per_job(name, rows):
        worst = min(rows, key=lambda row: row[2] - row[1])
        return Inequality(name, _STATEMENTS[name], _norm(worst[1]), _norm(worst[2]), _norm(worst[2] - worst[1]),
                          all(le(lhs, rhs) for _, lhs, rhs in rows), worst[0])

    def whole(name, lhs, rhs):
        return Inequality(name, _STATEMENTS[name], _norm(lhs), _norm(rhs), _norm(rhs - lhs), le(lhs, rhs))

    inequalities = (
        per_job("per_job", rows),
        whole("total", total, exact_sum(bounds)),
        whole("closed_form", total, _mul(beta, lb1) + _mul(kappa + _mul(beta, mu_under, rho), virtual_total)),
        per_job("gang_machine", gang_rows),
    )
    placement = result.options.get("placement")
    assumptions = {
        "static_predictions": params.get("adaptive") == "off" and not adaptive_ran,
        "backfill": params.get("backfill") is True,
        "preemption": params.get("preemption") is True,
        "zero_preemption_cost": result.options.get("preemption_cost", 0) == 0,
        "instant_preemption": (result.options.get("preemption_point") == "immediate"
                               or all(r.tau_star is None for r in records)),
        "places_when_gpus_suffice": placement in ("best_fit", "first_fit", "most_free", "spread")
        and all(job.instances is None for job in instance.jobs),
    }
    flow = total - arrivals
    flow_lb = lower - arrivals
    return GuardCertificate(
        holds=inequalities[0].holds and inequalities[1].holds, covered=all(assumptions.values()),
        assumptions=assumptions, exact=exact, kappa=kappa, share=share, total_gpus=m, n_jobs=len(records),
        total_completion_time=_norm(total), lower_bound=_norm(lower), flow_time=_norm(flow),
        flow_lower_bound=_norm(flow_lb),
        flow_ratio_to_lb=_norm(_div(flow, flow_lb)) if flow_lb else (1 if flow == 0 else math.inf),
        virtual_total=_norm(virtual_total), virtual_flow_time=_norm(virtual_total - arrivals), beta=beta,
        mu_over=_norm(mu_over), mu_under=_norm(mu_under), rho_prime=_norm(rho),
        overdue_jobs=len(run.overdue_at or {}), inequalities=inequalities,
        per_job_slack={rid: _norm(b - c) for rid, c, b in rows})


@validate_params({"instance": [InstanceOf(Instance)], "predictor": "no_validation", "kappa": [Real],
                  "share": [Real], "seed": ["seed"], "placement": [None, str]})
def run_guarded(instance: Instance, *, predictor="instance", kappa=16, share=0.5, seed=0,
                placement: str | None = None) -> SimResult:
    """Simulate guarded A-SRPT under Theorem 2's assumptions (static predictions, immediate
    preemption at zero cost).

    Examples
    --------
    >>> run_guarded(two_server_instance).completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """
    from ..policies.asrpt import ASRPT
    from ..sim import simulate

    policy = ASRPT(predictor=predictor, adaptive="off", kappa=kappa, share=share)
    return simulate(instance, policy, placement=placement, seed=seed, preemption_point="immediate")


def certify_guarded_instance(instance: Instance, **options) -> GuardCertificate:
    """Run guarded A-SRPT (:func:`run_guarded`, ``options`` passed on) and certify it.

    Examples
    --------
    >>> certify_guarded_instance(two_server_instance, kappa=1).holds
    True
    """
    return certify_guarded(instance, run_guarded(instance, **options))
