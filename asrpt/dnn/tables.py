"""Layer tables: a layer graph as per-layer arrays in execution order, built once per model.

This module owns the one conversion from a layer graph (:mod:`asrpt.dnn.layers`) to the arrays
the performance model prices (FLOPs, parameters, activations, cut sizes per layer) and its
caches by zoo name, by (name, sequence length) and by graph. It needs no runtime parameters, so
the parallel plans (:mod:`asrpt.dnn.parallel`) and the calibration fit
(:mod:`asrpt.dnn.calibration`) both read it without importing each other.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from functools import lru_cache

import networkx as nx
import numpy as np

from .roofline import ALIGN_ELEMS, layer_class

__all__ = ["TP_ALLREDUCES", "CONV_TYPES"]

#: Tensor-parallel all-reduces per layer and forward pass (the backward pass has as many).
#: Megatron-LM: one after the attention block and one after the MLP (row-parallel outputs),
#: one for a vocabulary-parallel embedding; a "block" (a coarsened transformer layer) has both.
#: Linear heads keep their output sharded (vocabulary-parallel loss); a tensor-parallel
#: convolution is charged one all-reduce of its output (an upper estimate; TP is rare for CNNs).
TP_ALLREDUCES = {"attention": 1, "mlp": 1, "block": 2, "embedding": 1, "conv": 1}

#: Layer types priced with the convolution efficiency; all others with the dense one.
CONV_TYPES = frozenset({"conv"})


@dataclass(frozen=True, eq=False)
class _LayerTable:
    """A layer graph as arrays in ``order`` (internal)."""

    name: str
    nodes: tuple
    types: tuple
    fwd: np.ndarray
    bwd: np.ndarray
    params: np.ndarray
    out: np.ndarray
    act: np.ndarray
    inp: np.ndarray
    cut: np.ndarray          # elems crossing a cut after position i (len L; last is 0)
    tp_allreduces: np.ndarray
    conv: np.ndarray         # bool mask
    default_batch_size: int
    klass: tuple = ()        # operator class per layer (asrpt.dnn.roofline.layer_class)
    score: np.ndarray = None  # materialised attention-score elements per sample
    misaligned: np.ndarray = None  # dense layers of a width not a multiple of ALIGN_ELEMS
    channels: np.ndarray = None    # channels of a channels-first batch normalization (else 0)
    ew: np.ndarray = None          # elements of a composite's separate elementwise kernels
    stash: np.ndarray = None       # bytes per sample saved for backward (memory), NaN: unknown
    core_fwd: np.ndarray = None    # FLOPs per sample of a fused attention kernel (forward)
    core_bwd: np.ndarray = None    # and backward (part of fwd / bwd)
    weight_cache_bytes: float | None = None  # the graph's per-parameter weight cache, if set

    @property
    def n_layers(self) -> int:
        return len(self.nodes)


def _build_table(G: nx.DiGraph) -> _LayerTable:
    from . import layers as _layers

    _layers.validate_layer_graph(G)
    nodes = tuple(sorted(G.nodes, key=lambda n: G.nodes[n]["order"]))
    data = [G.nodes[n] for n in nodes]
    types = tuple(str(d["type"]) for d in data)
    f = lambda key: np.array([float(d[key]) for d in data], dtype=float)  # noqa: E731
    out = f("out_elems")
    act = np.array([float(d.get("act_elems", d["out_elems"])) for d in data])
    inp = np.array([float(sum(e for _, _, e in G.in_edges(n, data="elems"))) for n in nodes])
    inp = np.where(inp > 0, inp, out)
    cut = np.array(_layers.cut_profile(G), dtype=float)
    return _LayerTable(
        name=str(G.graph.get("name", "<unnamed>")), nodes=nodes, types=types,
        fwd=f("fwd_flops"), bwd=f("bwd_flops"), params=f("params"), out=out, act=act, inp=inp,
        cut=cut, tp_allreduces=np.array([float(TP_ALLREDUCES.get(t, 0)) for t in types]),
        conv=np.array([t in CONV_TYPES for t in types], dtype=bool),
        default_batch_size=int(G.graph.get("default_batch_size", 1) or 1),
        klass=tuple(layer_class(t, int(d.get("groups", 1))) for t, d in zip(types, data)),
        score=np.array([float(d.get("score_elems", 0)) for d in data]),
        misaligned=np.array([t == "linear" and int(d.get("width", 0)) % ALIGN_ELEMS != 0
                             for t, d in zip(types, data)], dtype=bool),
        channels=np.array([float(d.get("channels", 0)) for d in data]),
        ew=np.array([float(d.get("ew_elems", 0)) for d in data]),
        stash=np.array([float(d.get("stash_bytes", math.nan)) for d in data]),
        core_fwd=np.array([float(d.get("core_fwd_flops", 0)) for d in data]),
        core_bwd=np.array([float(d.get("core_bwd_flops", 0)) for d in data]),
        weight_cache_bytes=(float(G.graph["weight_cache_bytes"])
                            if G.graph.get("weight_cache_bytes") is not None else None))


_TABLES_BY_GRAPH: "weakref.WeakKeyDictionary[nx.DiGraph, _LayerTable]" = weakref.WeakKeyDictionary()


def _zoo_layer_graph(name: str) -> nx.DiGraph:
    from .zoo import layer_graph

    return layer_graph(name)


@lru_cache(maxsize=256)
def _table_for_name(name: str) -> _LayerTable:
    return _build_table(_zoo_layer_graph(name))


@lru_cache(maxsize=256)
def _table_for_ref(name: str, seq_len: int) -> _LayerTable:
    from .zoo import layer_graph

    return _build_table(layer_graph(name, seq_len=seq_len))


def _model_ref(job):
    """A job's model as the plan caches key it: the zoo name, or (name, seq_len) when the job
    sets a sequence length."""
    seq = getattr(job, "seq_len", None)
    return job.model if seq is None else (job.model, int(seq))


def _table(model) -> _LayerTable:
    if isinstance(model, str):
        return _table_for_name(model)
    if isinstance(model, tuple):
        return _table_for_ref(*model)
    table = _TABLES_BY_GRAPH.get(model)
    if table is None:
        table = _build_table(model)
        _TABLES_BY_GRAPH[model] = table
    return table
