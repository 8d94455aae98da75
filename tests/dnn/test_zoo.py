"""The model zoo: exact parameter counts for every model, FLOP totals against hand-derived
formulas, overrides, the registry and its errors."""

import json

import pytest

from asrpt.dnn.layers import (ELEMENTWISE_FLOPS, activation_elems, chain, layer_graph_problems,
                              total_bwd_flops, total_flops, total_fwd_flops, total_params)
from asrpt.dnn.zoo import ModelSpec, get_model, layer_graph, model_names, register_model
from asrpt.dnn.zoo.cnn import build_resnet, build_vit
from asrpt.dnn.zoo.transformer import (bert_params, build_bert, build_gpt, build_llama,
                                       gpt_params, llama_params)
from asrpt.errors import InvalidParameterError

# Exact parameter counts of the reference implementations, measured as
# sum(p.numel() for p in model.parameters()) (shared/tied tensors counted once):
#   torchvision 0.28.0 (torch 2.13.0) models with their default ImageNet heads;
#   kuangliu/pytorch-cifar ResNet18 (CIFAR-10, 10 classes), rebuilt in plain torch;
#   transformers 5.24.0 on the meta device: BertModel (with pooler), GPT2LMHeadModel (lm_head tied
#   to wte; GPT-3 sizes with n_positions=2048, vocab 50257), LlamaForCausalLM (untied lm_head
#   except Llama-3.2-1B).
PINNED = {
    "resnet18": 11_689_512,            # torchvision.models.resnet18
    "resnet34": 21_797_672,            # torchvision.models.resnet34
    "resnet50": 25_557_032,            # torchvision.models.resnet50
    "resnet101": 44_549_160,           # torchvision.models.resnet101
    "resnet152": 60_192_808,           # torchvision.models.resnet152
    "resnet18_cifar": 11_173_962,      # kuangliu/pytorch-cifar models/resnet.py ResNet18()
    "vgg11": 132_863_336,              # torchvision.models.vgg11
    "vgg16": 138_357_544,              # torchvision.models.vgg16
    "vgg19": 143_667_240,              # torchvision.models.vgg19
    "mobilenet_v2": 3_504_872,         # torchvision.models.mobilenet_v2
    "densenet121": 7_978_856,          # torchvision.models.densenet121
    "vit_b_16": 86_567_656,            # torchvision.models.vit_b_16
    "vit_l_16": 304_326_632,           # torchvision.models.vit_l_16
    "bert-base": 109_482_240,          # transformers.BertModel(BertConfig())
    "bert-large": 335_141_888,         # BertModel, hidden 1024, 24 layers, 16 heads, ffn 4096
    "gpt2": 124_439_808,               # transformers.GPT2LMHeadModel(GPT2Config())
    "gpt2-medium": 354_823_168,        # n_layer 24, n_embd 1024
    "gpt2-large": 774_030_080,         # n_layer 36, n_embd 1280
    "gpt2-xl": 1_557_611_200,          # n_layer 48, n_embd 1600
    "gpt3-125m": 125_226_240,          # GPT2LMHeadModel, n_positions 2048: 12 x 768
    "gpt3-350m": 355_871_744,          # 24 x 1024
    "gpt3-760m": 760_300_032,          # 24 x 1536
    "gpt3-1.3b": 1_315_723_264,        # 24 x 2048
    "gpt3-2.7b": 2_651_553_280,        # 32 x 2560
    "gpt3-6.7b": 6_658_404_352,        # 32 x 4096
    "gpt3-13b": 12_853_386_240,        # 40 x 5120
    "gpt3-175b": 174_604_259_328,      # 96 x 12288
    "llama-1b": 1_235_814_400,         # LlamaForCausalLM, Llama-3.2-1B config (tied)
    "llama-7b": 6_738_415_616,         # Llama-2-7b-hf config
    "llama-8b": 8_030_261_248,         # Llama-3.1-8B config
    "llama-13b": 13_015_864_320,       # Llama-2-13b-hf config
    "llama-70b": 68_976_648_192,       # Llama-2-70b-hf config (GQA, 8 KV heads)
}

REQUIRED = {"resnet18", "resnet50", "resnet101", "resnet152", "vgg16", "vgg19", "mobilenet_v2",
            "densenet121", "vit_b_16", "bert-base", "bert-large", "gpt2", "gpt2-medium",
            "gpt2-large", "gpt2-xl", "llama-1b", "llama-7b", "llama-13b", "llama-70b",
            "gpt3-125m", "gpt3-175b", "resnet18_cifar"}


def test_the_zoo_covers_the_required_models_and_pins_every_one():
    assert REQUIRED <= set(model_names())
    assert set(model_names()) == set(PINNED)


@pytest.mark.parametrize("name", list(PINNED))
def test_exact_parameter_count(name):
    G = layer_graph(name)
    assert total_params(G) == PINNED[name]
    assert get_model(name).params == PINNED[name]


@pytest.mark.parametrize("name", list(PINNED))
def test_every_graph_follows_the_schema(name):
    G = layer_graph(name)
    assert layer_graph_problems(G) == []
    spec = get_model(name)
    for key in ("name", "family", "reference", "head", "tied_embeddings", "default_batch_size",
                "input", "num_layers"):
        assert key in G.graph, key
    assert G.graph["name"] == name and G.graph["family"] == spec.family
    assert G.graph["tied_embeddings"] == spec.tied_embeddings
    assert G.graph["default_batch_size"] == spec.default_batch_size
    assert G.graph["input"] == {k: list(v) if isinstance(v, tuple) else v
                                for k, v in spec.input.items()}
    assert all(isinstance(d["fwd_flops"], float) and isinstance(d["params"], int)
               for _, d in G.nodes(data=True))
    assert all(name == name.lower() for name in model_names())


def test_closed_form_counts_match_the_pins():
    """The parameter formulas, independent of the graph builders."""
    assert gpt_params(12, 768) == PINNED["gpt2"]
    assert gpt_params(48, 1600) == PINNED["gpt2-xl"]
    assert gpt_params(96, 12288, positions=2048) == PINNED["gpt3-175b"]
    assert bert_params(24, 1024, 4096) == PINNED["bert-large"]
    assert llama_params(80, 8192, 64, 8, 28672, 32000, tied=False) == PINNED["llama-70b"]
    assert llama_params(16, 2048, 32, 8, 8192, 128256, tied=True) == PINNED["llama-1b"]


# ---- FLOPs against hand-derived formulas ------------------------------------------------------

def gpt_fwd(L, d, h, s, V=50257):
    """GPT-2 forward FLOPs per sequence at the zoo's granularity.

    Per block: QKV and output projections 2 s d (3d) + 2 s d^2 with biases 4 s d, scores and
    context 2 x 2 s^2 d, softmax 5 h s^2, MLP 2 x 2 s d (4d) + GELU 4 s d + biases 5 s d, two
    LayerNorms 2 x 5 s d, two residual adds 2 s d. Outside: position add s d, final LayerNorm
    5 s d, head 2 s d V.
    """
    block = 24 * s * d * d + 4 * s * s * d + 5 * h * s * s + 25 * s * d
    return L * block + 6 * s * d + 2 * s * d * V


@pytest.mark.parametrize("name, L, d, h", [("gpt2", 12, 768, 12), ("gpt2-xl", 48, 1600, 25),
                                           ("gpt3-175b", 96, 12288, 96)])
@pytest.mark.parametrize("s", [1, 128, 1024])
def test_gpt_forward_flops_match_the_closed_form(name, L, d, h, s):
    G = layer_graph(name, seq_len=s)
    assert total_fwd_flops(G) == gpt_fwd(L, d, h, s)
    # backward: 2 x forward, plus the recomputed scores and softmax of every attention layer
    assert total_bwd_flops(G) == 2 * gpt_fwd(L, d, h, s) + L * (2 * s * s * d + 5 * h * s * s)


def test_gpt2_dominant_term_is_two_flops_per_parameter_per_token():
    s = 1024
    G = layer_graph("gpt2", seq_len=s)
    non_embedding = PINNED["gpt2"] - 50257 * 768 - 1024 * 768
    per_token = total_fwd_flops(G) / s
    assert 2 * non_embedding < per_token < 2 * non_embedding * 1.9  # + head + attention
    # the classic 6 N D training estimate, within the attention/head overheads
    assert total_flops(G, 512) == pytest.approx(6 * PINNED["gpt2"] * 512 * s, rel=0.25)


def test_llama_70b_forward_flops_match_the_closed_form():
    L, d, h, kv_heads, f, V, s = 80, 8192, 64, 8, 28672, 32000, 4096
    kv = d // h * kv_heads
    attention = (2 * s * d * (d + 2 * kv) + 2 * s * d * d + 3 * s * (d + kv)
                 + 4 * s * s * d + 5 * h * s * s)
    mlp = 6 * s * d * f + 2 * s * f
    block = attention + mlp + 2 * 4 * s * d + 2 * s * d
    G = layer_graph("llama-70b")
    assert total_fwd_flops(G) == L * block + 4 * s * d + 2 * s * d * V
    assert G.graph["num_kv_heads"] == 8 and G.graph["seq_len"] == s


def test_bert_base_forward_flops_match_the_closed_form():
    L, d, h, f, s = 12, 768, 12, 3072, 512
    attention = 8 * s * d * d + 4 * s * d + 4 * s * s * d + 5 * h * s * s
    mlp = 4 * s * d * f + s * f + s * f + s * d
    block = attention + mlp + 2 * s * d + 2 * 5 * s * d
    embeddings = 2 * s * d + 5 * s * d
    pooler = 2 * d * d + 2 * d
    assert total_fwd_flops(layer_graph("bert-base")) == L * block + embeddings + pooler


def test_resnet50_first_convolution_by_hand():
    G = layer_graph("resnet50")
    conv1 = G.nodes["conv1"]
    # 64 filters of 7x7x3 at 112x112 outputs, no bias; multiply-add = 2 FLOPs
    assert conv1["fwd_flops"] == 2 * 7 * 7 * 3 * 64 * 112 * 112 == 236_027_904
    assert conv1["bwd_flops"] == conv1["fwd_flops"]  # no gradient w.r.t. the image
    assert conv1["params"] == 7 * 7 * 3 * 64 and conv1["out_elems"] == 64 * 112 * 112
    assert G.nodes["layer1.0.conv2"]["fwd_flops"] == 2 * 3 * 3 * 64 * 64 * 56 * 56
    assert G.nodes["layer4.2.conv3"]["fwd_flops"] == 2 * 512 * 2048 * 7 * 7
    assert G.nodes["fc"]["fwd_flops"] == 2 * 2048 * 1000 + 1000


def test_regression_cnn_matmul_flops():
    """Convolution + dense FLOPs per image at 224x224, pinned; each equals the torch.fx count of
    the torchvision model (torch 2.13 / torchvision 0.28, asrpt.dnn.torch_graph.from_torch)."""
    def matmul(name):
        G = layer_graph(name)
        return sum(d["fwd_flops"] for _, d in G.nodes(data=True) if d["type"] in ("conv", "linear"))
    # ResNet-50: 4,089,184,256 multiply-adds (the usual "4.1 GMACs") + 1000 fc biases
    assert matmul("resnet50") == 2 * 4_089_184_256 + 1000 == 8_178_369_512
    assert matmul("resnet18") == 3_628_147_688
    assert matmul("vgg16") == 30_954_085_352
    assert matmul("mobilenet_v2") == 601_549_544
    assert matmul("densenet121") == 5_668_324_328
    assert total_fwd_flops(layer_graph("vit_b_16")) == 35_202_047_032


def test_attention_scales_quadratically_in_seq_len():
    a = layer_graph("gpt2", seq_len=512).nodes["transformer.h.0.attn"]["fwd_flops"]
    b = layer_graph("gpt2", seq_len=1024).nodes["transformer.h.0.attn"]["fwd_flops"]
    s, d, h = 512, 768, 12
    quad = 4 * s * s * d + 5 * h * s * s
    assert b - 2 * a == 2 * quad  # doubling s: linear terms double, quadratic ones quadruple


def test_activation_memory_is_linear_in_seq_len_with_memory_efficient_attention():
    a = activation_elems(layer_graph("llama-7b", seq_len=1024))
    b = activation_elems(layer_graph("llama-7b", seq_len=2048))
    assert b == 2 * a


# ---- overrides ------------------------------------------------------------------------------

def test_num_classes_changes_the_head_only():
    G = layer_graph("resnet50", num_classes=10)
    assert total_params(G) == PINNED["resnet50"] - 2049 * 1000 + 2049 * 10
    assert total_params(layer_graph("resnet18_cifar", num_classes=100)) == \
        PINNED["resnet18_cifar"] + 90 * 513


def test_image_size_changes_flops_not_cnn_params():
    small = layer_graph("resnet50", image_size=112)
    assert total_params(small) == PINNED["resnet50"]
    assert small.nodes["conv1"]["fwd_flops"] == 236_027_904 / 4
    assert small.graph["input"] == {"image": [3, 112, 112]}
    vit = layer_graph("vit_b_16", image_size=384)  # positions grow with the image
    assert total_params(vit) == PINNED["vit_b_16"] + (577 - 197) * 768


def test_seq_len_changes_flops_not_params():
    G = layer_graph("bert-large", seq_len=128)
    assert total_params(G) == PINNED["bert-large"] and G.graph["input"] == {"seq_len": 128}


@pytest.mark.parametrize("name, overrides, text", [
    ("gpt2", {"seq_len": 1025}, r"The 'seq_len' parameter of layer_graph\('gpt2'\) must be an int in \[1, 1024\]"),
    ("gpt2", {"seq_len": 0}, "must be an int in"),
    ("gpt2", {"seq_len": 12.0}, "must be an int in"),
    ("vit_b_16", {"image_size": 200}, "must be a multiple of the patch size 16"),
    ("resnet18_cifar", {"image_size": 64}, "Unknown override 'image_size'"),
    ("resnet50", {"num_clases": 10}, "Did you mean 'num_classes'"),
])
def test_bad_overrides_are_rejected(name, overrides, text):
    with pytest.raises(InvalidParameterError, match=text):
        layer_graph(name, **overrides)


# ---- registry -------------------------------------------------------------------------------

@pytest.mark.parametrize("typo, suggestion", [("resnet5", "resnet50"), ("vit-b-16", "vit_b_16"),
                                              ("gpt-2", "gpt2"), ("llama-65b", "llama-7b"),
                                              ("bert_base", "bert-base")])
def test_unknown_model_suggests_close_names(typo, suggestion):
    for func in (get_model, layer_graph):
        with pytest.raises(InvalidParameterError, match=rf"Unknown model '{typo}'.*Did you mean.*'{suggestion}'"):
            func(typo)


def test_unknown_model_without_close_names_lists_the_valid_ones():
    with pytest.raises(InvalidParameterError, match="Valid: resnet18, resnet34") as info:
        get_model("zzzzzz")
    assert "Did you mean" not in str(info.value)


def test_get_model_validates_its_parameter():
    with pytest.raises(InvalidParameterError, match="The 'name' parameter of get_model must be"):
        get_model(50)


def test_layer_graph_returns_independent_copies():
    G = layer_graph("gpt2")
    G.nodes["lm_head"]["fwd_flops"] = 0.0
    G.graph["input"]["seq_len"] = 1
    G.remove_node("transformer.ln_f")
    H = layer_graph("gpt2")
    assert "transformer.ln_f" in H and H.nodes["lm_head"]["fwd_flops"] > 0
    assert H.graph["input"] == {"seq_len": 1024}


def test_replacing_a_model_invalidates_the_graph_cache():
    from dataclasses import replace
    from functools import partial

    from asrpt.dnn.zoo import _registry

    original = get_model("gpt2")
    layer_graph("gpt2")  # cached
    smaller = replace(original, params=gpt_params(2, 768),
                      builder=partial(build_gpt, name="gpt2", family="gpt2", layers=2, hidden=768,
                                      heads=12, batch=512, seq_len=1024))
    try:
        register_model(smaller, replace=True)
        assert total_params(layer_graph("gpt2")) == gpt_params(2, 768)
    finally:
        register_model(original, replace=True)
    assert total_params(layer_graph("gpt2")) == PINNED["gpt2"]
    assert _registry.REGISTRY["gpt2"] is original


def test_specs_are_frozen_and_serialise():
    spec = get_model("llama-70b")
    with pytest.raises(AttributeError):
        spec.params = 1
    with pytest.raises(TypeError):
        spec.config["layers"] = 1
    data = json.loads(json.dumps(spec.to_dict()))
    assert data["params"] == PINNED["llama-70b"] and data["overrides"] == ["seq_len"]
    assert "LlamaForCausalLM" in spec.reference and "Llama-2-70b" in spec.config["checkpoint"]


def test_register_model_refuses_duplicates_and_bad_names():
    spec = get_model("gpt2")
    with pytest.raises(InvalidParameterError, match="already registered"):
        register_model(spec)
    with pytest.raises(InvalidParameterError, match="lowercase"):
        register_model(ModelSpec(**{**spec.__dict__, "name": "GPT2"}))
    with pytest.raises(InvalidParameterError,
                       match="'spec' parameter of register_model must be an instance of asrpt.dnn.zoo.ModelSpec"):
        register_model("gpt2")


@pytest.mark.parametrize("build, kwargs, text", [
    (build_gpt, dict(name="g", family="gpt2", layers=1, hidden=10, heads=3, batch=1, seq_len=4),
     "'heads' parameter of build_gpt must divide hidden=10"),
    (build_gpt, dict(name="g", family="gpt2", layers=1, hidden=12, heads=3, batch=1, seq_len=40,
                     positions=32), r"'seq_len' parameter of build_gpt must be an int in \[1, 32\]"),
    (build_bert, dict(name="b", layers=1, hidden=10, heads=4, ffn=8, batch=1, seq_len=4),
     "'heads' parameter of build_bert must divide"),
    (build_bert, dict(name="b", layers=1, hidden=8, heads=4, ffn=8, batch=1, seq_len=513),
     "'seq_len' parameter of build_bert"),
    (build_llama, dict(name="l", reference_name="x", layers=1, hidden=64, heads=8, kv_heads=3,
                       ffn=8, vocab=10, tied=False, batch=1, seq_len=4, max_positions=8),
     "'kv_heads' parameter of build_llama must divide heads=8"),
    (build_llama, dict(name="l", reference_name="x", layers=1, hidden=64, heads=8, kv_heads=2,
                       ffn=8, vocab=10, tied=False, batch=1, seq_len=9, max_positions=8),
     "'seq_len' parameter of build_llama"),
    (build_vit, dict(name="v", batch=1, layers=1, hidden=10, heads=4, mlp=8),
     "'heads' parameter of build_vit must divide hidden=10"),
    (build_resnet, dict(name="r", block="dense", layers=(1, 1, 1, 1), batch=1),
     "'block' parameter of build_resnet must be a str among"),
])
def test_builders_reject_inconsistent_configurations(build, kwargs, text):
    with pytest.raises(InvalidParameterError, match=text):
        build(**kwargs)


def test_tied_heads_point_at_their_embedding():
    for name in ("gpt2", "gpt3-13b", "llama-1b"):
        G = layer_graph(name, seq_len=8)
        head = G.nodes["lm_head"]
        assert G.graph["tied_embeddings"] and head["params"] == 0 and head["tied_to"] in G
    G = layer_graph("llama-7b", seq_len=8)
    assert not G.graph["tied_embeddings"] and G.nodes["lm_head"]["params"] == 32000 * 4096


def test_orders_follow_the_chain_and_blocks_are_contiguous():
    for name in ("densenet121", "llama-13b"):
        G = layer_graph(name)
        nodes = chain(G)
        blocks = [G.nodes[n].get("block") for n in nodes]
        seen, prev = set(), object()
        for blk in blocks:
            if blk != prev:
                assert blk is None or blk not in seen, f"block {blk} is split"
                seen.add(blk)
                prev = blk


def test_elementwise_constants_are_the_documented_ones():
    assert ELEMENTWISE_FLOPS == {"act": 1, "add": 1, "mul": 1, "layernorm": 5, "rmsnorm": 4,
                                 "softmax": 5, "rope": 3}
