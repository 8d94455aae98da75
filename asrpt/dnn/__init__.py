"""DNN jobs as graphs: layer graphs and the model zoo, parallel configurations, the performance
model and its calibration (issue 3).

Data flows one way inside this package: :mod:`asrpt.dnn.zoo` builds layer graphs
(:mod:`asrpt.dnn.layers` owns their schema and helpers); :mod:`asrpt.dnn.parallel` cuts them into
pipeline stages and worker graphs; :mod:`asrpt.dnn.perf` turns those into iteration times.
:mod:`asrpt.dnn.torch_graph` (optional, needs ``asrpt[torch]``) reads a real ``torch.nn.Module``.

Only the layer-graph helpers and the zoo are imported here, so ``import asrpt.dnn`` stays light.

Examples
--------
>>> from asrpt.dnn import layer_graph, total_params
>>> total_params(layer_graph("vgg16"))
138357544
"""

from .layers import (LayerGraphBuilder, activation_elems, chain, coarsen_blocks, cut_elems,
                     cut_profile, total_bwd_flops, total_flops, total_fwd_flops, total_params,
                     validate_layer_graph)
from .torch_graph import from_torch  # imports torch only when called
from .zoo import ModelSpec, get_model, layer_graph, model_names

__all__ = [
    "LayerGraphBuilder",
    "ModelSpec",
    "activation_elems",
    "chain",
    "coarsen_blocks",
    "cut_elems",
    "cut_profile",
    "from_torch",
    "get_model",
    "layer_graph",
    "model_names",
    "total_bwd_flops",
    "total_flops",
    "total_fwd_flops",
    "total_params",
    "validate_layer_graph",
]
