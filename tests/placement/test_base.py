"""place(), Placement, the method registry and the independent validator: shapes, errors and
every documented Raises entry."""

import pickle

import networkx as nx
import numpy as np
import pytest

from asrpt.dnn.parallel import worker_graph
from asrpt.errors import Infeasible, InvalidParameterError, SolverError
from asrpt.instance import Cluster, Job, Parallelism, Server
from asrpt.placement import (METHODS, FrozenMapping, ILPPlacement, MethodResult, Placement,
                             PlacementMethod, PlacementProblem, available_methods, has_pymetis,
                             is_worker_graph, make_method, place, register, validate_placement)

from ._placement_strategies import synthetic_worker_graph


def gpt2(d, p, t, gpu="A100"):
    job = Job("j", 0, d * p * t, model="gpt2", parallelism=Parallelism(d, p, t), iterations=1)
    return job, worker_graph(job, gpu)


def path(n, w=1.0):
    G = nx.path_graph(n)
    nx.set_edge_attributes(G, w, "bytes")
    return G


def test_placement_fields_and_json_shape():
    job, W = gpt2(2, 2, 2)
    cluster = Cluster.homogeneous(3, 4, "A100")
    p = place(W, [4, 4, 2], cluster=cluster, job=job)
    assert isinstance(p, Placement) and p.method == "ilp" and p.objective == "cut"
    assert set(p.assignment) == set(W.nodes)
    assert sum(g for _, g in p.server_gpus) == 8 and p.servers_used == len(p.server_gpus)
    assert p.tau is not None and p.tau > 0 and p.value == p.cut_bytes
    assert p.bound is not None and p.bound <= p.cut_bytes and p.gap == 0
    d = p.to_dict()
    assert d["assignment"][0][0] == [0, 0, 0] and isinstance(d["assignment"][0][1], int)
    assert d["server_gpus"] == [list(x) for x in p.server_gpus]
    assert validate_placement(W, [4, 4, 2], p, cluster, job=job) == ()


def test_placement_is_frozen_read_only_and_picklable():
    p = place(path(3), [2, 2])
    with pytest.raises(AttributeError):
        p.cut_bytes = 0.0
    with pytest.raises(TypeError):
        p.assignment[0] = 1
    q = pickle.loads(pickle.dumps(p))
    assert q == p and dict(q.assignment) == dict(p.assignment)
    assert FrozenMapping({"a": 1}) == {"a": 1}


def test_without_a_cluster_tau_is_none_and_generic_graphs_work():
    p = place(path(5, 2.0), [3, 3], method="best_fit")
    assert p.tau is None and p.cut_bytes == 2.0 and p.status == "heuristic" and p.bound is None


def test_infeasible_when_too_few_gpus_are_free():
    _, W = gpt2(2, 1, 4)
    with pytest.raises(Infeasible, match="needs 8 GPUs, 6 are free"):
        place(W, [4, 2, 0])


def test_memory_rule_excludes_servers_whose_gpus_are_too_small():
    # a worker too big for a T4 (16 GiB): the T4 server counts as having no free GPUs
    job = Job("big", 0, 2, model="gpt3-1.3b", parallelism=Parallelism(2, 1, 1), iterations=1,
              batch_size=2)
    W = worker_graph(job, "A100")
    mem = max(m for _, m in W.nodes(data="memory"))
    cluster = Cluster((Server(1, "A100"), Server(4, "T4"), Server(1, "A100")))
    assert mem > 0.9 * 16 * 2**30
    p = place(W, [1, 4, 1], cluster=cluster, job=job)
    assert {h for _, h in p.assignment.items()} == {0, 2}
    with pytest.raises(Infeasible, match="cannot hold its largest worker"):
        place(W, [1, 4, 0], cluster=cluster, job=job)


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "ilpp"}, "unknown placement method 'ilpp' \\(did you mean 'ilp'\\?\\)"),
    ({"objective": "time"}, "The 'objective' parameter of place must be"),
    ({"solver": "gurobi"}, "The 'solver' parameter of place must be"),
    ({"time_limit": 0}, "The 'time_limit' parameter of place must be"),
    ({"gap": 1.0}, "The 'gap' parameter of place must be"),
    ({"seed": -1}, "The 'seed' parameter of place must be"),
    ({"objective": "tau"}, "objective 'tau' needs a cluster"),
    ({"cluster": Cluster.homogeneous(3, 4)}, "free_gpus lists 2 servers, the cluster has 3"),
    ({"cluster": Cluster.homogeneous(2, 2)}, "free_gpus\\[0\\] = 4 exceeds server 0's 2 GPUs"),
    ({"method": ILPPlacement(formulation="nope")}, "The 'formulation' parameter of ILPPlacement"),
])
def test_bad_arguments_give_one_line(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        place(path(4), [4, 4], **kwargs)


@pytest.mark.parametrize("graph, free, message", [
    (nx.DiGraph([(0, 1)]), [2], "needs an undirected simple graph"),
    (nx.path_graph(2), [2], "edge 0-1 has no 'bytes' attribute"),
    (nx.Graph([(0, 1, {"bytes": -1.0})]), [2], "must be a finite non-negative number"),
    (path(2), [], "The 'free_gpus' parameter of place must be"),
    (path(2), [1, -1], "The 'free_gpus' parameter of place must be"),
    (path(2), [1.5, 1], "The 'free_gpus' parameter of place must be"),
])
def test_bad_graphs_and_free_vectors(graph, free, message):
    with pytest.raises(InvalidParameterError, match=message):
        place(graph, free)


def test_objective_tau_needs_a_worker_graph():
    with pytest.raises(InvalidParameterError, match="needs a DNN worker graph"):
        place(path(2), [2, 2], objective="tau", cluster=Cluster.homogeneous(2, 2))


def test_registry_names_classes_and_round_trips():
    assert {"ilp", "brute_force", "best_fit", "greedy", "metis", "kl", "random",
            "spread"} <= set(available_methods())
    for name, cls in METHODS.items():
        m = make_method(name)
        assert m.name == name and type(m)(**m.get_params()) == m
        assert isinstance(m.exact, bool)
    with pytest.raises(InvalidParameterError, match="The .spec. parameter of make_method must be a registered"):
        make_method(3)
    with pytest.raises(ValueError, match="registered twice"):
        register("ilp")(type("X", (PlacementMethod,), {"run": lambda self, pb: None}))
    with pytest.raises(TypeError, match="not a PlacementMethod"):
        register("not-a-method")(int)


def test_a_new_method_registers_by_name_and_is_validated():
    @register("test-all-on-last")
    class AllOnLast(PlacementMethod):
        def run(self, problem):
            return MethodResult(np.full(problem.n, problem.servers[-1]))

    try:
        G = path(3)
        p = place(G, [3, 3], method="test-all-on-last")
        assert p.method == "test-all-on-last" and p.server_gpus == ((1, 3),)
        assert validate_placement(G, [3, 3], p) == ()
    finally:
        METHODS.pop("test-all-on-last")


def test_a_method_returning_an_infeasible_assignment_is_caught():
    class Overfill(PlacementMethod):
        def run(self, problem):
            return MethodResult(np.zeros(problem.n, dtype=int))

    with pytest.raises(AssertionError, match="infeasible assignment"):
        place(path(3), [1, 2], method=Overfill())


def test_validator_finds_each_kind_of_corruption():
    job, W = gpt2(2, 1, 2)
    cluster = Cluster.homogeneous(2, 4, "A100", inter_bandwidth=1.25e9)
    p = place(W, [2, 2], cluster=cluster, job=job)
    assert validate_placement(W, [2, 2], p, cluster, job=job) == ()
    a = dict(p.assignment)
    w0 = next(iter(a))
    bad = {
        "missing": Placement(FrozenMapping({k: v for k, v in a.items() if k != w0}), p.server_gpus,
                             p.cut_bytes, p.servers_used, p.tau, p.method, p.status),
        "extra": Placement(FrozenMapping({**a, (9, 9, 9): 0}), p.server_gpus, p.cut_bytes,
                           p.servers_used, p.tau, p.method, p.status),
        "server": Placement(FrozenMapping({**a, w0: 7}), p.server_gpus, p.cut_bytes,
                            p.servers_used, p.tau, p.method, p.status),
        "cut": Placement(p.assignment, p.server_gpus, p.cut_bytes + 1, p.servers_used, p.tau,
                         p.method, p.status),
        "servers_used": Placement(p.assignment, p.server_gpus, p.cut_bytes, 5, p.tau, p.method,
                                  p.status),
        "tau": Placement(p.assignment, p.server_gpus, p.cut_bytes, p.servers_used, 1e9, p.method,
                         p.status),
        "bound": Placement(p.assignment, p.server_gpus, p.cut_bytes, p.servers_used, p.tau,
                           p.method, p.status, bound=p.cut_bytes * 2 + 1),
        "status": Placement(p.assignment, p.server_gpus, p.cut_bytes, p.servers_used, p.tau,
                            p.method, "great"),
    }
    expected = {"missing": "have no server", "extra": "not in the graph",
                "server": "not one of the 2 servers", "cut": "cut_bytes",
                "servers_used": "servers_used 5", "tau": "tau 1000000000.0 !=",
                "bound": "exceeds the value", "status": "unknown status"}
    for name, q in bad.items():
        problems = validate_placement(W, [2, 2], q, cluster, job=job)
        assert any(expected[name] in line for line in problems), (name, problems)
    assert any("holds 4 workers but has 2" in line or "holds" in line
               for line in validate_placement(W, [4, 0], p))
    with pytest.raises(InvalidParameterError, match="The 'placement' parameter"):
        validate_placement(W, [2, 2], "not a placement")


def test_problem_arrays_and_helpers():
    W = synthetic_worker_graph(2, 1, 2, [3.0], [], [5.0])
    assert is_worker_graph(W) and not is_worker_graph(path(2))
    pb = PlacementProblem.build(W, [2, 2, 0])
    assert pb.nodes == ((0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 0, 1)) and pb.servers == (0, 1)
    assert pb.total_bytes == 2 * 6.0 + 2 * 10.0
    a = np.array([0, 0, 1, 1])
    assert pb.cut(a) == 20.0 and pb.feasible(a) and not pb.feasible(np.array([0, 0, 0, 1]))
    assert pb.server_classes == ((0, 1),) and pb.tau(a) is None


def test_metis_without_pymetis_raises_solver_error(monkeypatch):
    import asrpt.placement.heuristics as H

    monkeypatch.setattr(H, "has_pymetis", lambda: False)
    with pytest.raises(SolverError, match="needs the pymetis package"):
        place(path(4), [2, 2], method="metis")


def test_has_pymetis_is_a_bool():
    assert has_pymetis() in (True, False)
