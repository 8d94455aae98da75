"""The package's import graph (issue 16): no cycle, and the layers below the simulator never
import it.

The graph is read from the source with :mod:`ast`: every ``import`` and ``from ... import`` in a
module, at module level and inside functions alike (a function-level import is a dependency
too), relative imports resolved. ``from pkg import name`` is an edge to ``pkg.name`` when that is
a module, else to ``pkg``. An edge goes to the module named, not to the packages above it whose
``__init__`` Python also runs (a package's ``__init__`` is a module of the graph like any other).
"""

from __future__ import annotations

import ast
import pathlib

import asrpt

ROOT = pathlib.Path(asrpt.__file__).parent

#: The layers below the simulator: none of them may reach asrpt.sim (directly or through others).
BELOW_SIM = ("asrpt.state", "asrpt.instance", "asrpt.loading", "asrpt.sizes", "asrpt.single", "asrpt.offline",
             "asrpt.dnn", "asrpt.placement.result", "asrpt.placement.problem", "asrpt.placement.methods",
             "asrpt.placement.base", "asrpt.placement.heuristics", "asrpt.placement.ilp",
             "asrpt.placement.rings", "asrpt.placement.cut_bounds", "asrpt.placement.shortcuts",
             "asrpt.placement.ilp_plain", "asrpt.placement.ilp_count", "asrpt.placement.ilp_tau",
             "asrpt.predict.base", "asrpt.registry", "asrpt.errors", "asrpt._validation",
             # issue 44: the engine, the order type and the shared-data path sit below asrpt.sim,
             # the composition layer that turns names into objects
             "asrpt.engine", "asrpt.order", "asrpt.shared_data")


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(current: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def import_graph() -> dict[str, set[str]]:
    """module -> the asrpt modules it imports (anywhere in its body)."""
    mods = modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node.level, node.module)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in mods:   # "import asrpt.engine.core as e" etc.
                    target = target.rpartition(".")[0]
                if target.startswith("asrpt") and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    stack: list[str] = []

    def visit(u: str):
        colour[u] = GREY
        stack.append(u)
        for v in sorted(graph[u]):
            if colour[v] == GREY:
                return stack[stack.index(v):] + [v]
            if colour[v] == WHITE:
                found = visit(v)
                if found:
                    return found
        stack.pop()
        colour[u] = BLACK
        return None

    for u in sorted(graph):
        if colour[u] == WHITE:
            found = visit(u)
            if found:
                return found
    return None


def reachable(graph: dict[str, set[str]], start: str) -> dict[str, str]:
    """Every module ``start`` reaches -> the module it was reached from."""
    seen, todo = {start: ""}, [start]
    while todo:
        u = todo.pop()
        for v in graph[u]:
            if v not in seen:
                seen[v] = u
                todo.append(v)
    return seen


def _path(parents: dict[str, str], end: str) -> list[str]:
    out = [end]
    while parents[out[-1]]:
        out.append(parents[out[-1]])
    return out[::-1]


def test_the_graph_sees_relative_function_level_and_from_imports():
    graph = import_graph()
    assert "asrpt.state" in graph["asrpt.engine.core"]           # module level, relative
    assert "asrpt.policies" in graph["asrpt.sim.run"]           # function level
    assert "asrpt.placement.graph_placers" in graph["asrpt.placement"]  # "from . import graph_placers"
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_package_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_instance_model_imports_no_dnn():
    """asrpt.instance owns the data model; the DNN checks of loading are asrpt.loading's."""
    reached = reachable(import_graph(), "asrpt.instance")
    assert not [m for m in reached if m == "asrpt.dnn" or m.startswith("asrpt.dnn.")]
    assert "asrpt.dnn.validate" in import_graph()["asrpt.loading"]


def test_nothing_below_the_simulator_imports_it():
    graph = import_graph()
    bad = []
    for start in graph:
        if not any(start == b or start.startswith(b + ".") for b in BELOW_SIM):
            continue
        parents = reachable(graph, start)
        sims = sorted(m for m in parents if m == "asrpt.sim" or m.startswith("asrpt.sim."))
        if sims:
            bad.append(" -> ".join(_path(parents, sims[0])))
    assert not bad, "below the simulator but reaching it:\n" + "\n".join(bad)


def test_the_engine_imports_no_policy_and_no_placer_module():
    for engine in ("asrpt.engine.core", "asrpt.engine.reference"):
        reached = reachable(import_graph(), engine)
        assert not [m for m in reached if m.startswith(("asrpt.policies", "asrpt.placement", "asrpt.predict"))]


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph of ``asrpt``'s top-level packages and modules (``asrpt.sim.run`` counts as
    ``asrpt.sim``), without self-edges: the layering as a reader sees it."""
    def top(m: str) -> str:
        return ".".join(m.split(".")[:2])
    out: dict[str, set[str]] = {}
    for u, vs in graph.items():
        out.setdefault(top(u), set()).update(top(v) for v in vs if top(v) != top(u))
    return out


def test_no_import_cycle_between_packages():
    """Issue 44: {dnn, loading, traces} and {sim, policies, predict} were cycles at package level."""
    cycle = find_cycle(package_graph(import_graph()))
    assert cycle is None, "package import cycle: " + " -> ".join(cycle)
    assert find_cycle(package_graph({"x.a.m": {"x.b.n"}, "x.b.n": {"x.a.k"}, "x.a.k": set()})) == \
        ["x.a", "x.b", "x.a"]
