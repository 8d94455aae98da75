"""The per-operator roofline time model of current GPUs and its runtime parameters.

This module owns what the performance model reads at run time for GPUs with a fitted kernel
model (the H200, and the H100 through the same fractions of its own peaks):
:class:`KernelParams`, the shipped parameter files (``asrpt/dnn/data/kernels-*.json``, read by
:func:`shipped_kernel_params`), the operator classes of the layer types, and
:func:`kernel_costs`, the per-layer times. It knows nothing about measurements or fitting
(:mod:`asrpt.dnn.kernel_fit` fits the parameters; ``asrpt calibrate`` writes a file).

For a layer of n samples (this GPU's share), W FLOPs, M bytes moved and k kernels per pass:

- GPU time ``max((W + k W_half) / (peak eta), M / (HBM beta_c)) + k kernel_time + S /
  (HBM beta_elementwise)``: a roofline
  whose compute efficiency grows with the work per kernel, ``eta W / (W + W_half)`` (small kernels
  do not fill the GPU), and whose achieved bandwidth ``beta_c`` depends on the operator class
  (matmul / convolution, depthwise or grouped convolution, normalization, elementwise), plus the
  bytes S of separate elementwise kernels inside a composite layer (materialised attention
  scores, an unfused activation), which run after its matmuls, not overlapped with them;
- host time ``ops x host_fwd`` (forward) or ``ops x host_bwd`` (backward): the framework's cost
  of issuing the layer's operators, which runs ahead of the GPU; a pass takes the larger of its
  host time and its GPU time (launch-bound at small batches).

Bytes per pass: forward ``((in + out + act) n + params) b``, backward twice that (b bytes per
activation element; ``act`` the stashed elements, a proxy for a composite layer's internal
tensors); S: ``score_elems`` of an attention layer that materialises its scores, ``SCORE_PASSES``
reads and writes of them, and ``ew_elems`` of a composite layer (both per sample, in
activation-element units). Two size effects: a dense layer whose width is not a multiple of
``ALIGN_ELEMS`` runs at ``misaligned_efficiency`` of the matmul efficiency, and a channels-first
batch normalization of C channels at ``beta_norm C / (C + norm_half_channels)``. A kernel model
with an ``attention_efficiency`` prices the fused attention kernel of each attention layer
(``core_fwd_flops`` / ``core_bwd_flops``: scores, softmax, context) at that fraction of the peak;
without one (the shipped H200 fit) the whole layer runs at the matmul efficiency.

Examples
--------
>>> kp = shipped_kernel_params()["H200"]
>>> 0 < kp.matmul_efficiency <= 1 and kp.host_fwd > 0
True
>>> layer_class("conv", groups=32), layer_class("norm")
('depthwise', 'norm')
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from ..errors import InvalidParameterError, TraceError

__all__ = [
    "KernelParams",
    "OP_CLASSES",
    "TYPE_CLASS",
    "HOST_OPS",
    "SCORE_PASSES",
    "OPTIMIZER_BYTES_PER_PARAM",
    "layer_class",
    "kernel_costs",
    "optimizer_time",
    "shipped_kernel_params",
    "KERNEL_FILES",
    "ALIGN_ELEMS",
    "conv_peak_flops",
]

#: Operator classes, each with its own achieved memory bandwidth.
OP_CLASSES = ("matmul", "depthwise", "norm", "elementwise")

#: The operator class of each layer type (a convolution with groups > 1 is ``depthwise``).
TYPE_CLASS = {"conv": "matmul", "linear": "matmul", "attention": "matmul", "mlp": "matmul",
              "block": "matmul", "matmul": "matmul", "norm": "norm", "act": "elementwise",
              "add": "elementwise", "pool": "elementwise", "concat": "elementwise",
              "embedding": "elementwise", "other": "elementwise"}

#: Framework operators (and kernels) per layer and forward pass, a hand count of the PyTorch
#: modules the zoo's layers stand for: one for a plain layer; an attention block issues the Q, K,
#: V projections, head reshapes, the attention kernel, the output projection and dropout (8);
#: an MLP two linears, the activation and dropout (4); a whole transformer block 14. The
#: backward pass issues as many autograd nodes, each with about two kernels for weighted layers.
HOST_OPS = {"attention": 8, "mlp": 4, "block": 14}

#: Reads plus writes of the score matrix per forward pass in materialised (eager) attention:
#: Q K^T written, scaled and masked, softmax, dropout, read by the product with V.
SCORE_PASSES = 8

#: Elements (16 bytes of bf16) a matmul dimension must be a multiple of for aligned kernels.
ALIGN_ELEMS = 8

#: Bytes per element at which a channels-first batch normalization is priced, whatever the
#: precision: its time follows the elements it reduces over per channel, not the bytes (on the
#: H200 ResNet-50's fp32 steps take 1.1x its bf16 ones although its batch norms move twice the
#: bytes; the convolutions run in TF32 there).
BATCHNORM_ELEM_BYTES = 2.0

#: Optimizer-step bytes per parameter: fused AdamW with fp32 master weights reads weight,
#: gradient and the two moments (16 B) and writes weight and moments (12 B); mixed precision adds
#: the per-step cast of the weights (4 B read, 2 B written).
OPTIMIZER_BYTES_PER_PARAM = {"mixed": 34.0, "fp32": 28.0}

_DATA = os.path.join(os.path.dirname(__file__), "data")
#: The shipped kernel-model parameter files, by GPU they were fitted on.
KERNEL_FILES = {"H200": os.path.join(_DATA, "kernels-H200.json")}


def layer_class(layer_type: str, groups: int = 1) -> str:
    """The operator class of a layer: ``matmul``, ``depthwise``, ``norm`` or ``elementwise``.

    Parameters
    ----------
    layer_type : str
        A layer-graph node type.
    groups : int
        Convolution groups (a grouped or depthwise convolution moves more bytes per FLOP and runs
        memory-bound).

    Returns
    -------
    str

    Examples
    --------
    >>> layer_class("attention"), layer_class("conv"), layer_class("add")
    ('matmul', 'matmul', 'elementwise')
    """
    if layer_type == "conv" and groups > 1:
        return "depthwise"
    return TYPE_CLASS.get(layer_type, "elementwise")


@dataclass(frozen=True)
class KernelParams:
    """Fitted constants of the roofline kernel model for one GPU type.

    Attributes
    ----------
    gpu : str
        The GPU the constants were fitted on.
    applies_to : tuple of str
        GPU names priced with these fractions of their own peaks (same architecture).
    matmul_efficiency, conv_efficiency : float
        Largest achieved fraction of the dense peak of matmul (linear, attention, MLP) and of
        convolution kernels.
    matmul_half_time : float
        Seconds of peak work per kernel at which a matmul or convolution reaches half its
        efficiency: ``e(W) = e W / (W + W_half)`` with ``W_half = matmul_half_time * peak * e``
        (FLOPs; it scales with the GPU's peak).
    matmul_bandwidth, depthwise_bandwidth, norm_bandwidth, elementwise_bandwidth : float
        Achieved fraction of the memory bandwidth of each operator class.
    attention_efficiency : float or None
        Achieved fraction of the dense peak of a fused attention kernel (PyTorch SDPA /
        FlashAttention: scores, softmax and context in one kernel, the scores never written to
        memory), applied to the attention layer's ``core_fwd_flops`` / ``core_bwd_flops``.
        None (the shipped H200 fit): those FLOPs run at the matmul efficiency like the rest of
        the layer.
    misaligned_efficiency : float
        Fraction of the matmul efficiency reached by a dense layer whose width (output features,
        e.g. a 50,257-token vocabulary) is not a multiple of :data:`ALIGN_ELEMS`: its rows are
        not 16-byte aligned and cuBLAS falls back to slower tensor-core kernels (mixed precision
        only; fp32 matmuls run on CUDA cores).
    norm_half_channels : float
        Channels at which a channels-first batch normalization reaches half its bandwidth:
        ``beta_norm C / (C + C_half)`` (the kernel parallelises over channels; 0: no
        dependence). Layer normalization (over the last dimension) is not affected.
    kernel_time : float
        Seconds of GPU time per kernel beyond its roofline time (launch and tail).
    host_fwd, host_bwd : float
        Host seconds per framework operator in the forward and in the backward pass.
    iteration_overhead : float
        Seconds per step outside the layers and the optimizer (loss, zeroing gradients,
        synchronisation).
    """

    gpu: str = "H200"
    applies_to: tuple = ("H200",)
    matmul_efficiency: float = 0.6
    conv_efficiency: float = 0.4
    matmul_half_time: float = 5e-6
    matmul_bandwidth: float = 0.7
    depthwise_bandwidth: float = 0.2
    norm_bandwidth: float = 0.2
    elementwise_bandwidth: float = 0.5
    attention_efficiency: float | None = None
    misaligned_efficiency: float = 0.3
    norm_half_channels: float = 0.0
    kernel_time: float = 3e-6
    host_fwd: float = 3e-5
    host_bwd: float = 3e-5
    iteration_overhead: float = 1e-3

    def __post_init__(self):
        object.__setattr__(self, "applies_to", tuple(str(x) for x in self.applies_to))
        for f in fields(self):
            if f.name in ("gpu", "applies_to") or (f.name == "attention_efficiency"
                                                    and getattr(self, f.name) is None):
                continue
            v = getattr(self, f.name)
            hi = 1.0 if f.name.endswith(("efficiency", "bandwidth")) else 1e15
            if not (isinstance(v, (int, float)) and 0 <= v <= hi) or (
                    hi == 1.0 and v == 0):
                raise InvalidParameterError(
                    f"KernelParams.{f.name} must be in {'(0, 1]' if hi == 1.0 else '[0, 1e15]'}"
                    f", got {v!r}")

    def bandwidth(self, op_class: str) -> float:
        """Achieved fraction of the memory bandwidth of an operator class."""
        return getattr(self, f"{op_class}_bandwidth")

    def to_dict(self) -> dict:
        """JSON-ready dict (the ``params`` block of a kernel parameter file)."""
        d = asdict(self)
        d["applies_to"] = list(self.applies_to)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "KernelParams":
        """Inverse of :meth:`to_dict` (unknown keys are an error).

        >>> KernelParams.from_dict(KernelParams().to_dict()) == KernelParams()
        True
        """
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise InvalidParameterError(f"KernelParams: unknown field(s) {', '.join(unknown)}")
        return cls(**dict(data))


@lru_cache(maxsize=None)
def shipped_kernel_params() -> Mapping[str, KernelParams]:
    """The shipped kernel models, ``GPU name -> KernelParams`` for every GPU they apply to.

    Returns
    -------
    dict

    Raises
    ------
    TraceError
        If a shipped file is missing or malformed (a broken installation).

    Examples
    --------
    >>> sorted(shipped_kernel_params())
    ['H100', 'H200']
    """
    out = {}
    for gpu, path in KERNEL_FILES.items():
        try:
            with open(path, encoding="utf-8") as fh:
                kp = KernelParams.from_dict(json.load(fh)["params"])
        except (OSError, json.JSONDecodeError, KeyError, InvalidParameterError) as exc:
            raise TraceError(f"{path}: cannot read the shipped kernel model: {exc}") from None
        for name in kp.applies_to:
            out[name] = kp
    return out


def kernel_costs(types, klass, fwd, bwd, inp, out, act, params, score, samples: float, tp: int,
                 peak: float, hbm: float, act_bytes: float, kp: KernelParams, *,
                 misaligned=None, channels=None, ew=None,
                 conv_peak: float | None = None, core_fwd=None,
                 core_bwd=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-layer GPU and host seconds, forward and backward, under the kernel model.

    Parameters
    ----------
    types : sequence of str
        Layer types (for the operator counts, :data:`HOST_OPS`).
    klass : sequence of str
        Operator classes (:func:`layer_class`).
    fwd, bwd, inp, out, act, params, score : numpy.ndarray
        Per layer and sample: forward and backward FLOPs, input, output and stashed elements,
        parameters (not per sample) and materialised attention-score elements.
    samples : float
        Samples per pass on this GPU before the tensor-parallel split.
    tp : int
        Tensor-parallel degree (divides work, bytes and parameters).
    peak, hbm : float
        The GPU's dense peak FLOP/s at the math precision and its memory bandwidth (bytes/s).
    act_bytes : float
        Bytes per activation element.
    kp : KernelParams
    misaligned : numpy.ndarray of bool, optional
        Dense layers whose width is not a multiple of :data:`ALIGN_ELEMS` (their compute
        efficiency is ``misaligned_efficiency`` times the matmul one).
    channels : numpy.ndarray, optional
        Channels of each channels-first batch normalization (0 elsewhere): its bandwidth is
        ``beta_norm C / (C + norm_half_channels)``.
    ew : numpy.ndarray, optional
        Elements per sample moved by separate elementwise kernels inside a composite layer (in
        activation-element units), priced at the elementwise bandwidth and added to the layer's
        roofline time (they are kernels of their own, not overlapped with its matmuls).
    conv_peak : float, optional
        Peak FLOP/s of convolutions when it differs from ``peak`` (:func:`conv_peak_flops`:
        PyTorch runs fp32 convolutions in TF32 by default).
    core_fwd, core_bwd : numpy.ndarray, optional
        FLOPs per sample (part of ``fwd`` / ``bwd``) done by a fused attention kernel (scores,
        softmax and context in one kernel, as PyTorch's SDPA and FlashAttention run them):
        priced at ``attention_efficiency`` of the peak, the rest of the layer's FLOPs at its
        class's efficiency.

    Returns
    -------
    gpu_fwd, gpu_bwd, host_fwd, host_bwd : numpy.ndarray

    Examples
    --------
    >>> z = np.zeros(1)
    >>> g, gb, h, hb = kernel_costs(["linear"], ["matmul"], np.array([2e12]), np.array([4e12]),
    ...                             z, z, z, z, z, 1, 1, 1e15, 4.8e12, 2, KernelParams())
    >>> bool(gb[0] > g[0] > 2e12 / (1e15 * 0.6)), float(h[0])
    (True, 3e-05)
    """
    n = samples / tp
    ops = np.array([float(HOST_OPS.get(t, 1)) for t in types])
    kernels_b = np.where(np.asarray(params) > 0, 2.0, 1.0) * ops
    bw = np.array([kp.bandwidth(c) for c in klass]) * hbm
    is_mm = np.array([c == "matmul" for c in klass])
    is_conv = np.array([t == "conv" for t in types])
    eff = np.where(is_conv, kp.conv_efficiency * (conv_peak or peak), kp.matmul_efficiency * peak)
    if misaligned is not None and act_bytes < 4:
        eff = np.where(np.asarray(misaligned, bool) & is_mm, eff * kp.misaligned_efficiency, eff)
    mem_f = ((inp + out + act) * n + params / tp) * act_bytes
    if channels is not None:
        c = np.asarray(channels, float)
        if kp.norm_half_channels > 0:
            bw = np.where(c > 0, bw * c / np.maximum(c + kp.norm_half_channels, 1e-30), bw)
        # a channels-first batch norm is bound by its per-channel reductions, not by bytes
        mem_f = np.where(c > 0, mem_f * min(act_bytes, BATCHNORM_ELEM_BYTES) / act_bytes, mem_f)
    # separate elementwise kernels: materialised attention scores and a composite's internals
    side = SCORE_PASSES * np.asarray(score, float) + (0.0 if ew is None else np.asarray(ew, float))
    t_side = side * n * act_bytes / (hbm * kp.elementwise_bandwidth)
    half = np.where(is_mm, kp.matmul_half_time, 0.0)
    # a fused attention kernel's FLOPs run at their own efficiency (no score traffic: it keeps
    # the scores on chip)
    if kp.attention_efficiency is None or core_fwd is None:
        c_f, c_b = fwd * n / eff, bwd * n / eff
    else:
        cf, cb = np.asarray(core_fwd, float), np.asarray(core_bwd, float)
        attn = peak * kp.attention_efficiency
        c_f = (fwd - cf) * n / eff + cf * n / attn
        c_b = (bwd - cb) * n / eff + cb * n / attn
    t_f = np.maximum(c_f + ops * half, mem_f / bw) + ops * kp.kernel_time + t_side
    t_b = np.maximum(c_b + kernels_b * half, 2.0 * mem_f / bw) + \
        kernels_b * kp.kernel_time + 2.0 * t_side
    return t_f, t_b, ops * kp.host_fwd, ops * kp.host_bwd


def conv_peak_flops(spec, precision_name: str) -> float:
    """Peak FLOP/s a convolution runs at: the precision's, except fp32 on a GPU with TF32,
    where PyTorch's default (``torch.backends.cudnn.allow_tf32 = True``) runs cuDNN
    convolutions in TF32 (matmuls stay fp32: ``torch.backends.cuda.matmul.allow_tf32`` is off).

    >>> from asrpt.dnn.hardware import gpu_spec
    >>> conv_peak_flops(gpu_spec("H200"), "fp32") == gpu_spec("H200").peak_flops("tf32")
    True
    """
    if precision_name == "fp32" and "tf32" in spec.peak_tflops:
        return spec.peak_flops("tf32")
    return spec.peak_flops(precision_name)


def optimizer_time(params: float, mixed: bool, hbm: float, kp: KernelParams) -> float:
    """Seconds of the optimizer step: :data:`OPTIMIZER_BYTES_PER_PARAM` over the elementwise
    bandwidth (fused AdamW is one pass over the parameters and their states).

    Examples
    --------
    >>> round(optimizer_time(1e8, True, 4.8e12, KernelParams()) * 1e3, 3)
    1.417
    """
    per = OPTIMIZER_BYTES_PER_PARAM["mixed" if mixed else "fp32"]
    return params * per / (hbm * kp.elementwise_bandwidth)
