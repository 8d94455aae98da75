"""Layer graphs from real ``torch.nn.Module`` objects (optional: ``pip install asrpt[torch]``).

:func:`from_torch` traces a module with ``torch.fx.symbolic_trace``, propagates the shapes of an
example input, and writes one node per traced operation (leaf module call, function or method)
in the traced order, following the schema and FLOP convention of :mod:`asrpt.dnn.layers`:

- ``params``: the parameters of each leaf module (and of each ``get_attr`` parameter) at its
  first use; a parameter shared by several modules (tied embeddings) is counted once;
- ``fwd_flops`` per sample: ``Linear``, ``Conv1d/2d/3d``, ``matmul``/``bmm``/``@`` as
  2 x multiply-adds (+ bias); ``nn.MultiheadAttention`` as the zoo's attention nodes; norms, activations, adds, multiplies, softmax and pooling by
  :data:`~asrpt.dnn.layers.ELEMENTWISE_FLOPS`; everything else (views, ``cat``, dropout,
  embedding look-ups, ``getitem``) 0;
- ``bwd_flops = 2 * fwd_flops``, except for layers whose only tensor inputs are model inputs
  (weight gradients only: ``bwd = fwd``);
- ``out_elems`` from the propagated shapes, divided by the batch size (the first dimension of
  the first example input); edges carry the producer's ``out_elems``; ``act_elems`` (stashed
  for backward) is the tensor input of parametrised layers, norms and max pooling, the output
  of activations and other elementwise operators, and 0 for adds, concatenations, average
  pooling and zero-FLOP operators (as in the zoo).

Node ids are the module paths of leaf modules (a module called again gets ``_1``, ``_2``...) and
``<enclosing module path>.<function>`` for functions (as the zoo names them). Models with
data-dependent control flow cannot be traced by ``torch.fx``; trace a wrapper or use the zoo.

torch is imported only when :func:`from_torch` is called.
"""

from __future__ import annotations

import math
import operator
from numbers import Integral
from typing import Any

import networkx as nx

from .._validation import Interval, validate_params
from ..errors import InvalidParameterError
from .layers import ELEMENTWISE_FLOPS as EW
from .layers import LayerGraphBuilder

__all__ = ["from_torch"]


class _ModuleLike:
    """Constraint: a ``torch.nn.Module`` (checked without importing torch)."""

    def is_satisfied_by(self, value: Any) -> bool:
        cls_names = {c.__module__ + "." + c.__qualname__ for c in type(value).__mro__}
        return "torch.nn.modules.module.Module" in cls_names

    def __str__(self) -> str:
        return "a torch.nn.Module"


class _TensorLike:
    """Constraint: a tensor or a tuple of tensors (the example input)."""

    def is_satisfied_by(self, value: Any) -> bool:
        values = value if isinstance(value, tuple) else (value,)
        return len(values) > 0 and all(
            type(v).__module__.startswith("torch") and hasattr(v, "shape") for v in values)

    def __str__(self) -> str:
        return "a torch.Tensor or a tuple of tensors"


def _import_torch():
    try:
        import torch
        import torch.fx
        from torch.fx.passes.shape_prop import ShapeProp
    except ImportError as exc:  # pragma: no cover - exercised only without torch
        raise ImportError("asrpt.dnn.torch_graph needs torch: pip install 'asrpt[torch]'") from exc
    return torch, ShapeProp


def _numel(meta: Any) -> int:
    """Elements of a node's output (summed over tuples); 0 for non-tensors."""
    if meta is None:
        return 0
    if hasattr(meta, "shape"):
        return math.prod(meta.shape)
    if isinstance(meta, (tuple, list)):
        return sum(_numel(m) for m in meta)
    if isinstance(meta, dict):
        return sum(_numel(m) for m in meta.values())
    return 0


def _classify(torch: Any, node: Any, module: Any) -> tuple[str, str]:
    """(type, flop rule) of one fx node."""
    nn = torch.nn
    if node.op == "call_module":
        if isinstance(module, nn.Linear):
            return "linear", "linear"
        if isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            return "conv", "conv"
        if isinstance(module, nn.Embedding):
            return "embedding", "zero"
        rms = getattr(nn, "RMSNorm", ())
        if rms and isinstance(module, rms):
            return "norm", "rmsnorm"
        if isinstance(module, (nn.modules.batchnorm._BatchNorm, nn.LayerNorm, nn.GroupNorm)):
            return "norm", "layernorm"
        if isinstance(module, (nn.ReLU, nn.ReLU6, nn.GELU, nn.SiLU, nn.Tanh, nn.Sigmoid,
                               nn.LeakyReLU, nn.Hardswish, nn.Hardsigmoid)):
            return "act", "act"
        if isinstance(module, (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)):
            return "pool", "maxpool"
        if isinstance(module, (nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d, nn.AdaptiveAvgPool1d,
                               nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d)):
            return "pool", "avgpool"
        if isinstance(module, nn.MultiheadAttention):
            return "attention", "mha"
        if isinstance(module, nn.Softmax):
            return "other", "softmax"
        return "other", "zero"
    target = node.target
    name = getattr(target, "__name__", str(target))
    F = torch.nn.functional
    if target in (operator.add, operator.iadd, torch.add, operator.sub, torch.sub) or \
            name in ("add", "add_", "sub", "iadd"):
        return "add", "add"
    if target in (operator.mul, operator.imul, torch.mul, operator.truediv) or \
            name in ("mul", "mul_", "div", "truediv"):
        return "other", "mul"
    if target in (operator.matmul, torch.matmul, torch.bmm, torch.mm) or \
            name in ("matmul", "bmm", "mm"):
        return "matmul", "matmul"
    if target in (F.relu, torch.relu, F.gelu, F.silu, torch.tanh, torch.sigmoid, F.relu6) or \
            name in ("relu", "relu_", "gelu", "silu", "tanh", "sigmoid"):
        return "act", "act"
    if target in (F.softmax, torch.softmax) or name == "softmax":
        return "other", "softmax"
    if target in (F.avg_pool2d, F.adaptive_avg_pool2d, F.avg_pool1d) or "avg_pool" in name:
        return "pool", "avgpool"
    if target in (F.max_pool2d,) or "max_pool" in name:
        return "pool", "maxpool"
    if target in (F.layer_norm, F.batch_norm) or name in ("layer_norm", "batch_norm"):
        return "norm", "layernorm"
    if target in (torch.cat,) or name in ("cat", "concat"):
        return "concat", "zero"
    return "other", "zero"


def _mha_flops(mod: Any, args: list, batch: int) -> tuple[int, int, int]:
    """(fwd, extra backward, act_elems) per sample of ``nn.MultiheadAttention``, as the zoo's
    attention: projections (+ biases), scores and context (2 L S E each), softmax 5 per score;
    backward recomputes the scores and softmax."""
    q = args[0].meta["tensor_meta"].shape
    k = args[1].meta["tensor_meta"].shape if len(args) > 1 else q
    e, h = mod.embed_dim, mod.num_heads
    lq = math.prod(q) // batch // e
    lk = math.prod(k) // batch // e
    bias = mod.in_proj_bias is not None
    proj = 2 * lq * e * e + 2 * lk * e * 2 * e + 2 * lq * e * e
    biases = (lq * e + 2 * lk * e + lq * e) if bias else 0
    scores = 2 * lq * lk * e
    softmax = EW["softmax"] * h * lq * lk
    fwd = proj + biases + 2 * scores + softmax
    return fwd, scores + softmax, 3 * lq * e + 2 * lk * e + h * lq


def _node_id(node: Any, used: dict) -> str:
    if node.op == "call_module":
        base = str(node.target)
    else:
        stack = node.meta.get("nn_module_stack") or {}
        scope = list(stack.values())[-1][0] if stack else ""
        fn = getattr(node.target, "__name__", str(node.target)).strip("_")
        base = f"{scope}.{fn}" if scope else fn
    k = used.get(base, 0)
    used[base] = k + 1
    return base if k == 0 else f"{base}_{k}"


@validate_params({"module": [_ModuleLike()], "example_input": [_TensorLike()],
                  "name": [str], "batch_size": [None, Interval(Integral, 1, None, closed="left")]})
def from_torch(module: Any, example_input: Any, *, name: str = "torch_module",
               batch_size: int | None = None) -> nx.DiGraph:
    """Build a layer graph from a ``torch.nn.Module`` by tracing it with ``torch.fx``.

    Parameters
    ----------
    module : torch.nn.Module
        The model; it must be traceable by ``torch.fx.symbolic_trace``.
    example_input : torch.Tensor or tuple of torch.Tensor
        Inputs of one forward call (a batch); only their shapes matter for the result.
    name : str
        The graph's ``name`` attribute.
    batch_size : int, optional
        Samples in ``example_input``; default: the first dimension of its first tensor.

    Returns
    -------
    networkx.DiGraph
        A layer graph (per-sample quantities), graph attribute ``reference`` = the module's class.

    Raises
    ------
    ImportError
        If torch is not installed.
    InvalidParameterError
        If ``module`` or ``example_input`` has the wrong type, or the module cannot be traced.

    Examples
    --------
    >>> torch = __import__("pytest").importorskip("torch")
    >>> net = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    >>> G = from_torch(net, torch.zeros(3, 8))
    >>> [(n, d["params"], d["fwd_flops"]) for n, d in G.nodes(data=True)]
    [('0', 36, 68.0), ('1', 0, 4.0), ('2', 10, 18.0)]
    """
    torch, ShapeProp = _import_torch()
    inputs = example_input if isinstance(example_input, tuple) else (example_input,)
    batch = int(batch_size if batch_size is not None else (inputs[0].shape[0] if inputs[0].dim()
                                                           else 1))
    try:
        gm = torch.fx.symbolic_trace(module)
    except Exception as exc:  # torch raises many kinds of errors on untraceable code
        raise InvalidParameterError(
            f"from_torch: torch.fx cannot trace {type(module).__name__}: {exc}") from exc
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            ShapeProp(gm).propagate(*inputs)
    finally:
        module.train(was_training)
    modules = dict(gm.named_modules())
    b = LayerGraphBuilder(name=name, family="torch",
                          reference=f"{type(module).__module__}.{type(module).__qualname__}",
                          input={"shapes": [list(t.shape[1:]) for t in inputs]})
    seen_params: set[int] = set()
    ids: dict = {}
    used: dict = {}
    placeholders = {n for n in gm.graph.nodes if n.op == "placeholder"}

    def per_sample(x: int) -> int:
        return x // batch

    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        meta = node.meta.get("tensor_meta")
        out = per_sample(_numel(meta))
        args = [a for a in node.all_input_nodes]
        preds = [ids[a] for a in args if a in ids]
        in_elems = sum(per_sample(_numel(a.meta.get("tensor_meta"))) for a in args)
        params = 0
        mod = modules.get(node.target) if node.op == "call_module" else None
        if node.op == "get_attr":
            obj = gm
            for part in str(node.target).split("."):
                obj = getattr(obj, part)
            if isinstance(obj, torch.nn.Parameter) and id(obj) not in seen_params:
                seen_params.add(id(obj))
                params = obj.numel()
            ltype, rule = "embedding" if params else "other", "zero"
        else:
            ltype, rule = _classify(torch, node, mod)
        if mod is not None:
            for p in mod.parameters():
                if id(p) not in seen_params:
                    seen_params.add(id(p))
                    params += p.numel()
        fwd = 0
        if rule == "linear":
            fwd = 2 * mod.in_features * out + (out if mod.bias is not None else 0)
        elif rule == "conv":
            k = math.prod(mod.kernel_size) * (mod.in_channels // mod.groups)
            fwd = 2 * k * out + (out if mod.bias is not None else 0)
        elif rule == "matmul":
            a_meta = args[0].meta.get("tensor_meta")
            fwd = 2 * out * (a_meta.shape[-1] if a_meta is not None else 0)
        elif rule == "mha":
            fwd, bwd_extra, act_mha = _mha_flops(mod, args, batch)
        elif rule == "maxpool":
            ks = mod.kernel_size if mod is not None else node.args[1]
            fwd = out * (math.prod(ks) if isinstance(ks, tuple) else ks ** (len(meta.shape) - 2))
        elif rule == "avgpool":
            first = args[0].meta.get("tensor_meta")
            fwd = per_sample(_numel(first))
        elif rule in EW:
            fwd = EW[rule] * out
        only_model_inputs = bool(args) and all(a in placeholders for a in args)
        bwd = fwd if only_model_inputs and params else 2 * fwd
        if rule == "mha":
            bwd += bwd_extra
        if ltype in ("add", "concat") or rule in ("avgpool", "zero"):
            act = 0
        elif params or rule == "maxpool" or ltype == "norm":
            act = in_elems
        else:
            act = out
        if rule == "mha":
            act = act_mha
        nid = _node_id(node, used)
        b.add(nid, ltype, inputs=preds, fwd_flops=fwd, bwd_flops=bwd, params=params,
              out_elems=out, act_elems=act, target=str(node.target))
        ids[node] = nid
    return b.build()
