"""Theorem 3: a learning-augmented guarantee by time-sharing A-SRPT with water-filling.

Theorem 2 (``proofs/theorem2.md``) bounds guarded A-SRPT by its virtual completions, which grow
without limit as the predictions get worse. This module owns the construction that caps the
damage, in the style of Purohit, Svitkina and Kumar's preferential round robin (NeurIPS'18),
adapted to rigid gangs and release dates, and its per-instance certificate.

**The combination** ``lam``-shares time between two *copies* of the instance, each scheduled as
if it were alone (idealized fine time slicing, assumption (A5)):

- in a share ``lam`` of every slice, the GPUs run the gangs that the *consistent copy* runs at
  that moment: any policy (by default guarded A-SRPT under Theorem 2's assumptions) simulated on
  the instance slowed to speed ``lam``, i.e. on the arrivals ``lam a_j`` with time dilated by
  ``1/lam``;
- in the other share ``1 - lam``, the *robust copy*: water-filling
  (:mod:`asrpt.single.waterfill`), which uses no prediction, at speed ``s = (1 - lam)/3`` on the
  times ``q_j = stretch P*_j`` (a stretch bound ``beta-bar`` fixed in advance, so the copy is
  online); its fractional shares are realized by rigid gangs inside the slice (Lemma 5: a third of
  any feasible shares fits).

A job finishes as soon as the work it received from both copies together reaches its size; each
copy goes on as if the job were still there until the copy itself would finish it (the slot then
idles). So every job finishes no later than in either copy:

    C_j <= min(C_j^cons, C_j^rob)                                  (Theorem 3, per job)
    sum C_j <= sum_j C_j^rob <= (beta-bar / s) (LB1 + 2 LB2) <= 9 beta-bar / (1 - lam) OPT   (robust)
    sum C_j <= sum_j C_j^cons = (1 / lam) sum_j C_j(copy)                 (consistent)

and with Theorem 2 on the consistent copy, ``sum C_j(copy) <= beta LB1' + (kappa + beta
mu_under rho') sum C~'`` on the arrivals ``lam a_j`` (whose optimum is at most the instance's),
and with the envelope machine (Corollary 2) a ratio to the optimum.
The robust bound holds whatever the predictions are (and whatever the consistent policy is),
under premise (A6): the robust share runs every gang at a stretch of at most ``beta-bar``.

The certificate recomputes everything but the consistent copy from the instance (sizes,
water-filling, both copies' completions, the combination) and audits the copy's records
(:mod:`asrpt.theory.audit`); a run whose numbers differ is refused. This module reads only the
runs' records and ``policy_data`` (never the simulator's internals).

Examples
--------
>>> from asrpt.instance import load_instance
>>> cert = certify_robust_instance(load_instance("instances/worked-example.json"))
>>> cert.holds, cert.covered, cert.lam, cert.robust_ratio_bound
(True, True, Fraction(1, 2), 18)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from numbers import Real
from typing import Any, Mapping

from .._validation import InstanceOf, Interval, validate_params
from ..errors import InvalidParameterError
from ..instance import Instance
from ..engine.records import SimResult
from ..single._arrays import exact_sum
from ..single.waterfill import WaterfillSchedule, strict_list_makespan, waterfill_schedule
from ..sizes import exact_div, exact_mul, processing_times
from .audit import audit_records
from .certificate import CheckedInequalities, Inequality, _exact, _lower_bounds, _norm

__all__ = ["RobustRun", "RobustCertificate", "run_robust", "certify_robust", "certify_robust_instance",
           "as_share"]

_STATEMENTS = {
    "per_job": "C_j <= min(C_j^cons, C_j^rob) for every job",
    "lemma5": "every water-filling piece's shares, at a third of their length, fit one slice as rigid gangs",
    "lemma6": "C_j^rob <= a_j + (q_j + sum_k min(A_k, A_j) / M) / s for every job (k present with j)",
    "robust": "sum C_j <= sum_j (a_j + (q_j + sum_k min(A_k, A_j) / M) / s)",
    "robust_closed_form": "sum C_j <= (beta / s) (LB1 + 2 LB2) <= 9 beta / (1 - lam) max(LB1, LB2)",
    "consistent": "sum C_j <= (1 / lam) sum_j C_j(consistent copy)",
    "consistent_closed_form": "sum C_j <= (1 / lam) (beta LB1' + (kappa + beta mu_under rho') sum C~') "
                              "(Theorem 2 on the copy)",
    "consistent_corollary": "sum C_j <= (1 / lam) (beta + 2 mu_over (kappa + beta mu_under rho')) max(LB1', LB2') "
                            "(Corollary 2 on the copy, envelope machine)",
}


def as_share(lam) -> Any:
    """``lam`` as an exact number: a float is read as the decimal it spells (0.9 is 9/10).

    >>> as_share(0.9), as_share(Fraction(1, 3)), as_share(1)
    (Fraction(9, 10), Fraction(1, 3), 1)
    """
    if isinstance(lam, float):
        return _norm(Fraction(repr(lam)))
    return lam


@dataclass(frozen=True)
class RobustRun:
    """The combined schedule of :func:`run_robust` and both copies behind it.

    Attributes
    ----------
    lam : number
        The consistent copy's share of time; the robust copy runs at ``speed = (1 - lam) / 3``.
    completion_times : mapping
        ``C_j`` of the combination, by job id.
    consistent_completions, robust_completions : mapping
        ``C_j^cons`` (the copy's completion dilated by ``1 / lam``) and ``C_j^rob``.
    copy : SimResult
        The consistent copy's run, on the arrivals ``lam a_j``.
    waterfill : WaterfillSchedule
        The robust copy (with its pieces).
    sizes : mapping
        ``q_j = stretch P*_j``, the processing time the robust copy gives each job: a stretch
        bound fixed in advance (the robust copy is online), not the consistent copy's measured
        ``beta_j``.
    stretch : number
        That bound (``beta-bar``; 1 for abstract jobs and consolidated placements).
    """

    lam: Any
    speed: Any
    completion_times: Mapping[str, Any]
    consistent_completions: Mapping[str, Any]
    robust_completions: Mapping[str, Any]
    copy: SimResult = field(repr=False)
    waterfill: WaterfillSchedule = field(repr=False)
    sizes: Mapping[str, Any] = field(repr=False)
    stretch: Any = 1

    @property
    def total_completion_time(self):
        """``sum_j C_j`` of the combination."""
        return exact_sum(self.completion_times.values())


def _progress_intervals(record, lam, q, waterfill_pieces, index, speed):
    """``(start, end, rate)`` pieces of job progress (fraction of the job per second) from both copies."""
    out = []
    for seg in record.segments:
        run_from = seg.start + seg.restart
        if seg.end <= run_from:
            continue
        per_second = 1 if seg.tau is None else exact_div(1, seg.tau)
        rate = exact_mul(lam, exact_div(per_second, record.work))
        out.append((exact_div(run_from, lam), exact_div(seg.end, lam), rate))
    for piece in waterfill_pieces:
        for k, x in piece.shares:
            if k == index:
                out.append((piece.start, piece.end, exact_div(exact_mul(speed, x), q)))
    return out


def _first_completion(intervals, exact: bool):
    """The first time the summed rates of ``intervals`` integrate to 1."""
    events = sorted({t for s, e, _ in intervals for t in (s, e)})
    if not events:
        return None
    starts: dict = {}
    for s, e, r in intervals:
        starts.setdefault(s, []).append(r)
        starts.setdefault(e, []).append(-r)
    done, rate = 0, 0
    for t0, t1 in zip(events, events[1:]):
        rate = rate + exact_sum(starts[t0])
        gain = exact_mul(rate, t1 - t0)
        if done + gain >= 1 or (not exact and done + gain >= 1 - 1e-12):
            if rate == 0:
                return t0
            return _norm(t0 + exact_div(1 - done, rate)) if exact else min(t1, t0 + (1 - done) / rate)
        done = done + gain
    return events[-1] if not exact and done >= 1 - 1e-9 else None


@validate_params({"instance": [InstanceOf(Instance)], "lam": [Interval(Real, 0, 1, closed="neither")],
                  "policy": "no_validation", "predictor": "no_validation", "kappa": [Real],
                  "share": [Real], "seed": ["seed"], "placement": [None, str],
                  "stretch": [Interval(Real, 1, None, closed="left")], "virtual": [None, str]})
def run_robust(instance: Instance, *, lam: Real = Fraction(1, 2), policy=None, predictor="instance",
               kappa=16, share=0.5, seed=0, placement: str | None = None, stretch: Real = 1,
               virtual: str | None = None) -> RobustRun:
    """Build Theorem 3's combined schedule of ``instance`` (module docstring).

    Parameters
    ----------
    lam : number in (0, 1)
        The consistent copy's share of time (a float is read as the decimal it spells).
    policy : policy spec or object, optional
        The consistent copy's policy; default guarded A-SRPT under Theorem 2's assumptions
        (static predictions from ``predictor``, ``kappa``, ``share``, immediate preemption).
        Any policy keeps the robust bound.
    predictor, kappa, share, seed, placement, virtual
        As for :func:`asrpt.theory.guarded.run_guarded`.
    stretch : number >= 1
        The stretch bound ``beta-bar`` fixed in advance: the robust copy gives job j the
        processing time ``q_j = stretch P*_j`` (premise (A6): every gang of the robust share runs
        at a stretch of at most ``stretch``; always true for abstract jobs with 1).

    Examples
    --------
    >>> run = run_robust(two_server_instance)
    >>> run.completion_times, run.robust_completions["a"]
    ({'a': 6, 'b': Fraction(3, 2), 'c': 4}, 24)
    """
    from ..sim import simulate
    from .guarded import run_guarded

    lam = as_share(lam)
    compressed = instance.replace_jobs(replace(job, arrival=_norm(exact_mul(lam, job.arrival)))
                                       for job in instance.jobs)
    if policy is None:
        copy = run_guarded(compressed, predictor=predictor, kappa=kappa, share=share, seed=seed,
                           placement=placement, **({} if virtual is None else {"virtual": virtual}))
    else:
        copy = simulate(compressed, policy, placement=placement, seed=seed, preemption_point="immediate")
    return _combine(instance, copy, lam, as_share(stretch), "run_robust")


def _combine(instance: Instance, copy: SimResult, lam, stretch, who: str) -> RobustRun:
    """The combination of ``copy`` (the consistent copy, run on the arrivals ``lam a_j``) with
    water-filling at speed ``(1 - lam) / 3`` on ``q_j = stretch P*_j``: everything but the copy
    is computed here, from the instance alone."""
    records = copy.records
    for rec in records:
        if rec.completion is None:
            raise InvalidParameterError(f"{who}: job {rec.id!r} did not complete in the consistent copy")
    speed = exact_div(1 - lam, 3)
    sizes = {j.id: exact_mul(stretch, p) for j, p in zip(instance.jobs, processing_times(instance))}
    m = instance.cluster.total_gpus
    wf = waterfill_schedule([job.arrival for job in instance.jobs], [sizes[j.id] for j in instance.jobs],
                            [j.gpus for j in instance.jobs], m, speed=speed,
                            ids=[j.id for j in instance.jobs], record=True)
    exact = all(_exact(x) for x in [lam] + [r.completion for r in records] + list(sizes.values())
                + list(wf.completion_times))
    by_job: dict = {}
    for piece in wf.pieces:                     # group the pieces' shares by job once
        for k, x in piece.shares:
            by_job.setdefault(k, []).append(piece._replace(shares=((k, x),)))
    completion, cons, rob = {}, {}, {}
    for index, (job, rec) in enumerate(zip(instance.jobs, records)):
        cons[job.id] = _norm(exact_div(rec.completion, lam))
        rob[job.id] = wf.completion_times[index]
        if sizes[job.id] == 0 or rec.work == 0:
            completion[job.id] = job.arrival
            continue
        intervals = _progress_intervals(rec, lam, sizes[job.id], by_job.get(index, ()), index, speed)
        c = _first_completion(intervals, exact)
        if c is None:       # float rounding left the sum a hair short of 1: the copies' bound holds
            c = min(cons[job.id], rob[job.id])
        completion[job.id] = c
    return RobustRun(lam, speed, completion, cons, rob, copy, wf, sizes, stretch)


@dataclass(frozen=True)
class RobustCertificate(CheckedInequalities):
    """Theorem 3's certificate of one combined run.

    Attributes
    ----------
    holds : bool
        ``per_job``, ``lemma5``, ``lemma6``, ``robust``, ``robust_closed_form`` and ``consistent``
        hold (the inequalities that need no assumption on the consistent copy).
    covered : bool
        The consistent copy satisfies Theorem 2's assumptions, so ``consistent_closed_form`` is
        asserted too (it is part of ``holds`` then).
    beta : number
        The stretch bound ``beta-bar`` the robust copy was given (:func:`run_robust`'s
        ``stretch``), fixed before the run.
    robust_ratio_bound : number
        ``9 beta-bar / (1 - lam)``: the proven ratio to the optimum, whatever the predictions
        (premise (A6), see ``assumed``).
    consistent_ratio_bound : number or None
        ``(beta + 2 mu_over (kappa + beta mu_under rho')) / lam``: the proven ratio of the
        consistent side (Corollary 2 on the copy), when the copy is guarded A-SRPT on the envelope
        machine within Theorem 2's premises; None otherwise (with the gang machine no ratio to the
        optimum is proven: proofs/theorem2.md, Counterexample 3).
    assumed : tuple of str
        Premises the certificate cannot check on a run (the robust share is computed, not
        simulated): for DNN jobs, (A6) that its gangs run at stretch at most ``beta-bar``.
    ratio_to_lb, flow_ratio_to_lb : number
        ``sum C_j / max(LB1, LB2)`` and ``sum (C_j - a_j) / (max(LB1, LB2) - sum a_j)``.
    consistent_ratio, robust_ratio : number
        Each copy's ``sum C / max(LB1, LB2)``.
    """

    holds: bool
    covered: bool
    exact: bool
    lam: Any
    speed: Any
    total_gpus: int
    n_jobs: int
    total_completion_time: Any
    lower_bound: Any
    ratio_to_lb: Any
    flow_time: Any
    flow_lower_bound: Any
    flow_ratio_to_lb: Any
    consistent_total: Any
    robust_total: Any
    consistent_ratio: Any
    robust_ratio: Any
    beta: Any
    robust_ratio_bound: Any
    lemma5_worst_makespan: Any
    inequalities: tuple = ()
    consistent_ratio_bound: Any = None
    assumed: tuple = ()

    def to_dict(self) -> dict:
        """A JSON-ready summary."""
        keys = ("holds", "covered", "exact", "lam", "speed", "total_gpus", "n_jobs", "total_completion_time",
                "lower_bound", "ratio_to_lb", "flow_time", "flow_lower_bound", "flow_ratio_to_lb",
                "consistent_total", "robust_total", "consistent_ratio", "robust_ratio", "beta",
                "robust_ratio_bound", "lemma5_worst_makespan", "consistent_ratio_bound")
        out = {"theorem": 3, **{k: getattr(self, k) for k in keys}}
        out["inequalities"] = {q.name: q.to_dict() for q in self.inequalities}
        out["assumed"] = list(self.assumed)
        out["failures"] = self.failures()
        return out


def _check_same(who, name, recorded, recomputed, tolerance) -> None:
    for key, value in recomputed.items():
        got = recorded.get(key)
        same = got == value if _exact(got) and _exact(value) else (
            got is not None and abs(float(got) - float(value)) <= tolerance * max(1.0, abs(float(value))))
        if not same:
            raise InvalidParameterError(f"{who}: the run's {name} of job {key!r} is {got}, but the combination "
                                        f"recomputed from the instance and the consistent copy gives {value}")


def _ratio(a, b):
    return _norm(exact_div(a, b)) if b else (1 if a == 0 else float("inf"))


@validate_params({"instance": [InstanceOf(Instance)], "run": [InstanceOf(RobustRun)],
                  "tolerance": [Interval(Real, 0, 1, closed="left")]})
def certify_robust(instance: Instance, run: RobustRun, *, tolerance: float = 1e-9) -> RobustCertificate:
    """Check Theorem 3 (and Lemmas 5 and 6) on a combined run of ``instance``.

    Examples
    --------
    >>> cert = certify_robust(two_server_instance, run_robust(two_server_instance))
    >>> cert.holds, cert.inequality("per_job").slack, cert.robust_ratio_bound
    (True, Fraction(1, 2), 18)
    """
    who = "certify_robust"
    jobs = instance.jobs
    ids = [j.id for j in jobs]
    if set(run.completion_times) != set(ids):
        raise InvalidParameterError(f"{who}: the run's jobs are not the instance's")
    lam = run.lam
    compressed = instance.replace_jobs(replace(job, arrival=_norm(exact_mul(lam, job.arrival))) for job in jobs)
    audit_records(compressed, run.copy, f"{who} (the consistent copy, arrivals lam a_j)", tolerance=tolerance)
    # everything else is recomputed from the instance and the audited copy, and must match the run
    again = _combine(instance, run.copy, lam, run.stretch, who)
    for name in ("sizes", "robust_completions", "consistent_completions", "completion_times"):
        _check_same(who, name, getattr(run, name), getattr(again, name), tolerance)
    if run.speed != again.speed:
        raise InvalidParameterError(f"{who}: the run's robust speed {run.speed} is not (1 - lam) / 3 = {again.speed}")
    run = again
    m = instance.cluster.total_gpus
    s = run.speed
    records = run.copy.records
    arrivals = [j.arrival for j in jobs]
    q = [run.sizes[i] for i in ids]
    area = [exact_mul(j.gpus, qi) for j, qi in zip(jobs, q)]
    c = [run.completion_times[i] for i in ids]
    c_rob = [run.robust_completions[i] for i in ids]
    c_cons = [run.consistent_completions[i] for i in ids]
    beta = run.stretch
    lb1, lb2 = _lower_bounds(jobs, dict(zip(ids, processing_times(instance))), m)
    lower = max(lb1, lb2)
    total = exact_sum(c)
    numbers = [total, lb1, lb2, beta, lam] + c + c_rob + c_cons + q
    exact = all(_exact(x) for x in numbers)

    def le(lhs, rhs) -> bool:
        return lhs <= rhs if exact else lhs <= rhs + tolerance * max(1.0, abs(lhs), abs(rhs))

    def per_job(name, rows):
        worst = min(rows, key=lambda row: row[2] - row[1]) if rows else ("", 0, 0)
        return Inequality(name, _STATEMENTS[name], _norm(worst[1]), _norm(worst[2]), _norm(worst[2] - worst[1]),
                          all(le(lhs, rhs) for _, lhs, rhs in rows), worst[0])

    def whole(name, lhs, rhs):
        return Inequality(name, _STATEMENTS[name], _norm(lhs), _norm(rhs), _norm(rhs - lhs), le(lhs, rhs))

    # Lemma 6 per job, over the jobs present at some time in [a_j, C_j^rob)
    lemma6_rows = []
    for j, job in enumerate(jobs):
        near = exact_sum(min(area[k], area[j]) for k in range(len(jobs))
                         if arrivals[k] < c_rob[j] and c_rob[k] > arrivals[j] or k == j)
        bound = arrivals[j] + exact_div(q[j] + exact_div(near, m), s)
        lemma6_rows.append((job.id, c_rob[j], bound))
    # Lemma 5 on every piece of the robust copy
    gpus = [j.gpus for j in jobs]
    worst = 0
    for piece in run.waterfill.pieces:
        span = strict_list_makespan([gpus[k] for k, _ in piece.shares],
                                    [exact_div(x, 3) for _, x in piece.shares], m)
        worst = max(worst, span)
    robust_rhs = exact_sum(rhs for _, _, rhs in lemma6_rows)
    closed = exact_div(exact_mul(beta, lb1 + 2 * lb2), s)
    ratio_bound = exact_div(exact_mul(9, beta), 1 - lam)
    copy_total = exact_sum(r.completion for r in records)
    inequalities = [
        per_job("per_job", [(i, ci, min(a, b)) for i, ci, a, b in zip(ids, c, c_cons, c_rob)]),
        Inequality("lemma5", _STATEMENTS["lemma5"], _norm(worst), 1, _norm(1 - worst), le(worst, 1)),
        per_job("lemma6", lemma6_rows),
        whole("robust", total, robust_rhs),
        whole("robust_closed_form", total, min(closed, exact_mul(ratio_bound, lower))),
        whole("consistent", total, exact_div(copy_total, lam)),
    ]
    covered = False
    consistent_bound = None
    params = run.copy.options.get("policy_params", {})
    if params.get("order") == "guarded":
        from .guarded import certify_guarded

        try:
            guard = certify_guarded(compressed, run.copy, tolerance=tolerance)
        except InvalidParameterError:
            if exact:
                raise
            guard = None        # floats: the copy's record rounded apart from its recomputation; the
            #                     robust side needs none of it, the consistent closed form is not reported
    else:
        guard = None
    if guard is not None:
        covered = guard.covered
        rhs = guard.inequality("closed_form").rhs
        inequalities.append(whole("consistent_closed_form", total, exact_div(rhs, lam)))
        if guard.ratio_bound is not None:       # fluid or envelope machine (Corollary 2)
            inequalities.append(whole("consistent_corollary", total,
                                      exact_div(guard.inequality("corollary").rhs, lam)))
            if covered:
                consistent_bound = _norm(exact_div(guard.ratio_bound, lam))
    conditional = ("consistent_closed_form", "consistent_corollary")
    holds = all(q_.holds for q_ in inequalities if q_.name not in conditional or covered)
    assumed = () if all(j.is_abstract for j in jobs) else (
        f"(A6) every gang of the robust share runs at stretch <= {_norm(beta)} (the share is computed, "
        f"not simulated)",)
    flow = total - exact_sum(arrivals)
    flow_lb = lower - exact_sum(arrivals)
    return RobustCertificate(
        holds=holds, covered=covered, exact=exact, lam=lam, speed=s, total_gpus=m, n_jobs=len(jobs),
        total_completion_time=_norm(total), lower_bound=_norm(lower), ratio_to_lb=_ratio(total, lower),
        flow_time=_norm(flow), flow_lower_bound=_norm(flow_lb), flow_ratio_to_lb=_ratio(flow, flow_lb),
        consistent_total=_norm(exact_sum(c_cons)), robust_total=_norm(exact_sum(c_rob)),
        consistent_ratio=_ratio(exact_sum(c_cons), lower), robust_ratio=_ratio(exact_sum(c_rob), lower),
        beta=beta, robust_ratio_bound=_norm(ratio_bound), lemma5_worst_makespan=_norm(worst),
        inequalities=tuple(inequalities), consistent_ratio_bound=consistent_bound, assumed=assumed)


def certify_robust_instance(instance: Instance, **options) -> RobustCertificate:
    """Build the combination (:func:`run_robust`, ``options`` passed on) and certify it.

    Examples
    --------
    >>> certify_robust_instance(two_server_instance, lam=0.9).robust_ratio_bound
    90
    """
    return certify_robust(instance, run_robust(instance, **options))
