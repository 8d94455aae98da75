"""asrpt.plots and ``asrpt plot``: each figure draws exactly what its input says (checked from the
artists, not by eye), with the axis labels, scales and legends a reader needs, figures are
deterministic (byte for byte, as PNG, PDF and SVG) and never touch pyplot's or matplotlib's global
state, and every CLI kind writes a figure or fails with one line and exit status 2."""

import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import matplotlib
import pytest
from hypothesis import given, settings
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.colors import to_rgba
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


def test_gantt_axes_title_and_legend(small):
    """What a reviewer reads: a title naming the policy as words (not its spec), GPU numbers on
    the left, servers on the right, the time axis below the virtual machine."""
    inst, _ = small
    res = simulate(inst, 'a-srpt:adaptive="off"', label='a-srpt:adaptive="off"[hierarchy]')
    fig = plots.gantt(res, virtual=virtual_schedule(inst, predicted=True), cluster=inst.cluster)
    ax, vax = fig.axes
    total = sum(r.completion for r in res.records)
    assert ax.get_title() == f"a-srpt (adaptive=off, predictor hierarchy): 8 jobs on 8 GPUs (2 servers), sum C_j = {total}"
    fig.draw_without_rendering()
    assert ax.get_ylabel() == "GPU" and [t.get_text() for t in ax.get_yticklabels()] == [str(g) for g in range(8)]
    assert list(ax.get_yticks()) == [g + 0.5 for g in range(8)]               # the middle of each row
    (servers,) = ax.child_axes
    assert servers.get_ylabel() == "server" and [t.get_text() for t in servers.get_yticklabels()] == ["s0", "s1"]
    assert [line.get_ydata()[0] for line in ax.lines] == [4]                  # the line between the servers
    assert vax.get_xlabel() == "time (s)" and ax.get_xscale() == vax.get_xscale() == "linear"
    assert _legend(vax) == ["arrivals"]
    # drawn small (one column of a paper), the GPU numbers thin out instead of piling up
    (ax,) = plots.gantt(res, cluster=inst.cluster).axes
    ax.get_figure().set_size_inches(3.5, 1.2)
    ax.get_figure().draw_without_rendering()
    assert 1 < len(ax.get_yticks()) < 8 and ax.get_yticks()[0] == 0.5


def test_consecutive_jobs_get_clearly_different_colours(small):
    """tab20 in its own order gives jobs 0 and 1 two blues (distance 0.2 in RGB); alternating hues
    and tints, neighbours differ strongly, and the 20 colours are all used."""
    def distance(a, b):
        return sum((x - y) ** 2 for x, y in zip(a[:3], b[:3])) ** 0.5

    assert min(distance(plots._job_color(k), plots._job_color(k + 1)) for k in range(60)) > 0.4
    assert len({plots._job_color(k) for k in range(20)}) == 20
    inst, res = small
    bars = _polys(plots.gantt(res, cluster=inst.cluster).axes[0])[0]
    assert {tuple(c) for c in bars.get_facecolors()} == {plots._job_color(k) for k in range(len(res.records))}


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
    lines = _steps(fig.axes[0])
    assert [ln.get_label() for ln in lines] == [res.policy, "fifo"]
    for line, run in zip(lines, (res, fifo)):
        assert list(line.get_xdata()) == sorted(float(r.jct) for r in run.records)
        assert line.get_ydata()[-1] == 1.0
    assert fig.axes[0].get_xscale() == "linear"
    fig = plots.jct_cdf({"mine": [Fraction(1, 2), 2, None, 4.0]})
    assert list(fig.axes[0].lines[0].get_xdata()) == [0.5, 2.0, 4.0] and fig.axes[0].get_xscale() == "log"


def _steps(ax):
    """The step lines of a JCT figure (each run also has a line of markers, labelled ``_...``)."""
    return [ln for ln in ax.lines if not ln.get_label().startswith("_")]


def _legend(holder):
    return [t.get_text() for t in holder.get_legend().get_texts()] if hasattr(holder, "get_legend") else \
        [t.get_text() for t in holder.get_texts()]


def test_jct_cdf_axes_and_legend():
    fig = plots.jct_cdf({"a-srpt": [1, 2, 40], "fifo": [2, 3, 80], "none": []})
    ax = fig.axes[0]
    assert ax.get_xlabel() == "job completion time x (s)"
    assert ax.get_ylabel() == "fraction of jobs with JCT \u2264 x"
    assert (ax.get_xscale(), ax.get_yscale(), ax.get_ylim()) == ("log", "linear", (0, 1.01))
    assert _legend(ax) == ["a-srpt", "fifo", "none (no completed job)"]   # a run with no job still shows
    assert plots.jct_cdf({"a": [1, 2]}, log_x=False).axes[0].get_xscale() == "linear"


def test_jct_ccdf_says_what_it_draws_and_keeps_coinciding_runs_visible():
    """The complementary CDF of ``asrpt run`` reads "JCT > x"; eight runs with identical JCTs
    (the worst case for overlap) each keep their own dash pattern, marker and colour, their
    markers sit at different places, and the legend names all of them."""
    jcts = [1, 2, 3, 5, 8, 13, 21, 34, 55]
    names = [f"p{k}" for k in range(8)]
    fig = plots.jct_cdf({name: jcts for name in names}, complementary=True)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "fraction of jobs with JCT > x"
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert _legend(ax) == names
    steps = _steps(ax)
    assert [ln.get_label() for ln in steps] == names
    assert all(list(ln.get_xdata()) == jcts[:-1] for ln in steps)      # P(JCT > x) up to the last
    assert list(steps[0].get_ydata()) == pytest.approx([(9 - i - 1) / 9 for i in range(8)])
    dashes = [ln._unscaled_dash_pattern for ln in steps]    # (offset, on-off sequence or None)
    assert len(set(map(repr, dashes))) == 8
    assert len({tuple(to_rgba(ln.get_color())) for ln in steps}) == 8
    marks = [ln for ln in ax.lines if ln.get_label().startswith("_")]
    assert len({ln.get_marker() for ln in marks}) == 8
    xs = [x for ln in marks for x in ln.get_xdata()]
    assert len(xs) == len(set(xs)) and len(xs) >= 8 * 4            # staggered, never on top of each other
    handles = ax.get_legend().legend_handles                        # the legend draws each run's style
    assert [h._unscaled_dash_pattern for h in handles] == dashes
    assert [h.get_marker() for h in handles] == [ln.get_marker() for ln in marks]


def test_jct_bars_are_the_summary_numbers(small):
    inst, res = small
    runs = [res, simulate(inst, "fifo"), simulate(inst, "srsf")]
    fig = plots.jct_bars(runs, stats=("mean", "median", "p99"))
    assert len(fig.axes) == 3                                        # one panel per statistic
    for ax, stat in zip(fig.axes, ("mean", "median", "p99")):
        assert [p.get_height() for p in ax.patches] == pytest.approx([float(r.summary[f"{stat}_jct"]) for r in runs])
        assert [t.get_text() for t in ax.get_xticklabels()] == [r.policy for r in runs]
        assert [t.get_text() for t in ax.texts] == [plots._short(p.get_height()) for p in ax.patches]
        assert ax.get_ylabel() == f"{stat} JCT (s)" and ax.get_yscale() == "linear"
        assert ax.get_legend() is None                              # the labels say it all
    # each policy keeps its colour across the panels
    assert [p.get_facecolor() for p in fig.axes[0].patches] == [p.get_facecolor() for p in fig.axes[2].patches]


def test_jct_bars_give_the_mean_its_own_scale_and_a_sensible_size():
    """The mean is not squashed under a p99 50 times larger: each has its panel and y scale; eight
    policies fit 6.5 x 2.6 in; with log_y each panel is logarithmic from a power of 10."""
    data = {f"policy-{k}": [1, 1, 2, 2, 3, 500 + k] for k in range(8)}
    fig = plots.jct_bars(data)
    mean_ax, p99_ax = fig.axes
    assert tuple(fig.get_size_inches()) == (6.5, 2.6)
    assert mean_ax.get_ylim()[1] < 120 < p99_ax.get_ylim()[1]      # p99s ~500, means ~85
    assert min(p.get_height() for p in mean_ax.patches) > 0.5 * mean_ax.get_ylim()[1]
    log = plots.jct_bars(data, log_y=True, title="eight policies")
    assert [ax.get_yscale() for ax in log.axes] == ["log", "log"]
    assert [ax.get_ylim()[0] for ax in log.axes] == [10.0, 100.0]
    assert log.get_suptitle() == "eight policies"


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
    assert legend == ["certificate (ALG / LB)", "certificate fails", "ratio = bound (Theorem 1)"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("Theorem 1 bound  beta (1 + rho mu)", "empirical ratio")
    assert ax2.get_ylabel() == "ratio / bound (share of the bound used)"
    assert (ax2.get_xscale(), ax2.get_yscale(), ax2.get_ylim()) == ("linear", "linear", (0, 1.08))


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
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("distinct instances evaluated",
                                                   "best ALG / UB found (dashed: 1 + rho mu)")
    assert _legend(ax) == [f"{r.cell.name}: {float(r.ratio):.3g} in {r.evaluations} evals" for r in results]
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


def _dashes(artist):
    """An artist's unscaled dash pattern, normalised: (0.0, None) for a solid line."""
    pattern = artist._us_linestyles[0] if isinstance(artist, LineCollection) else artist._unscaled_dash_pattern
    offset, seq = pattern
    return float(offset), None if seq is None else tuple(float(x) for x in seq)


def test_placement_graph_legend_draws_each_edge_as_it_is_drawn(dnn_instance):
    """The legend once showed a thick solid red "cut" line while cut edges were thin and dashed:
    each legend entry now has exactly the colour, alpha and dash pattern of its edges; kinds of
    traffic differ by dash pattern (tp solid, pp dashed, dp dotted), and the node labels are
    explained."""
    from asrpt.dnn.parallel import worker_graph
    from asrpt.placement import place

    W = worker_graph(dnn_instance.job("j0"), "A100")       # 2 x 2 x 4: tp, pp and dp edges
    p = place(W, [8, 4, 4], method="ilp")
    fig = plots.placement_graph(W, p, free_gpus=[8, 4, 4])
    ax = fig.axes[0]
    legend = fig.legends[0]
    entries = dict(zip(_legend(legend), legend.legend_handles))
    kinds = {d["kind"] for *_, d in W.edges(data=True)}
    cut_kinds = {d["kind"] for u, v, d in W.edges(data=True) if p.assignment[u] != p.assignment[v]}
    inside_kinds = {d["kind"] for u, v, d in W.edges(data=True) if p.assignment[u] == p.assignment[v]}
    assert kinds == {"tp", "pp", "dp"} and cut_kinds and inside_kinds
    names = {"tp": "tensor-parallel (tp)", "pp": "pipeline (pp)", "dp": "data-parallel (dp)"}
    expected = [f"{names[k]}, inside a server" for k in sorted(inside_kinds)] + \
        [f"{names[k]}, cut (between servers)" for k in sorted(cut_kinds)] + ["stage 0", "stage 1"] + \
        ["node label 113: data-parallel\nreplica 1, pipeline stage 1, tensor rank 3"]
    assert list(entries) == expected
    arcs = [a for a in ax.patches if isinstance(a, FancyArrowPatch)]
    cut_styles = {_dashes(a) for a in arcs}
    for k in cut_kinds:
        handle = entries[f"{names[k]}, cut (between servers)"]
        drawn = [a for a in arcs if _dashes(a) == _dashes(handle)]
        assert drawn and all(a.get_edgecolor() == pytest.approx(to_rgba(handle.get_color(), handle.get_alpha()))
                             for a in drawn)
    assert len(cut_styles) == len(cut_kinds)                 # one dash pattern per kind of cut edge
    collections = [c for c in ax.collections if isinstance(c, LineCollection)]
    for k in inside_kinds:
        handle = entries[f"{names[k]}, inside a server"]
        assert any(_dashes(c) == _dashes(handle) and
                   tuple(c.get_edgecolor()[0]) == pytest.approx(to_rgba(handle.get_color(), handle.get_alpha()))
                   for c in collections)
    assert len({_dashes(c) for c in collections}) == len(inside_kinds)
    # tp, pp and dp look different wherever they are
    assert len({_dashes(entries[f"{names[k]}, cut (between servers)"]) for k in cut_kinds} |
               {_dashes(entries[f"{names[k]}, inside a server"]) for k in inside_kinds}) == len(kinds)


def test_placement_graph_trims_its_canvas_and_fits_a_column(dnn_instance):
    from asrpt.dnn.parallel import worker_graph
    from asrpt.placement import place

    W = worker_graph(dnn_instance.job("j0"), "A100")
    p = place(W, [8, 4, 4], method="ilp")
    fig = plots.placement_graph(W, p, free_gpus=[8, 4, 4])
    ax = fig.axes[0]
    fig.draw_without_rendering()
    # the equal aspect leaves no band of empty canvas: the axes use their whole box
    assert ax.get_position().height == pytest.approx(ax.get_position(original=True).height, rel=0.05)
    # every drawn thing is inside the limits, which hug the server boxes
    boxes = [b for b in ax.patches if not isinstance(b, FancyArrowPatch)]
    x0 = min(b.get_x() for b in boxes)
    x1 = max(b.get_x() + b.get_width() for b in boxes)
    assert ax.get_xlim() == pytest.approx((x0 - 0.15, x1 + 0.15), abs=0.1)
    arcs = [a for a in ax.patches if isinstance(a, FancyArrowPatch)]
    lowest = min(b.get_y() for b in boxes)
    for arc in arcs:
        start, control, end = arc.get_path().vertices[:3]     # a quadratic Bezier, in data units
        ys = [((1 - t) ** 2 * start + 2 * t * (1 - t) * control + t ** 2 * end)[1] for t in (0.25, 0.5, 0.75)]
        assert ax.get_ylim()[0] <= min(ys) and max(ys) <= ax.get_ylim()[1]
        lowest = min(lowest, *ys)
    assert arcs and ax.get_ylim()[0] >= lowest - 0.3                 # and the limits go no lower
    # one column of a paper: the drawing scales down, the legend goes below, labels that no
    # longer fit in the nodes are left out
    narrow = plots.placement_graph(W, p, free_gpus=[8, 4, 4], width=3.5)
    assert narrow.get_size_inches()[0] == 3.5
    narrow.draw_without_rendering()
    assert narrow.legends[0].get_window_extent().y1 <= narrow.axes[0].get_window_extent().y0 + 1
    assert not [t for t in narrow.axes[0].texts if t.get_text().isdigit()]
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
    assert legend[2:] == ["perfect", "x2, x1/2"]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("true work (iterations)", "predicted work")
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


_MAGIC = {"png": lambda b: b[:8] == b"\x89PNG\r\n\x1a\n", "pdf": lambda b: b[:5] == b"%PDF-",
          "svg": lambda b: b"<svg" in b[:600]}


def _media_box(data: bytes) -> list:
    """A one-page PDF's MediaBox, in points."""
    return [float(x) for x in re.search(rb"/MediaBox \[\s*([^\]]+)\]", data).group(1).split()]


@pytest.mark.parametrize("fmt", ["png", "pdf", "svg"])
def test_save_figure_writes_each_format_byte_for_byte_the_same(small, tmp_path, fmt):
    """The format comes from the suffix; saving a figure twice (and a second copy of it) gives
    the same bytes: no timestamps, no software versions, stable SVG ids, a settled layout."""
    inst, res = small
    fig = plots.jct_cdf([res, simulate(inst, "fifo")], complementary=True, title="t")
    paths = [plots.save_figure(fig, tmp_path / "sub" / f"a.{fmt}"), plots.save_figure(fig, tmp_path / f"b.{fmt}"),
             plots.save_figure(plots.jct_cdf([res, simulate(inst, "fifo")], complementary=True, title="t"),
                               tmp_path / f"c.{fmt.upper()}")]
    first, *others = [Path(p).read_bytes() for p in paths]
    assert _MAGIC[fmt](first) and all(o == first for o in others)
    for tag in (b"CreationDate", b"Producer", b"Creator", b"Software", b"<dc:date>", matplotlib.__version__.encode()):
        assert tag not in first


def test_save_figure_sizes_in_inches_and_leaves_the_figure_as_it_was(tmp_path):
    import matplotlib.image

    fig = plots.jct_cdf({"a": [1, 2, 4]})
    assert tuple(fig.get_size_inches()) == (6.4, 4.2)
    png = plots.save_figure(fig, tmp_path / "a.png", dpi=50, width=3.2)       # height keeps the aspect
    assert matplotlib.image.imread(png).shape[:2] == (105, 160)
    png = plots.save_figure(fig, tmp_path / "b.png", dpi=50, height=2.1)      # and so does the width
    assert matplotlib.image.imread(png).shape[:2] == (105, 160)
    pdf = plots.save_figure(fig, tmp_path / "c.pdf", width=3.5, height=2)
    assert _media_box(Path(pdf).read_bytes()) == [0, 0, 252, 144]
    assert tuple(fig.get_size_inches()) == (6.4, 4.2)
    assert fig.get_layout_engine() is not None                                 # still laid out


def test_save_figure_refuses_what_it_cannot_write(tmp_path):
    fig = plots.jct_cdf({"a": [1]})
    with pytest.raises(InvalidParameterError, match=r"^save_figure: cannot tell the format of '.*x\.jpg': "
                                                    r"the file must end in \.png, \.pdf or \.svg$"):
        plots.save_figure(fig, tmp_path / "x.jpg")
    with pytest.raises(InvalidParameterError, match="the file must end in"):
        plots.save_figure(fig, tmp_path / "noext")
    with pytest.raises(InvalidParameterError, match="'width' parameter of save_figure must be None or a float in \\[1, 50\\]"):
        plots.save_figure(fig, tmp_path / "x.png", width=0.5)
    with pytest.raises(InvalidParameterError, match="'format' parameter of save_figure"):
        plots.save_figure(fig, tmp_path / "x.png", format="eps")
    # save_png still writes a PNG whatever the suffix (``--plot FILE`` of other commands)
    assert _png(plots.save_png(fig, tmp_path / "plot.out"))
    assert not list(tmp_path.glob("x.*"))


def test_paper_style_is_scoped_and_embeds_truetype(tmp_path):
    before = dict(matplotlib.rcParams)
    with plots.paper_style():
        assert matplotlib.rcParams["font.size"] == 8 and matplotlib.rcParams["pdf.fonttype"] == 42
        fig = plots.jct_bars({"a-srpt": [1, 2, 30], "fifo": [2, 3, 50]}, title="paper")
        pdf = Path(plots.save_figure(fig, tmp_path / "a.pdf", width=plots.PAPER_WIDTH)).read_bytes()
        svg = Path(plots.save_figure(fig, tmp_path / "a.svg", width=plots.PAPER_WIDTH)).read_bytes()
    assert dict(matplotlib.rcParams) == before                     # nothing global changed
    assert fig.axes[0].yaxis.label.get_fontsize() == 8 and fig.axes[0].patches[0].get_linewidth() <= 0.5
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf           # TrueType, not Type 3
    assert _media_box(pdf)[2] == 252
    assert b">mean JCT (s)</text>" in svg                          # text stays text
    with pytest.raises(InvalidParameterError, match="'font_size' parameter of paper_style"):
        plots.paper_style(font_size=40)


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


@pytest.mark.parametrize("argv, match", [
    (["--out", "x.eps"], "--out must name a .png, .pdf or .svg file, got '"),
    (["--out", "x.pdf", "--width", "0.5"], "argument --width: '0.5' is not a size in inches between 1 and 50"),
    (["--out", "x.pdf", "--height", "abc"], "argument --height: 'abc' is not a size in inches"),
    (["--out", "x.pdf", "--style", "poster"], "argument --style: invalid choice: 'poster'"),
])
def test_cli_output_options_are_checked_first(tmp_path, capsys, argv, match):
    argv = [a if not a.startswith("x.") else str(tmp_path / a) for a in argv]
    try:
        code = main(["plot", "jct", SMALL, *argv])
    except SystemExit as exc:     # usage errors exit from argparse
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_cli_writes_a_paper_figure_as_pdf(tmp_path, capsys):
    """``--style paper`` gives one column (3.5 in = 252 pt) with TrueType fonts; ``--width``
    and ``--height`` set the size; the bytes are the same run after run."""
    out = tmp_path / "jct.pdf"
    argv = ["plot", "jct", SMALL, "--policy", "a-srpt,fifo", "--chart", "bars", "--log", "--style", "paper"]
    assert main([*argv, "--out", str(out)]) == 0
    data = out.read_bytes()
    assert capsys.readouterr().out.strip() == str(out)
    assert data[:5] == b"%PDF-" and _media_box(data)[2] == 252 and b"/FontFile2" in data
    assert main([*argv, "--out", str(tmp_path / "again.pdf")]) == 0
    assert (tmp_path / "again.pdf").read_bytes() == data
    assert main(["plot", "jct", SMALL, "--out", str(out), "--style", "paper", "--width", "7", "--height", "2.5"]) == 0
    assert _media_box(out.read_bytes()) == [0, 0, 504, 180]


def test_cli_sizes_pngs_and_svgs_in_inches(tmp_path, capsys, dnn_instance):
    import matplotlib.image

    png = tmp_path / "cdf.png"
    assert main(["plot", "jct", SMALL, "--out", str(png), "--width", "4", "--height", "3", "--dpi", "50"]) == 0
    assert matplotlib.image.imread(png).shape[:2] == (150, 200)
    dnn_path = tmp_path / "dnn.json"
    save_instance(dnn_instance, dnn_path)
    png = tmp_path / "placement.png"      # drawn for the column, not shrunk afterwards
    assert main(["plot", "placement", str(dnn_path), "--job", "j0", "--free", "8,4,4", "--method", "spread",
                 "--out", str(png), "--style", "paper", "--dpi", "100"]) == 0
    assert matplotlib.image.imread(png).shape[1] == 350
    svg = tmp_path / "gantt.svg"
    assert main(["plot", "gantt", SMALL, "--out", str(svg), "--style", "paper", "--width", "3.5"]) == 0
    assert b'width="252pt"' in svg.read_bytes()[:1000]


def test_cli_ratio_rejects_rows_of_another_task(tmp_path, capsys):
    path = tmp_path / "rows.jsonl"
    row = {"schema": "asrpt-batch-row/1", "path": "a.json", "hash": "sha256:0", "task": "srpt",
           "options": {}, "status": "ok", "error": None, "figures": {}, "wall_time": 0, "worker": "pid:1",
           "asrpt_version": "0"}
    path.write_text(json.dumps(row) + "\n")
    assert main(["plot", "ratio", str(path), "--out", str(tmp_path / "r.png")]) == 2
    assert "reads the results of 'asrpt batch --task compare-opt' or of '--task certify'" in capsys.readouterr().err


# --- policy_ratios and 'asrpt plot ratio' over compare-opt rows (issue 46) ------------------------

@pytest.fixture(scope="module")
def compare_rows(tmp_path_factory):
    """Real compare-opt rows: three small instances, three policies (a user's among them)."""
    from asrpt.batch import read_results, run_batch
    from asrpt.workloads.generators import uniform_instance

    d = tmp_path_factory.mktemp("compare")
    (d / "mine.py").write_text("from asrpt.policies import Decision, Policy\n\n\nclass Mine(Policy):\n"
                               "    def decide(self, view):\n        return Decision(list(view.waiting))\n")
    paths = []
    for seed in range(3):
        paths.append(str(d / f"i{seed}.json"))
        save_instance(uniform_instance(5, cluster="1x4", max_processing_time=5, seed=seed), paths[-1])
    out = d / "r.jsonl"
    run_batch(paths, "compare-opt", out=str(out), options={"policies": f"a-srpt,fifo,{d / 'mine.py'}:Mine",
                                                           "opt_time_limit": 5}, jobs=1)
    return out, read_results(out), str(d / "mine.py") + ":Mine"


def test_policy_ratios_draws_one_line_per_policy_from_the_rows(compare_rows):
    _, rows, mine = compare_rows
    fig = plots.policy_ratios(rows)
    ax = fig.axes[0]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert [lab.split("\n")[0] for lab in labels[:2]] == ["a-srpt", "fifo"] and labels[2].startswith("mine.py:Mine")
    assert all("(3 of 3 proven)" in lab for lab in labels)
    assert ax.get_xlabel() == "ALG / OPT (sum w_j C_j)" and ax.get_ylabel() == "fraction of instances \u2264 x"
    assert len({ln.get_color() for ln in ax.lines}) == 3              # each policy its own colour
    for line in ax.lines:                   # the ECDF ends at 1 at the policy's largest ratio, all >= 1
        xs, ys = line.get_xdata(), line.get_ydata()
        assert ys[-1] == 1 and min(xs) >= 1
    sub = plots.policy_ratios(rows, policies=["fifo"])
    assert [t.get_text().split("\n")[0] for t in sub.legends[0].get_texts()] == ["fifo"]
    with pytest.raises(InvalidParameterError, match="no ratios of 'sjf'"):
        plots.policy_ratios(rows, policies=["sjf"])


def test_policy_ratios_draws_the_upper_end_of_a_bracket_and_says_so():
    rec = [{"policy": "x", "ratio_to_opt": None, "ratio_to_opt_low": 0.9, "ratio_to_opt_high": 1.4},
           {"policy": "x", "ratio_to_opt": 1.2, "ratio_to_opt_low": 1.2, "ratio_to_opt_high": 1.2}]
    fig = plots.policy_ratios(rec)
    assert "upper end of the bracket" in fig.axes[0].get_xlabel()
    assert fig.legends[0].get_texts()[0].get_text() == "x\nmean 1.300, max 1.400 (1 of 2 proven)"


def test_plot_ratio_reads_compare_opt_results(compare_rows, tmp_path, capsys):
    out, _, _ = compare_rows
    assert main(["plot", "ratio", str(out), "--policy", "fifo,a-srpt", "--out", str(tmp_path / "r.pdf"),
                 "--style", "paper"]) == 0
    assert (tmp_path / "r.pdf").read_bytes()[:4] == b"%PDF"
    capsys.readouterr()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(out.read_text() + json.dumps({"hash": "h", "task": "certify", "options": {}, "status": "ok",
                                                    "figures": {}}) + "\n")
    assert main(["plot", "ratio", str(mixed), "--out", str(tmp_path / "m.png")]) == 2
    assert "one of them at a time" in capsys.readouterr().err


def test_wait_by_size_bars_are_each_class_mean_wait_on_a_log_axis():
    """Issue 45's figure (and notebook 04's): mean waiting time by GPU-hour class, one bar per
    policy, log scale with no wasted height, the legend below the axes and off the bars."""
    from asrpt.workloads.generators import generate_one

    inst = generate_one("heavy_tailed", seed=2, n_jobs=30, cluster="2x4")
    runs = [simulate(inst, p) for p in ("fifo", "srsf")]
    edges = (0.0005, 0.002)     # GPU-hours: the generator's jobs are seconds long
    fig = plots.wait_by_size(runs, edges=edges)
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert [t.split(" GPU-h")[0] for t in ticks] == ["< 0.0005", "0.0005-0.002", ">= 0.002"]
    assert sum(int(t.split("(")[1].split()[0]) for t in ticks) == 30
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "mean waiting time (s)"
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["fifo", "srsf"]
    fig.draw_without_rendering()
    assert legend.get_window_extent().y1 <= ax.get_window_extent().y0 + 1      # below the axes
    cuts = [3600 * e for e in edges]
    for k, res in enumerate(runs):          # each bar is its class's mean wait
        waits = {}
        for r in res.records:
            c = sum(float(r.gpus * r.processing_time) >= x for x in cuts)
            waits.setdefault(c, []).append(float(r.completion - r.arrival - r.processing_time))
        expected = sorted(sum(w) / len(w) for w in waits.values() if sum(w) > 0)
        heights = sorted(p.get_height() for p in ax.containers[k])
        assert heights == pytest.approx(expected)
    lo, hi = ax.get_ylim()
    positive = [p.get_height() for c in ax.containers for p in c]
    assert lo <= min(positive) and min(positive) < 10 * lo      # the axis starts a decade below the lowest bar
    with pytest.raises(InvalidParameterError, match="increasing"):
        plots.wait_by_size(runs, edges=(10, 1))


def test_the_plot_option_of_other_commands_writes_vector_files_too(tmp_path, capsys):
    """``--plot FILE`` of simulate, certify, place, worst-case and predict-eval: PDF or SVG by the
    name, PNG otherwise (as before)."""
    for name, magic in (("a.pdf", b"%PDF"), ("a.svg", b"<?xml"), ("a.png", b"\x89PNG"), ("a.out", b"\x89PNG")):
        assert main(["simulate", "instances/small-cluster.json", "--policy", "fifo",
                     "--plot", str(tmp_path / name)]) == 0
        assert (tmp_path / name).read_bytes()[:len(magic)] == magic, name
    assert main(["certify", "instances/worked-example.json", "--plot", str(tmp_path / "c.pdf")]) == 0
    assert (tmp_path / "c.pdf").read_bytes()[:4] == b"%PDF"
