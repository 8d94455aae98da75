"""The recurring-workload generator: seeded, valid, recurring, and calibrated to the published
Philly and Helios statistics (checked side by side with stated tolerances)."""

import math
import os

import numpy as np
import pytest

from asrpt.errors import InvalidParameterError
from asrpt.sizes import processing_times
from asrpt.traces.base import shared_path
from asrpt.workloads import (PROFILES, get_profile, helios_statistics, make_workload,
                             philly_statistics, recurring_workload, workload_statistics)

PHILLY_CSV = shared_path("traces", "philly-pollux-processed", "philly.csv")
HELIOS_CSV = shared_path("traces", "helios-cluster-summary", "helios_cluster_summary.csv")


@pytest.fixture(scope="module")
def philly_like():
    return recurring_workload(20000, seed=0)


def max_diff(a, b):
    return max(abs(x - y) for x, y in zip(a, b))


def side_by_side(rows):
    """Print the comparison (shown with -s or on failure) and return it."""
    lines = [f"{'statistic':<28}{'generated':>14}{'published':>14}{'tolerance':>22}"]
    lines += [f"{name:<28}{gen:>14.4g}{pub:>14.4g}{tol:>22}" for name, gen, pub, tol in rows]
    print("\n".join(lines))
    return rows


def test_same_arguments_same_instance_and_another_seed_differs():
    a = recurring_workload(300, seed=7, cluster="4x8")
    assert recurring_workload(300, seed=7, cluster="4x8") == a
    b = recurring_workload(300, seed=8, cluster="4x8")
    assert [j.iterations for j in a.jobs] != [j.iterations for j in b.jobs]
    assert a.metadata["family"] == "recurring" and a.metadata["seed"] == 7
    assert a.metadata["params"]["n_jobs"] == 300 and a.metadata["params"]["cluster"] == "4x8"


def test_load_changes_the_arrival_times_only():
    low = recurring_workload(400, seed=2, load=0.5, cluster="4x8")
    high = recurring_workload(400, seed=2, load=1.0, cluster="4x8")
    for a, b in zip(low.jobs, high.jobs):
        assert (a.iterations, a.group, a.user, a.model, a.parallelism) == (b.iterations, b.group, b.user,
                                                                            b.model, b.parallelism)
    assert low.jobs[-1].arrival > high.jobs[-1].arrival
    for inst, load in ((low, 0.5), (high, 1.0)):
        span = inst.jobs[-1].arrival - inst.jobs[0].arrival
        gpu_time = sum(j.gpus * p for j, p in zip(inst.jobs, processing_times(inst)))
        assert gpu_time / (inst.cluster.total_gpus * span) == pytest.approx(load, rel=1e-6)
        assert inst.metadata["offered_load"] == pytest.approx(load, rel=1e-6)


def test_jobs_are_valid_recurring_dnn_jobs():
    inst = recurring_workload(500, seed=1, cluster="4x8")
    arrivals = [j.arrival for j in inst.jobs]
    assert arrivals == sorted(arrivals) and arrivals[0] == 0.0
    assert inst.jobs[0].meta["submitted"] >= 1506902400.0  # time 0 is 2017-10-02 00:00 UTC
    assert [j.id for j in inst.jobs] == [f"j{i}" for i in range(500)]
    groups = {}
    for j in inst.jobs:
        assert not j.is_abstract and j.iterations >= 1 and j.parallelism.gpus == j.gpus
        assert j.user and j.group and j.dataset and set(j.meta) == {"submitted", "lr"}
        assert j.meta["submitted"] - j.arrival == pytest.approx(inst.jobs[0].meta["submitted"])
        sig = (j.user, j.model, j.dataset, j.parallelism, j.batch_size, j.meta["lr"])
        assert groups.setdefault(j.group, sig) == sig  # a group is one configuration of one user
    users = {}
    for g, sig in groups.items():
        users.setdefault(sig[0], set()).add(g)
    assert len(groups) < 500 and all(len(gs) >= 1 for gs in users.values())


def test_without_drift_noise_or_failures_a_group_always_runs_the_same_iterations():
    inst = recurring_workload(300, seed=3, cluster="4x8", sigma_drift=0.0, sigma_within=0.0,
                              fail_fraction=0.0, gpu_slope=0.0)
    per_group = {}
    for j in inst.jobs:
        per_group.setdefault(j.group, set()).add(j.iterations)
    assert all(len(v) == 1 for v in per_group.values()) and len(per_group) < 300


def test_drift_makes_consecutive_runs_of_a_group_alike():
    """AR(1) drift: consecutive runs of a group are correlated beyond the group's own level."""
    inst = recurring_workload(3000, seed=4, sigma_drift=1.0, drift_corr=0.9, sigma_within=0.05,
                              fail_fraction=0.0)
    runs = {}
    for j in inst.jobs:
        runs.setdefault(j.group, []).append(math.log(j.iterations))
    pairs = []
    for values in runs.values():
        if len(values) >= 10:
            centred = np.asarray(values) - np.mean(values)
            pairs += list(zip(centred[:-1], centred[1:]))
    a, b = np.asarray(pairs).T
    assert np.corrcoef(a, b)[0, 1] > 0.5


def test_recurrence_and_one_off_jobs():
    inst = recurring_workload(2000, seed=5, cluster="4x8")
    s = workload_statistics(inst)
    expected = 1 - 0.2 - inst.metadata["groups"] / 2000  # recurring jobs minus each group's first
    assert s["recurring_share"] == pytest.approx(expected, abs=0.03)
    once = recurring_workload(200, seed=5, cluster="4x8", one_off_fraction=1.0)
    assert workload_statistics(once)["recurring_share"] == 0.0 and once.metadata["groups"] == 0


def test_gpu_counts_are_truncated_to_the_cluster():
    inst = recurring_workload(400, seed=6, cluster="1x2")
    assert {j.gpus for j in inst.jobs} <= {1, 2} and 2 in {j.gpus for j in inst.jobs}


def test_calibration_hits_the_population_targets_exactly():
    for name in ("philly", "helios-venus"):
        inst = recurring_workload(50, seed=0, profile=name)
        cal, prof = inst.metadata["calibration"], PROFILES[name]
        assert cal["mean_duration"] == pytest.approx(prof["duration_mean"], rel=1e-6)
        assert cal["sigma_group"] > 0 and cal["reference_draws"] == 200_000


@pytest.mark.parametrize("kwargs, text", [
    (dict(load=0), "'load' parameter of recurring_workload"),
    (dict(profile="helio"), "'profile' parameter"),
    (dict(fail_fraction=0.6), "'fail_fraction' parameter"),
    (dict(tail_df=2), "'tail_df' parameter"),
    (dict(gpu_slope=3.0), "the noise alone gives a mean run time"),
])
def test_bad_parameters(kwargs, text):
    with pytest.raises(InvalidParameterError, match=text):
        recurring_workload(10, **kwargs)


def test_make_workload_spec():
    assert make_workload("recurring:n_jobs=25:seed=3:cluster=\"2x8\"") == recurring_workload(
        25, seed=3, cluster="2x8")
    with pytest.raises(InvalidParameterError, match="workload 'recurring': .*'nope'"):
        make_workload("recurring:nope=1")


# -- the published statistics, side by side ---------------------------------------------------------

def test_philly_statistics_side_by_side(philly_like):
    """20,000 jobs (seed 0) against Philly's 82,247. Tolerances: run-time median 20 %; mean and
    p99 a factor 2 and 4: the population mean is calibrated exactly (see
    test_calibration_hits_the_population_targets_exactly), but with a tail this heavy the mean
    and p99 of 20,000 draws sit below their population values in most samples (seeds 0-5: mean
    6,800-13,400 s, p99 73,000-191,000 s); p10-p90 a factor 2.5; share of 1-GPU jobs 3 points,
    of 2, 4 and 8 GPUs a factor 2, of >= 16 GPUs under 1 %; mean GPUs 15 %; submission shares
    per hour and weekday within 1 point."""
    s = workload_statistics(philly_like)
    p = get_profile("philly")
    total = sum(p["gpu_counts"].values())
    share = {g: c / total for g, c in p["gpu_counts"].items()}
    gpu_mean = sum(g * q for g, q in share.items())
    big = sum(v for g, v in s["gpu_shares"].items() if g >= 16)
    rows = side_by_side(
        [("run time median (s)", s["duration_median"], p["duration_median"], "20 %"),
         ("run time mean (s)", s["duration_mean"], p["duration_mean"], "x 2")]
        + [(f"run time p{q} (s)", s["duration_percentiles"][q], p["duration_percentiles"][q],
            "x 4" if q == 99 else "x 2.5") for q in (10, 25, 75, 90, 99)]
        + [(f"share of {g}-GPU jobs", s["gpu_shares"].get(g, 0.0), share[g],
            "3 points" if g == 1 else "x 2") for g in (1, 2, 4, 8)]
        + [(">= 16-GPU share", big, sum(v for g, v in share.items() if g >= 16), "< 1 %"),
           ("mean GPUs per job", s["gpu_mean"], gpu_mean, "15 %"),
           ("max |hour share diff|", max_diff(s["hour_shares"], p["hour_shares"]), 0, "0.01"),
           ("max |weekday share diff|", max_diff(s["weekday_shares"], p["weekday_shares"]), 0, "0.01")])
    assert rows[0][1] == pytest.approx(rows[0][2], rel=0.2)
    assert rows[1][2] / 2 <= rows[1][1] <= rows[1][2] * 2
    for name, gen, pub, tol in rows[2:7]:
        factor = float(tol.split()[-1])
        assert pub / factor <= gen <= pub * factor, name
    assert abs(s["gpu_shares"][1] - share[1]) <= 0.03
    for g in (2, 4, 8):
        assert share[g] / 2 <= s["gpu_shares"][g] <= share[g] * 2, g
    assert big < 0.01
    assert s["gpu_mean"] == pytest.approx(gpu_mean, rel=0.15) and s["gpu_median"] == 1
    assert rows[-2][1] <= 0.01 and rows[-1][1] <= 0.01


@pytest.mark.parametrize("name", ["helios", "helios-venus"] + [
    pytest.param(n, marks=pytest.mark.slow) for n in ("helios-earth", "helios-saturn", "helios-uranus")])
def test_helios_statistics_side_by_side(name):
    """10,000 jobs against the Helios summary: run-time median 25 %, mean a factor 2 (heavy tail,
    see the Philly test), mean GPUs 30 % (GPU counts are drawn per group, so a few popular large
    groups move the mean: seeds 0-5 of helios-uranus give 3.5-5.1 for 4.04), median GPUs 1."""
    s = workload_statistics(recurring_workload(10000, seed=1, profile=name))
    p = get_profile(name)
    rows = side_by_side([("run time median (s)", s["duration_median"], p["duration_median"], "25 %"),
                         ("run time mean (s)", s["duration_mean"], p["duration_mean"], "x 2"),
                         ("mean GPUs per job", s["gpu_mean"], p["gpu_mean"], "30 %"),
                         ("median GPUs per job", s["gpu_median"], p["gpu_median"], "exact")])
    assert rows[0][1] == pytest.approx(rows[0][2], rel=0.25)
    assert rows[1][2] / 2 <= rows[1][1] <= rows[1][2] * 2
    assert rows[2][1] == pytest.approx(rows[2][2], rel=0.3)
    assert rows[3][1] == rows[3][2]


@pytest.mark.skipif(not os.path.exists(PHILLY_CSV), reason="shared Philly trace not present")
def test_shipped_philly_profile_is_the_trace():
    s = philly_statistics(PHILLY_CSV)
    p = PROFILES["philly"]
    assert s["jobs"] == 82247
    for key in ("duration_median", "duration_mean", "duration_min", "duration_max"):
        assert s[key] == pytest.approx(p[key], rel=1e-12), key
    for q, v in p["duration_percentiles"].items():
        assert s["duration_percentiles"][q] == pytest.approx(v, rel=1e-6)
    assert {g: c for g, c in s["gpu_counts"].items() if g not in (12, 24)} == p["gpu_counts"]
    assert s["hour_shares"] == p["hour_shares"] and s["weekday_shares"] == p["weekday_shares"]


@pytest.mark.skipif(not os.path.exists(HELIOS_CSV), reason="shared Helios summary not present")
def test_shipped_helios_profiles_are_the_summary():
    for name, row in (("helios-venus", "Venus"), ("helios-earth", "Earth"), ("helios-saturn", "Saturn"),
                      ("helios-uranus", "Uranus"), ("helios", "total")):
        s = helios_statistics(HELIOS_CSV, row)
        p = PROFILES[name]
        assert (s["duration_mean"], s["duration_median"], s["gpu_mean"], s["gpu_median"]) == (
            p["duration_mean"], p["duration_median"], p["gpu_mean"], p["gpu_median"])
