"""Figures, each a function returning a matplotlib Figure (the CLI writes them as PNG).

Plotting never changes results: functions read run records, schedules and reports only. They use
matplotlib's object API (no global pyplot state), so they work headless.
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.figure import Figure

__all__ = ["jct_cdf", "save_png"]


def jct_cdf(results: Sequence, *, log_x: bool = True, title: str | None = None) -> Figure:
    """Empirical CDF of job completion times (JCT = C_j - a_j), one line per run.

    Parameters
    ----------
    results : sequence of SimResult
    log_x : bool
        Logarithmic time axis (JCTs span orders of magnitude in real traces).

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> fig = jct_cdf([simulate(two_server_instance, p) for p in ("a-srpt", "fifo")])
    >>> len(fig.axes[0].lines)
    2
    """
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for res in results:
        jcts = sorted(float(r.jct) for r in res.records if r.jct is not None)
        if not jcts:
            continue
        n = len(jcts)
        ax.step(jcts, [(i + 1) / n for i in range(n)], where="post", label=res.policy)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.01)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    if title:
        ax.set_title(title)
    return fig


def save_png(fig: Figure, path: str, *, dpi: int = 120) -> str:
    """Write a figure as PNG; returns the path."""
    fig.savefig(path, dpi=dpi, format="png")
    return path
