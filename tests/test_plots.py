"""asrpt.plots and ``asrpt plot``: each figure draws exactly what its input says (checked from the
artists, not by eye), figures are deterministic and never touch pyplot's global state, and every
CLI kind writes a PNG or fails with one line and exit status 2."""

import json
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

from asrpt import plots
from asrpt.cli import main
from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job, Parallelism, load_instance, save_instance
from asrpt.sim import simulate
from asrpt.single import virtual_schedule
from asrpt.testing.strategies import instances

SMALL = "instances/small-cluster.json"


@pytest.fixture(scope="module")
def small():
    inst = load_instance(SMALL, exact=True)
    return inst, simulate(inst, 'a-srpt:adaptive="off"')


@pytest.fixture(scope="module")
def dnn_instance():
    jobs = (Job("j0", 0, 16, model="gpt2", parallelism=Parallelism(2, 2, 4), iterations=50),
            Job("j1", 5, 8, model="bert-base", parallelism=Parallelism(4, 1, 2), iterations=80),
            Job("j2", 9, 4, model="resnet50", parallelism=Parallelism(4, 1, 1), iterations=40))
    return Instance(Cluster.homogeneous(3, 8, "A100"), jobs)


def _polys(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def _areas(collection):
    """(x0, x1, y0, y1) of each rectangle of a PolyCollection."""
    out = []
    for path in collection.get_paths():
        xs, ys = path.vertices[:, 0], path.vertices[:, 1]
        out.append((xs.min(), xs.max(), ys.min(), ys.max()))
    return out


# ---------------------------------------------------------------------------------------------
# gpu_rows and gantt
# ---------------------------------------------------------------------------------------------

def _check_rows(records, bars, caps, server_gpus):
    by_gpu = {}
    for k, start, end, _, h, gpu in bars:
        assert 0 <= gpu < caps[h]
        by_gpu.setdefault((h, gpu), []).append((start, end))
    for spans in by_gpu.values():     # no GPU holds two segments at once
        spans.sort()
        for (s0, e0), (s1, _) in zip(spans, spans[1:]):
            assert s1 >= e0
    counts = {}
    for k, start, end, _, h, _ in bars:
        counts[(k, start, end, h)] = counts.get((k, start, end, h), 0) + 1
    expected = {(k, float(s.start), float(s.end), h): g
                for k, r in enumerate(records) for s in r.segments for h, g in s.servers}
    assert counts == expected          # every segment gets exactly its GPUs on each server
    if server_gpus is not None:
        assert caps == tuple(server_gpus)


@settings(max_examples=30, deadline=None)
@given(instances(max_jobs=6, max_servers=3))
def test_gpu_rows_give_every_segment_its_own_gpus(inst):
    res = simulate(inst, "a-srpt")
    server_gpus = list(inst.cluster.server_gpus)
    bars, caps = plots.gpu_rows(res.records, server_gpus)
    _check_rows(res.records, bars, caps, server_gpus)
    bars, caps = plots.gpu_rows(res.records)          # inferred capacities never exceed the cluster
    _check_rows(res.records, bars, caps, None)
    assert all(c <= g for c, g in zip(caps, server_gpus))


def test_gpu_rows_and_save_png_reject_bad_arguments(tmp_path):
    with pytest.raises(InvalidParameterError, match="'server_gpus' parameter of gpu_rows"):
        plots.gpu_rows([], 4)
    with pytest.raises(InvalidParameterError, match="'fig' parameter of save_png"):
        plots.save_png("figure", tmp_path / "x.png")
    with pytest.raises(InvalidParameterError, match="'dpi' parameter of save_png"):
        plots.save_png(plots.jct_cdf({"a": [1]}), tmp_path / "x.png", dpi=5)


def test_gantt_draws_every_gpu_second_and_the_virtual_pieces(small):
    inst, res = small
    virtual = virtual_schedule(inst, predicted=True)
    fig = plots.gantt(res, virtual=virtual, cluster=inst.cluster)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    cluster_ax, vax = fig.axes
    # each bar covers whole GPU rows (shrunk by a margin of 0.06 on each side)
    drawn = sum((x1 - x0) * round(y1 - y0 + 0.12) for c in _polys(cluster_ax) for x0, x1, y0, y1 in _areas(c))
    held = sum(r.gpus * (s.end - s.start) for r in res.records for s in r.segments)
    assert drawn == pytest.approx(float(held))
    assert cluster_ax.get_ylim() == (8, 0)
    pieces = _areas(_polys(vax)[0])
    assert sum(x1 - x0 for x0, x1, _, _ in pieces) == pytest.approx(float(sum(virtual.sizes)))
    labels = {t.get_text() for t in cluster_ax.texts}
    assert labels == {r.id for r in res.records}
    assert str(float(virtual.total_completion_time)) in vax.get_title() or \
        f"{float(virtual.total_completion_time):.6g}" in vax.get_title()
    # A-SRPT with static predictions follows the virtual order: the colours match job by job
    colors = {tuple(c) for c in _polys(cluster_ax)[0].get_facecolors()}
    assert {tuple(c) for c in _polys(vax)[0].get_facecolors()} <= colors


def test_gantt_without_virtual_labels_and_time_range(small):
    inst, res = small
    fig = plots.gantt(res, labels=False, time_range=(2, 6), title="x")
    (ax,) = fig.axes
    assert len(ax.texts) == 0 and ax.get_xlim() == (2.0, 6.0) and ax.get_title() == "x"


def test_gantt_hatches_restarts():
    inst = Instance(Cluster.homogeneous(1, 2), (Job("long", 0, 2, processing_time=10),
                                                 Job("short", 1, 2, processing_time=1)))
    res = simulate(inst, "srsf", preemption_cost=2)
    assert any(s.restart for r in res.records for s in r.segments)
    fig = plots.gantt(res, cluster=inst.cluster)
    hatched = [c for c in _polys(fig.axes[0]) if c.get_hatch()]
    x0, x1, _, _ = _areas(hatched[0])[0]
    assert x1 - x0 == pytest.approx(2)            # the restart cost
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["restart"]


@pytest.mark.parametrize("kwargs, match", [
    ({"result": "not a run"}, "must be a SimResult"),
    ({"virtual": [1, 2]}, "must be a Schedule"),
    ({"cluster": [4, -1]}, "'cluster' must be"),
    ({"time_range": (1, 2, 3)}, "time_range"),
    ({"labels": "yes"}, "'labels' parameter of gantt"),
])
def test_gantt_rejects_bad_arguments(small, kwargs, match):
    args = {"result": small[1], **kwargs}
    with pytest.raises(InvalidParameterError, match=match):
        plots.gantt(args.pop("result"), **args)


# ---------------------------------------------------------------------------------------------
# JCTs
# ---------------------------------------------------------------------------------------------

def test_jct_cdf_steps_through_the_sorted_jcts(small):
    inst, res = small
    fifo = simulate(inst, "fifo")
    fig = plots.jct_cdf([res, fifo], log_x=False)
    lines = fig.axes[0].lines
    assert [ln.get_label() for ln in lines] == [res.policy, "fifo"]
    for line, run in zip(lines, (res, fifo)):
        assert list(line.get_xdata()) == sorted(float(r.jct) for r in run.records)
        assert line.get_ydata()[-1] == 1.0
    assert fig.axes[0].get_xscale() == "linear"
    fig = plots.jct_cdf({"mine": [Fraction(1, 2), 2, None, 4.0]})
    assert list(fig.axes[0].lines[0].get_xdata()) == [0.5, 2.0, 4.0] and fig.axes[0].get_xscale() == "log"


def test_jct_bars_are_the_summary_numbers(small):
    inst, res = small
    runs = [res, simulate(inst, "fifo"), simulate(inst, "srsf")]
    fig = plots.jct_bars(runs, stats=("mean", "median", "p99"))
    heights = [p.get_height() for p in fig.axes[0].patches]
    expected = [float(r.summary[f"{s}_jct"]) for s in ("mean", "median", "p99") for r in runs]
    assert heights == pytest.approx(expected)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [r.policy for r in runs]


@pytest.mark.parametrize("func", [plots.jct_cdf, plots.jct_bars])
def test_jct_figures_reject_other_inputs(func):
    with pytest.raises(InvalidParameterError, match="must be a sequence of SimResult or a mapping"):
        func("runs")
    with pytest.raises(InvalidParameterError, match="every result must be a SimResult"):
        func([1, 2])


def test_jct_bars_rejects_unknown_statistics():
    with pytest.raises(InvalidParameterError, match="'stats' must list some of mean, median"):
        plots.jct_bars({"a": [1]}, stats=("mean", "p42"))


# ---------------------------------------------------------------------------------------------
# Theorem 1: ratio against bound, worst-case progress
# ---------------------------------------------------------------------------------------------

def _row(ratio, bound, rho, mu, beta=1, holds=True, status="ok", task="certify"):
    return {"task": task, "status": status,
            "figures": None if status != "ok" else
            {"ratio_to_lb": ratio, "ratio_bound": bound, "rho": rho, "mu": mu, "beta": beta, "holds": holds}}


def test_ratio_vs_bound_places_each_point_and_skips_rows_that_are_not_ok():
    from asrpt.theory import certify_instance

    cert = certify_instance(load_instance("instances/worked-example.json"))
    rows = [_row(1.5, 9, 4, 2), _row(2, 5, 2, 2, holds=False), _row(0, 0, 0, 0, status="timeout"), cert]
    fig = plots.ratio_vs_bound(rows, color="mu", x="rho")
    ax, ax2 = fig.axes[:2]
    ok = ax.collections[0].get_offsets().tolist()
    assert ok == [[9, 1.5], [float(cert.ratio_bound), float(cert.ratio_to_lb)]]
    failed = ax.collections[1]
    assert failed.get_offsets().tolist() == [[5, 2]]
    assert ax2.collections[0].get_offsets().tolist()[0] == [4, pytest.approx(1.5 / 9)]
    assert ax.get_xscale() == ax.get_yscale() == "log" and ax2.get_xlabel() == "rho"
    assert fig.axes[-1].get_ylabel() == "mu"       # the colour bar
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "certificate fails" in legend and "ratio = bound (Theorem 1)" in legend


def test_ratio_vs_bound_takes_worst_cases_with_their_instance_rho_and_mu():
    from asrpt.theory import worst_case

    r = worst_case(gpus=2, max_jobs=3, mu=2, budget=10, max_evals=12, seed=1)
    fig = plots.ratio_vs_bound([r], color="rho")
    ((bound, ratio),) = fig.axes[0].collections[0].get_offsets().tolist()
    assert (bound, ratio) == (pytest.approx(float(r.bound)), pytest.approx(float(r.ratio)))
    assert ratio <= bound
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()][0] in ("worst case (ALG / UB)", "worst case (ALG / OPT)")


@pytest.mark.parametrize("points, match", [
    ([], "no point to draw"),
    ([_row(0, 0, 0, 0, status="error")], "no point to draw"),
    ([_row(1, 2, 1, 1, task="simulate")], "is a 'simulate' row"),
    ([{"ratio_to_lb": 1}], "has no ratio_bound, rho, mu, beta"),
    ([object()], "must be a Certificate, a WorstCase or a certify row"),
    ({"a": 1}, "'points' must be a sequence"),
])
def test_ratio_vs_bound_rejects_bad_points(points, match):
    with pytest.raises(InvalidParameterError, match=match):
        plots.ratio_vs_bound(points)


def test_worstcase_progress_follows_the_history_to_the_last_evaluation():
    from asrpt.theory import worst_case

    results = [worst_case(gpus=2, max_jobs=3, mu=mu, budget=10, max_evals=15, seed=2) for mu in (1, 4)]
    fig = plots.worstcase_progress(results)
    ax = fig.axes[0]
    steps = [ln for ln in ax.lines if ln.get_drawstyle() == "steps-post"]
    assert len(steps) == 2
    for line, r in zip(steps, results):
        assert list(line.get_xdata())[:-1] == [e for e, _ in r.history]
        assert line.get_xdata()[-1] == r.evaluations
        assert list(line.get_ydata())[:-1] == [float(q) for _, q in r.history]
    bounds = sorted(ln.get_ydata()[0] for ln in ax.lines if ln.get_linestyle() == "--")
    assert bounds == [float(r.cell_bound) for r in results]
    assert ax.get_yscale() == "linear"            # bounds 3 and 9 against ratios >= 1
    assert plots.worstcase_progress(results[0], log_y=True).axes[0].get_yscale() == "log"
    with pytest.raises(InvalidParameterError, match="must be a WorstCase"):
        plots.worstcase_progress([])


# ---------------------------------------------------------------------------------------------
# Placement
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["ilp", "spread"])
def test_placement_graph_highlights_exactly_the_cut_edges(dnn_instance, method):
    from asrpt.dnn.parallel import worker_graph
    from asrpt.placement import place

    job = dnn_instance.job("j0")
    W = worker_graph(job, "A100")
    free = [8, 4, 4]
    p = place(W, free, method=method)
    fig = plots.placement_graph(W, p, free_gpus=free)
    ax = fig.axes[0]
    cut = [(u, v) for u, v in W.edges if p.assignment[u] != p.assignment[v]]
    inside = W.number_of_edges() - len(cut)
    arcs = [a for a in ax.patches if isinstance(a, FancyArrowPatch)]
    assert len(arcs) == len(cut)
    assert all(a.get_edgecolor()[:3] == pytest.approx((0.839, 0.153, 0.157), abs=1e-3) for a in arcs)
    assert sum(len(c.get_segments()) for c in ax.collections if isinstance(c, LineCollection)) == inside
    nodes = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(nodes[0].get_offsets()) == W.number_of_nodes()
    assert sum(b for *_, b in (e + (W.edges[e]["bytes"],) for e in cut)) == pytest.approx(p.cut_bytes)
    assert f"on {p.servers_used} servers" in ax.get_title()
    texts = [t.get_text() for t in ax.texts]
    assert sum(t.startswith("server ") for t in texts) == p.servers_used
    assert "000" in texts and len([t for t in texts if len(t) == 3 and t.isdigit()]) == 16


def test_placement_graph_of_a_plain_graph_and_missing_workers():
    import networkx as nx
    from asrpt.placement import place

    G = nx.path_graph(4)
    nx.set_edge_attributes(G, 2.0, "bytes")
    p = place(G, [2, 2], method="best_fit")
    fig = plots.placement_graph(G, p)
    assert "4 workers" in fig.axes[0].get_title()
    H = G.copy()
    H.add_edge(3, 4, bytes=1.0)
    with pytest.raises(InvalidParameterError, match="does not assign worker 4"):
        plots.placement_graph(H, p)
    with pytest.raises(InvalidParameterError, match="must be a Placement"):
        plots.placement_graph(G, {"assignment": 1})


# ---------------------------------------------------------------------------------------------
# Predictions
# ---------------------------------------------------------------------------------------------

def test_prediction_scatter_points_and_accuracy_in_the_legend():
    from asrpt.predict.metrics import PredictionLog, accuracy

    fig = plots.prediction_scatter([10, 100, 1000], {"a": [20, 100, 500], "b": [10, 10, 10]})
    ax = fig.axes[0]
    assert ax.collections[0].get_offsets().tolist() == [[10, 20], [100, 100], [1000, 500]]
    assert ax.collections[1].get_offsets().tolist() == [[10, 10], [100, 10], [1000, 10]]
    acc = accuracy([10, 100, 1000], [20, 100, 500])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0] == f"a (n=3): rho 1.00, med |log| {acc.median_abs_log:.2f}, within 2x 100%"
    assert legend[1].startswith("b (n=3): rho n/a") and "within 2x 33%" in legend[1]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    log = PredictionLog(("x", "y"), (1, 4), (2, 4))
    assert plots.prediction_scatter(log).axes[0].collections[0].get_offsets().tolist() == [[1, 2], [4, 4]]
    assert len(plots.prediction_scatter({"p": log, "q": log}).axes[0].collections) == 2


@pytest.mark.parametrize("args, match", [
    (([1, 2], [1]), "2 true values but 1 predictions"),
    (([1, 0], [1, 1]), "must be positive and finite"),
    (([1, 2], [1, -3]), r"predictions \(predicted\) must be positive"),
    (([1, 2],), "give \\(true, predicted\\)"),
])
def test_prediction_scatter_rejects_bad_values(args, match):
    with pytest.raises(InvalidParameterError, match=match):
        plots.prediction_scatter(*args)


# ---------------------------------------------------------------------------------------------
# Determinism, headless, save_png
# ---------------------------------------------------------------------------------------------

def test_figures_are_deterministic_and_leave_pyplot_alone(small, dnn_instance, tmp_path):
    from asrpt.dnn.parallel import worker_graph
    from asrpt.placement import place

    inst, res = small
    W = worker_graph(dnn_instance.job("j1"), "A100")

    def figures():
        return [plots.gantt(res, virtual=virtual_schedule(inst), cluster=inst.cluster),
                plots.placement_graph(W, place(W, [4, 4, 0], method="ilp")),
                plots.jct_bars([res])]

    first = [plots.save_png(f, tmp_path / f"a{i}.png") for i, f in enumerate(figures())]
    second = [plots.save_png(f, tmp_path / f"b{i}.png") for i, f in enumerate(figures())]
    for a, b in zip(first, second):
        with open(a, "rb") as fa, open(b, "rb") as fb:
            assert fa.read() == fb.read()
    import matplotlib.pyplot as plt      # imported by networkx's drawing: still no figure in it
    assert plt.get_fignums() == []


def test_importing_plots_selects_no_pyplot_backend():
    code = "import sys, asrpt.plots; print('matplotlib.pyplot' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------------------------------
# asrpt plot
# ---------------------------------------------------------------------------------------------

def _png(path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_cli_every_kind_writes_a_png(tmp_path, capsys, dnn_instance):
    dnn_path = tmp_path / "dnn.json"
    save_instance(dnn_instance, dnn_path)
    inst = load_instance(SMALL)
    gen = tmp_path / "gen"
    gen.mkdir()
    for k in range(3):
        save_instance(Instance(inst.cluster, inst.jobs[k:]), gen / f"i{k}.json")
    certify = tmp_path / "certify.jsonl"
    assert main(["batch", str(gen), "--task", "certify", "--out", str(certify), "--jobs", "1"]) == 0
    simdir = tmp_path / "sim"
    assert main(["simulate", SMALL, "--policy", "a-srpt,fifo", "--out", str(simdir)]) == 0
    capsys.readouterr()
    commands = {
        "gantt": ["gantt", SMALL, "--policy", "a-srpt", "--virtual", "true"],
        "gantt_dnn": ["gantt", str(dnn_path), "--policy", "fifo", "--virtual", "none", "--no-labels"],
        "jct": ["jct", SMALL, "--policy", "a-srpt,fifo,srsf"],
        "bars": ["jct", SMALL, "--chart", "bars", "--stats", "mean,median,p99"],
        "jct_dir": ["jct", str(simdir), "--policy", "fifo"],
        "placement": ["placement", str(dnn_path), "--job", "j0", "--free", "8,4,4", "--method", "ilp"],
        "ratio": ["ratio", str(certify), "--color", "mu", "--x", "bound"],
        "worst": ["worst-case", "--gpus", "2", "--max-jobs", "2", "--mu", "1,2", "--max-evals", "4",
                  "--budget", "5"],
        "accuracy": ["accuracy", 'recurring:n_jobs=60:cluster="2x8"', "--predictor", "group_mean,forest",
                     "--replay"],
    }
    for name, argv in commands.items():
        out = tmp_path / f"{name}.png"
        assert main(["plot", *argv, "--out", str(out), "--dpi", "40"]) == 0, name
        printed, _ = capsys.readouterr()
        assert printed.strip() == str(out) and _png(out), name


def test_cli_jct_from_a_directory_equals_the_simulated_runs(tmp_path, capsys, small):
    simdir = tmp_path / "sim"
    assert main(["simulate", SMALL, "--policy", "a-srpt,fifo", "--out", str(simdir)]) == 0
    from asrpt.cli.plot import _results_dir_jcts

    data = _results_dir_jcts(str(simdir), None)
    inst = load_instance(SMALL)
    for policy in ("a-srpt", "fifo"):
        assert data[policy] == [float(r.jct) for r in simulate(inst, policy).records]


@pytest.mark.parametrize("argv, match", [
    (["gantt", "missing.json"], "missing.json"),
    (["gantt", SMALL, "--policy", "a-srpt,fifo"], "gantt draws one"),
    (["jct", "instances", "--policy", "fifo"], "no summary.json"),
    (["jct", SMALL, "--chart", "bars", "--stats", "mean,p7"], "'stats' must list"),
    (["placement", SMALL, "--job", "j1"], "is abstract"),
    (["placement", SMALL, "--job", "nope"], "no job 'nope'"),
    (["ratio", "missing.jsonl"], "no results file"),
    (["accuracy", "nofamily:n_jobs=3"], "not a generator spec"),
])
def test_cli_errors_are_one_line_with_status_2(tmp_path, capsys, argv, match):
    code = main(["plot", *argv, "--out", str(tmp_path / "x.png")])
    _, err = capsys.readouterr()
    assert code == 2 and match in err and err.count("\n") == 1


def test_cli_out_must_be_a_png(tmp_path, capsys):
    assert main(["plot", "jct", SMALL, "--out", str(tmp_path / "x.pdf")]) == 2
    assert "--out must name a .png file" in capsys.readouterr().err


def test_cli_ratio_rejects_rows_of_another_task(tmp_path, capsys):
    path = tmp_path / "rows.jsonl"
    row = {"schema": "asrpt-batch-row/1", "path": "a.json", "hash": "sha256:0", "task": "srpt",
           "options": {}, "status": "ok", "error": None, "figures": {}, "wall_time": 0, "worker": "pid:1",
           "asrpt_version": "0"}
    path.write_text(json.dumps(row) + "\n")
    assert main(["plot", "ratio", str(path), "--out", str(tmp_path / "r.png")]) == 2
    assert "reads 'asrpt batch --task certify' results" in capsys.readouterr().err
