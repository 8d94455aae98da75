"""Layer-graph schema, builder, totals, pipeline cuts and coarsening (asrpt.dnn.layers)."""

import copy

import networkx as nx
import pytest

from asrpt.dnn.layers import (LayerGraphBuilder, activation_elems, chain, coarsen_blocks,
                              cut_elems, cut_profile, layer_graph_problems, total_bwd_flops,
                              total_flops, total_fwd_flops, total_params, validate_layer_graph)
from asrpt.dnn.zoo import layer_graph
from asrpt.errors import InvalidParameterError


def residual_dag():
    """a -> b -> c -> d(add: a + c) -> e, with a skip edge a -> d.

    orders 0..4; a, b, d, e emit 8 elements, c emits 4 (edge c -> d carries 4).
    """
    b = LayerGraphBuilder(name="residual")
    a = b.add("a", "conv", fwd_flops=100, params=10, out_elems=8, act_elems=3)
    x = b.add("b", "act", inputs=[a], fwd_flops=8, out_elems=8)
    c = b.add("c", "conv", inputs=[x], fwd_flops=50, params=5, out_elems=4, act_elems=8)
    d = b.add("d", "add", inputs=[a, c], fwd_flops=8, out_elems=8, act_elems=0)
    b.add("e", "linear", inputs=[d], fwd_flops=30, bwd_flops=30, params=3, out_elems=2)
    return b.build()


def snapshot(G):
    return (copy.deepcopy(G.graph), {n: dict(d) for n, d in G.nodes(data=True)},
            {(u, v): dict(d) for u, v, d in G.edges(data=True)})


# ---- builder ------------------------------------------------------------------------------

def test_builder_assigns_orders_defaults_and_edge_elems():
    G = residual_dag()
    assert chain(G) == ["a", "b", "c", "d", "e"]
    assert [G.nodes[n]["order"] for n in chain(G)] == [0, 1, 2, 3, 4]
    assert G.nodes["a"]["bwd_flops"] == 200.0  # default: 2 x forward
    assert G.nodes["e"]["bwd_flops"] == 30.0  # the layer said otherwise
    assert G.nodes["b"]["act_elems"] == 8 and G.nodes["d"]["act_elems"] == 0
    assert G.edges["a", "d"]["elems"] == 8 and G.edges["c", "d"]["elems"] == 4
    assert G.graph["name"] == "residual" and G.graph["tied_embeddings"] is False


@pytest.mark.parametrize("kwargs, text", [
    ({"node": "a", "type": "act", "out_elems": 1}, "already exists"),
    ({"node": "z", "type": "act", "out_elems": 1, "inputs": ["nope"]}, "not an earlier layer"),
    ({"node": "z", "type": "act", "out_elems": -1}, "out_elems of 'z' must be a non-negative int"),
    ({"node": "z", "type": "act", "out_elems": 1, "params": 1.5}, "params of 'z'"),
    ({"node": "z", "type": "act", "out_elems": 1, "fwd_flops": float("nan")}, "fwd_flops of 'z'"),
])
def test_builder_rejects_bad_layers(kwargs, text):
    b = LayerGraphBuilder(name="t")
    b.add("a", "conv", out_elems=1)
    with pytest.raises(InvalidParameterError, match=text):
        b.add(**kwargs)


def test_builder_refuses_an_empty_graph():
    with pytest.raises(InvalidParameterError, match="has no layers"):
        LayerGraphBuilder(name="empty").build()


# ---- schema -------------------------------------------------------------------------------

def test_validate_accepts_builder_and_zoo_graphs():
    validate_layer_graph(residual_dag())
    validate_layer_graph(layer_graph("resnet18"))
    assert layer_graph_problems(residual_dag()) == []


def _broken(mutate):
    G = residual_dag()
    mutate(G)
    return G


@pytest.mark.parametrize("mutate, text", [
    (lambda G: G.nodes["b"].pop("fwd_flops"), "node 'b' lacks 'fwd_flops'"),
    (lambda G: G.nodes["b"].update(params=-1), "'params' must be a non-negative int"),
    (lambda G: G.nodes["b"].update(bwd_flops=float("inf")), "'bwd_flops' must be a non-negative"),
    (lambda G: G.nodes["b"].update(type=3), "'type' must be a str"),
    (lambda G: G.nodes["e"].update(order=7), "'order' must number the layers 0..4"),
    (lambda G: (G.nodes["b"].update(order=2), G.nodes["c"].update(order=1)),
     "edge 'a' -> 'c'|goes against 'order'"),
    (lambda G: G.edges["a", "d"].pop("elems"), "edge 'a' -> 'd' lacks 'elems'"),
    (lambda G: G.edges["a", "d"].update(elems=2.5), "'elems' must be a non-negative int"),
])
def test_validate_reports_each_schema_problem(mutate, text):
    with pytest.raises(InvalidParameterError, match=text):
        validate_layer_graph(_broken(mutate))


def test_validate_rejects_non_digraphs_and_empty_graphs():
    with pytest.raises(InvalidParameterError, match="must be a networkx.DiGraph"):
        validate_layer_graph(nx.Graph([(0, 1)]))
    with pytest.raises(InvalidParameterError, match="has no layers"):
        validate_layer_graph(nx.DiGraph())


def test_validate_counts_further_problems():
    G = _broken(lambda G: (G.nodes["b"].pop("params"), G.nodes["c"].pop("params")))
    with pytest.raises(InvalidParameterError, match=r"lacks 'params' \(and 1 more\)"):
        validate_layer_graph(G)


def test_helpers_report_missing_attributes_as_schema_errors():
    G = _broken(lambda G: G.nodes["b"].pop("params"))
    with pytest.raises(InvalidParameterError, match="does not follow the layer-graph schema"):
        total_params(G)
    G = _broken(lambda G: G.nodes["b"].pop("order"))
    for helper in (chain, cut_profile):
        with pytest.raises(InvalidParameterError, match="missing attribute 'order'"):
            helper(G)
    G = _broken(lambda G: G.edges["a", "d"].pop("elems"))
    with pytest.raises(InvalidParameterError, match="missing attribute 'elems'"):
        cut_elems(G, 0)
    G = _broken(lambda G: G.nodes["b"].pop("bwd_flops"))
    for helper in (total_bwd_flops, lambda G: total_flops(G, 1)):
        with pytest.raises(InvalidParameterError, match="missing attribute 'bwd_flops'"):
            helper(G)
    G = _broken(lambda G: (G.nodes["b"].pop("act_elems"), G.nodes["b"].pop("out_elems")))
    with pytest.raises(InvalidParameterError, match="missing attribute 'out_elems'"):
        activation_elems(G)
    G = _broken(lambda G: G.nodes["b"].pop("fwd_flops"))
    with pytest.raises(InvalidParameterError, match="missing attribute 'fwd_flops'"):
        total_fwd_flops(G)


# ---- totals -------------------------------------------------------------------------------

def test_totals_of_a_hand_made_graph():
    G = residual_dag()
    assert total_params(G) == 18 and isinstance(total_params(G), int)
    assert total_fwd_flops(G) == 196.0
    assert total_bwd_flops(G) == 2 * (100 + 8 + 50 + 8) + 30
    assert total_flops(G, 4) == 4 * (196 + 362)
    assert activation_elems(G) == 3 + 8 + 8 + 0 + 2  # e defaults to its out_elems


def test_activation_elems_defaults_to_out_elems():
    G = residual_dag()
    del G.nodes["a"]["act_elems"]
    assert activation_elems(G) == 8 + 8 + 8 + 0 + 2


def test_total_flops_validates_batch_size():
    with pytest.raises(InvalidParameterError,
                       match=r"The 'batch_size' parameter of total_flops must be an int in \[1, inf\)"):
        total_flops(residual_dag(), 0)
    with pytest.raises(InvalidParameterError, match="'G' parameter of total_params"):
        total_params(nx.Graph())


# ---- cuts ---------------------------------------------------------------------------------

def test_cut_elems_on_a_hand_made_residual_dag():
    G = residual_dag()
    # after a: a->b (8) and the skip a->d (8) carry the same tensor: sent once
    # after b: b->c (8) + skip (8); after c: c->d (4) + skip (8); after d: d->e (8); after e: 0
    assert [cut_elems(G, i) for i in range(5)] == [8, 16, 12, 8, 0]
    assert cut_profile(G) == [8, 16, 12, 8, 0]


def test_a_tensor_read_by_two_later_layers_is_sent_once():
    b = LayerGraphBuilder(name="fanout")
    x = b.add("x", "embedding", out_elems=5)
    y = b.add("y", "norm", inputs=[x], out_elems=5)
    b.add("z", "add", inputs=[x, y], out_elems=5)
    G = b.build()
    assert cut_elems(G, 0) == 5  # both x -> y and x -> z cross, one tensor
    assert cut_elems(G, 1) == 10  # x (still needed by z) and y


def test_cut_elems_rejects_orders_outside_the_graph():
    with pytest.raises(InvalidParameterError, match=r"must be an int in \[0, 4\] for a graph of 5"):
        cut_elems(residual_dag(), 5)
    with pytest.raises(InvalidParameterError, match="The 'i' parameter of cut_elems"):
        cut_elems(residual_dag(), -1)


@pytest.mark.parametrize("name", ["resnet50", "densenet121", "gpt2"])
def test_cut_profile_agrees_with_cut_elems(name):
    G = layer_graph(name, **({"seq_len": 64} if name == "gpt2" else {}))
    prof = cut_profile(G)
    assert len(prof) == G.number_of_nodes() and prof[-1] == 0
    for i in range(0, len(prof), 7):
        assert prof[i] == cut_elems(G, i)


def test_transformer_block_boundaries_cut_one_hidden_state():
    G = layer_graph("gpt2", seq_len=32)
    order = {n: i for i, n in enumerate(chain(G))}
    prof = cut_profile(G)
    for i in range(12):
        assert prof[order[f"transformer.h.{i}.add_1"]] == 32 * 768
    # inside a block the residual stream crosses beside the branch
    assert prof[order["transformer.h.3.ln_2"]] == 2 * 32 * 768


# ---- coarsening ---------------------------------------------------------------------------

def test_coarsen_blocks_keeps_totals_and_block_boundary_cuts():
    for name in ("resnet50", "densenet121", "mobilenet_v2", "llama-7b"):
        G = layer_graph(name, **({"seq_len": 16} if name.startswith("llama") else {}))
        H = coarsen_blocks(G)
        validate_layer_graph(H)
        assert H.number_of_nodes() < G.number_of_nodes()
        assert total_params(H) == total_params(G)
        assert total_fwd_flops(H) == total_fwd_flops(G)
        assert total_bwd_flops(H) == total_bwd_flops(G)
        assert activation_elems(H) == activation_elems(G)
        order = {n: i for i, n in enumerate(chain(G))}
        fine = cut_profile(G)
        for i, n in enumerate(chain(H)):
            last = H.nodes[n]["layers"][-1] if H.nodes[n]["type"] == "block" else n
            assert cut_profile(H)[i] == fine[order[last]], (name, n)


def test_coarsen_blocks_is_exact_when_a_block_sends_two_tensors_to_different_blocks():
    b = LayerGraphBuilder(name="two-out")
    u1 = b.add("A.u1", "linear", out_elems=10, block="A")
    u2 = b.add("A.u2", "linear", inputs=[u1], out_elems=5, block="A")
    v = b.add("B.v", "linear", inputs=[u1], out_elems=3, block="B")
    b.add("C.w", "add", inputs=[u2, v], out_elems=3, block="C")
    G = b.build()
    H = coarsen_blocks(G)
    assert chain(H) == ["A", "B", "C"] and H.nodes["A"]["layers"] == ("A.u1", "A.u2")
    assert cut_profile(G) == [10, 15, 8, 0]
    assert cut_profile(H) == [15, 8, 0]


def test_coarsen_blocks_keeps_unblocked_layers():
    H = coarsen_blocks(layer_graph("resnet18"))
    assert chain(H)[:5] == ["conv1", "bn1", "relu", "maxpool", "layer1.0"]
    assert H.nodes["conv1"]["type"] == "conv" and H.nodes["layer1.0"]["type"] == "block"
    assert H.number_of_nodes() == 4 + 8 + 2


# ---- no mutation --------------------------------------------------------------------------

def test_helpers_never_mutate_their_input():
    G = layer_graph("resnet50")
    before = snapshot(G)
    validate_layer_graph(G)
    chain(G), total_params(G), total_fwd_flops(G), total_bwd_flops(G), total_flops(G, 8)
    activation_elems(G), cut_elems(G, 10), cut_profile(G), coarsen_blocks(G)
    layer_graph_problems(G)
    assert snapshot(G) == before
