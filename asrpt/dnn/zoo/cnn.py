"""Vision models of the zoo: torchvision's ResNets, VGGs, MobileNetV2, DenseNet-121, ViTs, and
the CIFAR-10 ResNet-18 of kuangliu/pytorch-cifar.

Each builder writes the reference implementation's layers, in its forward order, from the
published configuration (no weights, no downloads). Node ids are the reference's module paths
(``layer3.2.conv1``, ``features.denseblock2.denselayer5.conv2``); functional operators get the
path of their enclosing module plus the operator (``layer3.2.add``), and a module called twice
gets ``_1``, ``_2`` suffixes (``layer3.2.relu_1``), as in a torch.fx trace.

Granularity: one node per operator (convolution, batch norm, activation, pooling, residual add,
concatenation, dense layer); dropout and flatten are not nodes. ``block`` is the enclosing
residual/dense/inverted-residual block (stem and head layers have none). For ViT, one node per
LayerNorm, attention, MLP and residual add of each encoder layer.

Every count equals the reference with its default ImageNet head (1000 classes; 10 for the CIFAR
model), verified against torchvision 0.28.0.
"""

from __future__ import annotations

from functools import partial
from numbers import Integral

import networkx as nx

from ..._validation import Interval, Options, validate_params
from ...errors import InvalidParameterError
from ..layers import LayerGraphBuilder
from ._ops import Net, T
from ._registry import ModelSpec, register_model

__all__ = ["build_resnet", "build_resnet_cifar", "build_vgg", "build_mobilenet_v2",
           "build_densenet", "build_vit"]

_IMAGE = {"image_size": [Interval(Integral, 32, 2048)],
          "num_classes": [Interval(Integral, 1, None, closed="left")]}
_CLASSES = {"num_classes": [Interval(Integral, 1, None, closed="left")]}
_POS = [Interval(Integral, 1, None, closed="left")]
_COMMON = {"name": [str], "batch": _POS, **_IMAGE}


def _builder(spec_name: str, family: str, reference: str, head: str, batch: int, image: int,
             num_layers=None) -> tuple[Net, T]:
    b = LayerGraphBuilder(name=spec_name, family=family, reference=reference, head=head,
                          tied_embeddings=False, default_batch_size=batch,
                          input={"image": [3, image, image]}, num_layers=num_layers)
    return Net(b), T(None, (3, image, image))


def _flat(x: T) -> T:
    return T(x.node, (x.elems,))


# ---- ResNet ---------------------------------------------------------------------------------

@validate_params({**_COMMON, "block": [Options(str, {"basic", "bottleneck"})], "layers": [tuple]})
def build_resnet(*, name: str, block: str, layers: tuple[int, ...], batch: int,
                 image_size: int = 224, num_classes: int = 1000) -> nx.DiGraph:
    """torchvision ResNet (v1.5: stride on the 3x3 convolution of bottlenecks).

    Parameters
    ----------
    name : str
        Graph name.
    block : {"basic", "bottleneck"}
        Residual block kind.
    layers : tuple of int
        Blocks per stage (four stages).
    batch : int
        ``default_batch_size`` graph attribute.
    image_size : int
        Input height and width.
    num_classes : int
        Width of the ``fc`` head.

    Returns
    -------
    networkx.DiGraph
        The layer graph.

    Raises
    ------
    InvalidParameterError
        For a parameter outside its constraints.

    Examples
    --------
    >>> from asrpt.dnn.layers import total_params
    >>> total_params(build_resnet(name="r", block="basic", layers=(2, 2, 2, 2), batch=1))
    11689512
    """
    width = 512 * (4 if block == "bottleneck" else 1)
    net, x = _builder(name, "resnet", f"torchvision.models.{name}",
                      f"fc: Linear({width}, {num_classes})", batch, image_size)
    x = net.conv("conv1", x, 64, 7, 2, 3)
    x = net.bn("bn1", x)
    x = net.act("relu", x)
    x = net.maxpool("maxpool", x, 3, 2, 1)
    expansion = 4 if block == "bottleneck" else 1
    inplanes = 64
    for li, (planes, n) in enumerate(zip((64, 128, 256, 512), layers)):
        for bi in range(n):
            stride = 2 if li > 0 and bi == 0 else 1
            p = net.block = f"layer{li + 1}.{bi}"
            identity = x
            if block == "basic":
                y = net.conv(f"{p}.conv1", x, planes, 3, stride, 1)
                y = net.bn(f"{p}.bn1", y)
                y = net.act(f"{p}.relu", y)
                y = net.conv(f"{p}.conv2", y, planes, 3, 1, 1)
                y = net.bn(f"{p}.bn2", y)
                last_relu = f"{p}.relu_1"
            else:
                y = net.conv(f"{p}.conv1", x, planes, 1)
                y = net.bn(f"{p}.bn1", y)
                y = net.act(f"{p}.relu", y)
                y = net.conv(f"{p}.conv2", y, planes, 3, stride, 1)
                y = net.bn(f"{p}.bn2", y)
                y = net.act(f"{p}.relu_1", y)
                y = net.conv(f"{p}.conv3", y, planes * 4, 1)
                y = net.bn(f"{p}.bn3", y)
                last_relu = f"{p}.relu_2"
            if stride != 1 or inplanes != planes * expansion:
                identity = net.conv(f"{p}.downsample.0", x, planes * expansion, 1, stride)
                identity = net.bn(f"{p}.downsample.1", identity)
            y = net.add(f"{p}.add", y, identity)
            x = net.act(last_relu, y)
            inplanes = planes * expansion
    net.block = None
    x = net.adaptive_avgpool("avgpool", x)
    net.linear("fc", _flat(x), num_classes)
    return net.b.build()


@validate_params({"name": [str], "num_classes": _CLASSES["num_classes"], "batch": _POS})
def build_resnet_cifar(*, name: str = "resnet18_cifar", num_classes: int = 10,
                       batch: int = 128) -> nx.DiGraph:
    """ResNet-18 for 32x32 CIFAR-10 (kuangliu/pytorch-cifar ``models/resnet.py``): a 3x3 stem
    without max pooling, ``shortcut`` projections, ``F.avg_pool2d(out, 4)``, ``linear`` head.

    Parameters
    ----------
    name : str
        Graph name.
    num_classes : int
        Width of the ``linear`` head.
    batch : int
        ``default_batch_size`` graph attribute.

    Returns
    -------
    networkx.DiGraph
        The layer graph.

    Raises
    ------
    InvalidParameterError
        For a parameter outside its constraints.

    Examples
    --------
    >>> from asrpt.dnn.layers import total_params
    >>> total_params(build_resnet_cifar(num_classes=100))
    11220132
    """
    net, x = _builder(name, "resnet", "kuangliu/pytorch-cifar models.resnet.ResNet18",
                      f"linear: Linear(512, {num_classes})", batch, 32)
    x = net.conv("conv1", x, 64, 3, 1, 1)
    x = net.bn("bn1", x)
    x = net.act("relu", x)
    inplanes = 64
    for li, planes in enumerate((64, 128, 256, 512)):
        for bi in range(2):
            stride = 2 if li > 0 and bi == 0 else 1
            p = net.block = f"layer{li + 1}.{bi}"
            y = net.conv(f"{p}.conv1", x, planes, 3, stride, 1)
            y = net.bn(f"{p}.bn1", y)
            y = net.act(f"{p}.relu", y)
            y = net.conv(f"{p}.conv2", y, planes, 3, 1, 1)
            y = net.bn(f"{p}.bn2", y)
            identity = x
            if stride != 1 or inplanes != planes:
                identity = net.conv(f"{p}.shortcut.0", x, planes, 1, stride)
                identity = net.bn(f"{p}.shortcut.1", identity)
            y = net.add(f"{p}.add", y, identity)
            x = net.act(f"{p}.relu_1", y)
            inplanes = planes
    net.block = None
    x = net.avgpool("avg_pool2d", x, 4, 4)
    net.linear("linear", _flat(x), num_classes)
    return net.b.build()


# ---- VGG ------------------------------------------------------------------------------------

_VGG_CFG = {
    "vgg11": (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"),
    "vgg16": (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
              512, 512, 512, "M"),
    "vgg19": (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
              512, 512, 512, 512, "M"),
}


@validate_params({**_COMMON, "name": [Options(str, set(_VGG_CFG))]})
def build_vgg(*, name: str, batch: int, image_size: int = 224,
              num_classes: int = 1000) -> nx.DiGraph:
    """torchvision VGG without batch norm: 3x3 convolutions with bias, adaptive 7x7 average
    pooling, classifier 25088 -> 4096 -> 4096 -> classes (dropout not modelled). ``block``
    groups each convolution with its ReLU.

    Parameters
    ----------
    name : {"vgg11", "vgg16", "vgg19"}
        Configuration (and graph name).
    batch : int
        ``default_batch_size`` graph attribute.
    image_size : int
        Input height and width.
    num_classes : int
        Width of ``classifier.6``.

    Returns
    -------
    networkx.DiGraph
        The layer graph.

    Raises
    ------
    InvalidParameterError
        For a parameter outside its constraints.

    Examples
    --------
    >>> build_vgg(name="vgg16", batch=1).nodes["features.0"]["params"]
    1792
    """
    net, x = _builder(name, "vgg", f"torchvision.models.{name}",
                      f"classifier: 3 Linear layers, {num_classes} classes", batch, image_size)
    idx = 0
    for v in _VGG_CFG[name]:
        if v == "M":
            x = net.maxpool(f"features.{idx}", x, 2, 2)
            idx += 1
            continue
        net.block = f"features.{idx}"
        x = net.conv(f"features.{idx}", x, v, 3, 1, 1, bias=True)
        x = net.act(f"features.{idx + 1}", x)
        idx += 2
    net.block = None
    x = net.adaptive_avgpool("avgpool", x, 7)
    x = _flat(x)
    for i, width in ((0, 4096), (3, 4096)):
        net.block = f"classifier.{i}"
        x = net.linear(f"classifier.{i}", x, width)
        x = net.act(f"classifier.{i + 1}", x)
    net.block = None
    net.linear("classifier.6", x, num_classes)
    return net.b.build()


# ---- MobileNetV2 ----------------------------------------------------------------------------

@validate_params(_COMMON)
def build_mobilenet_v2(*, name: str = "mobilenet_v2", batch: int, image_size: int = 224,
                       num_classes: int = 1000) -> nx.DiGraph:
    """torchvision MobileNetV2 (width 1.0): inverted residuals with ReLU6, last conv to 1280
    channels, ``classifier.1`` Linear(1280, classes).

    Parameters
    ----------
    name : str
        Graph name.
    batch : int
        ``default_batch_size`` graph attribute.
    image_size : int
        Input height and width.
    num_classes : int
        Width of ``classifier.1``.

    Returns
    -------
    networkx.DiGraph
        The layer graph.

    Raises
    ------
    InvalidParameterError
        For a parameter outside its constraints.

    Examples
    --------
    >>> from asrpt.dnn.layers import total_params
    >>> total_params(build_mobilenet_v2(batch=1, num_classes=10))
    2236682
    """
    net, x = _builder(name, "mobilenet", "torchvision.models.mobilenet_v2",
                      f"classifier.1: Linear(1280, {num_classes})", batch, image_size)

    def cna(p: str, x: T, cout: int, k: int, stride: int = 1, groups: int = 1) -> T:
        x = net.conv(f"{p}.0", x, cout, k, stride, (k - 1) // 2, groups)
        x = net.bn(f"{p}.1", x)
        return net.act(f"{p}.2", x)

    net.block = "features.0"
    x = cna("features.0", x, 32, 3, 2)
    cin, i = 32, 1
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for j in range(n):
            stride = s if j == 0 else 1
            p = net.block = f"features.{i}"
            hidden = cin * t
            y, k = x, 0
            if t != 1:
                y = cna(f"{p}.conv.0", y, hidden, 1)
                k = 1
            y = cna(f"{p}.conv.{k}", y, hidden, 3, stride, groups=hidden)
            y = net.conv(f"{p}.conv.{k + 1}", y, c, 1)
            y = net.bn(f"{p}.conv.{k + 2}", y)
            x = net.add(f"{p}.add", x, y) if stride == 1 and cin == c else y
            cin, i = c, i + 1
    net.block = f"features.{i}"
    x = cna(f"features.{i}", x, 1280, 1)
    net.block = None
    x = net.adaptive_avgpool("adaptive_avg_pool2d", x)
    net.linear("classifier.1", _flat(x), num_classes)
    return net.b.build()


# ---- DenseNet -------------------------------------------------------------------------------

@validate_params({**_COMMON, "growth": _POS, "blocks": [tuple], "init_features": _POS,
                  "bn_size": _POS})
def build_densenet(*, name: str, batch: int, growth: int = 32,
                   blocks: tuple[int, ...] = (6, 12, 24, 16), init_features: int = 64,
                   bn_size: int = 4, image_size: int = 224, num_classes: int = 1000) -> nx.DiGraph:
    """torchvision DenseNet (not memory-efficient): each dense layer concatenates the block input
    and every earlier layer's new features (``cat`` nodes), transitions halve the channels.

    Parameters
    ----------
    name : str
        Graph name.
    batch : int
        ``default_batch_size`` graph attribute.
    growth, blocks, init_features, bn_size : int, tuple of int, int, int
        DenseNet hyperparameters (DenseNet-121: 32, (6, 12, 24, 16), 64, 4).
    image_size : int
        Input height and width.
    num_classes : int
        Width of the ``classifier``.

    Returns
    -------
    networkx.DiGraph
        The layer graph.

    Raises
    ------
    InvalidParameterError
        For a parameter outside its constraints.

    Examples
    --------
    >>> from asrpt.dnn.layers import total_params
    >>> total_params(build_densenet(name="densenet121", batch=1))
    7978856
    """
    net, x = _builder(name, "densenet", f"torchvision.models.{name}",
                      f"classifier: Linear(1024, {num_classes})", batch, image_size)
    x = net.conv("features.conv0", x, init_features, 7, 2, 3)
    x = net.bn("features.norm0", x)
    x = net.act("features.relu0", x)
    x = net.maxpool("features.pool0", x, 3, 2, 1)
    for bi, n in enumerate(blocks, start=1):
        feats = [x]
        for li in range(1, n + 1):
            p = net.block = f"features.denseblock{bi}.denselayer{li}"
            y = net.concat(f"{p}.cat", feats) if len(feats) > 1 else feats[0]
            y = net.bn(f"{p}.norm1", y)
            y = net.act(f"{p}.relu1", y)
            y = net.conv(f"{p}.conv1", y, bn_size * growth, 1)
            y = net.bn(f"{p}.norm2", y)
            y = net.act(f"{p}.relu2", y)
            y = net.conv(f"{p}.conv2", y, growth, 3, 1, 1)
            feats.append(y)
        net.block = f"features.denseblock{bi}"
        x = net.concat(f"features.denseblock{bi}.cat", feats)
        if bi < len(blocks):
            p = net.block = f"features.transition{bi}"
            x = net.bn(f"{p}.norm", x)
            x = net.act(f"{p}.relu", x)
            x = net.conv(f"{p}.conv", x, x.shape[0] // 2, 1)
            x = net.avgpool(f"{p}.pool", x, 2, 2)
    net.block = None
    x = net.bn("features.norm5", x)
    x = net.act("relu", x)
    x = net.adaptive_avgpool("adaptive_avg_pool2d", x)
    net.linear("classifier", _flat(x), num_classes)
    return net.b.build()


# ---- Vision Transformer ---------------------------------------------------------------------

@validate_params({**_COMMON, "image_size": [Interval(Integral, 1, 2048)], "layers": _POS,
                  "hidden": _POS, "heads": _POS, "mlp": _POS, "patch": _POS})
def build_vit(*, name: str, batch: int, layers: int, hidden: int, heads: int, mlp: int,
              patch: int = 16, image_size: int = 224, num_classes: int = 1000) -> nx.DiGraph:
    """torchvision VisionTransformer: patch projection (a conv with bias), class token, learned
    positions, pre-LN encoder layers, final LayerNorm, ``heads.head`` on the class token.

    Parameters
    ----------
    name : str
        Graph name.
    batch : int
        ``default_batch_size`` graph attribute.
    layers, hidden, heads, mlp, patch : int
        Encoder layers, width, attention heads, MLP width, patch size.
    image_size : int
        Input height and width, a multiple of ``patch``.
    num_classes : int
        Width of ``heads.head``.

    Returns
    -------
    networkx.DiGraph
        The layer graph.

    Raises
    ------
    InvalidParameterError
        For a parameter outside its constraints, or ``image_size`` not a multiple of ``patch``.

    Examples
    --------
    >>> G = build_vit(name="vit_b_16", batch=1, layers=12, hidden=768, heads=12, mlp=3072)
    >>> G.graph["seq_len"]
    197
    """
    if hidden % heads:
        raise InvalidParameterError(
            f"The 'heads' parameter of build_vit must divide hidden={hidden}. Got {heads} instead.")
    if image_size % patch:
        raise InvalidParameterError(
            f"The 'image_size' override of {name} must be a multiple of the patch size {patch}. "
            f"Got {image_size} instead.")
    tokens = (image_size // patch) ** 2 + 1
    b = LayerGraphBuilder(name=name, family="vit", reference=f"torchvision.models.{name}",
                          head=f"heads.head: Linear({hidden}, {num_classes})",
                          tied_embeddings=False, default_batch_size=batch,
                          input={"image": [3, image_size, image_size]}, num_layers=layers,
                          hidden_size=hidden, num_heads=heads, num_kv_heads=heads,
                          ffn_hidden_size=mlp, seq_len=tokens)
    net = Net(b)
    x = net.conv("conv_proj", T(None, (3, image_size, image_size)), hidden, patch, patch,
                 bias=True)
    # class token: a parameter concatenated in front of the patches
    b.add("class_token", "embedding", inputs=[x.node], params=hidden, out_elems=tokens * hidden,
          act_elems=0)
    x = net.embedding("encoder.pos_embedding", T("class_token", (tokens, hidden)), tokens,
                      hidden, tokens, adds=True)
    for i in range(layers):
        p = net.block = f"encoder.layers.encoder_layer_{i}"
        y = net.norm(f"{p}.ln_1", x)
        y = net.attention(f"{p}.self_attention", y, heads, heads, bias=True)
        x = net.add(f"{p}.add", y, x)
        y = net.norm(f"{p}.ln_2", x)
        y = net.mlp(f"{p}.mlp", y, mlp)
        x = net.add(f"{p}.add_1", x, y)
    net.block = None
    x = net.norm("encoder.ln", x)
    net.linear("heads.head", x, num_classes, tokens=1)
    return b.build()


# ---- registration ---------------------------------------------------------------------------

def _register_all() -> None:
    image = {"image": (3, 224, 224)}
    for name, blk, layers, params in (
            ("resnet18", "basic", (2, 2, 2, 2), 11_689_512),
            ("resnet34", "basic", (3, 4, 6, 3), 21_797_672),
            ("resnet50", "bottleneck", (3, 4, 6, 3), 25_557_032),
            ("resnet101", "bottleneck", (3, 4, 23, 3), 44_549_160),
            ("resnet152", "bottleneck", (3, 8, 36, 3), 60_192_808)):
        register_model(ModelSpec(
            name=name, family="resnet", reference=f"torchvision.models.{name}",
            head="fc (1000 classes)", tied_embeddings=False, default_batch_size=256,
            input=image, params=params,
            builder=partial(build_resnet, name=name, block=blk, layers=layers, batch=256),
            config={"block": blk, "layers": layers}, overrides=_IMAGE,
            description=f"ResNet ({blk} blocks {layers}), He et al. 2016, torchvision v1.5"))
    register_model(ModelSpec(
        name="resnet18_cifar", family="resnet",
        reference="kuangliu/pytorch-cifar models.resnet.ResNet18", head="linear (10 classes)",
        tied_embeddings=False, default_batch_size=128, input={"image": (3, 32, 32)},
        params=11_173_962, builder=partial(build_resnet_cifar, batch=128),
        config={"block": "basic", "layers": (2, 2, 2, 2)}, overrides=_CLASSES,
        description="ResNet-18 for CIFAR-10: 3x3 stem, no max pool (as in the Pollux profiles)"))
    for name, params in (("vgg11", 132_863_336), ("vgg16", 138_357_544),
                         ("vgg19", 143_667_240)):
        register_model(ModelSpec(
            name=name, family="vgg", reference=f"torchvision.models.{name}",
            head="classifier (3 Linear layers, 1000 classes)", tied_embeddings=False,
            default_batch_size=256, input=image, params=params,
            builder=partial(build_vgg, name=name, batch=256),
            config={"cfg": _VGG_CFG[name]}, overrides=_IMAGE,
            description=f"{name.upper()} without batch norm, Simonyan & Zisserman 2015"))
    register_model(ModelSpec(
        name="mobilenet_v2", family="mobilenet", reference="torchvision.models.mobilenet_v2",
        head="classifier.1 (1000 classes)", tied_embeddings=False, default_batch_size=256,
        input=image, params=3_504_872, builder=partial(build_mobilenet_v2, batch=256),
        config={"width_mult": 1.0, "last_channel": 1280}, overrides=_IMAGE,
        description="MobileNetV2 width 1.0, Sandler et al. 2018"))
    register_model(ModelSpec(
        name="densenet121", family="densenet", reference="torchvision.models.densenet121",
        head="classifier (1000 classes)", tied_embeddings=False, default_batch_size=256,
        input=image, params=7_978_856,
        builder=partial(build_densenet, name="densenet121", batch=256),
        config={"growth": 32, "blocks": (6, 12, 24, 16), "init_features": 64, "bn_size": 4},
        overrides=_IMAGE, description="DenseNet-121, Huang et al. 2017"))
    for name, layers, hidden, heads, mlp, params in (
            ("vit_b_16", 12, 768, 12, 3072, 86_567_656),
            ("vit_l_16", 24, 1024, 16, 4096, 304_326_632)):
        register_model(ModelSpec(
            name=name, family="vit", reference=f"torchvision.models.{name}",
            head="heads.head (1000 classes, no pre-logits)", tied_embeddings=False,
            default_batch_size=512, input=image, params=params,
            builder=partial(build_vit, name=name, batch=512, layers=layers, hidden=hidden,
                            heads=heads, mlp=mlp),
            config={"layers": layers, "hidden": hidden, "heads": heads, "mlp": mlp, "patch": 16},
            overrides={"image_size": [Interval(Integral, 16, 2048)],
                       "num_classes": _CLASSES["num_classes"]},
            description=f"ViT {name[4].upper()}/16 at 224x224 (197 tokens), Dosovitskiy et al. 2021"))


_register_all()
