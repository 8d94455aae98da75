"""The lemmas behind Theorem 1 (proofs/): Lemma 2 (scaling and monotonicity of single-machine SRPT),
fact F1 as the certificate uses it (A-SRPT's order between jobs present together is the virtual
finishing order), and the corollaries of Theorem 1 (ratio 1 + rho mu; 3 beta with exact
predictions and g_j <= M/2 + 1). Exact arithmetic (ints and Fractions)."""

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt.policies.asrpt import ASRPT
from asrpt.policies.base import Decision
from asrpt.sim import simulate
from asrpt.single import srpt_schedule
from asrpt.testing.strategies import gang_instances, job_arrays
from asrpt.theory import certify_instance

SCALES = st.sampled_from([1, Fraction(3, 2), 2, Fraction(7, 3), 5])


@given(job_arrays(max_jobs=8, exact=True, allow_zero=True), SCALES)
def test_lemma2_scaling_sizes_by_c_costs_at_most_c_times(arrays, c):
    """Lemma 2 (a): SRPT_1(a, c p) <= c SRPT_1(a, p) for c >= 1 (stretch the schedule in time)."""
    releases, sizes = arrays
    base = srpt_schedule(releases, sizes).total_completion_time
    scaled = srpt_schedule(releases, [c * p for p in sizes]).total_completion_time
    assert scaled <= c * base


@given(job_arrays(max_jobs=8, exact=True, allow_zero=True), st.data())
def test_lemma2_srpt_is_monotone_in_the_sizes(arrays, data):
    """Lemma 2 (b): p <= p' componentwise implies SRPT_1(a, p) <= SRPT_1(a, p')."""
    releases, sizes = arrays
    extra = data.draw(st.lists(st.sampled_from([0, Fraction(1, 2), 1, 3]), min_size=len(sizes),
                               max_size=len(sizes)))
    bigger = [p + e for p, e in zip(sizes, extra)]
    assert srpt_schedule(releases, sizes).total_completion_time <= srpt_schedule(releases, bigger).total_completion_time


@given(job_arrays(max_jobs=8, exact=True), st.data())
def test_lemma2_predicted_cost_within_mu_over_of_the_true_cost(arrays, data):
    """Lemma 2 (c): sizes p~ <= mu_over q give SRPT_1(p~) <= mu_over SRPT_1(q)."""
    releases, sizes = arrays
    factors = data.draw(st.lists(st.sampled_from([Fraction(1, 4), Fraction(1, 2), 1, 2, Fraction(7, 2)]),
                                 min_size=len(sizes), max_size=len(sizes)))
    predicted = [p * f for p, f in zip(sizes, factors)]
    mu_over = max([1] + factors)
    assert (srpt_schedule(releases, predicted).total_completion_time
            <= mu_over * srpt_schedule(releases, sizes).total_completion_time)


class _Recorder(ASRPT):
    """A-SRPT that records, at every decision, the ids of its priority order."""

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self.orders_ = []

    def decide(self, view):
        decision = super().decide(view)
        order = list(decision.order)
        self.orders_.append((view.now, [j.id for j in order]))
        return Decision(order, decision.backfill, decision.wake_at)

    def report(self):
        return {**super().report(), "orders": list(self.orders_)}


@settings(max_examples=40)
@given(gang_instances(max_jobs=8, max_mu=16))
def test_fact_f1_asrpt_order_is_the_virtual_finishing_order(inst):
    """Fact F1 as the certificate uses it: with static predictions, A-SRPT's priority list at every
    decision is the active jobs sorted by their final virtual completion time C~ (ties by id)."""
    for virtual in ("fluid", "gang"):     # F1 holds for both virtual machines
        orders = []
        res = simulate(inst, _Recorder(adaptive="off", virtual=virtual, order="virtual"))
        c_virtual = res.policy_data["virtual_completion_times"]
        for now, order in res.policy_data["orders"]:
            orders.append(order)
            assert order == sorted(order, key=lambda i: c_virtual[i]), (virtual, now)
        assert orders


@settings(max_examples=40)
@given(gang_instances(max_jobs=8, max_mu=100))
def test_corollary_ratio_to_the_lower_bound_at_most_beta_one_plus_rho_mu(inst):
    """Theorem 1 in its ratio form, certified against LB = max(LB1, LB2) <= OPT."""
    cert = certify_instance(inst)
    assert cert.total_completion_time <= cert.ratio_bound * cert.lower_bound
    assert cert.ratio_bound == 1 + cert.rho * cert.mu


@settings(max_examples=40)
@given(st.data())
def test_corollary_three_with_exact_predictions_and_half_cluster_gangs(data):
    """Exact predictions and every g_j <= M/2 + 1 give rho <= 2 and sum C_j <= 3 LB <= 3 OPT."""
    m = data.draw(st.integers(1, 64))
    inst = data.draw(gang_instances(min_gpus=m, max_gpus=m, max_job_gpus=m // 2 + 1))
    cert = certify_instance(inst)
    assert cert.rho <= 2 and cert.mu == 1 and cert.ratio_bound <= 3
    assert cert.total_completion_time <= 3 * cert.lower_bound
