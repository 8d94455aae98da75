"""Layer graphs traced from real torch modules agree with the analytic zoo (needs torch: the
``asrpt[torch]`` extra; skipped without it).

The modules are written here in plain ``torch.nn`` with the reference implementations' module
names (torchvision cannot be assumed installed): torchvision's ResNet-18, kuangliu's CIFAR
ResNet-18 and Hugging Face's GPT-2 (tied head)."""

import math

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from asrpt.dnn.layers import chain, cut_profile, total_fwd_flops, total_params  # noqa: E402
from asrpt.dnn.torch_graph import from_torch  # noqa: E402
from asrpt.dnn.zoo import layer_graph  # noqa: E402
from asrpt.errors import InvalidParameterError  # noqa: E402


# ---- torchvision.models.resnet18, module for module ----------------------------------------

class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out = out + identity
        return self.relu(out)


class ResNet18(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        inplanes = 64
        for i, planes in enumerate((64, 128, 256, 512)):
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(inplanes, planes, stride),
                                                         BasicBlock(planes, planes)))
            inplanes = planes
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# ---- kuangliu/pytorch-cifar models/resnet.py ResNet18 --------------------------------------

class CifarBlock(nn.Module):
    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False),
                                          nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + self.shortcut(x)
        return F.relu(out)


class CifarResNet18(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        in_planes = 64
        for i, planes in enumerate((64, 128, 256, 512)):
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", nn.Sequential(CifarBlock(in_planes, planes, stride),
                                                         CifarBlock(planes, planes)))
            in_planes = planes
        self.linear = nn.Linear(512, num_classes)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
        out = F.avg_pool2d(out, 4)
        return self.linear(out.view(out.size(0), -1))


# ---- transformers.GPT2LMHeadModel (Linear layers instead of Conv1D; same parameters) -------

class Attention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.d, self.h = d, h
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape[0], x.shape[1], self.d  # static d: torch.fx cannot unpack a shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (t.view(b, s, self.h, d // self.h).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1)
        out = torch.softmax(scores, dim=-1) @ v
        return self.c_proj(out.transpose(1, 2).reshape(b, s, d))


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(d), Attention(d, h)
        self.ln_2, self.mlp = nn.LayerNorm(d), MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, layers, d, h, vocab, positions):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(positions, d)
        self.h = nn.ModuleList(Block(d, h) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.wte(ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2LMHead(nn.Module):
    def __init__(self, layers=12, d=768, h=12, vocab=50257, positions=1024):
        super().__init__()
        self.transformer = Transformer(layers, d, h, vocab, positions)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied

    def forward(self, ids):
        return self.lm_head(self.transformer(ids))


# ---- tests --------------------------------------------------------------------------------

def _contract(G, keep):
    """G without the nodes outside ``keep``, their predecessors wired to their successors."""
    H = G.copy()
    for n in chain(G):
        if n in keep:
            continue
        assert G.nodes[n]["fwd_flops"] == 0 and G.nodes[n]["params"] == 0, n
        for p in H.pred[n]:
            for q in H.succ[n]:
                H.add_edge(p, q, elems=H.edges[n, q]["elems"])
        H.remove_node(n)
    return H


def _compare_nodes(traced, zoo):
    """Every zoo node exists in the traced graph with the same numbers; edges and order agree
    once the traced graph's zero-cost extras (flatten, view, size) are contracted."""
    traced = _contract(traced, set(zoo))
    for n, d in zoo.nodes(data=True):
        assert n in traced, n
        t = traced.nodes[n]
        for key in ("type", "params", "fwd_flops", "bwd_flops", "out_elems", "act_elems"):
            assert t[key] == d[key], (n, key, t[key], d[key])
    assert [n for n in chain(traced) if n in zoo] == chain(zoo)
    for u, v, d in zoo.edges(data=True):
        assert traced.has_edge(u, v) and traced.edges[u, v]["elems"] == d["elems"], (u, v)


def test_traced_resnet18_equals_the_zoo_node_for_node():
    model = ResNet18()
    assert sum(p.numel() for p in model.parameters()) == 11_689_512
    G = from_torch(model, torch.zeros(2, 3, 224, 224), name="resnet18")
    Z = layer_graph("resnet18")
    assert total_params(G) == total_params(Z) == 11_689_512
    _compare_nodes(G, Z)
    assert set(G) - set(Z) == {"flatten"}
    assert total_fwd_flops(G) == total_fwd_flops(Z)


def test_traced_cifar_resnet18_equals_the_zoo():
    model = CifarResNet18()
    assert sum(p.numel() for p in model.parameters()) == 11_173_962
    G = from_torch(model, torch.zeros(4, 3, 32, 32))
    Z = layer_graph("resnet18_cifar")
    assert total_params(G) == total_params(Z) == 11_173_962
    _compare_nodes(G, Z)
    assert total_fwd_flops(G) == total_fwd_flops(Z)


def test_traced_gpt2_agrees_with_the_zoo():
    s = 16
    model = GPT2LMHead()
    G = from_torch(model, torch.zeros(1, s, dtype=torch.long))
    Z = layer_graph("gpt2", seq_len=s)
    assert total_params(G) == total_params(Z) == 124_439_808  # the tied head counted once
    L, d, V = 12, 768, 50257
    linear = sum(x["fwd_flops"] for _, x in G.nodes(data=True) if x["type"] == "linear")
    matmul = sum(x["fwd_flops"] for _, x in G.nodes(data=True) if x["type"] == "matmul")
    assert linear == L * (24 * s * d * d + 9 * s * d) + 2 * s * d * V
    assert matmul == L * 4 * s * s * d  # scores and context, as in the zoo's attention nodes
    # same graph up to the elementwise bookkeeping (views, the score scaling, ...)
    assert total_fwd_flops(G) == pytest.approx(total_fwd_flops(Z), rel=1e-3)
    for i in range(L):  # a block's output is one hidden state in both graphs
        assert cut_profile(G)[chain(G).index(f"transformer.h.{i}.add_1")] == s * d
        assert cut_profile(Z)[chain(Z).index(f"transformer.h.{i}.add_1")] == s * d


def test_multihead_attention_is_counted_like_the_zoo():
    mha = nn.MultiheadAttention(64, 4, batch_first=True)

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = mha

        def forward(self, x):
            return self.attn(x, x, x, need_weights=False)[0]

    G = from_torch(Wrap(), torch.zeros(2, 10, 64))
    s, d, h = 10, 64, 4
    node = G.nodes["attn"]
    assert node["type"] == "attention" and node["params"] == 4 * d * d + 4 * d
    assert node["fwd_flops"] == 8 * s * d * d + 4 * s * d + 4 * s * s * d + 5 * h * s * s


def test_from_torch_rejects_non_modules_and_untraceable_code():
    with pytest.raises(InvalidParameterError, match="'module' parameter of from_torch must be a torch.nn.Module"):
        from_torch(lambda x: x, torch.zeros(1))

    class Branchy(nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x

    with pytest.raises(InvalidParameterError, match="torch.fx cannot trace Branchy"):
        from_torch(Branchy(), torch.zeros(1, 2))
    with pytest.raises(InvalidParameterError, match="'example_input' parameter of from_torch"):
        from_torch(nn.Linear(2, 2), [1, 2])


def test_from_torch_leaves_the_module_mode_alone():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    model.train()
    from_torch(model, torch.zeros(2, 4))
    assert model.training and math.isclose(model[1].p, 0.5)
