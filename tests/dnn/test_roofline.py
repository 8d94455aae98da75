"""The kernel model of current GPUs (asrpt.dnn.roofline), its fit (asrpt.dnn.kernel_fit),
seq_len for DNN jobs, and the calibrate / model --seq-len --layers commands."""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest

from asrpt.cli import main
from asrpt.dnn import kernel_fit as kf
from asrpt.dnn.calibration import perf_params
from asrpt.dnn.layers import total_params
from asrpt.dnn.parallel import Configuration, job_plan, plan_for
from asrpt.dnn.perf import best_iteration_time, iteration_breakdown, consolidated_assignment
from asrpt.dnn.roofline import KernelParams, layer_class, shipped_kernel_params
from asrpt.dnn.validate import job_problems
from asrpt.dnn.zoo import layer_graph
from asrpt.errors import InvalidParameterError, TraceError
from asrpt.instance import Cluster, Instance, Job, load_instance, save_instance
from asrpt.traces.base import shared_path

SWEEP = shared_path("measurements", "h200", "h200_sweep.json")
needs_sweep = pytest.mark.skipif(not os.path.exists(SWEEP), reason="no shared H200 sweep")
H200 = Cluster.homogeneous(1, 8, "H200")


def _step(model, batch, seq_len=None, cluster=H200, params=None):
    return best_iteration_time(Job("j", 0, 1, model=model, iterations=1, batch_size=batch,
                                   seq_len=seq_len), cluster, params)


def test_mobilenet_depthwise_flops_are_the_hand_count():
    G = layer_graph("mobilenet_v2")
    d = G.nodes["features.1.conv.0.0"]          # 3x3 depthwise, 32 channels, 112x112
    assert d["groups"] == 32 and d["params"] == 32 * 9
    assert d["fwd_flops"] == 2 * 9 * 32 * 112 * 112
    assert layer_class("conv", d["groups"]) == "depthwise"
    # convolutions and classifier: torchvision's 300.8 M multiply-adds per 224x224 image
    mm = sum(d["fwd_flops"] for _, d in G.nodes(data=True) if d["type"] in ("conv", "linear"))
    assert abs(mm / 2 / 300.8e6 - 1) < 0.001
    # PyTorch's FlopCounterMode counts a grouped convolution's weight gradient as if it were
    # dense (not divided by the groups): redoing its count gives the 0.15x the issue saw
    torch_like = 0.0
    for _, d in G.nodes(data=True):
        f = d["fwd_flops"]
        if d["type"] == "conv":
            torch_like += f + f * d.get("groups", 1) + (f if d["bwd_flops"] == 2 * f else 0)
        elif d["type"] == "linear":
            torch_like += 3 * f
    ours = sum(d["fwd_flops"] + d["bwd_flops"] for _, d in G.nodes(data=True))
    assert 0.14 < ours / torch_like < 0.17


def test_shipped_kernel_model_prices_h200_and_h100_only():
    kps = shipped_kernel_params()
    assert set(kps) == {"H200", "H100"} and kps["H200"].gpu == "H200"
    p = perf_params()
    assert p.kernel_model("H200") is kps["H200"] and p.kernel_model("V100") is None
    # V100 untouched: the same time with and without the kernel models
    v100 = Cluster.homogeneous(1, 8, "V100")
    bare = dataclasses.replace(p, kernels=())
    assert _step("resnet50", 64, cluster=v100) == _step("resnet50", 64, cluster=v100, params=bare)
    assert _step("resnet50", 64) != _step("resnet50", 64, params=bare)


def test_launch_bound_floor_and_compute_bound_growth():
    kp = shipped_kernel_params()["H200"]
    small, big = _step("resnet18", 1), _step("resnet18", 256)
    # at batch 1 the host issues the kernels slower than the GPU runs them: time ~ host time
    job = Job("j", 0, 1, model="resnet18", iterations=1, batch_size=1)
    plan = job_plan(job, "H200")
    n_ops = plan._table.n_layers
    assert plan.fwd_time[0] == pytest.approx(n_ops * kp.host_fwd)
    assert big > 3 * small
    # max(host, GPU) per pass, not their sum
    b = iteration_breakdown(job, consolidated_assignment(job, H200), H200)
    assert b.compute == pytest.approx(plan.fwd_time[0] + plan.bwd_time[0])


def test_kernel_costs_roofline_terms():
    from asrpt.dnn.roofline import kernel_costs

    kp = KernelParams(kernel_time=0.0, matmul_half_time=0.0)
    z = np.zeros(2)
    f, b, h, hb = kernel_costs(["linear", "norm"], ["matmul", "norm"], np.array([1e12, 0.0]),
                               np.array([2e12, 0.0]), z, np.array([0.0, 1e9]), z, z, z, 1.0, 1,
                               1e15, 1e12, 2, kp)
    assert f[0] == pytest.approx(1e12 / (1e15 * kp.matmul_efficiency))
    assert f[1] == pytest.approx(2e9 / (1e12 * kp.norm_bandwidth))
    assert b[1] == pytest.approx(2 * f[1]) and h[0] == kp.host_fwd
    with pytest.raises(InvalidParameterError, match="norm_bandwidth"):
        KernelParams(norm_bandwidth=0)
    with pytest.raises(InvalidParameterError, match="unknown field"):
        KernelParams.from_dict({"speed": 1})


def test_seq_len_sets_flops_memory_and_time():
    j128 = Job("a", 0, 1, model="bert-base", iterations=1, batch_size=32, seq_len=128)
    j512 = Job("b", 0, 1, model="bert-base", iterations=1, batch_size=32)
    p128, p512 = job_plan(j128, "H200"), job_plan(j512, "H200")
    assert 3.0 < p512.flops_per_iteration / p128.flops_per_iteration < 4.5
    assert p128.memory[0] < p512.memory[0]
    assert best_iteration_time(j128, H200) < best_iteration_time(j512, H200)
    assert job_problems(Job("c", 0, 1, model="resnet50", iterations=1, seq_len=8), H200) == [
        ("seq_len", "resnet50 takes no sequence length (it is not a transformer)")]
    assert job_problems(Job("d", 0, 1, model="gpt2", iterations=1, seq_len=2048), H200)[0][0] \
        == "seq_len"


def test_seq_len_round_trips_and_reaches_the_simulator(tmp_path):
    from asrpt.sim.view import job_views

    inst = Instance(H200, (Job("a", 0, 1, model="bert-base", iterations=10, seq_len=128),))
    path = tmp_path / "i.json"
    save_instance(inst, str(path))
    assert json.loads(path.read_text())["jobs"][0]["seq_len"] == 128
    back = load_instance(str(path))
    assert back.jobs[0].seq_len == 128
    (view,) = job_views(back)
    assert view.seq_len == 128
    assert view.tau_star == pytest.approx(best_iteration_time(back.jobs[0], H200))


def test_trace_rule_gives_bert_its_fine_tuning_length():
    from asrpt.traces.assign import TRAINING_SEQ_LEN, assign_models

    jobs = tuple(Job(str(i), 0, 1, processing_time=600) for i in range(12))
    out = assign_models(Instance(H200, jobs), seed=3)
    berts = [j for j in out.jobs if j.model == "bert-base"]
    assert berts and all(j.seq_len == TRAINING_SEQ_LEN["bert-base"] == 128 for j in berts)
    assert all(j.seq_len is None for j in out.jobs if j.model in ("resnet18", "mobilenet_v2"))


def test_measured_graphs_match_the_measured_models():
    assert total_params(kf.measured_graph("bert-base")) == 109_514_298   # BertForMaskedLM
    assert total_params(kf.measured_graph("gpt2")) == 124_439_808
    G = kf.measured_graph("gpt2")
    assert G.nodes["transformer.h.0.attn"]["score_elems"] == 12 * 1024 * 1024
    assert "score_elems" not in layer_graph("gpt2").nodes["transformer.h.0.attn"]


@needs_sweep
def test_measured_flops_match_the_graphs():
    runs, _ = kf.load_measurements(SWEEP)
    for r in runs:
        G = kf.measured_graph(r.model, r.seq_len)
        flops = sum(d["fwd_flops"] + d["bwd_flops"] for _, d in G.nodes(data=True)) * r.batch
        assert 0.97 < flops / r.flops < 1.03, (r.model, r.batch)


@needs_sweep
def test_shipped_fit_reproduces_its_errors_and_the_simulator_agrees():
    runs, _ = kf.load_measurements(SWEEP)
    kp = shipped_kernel_params()["H200"]
    e = kf.step_errors(runs, kp)
    with open(os.path.join(os.path.dirname(kf.__file__), "data", "kernels-H200.json")) as fh:
        shipped = json.load(fh)
    assert e["median"] == pytest.approx(shipped["errors"]["median"], rel=1e-6)
    # measured: 6.2%, 20.2% with fused attention (the eager-attention fit had 5.8%, 22.6% in
    # sample but 28.5% leave-gpt2-out against 6.0%: docs/performance-model.md, third round)
    assert e["median"] < 0.065 and e["worst"] < 0.25
    # the fit's single-GPU formula is the simulator's for the same graph
    for r in runs[::5]:
        G = kf.measured_graph(r.model, r.seq_len)
        plan = plan_for(G, Configuration(1, 1, 1, r.batch), "H200", "bf16")
        pred = kf.predict_step(G, r.batch, "H200", "bf16", kp)
        assert plan.fwd_time[0] == pytest.approx(pred["fwd"])
        assert plan.bwd_time[0] == pytest.approx(pred["bwd"])


@needs_sweep
def test_fit_moves_the_parameters_toward_the_data():
    runs, layers = kf.load_measurements(SWEEP)
    start = KernelParams()
    before = kf.step_errors(runs, start)["median"]
    out = kf.fit_kernel_params(runs, start=start, max_nfev=30)
    assert out["errors"]["median"] < before / 2
    assert out["layers"] == 0
    with_layers = kf.fit_kernel_params(runs, start=start, max_nfev=5, layers=layers)
    # bert-base's table (batch 32) sums to 1.59x its un-timed forward pass: the timer, not the
    # GPU (kernel_fit.table_is_gpu_bound); resnet50's and gpt2's enter the fit
    assert with_layers["layers"] == 2


def test_load_measurements_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"runs": [{"model": "resnet50"}]}')
    with pytest.raises(TraceError, match="run 0 is malformed"):
        kf.load_measurements(str(bad))
    bad.write_text("[]")
    with pytest.raises(TraceError, match="not a measurement file"):
        kf.load_measurements(str(bad))
    with pytest.raises(InvalidParameterError, match="no mixed-precision"):
        kf.fit_kernel_params([kf.StepMeasurement("resnet50", 8, None, "fp32", 0.1, 0.03, 0.05,
                                                 None, None)])


def test_cli_model_seq_len_and_layers(capsys):
    assert main(["model", "bert-base", "--seq-len", "128", "--batch", "32", "--layers",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["seq_len"] == 128 and len(out["layers"]) == 77
    assert {r["bound"] for r in out["layers"]} <= {"compute", "memory", "launch"}
    assert main(["model", "bert-base", "--batch", "32", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["flops_per_iteration"] > out["flops_per_iteration"]
    assert main(["model", "resnet50", "--seq-len", "64"]) == 2
    assert "takes no sequence length" in capsys.readouterr().err
    assert main(["model", "mobilenet_v2", "--batch", "256", "--layers"]) == 0
    assert "depthwise" in capsys.readouterr().out


@needs_sweep
def test_cli_calibrate_writes_a_file_the_model_reads(tmp_path, capsys):
    out = tmp_path / "k.json"
    assert main(["calibrate", SWEEP, "--gpu", "h200", "--max-nfev", "20", "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["format"] == "asrpt-kernels/1" and data["gpu"] == "H200"
    kp = KernelParams.from_dict(data["params"])
    assert kp.applies_to == ("H200",)
    assert "wrote" in capsys.readouterr().out
    assert main(["calibrate", str(tmp_path / "none.json"), "--gpu", "H200"]) == 2
    assert "cannot read the measurements" in capsys.readouterr().err
    assert main(["calibrate", SWEEP, "--gpu", "H2000"]) == 2


def _one(types, klass, **kw):
    """kernel_costs of one layer: 1 GFLOP forward, 2 backward, 1e6 elements in and out."""
    from asrpt.dnn.roofline import kernel_costs

    z, e = np.zeros(1), np.full(1, 1e6)
    kp = kw.pop("kp", KernelParams(norm_half_channels=100.0, kernel_time=0.0))
    act_bytes = kw.pop("act_bytes", 2)
    return kernel_costs(types, klass, np.full(1, 1e9), np.full(1, 2e9), e, e, z, z, z, 8, 1,
                        1e15, 4.8e12, act_bytes, kp, **kw)


def test_misaligned_width_slows_mixed_precision_matmuls_only():
    t, _, _, _ = _one(["linear"], ["matmul"], misaligned=np.array([False]))
    tm, _, _, _ = _one(["linear"], ["matmul"], misaligned=np.array([True]))
    assert tm[0] > t[0] * 2
    t32, _, _, _ = _one(["linear"], ["matmul"], misaligned=np.array([False]), act_bytes=4)
    tm32, _, _, _ = _one(["linear"], ["matmul"], misaligned=np.array([True]), act_bytes=4)
    assert tm32[0] == t32[0]
    G = layer_graph("gpt2")
    assert G.nodes["lm_head"]["width"] == 50257
    from asrpt.dnn.parallel import _build_table

    tab = _build_table(G)
    assert tab.misaligned[tab.nodes.index("lm_head")]
    assert not tab.misaligned[tab.nodes.index("transformer.h.0.attn")]


def test_batch_norm_bandwidth_grows_with_channels_and_ignores_precision():
    few, _, _, _ = _one(["norm"], ["norm"], channels=np.array([64.0]))
    many, _, _, _ = _one(["norm"], ["norm"], channels=np.array([1024.0]))
    ln, _, _, _ = _one(["norm"], ["norm"], channels=np.array([0.0]))
    assert few[0] > many[0] > ln[0]
    assert few[0] == pytest.approx(ln[0] * (64 + 100) / 64)
    few32, _, _, _ = _one(["norm"], ["norm"], channels=np.array([64.0]), act_bytes=4)
    ln32, _, _, _ = _one(["norm"], ["norm"], channels=np.array([0.0]), act_bytes=4)
    assert few32[0] == pytest.approx(few[0]) and ln32[0] == pytest.approx(2 * ln[0])
    assert layer_graph("resnet50").nodes["layer1.0.bn1"]["channels"] == 64


def test_separate_elementwise_kernels_add_to_the_roofline():
    kp = KernelParams()
    t, tb, _, _ = _one(["mlp"], ["matmul"], kp=kp)
    te, teb, _, _ = _one(["mlp"], ["matmul"], kp=kp, ew=np.array([1e6]))
    extra = 1e6 * 8 * 2 / (4.8e12 * kp.elementwise_bandwidth)
    assert te[0] - t[0] == pytest.approx(extra) and teb[0] - tb[0] == pytest.approx(2 * extra)
    G = kf.measured_graph("gpt2")
    assert G.nodes["transformer.h.0.mlp"]["ew_elems"] == 38 * 1024 * 3072
    assert "ew_elems" not in layer_graph("gpt2").nodes["transformer.h.0.mlp"]


def test_fp32_convolutions_run_at_the_tf32_peak():
    from asrpt.dnn.hardware import gpu_spec
    from asrpt.dnn.roofline import conv_peak_flops

    h200, v100 = gpu_spec("H200"), gpu_spec("V100")
    assert conv_peak_flops(h200, "fp32") == h200.peak_flops("tf32")
    assert conv_peak_flops(h200, "bf16") == h200.peak_flops("bf16")
    assert conv_peak_flops(v100, "fp32") == v100.peak_flops("fp32")


@needs_sweep
def test_only_tables_that_timed_the_gpu_are_fitted():
    runs, layers = kf.load_measurements(SWEEP)
    ok = {L["model"]: kf.table_is_gpu_bound(L, runs) for L in layers}
    assert ok == {"resnet50": True, "bert-base": False, "gpt2": True}
    assert not kf.table_is_gpu_bound(layers[0], [])


def test_fused_attention_core_runs_at_its_own_efficiency():
    from asrpt.dnn.roofline import kernel_costs

    G = layer_graph("gpt2", seq_len=1024)
    a = G.nodes["transformer.h.0.attn"]
    s, d = 1024, 768
    scores = 2 * s * s * d                     # Q K^T (and as many for the context)
    assert 2 * scores < a["core_fwd_flops"] < 2.1 * scores            # plus the softmax
    assert a["core_bwd_flops"] == 3 * a["core_fwd_flops"] - scores   # recompute + gradients
    assert a["core_fwd_flops"] < a["fwd_flops"] and a["core_bwd_flops"] < a["bwd_flops"]
    z = np.zeros(1)
    args = (["attention"], ["matmul"], np.array([10e9]), np.array([20e9]), z, z, z, z, z, 1.0,
            1, 1e15, 4.8e12, 2)
    plain = KernelParams(kernel_time=0.0, matmul_half_time=0.0, matmul_efficiency=0.8)
    fused = dataclasses.replace(plain, attention_efficiency=0.4)
    core = dict(core_fwd=np.array([4e9]), core_bwd=np.array([10e9]))
    f0, b0, _, _ = kernel_costs(*args, plain, **core)       # None: the core at matmul speed
    f1, b1, _, _ = kernel_costs(*args, fused, **core)
    assert f0[0] == pytest.approx(10e9 / 0.8e15)
    assert f1[0] == pytest.approx(6e9 / 0.8e15 + 4e9 / 0.4e15)
    assert b1[0] == pytest.approx(10e9 / 0.8e15 + 10e9 / 0.4e15)
    assert KernelParams.from_dict(fused.to_dict()) == fused
    with pytest.raises(InvalidParameterError, match="attention_efficiency"):
        KernelParams(attention_efficiency=0.0)


def test_shipped_h200_fit_prices_fused_attention_and_the_zoo_times():
    kp = shipped_kernel_params()["H200"]
    assert kp.attention_efficiency == kf.FUSED_ATTENTION_EFFICIENCY     # the runs used SDPA
    # the measured GPT-2's two attention models: eager scores (default) and fused SDPA
    eager = kf.measured_graph("gpt2").nodes["transformer.h.0.attn"]
    fused = kf.measured_graph("gpt2", fused_attention=True).nodes["transformer.h.0.attn"]
    assert eager["score_elems"] == 12 * 1024 * 1024 and "score_elems" not in fused
    assert fused["act_elems"] < eager["act_elems"]
    assert fused["stash_bytes"] == eager["stash_bytes"]          # memory: SDPA in both
    # a kernel model with an attention efficiency prices zoo transformers' cores with it
    job = Job("j", 0, 1, model="gpt2", iterations=1, batch_size=8, seq_len=1024)
    p = perf_params()
    slow = dataclasses.replace(kp, attention_efficiency=0.05)
    q = dataclasses.replace(p, kernels=tuple((g, slow) if g in ("H200", "H100") else (g, k)
                                             for g, k in p.kernels))
    assert best_iteration_time(job, H200, q) > 1.2 * best_iteration_time(job, H200, p)


def test_efficiency_bounds_are_the_maximum_achievable_matmul():
    lo, hi = kf._BOUNDS["matmul_efficiency"]
    assert hi == kf.MAX_MATMUL_EFFICIENCY == pytest.approx(853.8 / 989.4, abs=1e-3)
    assert kf._BOUNDS["conv_efficiency"][1] == hi


@needs_sweep
def test_fused_attention_fit_holds_the_documented_attention_efficiency():
    runs, layers = kf.load_measurements(SWEEP)
    out = kf.fit_kernel_params(runs, layers=layers, max_nfev=5, fused_attention=True)
    assert out["params"].attention_efficiency == kf.FUSED_ATTENTION_EFFICIENCY
    assert out["params"].matmul_efficiency <= kf.MAX_MATMUL_EFFICIENCY
    plain = kf.fit_kernel_params(runs, max_nfev=5)
    assert plain["params"].attention_efficiency is None


@needs_sweep
def test_fp32_runs_are_priced_on_their_own_graph():
    fp32 = shared_path("measurements", "h200", "h200_fp32.json")
    if not os.path.exists(fp32):
        pytest.skip("no shared fp32 runs")
    runs, _ = kf.load_measurements(fp32)
    kp = shipped_kernel_params()["H200"]
    (r,) = [x for x in runs if x.model == "gpt2"][:1]
    got = kf.step_errors([r], kp)["rows"][0]["predicted"]
    fused = kp.attention_efficiency is not None
    want = kf.predict_step(kf.measured_graph("gpt2", r.seq_len, "fp32", fused_attention=fused), r.batch,
                           "H200", "fp32", kp)["time"]
    assert got == pytest.approx(want)
    assert got != pytest.approx(kf.predict_step(kf.measured_graph("gpt2", r.seq_len, fused_attention=fused),
                                                r.batch, "H200", "fp32", kp)["time"])


@needs_sweep
def test_cli_calibrate_fused_attention(tmp_path):
    out = tmp_path / "k.json"
    assert main(["calibrate", SWEEP, "--gpu", "H200", "--max-nfev", "3", "--fused-attention",
                 "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["fit"]["fused_attention"] is True
    assert KernelParams.from_dict(data["params"]).attention_efficiency == \
        kf.FUSED_ATTENTION_EFFICIENCY
