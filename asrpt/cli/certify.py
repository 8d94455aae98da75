"""``asrpt certify FILE``: run A-SRPT under Theorem 1's assumptions and check its certificate.

Runs A-SRPT with static predictions, backfilling, preemption and zero preemption cost (the
placement stretch beta is measured), then checks the per-job and total certificate of Theorem 1
(proofs/theorem1.md, Proposition 1) and the inequalities of the proof
(:mod:`asrpt.theory.certificate`), exactly for exact data (``--exact``). Exit status 0 when the
certificate holds, 1 when it fails, 2 on bad input. The ``--adaptive``, ``--strict`` and
``--preemption-cost`` options leave the theorem's assumptions (for exploration): the certificate is
still checked and ``covered`` says it is outside them.
"""

from __future__ import annotations

from ..predict.base import ADAPTIVE_RULES
from ..theory.certificate import certify, run_asrpt
from ..theory.guarded import certify_guarded, run_guarded
from ._common import add_instance, add_json, add_plot, emit_json, format_table, load_from_args, nonneg_float, write_plot

_ROWS = ("per_job", "total", "lemma2", "theorem", "lemma3", "lemma3_premise", "running", "per_job_refined")


def register(sub) -> None:
    p = sub.add_parser(
        "certify",
        help="run A-SRPT under Theorem 1's assumptions and check its certificate",
        description="Run A-SRPT on an instance under Theorem 1's assumptions (static predictions, "
                    "backfilling, preemption, zero preemption cost; placement stretch measured) "
                    "and check the certificate: per job C_j <= a_j + beta_j P*_j + beta mu_under "
                    "rho_j C~_j, in total sum C_j <= beta LB1 + beta rho mu_under sum C~_j, and the "
                    "proof's other inequalities, each with its slack. Exit status 0 when the "
                    "certificate holds, 1 when it fails, 2 on bad input.",
    )
    add_instance(p)
    p.add_argument("--predictor", default="instance", metavar="SPEC",
                   help='where predictions come from: "instance" (the file\'s predicted_* fields, '
                        'the truth where absent; default), "oracle", "noisy:sigma=S:clip=C", ...')
    p.add_argument("--placement", default=None, metavar="NAME",
                   help="placement method for starting jobs (default: the simulator's best_fit)")
    p.add_argument("--seed", type=int, default=0, help="seed of the run (noisy predictors)")
    p.add_argument("--tolerance", type=float, default=1e-9, metavar="TOL",
                   help="relative tolerance of float comparisons (exact data are compared exactly)")
    p.add_argument("--adaptive", choices=ADAPTIVE_RULES, default="off",
                   help="the adaptive step (default off: the theorem's setting)")
    p.add_argument("--strict", action="store_true",
                   help="strict allocation, no backfilling (outside the theorem)")
    p.add_argument("--preemption-cost", type=nonneg_float, default=0, metavar="SECONDS",
                   help="restart cost after a preemption (default 0: the theorem's setting)")
    p.add_argument("--preemption-point", choices=("immediate", "iteration"), default="immediate",
                   help="where a preempted DNN job stops: at once (default, the theorem's setting) "
                        "or at its next iteration boundary (as the simulator does; outside the theorem)")
    p.add_argument("--theorem", type=int, choices=(1, 2, 3), default=1,
                   help="1: the reference model's A-SRPT (fluid virtual machine, virtual order; default); "
                        "2: the default guarded A-SRPT, guided by --virtual (default envelope; proofs/theorem2.md); "
                        "3: guarded A-SRPT time-shared with prediction-free water-filling, the bound "
                        "that does not grow with prediction errors (proofs/theorem3.md)")
    p.add_argument("--lam", type=float, default=0.5, metavar="L",
                   help="Theorem 3: A-SRPT's share of time in (0, 1) (default 0.5; read as the decimal it spells)")
    p.add_argument("--kappa", type=float, default=16.0, metavar="K",
                   help="Theorem 2: the guard's kappa (>= 1; default 16, the policy's)")
    p.add_argument("--share", type=float, default=0.5, metavar="S", help="Theorem 2: the guard's GPU share in (0, 1]")
    p.add_argument("--epsilon", type=float, default=None, metavar="E",
                   help="Theorem 2: the hysteresis among jobs that are not overdue, in [0, 1) (default: the "
                        "policy's, 0.5; the theorem allows any order among them)")
    p.add_argument("--virtual", choices=("envelope", "gang", "fluid"), default="envelope",
                   help="Theorems 2 and 3: the virtual machine guiding the guard (default envelope, the "
                        "policy's, with a proven ratio to the optimum, Corollary 2; gang: no such ratio; "
                        "fluid: a ratio, but deadlines before a job could finish alone)")
    p.add_argument("--stretch", type=float, default=1.0, metavar="B",
                   help="Theorem 3: the robust copy's stretch bound beta-bar >= 1, fixed in advance (default 1)")
    p.add_argument("--jobs", action="store_true", help="include the per-job rows")
    add_json(p)
    add_plot(p, "a Gantt chart of the run beside its virtual SRPT schedule")
    p.set_defaults(func=run)


def _gantt_figure(instance, result):
    from ..plots import gantt
    from ..single.virtual import virtual_schedule

    return gantt(result, virtual=virtual_schedule(instance, predicted=True), cluster=instance.cluster)


def run(args) -> int:
    inst = load_from_args(args)
    if args.seed < 0:
        from ..errors import InvalidParameterError

        raise InvalidParameterError(f"--seed must be >= 0, got {args.seed}")
    if any(j.weight != 1 for j in inst.jobs):
        import sys

        print(f"note: {args.instance}: the certificate bounds the unweighted sum C_j; the jobs' "
              "weights are not used", file=sys.stderr)
    if args.epsilon is not None and args.theorem != 2:
        from ..errors import InvalidParameterError

        raise InvalidParameterError(f"--epsilon is Theorem 2's option (the guarded order's hysteresis); "
                                    f"--theorem {args.theorem} does not use it")
    if args.theorem in (2, 3):
        return _run_theorem2(args, inst)
    cost = args.preemption_cost
    cost = int(cost) if float(cost).is_integer() else cost
    result = run_asrpt(inst, predictor=args.predictor, placement=args.placement, seed=args.seed,
                       adaptive=args.adaptive, backfill=not args.strict, preemption=True,
                       preemption_cost=cost, preemption_point=args.preemption_point)
    cert = certify(inst, result, tolerance=args.tolerance)
    write_plot(args.plot, lambda: _gantt_figure(inst, result))
    if args.json:
        emit_json({"file": args.instance, **cert.to_dict(jobs=args.jobs)})
    else:
        verdict = "holds" if cert.holds else "FAILS"
        scope = "within" if cert.covered else "outside"
        print(f"Theorem 1 certificate for {args.instance}: {verdict} ({inst.n_jobs} jobs, "
              f"{cert.total_gpus} GPUs, {'exact' if cert.exact else 'float'} arithmetic, "
              f"{scope} the theorem's assumptions)")
        print(format_table(["quantity", "value"], [
            ["sum C_j (A-SRPT)", cert.total_completion_time], ["LB1", cert.lb1], ["LB2", cert.lb2],
            ["lower bound", cert.lower_bound], ["sum C~_j", cert.virtual_total], ["beta", cert.beta],
            ["rho", cert.rho], ["mu_over", cert.mu_over], ["mu_under", cert.mu_under], ["mu", cert.mu],
            ["beta (1 + rho mu)", cert.ratio_bound], ["bound", cert.bound],
            ["ALG / LB", cert.ratio_to_lb], ["flow time sum (C_j - a_j)", cert.flow_time],
            ["flow lower bound LB - sum a_j", cert.flow_lower_bound], ["flow ALG / LB", cert.flow_ratio_to_lb]]))
        _print_checks(cert)
        if args.jobs:
            print()
            print(format_table(
                ["job", "a", "g", "C", "P*", "C~", "wait", "blocked", "bound", "slack", "holds"],
                [[j.id, j.arrival, j.gpus, j.completion, j.processing_time, j.virtual_completion,
                  j.waiting, j.blocked, j.bound, j.slack, "yes" if j.holds else "NO"] for j in cert.jobs]))
    return 0 if cert.holds else 1


def _run_theorem2(args, inst) -> int:
    from ..errors import InvalidParameterError

    if args.adaptive != "off" or args.strict or args.preemption_cost or args.preemption_point != "immediate":
        raise InvalidParameterError(f"--theorem {args.theorem} runs under its assumptions only: drop --adaptive, "
                                    "--strict, --preemption-cost and --preemption-point")
    from ..sizes import integral

    kappa = integral(args.kappa)
    if args.theorem == 3:
        return _run_theorem3(args, inst, kappa)
    result = run_guarded(inst, predictor=args.predictor, kappa=kappa, share=args.share, seed=args.seed,
                         placement=args.placement, virtual=args.virtual, epsilon=args.epsilon)
    cert = certify_guarded(inst, result, tolerance=args.tolerance)
    write_plot(args.plot, lambda: _gantt_figure(inst, result))
    return _report(args, inst, cert, 2, "the theorem's assumptions", [
        ["sum C_j (A-SRPT)", cert.total_completion_time], ["lower bound", cert.lower_bound],
        [f"sum C~_j ({cert.virtual} machine)", cert.virtual_total], ["kappa", cert.kappa], ["share", cert.share],
        ["epsilon", cert.epsilon],
        ["ratio bound (Corollary 2)", "not proven (gang machine)" if cert.ratio_bound is None else cert.ratio_bound],
        ["rho'", cert.rho_prime], ["beta", cert.beta], ["mu_over", cert.mu_over], ["mu_under", cert.mu_under],
        ["overdue jobs", cert.overdue_jobs], ["flow time sum (C_j - a_j)", cert.flow_time],
        ["flow lower bound LB - sum a_j", cert.flow_lower_bound], ["flow ALG / LB", cert.flow_ratio_to_lb],
        ["virtual flow time", cert.virtual_flow_time]])


def _report(args, inst, cert, theorem: int, assumptions: str, rows) -> int:
    """Theorems 2 and 3: the JSON payload, or the headline, the quantities and the checks."""
    if args.json:
        emit_json({"file": args.instance, **cert.to_dict()})
        return 0 if cert.holds else 1
    verdict = "holds" if cert.holds else "FAILS"
    scope = "within" if cert.covered else "outside"
    print(f"Theorem {theorem} certificate for {args.instance}: {verdict} ({inst.n_jobs} jobs, "
          f"{cert.total_gpus} GPUs, {'exact' if cert.exact else 'float'} arithmetic, {scope} {assumptions})")
    print(format_table(["quantity", "value"], rows))
    _print_checks(cert)
    return 0 if cert.holds else 1


def _run_theorem3(args, inst, kappa) -> int:
    from ..errors import InvalidParameterError
    from ..theory.robust import certify_robust, run_robust

    if not 0 < args.lam < 1:
        raise InvalidParameterError(f"--lam must be in (0, 1), got {args.lam}")
    if not args.stretch >= 1:
        raise InvalidParameterError(f"--stretch must be >= 1, got {args.stretch}")
    run_ = run_robust(inst, lam=args.lam, predictor=args.predictor, kappa=kappa, share=args.share,
                      seed=args.seed, placement=args.placement, virtual=args.virtual, stretch=args.stretch)
    cert = certify_robust(inst, run_, tolerance=args.tolerance)
    write_plot(args.plot, lambda: _gantt_figure(inst, run_.copy))
    return _report(args, inst, cert, 3, f"Theorem 2's assumptions (the A-SRPT copy; lam = {cert.lam})", [
        ["sum C_j (combination)", cert.total_completion_time], ["lower bound", cert.lower_bound],
        ["ALG / LB", cert.ratio_to_lb], ["sum C_j^cons (A-SRPT copy, dilated)", cert.consistent_total],
        ["sum C_j^rob (water-filling copy)", cert.robust_total], ["A-SRPT copy / LB", cert.consistent_ratio],
        ["water-filling copy / LB", cert.robust_ratio], ["robust bound 9 beta-bar / (1 - lam)", cert.robust_ratio_bound],
        ["consistent bound (Corollary 2 / lam)", "not proven" if cert.consistent_ratio_bound is None
         else cert.consistent_ratio_bound],
        ["flow time sum (C_j - a_j)", cert.flow_time], ["flow lower bound LB - sum a_j", cert.flow_lower_bound],
        ["flow ALG / LB", cert.flow_ratio_to_lb]])


def _print_checks(cert) -> None:
    """The inequalities with their slacks, and the premises the run does not meet (which, where, when)."""
    print()
    print(format_table(["inequality", "lhs", "rhs", "slack", "holds", "job"],
                       [[q.name, q.lhs, q.rhs, q.slack, "yes" if q.holds else "NO", q.job or ""]
                        for q in cert.inequalities]))
    line = getattr(cert, "not_covered", "")
    if line:
        print(f"\n{line}")
