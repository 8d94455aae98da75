"""The per-instance certificate of Theorem 2: guarded A-SRPT, in completion and in flow time.

Guarded A-SRPT (the default ``a-srpt``, :mod:`asrpt.policies.asrpt`) runs every job that is not
overdue in any order it likes (predicted remaining GPU-time), but from its deadline
``d_j = a_j + kappa (C~_j - a_j)`` on, a job is overdue and the overdue jobs, by virtual
completion ``C~``, are admitted first-fit with skipping within ``floor(share M)`` GPUs (the first
always). The virtual machine is the envelope (default, :mod:`asrpt.single.envelope`), the
gang-aware one (:mod:`asrpt.single.gang`) or the fluid one; the proof needs only (V2): the jobs
finished virtually by ``C~_j`` hold at most ``M C~_j`` of predicted GPU-time.

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

**Corollary 2.** With the envelope machine ``sum C~_j <= mu_over (LB1 + LB2)`` (Lemma 7), with
the fluid one ``<= mu_over LB2`` (Lemma 2), so ``sum C_j <= (beta + c mu_over (kappa + beta
mu_under rho')) max(LB1, LB2)`` with ``c = 2`` or 1; the gang machine has no such bound
(Counterexample 3).

**What is checked, not trusted** (:mod:`asrpt.theory.audit`): the records against the instance,
``C~`` recomputed by the run's machine, the deadlines and the run's record of overdue jobs, (V2),
and at every decision the running set against the greedy selection with backfilling in the
guarded order rebuilt from the instance, the predictions and the work done; a broken premise is
reported as ``not covered: (A2) fails at t = ... for ...``. This module reads only the run's
records and ``policy_data`` (never the simulator's internals).

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

from .._validation import InstanceOf, Interval, Options, validate_params
from ..instance import Instance, id_key
from ..engine.records import SimResult
from ..single._arrays import exact_sum
from ..sizes import integral
from .audit import Premise, premise_sweep
from .certificate import (CheckedInequalities, CheckedPremises, Inequality, _audit, _div, _exact, _late_preemption,
                          _lower_bounds, _mul, _norm, _options_premises, _require)

__all__ = ["GuardCertificate", "certify_guarded", "run_guarded", "certify_guarded_instance"]

_STATEMENTS = {
    "per_job": "C_j <= d_j + beta_j P*_j + beta mu_under rho'_j C~_j for every job",
    "total": "sum C_j <= sum_j (d_j + beta_j P*_j + beta mu_under rho'_j C~_j)",
    "closed_form": "sum C_j <= beta LB1 + (kappa + beta mu_under rho') sum C~_j",
    "virtual_area": "(V2) sum of g_k P^_k over k ahead of j in (C~, id) order <= M C~_j for every job",
    "virtual_length": "(V1) C~_j >= a_j + P^_j for every job (not needed by the bound; keeps deadlines late "
                      "enough to mean something; fails for the fluid machine)",
    "virtual_cost": "sum C~_j <= SRPT_1(a, g P^ / M) (fluid, Lemma 2) or <= sum_j (a_j + P^_j) + SRPT_1(a, g P^ / M) "
                    "(envelope, Lemma 7); reported only for the gang machine",
    "corollary": "sum C_j <= (beta + c mu_over (kappa + beta mu_under rho')) max(LB1, LB2), c = 1 (fluid), "
                 "2 (envelope) (Corollary 2; not proven for the gang machine)",
}


@dataclass(frozen=True)
class GuardCertificate(CheckedInequalities, CheckedPremises):
    """Theorem 2's certificate of one guarded A-SRPT run, with flow-time figures.

    Attributes
    ----------
    holds : bool
        ``per_job`` and ``total`` hold.
    covered : bool
        The run satisfies every premise of Theorem 2 (``premises``): a failure is a bug.
    premises : tuple of Premise
        (A1)-(A4) checked on this run (:mod:`asrpt.theory.audit`); ``not_covered`` says which
        fails, where and when.
    virtual : str
        The virtual machine the run followed (``envelope``, ``gang`` or ``fluid``; ``C~``
        recomputed).
    virtual_source : str
        ``"recomputed"``, or, with float data, the run's record accepted as the recomputed
        values up to a near-tie swap.
    kappa, share : number
        The guard's parameters; ``rho_prime`` is ``max_j rho'_j``.
    epsilon : number
        The hysteresis among the jobs that are not overdue that the run recorded (0: none); the
        order premise was checked with it.
    ratio_bound : number or None
        ``beta + c mu_over (kappa + beta mu_under rho')``, Corollary 2's proven ratio to the
        optimum (``c = 2`` for the envelope machine, 1 for the fluid one); None for the gang
        machine, which has no such bound.
    flow_time, flow_lower_bound, flow_ratio_to_lb : number
        ``sum (C_j - a_j)``, ``max(LB1, LB2) - sum a_j`` and their ratio.
    virtual_flow_time : number
        ``sum (C~_j - a_j)`` of the virtual machine.
    """

    holds: bool
    covered: bool
    premises: tuple
    exact: bool
    kappa: Any
    share: Any
    epsilon: Any
    total_gpus: int
    n_jobs: int
    virtual: str
    virtual_source: str
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
    ratio_bound: Any
    overdue_jobs: int
    inequalities: tuple = ()
    per_job_slack: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        """A JSON-ready summary."""
        return {
            "theorem": 2, "holds": self.holds, "covered": self.covered, "assumptions": self.assumptions,
            "premises": [p.to_dict() for p in self.premises], "not_covered": self.not_covered,
            "virtual": self.virtual, "ratio_bound": self.ratio_bound, "exact": self.exact, "kappa": self.kappa,
            "share": self.share, "epsilon": self.epsilon, "n_jobs": self.n_jobs,
            "total_gpus": self.total_gpus, "total_completion_time": self.total_completion_time,
            "lower_bound": self.lower_bound, "flow_time": self.flow_time,
            "flow_lower_bound": self.flow_lower_bound, "flow_ratio_to_lb": self.flow_ratio_to_lb,
            "virtual_total": self.virtual_total, "virtual_flow_time": self.virtual_flow_time,
            "beta": self.beta, "mu_over": self.mu_over, "mu_under": self.mu_under,
            "rho_prime": self.rho_prime, "overdue_jobs": self.overdue_jobs,
            "inequalities": {q.name: q.to_dict() for q in self.inequalities}, "failures": self.failures(),
        }


def _real(x) -> bool:
    """A finite real number (not a bool, not a string): what a recorded parameter must be."""
    return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(x)


@validate_params({"instance": [InstanceOf(Instance)], "result": [InstanceOf(SimResult)],
                  "tolerance": [Interval(Real, 0, 1, closed="left")]})
def certify_guarded(instance: Instance, result: SimResult, *, tolerance: float = 1e-9) -> GuardCertificate:
    """Check Theorem 2's certificate on a finished guarded A-SRPT run of ``instance``.

    Nothing is taken on trust (:mod:`asrpt.theory.audit`): the records are audited against the
    instance, ``C~`` is recomputed by the run's virtual machine from the predictions (and the
    run's record of it refused if it differs), the deadlines and the record of overdue jobs are
    recomputed, and the premises are checked on the schedule, instant by instant: after its
    deadline a waiting job must have overdue jobs ahead of it holding at least
    ``max(1, floor(share M) - g_j + 1)`` GPUs.

    Raises
    ------
    InvalidParameterError
        A run that is not guarded A-SRPT, or a record that disagrees with its recomputation.

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> cert = certify_guarded(two_server_instance, simulate(two_server_instance, "a-srpt:adaptive=off"))
    >>> cert.holds, cert.inequality("per_job").slack
    (True, 24)
    """
    who = "certify_guarded"
    params = result.options.get("policy_params", {})
    _require(params.get("order") == "guarded",
             f"{who}: run {result.policy!r} is not guarded A-SRPT (order={params.get('order')!r})")
    _require("kappa" in params and "share" in params and "epsilon" in params,
             f"{who}: run {result.policy!r} does not record its kappa, share and epsilon (a record written "
             "before they were parameters, or edited)")
    kappa, share, epsilon = params["kappa"], params["share"], params["epsilon"]
    _require(_real(kappa) and kappa >= 1 and _real(share) and 0 < share <= 1 and _real(epsilon) and 0 <= epsilon < 1,
             f"{who}: run {result.policy!r} records kappa={kappa!r}, share={share!r}, epsilon={epsilon!r}; the "
             "policy takes kappa >= 1, share in (0, 1] and epsilon in [0, 1)")
    audit = _audit(instance, result, who, tolerance)
    jobs = audit.jobs
    m = instance.cluster.total_gpus
    kappa = integral(kappa)     # (epsilon: the hysteresis among the jobs that are not overdue)
    share_gpus = max(1, math.floor(share * m))
    preds = audit.final
    c_virtual = audit.virtual
    taus = {j.id: j.tau_star for j in jobs}
    p_hat = {j.id: preds[j.id] if taus[j.id] is None else _mul(preds[j.id], taus[j.id]) for j in jobs}

    beta_j = {j.id: j.beta for j in jobs}
    beta = max(beta_j.values(), default=1)
    mu_over = max([1] + [_div(preds[j.id], j.work) for j in jobs])
    mu_under = max([1] + [_div(j.work, preds[j.id]) for j in jobs])
    need = {j.id: max(1, share_gpus - j.gpus + 1) for j in jobs}
    rho_j = {j.id: _div(m, need[j.id]) for j in jobs}
    rho = max(rho_j.values(), default=1)

    total = exact_sum(j.completion for j in jobs)
    arrivals = exact_sum(j.arrival for j in jobs)
    lb1, lb2 = _lower_bounds(jobs, {j.id: j.processing_time for j in jobs}, m)
    lower = max(lb1, lb2)
    virtual_total = exact_sum(c_virtual[j.id] for j in jobs)
    # the predicted lower bounds: the virtual machine's cost is at most their sum (Lemma 7, envelope)
    lb1_hat, lb2_hat = _lower_bounds(jobs, p_hat, m)

    numbers = [total, lb1, lb2, virtual_total, beta, mu_over, mu_under, kappa, lb2_hat]
    numbers += [x for j in jobs for x in (j.completion, j.processing_time, preds[j.id], j.work)]
    exact = all(_exact(x) for x in numbers)

    def le(lhs, rhs) -> bool:
        return lhs <= rhs if exact else lhs <= rhs + tolerance * max(1.0, abs(lhs), abs(rhs))

    # d_j = a_j + kappa (C~_j - a_j), never below C~_j (the same number in exact arithmetic)
    deadlines = {j.id: max(c_virtual[j.id], j.arrival + _mul(kappa, c_virtual[j.id] - j.arrival)) for j in jobs}
    guard_problem = None          # the run's record of overdue jobs against the deadlines
    if audit.static and audit.run.overdue_at is not None:
        for j in jobs:
            at = audit.run.overdue_at.get(j.id)
            problem = None
            if at is not None and not (le(deadlines[j.id], at) and le(at, deadlines[j.id])):
                problem = (at, j.id, f"{j.id} became overdue at {at}, but its deadline a + kappa (C~ - a) is "
                                     f"{deadlines[j.id]}")
            elif at is None and not le(j.completion, deadlines[j.id]):
                problem = (deadlines[j.id], j.id, f"{j.id} completed at {j.completion}, after its deadline "
                                                  f"{deadlines[j.id]}, but the run never made it overdue")
            if problem is not None:
                # exact data: the record is not this run's (refused); floats: the policy's guard
                # rounded differently, and the run is outside the theorem's order (not covered)
                _require(not exact, f"{who}: record {problem[2]}; the run does not match the instance")
                guard_problem = guard_problem or problem
    # When each job became overdue: the deadline, or in floats the run's own record of it where that
    # agrees with the deadline within the tolerance (a deadline and a decision time that round
    # apart must not read as a broken order)
    overdue_from = dict(deadlines)
    if not exact and audit.static and audit.run.overdue_at is not None:
        for j in jobs:
            at = audit.run.overdue_at.get(j.id)
            if at is not None and le(deadlines[j.id], at) and le(at, deadlines[j.id]):
                overdue_from[j.id] = at
    order = sorted(jobs, key=lambda j: (c_virtual[j.id], id_key(j.id)))
    ranks = {j.id: i for i, j in enumerate(order)}
    late = _late_preemption(audit)
    blocked, failures = premise_sweep(jobs, ranks, m, need, deadlines=overdue_from, late_preemption=late,
                                      tolerance=tolerance)
    order_failure = _guarded_order_failure(jobs, preds, overdue_from, c_virtual, share_gpus, m, exact, tolerance,
                                           epsilon)
    for label, problem in (("(A2)", guard_problem), ("(A3)" if late else "(A2)", order_failure)):
        if problem is not None and label not in failures:
            failures[label] = problem

    rows, length_rows, area_rows, bounds = [], [], [], []
    area_ahead = 0
    for j in order:
        area_ahead = area_ahead + _mul(j.gpus, p_hat[j.id])
        area_rows.append((j.id, area_ahead, _mul(m, c_virtual[j.id])))
    for j in jobs:
        c = c_virtual[j.id]
        bound = deadlines[j.id] + _mul(beta_j[j.id], j.processing_time) + _mul(beta, mu_under, rho_j[j.id], c)
        bounds.append(bound)
        rows.append((j.id, j.completion, bound))
        length_rows.append((j.id, j.arrival + p_hat[j.id], c))

    def per_job(name, rows_):
        worst = min(rows_, key=lambda row: row[2] - row[1])
        return Inequality(name, _STATEMENTS[name], _norm(worst[1]), _norm(worst[2]), _norm(worst[2] - worst[1]),
                          all(le(lhs, rhs) for _, lhs, rhs in rows_), worst[0])

    def whole(name, lhs, rhs):
        return Inequality(name, _STATEMENTS[name], _norm(lhs), _norm(rhs), _norm(rhs - lhs), le(lhs, rhs))

    # Corollary 2: sum C~ <= c mu_over max(LB1, LB2) with c = 1 for the fluid machine (Lemma 2:
    # its cost is LB2 on the predicted sizes), 2 for the envelope (Lemma 7); none for the gang one
    factor = 1 if audit.machine == "fluid" else 2
    virtual_rhs = lb2_hat if audit.machine == "fluid" else lb1_hat + lb2_hat
    ratio_bound = beta + _mul(factor * mu_over, kappa + _mul(beta, mu_under, rho))
    inequalities = (
        per_job("per_job", rows),
        whole("total", total, exact_sum(bounds)),
        whole("closed_form", total, _mul(beta, lb1) + _mul(kappa + _mul(beta, mu_under, rho), virtual_total)),
        per_job("virtual_area", area_rows),
        per_job("virtual_length", length_rows),
        whole("virtual_cost", virtual_total, virtual_rhs),
        whole("corollary", total, _mul(ratio_bound, lower)),
    )
    premises = list(_options_premises(audit, failures, order="guarded", machines=("gang", "envelope", "fluid")))
    if not inequalities[3].holds:
        premises[1] = Premise("(A2)", premises[1].statement, False, inequalities[3].job, None,
                              f"the {audit.machine} virtual machine's C~ lack the area property (V2)")
    flow = total - arrivals
    flow_lb = lower - arrivals
    return GuardCertificate(
        holds=inequalities[0].holds and inequalities[1].holds, covered=all(p.holds for p in premises),
        premises=tuple(premises), exact=exact, kappa=kappa, share=share, epsilon=epsilon, total_gpus=m,
        n_jobs=len(jobs),
        virtual=audit.machine, virtual_source=audit.virtual_source, total_completion_time=_norm(total),
        lower_bound=_norm(lower), flow_time=_norm(flow), flow_lower_bound=_norm(flow_lb),
        flow_ratio_to_lb=_norm(_div(flow, flow_lb)) if flow_lb else (1 if flow == 0 else math.inf),
        virtual_total=_norm(virtual_total), virtual_flow_time=_norm(virtual_total - arrivals), beta=beta,
        mu_over=_norm(mu_over), mu_under=_norm(mu_under), rho_prime=_norm(rho),
        ratio_bound=None if audit.machine == "gang" else _norm(ratio_bound),
        overdue_jobs=sum(1 for j in jobs if j.completion > deadlines[j.id]), inequalities=inequalities,
        per_job_slack={rid: _norm(b - c) for rid, c, b in rows})


def _work_done(job, t):
    """Work a job did by time ``t`` (its segments' running time, over ``tau`` for DNN jobs)."""
    done = 0
    for s in job.segments:
        if s.start >= t:
            break
        run = min(t, s.end) - s.start - s.restart
        if run > 0:
            done = done + (run if s.tau is None else run / s.tau)
    return done


def _guarded_order_failure(jobs, preds, deadlines, c_virtual, share_gpus: int, m: int, exact: bool,
                           tolerance: float, epsilon=0):
    """The first decision at which the running set is not the greedy selection, with
    backfilling, in the guarded order (premise (A2)), or None.

    At every event time ``t`` the order is rebuilt from the instance, the predictions and the
    work the segments did: the overdue jobs (``d_k <= t``) by ``(C~, id)``, admitted first-fit
    with skipping within ``floor(share M)`` GPUs (the first always), then every other active job
    by predicted remaining GPU-time ``g (N^ - n(t)) tau*`` (ties by arrival, then id), times
    ``1 - epsilon`` for the jobs running just before ``t`` (the policy's hysteresis; Theorem 2
    allows any order among the jobs that are not overdue, and this checks the order the run
    claims). The running
    set is that greedy selection iff every waiting job fails to fit beside the running jobs
    ahead of it. With floats a running job counts as ahead of a waiting one whose key it is
    within the tolerance of (no false alarm from rounding). Cost O(events x active log active).
    """
    times = sorted({t for j in jobs for t in (j.arrival, j.completion, deadlines[j.id])}
                   | {t for j in jobs for s in j.segments for t in (s.start, s.end)})
    for t in times:
        active = [j for j in jobs if j.arrival <= t < j.completion]
        if not active:
            continue
        running = {j.id for j in active if any(s.start <= t < s.end for s in j.segments)}
        admitted, budget = [], share_gpus
        for j in sorted((j for j in active if deadlines[j.id] <= t), key=lambda j: (c_virtual[j.id], id_key(j.id))):
            if j.gpus <= budget or not admitted:
                admitted.append(j.id)
                budget -= j.gpus
                if budget <= 0:
                    break
        rank = {k: i for i, k in enumerate(admitted)}

        held_before = {j.id for j in active if any(s.start < t <= s.end for s in j.segments)} if epsilon else ()

        def key(j):
            left = preds[j.id] - _work_done(j, t)
            left = left if left > 0 else 0
            size = left * (1 if j.tau_star is None else j.tau_star) * j.gpus
            return size * (1 - epsilon) if j.id in held_before else size

        keys = {j.id: key(j) for j in active if j.id not in rank}
        idle = m - sum(j.gpus for j in active if j.id in running)
        for j in active:
            if j.id in running or j.gpus <= idle:    # (a job that fits in idle GPUs breaks (A4) instead)
                continue
            held = 0
            for k in active:
                if k.id not in running:
                    continue
                if j.id in rank:
                    ahead = k.id in rank and rank[k.id] < rank[j.id]
                elif k.id in rank:
                    ahead = True
                else:
                    kk, kj = keys[k.id], keys[j.id]
                    if exact or kk == kj:       # the policy's tie-break: arrival, then id
                        ahead = (kk, k.arrival, id_key(k.id)) < (kj, j.arrival, id_key(j.id))
                    else:                       # floats: keys within rounding of each other may go either way
                        ahead = kk < kj + tolerance * max(1.0, abs(kk), abs(kj))
                if ahead:
                    held += k.gpus
            if held + j.gpus <= m:
                return (t, j.id, f"{j.id} waited though it fits beside the jobs ahead of it in the guarded order "
                                 f"(they hold {held} of {m} GPUs, it needs {j.gpus})")
    return None


@validate_params({"instance": [InstanceOf(Instance)], "predictor": "no_validation", "kappa": [Real],
                  "share": [Real], "seed": ["seed"], "placement": [None, str],
                  "virtual": [Options(str, {"envelope", "gang", "fluid"})], "epsilon": [None, Real]})
def run_guarded(instance: Instance, *, predictor="instance", kappa=16, share=0.5, seed=0,
                placement: str | None = None, virtual: str = "envelope", epsilon=None) -> SimResult:
    """Simulate guarded A-SRPT under Theorem 2's assumptions (static predictions, immediate
    preemption at zero cost), guided by the ``virtual`` machine (``"envelope"`` for Corollary 2),
    with the hysteresis ``epsilon`` among the jobs that are not overdue (Theorem 2 allows any
    order there; None: the policy's default, :data:`asrpt.policies.asrpt.HYSTERESIS`).

    Examples
    --------
    >>> run_guarded(two_server_instance).completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """
    from ..policies.asrpt import ASRPT, HYSTERESIS
    from ..sim import simulate

    policy = ASRPT(predictor=predictor, adaptive="off", kappa=kappa, share=share, virtual=virtual,
                   epsilon=HYSTERESIS if epsilon is None else epsilon)
    return simulate(instance, policy, placement=placement, seed=seed, preemption_point="immediate")


def certify_guarded_instance(instance: Instance, **options) -> GuardCertificate:
    """Run guarded A-SRPT (:func:`run_guarded`, ``options`` passed on) and certify it.

    Examples
    --------
    >>> certify_guarded_instance(two_server_instance, kappa=1).holds
    True
    """
    return certify_guarded(instance, run_guarded(instance, **options))
