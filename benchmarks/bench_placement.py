"""Placement: ILP solve times by size, plain vs count formulation, heuristic gaps to the optimum.

Targets (issue 4):

- the ILP on 8- to 64-worker worker graphs from the zoo onto 2-16 servers with random free GPUs:
  median and worst solve time; 64 workers onto 8 servers optimal in under 1 s (median) with the
  count formulation;
- the gap of each heuristic to the optimum over 500 random cases (median, p95, worst);
- (issue 18) 64-worker placements onto 8 free servers and on fragmented capacity proven optimal
  within 10 s in >= 90% of cases, median under 1 s: part "proof" measures the count method
  without and with the pattern bound on the same fixed cases, case by case in one run (proven
  share, median time, gap at the limit, the compact LP relaxation and the pattern bound against
  the best cut); part "patterns" the count method alone on the same cases (run from two
  checkouts back to back to compare them: ``PYTHONPATH=<checkout> python
  benchmarks/bench_placement.py --part patterns --time-limit 10 --seed N``); part "strength"
  the compact model without and with the boundary cuts.

Run as a script from the repository root with ``PYTHONPATH=.`` so that it imports this checkout.

Run the speed targets with ``pytest benchmarks/bench_placement.py --benchmark-only -m "slow or
not slow"``; print the full report (the figures of docs/placement.md) with ``python
benchmarks/bench_placement.py [--cases 500] [--seed 0] [--time-limit 30] [--jobs 1] [--part
all|size|eight|plain|gaps|limit|strength|proof|patterns] [--json FILE]`` (``--part proof
--time-limit 10``: issue 18's figures; ``--part strength --time-limit 10``: the count model
before and after the boundary cuts, same cases, same run; ``--part patterns --time-limit 10``
from two checkouts: the pattern step of each).

Cases: a zoo model and a parallel configuration (dp, pp, tp) with 8, 16, 32 or 64 workers that
fits in A100 memory; 2-16 servers of 8 GPUs (a server of 16 for the "onto 8 servers" cases)
with free GPUs drawn uniformly conditioned on holding the job (exact sampling); for the gap
study the free GPUs per server are capped at n - 1, so no single server holds the job (otherwise
every method gets cut 0). Times are wall seconds of ``place()`` on one thread (``--jobs`` runs
the gap study's cases in worker processes; the cases do not depend on it).
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import statistics
import time

import numpy as np
import pytest

from asrpt.dnn.parallel import worker_graph
from asrpt.errors import Infeasible, InvalidParameterError
from asrpt.instance import Job, Parallelism
from asrpt.placement import ILPPlacement, has_pymetis, place

MODELS = ("gpt2", "gpt2-medium", "bert-large", "gpt3-1.3b", "llama-7b", "resnet50", "vit_b_16")
SIZES = (8, 16, 32, 64)
COUNT = ILPPlacement(formulation="count", shortcuts=False)
PLAIN = ILPPlacement(formulation="plain", shortcuts=False)
HEURISTICS = ("consolidate", "greedy", "kl") + (("metis",) if has_pymetis() else ()) + (
    "random", "spread_workers")


def configurations(n: int) -> list:
    out = []
    for t in (1, 2, 4, 8):
        for p in (1, 2, 4, 8):
            if n % (t * p) == 0:
                out.append((n // (t * p), p, t))
    return out


def graph(rng, n: int):
    """A zoo worker graph with n workers (a configuration that fits in A100 memory)."""
    while True:
        model = MODELS[int(rng.integers(len(MODELS)))]
        configs = configurations(n)
        d, p, t = configs[int(rng.integers(len(configs)))]
        job = Job("b", 0, n, model=model, parallelism=Parallelism(d, p, t), iterations=1,
                  batch_size=max(d, 8 * d))
        try:
            return worker_graph(job, "A100"), (model, d, p, t)
        except (Infeasible, InvalidParameterError):
            continue


def free_gpus(rng, n: int, servers: int, per_server: int = 8, cap: int | None = None) -> list:
    """Free GPUs per server, uniform over {0..top}^servers conditioned on a sum >= n (exact
    sequential sampling: each value is drawn with the number of completions it leaves)."""
    top = per_server if cap is None else min(per_server, cap)
    if servers * top < n:
        raise ValueError(f"{servers} servers of {top} free GPUs cannot hold {n} workers")

    @functools.lru_cache(maxsize=None)
    def completions(length: int, need: int) -> int:  # vectors in {0..top}^length, sum >= need
        if need <= 0:
            return (top + 1) ** length
        if length == 0:
            return 0
        return sum(completions(length - 1, need - v) for v in range(top + 1))

    free, need = [], n
    for i in range(servers):
        weights = [completions(servers - i - 1, need - v) for v in range(top + 1)]
        total = sum(weights)
        r = int(rng.integers(total)) if total < 2 ** 63 else int(rng.random() * total)
        v = 0
        while r >= weights[v]:
            r -= weights[v]
            v += 1
        free.append(v)
        need -= v
    return free


def case(rng, n: int, *, nontrivial: bool = False):
    W, label = graph(rng, n)
    lo = max(2, -(-n // 8))
    if nontrivial:
        lo = max(lo, -(-n // min(8, n - 1)))
    servers = int(rng.integers(lo, 17)) if lo <= 16 else lo
    free = free_gpus(rng, n, servers, cap=(n - 1) if nontrivial else None)
    return W, free, label


def timed(W, free, method, time_limit=None):
    t0 = time.perf_counter()
    p = place(W, free, method=method, time_limit=time_limit)
    return p, time.perf_counter() - t0


def _stats(values):
    values = sorted(values)
    if not values:
        return {"n": 0}
    return {"n": len(values), "median": statistics.median(values),
            "p95": float(np.percentile(values, 95)), "worst": values[-1]}


# ---------------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------------


def ilp_by_size(seed: int = 0, per_size: int = 40, time_limit: float = 30.0) -> dict:
    """Solve times of ``method="ilp"`` (shortcuts, then count) and of the count formulation
    alone, by number of workers."""
    rng = np.random.default_rng(seed)
    out = {}
    for n in SIZES:
        full, count, kinds, unproven = [], [], {}, 0
        for _ in range(per_size):
            W, free, _ = case(rng, n)
            p, dt = timed(W, free, "ilp", time_limit)
            full.append(dt)
            kinds[p.detail.get("formulation")] = kinds.get(p.detail.get("formulation"), 0) + 1
            q, dq = timed(W, free, COUNT, time_limit)
            count.append(dq)
            unproven += q.status != "optimal"
        out[n] = {"ilp": _stats(full), "count": _stats(count), "formulations": kinds,
                  "count_not_proven_in_limit": unproven}
    return out


def onto_eight_servers(seed: int = 1, cases: int = 30, time_limit: float = 30.0) -> dict:
    """64 workers onto 8 servers: all free (8 x 8 GPUs), and 8 servers of 16 GPUs with random
    free GPUs; the count formulation without shortcuts."""
    rng = np.random.default_rng(seed)
    full8, random16, tight, unproven8, unproven16 = [], [], 0, 0, 0
    for _ in range(cases):
        W, _ = graph(rng, 64)
        p, dt = timed(W, [8] * 8, COUNT, time_limit)
        full8.append(dt)
        free = free_gpus(rng, 64, 8, per_server=16)
        q, dq = timed(W, free, COUNT, time_limit)
        random16.append(dq)
        tight += p.detail.get("realized") == "tight"
        unproven8 += p.status != "optimal"
        unproven16 += q.status != "optimal"
    return {"all_free_8x8": _stats(full8) | {"not_proven_in_limit": unproven8},
            "random_free_8x16": _stats(random16) | {"not_proven_in_limit": unproven16},
            "layout_tight_8x8": tight}


def limit_gaps(seed: int = 4, cases: int = 12, time_limit: float = 30.0) -> dict:
    """64 workers onto 12-16 servers of 8 GPUs with random free GPUs (the hard cases of
    ``ilp_by_size``): the count formulation's status and, when the time limit stops it, the
    relative gap (cut - bound) / cut of the placement it returns."""
    rng = np.random.default_rng(seed)
    times, gaps, labels = [], [], []
    for _ in range(cases):
        W, label = graph(rng, 64)
        free = free_gpus(rng, 64, int(rng.integers(12, 17)))
        p, dt = timed(W, free, COUNT, time_limit)
        times.append(dt)
        if p.status != "optimal":
            gaps.append((p.cut_bytes - p.bound) / p.cut_bytes if p.cut_bytes > 0 else 0.0)
            labels.append(label)
    return {"time": _stats(times), "not_proven_in_limit": len(gaps), "gap_at_limit": _stats(gaps),
            "unproven_configurations": labels}


def _root_relaxation(W, free, boundary_cuts: bool) -> float:
    """The LP relaxation of the count model (every variable continuous), in bytes."""
    import pulp

    from asrpt.placement import PlacementProblem, ring_structure
    from asrpt.placement.ilp import _count_model
    from asrpt.solve import solve

    pb = PlacementProblem.build(W, free)
    scale = float(pb.ew.max())
    prob, _, _ = _count_model(pb, ring_structure(W), scale, boundary_cuts)
    for v in prob.variables():
        v.cat = pulp.LpContinuous
    return solve(prob).objective * scale


def issue18_cases(seed: int = 0, fragmented: int = 12) -> dict:
    """The fixed cases of issue 18: 64 workers onto 8 free 8-GPU servers (the 30 configurations
    of ``onto_eight_servers``) and on fragmented capacity (``fragmented`` cases of
    ``limit_gaps``: 12-16 partly free 8-GPU servers). {family: [(graph, free, label)]}."""
    fams = {"free_8x8": [], "fragmented": []}
    rng = np.random.default_rng(seed + 1)
    for _ in range(30):
        W, label = graph(rng, 64)
        free_gpus(rng, 64, 8, per_server=16)   # keep the draws of onto_eight_servers
        fams["free_8x8"].append((W, [8] * 8, label))
    rng = np.random.default_rng(seed + 4)
    for _ in range(fragmented):
        W, label = graph(rng, 64)
        fams["fragmented"].append((W, free_gpus(rng, 64, int(rng.integers(12, 17))), label))
    return fams


def proof(seed: int = 0, time_limit: float = 10.0, fragmented: int = 12) -> dict:
    """Issue 18's target on its fixed cases (``issue18_cases``): the count method without the
    pattern bound (``patterns=False``: the compact model with its boundary cuts, the model of
    before) and with it (the default), case by case in the same run. Per family and model: the
    share proven optimal within ``time_limit``, the median, p95 and worst time, the gap
    (cut - bound) / cut at the limit; per family the relaxations against the best cut found
    (the lower of the two runs' cuts): the compact model's LP relaxation ("root_gap") and the
    pattern bound ("pattern_gap"); and whether the optima agree where both proved one."""
    fams = issue18_cases(seed, fragmented)
    models = {"before": ILPPlacement(formulation="count", shortcuts=False, patterns=False),
              "after": COUNT}
    out = {}
    for fam, cases_ in fams.items():
        runs = {m: [] for m in models}
        roots = []
        for W, free, label in cases_:
            for m, method in models.items():
                runs[m].append(timed(W, free, method, time_limit))
            roots.append(_root_relaxation(W, free, True))
        best = [min(runs[m][i][0].cut_bytes for m in models) for i in range(len(cases_))]
        fam_out = {}
        for m in models:
            rows = runs[m]
            gaps = [(p.cut_bytes - p.bound) / p.cut_bytes if p.cut_bytes > 0 else 0.0
                    for p, _ in rows if p.status != "optimal"]
            proven = sum(p.status == "optimal" for p, _ in rows)
            fam_out[m] = {"cases": len(rows), "proven": proven, "proven_share": proven / len(rows),
                          "time": _stats([dt for _, dt in rows]), "gap_at_limit": _stats(gaps),
                          "unproven": [(label, p.detail.get("formulation"))
                                       for (p, _), (_, _, label) in zip(rows, cases_)
                                       if p.status != "optimal"]}
        rel = lambda lb, b: (b - lb) / b if b > 0 else 0.0  # noqa: E731
        fam_out["root_gap"] = _stats([rel(lp, b) for lp, b in zip(roots, best)])
        fam_out["pattern_gap"] = _stats([rel(p.detail["pattern_bound"], b)
                                         for (p, _), b in zip(runs["after"], best)
                                         if "pattern_bound" in p.detail])
        both = [i for i in range(len(cases_))
                if all(runs[m][i][0].status == "optimal" for m in models)]
        fam_out["both_proven"] = len(both)
        fam_out["equal_optima_when_both_proven"] = sum(
            abs(runs["before"][i][0].cut_bytes - runs["after"][i][0].cut_bytes)
            <= 1e-7 * max(1.0, best[i]) for i in both)
        fam_out["after_better_cut"] = sum(
            runs["after"][i][0].cut_bytes < runs["before"][i][0].cut_bytes * (1 - 1e-9)
            for i in range(len(cases_)))
        fam_out["cases"] = [
            {"label": label, "free": free,
             **{m: {"status": runs[m][i][0].status, "time": runs[m][i][1],
                    "cut": runs[m][i][0].cut_bytes, "bound": runs[m][i][0].bound,
                    "formulation": runs[m][i][0].detail.get("formulation")} for m in models}}
            for i, (_, free, label) in enumerate(cases_)]
        out[fam] = fam_out
    return out


def patterns(seed: int = 0, time_limit: float = 10.0, fragmented: int = 12) -> dict:
    """The default count method (pattern bound on) alone on issue 18's fixed cases
    (``issue18_cases``), for comparing two checkouts: run it once from each (``PYTHONPATH``
    names the checkout whose ``asrpt`` is measured) back to back. Per family: the share proven
    optimal within ``time_limit``, the median, p95 and worst time, the gap (cut - bound) / cut
    at the limit, and the unproven cases with how they ended."""
    fams = issue18_cases(seed, fragmented)
    out = {}
    for fam, cases_ in fams.items():
        rows = [(timed(W, free, COUNT, time_limit), label) for W, free, label in cases_]
        gaps = [(p.cut_bytes - p.bound) / p.cut_bytes if p.cut_bytes > 0 else 0.0
                for (p, _), _ in rows if p.status != "optimal"]
        proven = sum(p.status == "optimal" for (p, _), _ in rows)
        out[fam] = {"cases": len(rows), "proven": proven, "proven_share": proven / len(rows),
                    "time": _stats([dt for (_, dt), _ in rows]), "gap_at_limit": _stats(gaps),
                    "unproven": [(label, p.detail.get("formulation"),
                                  p.detail.get("alternatives", 0))
                                 for (p, _), label in rows if p.status != "optimal"]}
    return out


def strength(seed: int = 0, time_limit: float = 10.0, fragmented: int = 12) -> dict:
    """The count model without and with the boundary cuts, on the same cases in the same run:
    64 workers onto 8 free 8-GPU servers (the 30 configurations of ``onto_eight_servers``) and
    on fragmented capacity (``fragmented`` cases of ``limit_gaps``: 12-16 partly free servers).
    Per family and model: the share proven optimal within ``time_limit``, the median and worst
    solve time, the gap (cut - bound) / cut at the limit, and the root gap (best cut - LP
    relaxation) / best cut, the best cut being the lower of the two runs' placements."""
    fams = issue18_cases(seed, fragmented)
    models = {"before": ILPPlacement(formulation="count", shortcuts=False, boundary_cuts=False,
                                     patterns=False),
              "after": ILPPlacement(formulation="count", shortcuts=False, patterns=False)}
    out = {}
    for fam, cases_ in fams.items():
        runs = {m: [] for m in models}
        for W, free, label in cases_:
            for m, method in models.items():
                p, dt = timed(W, free, method, time_limit)
                runs[m].append((p, dt, _root_relaxation(W, free, method.boundary_cuts)))
        best = [min(runs[m][i][0].cut_bytes for m in models) for i in range(len(cases_))]
        fam_out = {}
        for m in models:
            rows = runs[m]
            proven = [p.status == "optimal" for p, _, _ in rows]
            gaps = [(p.cut_bytes - p.bound) / p.cut_bytes if p.cut_bytes > 0 else 0.0
                    for p, _, _ in rows if p.status != "optimal"]
            roots = [(b - lp) / b if b > 0 else 0.0 for (_, _, lp), b in zip(rows, best)]
            fam_out[m] = {"cases": len(rows), "proven": sum(proven),
                          "proven_share": sum(proven) / len(rows),
                          "time": _stats([dt for _, dt, _ in rows]),
                          "gap_at_limit": _stats(gaps), "root_gap": _stats(roots),
                          "unproven": [label for (p, _, _), (_, _, label) in zip(rows, cases_)
                                       if p.status != "optimal"]}
        both = [i for i in range(len(cases_))
                if all(runs[m][i][0].status == "optimal" for m in models)]
        fam_out["equal_optima_when_both_proven"] = sum(
            abs(runs["before"][i][0].cut_bytes - runs["after"][i][0].cut_bytes)
            <= 1e-7 * max(1.0, best[i]) for i in both)
        fam_out["both_proven"] = len(both)
        out[fam] = fam_out
    return out


def plain_vs_count(seed: int = 2, per_size: int = 12, time_limit: float = 30.0) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for n in (8, 16, 32):
        plain, count, plain_timeouts, agree = [], [], 0, 0
        for _ in range(per_size):
            W, free, _ = case(rng, n, nontrivial=True)
            p, dp = timed(W, free, PLAIN, time_limit)
            q, dq = timed(W, free, COUNT, time_limit)
            plain.append(dp)
            count.append(dq)
            plain_timeouts += p.status != "optimal"
            if p.status == q.status == "optimal":
                agree += abs(p.cut_bytes - q.cut_bytes) <= 1e-7 * max(1.0, p.cut_bytes)
        out[n] = {"plain": _stats(plain), "count": _stats(count),
                  "plain_not_proven_in_limit": plain_timeouts, "equal_optima": agree}
    return out


def _gap_case(args):
    """(size, {heuristic: gap}) of one case, or (size, None) when the ILP did not prove its
    optimum within the time limit."""
    i, n, W, free, time_limit = args
    opt = place(W, free, time_limit=time_limit)
    if opt.status != "optimal":
        return n, None
    out = {}
    for h in HEURISTICS:
        cut = place(W, free, method=h, seed=i).cut_bytes
        out[h] = (0.0 if cut <= opt.cut_bytes * (1 + 1e-9) else
                  (cut - opt.cut_bytes) / opt.cut_bytes if opt.cut_bytes > 0 else float("inf"))
    return n, out


def heuristic_gaps(seed: int = 3, cases: int = 500, time_limit: float = 30.0,
                   jobs: int = 1) -> dict:
    """Relative gap (cut - OPT) / OPT of each heuristic over random non-trivial cases (the cases
    are drawn first, so ``jobs`` worker processes solve the same cases as one)."""
    rng = np.random.default_rng(seed)
    todo = []
    for i in range(cases):
        n = SIZES[int(rng.integers(len(SIZES)))]
        W, free, _ = case(rng, n, nontrivial=True)
        todo.append((i, n, W, free, time_limit))
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.map(_gap_case, todo, chunksize=1)
    else:
        results = [_gap_case(t) for t in todo]
    gaps = {h: [] for h in HEURISTICS}
    skipped, sizes = 0, {}
    for n, out in results:
        if out is None:
            skipped += 1
            continue
        sizes[n] = sizes.get(n, 0) + 1
        for h, g in out.items():
            gaps[h].append(g)
    return {"cases": cases, "time_limit": time_limit, "not_proven_optimal": skipped,
            "by_size": sizes,
            "gaps": {h: _stats(g) | {"optimal_share": sum(x == 0 for x in g) / max(1, len(g))}
                     for h, g in gaps.items()}}


def report(cases: int = 500, seed: int = 0, time_limit: float = 30.0, part: str = "all",
           jobs: int = 1) -> dict:
    """The full report (``part="all"``) or one of its parts: "size", "eight", "plain", "gaps",
    "limit", "strength", "proof", "patterns" (the last three not part of "all")."""
    parts = {"size": lambda: {"ilp_by_size": ilp_by_size(seed, time_limit=time_limit)},
             "eight": lambda: {"onto_eight_servers": onto_eight_servers(seed + 1,
                                                                        time_limit=time_limit)},
             "plain": lambda: {"plain_vs_count": plain_vs_count(seed + 2, time_limit=time_limit)},
             "gaps": lambda: {"heuristic_gaps": heuristic_gaps(seed + 3, cases,
                                                               time_limit=time_limit,
                                                               jobs=jobs)},
             "limit": lambda: {"limit_gaps": limit_gaps(seed + 4, time_limit=time_limit)},
             "strength": lambda: {"strength": strength(seed, time_limit=time_limit)},
             "proof": lambda: {"proof": proof(seed, time_limit=time_limit)},
             "patterns": lambda: {"patterns": patterns(seed, time_limit=time_limit)}}
    if part != "all":
        return parts[part]()
    return {k: v for name, f in parts.items() if name not in ("strength", "proof", "patterns")
            for k, v in f().items()}


def _print(rep: dict) -> None:
    print("ILP solve time by workers (method='ilp': shortcuts then count; and count alone), s")
    for n, r in rep["ilp_by_size"].items():
        print(f"  {n:>3} workers: ilp median {r['ilp']['median']:.3f} worst {r['ilp']['worst']:.3f}"
              f" | count median {r['count']['median']:.3f} worst {r['count']['worst']:.3f}"
              f" | {r['formulations']} | count not proven: {r['count_not_proven_in_limit']}")
    e = rep["onto_eight_servers"]
    print(f"64 workers onto 8 servers, count: all free 8x8 median {e['all_free_8x8']['median']:.3f}"
          f" worst {e['all_free_8x8']['worst']:.3f}; random free 8x16 median "
          f"{e['random_free_8x16']['median']:.3f} worst {e['random_free_8x16']['worst']:.3f}")
    m = rep["limit_gaps"]
    print(f"64 workers onto 12-16 servers, count: median {m['time']['median']:.3f} s, "
          f"{m['not_proven_in_limit']} of {m['time']['n']} stopped by the limit, gap at the limit "
          f"median {m['gap_at_limit'].get('median', 0):.4f} worst {m['gap_at_limit'].get('worst', 0):.4f}")
    print("plain vs count (non-trivial cases), s")
    for n, r in rep["plain_vs_count"].items():
        print(f"  {n:>3}: plain median {r['plain']['median']:.3f} worst {r['plain']['worst']:.3f}"
              f" (not proven {r['plain_not_proven_in_limit']}) | count median "
              f"{r['count']['median']:.3f} worst {r['count']['worst']:.3f} | equal optima "
              f"{r['equal_optima']}")
    g = rep["heuristic_gaps"]
    print(f"heuristic gap to OPT over {g['cases']} cases ({g['not_proven_optimal']} not proven "
          f"optimal, excluded; by size {g['by_size']})")
    for h, s in g["gaps"].items():
        print(f"  {h:>9}: median {s['median']:.4f} p95 {s['p95']:.4f} worst {s['worst']:.4f} "
              f"optimal in {s['optimal_share']:.0%}")


# ---------------------------------------------------------------------------------------------
# pytest-benchmark targets
# ---------------------------------------------------------------------------------------------


def _gpt2_64():
    return worker_graph(Job("b", 0, 64, model="gpt2", parallelism=Parallelism(2, 4, 8),
                            iterations=1), "A100")


def test_count_64_workers_onto_8_servers(benchmark):
    W = _gpt2_64()
    p = benchmark.pedantic(place, args=(W, [8] * 8), kwargs={"method": COUNT}, rounds=5,
                           iterations=1)
    assert p.status == "optimal"
    assert benchmark.stats.stats.median < 1.0


def test_ilp_with_shortcuts_64_workers(benchmark):
    W = _gpt2_64()
    p = benchmark.pedantic(place, args=(W, [8] * 10), rounds=5, iterations=1)
    assert p.status == "optimal"


@pytest.mark.slow
def test_onto_eight_servers_median_under_one_second(benchmark):
    res = benchmark.pedantic(onto_eight_servers, kwargs={"cases": 10}, rounds=1, iterations=1)
    assert res["all_free_8x8"]["median"] < 1.0


@pytest.mark.slow
def test_heuristic_gap_report(benchmark):
    res = benchmark.pedantic(heuristic_gaps, kwargs={"cases": 40}, rounds=1, iterations=1)
    assert all(s["n"] > 0 for s in res["gaps"].values())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--part", choices=["all", "size", "eight", "plain", "gaps", "limit",
                                       "strength", "proof", "patterns"],
                    default="all")
    ap.add_argument("--json", default=None)
    ap.add_argument("--time-limit", type=float, default=30.0,
                    help="seconds per ILP solve (default 30)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="worker processes for the heuristic-gap study (default 1)")
    a = ap.parse_args()
    rep = report(a.cases, a.seed, a.time_limit, a.part, a.jobs)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rep, fh, indent=1, default=str)
    if a.part == "all":
        _print(rep)
    elif a.part == "proof":
        for fam, r in rep["proof"].items():
            for m in ("before", "after"):
                x = r[m]
                g = x["gap_at_limit"]
                print(f"{fam:>10} {m:>6}: proven {x['proven']}/{x['cases']} "
                      f"({x['proven_share']:.0%}), time median {x['time']['median']:.3f} s "
                      f"p95 {x['time']['p95']:.2f} worst {x['time']['worst']:.2f}, gap at limit "
                      f"median {g.get('median', 0):.4f} worst {g.get('worst', 0):.4f}; "
                      f"unproven {x['unproven']}")
            print(f"{fam:>10} root LP gap median {r['root_gap']['median']:.4f} worst "
                  f"{r['root_gap']['worst']:.4f}; pattern bound gap median "
                  f"{r['pattern_gap'].get('median', 0):.4f} worst "
                  f"{r['pattern_gap'].get('worst', 0):.4f}; equal optima "
                  f"{r['equal_optima_when_both_proven']} of {r['both_proven']}; after better cut "
                  f"in {r['after_better_cut']}")
    elif a.part == "patterns":
        for fam, x in rep["patterns"].items():
            g = x["gap_at_limit"]
            print(f"{fam:>10}: proven {x['proven']}/{x['cases']} ({x['proven_share']:.0%}), time "
                  f"median {x['time']['median']:.3f} s p95 {x['time']['p95']:.2f} worst "
                  f"{x['time']['worst']:.2f}, gap at limit median {g.get('median', 0):.4f} "
                  f"worst {g.get('worst', 0):.4f}; unproven {x['unproven']}")
    else:
        print(json.dumps(rep, indent=1, default=str))
