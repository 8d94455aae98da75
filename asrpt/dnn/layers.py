"""Layer graphs: the DNN as a DAG of layers, their schema, totals and pipeline cuts.

This module owns the *layer graph* data shape (``docs/design.md``, "Shared data shapes / Layer
graph"), the helpers that read it, and :class:`LayerGraphBuilder`, which the model zoo
(:mod:`asrpt.dnn.zoo`) uses to write graphs in a few lines. It knows nothing about GPUs, parallel
configurations or time (:mod:`asrpt.dnn.parallel` and :mod:`asrpt.dnn.perf` do).

The schema, all quantities **per sample** (one image or one sequence):

- graph attributes: ``name``, ``family``, ``reference``, ``head``, ``tied_embeddings``,
  ``default_batch_size`` (global mini-batch, samples), ``input`` (a dict such as
  ``{"image": [3, 224, 224]}`` or ``{"seq_len": 1024}``), ``num_layers`` (transformer blocks;
  None for CNNs) and, for transformers (ViT included), ``hidden_size``, ``num_heads``,
  ``num_kv_heads``, ``ffn_hidden_size``, ``seq_len`` and, for language models, ``vocab_size`` and
  ``max_positions``;
- node attributes: ``type`` (str, one of :data:`NODE_TYPES` for zoo graphs), ``order`` (int, a
  topological index 0..L-1: pipeline stages are contiguous ranges of ``order``), ``fwd_flops``,
  ``bwd_flops`` (floats), ``params`` (int), ``out_elems`` (int, output activation elements),
  ``act_elems`` (int, activation elements stashed for the backward pass; defaults to
  ``out_elems`` when absent); optionally ``stash_bytes`` (float, bytes per sample the layer
  keeps for its backward pass, memory only: set where tensors of mixed dtypes are counted from
  what the framework saves, as for the measured models of :mod:`asrpt.dnn.kernel_fit`; it
  replaces ``act_elems`` x the precision's activation bytes in the memory per GPU, not in
  time). A graph attribute ``weight_cache_bytes`` (bytes per parameter of cached low-precision
  weight copies, e.g. 2 for a model run under autocast) overrides the precision's. Zoo graphs add ``block`` (the module path of the enclosing block,
  e.g. ``"layer3.2"`` or ``"transformer.h.7"``; absent on stem and head layers), read by
  :func:`coarsen_blocks`, and ``tied_to`` on a head that shares the embedding matrix (its
  ``params`` are 0: a tied weight is counted once, where it is first used);
- edge attributes: ``elems`` (int, tensor elements per sample flowing along the edge). A
  pipeline cut after order ``i`` sends every tensor produced at order <= i and read after it,
  once (:func:`cut_elems`, :func:`cut_profile`).

Activation convention (``act_elems``): dense and convolution layers and norms stash their input;
activations their output; max pooling its input; residual adds, concatenations, average pooling
and embedding look-ups nothing; attention and MLP nodes what their internal matmuls need (below).

FLOP convention
---------------
One multiply-add counts 2 FLOPs: a dense layer mapping ``n`` inputs to ``m`` outputs costs
``2 n m`` per output position, plus ``m`` for a bias. Cheap elementwise operators count a fixed
number of FLOPs per element (:data:`ELEMENTWISE_FLOPS`): activation, residual add, multiply 1;
LayerNorm and BatchNorm 5 (mean, centre, variance, normalise, affine); RMSNorm 4; softmax 5 per
attention score (scale, max, exp, sum, divide); rotary embedding 3; max pooling one comparison per
window element; average pooling one add per input element. Reshapes, concatenation, dropout and
embedding look-ups count 0; the loss is not modelled.

The backward pass costs ``bwd_flops = 2 * fwd_flops`` (gradients with respect to the input and to
the weights) unless the layer says otherwise. The zoo says otherwise in two places: the first
layer that reads the input data (a CNN's stem convolution, ViT's patch projection) has no input
gradient to compute, so ``bwd = fwd``; and attention layers follow memory-efficient attention
(FlashAttention, or the selective recomputation of Korthikanti et al., 2022): the ``s x s`` scores
are not stashed, so ``act_elems`` is O(s d) and the backward pass recomputes ``Q K^T`` and the
softmax (``bwd = 2 fwd + 2 s^2 d + 5 h s^2``).

Functions here never mutate their input graph. They assume the schema; :func:`validate_layer_graph`
checks it, and a missing attribute is reported as :class:`~asrpt.errors.InvalidParameterError`.

Examples
--------
>>> b = LayerGraphBuilder(name="tiny")
>>> x = b.add("fc1", "linear", fwd_flops=2 * 4 * 8, params=4 * 8, out_elems=8)
>>> y = b.add("relu", "act", inputs=[x], fwd_flops=8, out_elems=8)
>>> z = b.add("fc2", "linear", inputs=[y], fwd_flops=2 * 8 * 2, params=8 * 2, out_elems=2)
>>> G = b.build()
>>> total_params(G), total_fwd_flops(G), chain(G)
(48, 104.0, ['fc1', 'relu', 'fc2'])
"""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any, Iterable, Mapping

import networkx as nx

from .._validation import InstanceOf, Interval, is_integer, is_number, validate_params
from ..errors import InvalidParameterError

__all__ = [
    "NODE_TYPES",
    "ELEMENTWISE_FLOPS",
    "REQUIRED_NODE_ATTRS",
    "LayerGraphBuilder",
    "validate_layer_graph",
    "layer_graph_problems",
    "chain",
    "total_params",
    "total_fwd_flops",
    "total_bwd_flops",
    "total_flops",
    "activation_elems",
    "cut_elems",
    "cut_profile",
    "coarsen_blocks",
]

#: Node types used by the zoo (other graphs may use other strings).
NODE_TYPES = frozenset({
    "conv", "linear", "embedding", "attention", "mlp", "norm", "pool", "act", "add", "concat",
    "block", "matmul", "other",
})

#: FLOPs per element of the cheap (non-matmul) operators; see the module docstring.
ELEMENTWISE_FLOPS = {
    "act": 1,        # ReLU, ReLU6, GELU, SiLU, tanh: one FLOP per element, whatever the function
    "add": 1,        # residual add, positional-embedding add
    "mul": 1,        # SwiGLU gate product
    "layernorm": 5,  # LayerNorm and BatchNorm: mean, centre, variance, normalise, affine
    "rmsnorm": 4,    # square, mean, rescale, weight
    "softmax": 5,    # per attention score: scale, max, exp, sum, divide (mask included)
    "rope": 3,       # rotary embedding per rotated element: two multiplies and an add
}

#: Node attributes every layer graph must carry (``act_elems`` is optional).
REQUIRED_NODE_ATTRS = ("type", "order", "fwd_flops", "bwd_flops", "params", "out_elems")

_GRAPH = [InstanceOf(nx.DiGraph)]


def _schema_error(G: nx.DiGraph, exc: Exception) -> InvalidParameterError:
    name = G.graph.get("name", "<unnamed>")
    return InvalidParameterError(
        f"layer graph {name!r} does not follow the layer-graph schema: missing attribute {exc}; "
        "see asrpt.dnn.layers.validate_layer_graph.")


class LayerGraphBuilder:
    """Append layers in execution order and get a validated layer graph.

    Each :meth:`add` appends one node with the next ``order``; its ``inputs`` become edges
    carrying the producer's ``out_elems`` (or the value given in ``edge_elems``). Because nodes
    are appended in execution order, ``order`` is topological by construction.

    Parameters
    ----------
    name : str
        The graph's ``name`` attribute.
    **graph_attrs
        Further graph attributes (``family``, ``reference``, ``head``, ``tied_embeddings``,
        ``default_batch_size``, ``input``, ...). Missing schema attributes get neutral defaults.

    Examples
    --------
    >>> b = LayerGraphBuilder(name="res", family="toy")
    >>> x = b.add("conv", "conv", fwd_flops=100, params=10, out_elems=16)
    >>> y = b.add("relu", "act", inputs=[x], fwd_flops=16, out_elems=16)
    >>> s = b.add("add", "add", inputs=[x, y], fwd_flops=16, out_elems=16, act_elems=0)
    >>> G = b.build()
    >>> G.nodes["add"]["order"], G.edges["conv", "add"]["elems"], G.graph["family"]
    (2, 16, 'toy')
    """

    def __init__(self, *, name: str, **graph_attrs: Any) -> None:
        self._graph = nx.DiGraph()
        self._graph.graph.update({
            "name": name, "family": "custom", "reference": "", "head": "",
            "tied_embeddings": False, "default_batch_size": 1, "input": {},
        })
        self._graph.graph.update(graph_attrs)
        self._order = 0

    def __len__(self) -> int:
        return self._order

    def add(self, node: str, type: str, *, inputs: Iterable[str] = (), fwd_flops: float = 0,
            params: int = 0, out_elems: int, act_elems: int | None = None,
            bwd_flops: float | None = None, edge_elems: Mapping[str, int] | None = None,
            block: str | None = None, **attrs: Any) -> str:
        """Append a layer; return its node id (to pass as an input of later layers).

        Parameters
        ----------
        node : str
            Unique node id (the zoo uses the reference implementation's module path).
        type : str
            Layer type, e.g. ``"conv"`` or ``"attention"``.
        inputs : iterable of str
            Earlier nodes whose outputs this layer reads.
        fwd_flops : float
            Forward FLOPs per sample.
        params : int
            Parameters owned by this layer (a tied weight is counted at its first use only).
        out_elems : int
            Output activation elements per sample.
        act_elems : int, optional
            Activation elements stashed for backward; defaults to ``out_elems``.
        bwd_flops : float, optional
            Backward FLOPs per sample; defaults to ``2 * fwd_flops``.
        edge_elems : mapping, optional
            Elements per sample on the edge from a given input, when not its ``out_elems``.
        block : str, optional
            Enclosing block (module path), read by :func:`coarsen_blocks`.
        **attrs
            Further node attributes.

        Returns
        -------
        str
            ``node``.

        Raises
        ------
        InvalidParameterError
            If the id is taken, an input is unknown, or a number is negative or not finite.
        """
        G = self._graph
        if node in G:
            raise InvalidParameterError(f"LayerGraphBuilder.add: node {node!r} already exists")
        inputs = list(inputs)
        for u in inputs:
            if u not in G:
                raise InvalidParameterError(
                    f"LayerGraphBuilder.add: input {u!r} of {node!r} is not an earlier layer")
        act = out_elems if act_elems is None else act_elems
        bwd = 2 * fwd_flops if bwd_flops is None else bwd_flops
        for key, value, integral in (("fwd_flops", fwd_flops, False), ("bwd_flops", bwd, False),
                                     ("params", params, True), ("out_elems", out_elems, True),
                                     ("act_elems", act, True)):
            ok = is_integer(value) if integral else is_number(value) and math.isfinite(value)
            if not ok or value < 0:
                raise InvalidParameterError(
                    f"LayerGraphBuilder.add: {key} of {node!r} must be a non-negative "
                    f"{'int' if integral else 'finite number'}. Got {value!r} instead.")
        data = {"type": type, "order": self._order, "fwd_flops": float(fwd_flops),
                "bwd_flops": float(bwd), "params": int(params), "out_elems": int(out_elems),
                "act_elems": int(act)}
        if block is not None:
            data["block"] = block
        data.update(attrs)
        G.add_node(node, **data)
        edge_elems = edge_elems or {}
        for u in inputs:
            G.add_edge(u, node, elems=int(edge_elems.get(u, G.nodes[u]["out_elems"])))
        self._order += 1
        return node

    def out_elems(self, node: str) -> int:
        """Output elements of an already added node."""
        return self._graph.nodes[node]["out_elems"]

    def build(self) -> nx.DiGraph:
        """Return the graph (validated). The builder must not be used afterwards.

        Raises
        ------
        InvalidParameterError
            If the graph breaks the schema (e.g. it is empty).
        """
        validate_layer_graph(self._graph)
        return self._graph


@validate_params({"G": "no_validation"})
def layer_graph_problems(G: nx.DiGraph) -> list[str]:
    """Every way ``G`` breaks the layer-graph schema, as one-line messages.

    Parameters
    ----------
    G : networkx.DiGraph
        The candidate layer graph (anything is accepted and judged).

    Returns
    -------
    list of str
        Empty when ``G`` follows the schema.

    Raises
    ------
    None

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.DiGraph()
    >>> G.add_node("a", type="linear", order=0, fwd_flops=8.0, bwd_flops=16.0, params=4)
    >>> layer_graph_problems(G)
    ["node 'a' lacks 'out_elems'"]
    """
    problems: list[str] = []
    if not isinstance(G, nx.DiGraph) or G.is_multigraph():
        return ["a layer graph must be a networkx.DiGraph"]
    if G.number_of_nodes() == 0:
        return ["the graph has no layers"]
    orders = {}
    for n, d in G.nodes(data=True):
        for key in REQUIRED_NODE_ATTRS:
            if key not in d:
                problems.append(f"node {n!r} lacks {key!r}")
        if "type" in d and not isinstance(d["type"], str):
            problems.append(f"node {n!r}: 'type' must be a str, got {d['type']!r}")
        for key in ("params", "out_elems", "act_elems", "order"):
            if key in d and not (is_integer(d[key]) and d[key] >= 0):
                problems.append(f"node {n!r}: {key!r} must be a non-negative int, got {d[key]!r}")
        for key in ("fwd_flops", "bwd_flops"):
            if key in d and not (is_number(d[key]) and math.isfinite(d[key]) and d[key] >= 0):
                problems.append(f"node {n!r}: {key!r} must be a non-negative finite number, "
                                f"got {d[key]!r}")
        if is_integer(d.get("order")):
            orders[n] = d["order"]
    for u, v, d in G.edges(data=True):
        if "elems" not in d:
            problems.append(f"edge {u!r} -> {v!r} lacks 'elems'")
        elif not (is_integer(d["elems"]) and d["elems"] >= 0):
            problems.append(f"edge {u!r} -> {v!r}: 'elems' must be a non-negative int, "
                            f"got {d['elems']!r}")
        if u in orders and v in orders and orders[u] >= orders[v]:
            problems.append(f"edge {u!r} -> {v!r} goes against 'order' "
                            f"({orders[u]} -> {orders[v]})")
    if len(orders) == G.number_of_nodes() and sorted(orders.values()) != list(range(len(orders))):
        problems.append(f"'order' must number the layers 0..{len(orders) - 1} exactly once each")
    if not problems and not nx.is_directed_acyclic_graph(G):  # unreachable when orders agree
        problems.append("the graph has a cycle")
    return problems


@validate_params({"G": "no_validation"})
def validate_layer_graph(G: nx.DiGraph) -> None:
    """Check that ``G`` follows the layer-graph schema.

    Parameters
    ----------
    G : networkx.DiGraph
        The candidate layer graph.

    Returns
    -------
    None

    Raises
    ------
    InvalidParameterError
        Naming the first problem (and how many more there are): not a DiGraph, no layers, a
        missing or negative attribute, ``order`` not a permutation of 0..L-1, or an edge against
        ``order``.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.DiGraph()
    >>> G.add_node("a", type="linear", order=0, fwd_flops=8.0, bwd_flops=16.0, params=4, out_elems=2)
    >>> validate_layer_graph(G)
    >>> G.add_node("b", type="act", order=0, fwd_flops=2.0, bwd_flops=4.0, params=0, out_elems=2)
    >>> validate_layer_graph(G)
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: layer graph '<unnamed>': 'order' must number the layers 0..1 exactly once each
    """
    problems = layer_graph_problems(G)
    if problems:
        name = G.graph.get("name", "<unnamed>") if isinstance(G, nx.Graph) else "<not a graph>"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise InvalidParameterError(f"layer graph {name!r}: {problems[0]}{more}")


@validate_params({"G": _GRAPH})
def chain(G: nx.DiGraph) -> list:
    """The layers in pipeline order (sorted by ``order``).

    Parameters
    ----------
    G : networkx.DiGraph
        A layer graph.

    Returns
    -------
    list
        Node ids, ``chain(G)[i]`` having ``order == i``.

    Raises
    ------
    InvalidParameterError
        If a node lacks ``order``.

    Examples
    --------
    >>> from asrpt.dnn.zoo import layer_graph
    >>> chain(layer_graph("resnet18"))[:4]
    ['conv1', 'bn1', 'relu', 'maxpool']
    """
    try:
        return sorted(G.nodes, key=lambda n: G.nodes[n]["order"])
    except KeyError as exc:
        raise _schema_error(G, exc) from None


def _sum(G: nx.DiGraph, key: str) -> Any:
    try:
        return sum(d[key] for _, d in G.nodes(data=True))
    except KeyError as exc:
        raise _schema_error(G, exc) from None


@validate_params({"G": _GRAPH})
def total_params(G: nx.DiGraph) -> int:
    """Total parameter count (tied weights counted once).

    Parameters
    ----------
    G : networkx.DiGraph
        A layer graph.

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        If a node lacks ``params``.

    Examples
    --------
    >>> from asrpt.dnn.zoo import layer_graph
    >>> total_params(layer_graph("resnet50"))
    25557032
    """
    return int(_sum(G, "params"))


@validate_params({"G": _GRAPH})
def total_fwd_flops(G: nx.DiGraph) -> float:
    """Forward FLOPs per sample (multiply-add = 2 FLOPs).

    Parameters
    ----------
    G : networkx.DiGraph
        A layer graph.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If a node lacks ``fwd_flops``.

    Examples
    --------
    >>> from asrpt.dnn.zoo import layer_graph
    >>> total_fwd_flops(layer_graph("resnet50"))  # FLOPs per 224x224 image
    8250974184.0
    """
    return float(_sum(G, "fwd_flops"))


@validate_params({"G": _GRAPH})
def total_bwd_flops(G: nx.DiGraph) -> float:
    """Backward FLOPs per sample.

    Parameters
    ----------
    G : networkx.DiGraph
        A layer graph.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If a node lacks ``bwd_flops``.

    Examples
    --------
    >>> from asrpt.dnn.zoo import layer_graph
    >>> G = layer_graph("gpt2", seq_len=128)
    >>> total_bwd_flops(G) > 2 * total_fwd_flops(G)  # attention recomputes its scores
    True
    """
    return float(_sum(G, "bwd_flops"))


@validate_params({"G": _GRAPH, "batch_size": [Interval(Integral, 1, None, closed="left")]})
def total_flops(G: nx.DiGraph, batch_size: int) -> float:
    """Training FLOPs of one iteration: ``batch_size * (forward + backward)`` per sample.

    Parameters
    ----------
    G : networkx.DiGraph
        A layer graph.
    batch_size : int
        Samples per iteration (the global mini-batch).

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        If ``batch_size`` is not a positive int or a node lacks a FLOP attribute.

    Examples
    --------
    >>> from asrpt.dnn.zoo import layer_graph
    >>> G = layer_graph("resnet18")
    >>> total_flops(G, 2) == 2 * (total_fwd_flops(G) + total_bwd_flops(G))
    True
    """
    try:
        per_sample = sum(d["fwd_flops"] + d["bwd_flops"] for _, d in G.nodes(data=True))
    except KeyError as exc:
        raise _schema_error(G, exc) from None
    return float(batch_size * per_sample)


@validate_params({"G": _GRAPH})
def activation_elems(G: nx.DiGraph) -> int:
    """Activation elements per sample stashed for the backward pass (sum of ``act_elems``,
    each defaulting to ``out_elems``).

    Parameters
    ----------
    G : networkx.DiGraph
        A layer graph.

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        If a node lacks both ``act_elems`` and ``out_elems``.

    Examples
    --------
    >>> b = LayerGraphBuilder(name="t")
    >>> x = b.add("a", "linear", out_elems=10, act_elems=4)
    >>> y = b.add("b", "act", inputs=[x], out_elems=10)
    >>> activation_elems(b.build())
    14
    """
    try:
        return int(sum(d["act_elems"] if "act_elems" in d else d["out_elems"]
                       for _, d in G.nodes(data=True)))
    except KeyError as exc:
        raise _schema_error(G, exc) from None


def _crossing_spans(G: nx.DiGraph) -> tuple[int, list[tuple[int, int, int]]]:
    """(L, [(first_cut, last_cut, elems)]): the pieces of each producer's crossing profile.

    A producer ``u`` contributes, at cut ``i``, the largest ``elems`` among its edges to layers
    of order > i (a suffix maximum over its successors sorted by order).
    """
    try:
        order = {n: d["order"] for n, d in G.nodes(data=True)}
        spans = []
        for u, succ in G.succ.items():
            if not succ:
                continue
            ou = order[u]
            outs = sorted((order[v], d["elems"]) for v, d in succ.items())
            suffix, best = [], 0
            for ov, e in reversed(outs):
                best = max(best, e)
                suffix.append((ov, best))
            suffix.reverse()
            start = ou
            for ov, e in suffix:
                if ov > start:
                    spans.append((start, ov - 1, e))
                    start = ov
    except KeyError as exc:
        raise _schema_error(G, exc) from None
    return len(order), spans


@validate_params({"G": _GRAPH, "i": [Interval(Integral, 0, None, closed="left")]})
def cut_elems(G: nx.DiGraph, i: int) -> int:
    """Elements per sample crossing a pipeline cut placed after the layer of order ``i``.

    The cut separates orders ``0..i`` from ``i+1..L-1`` and crosses every edge ``u -> v`` with
    ``order(u) <= i < order(v)``. A tensor is sent once however many later layers read it: each
    producer ``u`` contributes the largest ``elems`` among its crossing edges (in zoo graphs all
    out-edges of a node carry its ``out_elems``), so a residual stream read by both the next norm
    and the next add counts once.

    Parameters
    ----------
    G : networkx.DiGraph
        A layer graph.
    i : int
        The last order before the cut, ``0 <= i <= L - 1`` (``i = L - 1`` cuts nothing: 0).

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        If ``i`` is negative or at least the number of layers, or the graph lacks ``order`` or
        ``elems``.

    Examples
    --------
    >>> b = LayerGraphBuilder(name="skip")
    >>> x = b.add("a", "conv", out_elems=8)
    >>> y = b.add("b", "act", inputs=[x], out_elems=8)
    >>> z = b.add("c", "conv", inputs=[y], out_elems=4)
    >>> s = b.add("d", "add", inputs=[x, z], out_elems=8, edge_elems={x: 8})
    >>> G = b.build()
    >>> [cut_elems(G, i) for i in range(4)]
    [8, 16, 12, 0]
    """
    n = G.number_of_nodes()
    if i >= n:
        raise InvalidParameterError(
            f"The 'i' parameter of cut_elems must be an int in [0, {n - 1}] for a graph of {n} "
            f"layers. Got {i!r} instead.")
    _, spans = _crossing_spans(G)
    return int(sum(e for first, last, e in spans if first <= i <= last))


@validate_params({"G": _GRAPH})
def cut_profile(G: nx.DiGraph) -> list[int]:
    """``cut_elems(G, i)`` for every ``i`` in ``0..L-1`` at once, in O(L + E).

    Parameters
    ----------
    G : networkx.DiGraph
        A layer graph.

    Returns
    -------
    list of int
        Length L; the last entry is 0.

    Raises
    ------
    InvalidParameterError
        If the graph lacks ``order`` or ``elems``.

    Examples
    --------
    >>> from asrpt.dnn.zoo import layer_graph
    >>> G = layer_graph("gpt2", seq_len=8)
    >>> prof = cut_profile(G)
    >>> prof[chain(G).index("transformer.h.0.add_1")] == 8 * 768, prof[-1]
    (True, 0)
    """
    n, spans = _crossing_spans(G)
    diff = [0] * (n + 1)
    for first, last, e in spans:
        diff[first] += e
        diff[last + 1] -= e
    out, acc = [], 0
    for k in range(n):
        acc += diff[k]
        out.append(acc)
    return out


@validate_params({"G": _GRAPH})
def coarsen_blocks(G: nx.DiGraph) -> nx.DiGraph:
    """Merge each run of consecutive layers sharing a ``block`` attribute into one node.

    A smaller graph for pipeline partitioning (e.g. one node per transformer block or residual
    block). Merged nodes get ``type="block"``, summed ``fwd_flops``, ``bwd_flops``, ``params`` and
    ``act_elems``, the ``out_elems`` of their last layer, ``layers`` (the merged node ids, in
    order) and renumbered ``order``. Layers without ``block`` stay as they are. An edge ``A -> B``
    carries the elements of every layer of ``A`` still read at ``B`` or later, so that
    :func:`cut_elems` of the coarse graph equals that of ``G`` at every block boundary.

    Parameters
    ----------
    G : networkx.DiGraph
        A layer graph (not modified).

    Returns
    -------
    networkx.DiGraph
        A new layer graph with the same graph attributes.

    Raises
    ------
    InvalidParameterError
        If ``G`` breaks the schema.

    Examples
    --------
    >>> from asrpt.dnn.zoo import layer_graph
    >>> G = layer_graph("gpt2", seq_len=64)
    >>> H = coarsen_blocks(G)
    >>> H.number_of_nodes(), total_params(H) == total_params(G)
    (16, True)
    >>> chain(H)[:3]
    ['transformer.wte', 'transformer.wpe', 'transformer.h.0']
    >>> cut_profile(H)[2] == cut_profile(G)[chain(G).index("transformer.h.0.add_1")] == 64 * 768
    True
    """
    validate_layer_graph(G)
    nodes = chain(G)
    group_of: dict = {}
    groups: list[tuple[Any, list]] = []
    for n in nodes:
        blk = G.nodes[n].get("block")
        if blk is not None and groups and groups[-1][0] == blk:
            groups[-1][1].append(n)
        else:
            groups.append((blk, [n]))
        group_of[n] = len(groups) - 1
    H = nx.DiGraph()
    H.graph.update(G.graph)
    ids: list = []
    for k, (blk, members) in enumerate(groups):
        if blk is None:
            node = members[0]
            H.add_node(node, **{**G.nodes[node], "order": k})
        else:
            node = blk if (blk not in G or blk in members) and blk not in H else f"{blk}#{k}"
            ds = [G.nodes[m] for m in members]
            H.add_node(node, type="block", order=k, block=blk, layers=tuple(members),
                       fwd_flops=float(sum(d["fwd_flops"] for d in ds)),
                       bwd_flops=float(sum(d["bwd_flops"] for d in ds)),
                       params=int(sum(d["params"] for d in ds)),
                       out_elems=int(ds[-1]["out_elems"]),
                       act_elems=int(sum(d.get("act_elems", d["out_elems"]) for d in ds)))
        ids.append(node)
    # Each producing layer u sends max(elems of its edges leaving its group) to every later group
    # up to the farthest one reading it. The edge A -> B carries the producers of A still needed
    # at B or later, so that the largest edge crossing a cut (the rule of cut_elems) is exact.
    targets: dict[int, set] = {}
    producers: dict[int, list[tuple[int, int]]] = {}
    for u in nodes:
        gu = group_of[u]
        out = [(group_of[v], d["elems"]) for v, d in G.succ[u].items() if group_of[v] != gu]
        if not out:
            continue
        targets.setdefault(gu, set()).update(gv for gv, _ in out)
        producers.setdefault(gu, []).append((max(gv for gv, _ in out), max(e for _, e in out)))
    for gu, tset in targets.items():
        for gv in tset:
            elems = sum(e for far, e in producers[gu] if far >= gv)
            H.add_edge(ids[gu], ids[gv], elems=int(elems))
    return H
