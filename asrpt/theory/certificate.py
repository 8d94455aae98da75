"""The per-instance certificate of Theorem 1 (proofs/theorem1.md, Proposition 1), read from a
finished A-SRPT run.

This module owns the certificate: given an instance and the :class:`~asrpt.engine.records.SimResult`
of an A-SRPT run on it, it computes every quantity of Theorem 1 from the instance, the
predictions and the run's records, never from simulator internals, and trusts none of them
(:mod:`asrpt.theory.audit`): each record is audited against the instance and its own segments,
the predictions are recomputed where the predictor is a function of the instance, and the
virtual completions ``C~`` are recomputed by the fluid machine of Theorem 1 (A-SRPT's record of
its virtual run, :class:`~asrpt.state.VirtualRun`, is checked against the recomputation of the
machine it names and refused if it differs). The premises (A1)-(A4) are checked on the run, the
schedule-level ones instant by instant, and a broken one is reported as ``not covered: (A4)
fails at t = 1 for C: ...``. It checks, exactly when the data are exact, each inequality of the
proof, and runs A-SRPT under the theorem's assumptions (:func:`run_asrpt`, :func:`certify_instance`).

**Quantities** (all for the unweighted objective ``sum_j C_j``; ``M`` = the cluster's GPUs):

- ``C_j``, ``a_j``, ``g_j``, ``P*_j`` (recomputed from the instance), ``beta_j`` (the placement
  stretch ``max tau / tau*`` over the record's segments; 1 for abstract jobs) and
  ``beta = max_j beta_j``;
- ``rho_j = M / (M - g_j + 1)`` and ``rho = max_j rho_j``;
- ``N_j`` (the instance's true work) and ``N^_j`` (the prediction the virtual machine used: the
  initial one for a static run, recomputed for the ``instance`` and ``oracle`` predictors; the
  last value when the adaptive step changed a prediction); ``mu_over = max(1, max_j N^_j / N_j)``,
  ``mu_under = max(1, max_j N_j / N^_j)``, ``mu = mu_over * mu_under``;
- ``C~_j``: preemptive SRPT on one machine with releases ``a_j`` and sizes ``g_j N^_j tau*_j / M``,
  recomputed (ties by id), and ``sum_j C~_j``;
- ``LB1 = sum_j (a_j + P*_j)`` and ``LB2`` = SRPT on one machine with releases ``a_j`` and true
  virtual sizes ``q_j = g_j P*_j / M`` (``P*_j`` from :mod:`asrpt.sizes`, checked against the
  records; the same as :func:`asrpt.offline.bounds.squashed_area_bound` for unit weights),
  ``LB = max(LB1, LB2)``;
- from the segments: ``H_j`` (time j held GPUs), ``R_j`` (restart time inside ``H_j``, after
  preemptions with a cost), the waiting time ``W_j = C_j - a_j - H_j``, and the **blocked time**
  ``X_j``: the part of ``W_j`` during which the jobs ahead of j held at most ``M - g_j`` GPUs.
  "Ahead" is the virtual finishing order (by ``C~``, ties by id): with static predictions it is
  A-SRPT's priority order between any two jobs present together (fact F1: Fact 3 of
  proofs/lemma3-waiting.md).

**Inequalities** (:class:`Inequality`; ``slack = rhs - lhs``, the smallest over jobs for per-job
ones, which also name the tightest job):

- ``per_job``: ``C_j <= a_j + beta_j P*_j + beta mu_under rho_j C~_j`` (proofs/theorem1.md,
  Proposition 1);
- ``total``: ``sum C_j <= beta LB1 + beta rho mu_under sum C~_j`` (the same Proposition 1);
- ``lemma2``: ``sum C~_j <= mu_over LB2``;
- ``theorem``: ``sum C_j <= beta (1 + rho mu) LB``;
- ``lemma3``: ``W_j - X_j <= beta mu_under rho_j C~_j`` (the waiting bound on unblocked time);
- ``lemma3_premise``: ``X_j = 0`` (a waiting job never waits while the jobs ahead of it hold at
  most ``M - g_j`` GPUs);
- ``running``: ``H_j - R_j <= beta_j P*_j`` (a job runs at most ``beta_j P*_j``).

After adaptive updates the virtual machine was resized mid-run, so neither its record nor F1 can
be checked: ``C~`` is then the fluid machine run from scratch on the final predictions, "ahead"
is that order, and ``X_j``, ``lemma3`` and ``lemma3_premise`` are indicative, not the proof's
quantities (the run is not ``covered``: (A1) fails).

``holds`` is the certificate of Proposition 1: ``per_job`` and ``total``. Under the theorem's
assumptions (static predictions, backfilling, preemption with zero cost, preemption taking effect
at once) every inequality holds; :func:`run_asrpt` runs under them, with
``preemption_point="immediate"`` (a preempted DNN job stops mid-iteration). With the simulator's
default for DNN jobs, ``preemption_point="iteration"`` (stop at the next iteration boundary, as
proofs/model.md says after Definition 4), a selected job may wait behind a job that is no longer
selected: then
``X_j > 0`` and ``per_job`` may fail although the run is correct; the refined per-job inequality ``C_j <= a_j + beta_j P*_j + R_j + X_j + beta mu_under rho_j C~_j``
always holds for static runs (``per_job_refined``). See ``proofs/theorem1.md``.

**Arithmetic.** When every number involved is an int or a Fraction the checks are exact;
otherwise ``lhs <= rhs + tolerance * max(1, |lhs|, |rhs|)`` with the given relative tolerance
(default 1e-9). Record betas of 1.0 count as the exact 1.

Examples
--------
>>> from asrpt.instance import load_instance
>>> cert = certify_instance(load_instance("instances/worked-example.json"))
>>> cert.holds, cert.total_completion_time, cert.lower_bound, cert.rho, cert.ratio_bound
(True, 9, 8, 4, 5)
>>> cert.inequality("total").rhs, cert.inequality("per_job").slack
(32, Fraction(3, 2))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Integral, Real
from typing import Any, Mapping

from .._validation import InstanceOf, Interval, Options, validate_params
from ..errors import InvalidParameterError
from ..instance import Instance, id_key
from ..predict.base import ADAPTIVE_RULES
from ..engine.records import SimResult
from ..single._arrays import exact_sum
from ..single.srpt import srpt_schedule
from ..sizes import exact_div, exact_mul
from ..state import VirtualRun
from .audit import (VIRTUAL_MACHINES, Premise, _same, audit_records, check_virtual_record, not_covered, premise_sweep,
                    recorded_predictions, virtual_completions)

__all__ = [
    "Inequality",
    "JobCertificate",
    "Certificate",
    "certify",
    "run_asrpt",
    "certify_instance",
    "THEOREM_OPTIONS",
]

#: A-SRPT's options under Theorem 1's assumptions (with ``preemption_cost=0`` in ``simulate``).
THEOREM_OPTIONS: Mapping[str, Any] = {"adaptive": "off", "backfill": True, "preemption": True,
                                      "order": "virtual"}

_STATEMENTS = {
    "per_job": "C_j <= a_j + beta_j P*_j + beta mu_under rho_j C~_j for every job",
    "total": "sum C_j <= beta LB1 + beta rho mu_under sum C~_j",
    "lemma2": "sum C~_j <= mu_over LB2",
    "theorem": "sum C_j <= beta (1 + rho mu) max(LB1, LB2)",
    "lemma3": "W_j - X_j <= beta mu_under rho_j C~_j for every job",
    "lemma3_premise": "X_j = 0 for every job (the jobs ahead of a waiting job hold >= M - g_j + 1 GPUs)",
    "running": "H_j - R_j <= beta_j P*_j for every job",
    "per_job_refined": "C_j <= a_j + beta_j P*_j + R_j + X_j + beta mu_under rho_j C~_j for every job",
}


def _exact(x) -> bool:
    return isinstance(x, (Integral, Fraction)) and not isinstance(x, bool)


def _norm(x):
    """Integral Fractions become ints; everything else is returned as is."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return x.numerator
    return x


def _div(a, b):
    return exact_div(a, b)


def _mul(*xs):
    out = 1
    for x in xs:
        out = exact_mul(out, x)
    return out


@dataclass(frozen=True)
class Inequality:
    """One checked inequality ``lhs <= rhs`` of the certificate.

    Attributes
    ----------
    name : str
        "per_job", "total", "lemma2", "theorem", "lemma3", "lemma3_premise", "running" or
        "per_job_refined".
    statement : str
        The inequality in words.
    lhs, rhs : number
        Both sides; for a per-job inequality those of the tightest job.
    slack : number
        ``rhs - lhs`` (the smallest over jobs for per-job inequalities; negative when it fails).
    holds : bool
        Whether it holds (exactly, or within the certificate's tolerance).
    job : str or None
        The tightest job of a per-job inequality.

    Examples
    --------
    >>> Inequality("total", "a <= b", 9, 32, 23, True).to_dict()["slack"]
    23
    """

    name: str
    statement: str
    lhs: Any
    rhs: Any
    slack: Any
    holds: bool
    job: str | None = None

    def to_dict(self) -> dict:
        """``{"name", "statement", "lhs", "rhs", "slack", "holds", "job"}`` (numbers as computed)."""
        return {"name": self.name, "statement": self.statement, "lhs": self.lhs, "rhs": self.rhs,
                "slack": self.slack, "holds": self.holds, "job": self.job}


@dataclass(frozen=True)
class JobCertificate:
    """The certificate's quantities for one job (see the module docstring for each symbol).

    Attributes
    ----------
    id : str
    arrival, completion, processing_time : number
        ``a_j``, ``C_j``, ``P*_j``.
    gpus : int
        ``g_j``.
    beta, rho : number
        ``beta_j`` and ``rho_j = M / (M - g_j + 1)``.
    work, prediction : number
        True work ``N_j`` and the prediction ``N^_j`` the certificate uses.
    virtual_completion : number
        ``C~_j``.
    held, restart, waiting, blocked : number
        ``H_j``, ``R_j``, ``W_j = C_j - a_j - H_j`` and ``X_j``.
    bound : number
        ``a_j + beta_j P*_j + beta mu_under rho_j C~_j``.
    waiting_bound : number
        ``beta mu_under rho_j C~_j``.
    slack : number
        ``bound - C_j``.
    holds : bool
        Whether ``C_j <= bound``.

    Examples
    --------
    >>> from asrpt.instance import load_instance
    >>> c = certify_instance(load_instance("instances/worked-example.json")).job("A")
    >>> c.completion, c.bound, c.rho, c.waiting, c.blocked
    (5, Fraction(26, 3), Fraction(4, 3), 1, 0)
    """

    id: str
    arrival: Any
    gpus: int
    completion: Any
    processing_time: Any
    beta: Any
    rho: Any
    work: Any
    prediction: Any
    virtual_completion: Any
    held: Any
    restart: Any
    waiting: Any
    blocked: Any
    bound: Any
    waiting_bound: Any
    slack: Any
    holds: bool

    def to_dict(self) -> dict:
        """Every attribute, keyed by name."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class CheckedInequalities:
    """What every certificate (Theorems 1, 2 and 3) offers over its ``inequalities`` tuple."""

    inequalities: tuple

    def inequality(self, name: str) -> Inequality:
        """The inequality called ``name``.

        Raises
        ------
        InvalidParameterError
            No inequality has that name.
        """
        for q in self.inequalities:
            if q.name == name:
                return q
        raise InvalidParameterError(
            f"no inequality {name!r}; known: {', '.join(q.name for q in self.inequalities)}")

    def failures(self) -> list[str]:
        """Names of the inequalities that fail (empty when all hold)."""
        return [q.name for q in self.inequalities if not q.holds]


class CheckedPremises:
    """What the certificates of Theorems 1 and 2 offer over their ``premises`` tuple."""

    premises: tuple

    @property
    def assumptions(self) -> dict:
        """Premise label -> whether it holds on this run."""
        return {p.label: p.holds for p in self.premises}

    @property
    def not_covered(self) -> str:
        """``""`` when covered, else ``"not covered: (A4) fails at t = 1 for C: ..."``."""
        return not_covered(self.premises)


@dataclass(frozen=True)
class Certificate(CheckedInequalities, CheckedPremises):
    """Theorem 1's certificate for one A-SRPT run (see the module docstring).

    Attributes
    ----------
    holds : bool
        The certificate of proofs/theorem1.md, Proposition 1: ``per_job`` and ``total`` hold.
    covered : bool
        The run satisfies every premise of Theorem 1 (``premises``), so every inequality
        must hold; a failure then is a bug.
    premises : tuple of Premise
        (A1)-(A4), each checked on this run (:mod:`asrpt.theory.audit`): the options the
        theorem names and, instant by instant, the schedule itself. A broken premise says
        where and when (``not_covered``).
    prediction_source : {"recomputed", "recorded"}
        Whether the predictions were recomputed from the instance (``instance``, ``oracle``) or
        are the run's input (learned or random predictors), checked against its decisions.
    exact : bool
        Every number was an int or a Fraction, and every comparison exact.
    tolerance : float
        Relative tolerance of the float comparisons.
    predictions : {"initial", "final"}
        Which recorded predictions define ``mu`` (final ones after adaptive updates).
    total_gpus, n_jobs : int
    total_completion_time, lb1, lb2, lower_bound, virtual_total : number
        ``sum C_j``, LB1, LB2, ``max(LB1, LB2)``, ``sum C~_j``.
    beta, rho, mu_over, mu_under, mu : number
    ratio_bound : number
        ``beta (1 + rho mu)``.
    bound : number
        ``ratio_bound * lower_bound``.
    ratio_to_lb : number
        ``sum C_j / lower_bound``.
    flow_time, flow_lower_bound, flow_ratio_to_lb : number
        ``sum (C_j - a_j)``, ``lower_bound - sum a_j`` (a lower bound on every schedule's flow
        time) and their ratio: on traces ``sum a_j`` dwarfs the flow time and ``ratio_to_lb`` is
        near 1 whatever the policy; the flow ratio is what users see.
    inequalities : tuple of Inequality
    jobs : tuple of JobCertificate

    Examples
    --------
    >>> from asrpt.instance import load_instance
    >>> cert = certify_instance(load_instance("instances/worked-example.json"))
    >>> cert.covered, cert.exact, cert.mu, cert.bound, cert.failures()
    (True, True, 1, 40, [])
    """

    holds: bool
    covered: bool
    premises: tuple
    exact: bool
    tolerance: float
    predictions: str
    prediction_source: str
    total_gpus: int
    n_jobs: int
    total_completion_time: Any
    lb1: Any
    lb2: Any
    lower_bound: Any
    virtual_total: Any
    beta: Any
    rho: Any
    mu_over: Any
    mu_under: Any
    mu: Any
    ratio_bound: Any
    bound: Any
    ratio_to_lb: Any
    inequalities: tuple = ()
    jobs: tuple = field(default=(), repr=False)
    flow_time: Any = None
    flow_lower_bound: Any = None
    flow_ratio_to_lb: Any = None

    def job(self, job_id: str) -> JobCertificate:
        """The per-job quantities of ``job_id``.

        Raises
        ------
        InvalidParameterError
            No job has that id.
        """
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise InvalidParameterError(f"no job with id {job_id!r} in the certificate")

    def to_dict(self, *, jobs: bool = False) -> dict:
        """A JSON-ready summary (numbers as computed); ``jobs=True`` adds the per-job rows."""
        out = {
            "holds": self.holds, "covered": self.covered, "assumptions": self.assumptions,
            "premises": [p.to_dict() for p in self.premises], "not_covered": self.not_covered,
            "exact": self.exact, "tolerance": self.tolerance, "predictions": self.predictions,
            "prediction_source": self.prediction_source,
            "n_jobs": self.n_jobs, "total_gpus": self.total_gpus,
            "total_completion_time": self.total_completion_time, "lower_bound": self.lower_bound,
            "lb1": self.lb1, "lb2": self.lb2, "virtual_total": self.virtual_total,
            "bound": self.bound, "ratio_to_lb": self.ratio_to_lb, "ratio_bound": self.ratio_bound,
            "beta": self.beta, "rho": self.rho, "mu": self.mu, "mu_over": self.mu_over,
            "mu_under": self.mu_under, "flow_time": self.flow_time,
            "flow_lower_bound": self.flow_lower_bound, "flow_ratio_to_lb": self.flow_ratio_to_lb,
            "inequalities": {q.name: q.to_dict() for q in self.inequalities},
            "failures": self.failures(),
        }
        if jobs:
            out["jobs"] = [j.to_dict() for j in self.jobs]
        return out


# ---------------------------------------------------------------------------------------------
# Records -> quantities
# ---------------------------------------------------------------------------------------------


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise InvalidParameterError(message)


def _lower_bounds(jobs, times, m: int) -> tuple:
    """``(LB1, LB2)`` of ``jobs`` (anything with ``id``, ``arrival``, ``gpus``) for the processing
    times ``times`` (by job id): ``sum (a_j + P_j)`` and SRPT on one machine with sizes
    ``g_j P_j / M`` (true times give Lemma 1's bounds, predicted ones the virtual machines' costs)."""
    lb1 = exact_sum(j.arrival + times[j.id] for j in jobs)
    lb2 = srpt_schedule([j.arrival for j in jobs], [exact_div(exact_mul(j.gpus, times[j.id]), m) for j in jobs],
                        ids=[j.id for j in jobs]).total_completion_time
    return lb1, lb2


def _virtual_run(result: SimResult, who: str = "certify") -> VirtualRun:
    """A-SRPT's typed record of the run (``result.policy_record``), or, for a result without one (read
    back from JSON, or built by hand), the record rebuilt from its ``policy_data``."""
    if isinstance(result.policy_record, VirtualRun):
        return result.policy_record
    data = result.policy_data
    missing = [k for k in ("virtual_completion_times", "initial_predictions", "predictions")
               if k not in data]
    _require(not missing, f"{who}: the run's policy_data lacks {', '.join(missing)}; "
                          f"the certificate needs an A-SRPT run (policy {result.policy!r})")
    return VirtualRun.from_policy_data(data)


@dataclass(frozen=True)
class AuditedRun:
    """A run of A-SRPT, every number recomputed (:mod:`asrpt.theory.audit`): the audited jobs,
    the predictions (``final`` differs from ``initial`` only after adaptive updates, and
    ``source`` says whether they were recomputed or are the run's input), the virtual machine
    the run used, and its ``C~`` recomputed from scratch (on the final predictions after
    adaptive updates, when the run's own virtual machine was resized mid-run and its record
    cannot be recomputed; such a run is outside every theorem)."""

    run: VirtualRun
    jobs: tuple
    params: Mapping[str, Any]
    options: Mapping[str, Any]
    initial: Mapping[str, Any]
    final: Mapping[str, Any]
    source: str
    machine: str
    virtual: Mapping[str, Any]
    static: bool
    virtual_source: str = "recomputed"


def _virtual_properties(recorded, recomputed, jobs, p_hat, m, machine, tolerance) -> bool:
    """Whether recorded float ``C~`` are the recomputed ones up to a near-tie: the same values
    as a multiset (within the tolerance: two jobs whose order a rounding flipped swap their
    completions), and the properties the proofs use: ``C~_j >= a_j`` (``>= a_j + P^_j`` for the
    gang and envelope machines) and (V2), the jobs finished by each ``C~_j`` hold at most
    ``M C~_j`` of predicted GPU-time."""
    def le(a, b):
        return a <= b + tolerance * max(1.0, abs(a), abs(b))

    mine = sorted(recorded[j.id] for j in jobs if j.id in recorded)
    again = sorted(recomputed[j.id] for j in jobs)
    if len(mine) != len(again) or not all(le(x, y) and le(y, x) for x, y in zip(mine, again)):
        return False

    for j in jobs:
        floor = j.arrival + (p_hat[j.id] if machine != "fluid" else 0)
        if j.id not in recorded or not le(floor, recorded[j.id]):
            return False
    area = 0
    for j in sorted(jobs, key=lambda j: (recorded[j.id], id_key(j.id))):
        area += j.gpus * p_hat[j.id]
        if not le(area, m * recorded[j.id]):
            return False
    return True


def _audit(instance: Instance, result: SimResult, who: str, tolerance: float) -> AuditedRun:
    """Audit a run (records, predictions, the virtual machine's record) against ``instance``."""
    run = _virtual_run(result, who)
    jobs = audit_records(instance, result, who, tolerance=tolerance)
    params = result.options.get("policy_params", {})
    initial, final, source = recorded_predictions(instance, run, params.get("predictor"), who,
                                                  tolerance=tolerance)
    machine = run.virtual if run.virtual is not None else params.get("virtual")
    _require(machine in VIRTUAL_MACHINES,
             f"{who}: the run names no virtual machine the certificate can recompute ({machine!r}; "
             f"known: {', '.join(VIRTUAL_MACHINES)})")
    _require(params.get("virtual", machine) == machine,
             f"{who}: the run's record says virtual machine {machine!r}, its options {params.get('virtual')!r}")
    _require(not (run.adaptive_updates and params.get("adaptive") == "off"),
             f"{who}: the run records {run.adaptive_updates} re-predictions, but it ran with adaptive='off'")
    static = not run.adaptive_updates
    virtual = virtual_completions(instance, machine, final)
    virtual_source = "recomputed"
    taus = {j.id: j.tau_star for j in jobs}
    m = instance.cluster.total_gpus
    p_hat = {j.id: final[j.id] if taus[j.id] is None else exact_mul(final[j.id], taus[j.id]) for j in jobs}
    if static:
        try:
            check_virtual_record(run.completion_times, virtual, machine, who, tolerance=tolerance)
        except InvalidParameterError:
            # Floats: the policy's incremental machine and the batch recomputation round
            # differently, and a near-tie can flip two jobs' order. Such a record is accepted
            # if it has the properties the proofs use; exact data must match exactly.
            recorded = run.completion_times
            if all(_exact(x) for x in list(recorded.values()) + list(p_hat.values())):
                raise
            if not _virtual_properties(recorded, virtual, jobs, p_hat, m, machine, tolerance):
                raise InvalidParameterError(
                    f"{who}: the run's virtual completions C~ differ from the {machine} machine's recomputation "
                    f"beyond a near-tie of floats (a tampered record, or floats that rounded two jobs apart); "
                    f"certify the instance in exact arithmetic (asrpt certify --exact) to decide") from None
            virtual = {j.id: recorded[j.id] for j in jobs}
            virtual_source = "recorded (floats: a near-tie ordered differently; its properties checked)"
        for j in jobs:
            p = p_hat[j.id]
            size = exact_div(exact_mul(j.gpus, p), m) if machine == "fluid" else p
            recorded = run.sizes.get(j.id)
            _require(recorded is not None and _same(recorded, size, tolerance),
                     f"{who}: record {j.id!r} has virtual size {recorded}, but the {machine} machine's size of "
                     f"its prediction is {size}; the run does not match the instance")
    return AuditedRun(run, jobs, params, result.options, initial, final, source, machine, virtual, static,
                      virtual_source)


def _options_premises(audit: AuditedRun, failures: dict, *, order: str, machines: tuple) -> tuple:
    """(A1)-(A4) of a run: the options the theorem names and the sweep's first failures."""
    params, opts = audit.params, audit.options
    premises = []
    a1 = params.get("adaptive") == "off" and audit.static
    premises.append(Premise("(A1)", "static predictions (adaptive='off', no re-prediction)", a1, None, None,
                            "" if a1 else f"adaptive={params.get('adaptive')!r} with "
                                          f"{audit.run.adaptive_updates} re-predictions"))
    a2_opts = []
    if params.get("backfill") is not True:
        a2_opts.append("backfill is off")
    if params.get("order") != order:
        a2_opts.append(f"order={params.get('order')!r}, the theorem's is {order!r}")
    if audit.machine not in machines:
        a2_opts.append(f"the run followed the {audit.machine} virtual machine, the theorem is stated for "
                       f"{' or '.join(machines)}")
    if a2_opts:
        premises.append(Premise("(A2)", "greedy selection with backfilling in the theorem's order", False,
                                None, None, "; ".join(a2_opts)))
    else:
        premises.append(_swept("(A2)", "greedy selection with backfilling in the theorem's order", failures))
    a3 = []
    if params.get("preemption") is not True:
        a3.append("preemption is off")
    costly = [j for j in audit.jobs if j.restart]
    if costly:      # (a cost that no preemption paid leaves the run as it is at zero cost)
        first = min((s.start, j.id) for j in costly for s in j.segments if s.restart)
        premises.append(Premise("(A3)", "preemption at zero cost, taking effect at once", False, first[1],
                                first[0], f"preemption cost {opts.get('preemption_cost', 0)}: {first[1]} "
                                          f"restarted, holding GPUs without progress"))
    elif a3:
        premises.append(Premise("(A3)", "preemption at zero cost, taking effect at once", False, None, None,
                                "; ".join(a3)))
    else:
        premises.append(_swept("(A3)", "preemption at zero cost, taking effect at once", failures))
    premises.append(_swept("(A4)", "a job starts whenever g_j GPUs are idle", failures))
    return tuple(premises)


def _swept(label: str, statement: str, failures: dict) -> Premise:
    if label not in failures:
        return Premise(label, statement, True)
    t, job, detail = failures[label]
    return Premise(label, statement, False, job, t, detail)


def _late_preemption(audit: AuditedRun) -> bool:
    """Whether a preempted job may keep its GPUs for a while (DNN jobs stopping at iteration ends)."""
    return audit.options.get("preemption_point") != "immediate" and any(j.tau_star is not None for j in audit.jobs)


@validate_params({
    "instance": [InstanceOf(Instance)],
    "result": [InstanceOf(SimResult)],
    "tolerance": [Interval(Real, 0, 1, closed="left")],
})
def certify(instance: Instance, result: SimResult, *, tolerance: float = 1e-9) -> Certificate:
    """Check Theorem 1's certificate on a finished A-SRPT run of ``instance``.

    Nothing is taken on trust: every record is audited against the instance
    (:func:`~asrpt.theory.audit.audit_records`), the predictions are recomputed where the
    predictor is a function of the instance, the virtual completions ``C~`` are recomputed by the
    fluid machine of Theorem 1 (and the run's own virtual machine is recomputed and compared with
    its record), and the premises are checked on the schedule itself.

    Parameters
    ----------
    instance : Instance
        The instance the run was made on.
    result : SimResult
        The run: its records and A-SRPT's record of its virtual run.
    tolerance : float in [0, 1)
        Relative tolerance of comparisons when some number is a float (exact data are compared
        exactly).

    Returns
    -------
    Certificate

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints, a run without A-SRPT's record, an unfinished job,
        or a record that disagrees with its recomputation (the message names the job and field).

    Examples
    --------
    >>> from asrpt.instance import load_instance
    >>> inst = load_instance("instances/worked-example.json")
    >>> cert = certify(inst, run_asrpt(inst))
    >>> [(q.name, q.holds) for q in cert.inequalities][:4]
    [('per_job', True), ('total', True), ('lemma2', True), ('theorem', True)]
    >>> cert.not_covered
    ''
    """
    audit = _audit(instance, result, "certify", tolerance)
    jobs = audit.jobs
    m = instance.cluster.total_gpus
    which = "initial" if audit.static else "final"
    preds = audit.final
    c_virtual = (audit.virtual if audit.machine == "fluid"
                 else virtual_completions(instance, "fluid", preds))

    # --- per-job primitives -------------------------------------------------------------------
    beta_j = {j.id: j.beta for j in jobs}
    beta = max(beta_j.values(), default=1)
    rho_j = {j.id: _div(m, m - j.gpus + 1) for j in jobs}
    rho = max(rho_j.values(), default=1)
    mu_over, mu_under = 1, 1
    for j in jobs:
        mu_over = max(mu_over, _div(preds[j.id], j.work))
        mu_under = max(mu_under, _div(j.work, preds[j.id]))
    mu = _mul(mu_over, mu_under)

    total = exact_sum(j.completion for j in jobs)
    lb1, lb2 = _lower_bounds(jobs, {j.id: j.processing_time for j in jobs}, m)
    lower = max(lb1, lb2)
    virtual_total = exact_sum(c_virtual[j.id] for j in jobs)

    # Ranks: the virtual finishing order (C~, then id), A-SRPT's order between jobs present together.
    order = sorted(jobs, key=lambda j: (c_virtual[j.id], id_key(j.id)))
    ranks = {j.id: i for i, j in enumerate(order)}
    blocked, failures = premise_sweep(jobs, ranks, m, {j.id: m - j.gpus + 1 for j in jobs},
                                      late_preemption=_late_preemption(audit), tolerance=tolerance)

    numbers = [total, lb1, lb2, virtual_total, beta, mu]
    numbers += [blocked[j.id] for j in jobs]
    for j in jobs:
        numbers += [j.completion, j.processing_time, preds[j.id], j.work]
    exact = all(_exact(x) for x in numbers)

    def le(lhs, rhs) -> bool:
        if exact:
            return lhs <= rhs
        return lhs <= rhs + tolerance * max(1.0, abs(lhs), abs(rhs))

    # --- per-job inequalities -----------------------------------------------------------------
    rows = []
    per_job_rows = {"per_job": [], "lemma3": [], "lemma3_premise": [], "running": [], "per_job_refined": []}
    for j in jobs:
        waiting = j.completion - j.arrival - j.held
        x = blocked[j.id]
        wait_bound = _mul(beta, mu_under, rho_j[j.id], c_virtual[j.id])
        run_bound = _mul(beta_j[j.id], j.processing_time)
        bound = j.arrival + run_bound + wait_bound
        ok = le(j.completion, bound)
        rows.append(JobCertificate(
            id=j.id, arrival=j.arrival, gpus=j.gpus, completion=j.completion,
            processing_time=j.processing_time, beta=beta_j[j.id], rho=rho_j[j.id], work=j.work,
            prediction=preds[j.id], virtual_completion=c_virtual[j.id], held=_norm(j.held),
            restart=_norm(j.restart), waiting=_norm(waiting), blocked=_norm(x), bound=_norm(bound),
            waiting_bound=_norm(wait_bound), slack=_norm(bound - j.completion), holds=ok))
        per_job_rows["per_job"].append((j.id, j.completion, bound))
        per_job_rows["lemma3"].append((j.id, waiting - x, wait_bound))
        per_job_rows["lemma3_premise"].append((j.id, x, 0))
        per_job_rows["running"].append((j.id, j.held - j.restart, run_bound))
        per_job_rows["per_job_refined"].append((j.id, j.completion, bound + j.restart + x))

    def per_job(name: str) -> Inequality:
        rows_ = per_job_rows[name]
        if not rows_:
            return Inequality(name, _STATEMENTS[name], 0, 0, 0, True)
        worst = min(rows_, key=lambda row: row[2] - row[1])
        holds = all(le(lhs, rhs) for _, lhs, rhs in rows_)
        return Inequality(name, _STATEMENTS[name], _norm(worst[1]), _norm(worst[2]),
                          _norm(worst[2] - worst[1]), holds, worst[0])

    def whole(name: str, lhs, rhs) -> Inequality:
        return Inequality(name, _STATEMENTS[name], _norm(lhs), _norm(rhs), _norm(rhs - lhs), le(lhs, rhs))

    ratio_bound = _mul(beta, 1 + _mul(rho, mu))
    bound = _mul(ratio_bound, lower)
    inequalities = (
        per_job("per_job"),
        whole("total", total, _mul(beta, lb1) + _mul(beta, rho, mu_under, virtual_total)),
        whole("lemma2", virtual_total, _mul(mu_over, lb2)),
        whole("theorem", total, bound),
        per_job("lemma3"),
        per_job("lemma3_premise"),
        per_job("running"),
        per_job("per_job_refined"),
    )
    premises = _options_premises(audit, failures, order="virtual", machines=("fluid",))
    holds = inequalities[0].holds and inequalities[1].holds
    arrivals = exact_sum(j.arrival for j in jobs)
    flow, flow_lb = total - arrivals, lower - arrivals
    return Certificate(
        flow_time=_norm(flow), flow_lower_bound=_norm(flow_lb),
        flow_ratio_to_lb=_norm(_div(flow, flow_lb)) if flow_lb else (1 if flow == 0 else math.inf),
        holds=holds, covered=all(p.holds for p in premises), premises=premises, exact=exact,
        tolerance=tolerance, predictions=which, prediction_source=audit.source, total_gpus=m,
        n_jobs=len(jobs), total_completion_time=_norm(total), lb1=_norm(lb1), lb2=_norm(lb2),
        lower_bound=_norm(lower), virtual_total=_norm(virtual_total), beta=beta, rho=_norm(rho),
        mu_over=_norm(mu_over), mu_under=_norm(mu_under), mu=_norm(mu), ratio_bound=_norm(ratio_bound),
        bound=_norm(bound), ratio_to_lb=_norm(_div(total, lower)) if lower else (1 if total == 0 else math.inf),
        inequalities=inequalities, jobs=tuple(rows))


# ---------------------------------------------------------------------------------------------
# Running A-SRPT under the theorem's assumptions
# ---------------------------------------------------------------------------------------------

_RUN_CONSTRAINTS = {
    "instance": [InstanceOf(Instance)],
    "predictor": "no_validation",
    "placement": [None, str],
    "seed": ["seed"],
    "adaptive": [Options(str, set(ADAPTIVE_RULES))],
    "backfill": ["boolean"],
    "preemption": ["boolean"],
    "preemption_cost": [Interval(Real, 0, None, closed="left")],
    "preemption_point": [Options(str, {"immediate", "iteration"})],
}


@validate_params(_RUN_CONSTRAINTS)
def run_asrpt(instance: Instance, *, predictor="instance", placement: str | None = None, seed=0,
              adaptive: str = "off", backfill: bool = True, preemption: bool = True,
              preemption_cost=0, preemption_point: str = "immediate") -> SimResult:
    """Simulate A-SRPT on ``instance`` as Theorem 1 states it (the fluid virtual machine, the
    virtual order); the defaults are Theorem 1's assumptions.

    Parameters
    ----------
    instance : Instance
        The instance.
    predictor : str or Predictor
        Source of the predictions (``"instance"``: the instance's own, the truth where absent;
        ``"oracle"``; ``"noisy:sigma=..:clip=.."``).
    placement : str or None
        Placement method (None: the simulator's default).
    seed : int, Generator or None
        Passed to the run (noisy predictors).
    adaptive : {"off", "doubling", "repredict", "conditional"}
        The adaptive step (``"off"`` for the theorem).
    backfill, preemption : bool
        A-SRPT's allocation options (both on for the theorem).
    preemption_cost : number >= 0
        Restart cost in seconds (0 for the theorem).
    preemption_point : {"immediate", "iteration"}
        Where a preempted DNN job stops (``"immediate"`` for the theorem; ``"iteration"``, the
        next iteration boundary, is the simulator's rule and breaks the theorem for DNN jobs, see
        ``proofs/theorem1.md``).

    Returns
    -------
    SimResult

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints (including an unknown predictor or placement).

    Examples
    --------
    >>> res = run_asrpt(two_server_instance)
    >>> res.completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """
    from ..policies.asrpt import ASRPT
    from ..sim import simulate

    policy = ASRPT(predictor=predictor, adaptive=adaptive, backfill=backfill, preemption=preemption,
                   virtual="fluid", order="virtual")
    return simulate(instance, policy, placement=placement, preemption_cost=preemption_cost, seed=seed,
                    preemption_point=preemption_point)


@validate_params({**_RUN_CONSTRAINTS, "tolerance": [Interval(Real, 0, 1, closed="left")]})
def certify_instance(instance: Instance, *, predictor="instance", placement: str | None = None,
                     seed=0, adaptive: str = "off", backfill: bool = True, preemption: bool = True,
                     preemption_cost=0, preemption_point: str = "immediate",
                     tolerance: float = 1e-9) -> Certificate:
    """Run A-SRPT (:func:`run_asrpt`, by default under the theorem's assumptions) and certify it.

    Parameters
    ----------
    instance : Instance
    predictor, placement, seed, adaptive, backfill, preemption, preemption_cost, preemption_point
        As in :func:`run_asrpt`.
    tolerance : float in [0, 1)
        As in :func:`certify`.

    Returns
    -------
    Certificate

    Raises
    ------
    InvalidParameterError
        A parameter outside its constraints.

    Examples
    --------
    >>> cert = certify_instance(two_server_instance)
    >>> cert.holds, cert.total_completion_time, cert.ratio_to_lb
    (True, 8, 1)
    """
    result = run_asrpt(instance, predictor=predictor, placement=placement, seed=seed,
                       adaptive=adaptive, backfill=backfill, preemption=preemption,
                       preemption_cost=preemption_cost, preemption_point=preemption_point)
    return certify(instance, result, tolerance=tolerance)
