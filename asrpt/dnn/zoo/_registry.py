"""The zoo's registry: :class:`ModelSpec` and the name -> spec table (filled by the family modules).

The table is an :class:`asrpt.registry.Registry` like every other name table of asrpt (its
``names()``, ``describe()`` and ``listing()`` give each model with its one-line description);
``REGISTRY[name]`` is the :class:`ModelSpec` itself. The zoo adds its own rules on top:
lowercase names, ``replace=True`` to swap a model in place, and the change hooks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

import networkx as nx

from ..._validation import InstanceOf, validate_params
from ...errors import InvalidParameterError
from ...registry import Registry

__all__ = ["ModelSpec", "REGISTRY", "register_model"]


@dataclass(frozen=True)
class ModelSpec:
    """One zoo model: where its architecture comes from and how to build its layer graph.

    Attributes
    ----------
    name : str
        Zoo name (lowercase; torchvision names keep underscores, Hugging Face names dashes).
    family : str
        ``"resnet"``, ``"vgg"``, ``"mobilenet"``, ``"densenet"``, ``"vit"``, ``"bert"``,
        ``"gpt2"``, ``"gpt3"`` or ``"llama"``.
    reference : str
        The reference implementation whose parameter count ``params`` equals, e.g.
        ``"torchvision.models.resnet50"`` or ``"transformers.GPT2LMHeadModel"``.
    head : str
        Which output head is included.
    tied_embeddings : bool
        Whether the output head shares the input embedding matrix (counted once).
    default_batch_size : int
        A typical global mini-batch (samples per iteration) from the model's training recipe.
    input : Mapping
        Default input per sample: ``{"image": (3, 224, 224)}`` or ``{"seq_len": 1024}``.
    params : int
        The exact parameter count of the reference implementation (default configuration).
    builder : callable
        ``builder(**overrides) -> networkx.DiGraph``; use :func:`asrpt.dnn.zoo.layer_graph`.
    config : Mapping
        Architecture hyperparameters (layers, widths, vocabulary, ...).
    overrides : Mapping
        Override name -> constraint list accepted by :func:`asrpt.dnn.zoo.layer_graph`.
    description : str
        One line: the published configuration and any assumption.
    """

    name: str
    family: str
    reference: str
    head: str
    tied_embeddings: bool
    default_batch_size: int
    input: Mapping[str, Any]
    params: int
    builder: Callable[..., nx.DiGraph] = field(repr=False, compare=False)
    config: Mapping[str, Any] = field(default_factory=dict, repr=False)
    overrides: Mapping[str, list] = field(default_factory=dict, repr=False)
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "input", MappingProxyType(dict(self.input)))
        object.__setattr__(self, "config", MappingProxyType(dict(self.config)))
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))

    def to_dict(self) -> dict:
        """The spec as plain JSON-ready data (without the builder)."""
        return {"name": self.name, "family": self.family, "reference": self.reference,
                "head": self.head, "tied_embeddings": self.tied_embeddings,
                "default_batch_size": self.default_batch_size,
                "input": {k: list(v) if isinstance(v, tuple) else v
                          for k, v in self.input.items()},
                "params": self.params, "config": dict(self.config),
                "overrides": sorted(self.overrides), "description": self.description}


#: name -> ModelSpec, in registration order (a replaced model keeps its place).
REGISTRY: Registry = Registry("model", item=lambda entry: entry.target)

#: Called after every registration (the package clears its graph cache here).
ON_CHANGE: list[Callable[[], None]] = []


@validate_params({"spec": [InstanceOf(ModelSpec)], "replace": ["boolean"]})
def register_model(spec: ModelSpec, *, replace: bool = False) -> ModelSpec:
    """Add ``spec`` to the zoo under ``spec.name``; return it.

    Parameters
    ----------
    spec : ModelSpec
        The model; ``spec.builder(**overrides)`` must return a layer graph with
        ``spec.params`` parameters for no overrides.
    replace : bool
        Allow replacing a registered model of the same name.

    Returns
    -------
    ModelSpec
        ``spec``.

    Raises
    ------
    InvalidParameterError
        If ``spec`` is not a ModelSpec, its name is taken (and ``replace`` is false) or is not
        lowercase.

    Examples
    --------
    >>> from functools import partial
    >>> from asrpt.dnn.zoo import get_model, layer_graph
    >>> from asrpt.dnn.zoo.transformer import build_gpt, gpt_params
    >>> spec = ModelSpec(name="gpt-tiny", family="gpt2", reference="transformers.GPT2LMHeadModel",
    ...                  head="lm_head (tied)", tied_embeddings=True, default_batch_size=8,
    ...                  input={"seq_len": 16}, params=gpt_params(2, 64, positions=16),
    ...                  builder=partial(build_gpt, name="gpt-tiny", family="gpt2", layers=2,
    ...                                  hidden=64, heads=4, batch=8, seq_len=16, positions=16))
    >>> register_model(spec, replace=True).name, layer_graph("gpt-tiny").graph["num_layers"]
    ('gpt-tiny', 2)
    >>> _ = REGISTRY.pop("gpt-tiny")  # keep the zoo as shipped
    >>> for hook in ON_CHANGE: hook()
    """
    if spec.name != spec.name.lower() or not spec.name:
        raise InvalidParameterError(f"zoo names are lowercase; got {spec.name!r}")
    if spec.name in REGISTRY and not replace:
        raise InvalidParameterError(f"zoo model {spec.name!r} is already registered")
    REGISTRY.register(spec.name, spec, description=spec.description, replace=replace)
    for hook in ON_CHANGE:
        hook()
    return spec
