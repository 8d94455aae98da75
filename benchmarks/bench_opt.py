"""The offline optimum: time to proof against n, and bracket width at a time limit, new against old.

Two measurements on generated ``uniform`` instances (``asrpt generate uniform``: integer sizes 1..10,
arrival gaps 0..5, GPU demands uniform in 1..M, unit weights; seeds 0, 1, 2, ... not chosen):

1. **Time to proof.** For n in ``--proof-sizes`` on each cluster of ``--clusters`` (default 2x4
   and 4x8), :func:`asrpt.offline.offline_opt` with ``--proof-limit`` seconds: whether OPT was
   closed, in how long, and by what (``exact`` or ``mip``).
2. **Bracket width.** For n in ``--gap-sizes`` (default 20, 40, 80, 160 on 4x8), the relative gap
   ``(U - L) / U`` at ``--gap-limit`` seconds, beside the *old* bracket: ``max(LB1, LB2, LB_MBT)``
   against the best of the slotted ILP (given the same seconds) and the greedy schedule, which is
   what ``offline_opt`` reported before the exact search and the configuration LP existed.

Every run is one process call in sequence on this machine; times are wall seconds of the call
(the machine is shared: compare within one run). Prints markdown tables; ``--out FILE`` writes
every row as JSON.

    python benchmarks/bench_opt.py                       # the full run (about 40 minutes)
    python benchmarks/bench_opt.py --quick               # n <= 8 and 20 / 40 jobs, 10 s limits
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from asrpt.errors import SolverError
from asrpt.offline import auto_slot, lower_bounds, offline_opt, schedule_problems, slotted_ilp
from asrpt.offline.opt import _greedy_schedule
from asrpt.workloads import uniform_instance


def old_bracket(inst, time_limit: float) -> tuple:
    """The bracket as it was: the cheap lower bounds against the slotted ILP's or greedy schedule."""
    lower = lower_bounds(inst).best
    upper, _ = _greedy_schedule(inst)
    try:
        ilp = slotted_ilp(inst, slot=auto_slot(inst), time_limit=time_limit)
        if ilp.cost is not None and ilp.cost < upper:
            upper = ilp.cost
    except (SolverError, ValueError) as e:  # a grid too large, or HiGHS failing
        print(f"  (old ILP: {e})", file=sys.stderr)
    return lower, upper


def _timed_opt(n, cluster, seed, limit):
    """The seeded uniform instance, its ``offline_opt`` result and the wall seconds it took."""
    inst = uniform_instance(n, cluster=cluster, seed=seed)
    t = time.perf_counter()
    r = offline_opt(inst, time_limit=limit)
    return inst, r, time.perf_counter() - t


def proof_rows(sizes, clusters, seeds, limit) -> list:
    rows = []
    for cluster in clusters:
        for n in sizes:
            for seed in range(seeds):
                inst, r, wall = _timed_opt(n, cluster, seed, limit)
                assert schedule_problems(inst, r.schedule, exact=True) == []
                rows.append({"kind": "proof", "cluster": cluster, "n": n, "seed": seed,
                             "closed": r.closed, "proof": r.proof, "wall": wall,
                             "gap": float(r.gap), "lower": float(r.lower_bound),
                             "upper": float(r.upper_bound), "lower_source": r.lower_source})
                print(f"  {cluster} n={n} seed={seed}: {'closed' if r.closed else 'open'} "
                      f"in {wall:.2f} s (gap {float(r.gap):.2%})", file=sys.stderr, flush=True)
    return rows


def gap_rows(sizes, cluster, seeds, limit) -> list:
    rows = []
    for n in sizes:
        for seed in range(seeds):
            inst, r, wall = _timed_opt(n, cluster, seed, limit)
            lo, up = old_bracket(inst, limit)
            old_gap = float((up - lo) / up)
            rows.append({"kind": "gap", "cluster": cluster, "n": n, "seed": seed, "wall": wall,
                         "gap": float(r.gap), "lower": float(r.lower_bound),
                         "upper": float(r.upper_bound), "lower_source": r.lower_source,
                         "upper_source": r.upper_source, "old_gap": old_gap,
                         "old_lower": float(lo), "old_upper": float(up)})
            print(f"  {cluster} n={n} seed={seed}: gap {float(r.gap):.2%} (old {old_gap:.2%}) "
                  f"in {wall:.1f} s", file=sys.stderr, flush=True)
    return rows


def report(rows) -> str:
    out = []
    proofs = [r for r in rows if r["kind"] == "proof"]
    if proofs:
        out += ["| cluster | n | closed | median s (closed) | max s (closed) | median gap (open) |",
                "|---|---|---|---|---|---|"]
        keys = sorted({(r["cluster"], r["n"]) for r in proofs}, key=lambda k: (k[0], k[1]))
        for cluster, n in keys:
            sel = [r for r in proofs if (r["cluster"], r["n"]) == (cluster, n)]
            closed = [r["wall"] for r in sel if r["closed"]]
            open_gaps = [r["gap"] for r in sel if not r["closed"]]
            out.append(f"| {cluster} | {n} | {len(closed)}/{len(sel)} | "
                       f"{statistics.median(closed):.2f} | {max(closed):.2f} | " if closed else
                       f"| {cluster} | {n} | 0/{len(sel)} | - | - | ")
            out[-1] += f"{statistics.median(open_gaps):.2%} |" if open_gaps else "- |"
        out.append("")
    gaps = [r for r in rows if r["kind"] == "gap"]
    if gaps:
        out += ["| cluster | n | median gap, new | max gap, new | median gap, old | lower side from |",
                "|---|---|---|---|---|---|"]
        for cluster, n in sorted({(r["cluster"], r["n"]) for r in gaps}, key=lambda k: k[1]):
            sel = [r for r in gaps if (r["cluster"], r["n"]) == (cluster, n)]
            srcs = sorted({r["lower_source"] for r in sel})
            out.append(f"| {cluster} | {n} | {statistics.median(r['gap'] for r in sel):.2%} | "
                       f"{max(r['gap'] for r in sel):.2%} | "
                       f"{statistics.median(r['old_gap'] for r in sel):.2%} | {', '.join(srcs)} |")
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--proof-sizes", default="4,5,6,8,10,12,16,20")
    p.add_argument("--gap-sizes", default="20,40,80,160")
    p.add_argument("--clusters", default="2x4,4x8")
    p.add_argument("--gap-cluster", default="4x8")
    p.add_argument("--seeds", type=int, default=6, help="instances per size for the proofs (default 6)")
    p.add_argument("--gap-seeds", type=int, default=3, help="instances per size for the gaps (default 3)")
    p.add_argument("--proof-limit", type=float, default=60.0)
    p.add_argument("--gap-limit", type=float, default=60.0)
    p.add_argument("--quick", action="store_true", help="n <= 8, 20 and 40 jobs, 10 s limits")
    p.add_argument("--out", default=None, help="write every row as JSON to this file")
    args = p.parse_args(argv)
    if args.quick:
        args.proof_sizes, args.gap_sizes, args.proof_limit, args.gap_limit = "4,6,8", "20,40", 10.0, 10.0
        args.seeds, args.gap_seeds = 3, 2
    sizes = [int(x) for x in args.proof_sizes.split(",") if x]
    gsizes = [int(x) for x in args.gap_sizes.split(",") if x]
    rows = proof_rows(sizes, args.clusters.split(","), args.seeds, args.proof_limit)
    rows += gap_rows(gsizes, args.gap_cluster, args.gap_seeds, args.gap_limit)
    print(report(rows))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
