"""Summary metrics of a run, computed from its records alone.

Total (weighted) completion time, total weighted flow time, mean/median/p95/p99 JCT, makespan, mean queueing delay, GPU
utilization and preemptions. Percentiles use the nearest-rank definition on the sorted JCTs
(an actual job's JCT, exact in exact mode).
"""

from __future__ import annotations

import math
import operator
from typing import Sequence

from .records import JobRecord

__all__ = ["summarize", "percentile", "size_classes"]


def percentile(sorted_values: Sequence, q: float):
    """Nearest-rank percentile of already sorted values (None for an empty sequence).

    >>> percentile([1, 2, 3, 4], 50), percentile([1, 2, 3, 4], 99), percentile([5], 95)
    (2, 4, 5)
    """
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def size_classes(records: Sequence[JobRecord], edges: Sequence = (1, 10, 100)) -> tuple[list[str], list[int]]:
    """Each job's size class by its GPU-time ``g_j P*_j`` in GPU-hours, cut at ``edges``
    (positive, increasing): the class labels (``"< 1"``, ``"1-10"``, ..., ``">= 100"``) and
    each record's class index, in record order.

    >>> from types import SimpleNamespace as R
    >>> size_classes([R(gpus=1, processing_time=1800), R(gpus=8, processing_time=3600 * 50)])
    (['< 1', '1-10', '10-100', '>= 100'], [0, 3])
    """
    bounds = [float(e) for e in edges]
    if not bounds or bounds[0] <= 0 or any(b <= a for a, b in zip(bounds, bounds[1:])):
        from ..errors import InvalidParameterError

        raise InvalidParameterError(f"size_classes: 'edges' must be positive and increasing, got {list(edges)!r}")
    labels = [f"< {bounds[0]:g}"] + [f"{a:g}-{b:g}" for a, b in zip(bounds, bounds[1:])] + [f">= {bounds[-1]:g}"]
    cuts = [3600 * b for b in bounds]
    classes = []
    for r in records:
        area = float(r.gpus * r.processing_time)
        classes.append(next((i for i, c in enumerate(cuts) if area < c), len(cuts)))
    return labels, classes


def summarize(records: Sequence[JobRecord], total_gpus: int) -> dict:
    """Summary metrics of finished records.

    Keys: jobs, finished, total_completion_time (sum C_j), total_weighted_completion_time
    (sum w_j C_j), total_weighted_flow_time (sum w_j (C_j - a_j): the weighted JCT, which,
    unlike sum w_j C_j, arrival times do not dominate on a long trace), mean_jct, median_jct, p95_jct, p99_jct, max_jct, mean_queueing_delay, makespan (last
    completion minus first arrival), gpu_utilization (GPU-seconds held / (M x makespan)),
    preemptions.
    """
    done = [r for r in records if r.completion is not None]
    completions = [r.completion for r in done]
    flows = list(map(operator.sub, completions, [r.arrival for r in done]))   # JobRecord.jct, inline
    jcts = sorted(flows)
    n = len(done)
    out: dict = {"jobs": len(records), "finished": n}
    out["total_completion_time"] = sum(completions, 0)
    weights = [r.weight for r in done]
    out["total_weighted_completion_time"] = sum(map(operator.mul, weights, completions), 0)
    out["total_weighted_flow_time"] = sum(map(operator.mul, weights, flows), 0)
    out["mean_jct"] = sum(jcts, 0) / n if n else None
    out["median_jct"] = percentile(jcts, 50)
    out["p95_jct"] = percentile(jcts, 95)
    out["p99_jct"] = percentile(jcts, 99)
    out["max_jct"] = jcts[-1] if jcts else None
    delays = [None if r.start is None else r.start - r.arrival for r in done]   # queueing_delay
    out["mean_queueing_delay"] = sum(delays, 0) / n if n else None
    if done:
        first = min([r.arrival for r in records])
        makespan = max(completions) - first
    else:
        makespan = 0
    out["makespan"] = makespan
    held = sum([r.gpus * (s.end - s.start) for r in records for s in r.segments], 0)
    out["gpu_utilization"] = float(held) / (total_gpus * float(makespan)) if makespan else None
    out["preemptions"] = sum([r.preemptions for r in records])
    return out
