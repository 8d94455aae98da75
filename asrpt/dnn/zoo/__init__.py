"""The model zoo: real architectures as layer graphs, built analytically (no downloads).

This package owns the table of models (:func:`model_names`, :func:`get_model`) and the cached
construction of their layer graphs (:func:`layer_graph`). Each model's parameter count equals its
reference implementation's exactly (pinned in :attr:`ModelSpec.params` and in the tests):
torchvision for the CNNs and ViTs (default ImageNet heads), kuangliu/pytorch-cifar for
``resnet18_cifar``, Hugging Face ``transformers`` for BERT (``BertModel`` with pooler), GPT-2 and
GPT-3 (``GPT2LMHeadModel``, tied embeddings) and LLaMA (``LlamaForCausalLM``; untied head except
``llama-1b``). Graphs follow the schema and FLOP convention of :mod:`asrpt.dnn.layers`; the
family modules (:mod:`.cnn`, :mod:`.transformer`) document their granularity.

==============  ==========  =================  ==============================================
name            family      params             reference, head, embeddings
==============  ==========  =================  ==============================================
resnet18        resnet           11,689,512    torchvision, fc 1000
resnet34        resnet           21,797,672    torchvision, fc 1000
resnet50        resnet           25,557,032    torchvision, fc 1000
resnet101       resnet           44,549,160    torchvision, fc 1000
resnet152       resnet           60,192,808    torchvision, fc 1000
resnet18_cifar  resnet           11,173,962    kuangliu/pytorch-cifar, linear 10
vgg11           vgg             132,863,336    torchvision, classifier 1000
vgg16           vgg             138,357,544    torchvision, classifier 1000
vgg19           vgg             143,667,240    torchvision, classifier 1000
mobilenet_v2    mobilenet         3,504,872    torchvision, classifier 1000
densenet121     densenet          7,978,856    torchvision, classifier 1000
vit_b_16        vit              86,567,656    torchvision, heads.head 1000
vit_l_16        vit             304,326,632    torchvision, heads.head 1000
bert-base       bert            109,482,240    HF BertModel, pooler
bert-large      bert            335,141,888    HF BertModel, pooler
gpt2            gpt2            124,439,808    HF GPT2LMHeadModel, lm_head tied
gpt2-medium     gpt2            354,823,168    HF GPT2LMHeadModel, lm_head tied
gpt2-large      gpt2            774,030,080    HF GPT2LMHeadModel, lm_head tied
gpt2-xl         gpt2          1,557,611,200    HF GPT2LMHeadModel, lm_head tied
gpt3-125m       gpt3            125,226,240    HF GPT2LMHeadModel, n_positions 2048, tied
gpt3-350m       gpt3            355,871,744    idem
gpt3-760m       gpt3            760,300,032    idem
gpt3-1.3b       gpt3          1,315,723,264    idem
gpt3-2.7b       gpt3          2,651,553,280    idem
gpt3-6.7b       gpt3          6,658,404,352    idem
gpt3-13b        gpt3         12,853,386,240    idem (d_model 5120)
gpt3-175b       gpt3        174,604,259,328    idem
llama-1b        llama         1,235,814,400    HF LlamaForCausalLM, Llama-3.2-1B, tied
llama-7b        llama         6,738,415,616    HF LlamaForCausalLM, Llama-2-7B, untied
llama-8b        llama         8,030,261,248    HF LlamaForCausalLM, Llama-3.1-8B, untied
llama-13b       llama        13,015,864,320    HF LlamaForCausalLM, Llama-2-13B, untied
llama-70b       llama        68,976,648,192    HF LlamaForCausalLM, Llama-2-70B (GQA 8), untied
==============  ==========  =================  ==============================================

Examples
--------
>>> from asrpt.dnn.layers import total_params
>>> get_model("gpt2").params, total_params(layer_graph("gpt2"))
(124439808, 124439808)
>>> layer_graph("gpt2", seq_len=128).graph["input"]
{'seq_len': 128}
"""

from __future__ import annotations

import copy
import difflib
from functools import lru_cache
from typing import Any

import networkx as nx

from ..._validation import validate_parameter_constraints, validate_params
from ...errors import InvalidParameterError
from . import cnn, transformer  # noqa: F401  (registers the models)
from ._registry import ON_CHANGE, REGISTRY, ModelSpec, register_model

__all__ = ["ModelSpec", "model_names", "get_model", "layer_graph", "register_model"]

ModelSpec.__module__ = __name__  # documented and shown as asrpt.dnn.zoo.ModelSpec


def _norm(name: str) -> str:
    return name.lower().replace("-", "_")


def _did_you_mean(word: str, choices, what: str, where: str) -> InvalidParameterError:
    choices = list(choices)
    normed = {_norm(c): c for c in choices}
    close = [normed[c] for c in difflib.get_close_matches(_norm(word), list(normed), n=3,
                                                          cutoff=0.6)]
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return InvalidParameterError(
        f"Unknown {what} {word!r} for {where}.{hint} Valid: {', '.join(choices)}.")


@validate_params({})
def model_names() -> tuple[str, ...]:
    """Names of every zoo model, in registration order.

    Returns
    -------
    tuple of str

    Raises
    ------
    None

    Examples
    --------
    >>> "resnet50" in model_names(), "llama-70b" in model_names()
    (True, True)
    """
    return tuple(REGISTRY)


@validate_params({"name": [str]})
def get_model(name: str) -> ModelSpec:
    """The :class:`ModelSpec` of a zoo model.

    Parameters
    ----------
    name : str
        A zoo name (see :func:`model_names`); spelling is exact.

    Returns
    -------
    ModelSpec

    Raises
    ------
    InvalidParameterError
        If ``name`` is not a str or not a zoo model (the message suggests close names).

    Examples
    --------
    >>> spec = get_model("llama-70b")
    >>> spec.params, spec.tied_embeddings, spec.input["seq_len"]
    (68976648192, False, 4096)
    >>> get_model("resnet5")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: Unknown model 'resnet5' for get_model. Did you mean 'resnet50' ...
    """
    try:
        return REGISTRY[name]
    except KeyError:
        raise _did_you_mean(name, REGISTRY, "model", "get_model") from None


@lru_cache(maxsize=128)
def _build(name: str, overrides: tuple[tuple[str, Any], ...]) -> nx.DiGraph:
    G = REGISTRY[name].builder(**dict(overrides))
    nx.freeze(G)
    return G


ON_CHANGE.append(_build.cache_clear)  # a replaced model must not be served from the cache


def _copy(G: nx.DiGraph) -> nx.DiGraph:
    H = nx.DiGraph()
    H.graph.update(copy.deepcopy(G.graph))
    H.add_nodes_from((n, d.copy()) for n, d in G._node.items())
    H.add_edges_from((u, v, d.copy()) for u, nbrs in G._adj.items() for v, d in nbrs.items())
    return H


@validate_params({"name": [str], "overrides": [dict]})
def layer_graph(name: str, **overrides: Any) -> nx.DiGraph:
    """The layer graph of a zoo model (a fresh copy of a cached build).

    Parameters
    ----------
    name : str
        A zoo name.
    **overrides
        Changes to the default input, per model (``get_model(name).overrides``):
        ``seq_len`` for transformers (up to the model's position limit), ``image_size`` and
        ``num_classes`` for ImageNet models (``image_size`` a multiple of 16 for ViT),
        ``num_classes`` for ``resnet18_cifar``. ``num_classes`` and ViT's ``image_size`` change
        the parameter count; the others do not.

    Returns
    -------
    networkx.DiGraph
        A layer graph (schema in :mod:`asrpt.dnn.layers`) owned by the caller.

    Raises
    ------
    InvalidParameterError
        If the model is unknown, an override is not accepted by this model, or its value is
        out of range.

    Examples
    --------
    >>> G = layer_graph("resnet18_cifar")
    >>> G.graph["input"], G.number_of_nodes()
    ({'image': [3, 32, 32]}, 67)
    >>> layer_graph("gpt2", image_size=64)
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: Unknown override 'image_size' for layer_graph('gpt2'). Valid: seq_len.
    """
    spec = get_model(name)
    unknown = sorted(set(overrides) - set(spec.overrides))
    if unknown:
        raise _did_you_mean(unknown[0], spec.overrides, "override", f"layer_graph({name!r})")
    validate_parameter_constraints(dict(spec.overrides), overrides, f"layer_graph({name!r})")
    return _copy(_build(name, tuple(sorted(overrides.items()))))
