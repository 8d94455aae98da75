"""QSSF (Helios; Hu et al., SC'21): predicted GPU-time order, head-of-line blocking versus first
fit, and the history-based default estimator."""

from asrpt.instance import Cluster, Instance, Job
from asrpt.policies import make_policy
from asrpt.sim import simulate


def job(id_, arrival, gpus, p, **kw):
    return Job(id_, arrival, gpus, processing_time=p, **kw)


# One server, 4 GPUs; predictions from the instance. R (0, 3 GPUs, P=4, pred 4: priority 12),
# H (1, 4 GPUs, P=1, pred 1: priority 4), S (1, 1 GPU, P=2, pred 5: priority 5).
BLOCKING = Instance(Cluster.homogeneous(1, 4), (
    job("R", 0, 3, 4, predicted_processing_time=4),
    job("H", 1, 4, 1, predicted_processing_time=1),
    job("S", 1, 1, 2, predicted_processing_time=5)))


def test_strict_head_of_line_blocking():
    # t=1: queue H (4) then S (5); 1 GPU idle. H does not fit and blocks S.
    # t=4: R done: H runs 4-5 (S cannot start beside it). t=5: S runs 5-7.
    res = simulate(BLOCKING, "qssf:predictor=instance", check_invariants=True)
    assert res.completion_times == {"R": 4, "H": 5, "S": 7}
    assert res.summary["preemptions"] == 0


def test_first_fit_variant_skips_the_blocked_head():
    # qssf-ff: at t=1 S takes the idle GPU (1-3); H still starts at 4 (it needs all 4 GPUs).
    res = simulate(BLOCKING, "qssf-ff:predictor=instance", check_invariants=True)
    assert res.completion_times == {"R": 4, "H": 5, "S": 3}


def test_ties_go_to_the_smaller_gpu_demand():
    # One server, 2 GPUs. Priorities at t=0: Z (2 GPUs, pred 1) 2, X (2 GPUs, pred 2) 4,
    # Y (1 GPU, pred 4) 4. X and Y tie; Helios sorts by GPU count before priority, so Y goes
    # first. Z runs 0-1; at t=1 Y starts and X (2 GPUs, 1 idle) waits behind it until 5.
    inst = Instance(Cluster.homogeneous(1, 2), (
        job("Z", 0, 2, 1, predicted_processing_time=1),
        job("X", 0, 2, 2, predicted_processing_time=2),
        job("Y", 0, 1, 4, predicted_processing_time=4)))
    res = simulate(inst, "qssf:predictor=instance", check_invariants=True)
    assert res.completion_times == {"Z": 1, "Y": 5, "X": 7}


# One server, 2 GPUs, no predictions in the instance. A (0, 2 GPUs, group g, P=3),
# U (1, 1 GPU, group u, P=2), W (3, 2 GPUs, group g, P=1).
HISTORY = Instance(Cluster.homogeneous(1, 2), (
    job("A", 0, 2, 3, group="g"), job("U", 1, 1, 2, group="u"), job("W", 3, 2, 1, group="g")))


def test_default_estimator_learns_from_completed_jobs_of_the_same_group():
    # U arrives before anything completed: prior 3600 s, priority 3600. At t=3 A completes and
    # is observed before W (same instant) is predicted: W gets group g's mean, 3 s (priority 6),
    # so W runs 3-4 and U 4-6.
    res = simulate(HISTORY, "qssf", check_invariants=True)
    assert res.completion_times == {"A": 3, "W": 4, "U": 6}
    # With a constant 3600 s estimate the order is by GPU count: U 3-5, then W 5-6.
    assert simulate(HISTORY, "qssf:predictor=constant").completion_times == {"A": 3, "U": 5, "W": 6}


def test_presets():
    assert make_policy("qssf").backfill is False and make_policy("qssf-ff").backfill is True
    assert make_policy("qssf").predictor == "group_mean" and not make_policy("qssf").clairvoyant
    assert not make_policy("qssf").work_conserving and make_policy("qssf-ff").work_conserving
    assert not make_policy("qssf").preemptive
