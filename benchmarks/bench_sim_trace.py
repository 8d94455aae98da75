"""Whole-trace simulation speed and memory (issue 5 targets: < 60 s and < 2 GiB per policy for the
82,247-job Philly trace on this 2-core machine).

Each policy runs in its own subprocess so that its peak resident memory (ru_maxrss) is its own.
The per-job wall time of the first and last tenth of completions shows whether a decision's cost
grows with the number of finished jobs.

    .venv/bin/python benchmarks/bench_sim_trace.py [--policies a-srpt,fifo] [--cluster 64x8] [--dnn]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
from asrpt.instance import Cluster
from asrpt.sim import simulate
from asrpt.traces import read_philly
policy, spec, dnn = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
t0 = time.perf_counter()
inst, report = read_philly(cluster=Cluster.from_spec(spec), dnn=dnn)
load = time.perf_counter() - t0
marks = []
def progress(done, total):
    marks.append((done, time.perf_counter()))
t0 = time.perf_counter()
res = simulate(inst, policy, progress=progress)
wall = time.perf_counter() - t0
n = inst.n_jobs
def rate(lo, hi):
    pts = [(d, t) for d, t in marks if lo * n <= d <= hi * n]
    return (pts[-1][1] - pts[0][1]) / max(1, pts[-1][0] - pts[0][0]) if len(pts) > 1 else None
print(json.dumps({"policy": policy, "jobs": n, "load_s": load, "wall_s": wall,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "decision_passes": res.summary["decision_passes"],
                  "us_per_job_first_tenth": 1e6 * (rate(0.0, 0.1) or 0),
                  "us_per_job_last_tenth": 1e6 * (rate(0.9, 1.0) or 0),
                  "mean_jct": res.summary["mean_jct"], "p99_jct": res.summary["p99_jct"]}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policies", default="a-srpt,fifo")
    ap.add_argument("--cluster", default="64x8")
    ap.add_argument("--dnn", action="store_true", help="give trace jobs DNN models (asrpt.traces.assign)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for policy in args.policies.split(","):
        out = subprocess.run([sys.executable, "-c", CHILD, policy, args.cluster, "1" if args.dnn else "0"],
                             capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'policy':12s} {'jobs':>6s} {'load s':>7s} {'sim s':>7s} {'peak MiB':>9s} {'passes':>8s} "
          f"{'us/job 1st 10%':>15s} {'us/job last 10%':>16s}")
    for r in rows:
        print(f"{r['policy']:12s} {r['jobs']:6d} {r['load_s']:7.1f} {r['wall_s']:7.1f} {r['peak_rss_mib']:9.0f} "
              f"{r['decision_passes']:8d} {r['us_per_job_first_tenth']:15.0f} {r['us_per_job_last_tenth']:16.0f}")


if __name__ == "__main__":
    main()
