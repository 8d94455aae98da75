"""Shape-tracking layer helpers shared by the zoo's builders (private).

Each helper appends one node to a :class:`~asrpt.dnn.layers.LayerGraphBuilder` with its FLOPs,
parameters and activation sizes computed from the tensor shapes, following the FLOP convention of
:mod:`asrpt.dnn.layers`, and returns a :class:`T` (node id and output shape per sample).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

from ..layers import ELEMENTWISE_FLOPS as EW
from ..layers import LayerGraphBuilder


class T(NamedTuple):
    """A tensor per sample: the node producing it (None for the model input) and its shape."""

    node: str | None
    shape: tuple[int, ...]

    @property
    def elems(self) -> int:
        return math.prod(self.shape)


def _inputs(*ts: T) -> list[str]:
    return [t.node for t in ts if t.node is not None]


class Net:
    """A builder plus the current ``block``; each method adds one layer and returns its output."""

    def __init__(self, builder: LayerGraphBuilder) -> None:
        self.b = builder
        self.block: str | None = None

    # ---- convolutional networks (shapes are (C, H, W)) -----------------------------------
    def conv(self, name: str, x: T, cout: int, k: int, stride: int = 1, pad: int = 0,
             groups: int = 1, bias: bool = False) -> T:
        cin, h, w = x.shape
        ho, wo = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        out = cout * ho * wo
        macs = k * k * (cin // groups) * out
        fwd = 2 * macs + (out if bias else 0)
        params = k * k * (cin // groups) * cout + (cout if bias else 0)
        # The layer reading the model input computes no input gradient: backward = weight grads.
        bwd = fwd if x.node is None else 2 * fwd
        extra = {"groups": groups} if groups > 1 else {}
        self.b.add(name, "conv", inputs=_inputs(x), fwd_flops=fwd, bwd_flops=bwd, params=params,
                   out_elems=out, act_elems=x.elems, block=self.block, **extra)
        return T(name, (cout, ho, wo))

    def bn(self, name: str, x: T) -> T:
        # channels: a channels-first batch norm's speed depends on them (asrpt.dnn.roofline)
        self.b.add(name, "norm", inputs=_inputs(x), fwd_flops=EW["layernorm"] * x.elems,
                   params=2 * x.shape[0], out_elems=x.elems, act_elems=x.elems, block=self.block,
                   channels=x.shape[0])
        return T(name, x.shape)

    def act(self, name: str, x: T, inplace: bool = True) -> T:
        # torchvision's CNN activations are in place (ReLU(inplace=True)): the output overwrites the
        # input, and the one tensor left is the one the next layer stashes as its own input, so an
        # in-place activation stashes nothing of its own (counting it would count it twice).
        self.b.add(name, "act", inputs=_inputs(x), fwd_flops=EW["act"] * x.elems,
                   out_elems=x.elems, act_elems=0 if inplace else x.elems, block=self.block)
        return T(name, x.shape)

    def maxpool(self, name: str, x: T, k: int, stride: int, pad: int = 0) -> T:
        c, h, w = x.shape
        shape = (c, (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1)
        out = math.prod(shape)
        self.b.add(name, "pool", inputs=_inputs(x), fwd_flops=k * k * out, out_elems=out,
                   act_elems=x.elems, block=self.block)
        return T(name, shape)

    def avgpool(self, name: str, x: T, k: int, stride: int) -> T:
        c, h, w = x.shape
        shape = (c, (h - k) // stride + 1, (w - k) // stride + 1)
        self.b.add(name, "pool", inputs=_inputs(x), fwd_flops=x.elems, out_elems=math.prod(shape),
                   act_elems=0, block=self.block)
        return T(name, shape)

    def adaptive_avgpool(self, name: str, x: T, size: int = 1) -> T:
        shape = (x.shape[0], size, size)
        self.b.add(name, "pool", inputs=_inputs(x), fwd_flops=x.elems, out_elems=math.prod(shape),
                   act_elems=0, block=self.block)
        return T(name, shape)

    def add(self, name: str, a: T, c: T) -> T:
        self.b.add(name, "add", inputs=_inputs(a, c), fwd_flops=EW["add"] * a.elems,
                   out_elems=a.elems, act_elems=0, block=self.block)
        return T(name, a.shape)

    def concat(self, name: str, xs: Sequence[T]) -> T:
        shape = (sum(x.shape[0] for x in xs),) + xs[0].shape[1:]
        self.b.add(name, "concat", inputs=_inputs(*xs), fwd_flops=0, out_elems=math.prod(shape),
                   act_elems=0, block=self.block)
        return T(name, shape)

    def linear(self, name: str, x: T, out_features: int, bias: bool = True,
               tokens: int | None = None) -> T:
        """A dense layer on ``tokens`` positions of width ``x.shape[-1]`` (default: all)."""
        n = x.shape[-1]
        pos = x.elems // n if tokens is None else tokens
        fwd = 2 * n * out_features * pos + (out_features * pos if bias else 0)
        params = n * out_features + (out_features if bias else 0)
        self.b.add(name, "linear", inputs=_inputs(x), fwd_flops=fwd, params=params,
                   out_elems=pos * out_features, act_elems=pos * n, block=self.block,
                   width=out_features)
        return T(name, (pos, out_features) if pos > 1 else (out_features,))

    # ---- transformers (shapes are (s, d)) -------------------------------------------------
    def norm(self, name: str, x: T, rms: bool = False) -> T:
        s, d = x.shape
        self.b.add(name, "norm", inputs=_inputs(x),
                   fwd_flops=EW["rmsnorm" if rms else "layernorm"] * s * d,
                   params=d if rms else 2 * d, out_elems=s * d, act_elems=s * d,
                   block=self.block)
        return T(name, x.shape)

    def attention(self, name: str, x: T, heads: int, kv_heads: int, bias: bool,
                  rope: bool = False) -> T:
        """Self-attention: QKV projections, scores, softmax, context, output projection.

        Memory-efficient attention: the scores are not stashed (``act_elems`` = input, Q, K, V,
        context and the softmax statistics) and backward recomputes ``Q K^T`` and the softmax.
        Causal masking does not halve the score FLOPs. ``core_fwd_flops`` / ``core_bwd_flops``
        are the part done by the fused attention kernel (scores, softmax, context and, backward,
        their recomputation and gradients), priced apart from the projections' matmuls.
        """
        s, d = x.shape
        kv = d // heads * kv_heads
        proj = 2 * s * d * (d + 2 * kv) + 2 * s * d * d
        biases = s * (d + 2 * kv) + s * d if bias else 0
        rot = EW["rope"] * s * (d + kv) if rope else 0
        scores = 2 * s * s * d
        softmax = EW["softmax"] * heads * s * s
        fwd = proj + biases + rot + 2 * scores + softmax
        params = d * (d + 2 * kv) + d * d + (2 * d + 2 * kv if bias else 0)
        self.b.add(name, "attention", inputs=_inputs(x), fwd_flops=fwd,
                   bwd_flops=2 * fwd + scores + softmax, params=params, out_elems=s * d,
                   act_elems=3 * s * d + 2 * s * kv + heads * s, block=self.block,
                   core_fwd_flops=2 * scores + softmax,
                   core_bwd_flops=2 * (2 * scores + softmax) + scores + softmax)
        return T(name, x.shape)

    def mlp(self, name: str, x: T, ffn: int, gated: bool = False, bias: bool = True) -> T:
        """Feed-forward: ``d -> ffn -> d`` with GELU, or SwiGLU (gate and up, SiLU, product)."""
        s, d = x.shape
        if gated:
            fwd = 3 * 2 * s * d * ffn + (EW["act"] + EW["mul"]) * s * ffn
            params = 3 * d * ffn
            act = s * d + 4 * s * ffn
        else:
            fwd = 2 * 2 * s * d * ffn + EW["act"] * s * ffn + ((s * ffn + s * d) if bias else 0)
            params = 2 * d * ffn + ((ffn + d) if bias else 0)
            act = s * d + 2 * s * ffn
        self.b.add(name, "mlp", inputs=_inputs(x), fwd_flops=fwd, params=params,
                   out_elems=s * d, act_elems=act, block=self.block)
        return T(name, x.shape)

    def embedding(self, name: str, x: T | None, rows: int, d: int, s: int, adds: bool) -> T:
        """A look-up table of ``rows x d``; ``adds`` when it is added to ``x`` (positions)."""
        inputs = [] if x is None else _inputs(x)
        self.b.add(name, "embedding", inputs=inputs, fwd_flops=EW["add"] * s * d if adds else 0,
                   params=rows * d, out_elems=s * d, act_elems=0, block=self.block)
        return T(name, (s, d))
