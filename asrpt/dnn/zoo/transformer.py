"""Transformer models of the zoo: BERT, GPT-2, GPT-3 and a LLaMA family, as Hugging Face builds
them (``BertModel``, ``GPT2LMHeadModel``, ``LlamaForCausalLM``), from published configurations.

Granularity: per transformer block six nodes -- two norms, ``attention`` (QKV projections,
rotary embedding, scores ``Q K^T``, softmax, context ``A V``, output projection), ``mlp`` (GELU,
or SwiGLU for LLaMA) and two residual adds -- plus embedding nodes, the final norm and the head.
``block`` is the block's module path (``transformer.h.7``, ``model.layers.7``). Node ids follow
the Hugging Face module paths (adds and the merged attention/MLP nodes are named after their
block). All quantities are per sequence of ``seq_len`` tokens.

Attention FLOPs per layer include ``2 s^2 d`` for the scores and ``2 s^2 d`` for the context,
with causal masking *not* halving them, and the layer follows memory-efficient attention (see
:mod:`asrpt.dnn.layers`). Grouped-query attention (LLaMA-2-70B, LLaMA-3) shrinks the K and V
projections only. The language-model head costs ``2 s d V``; with tied embeddings its weight is
the input embedding (node attribute ``tied_to``) and is counted once, at the embedding.

Parameter counts equal ``sum(p.numel() for p in model.parameters())`` of the Hugging Face
model built from the stated configuration (transformers 5.24, torch 2.13, meta device).
"""

from __future__ import annotations

from functools import partial
from numbers import Integral

import networkx as nx

from ..._validation import Interval, validate_params
from ...errors import InvalidParameterError
from ..layers import LayerGraphBuilder
from ._ops import Net
from ._registry import ModelSpec, register_model

__all__ = ["build_gpt", "build_bert", "build_llama", "gpt_params", "bert_params",
           "llama_params"]


_POS = [Interval(Integral, 1, None, closed="left")]


def _check_heads(func: str, hidden: int, heads: int, kv_heads: int | None = None) -> None:
    if hidden % heads:
        raise InvalidParameterError(
            f"The 'heads' parameter of {func} must divide hidden={hidden}. Got {heads} instead.")
    if kv_heads is not None and heads % kv_heads:
        raise InvalidParameterError(
            f"The 'kv_heads' parameter of {func} must divide heads={heads}. "
            f"Got {kv_heads} instead.")


def _check_seq(func: str, seq_len: int, positions: int) -> None:
    if seq_len > positions:
        raise InvalidParameterError(
            f"The 'seq_len' parameter of {func} must be an int in [1, {positions}] (the model's "
            f"positions). Got {seq_len} instead.")


def _seq(max_positions: int) -> dict:
    return {"seq_len": [Interval(Integral, 1, max_positions)]}


def _attrs(*, name, family, reference, head, tied, batch, seq_len, layers, hidden, heads,
           kv_heads, ffn, vocab, max_positions) -> dict:
    return dict(name=name, family=family, reference=reference, head=head, tied_embeddings=tied,
                default_batch_size=batch, input={"seq_len": seq_len}, num_layers=layers,
                hidden_size=hidden, num_heads=heads, num_kv_heads=kv_heads, ffn_hidden_size=ffn,
                vocab_size=vocab, seq_len=seq_len, max_positions=max_positions)


# ---- GPT-2 / GPT-3 --------------------------------------------------------------------------

@validate_params({"layers": _POS, "hidden": _POS, "vocab": _POS, "positions": _POS})
def gpt_params(layers: int, hidden: int, vocab: int = 50257, positions: int = 1024) -> int:
    """Parameters of ``GPT2LMHeadModel`` (tied head): ``V d + P d + L (12 d^2 + 13 d) + 2 d``.

    Parameters
    ----------
    layers, hidden, vocab, positions : int
        Blocks ``L``, width ``d``, vocabulary ``V`` and learned positions ``P``.

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        For a non-positive or non-integer argument.

    Examples
    --------
    >>> gpt_params(12, 768)
    124439808
    """
    return vocab * hidden + positions * hidden + layers * (12 * hidden**2 + 13 * hidden) + 2 * hidden


@validate_params({"name": [str], "family": [str], "layers": _POS, "hidden": _POS, "heads": _POS,
                  "batch": _POS, "seq_len": _POS, "vocab": _POS, "positions": _POS})
def build_gpt(*, name: str, family: str, layers: int, hidden: int, heads: int, batch: int,
              seq_len: int, vocab: int = 50257, positions: int = 1024) -> nx.DiGraph:
    """GPT-2 style decoder (``GPT2LMHeadModel``): learned positions, pre-LN blocks with a GELU
    MLP of width ``4 d``, final LayerNorm, language-model head tied to ``transformer.wte``.

    Parameters
    ----------
    name, family : str
        Graph attributes.
    layers, hidden, heads : int
        Blocks, width and attention heads (``heads`` divides ``hidden``).
    batch : int
        ``default_batch_size`` graph attribute.
    seq_len : int
        Tokens per sequence, at most ``positions``.
    vocab, positions : int
        Vocabulary and learned positions.

    Returns
    -------
    networkx.DiGraph
        The layer graph.

    Raises
    ------
    InvalidParameterError
        For a parameter outside its constraints, heads not dividing hidden, or
        ``seq_len > positions``.

    Examples
    --------
    >>> G = build_gpt(name="tiny", family="gpt2", layers=2, hidden=64, heads=4, batch=8,
    ...               seq_len=16, vocab=100, positions=32)
    >>> from asrpt.dnn.layers import total_params
    >>> total_params(G) == gpt_params(2, 64, vocab=100, positions=32)
    True
    """
    _check_heads("build_gpt", hidden, heads)
    _check_seq("build_gpt", seq_len, positions)
    s, d = seq_len, hidden
    b = LayerGraphBuilder(**_attrs(
        name=name, family=family, reference="transformers.GPT2LMHeadModel",
        head=f"lm_head: Linear({d}, {vocab}, bias=False), tied to transformer.wte", tied=True,
        batch=batch, seq_len=s, layers=layers, hidden=d, heads=heads, kv_heads=heads, ffn=4 * d,
        vocab=vocab, max_positions=positions))
    net = Net(b)
    x = net.embedding("transformer.wte", None, vocab, d, s, adds=False)
    x = net.embedding("transformer.wpe", x, positions, d, s, adds=True)
    for i in range(layers):
        p = net.block = f"transformer.h.{i}"
        y = net.norm(f"{p}.ln_1", x)
        y = net.attention(f"{p}.attn", y, heads, heads, bias=True)
        x = net.add(f"{p}.add", y, x)
        y = net.norm(f"{p}.ln_2", x)
        y = net.mlp(f"{p}.mlp", y, 4 * d)
        x = net.add(f"{p}.add_1", x, y)
    net.block = None
    x = net.norm("transformer.ln_f", x)
    b.add("lm_head", "linear", inputs=[x.node], fwd_flops=2 * s * d * vocab, params=0,
          out_elems=s * vocab, act_elems=s * d, tied_to="transformer.wte", width=vocab)
    return b.build()


# ---- BERT -----------------------------------------------------------------------------------

@validate_params({"layers": _POS, "hidden": _POS, "ffn": _POS, "vocab": _POS, "positions": _POS,
                  "type_vocab": _POS})
def bert_params(layers: int, hidden: int, ffn: int, vocab: int = 30522, positions: int = 512,
                type_vocab: int = 2) -> int:
    """Parameters of ``BertModel`` with its pooler.

    Parameters
    ----------
    layers, hidden, ffn : int
        Blocks, width and feed-forward width.
    vocab, positions, type_vocab : int
        Word, position and token-type embedding rows.

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        For a non-positive or non-integer argument.

    Examples
    --------
    >>> bert_params(12, 768, 3072)
    109482240
    """
    d = hidden
    embeddings = (vocab + positions + type_vocab) * d + 2 * d
    block = 4 * (d * d + d) + 2 * d + (d * ffn + ffn) + (ffn * d + d) + 2 * d
    return embeddings + layers * block + d * d + d


@validate_params({"name": [str], "layers": _POS, "hidden": _POS, "heads": _POS, "ffn": _POS,
                  "batch": _POS, "seq_len": _POS, "vocab": _POS, "positions": _POS,
                  "type_vocab": _POS})
def build_bert(*, name: str, layers: int, hidden: int, heads: int, ffn: int, batch: int,
               seq_len: int, vocab: int = 30522, positions: int = 512,
               type_vocab: int = 2) -> nx.DiGraph:
    """BERT encoder (``BertModel``): word + token-type + position embeddings, LayerNorm,
    post-LN blocks, and the pooler (dense + tanh on the first token); no pre-training heads.

    Parameters
    ----------
    name : str
        Graph name.
    layers, hidden, heads, ffn : int
        Blocks, width, attention heads (dividing ``hidden``) and feed-forward width.
    batch : int
        ``default_batch_size`` graph attribute.
    seq_len : int
        Tokens per sequence, at most ``positions``.
    vocab, positions, type_vocab : int
        Embedding rows.

    Returns
    -------
    networkx.DiGraph
        The layer graph.

    Raises
    ------
    InvalidParameterError
        For a parameter outside its constraints, heads not dividing hidden, or
        ``seq_len > positions``.

    Examples
    --------
    >>> G = build_bert(name="b", layers=12, hidden=768, heads=12, ffn=3072, batch=1, seq_len=128)
    >>> G.nodes["pooler"]["params"]
    590592
    """
    _check_heads("build_bert", hidden, heads)
    _check_seq("build_bert", seq_len, positions)
    s, d = seq_len, hidden
    b = LayerGraphBuilder(**_attrs(
        name=name, family="bert", reference="transformers.BertModel",
        head=f"pooler: Linear({d}, {d}) + tanh on [CLS] (no MLM/NSP heads)", tied=False,
        batch=batch, seq_len=s, layers=layers, hidden=d, heads=heads, kv_heads=heads, ffn=ffn,
        vocab=vocab, max_positions=positions))
    net = Net(b)
    x = net.embedding("embeddings.word_embeddings", None, vocab, d, s, adds=False)
    x = net.embedding("embeddings.token_type_embeddings", x, type_vocab, d, s, adds=True)
    x = net.embedding("embeddings.position_embeddings", x, positions, d, s, adds=True)
    x = net.norm("embeddings.LayerNorm", x)
    for i in range(layers):
        p = net.block = f"encoder.layer.{i}"
        y = net.attention(f"{p}.attention", x, heads, heads, bias=True)
        y = net.add(f"{p}.attention.output.add", y, x)
        x = net.norm(f"{p}.attention.output.LayerNorm", y)
        y = net.mlp(f"{p}.mlp", x, ffn)
        y = net.add(f"{p}.output.add", y, x)
        x = net.norm(f"{p}.output.LayerNorm", y)
    net.block = None
    b.add("pooler", "linear", inputs=[x.node], fwd_flops=2 * d * d + d + d, params=d * d + d,
          out_elems=d, act_elems=2 * d)
    return b.build()


# ---- LLaMA ----------------------------------------------------------------------------------

@validate_params({"layers": _POS, "hidden": _POS, "heads": _POS, "kv_heads": _POS, "ffn": _POS,
                  "vocab": _POS, "tied": ["boolean"]})
def llama_params(layers: int, hidden: int, heads: int, kv_heads: int, ffn: int, vocab: int,
                 tied: bool) -> int:
    """Parameters of ``LlamaForCausalLM`` (no biases, RMSNorm, SwiGLU, grouped-query attention).

    Parameters
    ----------
    layers, hidden, heads, kv_heads, ffn, vocab : int
        Blocks, width, query heads, key/value heads, SwiGLU width, vocabulary.
    tied : bool
        Whether ``lm_head`` shares the token embedding.

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        For an argument outside its constraints.

    Examples
    --------
    >>> llama_params(32, 4096, 32, 32, 11008, 32000, tied=False)  # Llama-2-7B
    6738415616
    """
    d = hidden
    kv = d // heads * kv_heads
    block = d * (d + 2 * kv) + d * d + 3 * d * ffn + 2 * d
    return vocab * d * (1 if tied else 2) + layers * block + d


@validate_params({"name": [str], "reference_name": [str], "layers": _POS, "hidden": _POS,
                  "heads": _POS, "kv_heads": _POS, "ffn": _POS, "vocab": _POS,
                  "tied": ["boolean"], "batch": _POS, "seq_len": _POS, "max_positions": _POS})
def build_llama(*, name: str, reference_name: str, layers: int, hidden: int, heads: int,
                kv_heads: int, ffn: int, vocab: int, tied: bool, batch: int, seq_len: int,
                max_positions: int) -> nx.DiGraph:
    """LLaMA decoder (``LlamaForCausalLM``): RMSNorm, rotary positions, grouped-query attention,
    SwiGLU MLP, untied (or tied) ``lm_head``.

    Parameters
    ----------
    name, reference_name : str
        Graph name and the checkpoint whose configuration this is.
    layers, hidden, heads, kv_heads, ffn, vocab : int
        As in :func:`llama_params` (``kv_heads`` divides ``heads``, which divides ``hidden``).
    tied : bool
        Whether ``lm_head`` shares the token embedding.
    batch : int
        ``default_batch_size`` graph attribute.
    seq_len, max_positions : int
        Tokens per sequence, at most ``max_positions``.

    Returns
    -------
    networkx.DiGraph
        The layer graph.

    Raises
    ------
    InvalidParameterError
        For a parameter outside its constraints or inconsistent head counts or lengths.

    Examples
    --------
    >>> G = build_llama(name="t", reference_name="toy", layers=2, hidden=64, heads=8,
    ...                 kv_heads=2, ffn=128, vocab=100, tied=False, batch=1, seq_len=8,
    ...                 max_positions=8)
    >>> G.nodes["model.layers.0.self_attn"]["params"]  # q, o: 64 x 64; k, v: 64 x 16
    10240
    """
    _check_heads("build_llama", hidden, heads, kv_heads)
    _check_seq("build_llama", seq_len, max_positions)
    s, d = seq_len, hidden
    head = f"lm_head: Linear({d}, {vocab}, bias=False)" + (
        ", tied to model.embed_tokens" if tied else ", untied")
    b = LayerGraphBuilder(**_attrs(
        name=name, family="llama", reference=f"transformers.LlamaForCausalLM ({reference_name})",
        head=head, tied=tied, batch=batch, seq_len=s, layers=layers, hidden=d, heads=heads,
        kv_heads=kv_heads, ffn=ffn, vocab=vocab, max_positions=max_positions))
    net = Net(b)
    x = net.embedding("model.embed_tokens", None, vocab, d, s, adds=False)
    for i in range(layers):
        p = net.block = f"model.layers.{i}"
        y = net.norm(f"{p}.input_layernorm", x, rms=True)
        y = net.attention(f"{p}.self_attn", y, heads, kv_heads, bias=False, rope=True)
        x = net.add(f"{p}.add", x, y)
        y = net.norm(f"{p}.post_attention_layernorm", x, rms=True)
        y = net.mlp(f"{p}.mlp", y, ffn, gated=True, bias=False)
        x = net.add(f"{p}.add_1", x, y)
    net.block = None
    x = net.norm("model.norm", x, rms=True)
    extra = {"tied_to": "model.embed_tokens"} if tied else {}
    b.add("lm_head", "linear", inputs=[x.node], fwd_flops=2 * s * d * vocab,
          params=0 if tied else vocab * d, out_elems=s * vocab, act_elems=s * d, width=vocab,
          **extra)
    return b.build()


# ---- registration ---------------------------------------------------------------------------

# name: (layers, hidden, heads, default global batch in sequences)
_GPT2 = {"gpt2": (12, 768, 12, 512), "gpt2-medium": (24, 1024, 16, 512),
         "gpt2-large": (36, 1280, 20, 512), "gpt2-xl": (48, 1600, 25, 512)}
# GPT-3 paper, Table 2.1 (n_layers, d_model, n_heads, batch in tokens / 2048). Two entries of
# the table are inconsistent with d_model = n_heads * d_head: 1.3B lists 24 heads of 128 with
# d_model 2048 (we use 16 heads of 128), 13B lists d_model 5140 with 40 heads of 128 (we use
# 5120 = 40 * 128). Heads do not change the parameter count.
_GPT3 = {"gpt3-125m": (12, 768, 12, 256), "gpt3-350m": (24, 1024, 16, 256),
         "gpt3-760m": (24, 1536, 16, 256), "gpt3-1.3b": (24, 2048, 16, 512),
         "gpt3-2.7b": (32, 2560, 32, 512), "gpt3-6.7b": (32, 4096, 32, 1024),
         "gpt3-13b": (40, 5120, 40, 1024), "gpt3-175b": (96, 12288, 96, 1536)}
# name: (reference, layers, hidden, heads, kv_heads, ffn, vocab, tied, max positions,
#        default seq_len, default batch in sequences)
_LLAMA = {
    "llama-1b": ("meta-llama/Llama-3.2-1B", 16, 2048, 32, 8, 8192, 128256, True, 131072,
                 8192, 512),
    "llama-7b": ("meta-llama/Llama-2-7b-hf", 32, 4096, 32, 32, 11008, 32000, False, 4096,
                 4096, 1024),
    "llama-8b": ("meta-llama/Llama-3.1-8B", 32, 4096, 32, 8, 14336, 128256, False, 131072,
                 8192, 512),
    "llama-13b": ("meta-llama/Llama-2-13b-hf", 40, 5120, 40, 40, 13824, 32000, False, 4096,
                  4096, 1024),
    "llama-70b": ("meta-llama/Llama-2-70b-hf", 80, 8192, 64, 8, 28672, 32000, False, 4096,
                  4096, 1024),
}
# Pinned exact counts (Hugging Face, see the module docstring); tests/dnn/test_zoo.py repeats them.
_PARAMS = {
    "bert-base": 109_482_240, "bert-large": 335_141_888,
    "gpt2": 124_439_808, "gpt2-medium": 354_823_168, "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200,
    "gpt3-125m": 125_226_240, "gpt3-350m": 355_871_744, "gpt3-760m": 760_300_032,
    "gpt3-1.3b": 1_315_723_264, "gpt3-2.7b": 2_651_553_280, "gpt3-6.7b": 6_658_404_352,
    "gpt3-13b": 12_853_386_240, "gpt3-175b": 174_604_259_328,
    "llama-1b": 1_235_814_400, "llama-7b": 6_738_415_616, "llama-8b": 8_030_261_248,
    "llama-13b": 13_015_864_320, "llama-70b": 68_976_648_192,
}


def _register_all() -> None:
    for name, (layers, hidden, heads, ffn, batch) in {
            "bert-base": (12, 768, 12, 3072, 256), "bert-large": (24, 1024, 16, 4096, 256)}.items():
        register_model(ModelSpec(
            name=name, family="bert", reference="transformers.BertModel",
            head="pooler (no MLM/NSP pre-training heads)", tied_embeddings=False,
            default_batch_size=batch, input={"seq_len": 512}, params=_PARAMS[name],
            builder=partial(build_bert, name=name, layers=layers, hidden=hidden, heads=heads,
                            ffn=ffn, batch=batch, seq_len=512),
            config={"layers": layers, "hidden": hidden, "heads": heads, "ffn": ffn,
                    "vocab": 30522, "max_positions": 512},
            overrides=_seq(512),
            description=f"BERT-{name[5:]} (uncased vocabulary 30522), Devlin et al. 2019"))
    for table, family, positions, seq in ((_GPT2, "gpt2", 1024, 1024),
                                          (_GPT3, "gpt3", 2048, 2048)):
        for name, (layers, hidden, heads, batch) in table.items():
            register_model(ModelSpec(
                name=name, family=family, reference="transformers.GPT2LMHeadModel",
                head="lm_head (tied to the token embedding)", tied_embeddings=True,
                default_batch_size=batch, input={"seq_len": seq}, params=_PARAMS[name],
                builder=partial(build_gpt, name=name, family=family, layers=layers,
                                hidden=hidden, heads=heads, batch=batch, seq_len=seq,
                                positions=positions),
                config={"layers": layers, "hidden": hidden, "heads": heads, "vocab": 50257,
                        "max_positions": positions},
                overrides=_seq(positions),
                description=(f"GPT-2 ({layers} layers, d={hidden}), Radford et al. 2019"
                             if family == "gpt2" else
                             f"GPT-3 {name[5:].upper()} (Brown et al. 2020, Table 2.1) as a "
                             "GPT-2 block with learned positions, context 2048, vocabulary "
                             "50257, tied embeddings, dense attention")))
    for name, (ref, layers, hidden, heads, kv, ffn, vocab, tied, maxpos, seq, batch) in \
            _LLAMA.items():
        register_model(ModelSpec(
            name=name, family="llama", reference="transformers.LlamaForCausalLM",
            head="lm_head " + ("(tied to the token embedding)" if tied else "(untied)"),
            tied_embeddings=tied, default_batch_size=batch, input={"seq_len": seq},
            params=_PARAMS[name],
            builder=partial(build_llama, name=name, reference_name=ref, layers=layers,
                            hidden=hidden, heads=heads, kv_heads=kv, ffn=ffn, vocab=vocab,
                            tied=tied, batch=batch, seq_len=seq, max_positions=maxpos),
            config={"layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv,
                    "ffn": ffn, "vocab": vocab, "max_positions": maxpos, "checkpoint": ref},
            overrides=_seq(maxpos),
            description=f"{ref.split('/')[1]} configuration"))


_register_all()
