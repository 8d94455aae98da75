"""What every certificate recomputes instead of trusting: a run checked against its instance.

A certificate is only as good as its inputs. This module owns the checks that make a run's
records evidence rather than claims:

- :func:`audit_records`: every field of every job record against the instance and the record's
  own segments: ids, arrivals, gangs, weights, true work ``N_j``, ``tau*_j`` and ``P*_j``
  recomputed from the instance; segments inside ``[a_j, C_j]``, in order, disjoint, on ``g_j``
  GPUs of real servers, never above a server's GPUs at any instant; the work the segments did
  (``sum (length - restart) / tau``) equal to ``N_j``; ``start``, ``completion``,
  ``preemptions`` and the stretch ``beta_j = max tau / tau*`` equal to what the segments say;
  every ``tau`` at least the best iteration time on its GPU counts. A record that disagrees is
  refused (:class:`~asrpt.errors.InvalidParameterError`, naming the job, the field, both values).
- :func:`recorded_predictions`: the predictions a run used, recomputed where the predictor is a
  static function of the instance (``instance``, ``oracle``) and refused where they differ.
- :func:`virtual_completions`: ``C~`` recomputed by the named virtual machine from the
  instance and the predictions (fluid SRPT, the gang machine or the envelope), and
  :func:`check_virtual_record` refusing a record that disagrees.
- :func:`premise_sweep`: the premises of Theorems 1 and 2 that only the schedule can show, checked
  instant by instant: (A4) no job waits while ``g_j`` GPUs are idle; and no waiting job is
  *blocked* (the jobs ahead of it hold fewer GPUs than the proof needs), each blocked instant
  attributed to the premise it breaks ((A4) GPUs idle, (A3) a preempted job still holding GPUs,
  (A2) a job behind it holding them).

:class:`Premise` is the uniform report: which premise, whether it holds, and where and when it
first fails, so a certificate says "not covered: (A4) fails at t = 1 for C" instead of "the
theorem failed".

Examples
--------
>>> from asrpt.instance import load_instance
>>> from asrpt.sim import simulate
>>> inst = load_instance("instances/worked-example.json")
>>> jobs = audit_records(inst, simulate(inst, "a-srpt"), "example")
>>> [(j.id, j.held, j.beta) for j in jobs]
[('A', 4, 1), ('B', 1, 1), ('C', 2, 1)]
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral
from typing import Any, Mapping, Sequence

from ..errors import InvalidParameterError
from ..instance import Instance
from ..single._arrays import exact_sum
from ..single.envelope import envelope_schedule
from ..single.gang import gang_schedule
from ..single.srpt import srpt_schedule
from ..sizes import best_iteration_times, exact_div, exact_mul, processing_times

__all__ = ["Premise", "AuditedJob", "audit_records", "recorded_predictions", "virtual_completions",
           "check_virtual_record", "premise_sweep", "VIRTUAL_MACHINES"]

#: The virtual machines whose completions a certificate can recompute.
VIRTUAL_MACHINES = ("fluid", "gang", "envelope")


def _exact(x) -> bool:
    return isinstance(x, (Integral, Fraction)) and not isinstance(x, bool)


def _same(a, b, tolerance: float) -> bool:
    """``a == b``, exactly for exact numbers, else within ``tolerance`` relative."""
    if a is None or b is None:
        return a is b
    if _exact(a) and _exact(b):
        return a == b
    return abs(float(a) - float(b)) <= tolerance * max(1.0, abs(float(a)), abs(float(b)))


def _fmt(x) -> str:
    return str(x) if not isinstance(x, float) else f"{x:.10g}"


def _refuse(who: str, job: str, field: str, recorded, expected, why: str) -> None:
    raise InvalidParameterError(
        f"{who}: record {job!r} has {field} = {_fmt(recorded)}, but {why} gives {_fmt(expected)}; "
        f"the run does not match the instance (a tampered or foreign record)")


@dataclass(frozen=True)
class Premise:
    """One premise of a theorem, checked on one run.

    Attributes
    ----------
    label : str
        ``"(A1)"`` ... ``"(A6)"``.
    statement : str
        The premise in words.
    holds : bool
    job, time : str or None, number or None
        Where and when it first fails (None when it holds or fails for the whole run).
    detail : str
        What was seen ("" when it holds).

    Examples
    --------
    >>> Premise("(A4)", "a job starts whenever g_j GPUs are idle", False, "C", 1,
    ...         "C waited with 2 GPUs idle, needs 2").describe()
    '(A4) fails at t = 1 for C: C waited with 2 GPUs idle, needs 2'
    """

    label: str
    statement: str
    holds: bool
    job: str | None = None
    time: Any = None
    detail: str = ""

    def describe(self) -> str:
        """One line: ``"(A4) holds"`` or ``"(A4) fails at t = 1 for C: ..."``."""
        if self.holds:
            return f"{self.label} holds"
        where = ""
        if self.time is not None:
            where += f" at t = {_fmt(self.time)}"
        if self.job is not None:
            where += f" for {self.job}"
        return f"{self.label} fails{where}: {self.detail}"

    def to_dict(self) -> dict:
        """``{"label", "statement", "holds", "job", "time", "detail"}``."""
        return {"label": self.label, "statement": self.statement, "holds": self.holds,
                "job": self.job, "time": self.time, "detail": self.detail}


def not_covered(premises: Sequence[Premise]) -> str:
    """``""`` when every premise holds, else ``"not covered: (A4) fails at ...; (A1) ..."``.

    >>> not_covered([Premise("(A1)", "static", True)])
    ''
    """
    broken = [p.describe() for p in premises if not p.holds]
    return "" if not broken else "not covered: " + "; ".join(broken)


@dataclass(frozen=True)
class AuditedJob:
    """One job's quantities, recomputed from the instance and the record's segments.

    ``held`` is ``H_j`` (time holding GPUs), ``restart`` ``R_j`` (restart time inside it),
    ``beta`` ``max(1, max tau / tau*)`` over the segments (1 for abstract jobs).
    """

    id: str
    arrival: Any
    gpus: int
    work: Any
    tau_star: Any
    processing_time: Any
    completion: Any
    beta: Any
    held: Any
    restart: Any
    segments: tuple


def _instance_work(job):
    return job.processing_time if job.is_abstract else job.iterations


def audit_records(instance: Instance, result, who: str, *, tolerance: float = 1e-9) -> tuple:
    """Every job record of ``result`` checked against ``instance`` and its own segments.

    Parameters
    ----------
    instance : Instance
    result : SimResult
        A finished run of ``instance``.
    who : str
        The caller, named in error messages.
    tolerance : float
        Relative tolerance where a number is a float.

    Returns
    -------
    tuple of AuditedJob
        In instance job order.

    Raises
    ------
    InvalidParameterError
        A record that does not belong to ``instance``, a job that did not complete, or a field
        that disagrees with its recomputation (the message names job, field and both values).

    Examples
    --------
    >>> from dataclasses import replace
    >>> from asrpt.instance import load_instance
    >>> from asrpt.sim import simulate
    >>> inst = load_instance("instances/worked-example.json")
    >>> res = simulate(inst, "a-srpt")
    >>> bad = replace(res, records=(replace(res.records[0], completion=50),) + res.records[1:])
    >>> audit_records(inst, bad, "certify")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: certify: record 'A' has completion = 50, but the end of its last segment gives 5; the run does not match the instance (a tampered or foreign record)
    """
    records = result.records
    if len(records) != instance.n_jobs:
        raise InvalidParameterError(f"{who}: the run has {len(records)} records, the instance {instance.n_jobs} jobs")
    taus = best_iteration_times(instance)
    sizes = processing_times(instance, taus)
    cluster = instance.cluster
    n_servers = len(cluster.servers)
    out = []
    usage: dict = {}
    for job, rec, tau_star, p_star in zip(instance.jobs, records, taus, sizes):
        if rec.id != job.id:
            raise InvalidParameterError(f"{who}: record {rec.id!r} stands where the instance has job {job.id!r}")
        for field, expected in (("arrival", job.arrival), ("gpus", job.gpus), ("weight", job.weight),
                                ("work", _instance_work(job))):
            if not _same(getattr(rec, field), expected, tolerance):
                _refuse(who, rec.id, field, getattr(rec, field), expected, "the instance")
        if not _same(rec.tau_star, tau_star, tolerance):
            _refuse(who, rec.id, "tau_star", rec.tau_star, tau_star, "the performance model")
        if not _same(rec.processing_time, p_star, tolerance):
            _refuse(who, rec.id, "processing_time", rec.processing_time, p_star, "N_j tau*_j")
        if rec.completion is None:
            raise InvalidParameterError(f"{who}: job {rec.id!r} did not complete in the run")
        segs = rec.segments
        done = 0
        beta = 1
        prev_end = None
        for k, s in enumerate(segs):
            where = f"segment {k}"
            if s.start > s.end or (prev_end is not None and s.start < prev_end) or s.start < job.arrival:
                raise InvalidParameterError(
                    f"{who}: record {rec.id!r}: {where} [{_fmt(s.start)}, {_fmt(s.end)}] is out of order, "
                    f"overlaps the previous one or starts before the arrival {_fmt(job.arrival)}")
            if not 0 <= s.restart <= s.end - s.start:
                raise InvalidParameterError(f"{who}: record {rec.id!r}: {where} has restart {_fmt(s.restart)} "
                                            f"outside [0, its length {_fmt(s.end - s.start)}]")
            if sum(g for _, g in s.servers) != job.gpus:
                raise InvalidParameterError(f"{who}: record {rec.id!r}: {where} runs on "
                                            f"{sum(g for _, g in s.servers)} GPUs, the job needs {job.gpus}")
            for h, g in s.servers:
                if not (isinstance(h, int) and 0 <= h < n_servers) or g < 1:
                    raise InvalidParameterError(f"{who}: record {rec.id!r}: {where} names server {h!r} "
                                                f"with {g!r} GPUs; the cluster has servers 0..{n_servers - 1}")
                if s.end > s.start:
                    usage.setdefault(h, []).extend(((s.start, 1, g, rec.id), (s.end, 0, -g, rec.id)))
            run = s.end - s.start - s.restart
            if job.is_abstract:
                if s.tau is not None:
                    raise InvalidParameterError(f"{who}: record {rec.id!r}: {where} has tau {s.tau!r} "
                                                f"for an abstract job")
                done = done + run
            else:
                if s.tau is None or not s.tau >= tau_star * (1 - tolerance):
                    raise InvalidParameterError(f"{who}: record {rec.id!r}: {where} has tau {s.tau!r}, below "
                                                f"the best iteration time {_fmt(tau_star)}")
                best = _counts_tau(job, s.servers, cluster)
                if not s.tau >= best * (1 - tolerance):
                    raise InvalidParameterError(f"{who}: record {rec.id!r}: {where} has tau {_fmt(s.tau)}, below "
                                                f"{_fmt(best)}, the best iteration time on its GPU counts")
                done = done + exact_div(run, s.tau)
                beta = max(beta, exact_div(s.tau, tau_star))
            prev_end = s.end
        if not _same(done, _instance_work(job), tolerance):
            _refuse(who, rec.id, "segments' work", done, _instance_work(job), "the instance's true work")
        start = segs[0].start if segs else None
        if segs and not _same(rec.start, start, tolerance):
            _refuse(who, rec.id, "start", rec.start, start, "its first segment")
        end = segs[-1].end if segs else job.arrival
        if not _same(rec.completion, end, tolerance):
            _refuse(who, rec.id, "completion", rec.completion,
                    end, "the end of its last segment" if segs else "its arrival (no work)")
        if rec.preemptions != max(0, len(segs) - 1):
            _refuse(who, rec.id, "preemptions", rec.preemptions, max(0, len(segs) - 1), "its segments")
        if not _same(rec.beta, beta, tolerance):
            _refuse(who, rec.id, "beta", rec.beta, beta, "max tau / tau* over its segments")
        held = exact_sum(s.end - s.start for s in segs)
        restart = exact_sum(s.restart for s in segs)
        out.append(AuditedJob(rec.id, job.arrival, job.gpus, _instance_work(job), tau_star, p_star,
                              rec.completion, beta, held, restart, tuple(segs)))
    for h, events in usage.items():
        cap = cluster.servers[h].gpus
        used = 0
        for t, _, g, rid in sorted(events, key=lambda e: (e[0], e[1])):
            used += g
            if used > cap:
                raise InvalidParameterError(f"{who}: at t = {_fmt(t)} server {h} holds {used} GPUs "
                                            f"(it has {cap}) once {rid!r} starts: the segments overfill it")
    return tuple(out)


def _counts_tau(job, servers, cluster):
    from ..dnn.perf import iteration_time_for_counts   # DNN jobs only; keeps abstract audits light

    return iteration_time_for_counts(job, servers, cluster)


def recorded_predictions(instance: Instance, run, predictor, who: str, *, tolerance: float = 1e-9) -> tuple:
    """The predictions ``N^_j`` a run used, recomputed where possible.

    Parameters
    ----------
    instance : Instance
    run : VirtualRun
        A-SRPT's record of the run.
    predictor : str or object
        The run's predictor (its ``policy_params["predictor"]``).
    who : str

    Returns
    -------
    (initial, final, source)
        Predictions by job id (``final`` differs from ``initial`` only after adaptive updates)
        and ``"recomputed"`` (``instance`` and ``oracle``: a function of the instance alone) or
        ``"recorded"`` (a learned or random predictor: the record is the input, and the
        certificate checks the run's decisions against it).

    Raises
    ------
    InvalidParameterError
        A job without a prediction, a recomputable prediction that differs from the record,
        or final predictions that differ from the initial ones in a run that reports no
        adaptive update.

    Examples
    --------
    >>> from asrpt.instance import load_instance
    >>> from asrpt.sim import simulate
    >>> inst = load_instance("instances/worked-example.json")
    >>> run = simulate(inst, "a-srpt").policy_record
    >>> recorded_predictions(inst, run, "instance", "certify")[2]
    'recomputed'
    """
    initial, final = dict(run.initial_predictions), dict(run.predictions)
    for job in instance.jobs:
        for name, table in (("initial_predictions", initial), ("predictions", final)):
            if job.id not in table:
                raise InvalidParameterError(f"{who}: the run's {name} have no entry for job {job.id!r}")
    source = "recorded"
    name = predictor if isinstance(predictor, str) else None
    if name in ("instance", "oracle"):
        source = "recomputed"
        for job in instance.jobs:
            truth = _instance_work(job)
            own = job.predicted_iterations if not job.is_abstract else job.predicted_processing_time
            expected = truth if name == "oracle" or own is None else own
            if not _same(initial[job.id], expected, tolerance):
                _refuse(who, job.id, "initial prediction", initial[job.id], expected,
                        f"the {name!r} predictor on the instance")
    if not run.adaptive_updates:
        for job in instance.jobs:
            if not _same(final[job.id], initial[job.id], tolerance):
                _refuse(who, job.id, "final prediction", final[job.id], initial[job.id],
                        "its initial prediction (the run reports no adaptive update)")
    return initial, final, source


def virtual_completions(instance: Instance, machine: str, predictions: Mapping[str, Any],
                        taus: Sequence | None = None) -> dict:
    """``C~_j`` by job id: the virtual machine ``machine`` run from scratch on the predictions.

    ``fluid``: SRPT on one machine with sizes ``g_j P^_j / M``; ``gang``: gang-capped SRPT on
    ``P^_j`` (:mod:`asrpt.single.gang`); ``envelope``: ``max`` of the fluid completion and
    ``a_j + P^_j`` (:mod:`asrpt.single.envelope`); ``P^_j = N^_j tau*_j`` (``N^_j`` itself for
    abstract jobs). Ties by job id, as the policy breaks them.

    Examples
    --------
    >>> from asrpt.instance import load_instance
    >>> inst = load_instance("instances/worked-example.json")
    >>> preds = {"A": 4, "B": 1, "C": 2}
    >>> virtual_completions(inst, "fluid", preds), virtual_completions(inst, "gang", preds)
    ({'A': Fraction(7, 2), 'B': 1, 'C': Fraction(3, 2)}, {'A': 5, 'B': 1, 'C': 3})
    """
    if machine not in VIRTUAL_MACHINES:
        raise InvalidParameterError(f"virtual_completions: unknown virtual machine {machine!r}; "
                                    f"known: {', '.join(VIRTUAL_MACHINES)}")
    taus = best_iteration_times(instance) if taus is None else taus
    jobs = instance.jobs
    ids = [j.id for j in jobs]
    m = instance.cluster.total_gpus
    times = [predictions[j.id] if t is None else exact_mul(predictions[j.id], t) for j, t in zip(jobs, taus)]
    releases = [j.arrival for j in jobs]
    gpus = [j.gpus for j in jobs]
    if machine == "fluid":
        done = srpt_schedule(releases, [exact_div(exact_mul(g, p), m) for g, p in zip(gpus, times)],
                             ids=ids).completion_times
    elif machine == "gang":
        done = gang_schedule(releases, times, gpus, m, ids=ids)
    else:
        done = envelope_schedule(releases, times, gpus, m, ids=ids)
    return dict(zip(ids, done))


def check_virtual_record(recorded: Mapping[str, Any], recomputed: Mapping[str, Any], machine: str, who: str, *,
                         tolerance: float = 1e-9) -> None:
    """Refuse a run whose recorded ``C~`` differ from the virtual machine's recomputation.

    >>> check_virtual_record({"A": 5}, {"A": 5}, "gang", "certify")
    >>> check_virtual_record({"A": 500}, {"A": 5}, "gang", "certify")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: certify: record 'A' has virtual completion C~ = 500, but the gang virtual machine run on the instance and the predictions gives 5; the run does not match the instance (a tampered or foreign record)
    """
    for key, value in recomputed.items():
        if key not in recorded:
            raise InvalidParameterError(f"{who}: the run records no virtual completion for job {key!r}")
        if not _same(recorded[key], value, tolerance):
            _refuse(who, key, "virtual completion C~", recorded[key], value,
                    f"the {machine} virtual machine run on the instance and the predictions")


def premise_sweep(jobs: Sequence[AuditedJob], ranks: Mapping[str, int], total_gpus: int, need: Mapping[str, int],
                  *, deadlines: Mapping[str, Any] | None = None, late_preemption: bool = False,
                  tolerance: float = 1e-9) -> tuple:
    """Blocked time per job and the first instant each schedule premise fails.

    Between consecutive event times (arrivals, segment starts and ends, completions, and the
    ``deadlines`` when given) every job is running, waiting or absent. A waiting job ``j`` is
    **blocked** while the running jobs ranked ahead of it (``ranks``; with ``deadlines``, only
    those whose deadline has passed, and only from ``j``'s own deadline on) hold fewer than
    ``need[j]`` GPUs. Each blocked instant breaks a premise: (A4) when ``g_j`` GPUs are idle
    (the job fits but was not started), else (A3) when ``late_preemption`` (a preempted job
    may still hold its GPUs), else (A2) (jobs behind ``j`` hold the GPUs it needs). Independently
    of blocking, a waiting job with ``g_j`` idle GPUs breaks (A4).

    Returns
    -------
    (blocked, failures)
        ``blocked``: job id -> blocked time ``X_j``; ``failures``: premise label ->
        ``(time, job id, detail)`` of its first failure (absent when it never fails).

    Examples
    --------
    >>> from asrpt.instance import load_instance
    >>> from asrpt.sim import simulate
    >>> inst = load_instance("instances/worked-example.json")
    >>> jobs = audit_records(inst, simulate(inst, "a-srpt"), "example")
    >>> premise_sweep(jobs, {"B": 0, "C": 1, "A": 2}, 4, {"A": 3, "B": 1, "C": 4})
    ({'A': 0, 'B': 0, 'C': 0}, {})
    """
    n = len(jobs)
    tree = [0] * (n + 1)

    def add(rank: int, g: int) -> None:
        i = rank + 1
        while i <= n:
            tree[i] += g
            i += i & -i

    def ahead(rank: int) -> int:
        i, s = rank, 0
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s

    changes: dict = {}
    for k, j in enumerate(jobs):
        changes.setdefault(j.arrival, []).append((3, k, 0))
        changes.setdefault(j.completion, []).append((4, k, 0))
        if deadlines is not None:
            changes.setdefault(deadlines[j.id], []).append((2, k, 0))
        for s in j.segments:
            if s.end > s.start:
                changes.setdefault(s.end, []).append((0, k, -1))
                changes.setdefault(s.start, []).append((1, k, +1))
    times = sorted(changes)
    exact = all(_exact(t) for t in times)
    running = [0] * n
    arrived = [False] * n
    done = [False] * n
    due = [deadlines is None] * n
    counted = [False] * n        # in the tree (running, and due when deadlines are given)
    waiting: set[int] = set()
    blocked = [0] * n
    failures: dict = {}
    busy = 0
    rank_of = [ranks[j.id] for j in jobs]
    gpus = [j.gpus for j in jobs]

    def fail(label, t, k, detail):
        if label not in failures:
            failures[label] = (t, jobs[k].id, detail)

    for i, t in enumerate(times):
        touched = []
        for kind, k, d in sorted(changes[t]):
            if kind <= 1:
                running[k] += d
                busy += d * gpus[k]
            elif kind == 2:
                due[k] = True
            elif kind == 3:
                arrived[k] = True
            else:
                done[k] = True
            touched.append(k)
        for k in touched:
            want = bool(running[k]) and due[k]
            if want != counted[k]:
                add(rank_of[k], gpus[k] if want else -gpus[k])
                counted[k] = want
            if arrived[k] and not done[k] and not running[k]:
                waiting.add(k)
            else:
                waiting.discard(k)
        if i + 1 == len(times):
            break
        length = times[i + 1] - t
        if not exact and length <= tolerance * max(1.0, abs(t)):
            continue
        idle = total_gpus - busy
        for k in waiting:
            job = jobs[k]
            if idle >= gpus[k]:
                fail("(A4)", t, k, f"{job.id} waited with {idle} GPUs idle (it needs {gpus[k]})")
            if not due[k]:
                continue
            held = ahead(rank_of[k])
            if held < need[job.id]:
                blocked[k] = blocked[k] + length
                if idle < gpus[k]:
                    why = ("jobs behind it kept GPUs after being preempted (they stop at iteration ends)"
                           if late_preemption else "jobs behind it held the GPUs it needed")
                    fail("(A3)" if late_preemption else "(A2)", t, k,
                         f"{job.id} waited while the jobs ahead of it held {held} GPUs (the proof needs "
                         f"{need[job.id]}): {why}")
    return {j.id: blocked[k] for k, j in enumerate(jobs)}, failures
