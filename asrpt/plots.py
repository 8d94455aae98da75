"""Figures, each a function returning a matplotlib Figure (``asrpt plot`` writes them as PNG, PDF
or SVG).

- :func:`gantt`: a run's cluster GPUs over time, with the virtual single-machine SRPT schedule
  beside it;
- :func:`jct_cdf` and :func:`jct_bars`: job completion times across policies (CDF or
  complementary CDF; one panel of bars per statistic, mean and p99 by default);
- :func:`wait_by_size`: mean waiting time by job size (GPU-hour classes), one bar per policy;
- :func:`ratio_vs_bound`: empirical ratios against Theorem 1's bound ``beta (1 + rho mu)``
  across ``rho``, ``mu`` and ``beta`` (certificates, batch rows, worst cases);
- :func:`policy_ratios`: each policy's ratio to the offline optimum across instances (rows of
  the ``compare-opt`` batch task);
- :func:`worstcase_progress`: the best ratio of a worst-case search against the evaluations;
- :func:`placement_graph`: a worker graph drawn on its servers, edges crossing servers
  highlighted;
- :func:`prediction_scatter`: predicted against true work, log-log;
- :func:`save_figure` (PNG, PDF or SVG from the file's suffix, byte-reproducible, optionally
  resized) and :func:`save_png`;
- :func:`paper_style`: a context manager for figures going into a two-column paper (small fonts,
  thin lines, TrueType fonts embedded); build *and* save the figure inside it.

Plotting never changes results: the functions read run records, schedules, certificates,
placements and predictions only. They use matplotlib's object API (``matplotlib.figure.Figure``,
no global pyplot state), so they work headless (no display, no backend to select) and never
leak figures; styles are applied with ``matplotlib.rc_context``, never by changing
``matplotlib.rcParams``. Figures are deterministic: colours come from fixed colormaps in job or
policy order, layouts are computed (no force-directed layout), and nothing random is drawn.
Times may be ints, floats or Fractions; they are drawn as floats.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from fractions import Fraction
from numbers import Integral, Real

from matplotlib import colormaps, rc_context
from matplotlib.collections import PolyCollection
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import Locator

from ._validation import Interval, Options, validate_params
from .errors import InvalidParameterError

__all__ = ["gantt", "jct_cdf", "jct_bars", "wait_by_size", "ratio_vs_bound", "policy_ratios", "worstcase_progress",
           "placement_graph", "prediction_scatter", "save_figure", "save_png", "paper_style",
           "PAPER_WIDTH", "gpu_rows"]

_STATS = ("mean", "median", "p95", "p99", "max")
_PARAMS = ("rho", "mu", "beta", "bound")
_ARC = 0.18  # curvature of edges between servers in placement_graph
# Each JCT series gets its own dash pattern and marker as well as its colour, so series that
# coincide (two policies with identical JCTs) still show: the dashes interleave, the markers
# (at staggered positions) do not cover each other.
_DASHES = ("solid", (0, (5, 1.5)), (0, (1.2, 1.2)), (0, (6, 1.5, 1.2, 1.5)), (0, (2.5, 1.5)),
           (0, (8, 2, 1.2, 2, 1.2, 2)), (0, (1.2, 3)), (0, (11, 2.5)))
_MARKERS = ("o", "s", "^", "D", "v", "x", "+", "P", "*", "<", ">")
# tab20 pairs each of ten hues with its light tint (0, 1: two blues): jobs alternate a hue and
# the tint of the hue three further on, so consecutive jobs differ in hue and in lightness
_JOB_ORDER = tuple(x for i in range(10) for x in (2 * i, 2 * ((i + 3) % 10) + 1))
PAPER_WIDTH = 3.5  # inches: one column of a two-column paper


def _f(x) -> float:
    return float(x)


def _job_color(k: int):
    """The colour of the k-th job (tab20's hues and tints alternating, cycling every 20 jobs; the
    same job keeps its colour across axes, and consecutive jobs differ in hue and lightness)."""
    return colormaps["tab20"](_JOB_ORDER[k % 20])


def _series_color(k: int):
    return colormaps["tab10"](k % 10)


# ---------------------------------------------------------------------------------------------
# Gantt chart
# ---------------------------------------------------------------------------------------------

@validate_params({"records": [list, tuple], "server_gpus": [None, list, tuple]})
def gpu_rows(records: Sequence, server_gpus: Sequence[int] | None = None) -> tuple[list, tuple]:
    """Give every run segment concrete GPUs: the rows of :func:`gantt`.

    Records say how many GPUs of each server a segment held, not which ones. Per server, segments
    are taken in start order (ends before starts at equal times) and each gets the
    lowest-numbered GPUs free at its start, so no GPU ever holds two segments.

    Parameters
    ----------
    records : sequence of JobRecord
        A run's records (:attr:`asrpt.sim.SimResult.records`).
    server_gpus : sequence of int or None
        GPUs per server; None: per server, the most GPUs held at once in the records. A server
        found holding more than its count gets extra rows.

    Returns
    -------
    (bars, capacities)
        ``bars``: ``(job index, start, end, restart, server, gpu)`` for every GPU of every
        segment, times as floats; ``capacities``: the GPU rows per server.

    Raises
    ------
    InvalidParameterError
        ``records`` or ``server_gpus`` not a list or tuple.

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> bars, caps = gpu_rows(simulate(two_server_instance, "fifo").records, [4, 4])
    >>> caps, sorted({(b[4], b[5]) for b in bars if b[0] == 0})   # job "a": 2 GPUs of server 0
    ((4, 4), [(0, 0), (0, 1)])
    """
    per_server: dict[int, list] = {}
    for k, r in enumerate(records):
        for s in r.segments:
            for server, g in s.servers:
                per_server.setdefault(server, []).append(
                    (_f(s.start), _f(s.end), _f(s.restart), k, g))
    n_servers = max([len(server_gpus or ())] + [h + 1 for h in per_server])
    caps = [int(server_gpus[h]) if server_gpus is not None and h < len(server_gpus) else 0
            for h in range(n_servers)]
    bars = []
    for h in range(n_servers):
        segs = sorted(per_server.get(h, ()), key=lambda x: (x[0], x[3]))
        busy: list[tuple[float, list]] = []   # (end, gpus)
        # the GPUs released so far, and the lowest never used (every released one is below it):
        # the lowest free GPUs without a list of all of the server's (65,536 rows for a big node)
        free: list = []
        top = 0
        for start, end, restart, k, g in segs:
            keep = []
            for e, gs in busy:
                if e <= start:
                    free.extend(gs)
                else:
                    keep.append((e, gs))
            busy = keep
            free.sort()
            while len(free) < g:
                free.append(top)
                top += 1
            took, free = free[:g], free[g:]
            busy.append((end, took))
            bars.extend((k, start, end, restart, h, gpu) for gpu in took)
        caps[h] = max(caps[h], top)
    return bars, tuple(caps)


def _runs(gpus: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive runs of sorted row numbers: [(first, length), ...]."""
    out: list[tuple[int, int]] = []
    for g in sorted(gpus):
        if out and out[-1][0] + out[-1][1] == g:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((g, 1))
    return out


def _rect(x0: float, x1: float, y0: float, y1: float) -> list:
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


@validate_params({
    "result": "no_validation",
    "virtual": "no_validation",
    "cluster": "no_validation",
    "labels": [None, "boolean"],
    "time_range": [None, tuple, list],
    "title": [None, str],
})
def gantt(result, *, virtual=None, cluster=None, labels: bool | None = None,
          time_range: Sequence | None = None, title: str | None = None) -> Figure:
    """Gantt chart of a run: one row per cluster GPU over time, the virtual machine beside it.

    Every segment of every job is drawn on the GPUs it held (concrete GPUs are assigned by
    :func:`gpu_rows`: records say how many GPUs of each server a job held, not which), in the
    job's colour (consecutive jobs differ in hue); GPUs are numbered on the left, servers on the
    right, with a line between servers; the restart part of a segment after a preemption is hatched. With ``virtual``
    a second panel below, on the same time axis, shows the single-machine schedule (e.g.
    A-SRPT's virtual SRPT schedule), each piece in the colour of its job.

    Parameters
    ----------
    result : SimResult
        A finished run (:func:`asrpt.sim.simulate`).
    virtual : Schedule or None
        A single-machine schedule of the same jobs (:func:`asrpt.single.virtual_schedule`;
        ``predicted=True`` gives the one A-SRPT follows with static predictions); its pieces
        are matched to the run's jobs by id (``Schedule.ids``), else by index.
    cluster : Cluster, sequence of int or None
        The cluster (or GPUs per server) for the rows; None: inferred from the records (each
        server's most GPUs held at once).
    labels : bool or None
        Write job ids on the bars; None: when there are at most 40 jobs.
    time_range : (start, end) or None
        The time axis; None: first arrival to last completion.
    title : str or None
        Default: the run's label (``a-srpt:adaptive="off"`` reads ``a-srpt (adaptive=off)``),
        the job, GPU and server counts and ``sum C_j``.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.axes[0]`` the cluster; ``fig.axes[1]`` the virtual machine when given.

    Raises
    ------
    InvalidParameterError
        ``result`` is not a SimResult, ``virtual`` not a Schedule, or ``cluster`` not a
        Cluster or a sequence of GPU counts.

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> from asrpt.single import virtual_schedule
    >>> res = simulate(two_server_instance, "a-srpt")
    >>> fig = gantt(res, virtual=virtual_schedule(two_server_instance, predicted=True),
    ...             cluster=two_server_instance.cluster)
    >>> len(fig.axes), fig.axes[0].get_ylabel(), fig.axes[0].get_title()
    (2, 'GPU', 'a-srpt: 3 jobs on 8 GPUs (2 servers), sum C_j = 8')
    """
    from .instance import Cluster
    from .engine.records import SimResult
    from .single.srpt import Schedule

    if not isinstance(result, SimResult):
        raise InvalidParameterError(f"gantt: 'result' must be a SimResult, got {type(result).__name__}")
    if virtual is not None and not isinstance(virtual, Schedule):
        raise InvalidParameterError(f"gantt: 'virtual' must be a Schedule or None, got {type(virtual).__name__}")
    if isinstance(cluster, Cluster):
        server_gpus = list(cluster.server_gpus)
    elif cluster is None:
        server_gpus = None
    elif isinstance(cluster, (list, tuple)) and all(isinstance(g, Integral) and g >= 0 for g in cluster):
        server_gpus = [int(g) for g in cluster]
    else:
        raise InvalidParameterError(
            f"gantt: 'cluster' must be a Cluster, a sequence of GPU counts or None, got {cluster!r}")
    records = result.records
    n = len(records)
    bars, caps = gpu_rows(records, server_gpus)
    offsets = [sum(caps[:h]) for h in range(len(caps))]
    rows = sum(caps)
    if labels is None:
        labels = n <= 40
    if time_range is not None:
        if len(time_range) != 2:
            raise InvalidParameterError(f"gantt: 'time_range' must be (start, end), got {time_range!r}")
        t0, t1 = _f(time_range[0]), _f(time_range[1])
    else:
        ends = [_f(r.completion) for r in records if r.completion is not None]
        ends += [_f(s.end) for r in records for s in r.segments]
        t0 = min((_f(r.arrival) for r in records), default=0.0)
        t1 = max(ends, default=t0 + 1.0)
        if virtual is not None:
            t1 = max([t1] + [_f(c) for c in virtual.completion_times])
        if t1 <= t0:
            t1 = t0 + 1.0
    span = t1 - t0

    cluster_h = min(7.0, max(2.2, 0.16 * rows))
    height = cluster_h + (1.5 if virtual is not None else 0.0) + 0.9
    fig = Figure(figsize=(10.0, height), layout="constrained")
    if virtual is not None:
        ax, vax = fig.subplots(2, 1, sharex=True, height_ratios=[cluster_h, 1.1])
    else:
        ax, vax = fig.add_subplot(), None

    # the cluster: merge each segment's rows on one server into contiguous blocks
    blocks: dict[tuple, list[int]] = {}
    for k, start, end, restart, h, gpu in bars:
        blocks.setdefault((k, start, end, restart, h), []).append(offsets[h] + gpu)
    polys, colors, hatched = [], [], []
    texts = []
    for (k, start, end, restart, h), gpus in blocks.items():
        for first, length in _runs(gpus):
            y0, y1 = first + 0.06, first + length - 0.06
            polys.append(_rect(start, end, y0, y1))
            colors.append(_job_color(k))
            if restart:
                hatched.append(_rect(start, min(end, start + restart), y0, y1))
            if labels and (end - start) >= 0.03 * span:
                texts.append(((start + end) / 2, (y0 + y1) / 2, records[k].id))
    edge = "white" if len(polys) <= 400 else "none"
    ax.add_collection(PolyCollection(polys, facecolors=colors, edgecolors=edge, linewidths=0.6))
    if hatched:
        ax.add_collection(PolyCollection(hatched, facecolors="none", edgecolors="black", hatch="///",
                                         linewidths=0.0))
    for x, y, text in texts:
        ax.text(x, y, text, ha="center", va="center", fontsize=7, clip_on=True)
    for off in offsets[1:]:
        ax.axhline(off, color="0.35", linewidth=0.8)
    ax.set_ylim(rows, 0)
    ax.set_xlim(t0, t1)
    # left: the GPUs, numbered across the cluster (as many as fit); right: the servers
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_locator(_RowTicks(rows, 7))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v - 0.5:.0f}"))
    ax.tick_params(axis="y", labelsize=7)
    ax.set_ylabel("GPU")
    step = max(1, math.ceil(len(caps) / 24))
    servers = ax.secondary_yaxis("right")
    servers.set_yticks([offsets[h] + caps[h] / 2 for h in range(0, len(caps), step)],
                       [f"s{h}" for h in range(0, len(caps), step)], fontsize=7)
    servers.tick_params(axis="y", length=0)
    servers.set_ylabel("server", fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    if hatched:
        ax.legend(handles=[_hatch_handle()], loc="upper right", fontsize="small")
    done = [r.completion for r in records if r.completion is not None]
    total = sum(done, 0)
    ax.set_title(title if title is not None else
                 f"{_readable_label(result.label)}: {_count(n, 'job')} on {_count(rows, 'GPU')} "
                 f"({_count(len(caps), 'server')}), sum C_j = {_fmt(total)}", fontsize="medium", wrap=True)

    if vax is None:
        ax.set_xlabel("time (s)")
        return fig
    index = {r.id: k for k, r in enumerate(records)}
    vpolys, vcolors, vtexts = [], [], []
    for piece in virtual.pieces:
        j = piece.job
        job_id = virtual.ids[j] if virtual.ids is not None else None
        k = index.get(job_id, j if job_id is None else None)
        start, end, share = _f(piece.start), _f(piece.end), _f(piece.share)
        vpolys.append(_rect(start, end, 0.1, 0.1 + 0.8 * share))
        vcolors.append(_job_color(k) if k is not None else "0.6")
        if labels and (end - start) >= 0.03 * span:
            label = job_id if job_id is not None else str(j)
            vtexts.append(((start + end) / 2, 0.1 + 0.4 * share, label))
    vax.add_collection(PolyCollection(vpolys, facecolors=vcolors, edgecolors="white", linewidths=0.6))
    for x, y, text in vtexts:
        vax.text(x, y, text, ha="center", va="center", fontsize=7, clip_on=True)
    if virtual.n <= 60:
        arrivals = [_f(r) for r in virtual.releases]
        vax.plot(arrivals, [0.02] * len(arrivals), linestyle="none", marker="^", markersize=4,
                 color="black", label="arrivals")
        vax.legend(loc="upper right", fontsize="small")
    vax.set_ylim(0, 1)
    vax.set_yticks([])
    vax.set_ylabel(f"virtual\n{virtual.rule.upper()}", fontsize="small")
    vax.set_xlabel("time (s)")
    vax.grid(True, axis="x", alpha=0.3)
    vax.set_title(f"virtual single machine ({virtual.rule}), sum C~_j = "
                  f"{_fmt(virtual.total_completion_time)}", fontsize="small", wrap=True)
    return fig


class _RowTicks(Locator):
    """Ticks at the middle of GPU rows 0, k, 2k, ... with the smallest k in 1, 2, 4, 5, 8, 10,
    16, 20, 25, ... whose labels do not overlap at the axes' height when drawn (so a Gantt chart
    saved smaller, e.g. for a paper, thins its labels instead of piling them up)."""

    _STEPS = (1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 40, 50, 64)

    def __init__(self, rows: int, size: float = 7.0):
        self.rows, self.size = rows, size      # size: the labels' points

    def __call__(self):
        ax = self.axis.axes
        points = ax.bbox.height * 72 / ax.get_figure(root=True).dpi
        fit = max(1, int(points / (1.5 * self.size)))
        step = next((s for s in self._STEPS if self.rows <= fit * s),
                    64 * math.ceil(self.rows / (64 * fit)))
        return [g + 0.5 for g in range(0, self.rows, step)]

    def tick_values(self, vmin, vmax):
        return self()


def _readable_label(label: str) -> str:
    """A run's label for a title: ``a-srpt:adaptive="off"[hierarchy]`` reads
    ``a-srpt (adaptive=off, predictor hierarchy)``; anything that is not a spec stays as it is.

    >>> _readable_label('a-srpt:adaptive="off":kappa=4[hierarchy]')
    'a-srpt (adaptive=off, kappa=4, predictor hierarchy)'
    >>> _readable_label("fifo"), _readable_label("my run")
    ('fifo', 'my run')
    """
    from .registry import parse_spec

    spec, predictor = label, None
    if label.endswith("]") and "[" in label:
        spec, predictor = label[:-1].rsplit("[", 1)
    try:
        name, params = parse_spec(spec)
    except Exception:  # not a spec: a caller's own label
        return label
    parts = [f"{k}={v}" for k, v in params.items()]
    if predictor:
        parts.append(f"predictor {predictor}")
    return f"{name} ({', '.join(parts)})" if parts else name


def _count(k: int, what: str) -> str:
    return f"{k} {what}" + ("" if k == 1 else "s")


def _hatch_handle():
    from matplotlib.patches import Patch

    return Patch(facecolor="white", edgecolor="black", hatch="///", label="restart")


def _fmt(x) -> str:
    if isinstance(x, Fraction) and x.denominator != 1:
        return f"{float(x):.6g}"
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


# ---------------------------------------------------------------------------------------------
# Job completion times
# ---------------------------------------------------------------------------------------------

def _jct_series(results, who: str) -> list[tuple[str, list]]:
    """[(label, sorted JCTs)] from SimResults or a mapping label -> JCTs."""
    if isinstance(results, Mapping):
        items = list(results.items())
        out = []
        for label, values in items:
            vals = sorted(_f(v) for v in values if v is not None)
            out.append((str(label), vals))
        return out
    if isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise InvalidParameterError(
            f"{who}: 'results' must be a sequence of SimResult or a mapping label -> JCTs, "
            f"got {type(results).__name__}")
    out = []
    for res in results:
        if not hasattr(res, "records") or not hasattr(res, "policy"):
            raise InvalidParameterError(f"{who}: every result must be a SimResult, got {type(res).__name__}")
        out.append((res.label, sorted(_f(r.jct) for r in res.records if r.jct is not None)))
    return out


@validate_params({"results": "no_validation", "log_x": ["boolean"], "complementary": ["boolean"],
                  "title": [None, str]})
def jct_cdf(results, *, log_x: bool = True, complementary: bool = False, title: str | None = None) -> Figure:
    """Empirical CDF of job completion times (JCT = C_j - a_j), one line per run.

    Each run has its own colour, dash pattern and marker (six markers per line, staggered from
    run to run along the time axis), so runs with identical JCTs do not hide each other; a run
    with no completed job still gets its legend entry.

    Parameters
    ----------
    results : sequence of SimResult, or mapping label -> sequence of JCTs
        Runs (one line each, labelled by policy), or JCTs read elsewhere (e.g. per-job CSVs).
    log_x : bool
        Logarithmic time axis (JCTs span orders of magnitude in real traces).
    complementary : bool
        Draw the fraction of jobs with a JCT above each value x (1 - CDF, the complementary CDF)
        on a logarithmic axis, so the tail that decides the mean is visible instead of squeezed
        against 1; the y axis then reads "fraction of jobs with JCT > x".
    title : str or None

    Returns
    -------
    matplotlib.figure.Figure
        Per run, a step line labelled with the run's label and a line of its markers (labelled
        ``_LABEL markers``, out of the legend).

    Raises
    ------
    InvalidParameterError
        ``results`` is neither.

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> fig = jct_cdf([simulate(two_server_instance, p) for p in ("a-srpt", "fifo")])
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['a-srpt', 'fifo']
    >>> [ln.get_label() for ln in jct_cdf({"mine": [1, 2, 4]}).axes[0].lines]  # the steps, the markers
    ['mine', '_mine markers']
    >>> ax = jct_cdf({"mine": [1, 2, 4]}, complementary=True).axes[0]
    >>> ax.get_yscale(), ax.get_ylabel()
    ('log', 'fraction of jobs with JCT > x')
    """
    series = _jct_series(results, "jct_cdf")
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.add_subplot()
    log_x = log_x and any(jcts and jcts[0] > 0 for _, jcts in series)
    drawn = []                                    # (k, label, xs, ys) of every series with a line
    for k, (label, jcts) in enumerate(series):
        n = len(jcts)
        if not n:
            drawn.append((k, f"{label} (no completed job)", [], []))
        elif complementary:   # P(JCT > x); the last point (0) cannot be drawn on a log axis
            drawn.append((k, label, jcts[:-1] or jcts, [(n - i - 1) / n for i in range(n - 1)] or [1.0]))
        else:
            drawn.append((k, label, jcts, [(i + 1) / n for i in range(n)]))
    xs_all = [x for *_, xs, _ in drawn for x in xs if x > 0 or not log_x]
    handles = []
    for k, label, xs, ys in drawn:
        style = _series_style(k)
        if xs:
            ax.step(xs, ys, where="post", color=style["color"], linestyle=style["linestyle"],
                    linewidth=style["linewidth"], label=label)
            mx, my = _staggered_marks(xs, ys, k, len(drawn), min(xs_all), max(xs_all), log_x)
            ax.plot(mx, my, linestyle="none", marker=style["marker"], color=style["color"],
                    markersize=style["markersize"], markerfacecolor="none", label=f"_{label} markers")
        handles.append(Line2D([], [], label=label, **style, markerfacecolor="none"))
    if log_x:
        ax.set_xscale("log")
        if xs_all and max(xs_all) < 100 * min(xs_all):
            _plain_log(ax.xaxis)
    ax.set_xlabel("job completion time x (s)")
    if complementary:
        ax.set_ylabel("fraction of jobs with JCT > x")
        ax.set_yscale("log")
        if max((len(xs) for *_, xs, _ in drawn), default=0) < 50:
            _plain_log(ax.yaxis)
    else:
        ax.set_ylabel("fraction of jobs with JCT \u2264 x")
        ax.set_ylim(0, 1.01)
    ax.grid(True, alpha=0.3)
    ax.legend(handles=handles, loc="lower left" if complementary else "lower right", fontsize="small",
              handlelength=3.5)
    if title:
        ax.set_title(title, wrap=True)
    return fig


def _series_style(k: int) -> dict:
    """Colour, dash pattern and marker of the k-th JCT series: for up to 8 series each differs
    from the others in all three, beyond that in at least two. Sizes follow the style in force
    (:func:`paper_style` draws thinner)."""
    from matplotlib import rcParams   # read, never written

    return {"color": _series_color(k), "linestyle": _DASHES[k % len(_DASHES)],
            "marker": _MARKERS[k % len(_MARKERS)], "markersize": 0.75 * rcParams["lines.markersize"],
            "linewidth": 0.87 * rcParams["lines.linewidth"]}


def _staggered_marks(xs: list, ys: list, k: int, n: int, lo: float, hi: float, log_x: bool,
                     per_line: int = 6) -> tuple[list, list]:
    """Marker positions on the k-th of n step lines (``where="post"``): ``per_line`` evenly spaced
    across [lo, hi] (in log space on a log axis), shifted by k / n of a spacing, so the markers
    of lines that coincide fall side by side instead of on top of each other."""
    import bisect

    if hi <= lo:
        return [xs[0]], [ys[0]]
    a, b = (math.log(lo), math.log(hi)) if log_x else (lo, hi)
    mx, my = [], []
    for i in range(per_line):
        t = a + (b - a) * (i + (k + 0.5) / n) / per_line
        x = math.exp(t) if log_x else t
        j = bisect.bisect_right(xs, x) - 1
        if 0 <= j and x <= xs[-1]:
            mx.append(x)
            my.append(ys[j])
    return mx, my


def _short(x: float) -> str:
    """A bar label: ``1,951`` or ``3.25``."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _stat(jcts: list, name: str) -> float | None:
    from .engine.metrics import percentile

    if not jcts:
        return None
    if name == "mean":
        return math.fsum(jcts) / len(jcts)
    if name == "max":
        return jcts[-1]
    return _f(percentile(jcts, {"median": 50, "p95": 95, "p99": 99}[name]))


@validate_params({"results": "no_validation", "stats": [tuple, list], "log_y": ["boolean"],
                  "title": [None, str]})
def jct_bars(results, *, stats: Sequence[str] = ("mean", "p99"), log_y: bool = False,
             title: str | None = None) -> Figure:
    """Bars of JCT statistics per policy, one panel per statistic: by default the mean and the
    99th percentile.

    Each panel has its own value axis, so a mean is not squashed under a p99 ten times larger;
    each policy keeps its colour across panels, and each bar carries its value. Percentiles are
    nearest-rank, as in the runs' summaries (:func:`asrpt.engine.metrics.percentile`), so the
    bars show the numbers of ``asrpt simulate``'s table. The figure is 6.5 x 2.6 in for up to
    8 policies and 3 statistics (wider beyond).

    Parameters
    ----------
    results : sequence of SimResult, or mapping label -> sequence of JCTs
    stats : sequence of {"mean", "median", "p95", "p99", "max"}
        One panel per statistic, in this order, one bar per policy in each.
    log_y : bool
        Logarithmic value axes.
    title : str or None
        The figure's title (above the panels).

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.axes[i]`` the panel of ``stats[i]``.

    Raises
    ------
    InvalidParameterError
        An unknown statistic, or ``results`` of the wrong kind.

    Examples
    --------
    >>> fig = jct_bars({"a-srpt": [1, 2, 3, 10], "fifo": [2, 4, 6, 30]})
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['mean JCT (s)', 'p99 JCT (s)']
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['a-srpt', 'fifo']
    >>> [[float(p.get_height()) for p in ax.patches] for ax in fig.axes]
    [[4.0, 10.5], [10.0, 30.0]]
    """
    bad = [s for s in stats if s not in _STATS]
    if bad or not stats:
        raise InvalidParameterError(
            f"jct_bars: 'stats' must list some of {', '.join(_STATS)}; got {list(stats)!r}")
    series = _jct_series(results, "jct_bars")
    n = len(series)
    labels = [label for label, _ in series]
    panel = max(2.1, 0.3 * n + 0.6)             # inches per panel
    fig = Figure(figsize=(max(6.5, panel * len(stats)), 2.6), layout="constrained")
    axes = fig.subplots(1, len(stats), squeeze=False)[0]
    slot = (panel - 0.6) / max(n, 1)            # inches per bar
    tilt = n > 3 or max((len(x) for x in labels), default=0) * 0.075 > slot
    for ax, name in zip(axes, stats):
        xs, hs = [], []
        for p, (_, jcts) in enumerate(series):
            value = _stat(jcts, name)
            if value is not None:
                xs.append(p)
                hs.append(value)
        texts = [_short(h) for h in hs]
        # a value label wider than its bar's slot stands upright (and with many bars, so it
        # still fits when the figure is drawn narrower, e.g. one column of a paper)
        upright = n > 4 or max((len(t) for t in texts), default=0) * 0.055 > slot
        bars = ax.bar(xs, hs, width=0.7, color=[_series_color(p) for p in xs])
        ax.bar_label(bars, labels=texts, fontsize=6.5, padding=1.5, rotation=90 if upright else 0)
        ax.set_xticks(range(n), labels, rotation=(30 if n <= 5 else 60) if tilt else 0,
                      ha="right" if tilt else "center", rotation_mode="anchor" if tilt else "default")
        ax.set_xlim(-0.6, n - 0.4)
        ax.set_ylabel(f"{name} JCT (s)")
        ax.margins(y=0.3 if upright else 0.15)
        if log_y:       # bars grow from the power of 10 below the smallest one
            ax.set_yscale("log")
            positive = [h for h in hs if h > 0]
            if positive:
                lo, hi = min(positive), max(positive)
                bottom = 10.0 ** math.floor(math.log10(lo))
                ax.set_ylim(bottom, hi * (hi / bottom) ** (0.3 if upright else 0.15))
                if hi / bottom <= 100:
                    _plain_log(ax.yaxis)
        ax.spines[["top", "right"]].set_visible(False)   # value labels stand free above the bars
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    if title:
        fig.suptitle(title, wrap=True)
    return fig


@validate_params({"results": [list, tuple], "edges": [list, tuple], "log_y": ["boolean"], "title": [None, str]})
def wait_by_size(results, *, edges: Sequence[Real] = (1, 10, 100), log_y: bool = True,
                 title: str | None = None) -> Figure:
    """Mean waiting time by job size, one bar per policy in each size class: where a policy
    makes jobs wait (the small jobs behind large ones, or the large ones behind a stream).

    A job's waiting time is its completion minus its arrival minus its best processing time
    (time queued, preempted, or slowed by its placement); its size is its GPU-time
    ``g_j P*_j`` in GPU-hours, classed by ``edges``.

    Parameters
    ----------
    results : sequence of SimResult
        Runs on the same instance (one bar each per class, in this order).
    edges : sequence of numbers
        Increasing class edges in GPU-hours (default 1, 10, 100: < 1, 1-10, 10-100, >= 100).
    log_y : bool
        Logarithmic waiting-time axis (default; a class whose mean wait is 0 gets no bar and a
        "0" label; the axis spans six decades at most below the longest bar, so a mean of a
        float's rounding size, 1e-13 s, draws no bar); False: linear.
    title : str or None

    Returns
    -------
    matplotlib.figure.Figure
        One axes; the class labels carry their job counts; the figure's legend, below the
        axes, names the policies.

    Raises
    ------
    InvalidParameterError
        No runs, runs of different instances (job counts), or edges that do not increase.

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> fig = wait_by_size([simulate(two_server_instance, p) for p in ("fifo", "srsf")], edges=(1,))
    >>> ax = fig.axes[0]
    >>> [t.get_text() for t in ax.get_xticklabels()], ax.get_yscale()
    (['< 1 GPU-h\\n(3 jobs)', '>= 1 GPU-h\\n(0 jobs)'], 'log')
    >>> [t.get_text() for t in fig.legends[0].get_texts()]
    ['fifo', 'srsf']
    """
    runs = list(results)
    if not runs or not all(hasattr(r, "records") and hasattr(r, "label") for r in runs):
        raise InvalidParameterError("wait_by_size: 'results' must be a non-empty sequence of SimResult")
    if len({len(r.records) for r in runs}) > 1:
        raise InvalidParameterError("wait_by_size: the runs hold different numbers of jobs (not one instance)")
    from .engine.metrics import size_classes

    classes = [size_classes(res.records, edges) for res in runs]     # (the edges checked here)
    names = classes[0][0]
    counts = [classes[0][1].count(c) for c in range(len(names))]
    fig = Figure(figsize=(6.5, 3.0), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / len(runs)
    means = []
    for k, res in enumerate(runs):
        waits = [[] for _ in names]
        for r, c in zip(res.records, classes[k][1]):
            if r.completion is not None:
                waits[c].append(_f(r.completion - r.arrival - r.processing_time))
        row = [sum(w) / len(w) if w else None for w in waits]
        means.append(row)
        xs = [c + (k - (len(runs) - 1) / 2) * width for c in range(len(names))]
        shown = [(x, m) for x, m in zip(xs, row) if m is not None and (m > 0 or not log_y)]
        bars = ax.bar([x for x, _ in shown], [m for _, m in shown], width * 0.92, color=_series_color(k),
                      label=res.label)
        if len(runs) <= 6:
            ax.bar_label(bars, labels=[_short(m) for _, m in shown], fontsize=6, padding=1,
                         rotation=90 if len(runs) > 3 else 0)
        for x, m in zip(xs, row):
            if m is not None and m <= 0 and log_y:
                ax.annotate("0", (x, 0), xycoords=("data", "axes fraction"), ha="center", va="bottom", fontsize=6)
    ax.set_xticks(range(len(names)), [f"{n} GPU-h\n({c} jobs)" for n, c in zip(names, counts)])
    ax.set_ylabel("mean waiting time (s)")
    positive = [m for row in means for m in row if m is not None and m > 0]
    if log_y:
        ax.set_yscale("log")
        if positive:    # (six decades at most: a mean of 1e-13 s is a float's rounding, not a wait)
            hi = max(positive)
            lo = max(min(positive), hi * 1e-6)
            bottom = 10.0 ** math.floor(math.log10(lo))
            ax.set_ylim(bottom, hi * (hi / bottom) ** 0.25)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    longest = max(len(r.label) for r in runs)   # as many columns as fit the width (long labels: fewer)
    fig.legend(loc="outside lower center", ncols=max(1, min(len(runs), 5, 90 // (longest + 6))), fontsize="small",
               frameon=False)
    if title:
        ax.set_title(title, fontsize="medium")
    return fig


# ---------------------------------------------------------------------------------------------
# Theorem 1: ratios against the bound, worst-case search progress
# ---------------------------------------------------------------------------------------------

def _is_worst_case(item) -> bool:
    return hasattr(item, "cell") and hasattr(item, "history") and hasattr(item, "cell_bound")


def _ratio_point(item, k: int) -> dict | None:
    """Normalise one input of :func:`ratio_vs_bound`; None for a batch row that is not ok."""
    if _is_worst_case(item):
        inst = item.instance
        m = inst.cluster.total_gpus
        rho = Fraction(m, m - max(j.gpus for j in inst.jobs) + 1)
        bound = Fraction(item.bound)
        return {"ratio": _f(item.ratio), "bound": _f(bound), "rho": _f(rho),
                "mu": _f((bound - 1) / rho), "beta": 1.0, "holds": bool(item.certificate_holds),
                "kind": "worst case (ALG / OPT)" if item.opt_exact else "worst case (ALG / UB)"}
    if hasattr(item, "ratio_to_lb") and hasattr(item, "ratio_bound"):
        fig = {k2: getattr(item, k2) for k2 in ("ratio_to_lb", "ratio_bound", "rho", "mu", "beta", "holds")}
    elif isinstance(item, Mapping):
        fig = item
        if "figures" in item:
            if item.get("status", "ok") != "ok" or item["figures"] is None:
                return None
            if item.get("task", "certify") != "certify":
                raise InvalidParameterError(
                    f"ratio_vs_bound: point {k} is a {item.get('task')!r} row; rows of "
                    "'asrpt batch --task certify' are needed")
            fig = item["figures"]
    else:
        raise InvalidParameterError(
            f"ratio_vs_bound: point {k} must be a Certificate, a WorstCase or a certify row/dict, "
            f"got {type(item).__name__}")
    missing = [key for key in ("ratio_to_lb", "ratio_bound", "rho", "mu", "beta") if key not in fig]
    if missing:
        raise InvalidParameterError(f"ratio_vs_bound: point {k} has no {', '.join(missing)}")
    if fig.get("ratio_to_opt") is not None:  # the optimum was proven: the true ratio
        ratio, kind = fig["ratio_to_opt"], "certificate (ALG / OPT)"
    elif fig.get("ratio_to_opt_high") is not None:  # a bracket: its upper end, the certified side
        ratio, kind = fig["ratio_to_opt_high"], "certificate (ALG / LB)"
    else:
        ratio, kind = fig["ratio_to_lb"], "certificate (ALG / LB)"
    return {"ratio": _f(ratio), "bound": _f(fig["ratio_bound"]), "rho": _f(fig["rho"]),
            "mu": _f(fig["mu"]), "beta": _f(fig["beta"]), "holds": bool(fig.get("holds", True)),
            "kind": kind}


def _plain_log(axis) -> None:
    """Label a logarithmic axis 1, 2, 5, 10, 20, ... in plain numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _norm_for(values: list):
    lo, hi = min(values), max(values)
    if lo > 0 and hi / lo > 10:
        return LogNorm(lo, hi)
    if hi == lo:
        return Normalize(lo - 0.5, hi + 0.5)
    return Normalize(lo, hi)


@validate_params({"points": "no_validation", "color": [Options(str, set(_PARAMS))],
                  "x": [Options(str, set(_PARAMS))], "title": [None, str]})
def ratio_vs_bound(points, *, color: str = "rho", x: str = "mu", title: str | None = None) -> Figure:
    """Empirical ratios against Theorem 1's bound ``beta (1 + rho mu)``, across rho, mu and beta.

    Left: each instance's ratio against its bound, log-log, with the line ``ratio = bound`` (a
    point above it would refute the theorem). Right: the share of the bound the ratio uses,
    ``ratio / bound``, against ``x``. Colour shows ``color``. Where the row carries the proven
    optimum (``ratio_to_opt``, from ``asrpt batch --task certify``) the point is the true
    ``ALG / OPT`` (squares; diamonds for worst cases); otherwise certificates give ALG over a
    lower bound, an *upper* bound on ALG / OPT (circles), and worst cases ``ALG / UB``, a
    *lower* bound on it (triangles). A run whose certificate fails is a red cross.

    Parameters
    ----------
    points : sequence
        :class:`~asrpt.theory.Certificate` objects, rows of ``asrpt batch --task certify``
        (:func:`asrpt.batch.read_results`; rows that are not ok are skipped), their ``figures``
        dicts, or :class:`~asrpt.theory.WorstCase` results (rho from the instance, beta = 1).
    color, x : {"rho", "mu", "beta", "bound"}
        The quantity shown by colour, and on the right panel's horizontal axis.
    title : str or None

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InvalidParameterError
        A point of another kind, a row of another task, or no point to draw.

    Examples
    --------
    >>> from asrpt.theory import certify_instance
    >>> cert = certify_instance(two_server_instance)
    >>> fig = ratio_vs_bound([cert, {"ratio_to_lb": 1.5, "ratio_bound": 9, "rho": 4, "mu": 2,
    ...                              "beta": 1, "holds": True}])
    >>> len(fig.axes[0].collections[0].get_offsets())
    2
    """
    if isinstance(points, (str, bytes, Mapping)) or not isinstance(points, Sequence):
        raise InvalidParameterError(
            f"ratio_vs_bound: 'points' must be a sequence, got {type(points).__name__}")
    pts = [p for p in (_ratio_point(item, k) for k, item in enumerate(points)) if p is not None]
    if not pts:
        raise InvalidParameterError("ratio_vs_bound: no point to draw (no ok row, certificate or worst case)")
    fig = Figure(figsize=(11.0, 4.4), layout="constrained")
    ax, ax2 = fig.subplots(1, 2)
    cvals = [p[color] for p in pts]
    norm = _norm_for(cvals)
    cmap = colormaps["viridis"]
    kinds = sorted({p["kind"] for p in pts})
    markers = {"certificate (ALG / LB)": "o", "certificate (ALG / OPT)": "s",
               "worst case (ALG / UB)": "^", "worst case (ALG / OPT)": "D"}
    scatter = None
    for kind in kinds:
        sel = [p for p in pts if p["kind"] == kind and p["holds"]]
        if sel:
            s1 = ax.scatter([p["bound"] for p in sel], [p["ratio"] for p in sel],
                            c=[p[color] for p in sel], cmap=cmap, norm=norm, s=28, alpha=0.8,
                            marker=markers[kind], edgecolors="none")
            ax2.scatter([p[x] for p in sel], [p["ratio"] / p["bound"] for p in sel],
                        c=[p[color] for p in sel], cmap=cmap, norm=norm, s=28, alpha=0.8,
                        marker=markers[kind], edgecolors="none")
            scatter = scatter or s1
    failed = [p for p in pts if not p["holds"]]
    if failed:
        ax.scatter([p["bound"] for p in failed], [p["ratio"] for p in failed], marker="x", s=40,
                   color="red")
        ax2.scatter([p[x] for p in failed], [p["ratio"] / p["bound"] for p in failed], marker="x",
                    s=40, color="red")
    lo = min(min(p["bound"] for p in pts), min(p["ratio"] for p in pts), 1.0)
    hi = max(max(p["bound"] for p in pts), max(p["ratio"] for p in pts)) * 1.3
    ax.plot([lo, hi], [lo, hi], color="black", linestyle="--", linewidth=1)
    ax.axhline(1, color="0.5", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_log(ax.xaxis)
    _plain_log(ax.yaxis)
    ax.set_xlim(lo / 1.1, hi)
    ax.set_xlabel("Theorem 1 bound  beta (1 + rho mu)")
    ax.set_ylabel("empirical ratio")
    ax.grid(True, which="both", alpha=0.25)
    handles = [Line2D([], [], marker=markers[kind], linestyle="none", color="0.45", label=kind)
               for kind in kinds]
    if failed:
        handles.append(Line2D([], [], marker="x", linestyle="none", color="red",
                              label="certificate fails"))
    handles.append(Line2D([], [], color="black", linestyle="--", label="ratio = bound (Theorem 1)"))
    ax.legend(handles=handles, loc="upper left", fontsize="small")
    ax.set_title(f"{len(pts)} instances: ratio against bound", fontsize="medium")
    ax2.axhline(1, color="black", linestyle="--", linewidth=1)
    xs = [p[x] for p in pts]
    if min(xs) > 0 and max(xs) / min(xs) > 10:
        ax2.set_xscale("log")
        _plain_log(ax2.xaxis)
    ax2.set_ylim(0, 1.08)
    ax2.set_xlabel(x)
    ax2.set_ylabel("ratio / bound (share of the bound used)")
    ax2.grid(True, alpha=0.25)
    ax2.set_title(f"share of the bound used, against {x}", fontsize="medium")
    if scatter is None:
        scatter = ax.scatter([], [], c=[], cmap=cmap, norm=norm)
    bar = fig.colorbar(scatter, ax=[ax, ax2], label=color, shrink=0.9)
    if isinstance(norm, LogNorm):
        _plain_log(bar.ax.yaxis)
    if title:
        fig.suptitle(title)
    return fig


def _short_spec(spec: str) -> str:
    """A policy spec for a legend: a user's ``dir/file.py:Class...`` without its directories."""
    head, sep, rest = spec.partition(".py:")
    return os.path.basename(head) + sep + rest if sep else spec


@validate_params({"rows": [list, tuple], "policies": [None, list, tuple], "title": [None, str]})
def policy_ratios(rows, *, policies: Sequence[str] | None = None, title: str | None = None) -> Figure:
    """Each policy's ratio to the offline optimum across instances: the fraction of instances on
    which ``ALG / OPT`` is at most x, one step line per policy (the ``compare-opt`` batch task).

    Where OPT is proven the ratio is exact; elsewhere the upper end of its bracket,
    ``ALG / lower bound``, is drawn (never flattering); the legend says, per policy, the mean
    and the largest ratio and on how many instances OPT was proven.

    Parameters
    ----------
    rows : sequence of dict
        ``compare-opt`` result rows (as :func:`asrpt.batch.read_results` gives them) or their
        flat records (:func:`asrpt.batch.ratio_rows`).
    policies : sequence of str, optional
        The policies to draw, in this order (default: every policy, in the rows' order).
    title : str or None

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InvalidParameterError
        No ``compare-opt`` record, or a policy the rows do not hold.

    Examples
    --------
    >>> rec = [{"policy": p, "ratio_to_opt": r, "ratio_to_opt_low": r, "ratio_to_opt_high": r}
    ...        for p, r in (("a-srpt", 1.0), ("fifo", 1.25), ("a-srpt", 1.1), ("fifo", 1.5))]
    >>> fig = policy_ratios(rec)
    >>> [t.get_text() for t in fig.legends[0].get_texts()]
    ['a-srpt\\nmean 1.050, max 1.100 (2 of 2 proven)', 'fifo\\nmean 1.375, max 1.500 (2 of 2 proven)']
    >>> fig.axes[0].get_xlabel()
    'ALG / OPT (sum w_j C_j)'
    """
    records = list(rows)
    if records and "figures" in records[0]:
        from .batch.runner import ratio_rows

        records = ratio_rows(records)
    if not records:
        raise InvalidParameterError("policy_ratios: no compare-opt record (rows of 'asrpt batch --task compare-opt')")
    by: dict[str, list] = {}
    for r in records:
        value = r["ratio_to_opt"] if r.get("ratio_to_opt") is not None else r.get("ratio_to_opt_high")
        if value is None:
            continue
        by.setdefault(r["policy"], []).append((float(value), r.get("ratio_to_opt") is not None))
    names = list(policies) if policies else list(by)
    missing = [p for p in names if p not in by]
    if missing:
        raise InvalidParameterError(f"policy_ratios: no ratios of {', '.join(map(repr, missing))}; "
                                    f"the rows hold {', '.join(by) or 'none'}")
    fig = Figure(figsize=(6.4, 5.6), layout="constrained")
    ax = fig.add_subplot()
    unproven = False
    for k, name in enumerate(names):
        values = sorted(v for v, _ in by[name])
        proven = sum(1 for _, p in by[name] if p)
        unproven = unproven or proven < len(values)
        n = len(values)
        style = _series_style(k)
        label = f"{_short_spec(name)}\nmean {sum(values) / n:.3f}, max {values[-1]:.3f} ({proven} of {n} proven)"
        ax.step([values[0]] + values, [0.0] + [(i + 1) / n for i in range(n)], where="post",
                color=style["color"], linestyle=style["linestyle"], linewidth=style["linewidth"], label=label)
    ax.set_xlabel("ALG / OPT (sum w_j C_j)" + ("\n(upper end of the bracket where not proven)"
                                               if unproven else ""))
    ax.set_ylabel("fraction of instances \u2264 x")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    fig.legend(loc="outside lower center", fontsize="small", frameon=False,     # (below the axes, off the lines)
               ncols=2 if len(names) > 1 and max(len(_short_spec(p)) for p in names) <= 24 else 1)
    n_instances = max(len(by[p]) for p in names)
    ax.set_title(title or f"ratio to the offline optimum, {n_instances} instances", fontsize="medium")
    return fig


@validate_params({"results": "no_validation", "log_y": [None, "boolean"], "title": [None, str]})
def worstcase_progress(results, *, log_y: bool | None = None, title: str | None = None) -> Figure:
    """Progress of worst-case searches: the best ``ALG / UB`` found against the evaluations.

    One step line per search (:attr:`WorstCase.history`), continued to its last evaluation; a
    star marks the final ratio after the finer-grid refinement, and a dashed line of the same
    colour the cell's bound ``1 + rho mu``. The search only refutes: staying below the line
    proves nothing, a point above it would be a certified violation.

    Parameters
    ----------
    results : WorstCase or sequence of WorstCase
        Results of :func:`asrpt.theory.worst_case` (or :func:`~asrpt.theory.worst_case_table`).
    log_y : bool or None
        Logarithmic ratio axis; None: when the bounds dwarf the ratios (more than 10 times).
    title : str or None

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InvalidParameterError
        Anything but WorstCase results, or none.

    Examples
    --------
    >>> from asrpt.theory import worst_case
    >>> r = worst_case(gpus=2, max_jobs=2, budget=5, max_evals=6, seed=1)
    >>> fig = worstcase_progress(r)
    >>> fig.axes[0].get_xlabel()
    'distinct instances evaluated'
    """
    items = [results] if _is_worst_case(results) else results
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence) or not items \
            or not all(_is_worst_case(r) for r in items):
        raise InvalidParameterError(
            "worstcase_progress: 'results' must be a WorstCase or a non-empty sequence of them")
    fig = Figure(figsize=(7.0, 4.4), layout="constrained")
    ax = fig.add_subplot()
    ratios, bounds = [], []
    for k, r in enumerate(items):
        c = _series_color(k)
        hist = [(int(e), _f(q)) for e, q in r.history] or [(1, _f(r.ratio))]
        xs = [e for e, _ in hist] + [max(int(r.evaluations), hist[-1][0])]
        ys = [q for _, q in hist] + [hist[-1][1]]
        ax.step(xs, ys, where="post", color=c,
                label=f"{r.cell.name}: {_f(r.ratio):.3g} in {r.evaluations} evals")
        ax.plot([xs[-1]], [_f(r.ratio)], marker="*", markersize=10, color=c, linestyle="none")
        ax.axhline(_f(r.cell_bound), color=c, linestyle="--", linewidth=1)
        ax.annotate(f"1 + rho mu = {_f(r.cell_bound):g}", (0.01, _f(r.cell_bound)),
                    xycoords=("axes fraction", "data"), textcoords="offset points", xytext=(0, 3),
                    fontsize=7, color=c)
        ratios += ys + [_f(r.ratio)]
        bounds.append(_f(r.cell_bound))
    if log_y is None:
        log_y = max(bounds) > 10 * max(min(ratios), 1e-12)
    if log_y:
        ax.set_yscale("log")
        _plain_log(ax.yaxis)
    ax.set_xlabel("distinct instances evaluated")
    ax.set_ylabel("best ALG / UB found (dashed: 1 + rho mu)")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize="small", loc="center right")
    ax.set_title(title if title is not None else "worst-case search progress", fontsize="medium")
    return fig


# ---------------------------------------------------------------------------------------------
# Placement
# ---------------------------------------------------------------------------------------------

def _worker_label(w) -> str:
    if isinstance(w, tuple):
        parts = [str(x) for x in w]
        return "".join(parts) if all(len(p) == 1 for p in parts) else ".".join(parts)
    return str(w)


@validate_params({"worker_graph": "no_validation", "placement": "no_validation",
                  "free_gpus": [None, list, tuple], "labels": [None, "boolean"],
                  "width": [None, Interval(Real, 2, 30, closed="both")], "title": [None, str]})
def placement_graph(worker_graph, placement, *, free_gpus: Sequence[int] | None = None,
                    labels: bool | None = None, width: float | None = None,
                    title: str | None = None) -> Figure:
    """A worker graph drawn on the servers of its placement, edges crossing servers in red.

    Each server used is a box holding its workers on a circle; workers are coloured by pipeline
    stage (worker graphs) or by server (other graphs). Edges inside a server are grey, edges
    between servers (the cut) red arcs, their width growing with their bytes; line style gives
    the traffic kind of worker-graph edges (tp solid, pp dashed, dp dotted). The legend has one
    entry per kind and side of the cut, drawn as those edges are, and says what a node label
    means. Nodes and edges are drawn with networkx on the figure's axes, whose limits hold the
    boxes and arcs and nothing more.

    Parameters
    ----------
    worker_graph : networkx.Graph
        The graph placed (:func:`asrpt.dnn.parallel.worker_graph`, or any graph with ``bytes``
        on its edges).
    placement : Placement
        :func:`asrpt.placement.place`'s answer for this graph.
    free_gpus : sequence of int or None
        Free GPUs per server before placing (shown in the server boxes).
    labels : bool or None
        Write worker ids (``rsk`` = data-parallel replica, pipeline stage, tensor rank, dotted
        ``r.s.k`` once a number has two digits); None: at most 64 workers, when the nodes are
        big enough to hold them.
    width : float in [2, 30] or None
        The figure's width in inches; None: from the graph (6 to 15 in). The drawing is to
        scale, so node sizes follow the width, and under 6 in the legend goes below the graph
        (give the width a paper needs here rather than resizing the figure when saving).
    title : str or None
        Default: the job, its configuration, the method and status, the cut and the iteration
        time.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InvalidParameterError
        ``placement`` does not assign every worker of the graph.

    Examples
    --------
    >>> from asrpt.instance import Job, Parallelism
    >>> from asrpt.dnn.parallel import worker_graph
    >>> from asrpt.placement import place
    >>> W = worker_graph(Job("j", 0, 8, model="gpt2", parallelism=Parallelism(2, 2, 2),
    ...                      iterations=1), "A100")
    >>> fig = placement_graph(W, place(W, [4, 2, 2], method="best_fit"), free_gpus=[4, 2, 2])
    >>> fig.axes[0].get_title().startswith("j: gpt2")
    True
    >>> [t.get_text() for t in fig.legends[0].get_texts()][-1]
    'node label 111: data-parallel\\nreplica 1, pipeline stage 1, tensor rank 1'

    """
    import networkx as nx

    if not isinstance(worker_graph, nx.Graph):
        raise InvalidParameterError(
            f"placement_graph: 'worker_graph' must be a networkx graph, got {type(worker_graph).__name__}")
    assignment = getattr(placement, "assignment", None)
    if not isinstance(assignment, Mapping):
        raise InvalidParameterError(
            f"placement_graph: 'placement' must be a Placement, got {type(placement).__name__}")
    missing = [w for w in worker_graph.nodes if w not in assignment]
    if missing:
        raise InvalidParameterError(
            f"placement_graph: the placement does not assign worker {missing[0]!r} "
            f"({len(missing)} of {worker_graph.number_of_nodes()} unassigned)")
    n = worker_graph.number_of_nodes()
    try:
        ordered = sorted(worker_graph.nodes)
    except TypeError:  # mixed node types
        ordered = sorted(worker_graph.nodes, key=repr)
    by_server: dict[int, list] = {}
    for w in ordered:
        by_server.setdefault(assignment[w], []).append(w)
    servers = sorted(by_server)
    # each server a circle of its workers: a chord between two workers of one server never
    # passes through a third; edges between servers are drawn as arcs
    most = max(len(ws) for ws in by_server.values())
    radius = max(0.55, 0.62 * most / math.pi)
    pitch = 2 * radius + 1.8
    pos, centres = {}, []
    for i, h in enumerate(servers):
        ws = by_server[h]
        cx = i * pitch
        centres.append((h, cx, len(ws)))
        for k, w in enumerate(ws):
            if len(ws) == 1:
                pos[w] = (cx, 0.0)
            else:
                angle = math.pi / 2 - 2 * math.pi * k / len(ws)
                pos[w] = (cx + radius * math.cos(angle), radius * math.sin(angle))
    half = radius + 0.7
    edges = [(u, v, float(d.get("bytes", 0.0)), d.get("kind")) for u, v, d in worker_graph.edges(data=True)
             if u != v]
    # the axes hold exactly the boxes, the server captions and the arcs: an arc3 edge from p to q
    # bulges furthest at its middle, (p + q) / 2 + (_ARC / 2) (dy, -dx)
    bulges = [(pos[u][1] + pos[v][1]) / 2 - _ARC / 2 * (pos[v][0] - pos[u][0])
              for u, v, _, _ in edges if assignment[u] != assignment[v]]
    total_w = (len(servers) - 1) * pitch + 2 * half + 0.3
    is_workers = all(isinstance(w, tuple) and "stage" in worker_graph.nodes[w] for w in worker_graph.nodes)
    stages = sorted({worker_graph.nodes[w]["stage"] for w in worker_graph.nodes}) if is_workers else []

    # edges: colour says where (red between servers, grey inside one), line style the traffic kind;
    # the legend shows each (kind, where) drawn exactly as its edges are
    styles = {"tp": "solid", "pp": "dashed", "dp": "dotted"}
    names = {"tp": "tensor-parallel (tp)", "pp": "pipeline (pp)", "dp": "data-parallel (dp)"}
    top = max([b for *_, b, _ in edges] + [1.0])
    groups = []                                   # (cut, kind, edges, widths, style)
    for cut in (False, True):
        for kind in sorted({k for *_, k in edges}, key=str):
            sel = [(u, v, b) for u, v, b, k in edges if k == kind and (assignment[u] != assignment[v]) == cut]
            if sel:
                widths = [(1.2 + 3.0 * b / top) if cut else 1.0 for *_, b in sel]
                groups.append((cut, kind, sel, widths, styles.get(kind, "solid" if kind is None else "dashdot")))
    n_legend = len(groups) + len(stages[:10]) + (3 if is_workers else 0)
    longest = max([len(names.get(k, str(k))) + 24 for _, k, *_ in groups] + [30])
    below = width is not None and width < 6.0     # a narrow figure: the legend under the graph
    legend_w = 0.0 if below else 0.6 + 0.062 * longest
    if width is None:
        scale = min(0.75, 11.0 / total_w)         # inches per unit on the axes
        width_in = scale * total_w + legend_w + 0.25
    else:
        width_in = float(width)
        scale = max(0.02, (width_in - legend_w - 0.25) / total_w)
    # nodes keep their size on the page up to 0.42 units across (the default scale's)
    diameter = min(22.8 if n <= 16 else 17.3 if n <= 64 else 7.7, 0.42 * scale * 72)   # points
    size = diameter ** 2
    font = min(7 if n <= 16 else 6, 0.38 * diameter)
    if labels is None:
        labels = n <= 64 and font >= 5
    label_note = None
    if labels and is_workers:
        r, st, k = max(worker_graph.nodes)
        label_note = (f"node {_worker_label((r, st, k))}: replica {r},\nstage {st}, tensor rank {k}" if below else
                      f"node label {_worker_label((r, st, k))}: data-parallel\nreplica {r}, "
                      f"pipeline stage {st}, tensor rank {k}")
    caption = 0.2 + 0.32 / scale                  # two lines of 8 pt above each box
    x_lo, x_hi = -half - 0.15, total_w - half - 0.15
    y_lo = min([-half] + bulges) - 0.2
    y_hi = max([half + caption] + bulges) + 0.1
    axes_h = scale * (y_hi - y_lo)
    if below:
        least = 0.0
        height_in = axes_h + 0.7 + 0.17 * math.ceil(n_legend / 2)
    else:
        least = max(0.19 * n_legend + 0.35, 2.0)          # the legend's height
        height_in = max(axes_h + 0.75, least)
    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    ax = fig.add_subplot()
    from matplotlib.patches import FancyBboxPatch

    for h, cx, used in centres:
        ax.add_patch(FancyBboxPatch((cx - half, -half), 2 * half, 2 * half,
                                    boxstyle="round,pad=0.05", facecolor="0.95", edgecolor="0.5"))
        cap = f" of {free_gpus[h]} free" if free_gpus is not None and h < len(free_gpus) else ""
        ax.text(cx, half + 0.15, f"server {h}\n{used} GPUs{cap}", ha="center", va="bottom",
                fontsize=8)
    if is_workers:
        node_color = [_series_color(stages.index(worker_graph.nodes[w]["stage"])) for w in worker_graph.nodes]
    else:
        node_color = [_series_color(servers.index(assignment[w])) for w in worker_graph.nodes]
    cut_total = 0.0
    handles = []
    for cut, kind, sel, widths, style in groups:
        if cut:
            cut_total += sum(b for *_, b in sel)
        extra = {"arrows": True, "arrowstyle": "-", "connectionstyle": f"arc3,rad={_ARC}",
                 "node_size": size} if cut else {}
        color, alpha = ("tab:red", 0.85) if cut else ("0.45", 0.8)
        nx.draw_networkx_edges(
            worker_graph, pos, edgelist=[(u, v) for u, v, _ in sel], ax=ax, width=widths,
            edge_color=color, alpha=alpha, style=style, **extra)
        what = (kind if below else names.get(kind, kind)) if kind is not None else "edge"
        handles.append(Line2D([], [], color=color, alpha=alpha, linestyle=style,
                              linewidth=sorted(widths)[len(widths) // 2],
                              label=f"{what}, {'cut (between servers)' if cut else 'inside a server'}"))
    nx.draw_networkx_nodes(worker_graph, pos, ax=ax, node_color=node_color, node_size=size,
                           edgecolors="black", linewidths=0.5)
    if labels:
        nx.draw_networkx_labels(worker_graph, pos, labels={w: _worker_label(w) for w in worker_graph.nodes},
                                ax=ax, font_size=font)
    if is_workers:
        handles += [Line2D([], [], marker="o", linestyle="none", markerfacecolor=_series_color(i),
                           markeredgecolor="black", markersize=min(8.0, diameter), label=f"stage {s}")
                    for i, s in enumerate(stages[:10])]
    if label_note:
        handles.append(Line2D([], [], linestyle="none", label=label_note))
    fig.legend(handles=handles, loc="outside lower center" if below else "outside right upper",
               ncols=2 if below else 1, fontsize="small", frameon=False)
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_aspect("equal", adjustable="box")
    ax.axis("off")
    if title is None:
        g = worker_graph.graph
        par = g.get("parallelism")
        what = f"{g.get('job')}: {g.get('model')} dp x pp x tp = {'x'.join(map(str, par))}" if par else \
            f"{n} workers"
        cost = f"cut {_bytes(cut_total)}/iteration on {len(servers)} servers"
        tau = getattr(placement, "tau", None)
        title = (f"{what}\n{getattr(placement, 'method', '?')} ({getattr(placement, 'status', '?')}): "
                 f"{cost}" + (f", tau {tau:.4g} s" if tau is not None else ""))
    ax.set_title(title, fontsize="medium", wrap=True)
    # trim: the equal aspect leaves the axes box taller than the drawing; give the slack back
    fig.draw_without_rendering()
    slack = (ax.get_position(original=True).height - ax.get_position().height) * height_in
    if slack > 0.02 and height_in - slack > least:
        fig.set_size_inches(width_in, height_in - slack)
    return fig


def _bytes(x: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.3g} B"


# ---------------------------------------------------------------------------------------------
# Predictions
# ---------------------------------------------------------------------------------------------

def _positive(values, who: str, what: str) -> list[float]:
    out = [_f(v) for v in values]
    bad = [v for v in out if not (v > 0 and math.isfinite(v))]
    if bad:
        raise InvalidParameterError(f"{who}: {what} must be positive and finite for a log-log plot, got {bad[0]!r}")
    return out


def _prediction_series(true, predicted) -> list[tuple[str, list, list]]:
    def is_log(x):
        return hasattr(x, "true") and hasattr(x, "predicted") and hasattr(x, "ids")

    if predicted is None:
        if is_log(true):
            return [("predicted", list(true.true), list(true.predicted))]
        if isinstance(true, Mapping) and true and all(is_log(v) for v in true.values()):
            return [(str(k), list(v.true), list(v.predicted)) for k, v in true.items()]
        raise InvalidParameterError(
            "prediction_scatter: give (true, predicted), a PredictionLog or a mapping name -> PredictionLog")
    true = list(true)
    named = list(predicted.items()) if isinstance(predicted, Mapping) else [("predicted", predicted)]
    out = []
    for name, values in named:
        values = list(values)
        if len(values) != len(true):
            raise InvalidParameterError(
                f"prediction_scatter: {len(true)} true values but {len(values)} predictions ({name})")
        out.append((str(name), true, values))
    return out


@validate_params({"true": "no_validation", "predicted": "no_validation", "title": [None, str]})
def prediction_scatter(true, predicted=None, *, title: str | None = None) -> Figure:
    """Predicted against true work (iterations, or seconds for abstract jobs), log-log.

    The diagonal is a perfect prediction, the dotted lines a factor of 2 either way; the legend
    gives each predictor's Spearman rho with the truth, median |log(predicted / true)| and share
    within 2x (:func:`asrpt.predict.metrics.spearman`, :func:`~asrpt.predict.metrics.accuracy`).

    Parameters
    ----------
    true : sequence of numbers, PredictionLog, or mapping name -> PredictionLog
        True work per job; or logs (:func:`asrpt.predict.metrics.run_predictions`,
        :func:`~asrpt.predict.metrics.replay_predictions`), one series each.
    predicted : sequence of numbers, mapping name -> sequence, or None
        The predictions of one or several predictors, in the order of ``true``; None with logs.
    title : str or None

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InvalidParameterError
        Lengths that differ, or values that are not positive.

    Examples
    --------
    >>> fig = prediction_scatter([10, 100, 1000], {"forest": [12, 90, 2500], "const": [50, 50, 50]})
    >>> len(fig.axes[0].collections), fig.axes[0].get_xscale()
    (2, 'log')
    """
    from .predict.metrics import accuracy, spearman

    series = _prediction_series(true, predicted)
    fig = Figure(figsize=(5.6, 5.0), layout="constrained")
    ax = fig.add_subplot()
    lo, hi = math.inf, 0.0
    for k, (name, t, p) in enumerate(series):
        t = _positive(t, "prediction_scatter", "true values")
        p = _positive(p, "prediction_scatter", f"predictions ({name})")
        if not t:
            continue
        acc = accuracy(t, p)
        rho = spearman(t, p)
        rho = "n/a" if rho is None else f"{rho:.2f}"
        ax.scatter(t, p, s=9 if len(t) > 500 else 16, alpha=0.35 if len(t) > 200 else 0.7,
                   color=_series_color(k), edgecolors="none",
                   label=f"{name} (n={acc.n}): rho {rho}, med |log| {acc.median_abs_log:.2f}, "
                         f"within 2x {acc.distortion.share_within_2x:.0%}")
        lo, hi = min(lo, *t, *p), max(hi, *t, *p)
    if hi == 0.0:
        raise InvalidParameterError("prediction_scatter: no prediction to draw")
    lo, hi = lo / 1.5, hi * 1.5
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=1, label="perfect")
    ax.plot([lo, hi], [2 * lo, 2 * hi], color="0.4", linestyle=":", linewidth=1, label="x2, x1/2")
    ax.plot([lo, hi], [lo / 2, hi / 2], color="0.4", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("true work (iterations)")
    ax.set_ylabel("predicted work")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize="x-small")
    if title:
        ax.set_title(title, fontsize="medium")
    return fig


# ---------------------------------------------------------------------------------------------
# Saving, and the style of a paper
# ---------------------------------------------------------------------------------------------

_FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
# no timestamps and no software versions in the files: the same figure gives the same bytes
_METADATA = {"png": {"Software": None},
             "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
             "svg": {"Creator": None, "Date": None}}
_INCHES = Interval(Real, 1, 50, closed="both")


@validate_params({"fig": [Figure], "path": [str, os.PathLike],
                  "dpi": [Interval(Integral, 10, 1200, closed="both")],
                  "width": [None, _INCHES], "height": [None, _INCHES],
                  "format": [None, Options(str, set(_METADATA))]})
def save_figure(fig: Figure, path, *, dpi: int = 120, width: float | None = None,
                height: float | None = None, format: str | None = None) -> str:
    """Write a figure as PNG, PDF or SVG, from the path's suffix (creating the parent directory);
    returns the path.

    Files are byte-reproducible: no timestamp or software tag in any of them, and SVG element
    ids from a fixed salt, so saving the same figure twice gives the same bytes. PDF and SVG
    are vector formats (``dpi`` then only matters for raster parts); save inside
    :func:`paper_style` to embed TrueType fonts (PDF) or keep text as text (SVG).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or path
        Ending in ``.png``, ``.pdf`` or ``.svg`` (any case), unless ``format`` is given.
    dpi : int in [10, 1200]
        Resolution of PNG output.
    width, height : float in [1, 50] or None
        The size to draw at, in inches (the figure's own size is restored afterwards). Give one
        and the other follows the figure's aspect ratio; None for both: the figure's size.
    format : {"png", "pdf", "svg"} or None
        Write this format whatever the suffix; None: from the suffix.

    Returns
    -------
    str
        The path written.

    Raises
    ------
    InvalidParameterError
        Not a Figure, a suffix other than .png, .pdf and .svg (without ``format``), or a bad
        resolution or size.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> fig = jct_cdf({"x": [1, 2]})
    >>> p = save_figure(fig, d / "cdf.pdf", width=3.5)
    >>> pathlib.Path(p).read_bytes()[:5], [float(x) for x in fig.get_size_inches()]
    (b'%PDF-', [6.4, 4.2])
    >>> pathlib.Path(p).read_bytes() == pathlib.Path(save_figure(fig, d / "again.pdf", width=3.5)).read_bytes()
    True
    >>> save_figure(fig, d / "cdf.jpg")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: save_figure: cannot tell the format of '...cdf.jpg': the file must end in .png, .pdf or .svg
    """
    path = os.fspath(path)
    if format is None:
        format = _FORMATS.get(os.path.splitext(path)[1].lower())
        if format is None:
            raise InvalidParameterError(
                f"save_figure: cannot tell the format of {path!r}: the file must end in .png, .pdf or .svg")
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    w0, h0 = (float(x) for x in fig.get_size_inches())
    w = float(width) if width is not None else (w0 * float(height) / h0 if height is not None else w0)
    h = float(height) if height is not None else h0 * w / w0
    engine = fig.get_layout_engine()
    try:
        if (w, h) != (w0, h0):
            fig.set_size_inches(w, h)
        _settle(fig, dpi if format == "png" else 72)    # vector backends draw at 72 dpi
        if engine is not None:      # laid out: saving must not move anything again
            fig.set_layout_engine("none")
        with rc_context({"svg.hashsalt": "asrpt"}):
            fig.savefig(path, dpi=dpi, format=format, metadata=_METADATA[format])
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)
        if (w, h) != (w0, h0):
            fig.set_size_inches(w0, h0)
    return path


def _settle(fig: Figure, dpi: float, most: int = 12) -> None:
    """Lay the figure out (at ``dpi``) until its axes stop moving.

    Constrained layout depends on the tick labels, which depend on the axes' size: each draw
    moves the axes a little less (by 1e-7 of the figure, then 1e-11, ...), so a figure's first
    save and its second would differ in the last digits of their coordinates (and SVG ids,
    which hash them). Settled by draws that render nothing, then saved with the layout frozen,
    every save of a figure draws the same thing.
    """
    before, old_dpi = None, fig.dpi
    try:
        fig.dpi = dpi
        for _ in range(most):
            fig.draw_without_rendering()
            now = [tuple(a.get_position().bounds) for a in fig.axes]
            if now == before:
                break
            before = now
    finally:
        fig.dpi = old_dpi


@validate_params({"fig": [Figure], "path": [str, os.PathLike], "dpi": [Interval(Integral, 10, 1200, closed="both")]})
def save_png(fig: Figure, path, *, dpi: int = 120) -> str:
    """Write a figure as PNG whatever the path's suffix (creating the parent directory); returns
    the path. :func:`save_figure` with ``format="png"``.

    The PNG carries no timestamp or software tag, so the same figure gives the same bytes.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or path
    dpi : int in [10, 1200]

    Returns
    -------
    str
        The path written.

    Raises
    ------
    InvalidParameterError
        Not a Figure, or a bad path or resolution.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = save_png(jct_cdf({"x": [1, 2]}), pathlib.Path(tempfile.mkdtemp()) / "a" / "cdf.png")
    >>> pathlib.Path(p).read_bytes()[:4]
    b'\\x89PNG'
    """
    return save_figure(fig, path, dpi=dpi, format="png")


def _paper_rc(font_size: float) -> dict:
    small = font_size - 1
    return {
        "font.size": font_size, "axes.titlesize": font_size, "axes.labelsize": font_size,
        "figure.titlesize": font_size + 1, "legend.fontsize": small,
        "xtick.labelsize": small, "ytick.labelsize": small, "legend.handlelength": 2.6,
        "lines.linewidth": 1.0, "lines.markersize": 3.5, "patch.linewidth": 0.5,
        "axes.linewidth": 0.6, "grid.linewidth": 0.4, "hatch.linewidth": 0.5,
        "xtick.major.width": 0.6, "ytick.major.width": 0.6, "xtick.minor.width": 0.4,
        "ytick.minor.width": 0.4, "xtick.major.size": 2.5, "ytick.major.size": 2.5,
        "xtick.minor.size": 1.5, "ytick.minor.size": 1.5, "xtick.major.pad": 2.0,
        "ytick.major.pad": 2.0, "axes.labelpad": 2.0, "axes.titlepad": 3.0,
        "figure.constrained_layout.w_pad": 0.02, "figure.constrained_layout.h_pad": 0.02,
        "pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none",
    }


@validate_params({"font_size": [Interval(Real, 5, 12, closed="both")]})
@contextmanager
def paper_style(*, font_size: float = 8.0):
    """A ``matplotlib.rc_context`` for figures going into a two-column paper.

    Text at ``font_size`` points (tick labels and legends a point smaller; labels the figure
    functions size themselves keep their sizes, 6.5 to 9 pt), thinner lines and ticks, tighter
    padding, and fonts embedded as TrueType (``pdf.fonttype`` and ``ps.fonttype`` 42, not
    Type 3) or kept as text in SVG (``svg.fonttype`` none), as publishers ask. Nothing global
    changes: the settings hold inside the ``with`` block only. Build the figure *and* save it
    inside the block (fonts are chosen when artists are made, font embedding when the file is
    written), at a column's width (:data:`PAPER_WIDTH`, 3.5 in) or the page's (about 7 in).

    Parameters
    ----------
    font_size : float in [5, 12]
        Points of the base font (8 by default; many venues ask for at least 7 in figures).

    Yields
    ------
    None

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with paper_style():
    ...     fig = jct_cdf({"a-srpt": [1, 2, 4], "fifo": [2, 3, 8]}, complementary=True)
    ...     path = save_figure(fig, pathlib.Path(tempfile.mkdtemp()) / "ccdf.pdf", width=PAPER_WIDTH)
    >>> fig.axes[0].xaxis.label.get_fontsize()
    8.0
    >>> b"/FontFile2" in pathlib.Path(path).read_bytes()   # TrueType embedded
    True
    """
    with rc_context(_paper_rc(float(font_size))):
        yield
