"""asrpt.dnn.calibration: the measurements, the held-out split, the shipped fit and its error.

The error pins below are the held-out relative errors of the shipped parameters
(``asrpt/dnn/data/calibration.json``) with a small margin: a change to the performance model or to
the fitted values that makes any job's median or worst held-out error grow beyond them fails here.
Tests needing the traces skip when ``$ASRPT_SHARED/traces`` is absent.
"""

import dataclasses
import math

import numpy as np
import pytest

from asrpt.dnn import calibration as cal
from asrpt.dnn import perf
from asrpt.dnn.calibration import (JOB_MAP, PerfParams, calibration_data, default_traces_dir,
                                   evaluate, load_gavel, load_pollux, perf_params, predict)
from asrpt.dnn.parallel import Configuration, plan_for
from asrpt.errors import InvalidParameterError, TraceError
from asrpt.instance import Cluster, Job, Parallelism, Server

# (median, worst) held-out relative error pinned per fitted job; shipped values in the comments.
PINNED = {
    "gavel/ResNet-18 [K80]": (0.15, 0.22),          # 0.129, 0.204
    "gavel/ResNet-18 [P100]": (0.25, 0.47),         # 0.219, 0.435
    "gavel/ResNet-18 [V100-16GB]": (0.09, 0.14),    # 0.077, 0.127
    "gavel/ResNet-50 [K80]": (0.29, 0.33),          # 0.258, 0.303
    "gavel/ResNet-50 [P100]": (0.14, 0.15),         # 0.117, 0.130
    "gavel/ResNet-50 [V100-16GB]": (0.05, 0.05),    # 0.036, 0.037
    "pollux/bert [T4]": (0.06, 0.47),               # 0.046, 0.440
    "pollux/cifar10 [T4]": (0.08, 0.51),            # 0.062, 0.472
    "pollux/imagenet [T4]": (0.06, 0.43),           # 0.044, 0.396
}


@pytest.fixture(scope="module")
def rows():
    root = default_traces_dir()
    if root is None:
        pytest.skip("shared traces not found (set ASRPT_SHARED)")
    return load_pollux(root) + load_gavel(root)


def test_loaders_read_every_row(rows):
    count = {}
    for r in rows:
        count[(r.job, r.profile)] = count.get((r.job, r.profile), 0) + 1
    # row counts from pollux-throughput-profiles/SOURCE.txt
    assert count[("pollux/bert", "placements")] == 540
    assert count[("pollux/cifar10", "placements")] == 1183
    assert count[("pollux/imagenet", "placements")] == 864
    assert count[("pollux/bert", "scalability")] == 180
    assert count[("pollux/cifar10", "scalability")] == 329
    assert count[("pollux/imagenet", "scalability")] == 288
    # Gavel: ResNet-18 has 5 batch sizes, ResNet-50 4, on 3 GPU types
    assert count[("gavel/ResNet-18", "single")] == 15 and count[("gavel/ResNet-50", "single")] == 12
    assert {r.model for r in rows} == {"resnet50", "resnet18_cifar", "bert-base"}
    bert = next(r for r in rows if r.job == "pollux/bert")
    assert bert.overrides == (("seq_len", 384),) and bert.precision == "fp32"
    assert all(r.gpu_type == "T4" and max(r.counts) <= 4 for r in rows if r.source == "pollux")


def test_split_holds_out_whole_placements(rows):
    for job in ("pollux/bert", "pollux/cifar10", "pollux/imagenet"):
        place = [r for r in rows if r.job == job and r.profile == "placements"]
        held = {r.counts for r in place if r.held_out}
        kept = {r.counts for r in place if not r.held_out}
        assert held and kept and not held & kept
        assert 0.25 < len(held) / (len(held) + len(kept)) < 0.4
    gavel_multi = [r for r in rows if r.source == "gavel" and r.profile != "single"]
    assert gavel_multi and all(r.held_out and not r.fitted for r in gavel_multi)
    # the split is deterministic
    again = load_pollux(default_traces_dir())
    assert [r.held_out for r in again] == [r.held_out for r in rows if r.source == "pollux"]


def test_shipped_errors_are_reproduced_and_within_pins(rows):
    ev = evaluate(rows)
    shipped = calibration_data()["errors"]["held_out"]
    assert set(ev["held_out"]) == set(shipped)
    for label, e in ev["held_out"].items():
        assert e["rows"] == shipped[label]["rows"]
        assert e["median"] == pytest.approx(shipped[label]["median"], abs=2e-4)
        assert e["worst"] == pytest.approx(shipped[label]["worst"], abs=2e-4)
    for label, (med, worst) in PINNED.items():
        assert ev["held_out"][label]["median"] <= med, label
        assert ev["held_out"][label]["worst"] <= worst, label


def test_shipped_file_records_fit_and_split():
    data = calibration_data()
    assert data["format"] == "asrpt-calibration/1"
    # the shipped calibration plus the shipped kernel models (asrpt/dnn/data/kernels-*.json)
    assert PerfParams.from_dict(data["params"]) == dataclasses.replace(perf_params(), kernels=())
    assert perf_params().kernel_model("H200") is not None
    assert perf_params().kernel_model("V100") is None
    assert data["fit"]["free_parameters"] == list(cal.FREE_PARAMETERS)
    assert "held out" in data["fit"]["split"]
    assert set(data["fit"]["jobs"]) == set(JOB_MAP)
    assert "pollux/yolov3" in data["fit"]["left_out"]
    assert data["fit"]["rows"]["held_out"] > 1000


@pytest.fixture
def no_memory_limit(monkeypatch):
    from asrpt.dnn import parallel

    monkeypatch.setattr(parallel, "MEMORY_USABLE_FRACTION", 10.0)
    perf.clear_caches()
    yield
    perf.clear_caches()   # plans built without the limit must not outlive this test


def test_vectorised_model_equals_the_performance_model(rows, no_memory_limit):
    """The fit's fast predictor is the model itself: compare with perf row by row.

    The memory check is lifted: Gavel ran ResNet-50 at batch 128 in fp32 on 12-16 GB GPUs, which
    the activation estimate of the zoo graph (plus the 10% reserve) puts just over the limit."""
    params = perf_params()
    sample = rows[::61] + [r for r in rows if r.source == "gavel"][::7]
    fast = predict(sample, params)
    from asrpt.dnn.zoo import layer_graph

    for r, f in zip(sample, fast):
        g = r.gpus
        G = layer_graph(r.model, **dict(r.overrides))
        plan = plan_for(G, Configuration(g, 1, 1, r.local_batch * g), r.gpu_type, r.precision,
                        params)
        size = max(r.servers_per_type, max(r.counts))
        cluster = Cluster(tuple(Server(size, r.gpu_type) for _ in r.counts))
        A = np.array([h for h, n in enumerate(r.counts) for _ in range(n)]).reshape(g, 1, 1)
        slow = perf._evaluate(plan, A, perf._cluster_info(cluster), params, 0.0).model_time
        assert f == pytest.approx(slow, rel=1e-9), r
        if not r.overrides:   # through the public API with a zoo job
            job = Job("c", 0, g, model=r.model, parallelism=Parallelism(g, 1, 1),
                      batch_size=r.local_batch * g, precision=r.precision, iterations=1)
            a = {(i, 0, 0): int(A[i, 0, 0]) for i in range(g)}
            assert perf.iteration_time(job, a, cluster, params) == pytest.approx(f, rel=1e-9)


def test_fit_improves_on_a_bad_start(rows):
    sub = [r for r in rows if r.job == "pollux/cifar10"][::20]
    bad = PerfParams(dense_efficiency=0.9, conv_efficiency=0.05, layer_overhead=1e-3)
    before = evaluate(sub, bad)["train"]["pollux/cifar10 [T4]"]["median"]
    out = cal.fit(sub, start=bad, max_nfev=40)
    assert out["train"]["pollux/cifar10 [T4]"]["median"] < before
    assert out["cost"] >= 0 and out["nfev"] <= 40 * (len(cal.FREE_PARAMETERS) + 1)


def test_fit_needs_training_rows(rows):
    held = [r for r in rows if r.held_out][:5]
    with pytest.raises(InvalidParameterError, match="no training rows"):
        cal.fit(held)


def test_missing_traces_are_trace_errors(tmp_path):
    with pytest.raises(TraceError, match="traces folder not found"):
        load_pollux(str(tmp_path / "nowhere"))
    (tmp_path / "pollux-throughput-profiles" / "imagenet").mkdir(parents=True)
    with pytest.raises(TraceError, match="cannot read"):
        load_pollux(str(tmp_path))
    with pytest.raises(TraceError, match="cannot read"):
        load_gavel(str(tmp_path))


def test_params_validation():
    with pytest.raises(InvalidParameterError, match="dense_efficiency must be in"):
        PerfParams(dense_efficiency=1.5)
    with pytest.raises(InvalidParameterError, match="overlap must be in"):
        PerfParams(overlap=-0.1)
    with pytest.raises(InvalidParameterError, match="inter_efficiency must be in"):
        cal.NetworkParams(inter_efficiency=0)
    p = perf_params()
    assert PerfParams.from_dict(p.to_dict()) == p
    assert p.factor("H100") == 1.0 and p.network_for("H100") == cal.DEFAULT_NETWORK
    assert p.factor("T4") != 1.0 and p.network_for("T4") != cal.DEFAULT_NETWORK


@pytest.mark.slow
def test_full_refit_reproduces_the_shipped_errors(rows):
    out = cal.fit(rows, start=PerfParams())
    shipped = calibration_data()["errors"]["held_out"]
    for label, e in out["held_out"].items():
        assert math.isclose(e["median"], shipped[label]["median"], abs_tol=0.02), label
