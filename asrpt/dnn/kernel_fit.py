"""Fitting the kernel model (:mod:`asrpt.dnn.roofline`) to measured training steps of one GPU.

This module owns the measurement side of the kernel model: reading a measurement file (the
format of the shared H200 sweep: ``{"device", "precision", "runs": [...], "layers": [...]}``,
one run per model and batch with ``iter_s_median``, ``fwd_s_median``, ``bwd_s_median``,
``peak_mem_bytes`` and ``train_flops``), mapping each measured model to the layer graph of what
was measured (:data:`MEASURED_MODELS`), predicting a run (:func:`predict_step`), and the fit
(:func:`fit_kernel_params`: least squares on log step time). The runtime parameters it produces
are a :class:`~asrpt.dnn.roofline.KernelParams`; ``asrpt calibrate`` writes them to a file.

The measured implementations differ from the zoo's defaults in documented ways, and the
graphs used here follow the measurements: BERT-base was trained with its masked-LM head
(``BertForMaskedLM``: no pooler; dense, GELU, LayerNorm and a decoder tied to the word
embedding), and GPT-2 with Hugging Face's unfused ``NewGELUActivation`` (``ew_elems``); both
compute the loss on fp32 logits and both ran PyTorch's fused SDPA attention (no materialised
scores). GPT-2's time has two attention models (``fused_attention``): the default, with which
the shipped H200 fit was made, prices materialised eager-attention scores (``score_elems``);
``fused_attention=True`` prices what the runs did, one fused kernel at
:attr:`~asrpt.dnn.roofline.KernelParams.attention_efficiency` and no score traffic. A kernel
model with an ``attention_efficiency`` implies the fused one (:func:`step_errors`,
:func:`layer_errors`). The memory is SDPA's in both.

Examples
--------
>>> G = measured_graph("bert-base", seq_len=128)
>>> from asrpt.dnn.layers import total_params
>>> total_params(G)
109514298
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import networkx as nx
import numpy as np

from ..errors import InvalidParameterError, TraceError
from .roofline import (KernelParams, conv_peak_flops, kernel_costs, layer_class,
                       optimizer_time)

__all__ = [
    "StepMeasurement",
    "MEASURED_MODELS",
    "FIT_PARAMETERS",
    "load_measurements",
    "measured_graph",
    "HF_STASH_BYTES",
    "LOSS_PEAK_BYTES_PER_LOGIT",
    "AUTOCAST_WEIGHT_CACHE_BYTES",
    "FUSED_ATTENTION_EFFICIENCY",
    "predict_step",
    "fit_kernel_params",
    "step_errors",
    "layer_pairs",
    "layer_errors",
    "conv_efficiency_from_layers",
    "table_is_gpu_bound",
]

#: How each measured model maps to a layer graph: (zoo model, default seq_len, variant, note).
MEASURED_MODELS: Mapping[str, tuple] = {
    "resnet50": ("resnet50", None, None, "torchvision ResNet-50, 224x224, 1000 classes"),
    "bert-base": ("bert-base", 128, "mlm", "BertForMaskedLM: MLM head tied to the word "
                  "embedding, no pooler; sequence 128"),
    "gpt2": ("gpt2", 1024, "hf-gpt2", "GPT2LMHeadModel, sequence 1024; its time is priced "
             "with materialised attention scores (the shipped fit) or, with fused_attention, "
             "as one fused SDPA kernel; its memory with fused SDPA attention (what the runs "
             "used: no scores kept)"),
}

#: Fitted constants, in the order of the fit vector (log space). ``depthwise_bandwidth`` is not
#: identifiable from models without depthwise convolutions and follows ``norm_bandwidth``.
FIT_PARAMETERS = ("matmul_efficiency", "conv_efficiency", "matmul_half_time", "matmul_bandwidth",
                  "norm_bandwidth", "elementwise_bandwidth", "misaligned_efficiency",
                  "norm_half_channels", "kernel_time", "host_fwd", "host_bwd",
                  "iteration_overhead")

#: Upper bound of the matmul and convolution efficiencies: the maximum achievable matmul
#: throughput measured on the GH100 die with Stas Bekman's MAMF finder (ml-engineering's
#: ``mamf-finder.py``; results table of the mag-/gpu_benchmark repository: GH200 144 GB HBM3e
#: 853.8 TFLOP/s = 0.863 of the 989.4 bf16 peak; H100 SXM 792-821). No cuBLAS GEMM runs faster,
#: so a fit that reaches 1.0 is trading the efficiency against the per-kernel ``t_half``.
MAX_MATMUL_EFFICIENCY = 0.863

_BOUNDS = {"matmul_efficiency": (0.05, MAX_MATMUL_EFFICIENCY),
           "conv_efficiency": (0.05, MAX_MATMUL_EFFICIENCY),
           "matmul_half_time": (1e-8, 1e-3),
           "matmul_bandwidth": (0.02, 1.0), "norm_bandwidth": (0.01, 1.0),
           "elementwise_bandwidth": (0.01, 1.0), "misaligned_efficiency": (0.02, 1.0),
           "norm_half_channels": (1.0, 1e4), "kernel_time": (1e-8, 1e-4),
           "host_fwd": (1e-7, 1e-3), "host_bwd": (1e-7, 1e-3),
           "iteration_overhead": (1e-6, 0.05)}

#: Per-layer times used by the fit: only layers whose timed forward and backward both exceed
#: this (seconds), i.e. GPU-bound ones; shorter ones mostly measure the timer and the host.
LAYER_MIN_TIME = 5e-5
#: Weight of a model's per-layer table in the fit, relative to its step times (the tables
#: separate convolutions from normalizations, which step times cannot; at weight 1 their hundred
#: or so layers each pull the step times of the fitted models past 6% median error).
LAYER_WEIGHT = 0.3
#: Weight of a run's measured forward and backward pass times (each) relative to its step time:
#: the split is what separates the host cost of the forward pass from the backward's.
PASS_WEIGHT = 0.25
#: A per-layer table enters the fit only if its timed modules' forward times sum to at most this
#: multiple of the un-instrumented forward pass at the same batch: beyond it, the per-module
#: timer (hooks, events) has made the pass host-bound and the table measures the timer and the
#: host, not the GPU (the sweep's bert-base table at batch 32 sums to 1.59x its forward pass;
#: resnet50's at 128 to 1.15x, gpt2's at 8 to 0.90x).
LAYER_TABLE_MAX_INFLATION = 1.25

#: Element passes (in activation-element units) of Hugging Face's ``NewGELUActivation``
#: (``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))))``, about nine unfused elementwise kernels)
#: per element of the MLP's hidden tensor, forward: under bf16 autocast ``pow`` runs in fp32, so
#: the chain after it reads and writes fp32 (about 76 bytes per element, 38 two-byte units); in
#: fp32 about 72 bytes (18 four-byte units).
NEW_GELU_PASSES = {"bf16": 38.0, "fp32": 18.0}

#: Loss memory per logit at the peak, in activation-element units, by precision: under bf16
#: autocast the fp32 copy of the logits and their fp32 log-softmax (2 units each); in fp32 the
#: log-softmax and its gradient.
LOSS_ELEMS_PER_LOGIT = {"bf16": 4.0, "fp32": 2.0}
#: Stashed elements per attention score in eager attention: the softmax output, the dropout
#: output and its boolean mask (half a 2-byte unit, a quarter of a 4-byte one). Used by the
#: default (eager) time model's memory traffic of the measured GPT-2 only; its memory uses
#: :data:`HF_STASH_BYTES` (the measured runs used PyTorch's fused SDPA attention).
EAGER_ACT_PER_SCORE = {"bf16": 2.5, "fp32": 2.25}
#: Fraction of the bf16 peak a fused attention kernel reaches, the starting value of
#: ``attention_efficiency`` in a ``fused_attention`` fit (held fixed there): FlashAttention-2
#: reaches about 35% of the H100's peak (Shah et al., FlashAttention-3, 2024, abstract). Left
#: free, the sweep fits 0.38 but then leaving GPT-2 out cannot identify it (BERT's 128-token
#: attention is 8% of its FLOPs): leave-gpt2-out 8.8% median against 6.0% fixed.
FUSED_ATTENTION_EFFICIENCY = 0.35

#: Bytes the measured Hugging Face models save for their backward pass, per token and per
#: hidden element (multiples of ``d`` bytes per token), by model, precision and layer, counted
#: from what PyTorch's autograd keeps (``docs/performance-model.md`` section 6, "Memory").
#: Under bf16 autocast the residual stream and the LayerNorm inputs are fp32 (4), every linear
#: keeps its own bf16 cast of its input (2), dropout keeps a one-byte mask (1); attention is
#: fused SDPA (keeps Q, K, V, its output and a 4-byte log-sum-exp per head and token, added
#: separately); GPT-2's unfused NewGELU keeps its fp32 input cast, its tanh, 0.5 x and 1 + tanh
#: (16 + 16 + 8 + 16 per hidden element of 4 d, in bf16 autocast: 64 d; fp32: 80 d).
HF_STASH_BYTES: Mapping[tuple, Mapping[str, float]] = {
    ("gpt2", "bf16"): {"embedding": 0.5, "norm": 4, "attention": 2 + 6 + 2 + 2 + 1,
                       "mlp": 2 + 64 + 1, "add": 0, "lm_head": 2},
    ("gpt2", "fp32"): {"embedding": 0.5, "norm": 4, "attention": 4 + 12 + 4 + 4 + 1,
                       "mlp": 4 + 80 + 1, "add": 0, "lm_head": 4},
    ("bert-base", "bf16"): {"embedding": 0, "embeddings.LayerNorm": 4 + 1, "norm": 4,
                            "attention": 6 + 6 + 2 + 2 + 1, "mlp": 2 + 8 + 8 + 1, "add": 0,
                            "cls.transform.dense": 2, "cls.transform.act": 2,
                            "cls.transform.LayerNorm": 4, "cls.decoder": 2},
    ("bert-base", "fp32"): {"embedding": 0, "embeddings.LayerNorm": 4 + 1, "norm": 4,
                            "attention": 4 + 12 + 4 + 4 + 1, "mlp": 4 + 16 + 16 + 1, "add": 0,
                            "cls.transform.dense": 4, "cls.transform.act": 4,
                            "cls.transform.LayerNorm": 4, "cls.decoder": 4},
}
#: Bytes per logit at the measured step's memory peak, the start of the backward pass: the
#: fp32 log-softmax output the loss keeps, the gradient nll_loss writes into it and the one
#: log_softmax's backward produces (three fp32 tensors of the logits' size; the logits
#: themselves are not kept). In the sweep the gpt2 run at batch 128 ran out of memory
#: allocating exactly one such tensor (24.54 GiB = 128 x 1024 x 50,257 x 4 bytes).
LOSS_PEAK_BYTES_PER_LOGIT = 12.0
#: Bytes per parameter of autocast's cached bf16 weight copies in the measured bf16 runs (fp32
#: weights, gradients and AdamW states, 16 bytes, plus this cache): the bf16-minus-fp32
#: intercepts of the sweep are 1.7 / 2.1 / 2.0 bytes per parameter (resnet50 / bert / gpt2).
AUTOCAST_WEIGHT_CACHE_BYTES = 2.0


@dataclass(frozen=True)
class StepMeasurement:
    """One measured training step (one GPU).

    Attributes
    ----------
    model : str
        Measured model name (a key of :data:`MEASURED_MODELS` or a zoo name).
    batch : int
    seq_len : int or None
    precision : str
        ``"bf16"`` (autocast with fp32 master weights) or ``"fp32"``.
    time, fwd, bwd : float
        Median seconds of the step, its forward and its backward pass.
    peak_memory : float or None
        Peak allocated bytes.
    flops : float or None
        Measured FLOPs of forward and backward.
    source : str
        The file it came from.
    """

    model: str
    batch: int
    seq_len: int | None
    precision: str
    time: float
    fwd: float
    bwd: float
    peak_memory: float | None
    flops: float | None
    source: str = ""


def load_measurements(path: str) -> tuple[list[StepMeasurement], list[dict]]:
    """Read a measurement file: its successful runs and its per-layer tables.

    Parameters
    ----------
    path : str
        A JSON file in the shared sweep format.

    Returns
    -------
    runs : list of StepMeasurement
    layers : list of dict
        ``{"model", "batch", "rows": [{"layer", "type", "fwd_s", "bwd_s"}, ...]}``.

    Raises
    ------
    TraceError
        If the file cannot be read or lacks a field (the message names the file and the run).

    Examples
    --------
    >>> load_measurements("/nonexistent.json")
    Traceback (most recent call last):
    ...
    asrpt.errors.TraceError: /nonexistent.json: cannot read the measurements: ...
    """
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise TraceError(f"{path}: cannot read the measurements: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise TraceError(f"{path}: not a measurement file (no 'runs' list)")
    prec = "fp32" if str(data.get("precision", "")).lower().startswith("fp32") else "bf16"
    runs = []
    for i, r in enumerate(data["runs"]):
        if not isinstance(r, dict) or "error" in r:
            continue
        try:
            model = str(r["model"])
            seq = MEASURED_MODELS.get(model, (None, r.get("seq_len")))[1]
            runs.append(StepMeasurement(
                model, int(r["batch"]), int(r.get("seq_len") or 0) or seq, prec,
                float(r["iter_s_median"]), float(r["fwd_s_median"]), float(r["bwd_s_median"]),
                float(r["peak_mem_bytes"]) if r.get("peak_mem_bytes") else None,
                float(r["train_flops"]) if r.get("train_flops") else None, path))
        except (KeyError, TypeError, ValueError) as exc:
            raise TraceError(f"{path}: run {i} is malformed: {exc!r}") from None
        if not (runs[-1].time > 0 and runs[-1].batch > 0):
            raise TraceError(f"{path}: run {i} has a non-positive time or batch")
    layers = [L for L in data.get("layers", []) if isinstance(L, dict) and "rows" in L]
    return runs, layers


def _mlm_head(G: nx.DiGraph, precision: str) -> nx.DiGraph:
    """BERT with the masked-LM head instead of the pooler (BertForMaskedLM)."""
    H = G.copy()
    s, d, vocab = H.graph["seq_len"], H.graph["hidden_size"], H.graph["vocab_size"]
    (last,) = list(H.predecessors("pooler"))
    H.remove_node("pooler")
    o = H.nodes[last]["order"] + 1
    spec = [("cls.transform.dense", "linear", 2 * s * d * d + s * d, d * d + d, s * d, s * d, d),
            ("cls.transform.act", "act", s * d, 0, s * d, s * d, 0),
            ("cls.transform.LayerNorm", "norm", 5 * s * d, 2 * d, s * d, s * d, 0),
            ("cls.decoder", "linear", 2 * s * d * vocab + s * vocab, vocab, s * vocab,
             s * d + LOSS_ELEMS_PER_LOGIT[precision] * s * vocab, vocab)]
    prev = last
    for k, (name, typ, f, p, out, act, width) in enumerate(spec):
        extra = {"width": int(width)} if width else {}
        H.add_node(name, type=typ, order=o + k, fwd_flops=float(f), bwd_flops=2.0 * f,
                   params=int(p), out_elems=int(out), act_elems=int(act), **extra)
        H.add_edge(prev, name, elems=int(H.nodes[prev]["out_elems"]))
        prev = name
    H.nodes["cls.decoder"]["tied_to"] = "embeddings.word_embeddings"
    return H


def _hf_gpt2(G: nx.DiGraph, precision: str, fused_attention: bool) -> nx.DiGraph:
    """Hugging Face's GPT-2 as measured, for the time model (the memory is set by
    :func:`_hf_stash`): HF's unfused NewGELU in the MLPs, an fp32 loss on the LM head's logits,
    and either eager attention (materialised scores; the shipped fit's model) or fused SDPA
    attention (the zoo's attention layer as it is: no scores)."""
    H = G.copy()
    s, heads = H.graph["seq_len"], H.graph["num_heads"]
    hidden = int(H.graph.get("ffn_hidden_size") or 4 * H.graph["hidden_size"])
    for n, d in H.nodes(data=True):
        if d["type"] == "mlp":
            d["ew_elems"] = int(NEW_GELU_PASSES[precision] * s * hidden)
        if d["type"] == "attention" and not fused_attention:
            d["score_elems"] = heads * s * s
            d["act_elems"] = int(d.get("act_elems", d["out_elems"])
                                 + EAGER_ACT_PER_SCORE[precision] * heads * s * s)
        if n == "lm_head":
            d["act_elems"] = int(d.get("act_elems", 0)
                                 + LOSS_ELEMS_PER_LOGIT[precision] * d["out_elems"])
    return H


def measured_graph(model: str, seq_len: int | None = None,
                   precision: str = "bf16", fused_attention: bool = False) -> nx.DiGraph:
    """The layer graph of a measured model as it was measured (:data:`MEASURED_MODELS`).

    A measured model's graph also carries its memory as measured: ``weight_cache_bytes`` (2 in
    bf16, autocast's weight copies; 0 in fp32) and, for the Hugging Face models, each layer's
    ``stash_bytes`` (:data:`HF_STASH_BYTES`, the loss at the peak on the LM head).

    Parameters
    ----------
    model : str
        A key of :data:`MEASURED_MODELS` or a zoo name (then the zoo graph as it is).
    seq_len : int or None
        Sequence length of a transformer (default: the measurement's).
    precision : str
        ``"bf16"`` or ``"fp32"`` (the loss, activation and NewGELU bytes differ).
    fused_attention : bool
        Price GPT-2's attention as the fused SDPA kernel the runs used (no materialised
        scores); default: eager attention, the model the shipped H200 fit was made with.

    Returns
    -------
    networkx.DiGraph

    Raises
    ------
    InvalidParameterError
        For a model that is neither measured nor in the zoo.

    Examples
    --------
    >>> measured_graph("gpt2").nodes["transformer.h.0.attn"]["score_elems"]
    12582912
    >>> "score_elems" in measured_graph("gpt2", fused_attention=True).nodes["transformer.h.0.attn"]
    False
    """
    from .zoo import get_model, layer_graph

    zoo, seq0, variant, _ = MEASURED_MODELS.get(model, (model, None, None, ""))
    spec = get_model(zoo)
    seq = seq_len or seq0
    G = layer_graph(zoo, seq_len=seq) if seq and "seq_len" in spec.overrides else \
        layer_graph(zoo)
    prec = "fp32" if precision == "fp32" else "bf16"
    if variant == "mlm":
        H = _mlm_head(G, prec)
    elif variant == "hf-gpt2":
        H = _hf_gpt2(G, prec, fused_attention)
    elif model in MEASURED_MODELS:
        H = G.copy()
    else:
        return G
    if (zoo, prec) in HF_STASH_BYTES:
        _hf_stash(H, HF_STASH_BYTES[(zoo, prec)])
    H.graph["weight_cache_bytes"] = AUTOCAST_WEIGHT_CACHE_BYTES if prec == "bf16" else 0.0
    return H


def _hf_stash(G: nx.DiGraph, table: Mapping[str, float]) -> None:
    """Set ``stash_bytes`` (memory per sample saved for backward) of every layer of a measured
    Hugging Face model from :data:`HF_STASH_BYTES` (a layer's name, else its type)."""
    s, d, heads = G.graph["seq_len"], G.graph["hidden_size"], G.graph["num_heads"]
    for n, a in G.nodes(data=True):
        per = table[n] if n in table else table[a["type"]]
        b = per * s * d
        if a["type"] == "attention":
            b += 4.0 * heads * s            # SDPA's fp32 log-sum-exp per head and token
        if a.get("tied_to"):                # the LM head: its loss at the peak
            b += LOSS_PEAK_BYTES_PER_LOGIT * a["out_elems"]
        a["stash_bytes"] = float(b)


@dataclass(frozen=True)
class _Arrays:
    types: tuple
    klass: tuple
    fwd: np.ndarray
    bwd: np.ndarray
    inp: np.ndarray
    out: np.ndarray
    act: np.ndarray
    params: np.ndarray
    score: np.ndarray
    misaligned: np.ndarray
    channels: np.ndarray
    ew: np.ndarray
    core_fwd: np.ndarray
    core_bwd: np.ndarray


def _arrays(G: nx.DiGraph) -> _Arrays:
    from .parallel import _build_table

    t = _build_table(G)
    return _Arrays(t.types, t.klass, t.fwd, t.bwd, t.inp, t.out, t.act, t.params, t.score,
                   t.misaligned, t.channels, t.ew, t.core_fwd, t.core_bwd)


def _gpu(precision: str):
    from .hardware import precision_info

    return precision_info(precision)


def predict_step(arrays, batch: int, gpu: str, precision: str,
                 kp: KernelParams) -> dict:
    """Predicted forward, backward, optimizer and step seconds of one single-GPU training step.

    Parameters
    ----------
    arrays : networkx.DiGraph or the internal layer arrays
        The layer graph (:func:`measured_graph`).
    batch : int
    gpu : str
    precision : str
        ``"bf16"`` (mixed precision, fp32 master weights) or ``"fp32"``.
    kp : KernelParams

    Returns
    -------
    dict
        ``fwd``, ``bwd``, ``optimizer``, ``time``, the per-layer ``layer_fwd`` /
        ``layer_bwd`` GPU seconds and ``seen_fwd`` / ``seen_bwd``, what a per-module timer
        (CUDA events around each module) sees: the larger of a layer's GPU time and its host
        time (a launch-bound layer's events are as far apart as its operators take to issue).

    Examples
    --------
    >>> r = predict_step(measured_graph("resnet50"), 32, "H200", "bf16", KernelParams())
    >>> r["time"] > r["fwd"] > 0
    True
    """
    from .hardware import gpu_spec

    a = _arrays(arrays) if isinstance(arrays, nx.DiGraph) else arrays
    spec = gpu_spec(gpu)
    prec = _gpu(precision)
    gf, gb, hf, hb = kernel_costs(a.types, a.klass, a.fwd, a.bwd, a.inp, a.out, a.act,
                                  a.params, a.score, float(batch), 1, spec.peak_flops(prec.name),
                                  spec.memory_bandwidth, prec.activation_bytes, kp,
                                  misaligned=a.misaligned, channels=a.channels, ew=a.ew,
                                  conv_peak=conv_peak_flops(spec, prec.name),
                                  core_fwd=a.core_fwd, core_bwd=a.core_bwd)
    fwd = max(float(gf.sum()), float(hf.sum()))
    bwd = max(float(gb.sum()), float(hb.sum()))
    opt = optimizer_time(float(a.params.sum()), prec.activation_bytes < 4,
                         spec.memory_bandwidth, kp)
    return {"fwd": fwd, "bwd": bwd, "optimizer": opt,
            "time": fwd + bwd + opt + kp.iteration_overhead, "layer_fwd": gf, "layer_bwd": gb,
            "seen_fwd": np.maximum(gf, hf), "seen_bwd": np.maximum(gb, hb)}


_MEASURED_TYPES = {"Conv2d", "BatchNorm2d", "LayerNorm", "Linear", "Conv1D", "MaxPool2d",
                   "GELUActivation", "NewGELUActivation", "Dropout"}


def _zoo_name(measured: str, nodes: set) -> str | None:
    """The zoo node a measured module belongs to (None: not comparable)."""
    name = measured
    for pre, new in (("bert.", ""), ("cls.predictions.", "cls.")):
        if name.startswith(pre):
            name = new + name[len(pre):]
    if name in nodes:
        return name
    parts = name.split(".")
    # BERT's feed-forward modules (intermediate.dense, its activation, output.dense) form "mlp"
    if len(parts) >= 4 and parts[0] == "encoder" and parts[3] in ("intermediate", "output") \
            and not name.endswith(("LayerNorm", "dropout")):
        cand = ".".join(parts[:3]) + ".mlp"
        return cand if cand in nodes else None
    # GPT-2's mlp.c_fc, mlp.act, mlp.c_proj, mlp.dropout form "mlp"
    for k in range(len(parts) - 1, 0, -1):
        cand = ".".join(parts[:k])
        if cand in nodes and cand.endswith(".mlp"):
            return cand
    return None


def layer_pairs(graph: nx.DiGraph, rows: Sequence[Mapping]) -> list[tuple[str, float, float]]:
    """Zoo layers whose every measured module was timed: (node, measured fwd s, measured bwd s).

    Measured modules are matched to zoo nodes by name (an MLP node sums its linears, activation
    and dropout); attention nodes are left out (their score product and softmax are not modules
    and were not timed), and so are modules timed without a value or called more than once per
    step (a shared ReLU).

    Parameters
    ----------
    graph : networkx.DiGraph
        The measured graph (:func:`measured_graph`).
    rows : sequence of dict
        A per-layer table's ``rows``.

    Returns
    -------
    list of (str, float, float)

    Examples
    --------
    >>> rows = [{"layer": "layer1.0.conv1", "type": "Conv2d", "fwd_s": 1e-4, "bwd_s": 2e-4}]
    >>> layer_pairs(measured_graph("resnet50"), rows)
    [('layer1.0.conv1', 0.0001, 0.0002)]
    """
    nodes = set(graph.nodes)
    acc: dict = {}
    bad = set()
    for r in rows:
        z = _zoo_name(str(r.get("layer", "")), nodes)
        if z is None:
            continue
        if r.get("type") not in _MEASURED_TYPES or r.get("fwd_s") is None \
                or r.get("bwd_s") is None:
            if r.get("type") != "Dropout":
                bad.add(z)
            continue
        f, b = acc.get(z, (0.0, 0.0))
        acc[z] = (f + float(r["fwd_s"]), b + float(r["bwd_s"]))
    order = {n: graph.nodes[n]["order"] for n in nodes}
    return [(z, f, b) for z, (f, b) in sorted(acc.items(), key=lambda kv: order[kv[0]])
            if z not in bad and f > 0 and b > 0]


def layer_errors(layers: Sequence[Mapping], kp: KernelParams, gpu: str = "H200",
                 precision: str = "bf16") -> dict:
    """Relative errors of predicted per-layer forward and backward times.

    Parameters
    ----------
    layers : sequence of dict
        Per-layer tables (:func:`load_measurements`).
    kp : KernelParams
    gpu, precision : str

    Returns
    -------
    dict
        Per model: ``layers`` compared, ``median`` and ``worst`` relative error over forward and
        backward times, and the ``rows``. A kernel model with an ``attention_efficiency``
        prices the measured GPT-2 with fused attention (:func:`measured_graph`).

    Examples
    --------
    >>> rows = [{"layer": "layer1.0.conv1", "type": "Conv2d", "fwd_s": 1e-4, "bwd_s": 2e-4}]
    >>> e = layer_errors([{"model": "resnet50", "batch": 128, "rows": rows}], KernelParams())
    >>> e["resnet50"]["layers"]
    1
    """
    out = {}
    for L in layers:
        G = measured_graph(str(L["model"]), precision=precision,
                           fused_attention=kp.attention_efficiency is not None)
        a = _arrays(G)
        pred = predict_step(a, int(L["batch"]), gpu, precision, kp)
        idx = {n: i for i, n in enumerate(sorted(G.nodes, key=lambda n: G.nodes[n]["order"]))}
        rows, errs = [], []
        for z, f, b in layer_pairs(G, L["rows"]):
            pf, pb = float(pred["seen_fwd"][idx[z]]), float(pred["seen_bwd"][idx[z]])
            rows.append({"layer": z, "fwd": f, "bwd": b, "pred_fwd": pf, "pred_bwd": pb})
            errs += [abs(pf - f) / f, abs(pb - b) / b]
        out[str(L["model"])] = {"layers": len(rows), "batch": int(L["batch"]),
                                "median": float(np.median(errs)) if errs else math.nan,
                                "worst": float(max(errs)) if errs else math.nan, "rows": rows}
    return out


def conv_efficiency_from_layers(layers: Sequence[Mapping], gpu: str = "H200",
                                min_time: float = 1e-4) -> float | None:
    """Median achieved fraction of the bf16 peak of the measured convolutions that run long
    enough to be GPU-bound (forward and backward each over ``min_time`` seconds).

    Parameters
    ----------
    layers : sequence of dict
        Per-layer tables (:func:`load_measurements`).
    gpu : str
    min_time : float

    Returns
    -------
    float or None
        None when no table has such a convolution.

    Examples
    --------
    >>> rows = [{"layer": "layer1.0.conv2", "type": "Conv2d", "fwd_s": 2e-4, "bwd_s": 4e-4}]
    >>> round(conv_efficiency_from_layers([{"model": "resnet50", "batch": 128, "rows": rows}]), 3)
    0.15
    """
    from .hardware import gpu_spec

    peak = gpu_spec(gpu).peak_flops("bf16")
    fr = []
    for L in layers:
        G = measured_graph(str(L["model"]))
        for z, f, b in layer_pairs(G, L["rows"]):
            d = G.nodes[z]
            if d["type"] == "conv" and f > min_time and b > min_time:
                fr.append((d["fwd_flops"] + d["bwd_flops"]) * int(L["batch"]) / (f + b) / peak)
    return float(np.median(fr)) if fr else None


def table_is_gpu_bound(table: Mapping, runs: Sequence[StepMeasurement]) -> bool:
    """Whether a per-layer table timed the GPU: its modules' forward times sum to at most
    :data:`LAYER_TABLE_MAX_INFLATION` times the forward pass of the same model and batch measured
    without the per-module timer (False when no such run is given).

    Examples
    --------
    >>> run = StepMeasurement("resnet50", 128, None, "bf16", 0.056, 0.022, 0.035, None, None)
    >>> rows = [{"layer": "conv1", "type": "Conv2d", "fwd_s": 0.02, "bwd_s": 0.001}]
    >>> table_is_gpu_bound({"model": "resnet50", "batch": 128, "rows": rows}, [run])
    True
    """
    fwd = [r.fwd for r in runs if r.model == str(table.get("model"))
           and r.batch == int(table.get("batch", 0)) and r.precision == "bf16"]
    if not fwd:
        return False
    timed = sum(float(r["fwd_s"]) for r in table.get("rows", []) if r.get("fwd_s") is not None)
    return timed <= LAYER_TABLE_MAX_INFLATION * fwd[0]


def _from_vector(x, base: KernelParams, free=FIT_PARAMETERS) -> KernelParams:
    v = dict(zip(free, (float(a) for a in x)))
    v["depthwise_bandwidth"] = v["norm_bandwidth"]
    return replace(base, **v)


def step_errors(runs: Sequence[StepMeasurement], kp: KernelParams, gpu: str = "H200") -> dict:
    """Relative errors of predicted step times: per run, and median / worst over all.

    Parameters
    ----------
    runs : sequence of StepMeasurement
    kp : KernelParams
    gpu : str

    Returns
    -------
    dict
        ``rows`` (model, batch, measured, predicted, error), ``median``, ``worst``. Each run is
        priced on the graph of its precision; a kernel model with an ``attention_efficiency``
        prices the measured GPT-2 with fused attention (:func:`measured_graph`).

    Examples
    --------
    >>> run = StepMeasurement("resnet50", 32, None, "bf16", 0.02, 0.01, 0.01, None, None)
    >>> step_errors([run], KernelParams())["rows"][0]["model"]
    'resnet50'
    """
    cache: dict = {}
    rows = []
    fused = kp.attention_efficiency is not None
    for r in runs:
        key = (r.model, r.seq_len, r.precision)
        if key not in cache:
            cache[key] = _arrays(measured_graph(r.model, r.seq_len, r.precision, fused))
        p = predict_step(cache[key], r.batch, gpu, r.precision, kp)["time"]
        rows.append({"model": r.model, "batch": r.batch, "precision": r.precision,
                     "measured": r.time, "predicted": p, "error": abs(p - r.time) / r.time})
    errs = [x["error"] for x in rows]
    return {"rows": rows, "median": float(np.median(errs)) if errs else math.nan,
            "worst": float(max(errs)) if errs else math.nan}


def fit_kernel_params(runs: Sequence[StepMeasurement], gpu: str = "H200",
                      start: KernelParams | None = None, max_nfev: int = 2000,
                      layers: Sequence[Mapping] = (), fused_attention: bool = False) -> dict:
    """Fit :data:`FIT_PARAMETERS` to measured step times of one GPU type.

    Least squares on log step time and on the log forward and backward pass times (each
    weighing :data:`PASS_WEIGHT`; ``scipy.optimize.least_squares``, trust-region reflective,
    parameters in log space within bounds); each model's runs weigh the same whatever their
    number. Only mixed-precision (``bf16``) runs are fitted. Step times alone hardly separate a
    ResNet's convolutions from its normalizations, so the per-layer tables of the fitted models,
    when given, add the log forward and backward times (as a per-module timer sees them) of
    every layer timed over :data:`LAYER_MIN_TIME` in both passes, each table weighing
    :data:`LAYER_WEIGHT` times the model's steps; only tables that timed the GPU enter
    (:func:`table_is_gpu_bound`). Only the runs and tables passed in are fitted: the evaluation
    keeps its held-out models out of ``runs``.

    Parameters
    ----------
    runs : sequence of StepMeasurement
    gpu : str
        The GPU the runs were measured on.
    start : KernelParams or None
        Starting point (default: :class:`KernelParams`'s defaults).
    max_nfev : int
    layers : sequence of dict
        Per-layer tables (:func:`load_measurements`) measured in mixed precision (tables of
        models without fitted runs are ignored).

    Returns
    -------
    dict
        ``params`` (KernelParams), ``errors`` (:func:`step_errors` on the fitted runs),
        ``cost``, ``nfev``, ``models`` (the fitted models), ``layers`` (per-layer tables used).

    Raises
    ------
    InvalidParameterError
        If no run is eligible.

    Examples
    --------
    >>> runs = [StepMeasurement("resnet50", b, None, "bf16", t, t / 3, t / 2, None, None)
    ...         for b, t in ((16, 0.019), (64, 0.029), (256, 0.107))]
    >>> out = fit_kernel_params(runs, max_nfev=20)
    >>> out["params"].gpu, out["models"]
    ('H200', ['resnet50'])
    """
    from scipy.optimize import least_squares

    from .hardware import gpu_spec

    name = gpu_spec(gpu).name
    fitted = [r for r in runs if r.precision == "bf16"]
    if not fitted:
        raise InvalidParameterError(f"fit_kernel_params: no mixed-precision (bf16) run for {name}")
    base = start or KernelParams(gpu=name, applies_to=(name,))
    base = replace(base, gpu=name, attention_efficiency=(
        (base.attention_efficiency or FUSED_ATTENTION_EFFICIENCY) if fused_attention else None))
    cache: dict = {}
    for r in fitted:
        key = (r.model, r.seq_len)
        if key not in cache:
            cache[key] = _arrays(measured_graph(r.model, r.seq_len, "bf16", fused_attention))
    counts: dict = {}
    for r in fitted:
        counts[r.model] = counts.get(r.model, 0) + 1
    w = np.array([1.0 / math.sqrt(counts[r.model]) for r in fitted])
    y = np.log([r.time for r in fitted])
    y_fwd = np.log([r.fwd for r in fitted])
    y_bwd = np.log([r.bwd for r in fitted])

    free = list(FIT_PARAMETERS)
    tables = []
    for L in layers:
        if str(L.get("model")) not in counts or not table_is_gpu_bound(L, fitted):
            continue
        G = measured_graph(str(L["model"]), fused_attention=fused_attention)
        idx = {n: i for i, n in enumerate(sorted(G.nodes, key=lambda n: G.nodes[n]["order"]))}
        pairs = [p for p in layer_pairs(G, L["rows"])
                 if p[1] >= LAYER_MIN_TIME and p[2] >= LAYER_MIN_TIME]
        if pairs:
            tables.append((_arrays(G), int(L["batch"]), np.array([idx[z] for z, _, _ in pairs]),
                           np.log([f for _, f, _ in pairs]), np.log([b for _, _, b in pairs]),
                           LAYER_WEIGHT / math.sqrt(2 * len(pairs))))
    lo = np.log([_BOUNDS[k][0] for k in free])
    hi = np.log([_BOUNDS[k][1] for k in free])
    x0 = np.clip(np.log([max(getattr(base, k), _BOUNDS[k][0]) for k in free]), lo + 1e-9,
                 hi - 1e-9)

    def residuals(z):
        kp = _from_vector(np.exp(z), base, free)
        pred = [predict_step(cache[(r.model, r.seq_len)], r.batch, name, r.precision, kp)
                for r in fitted]
        parts = [w * (np.log([p["time"] for p in pred]) - y)]
        if PASS_WEIGHT > 0:
            parts.append(PASS_WEIGHT * w * (np.log([p["fwd"] for p in pred]) - y_fwd))
            parts.append(PASS_WEIGHT * w * (np.log([p["bwd"] for p in pred]) - y_bwd))
        for arr, bt, idx, lf, lb, wl in tables:
            p = predict_step(arr, bt, name, "bf16", kp)
            parts.append(wl * (np.log(p["seen_fwd"][idx]) - lf))
            parts.append(wl * (np.log(p["seen_bwd"][idx]) - lb))
        return np.concatenate(parts)

    res = least_squares(residuals, x0, bounds=(lo, hi), method="trf", max_nfev=max_nfev)
    kp = _from_vector(np.exp(res.x), base, free)
    return {"params": kp, "errors": step_errors(fitted, kp, name), "cost": float(res.cost),
            "nfev": int(res.nfev), "models": sorted(counts), "layers": len(tables)}
