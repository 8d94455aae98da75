"""The open questions around Theorem 1, measured (proofs/open-questions.md): pinned instances
where the certificate, or Theorem 1's bound, fails once an assumption is dropped. These are
regression vectors of *findings*, not claims that the theorem holds outside its assumptions."""

from fractions import Fraction

from asrpt.instance import Cluster, Instance, Job, Server
from asrpt.offline.bruteforce import bruteforce_rigid_nonpreemptive
from asrpt.theory import certify, certify_instance, run_asrpt
from asrpt.theory.worstcase import evaluate


def test_regression_preemption_cost_breaks_the_certificate_and_the_bound():
    """One GPU: j0 (P = 2) at 0 is preempted by j1 (P = 1) at 1/2 and pays the restart cost c.
    With c = 5 the per-job and total certificates fail; with c = 10 the ratio to the
    non-preemptive optimum (5, feasible whatever the cost) is 2.9 > beta (1 + rho mu) = 2: a
    certified violation. A-SRPT preempts without weighing the restart."""
    inst = Instance(Cluster((Server(1),)), (Job("j0", 0, 1, processing_time=2),
                                            Job("j1", Fraction(1, 2), 1, processing_time=1)))
    c5 = certify_instance(inst, preemption_cost=5)
    assert not c5.covered and {"per_job", "total", "theorem"} <= set(c5.failures())
    assert c5.job("j0").restart == 5 and c5.job("j0").completion == 8
    assert bruteforce_rigid_nonpreemptive(inst).objective == 5
    e = evaluate(inst, preemption_cost=10)
    assert (e.alg, e.opt_upper, e.bound) == (Fraction(29, 2), 5, 2)
    assert e.violation and e.ratio == Fraction(29, 10)


def test_regression_strict_allocation_breaks_the_per_job_certificate():
    """Five GPUs, all jobs at 0: after the unit jobs, the order is j5 (1 GPU), j7 (5 GPUs), j6
    (2 GPUs); without backfilling j7 stops the selection and j6 waits although 4 GPUs are free
    (blocked time 3): C = 8 against the per-job bound 31/4. The total certificate still holds."""
    jobs = [Job(f"j{i}", 0, 1, processing_time=1) for i in range(5)]
    jobs += [Job("j5", 0, 1, processing_time=3), Job("j6", 0, 2, processing_time=3),
             Job("j7", 0, 5, processing_time=1)]
    inst = Instance(Cluster.homogeneous(5, 1), tuple(jobs))
    strict = certify_instance(inst, backfill=False)
    q = strict.inequality("per_job")
    assert not q.holds and q.job == "j6" and (q.lhs, q.rhs) == (8, Fraction(31, 4))
    assert strict.job("j6").blocked == 3 and strict.inequality("total").holds
    assert certify_instance(inst).failures() == []          # with backfilling: all holds


def test_regression_adaptive_step_breaks_lemma_2():
    """With the doubling step the virtual machine learns sizes late: a job predicted at half its
    size finishes virtually, is reopened when the real job reaches its prediction, and the virtual
    cost 3/4 exceeds mu_over LB2 = 1/2 for the final (exact) prediction. The certificate's per-job
    and total inequalities still hold here."""
    inst = Instance(Cluster.homogeneous(2, 1), (Job("j0", 0, 1, processing_time=1,
                                                    predicted_processing_time=Fraction(1, 2)),))
    run = run_asrpt(inst, adaptive="doubling")
    cert = certify(inst, run)
    assert cert.predictions == "final" and cert.mu_over == 1 and cert.lb2 == Fraction(1, 2)
    # the policy's own (resized) virtual machine: sum C~ = 3/4 > mu_over LB2 (a measurement of the
    # run's record; the certificate recomputes C~ from scratch and is not covered, (A1) failing)
    assert sum(run.policy_record.completion_times.values()) == Fraction(3, 4)
    assert cert.holds and not cert.covered and not cert.assumptions["(A1)"]
