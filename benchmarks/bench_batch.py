"""Throughput of ``asrpt batch --task certify`` on 10,000 small instances, with 1 and 2 workers.

The instances are ``asrpt generate uniform`` series: 5 jobs each, 5,000 on one server of 4 GPUs
and 5,000 on two servers of 2 GPUs (predictions with distortion up to 4, integer data, so the
certificate is exact). Each measurement is one full :func:`asrpt.batch.run_batch` call into a
fresh results file (worker start-up, hashing, one row written and synced per instance
included), on the processes executor. Reported: instances per second for 1 and 2 workers and
the scaling ratio (2-worker rate / 1-worker rate; at most 2 on the 2-core reference machine,
where the runner process shares the cores with the workers).

Run as a benchmark with
``pytest benchmarks/bench_batch.py --benchmark-only -m "slow or not slow" -o addopts=""``,
or as a script: ``python benchmarks/bench_batch.py [--n 10000] [--json FILE]``.
"""

import argparse
import json
import os
import sys
import tempfile
import time

import pytest

from asrpt.batch import read_results, run_batch
from asrpt.workloads.generators import generate_files

N_INSTANCES = 10_000


def make_instances(root: str, n: int = N_INSTANCES) -> list[str]:
    """Two series of n/2 small instances (5 jobs; 1 x 4 and 2 x 2 GPUs); returns their folders."""
    dirs = []
    for cluster in ("1x4", "2x2"):
        d = os.path.join(root, f"uniform-{cluster}")
        generate_files("uniform", d, n=n // 2, seed=2025, n_jobs=5, cluster=cluster,
                       max_processing_time=10, mu=4)
        dirs.append(d)
    return dirs


def measure(dirs: list[str], root: str, jobs: int) -> dict:
    out = os.path.join(root, f"certify-{jobs}.jsonl")
    if os.path.exists(out):
        os.remove(out)
    t = time.perf_counter()
    s = run_batch(dirs, "certify", out=out, jobs=jobs)
    wall = time.perf_counter() - t
    rows = read_results(out)
    assert s.done == len(rows) and s.ok == s.done, (s, rows[:1])
    assert all(r["figures"]["holds"] for r in rows)
    return {"workers": jobs, "instances": s.done, "wall_s": wall, "instances_per_s": s.done / wall}


def run_all(n: int = N_INSTANCES, root: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        t = time.perf_counter()
        dirs = make_instances(tmp, n)
        generated = time.perf_counter() - t
        one = measure(dirs, tmp, 1)
        two = measure(dirs, tmp, 2)
    return {"instances": n, "generate_s": generated, "one_worker": one, "two_workers": two,
            "scaling_ratio": two["instances_per_s"] / one["instances_per_s"],
            "cpus": os.cpu_count()}


@pytest.mark.slow
def test_certify_throughput_1_and_2_workers(benchmark):
    result = benchmark.pedantic(run_all, rounds=1, iterations=1)
    benchmark.extra_info.update({
        "one_worker_per_s": result["one_worker"]["instances_per_s"],
        "two_workers_per_s": result["two_workers"]["instances_per_s"],
        "scaling_ratio": result["scaling_ratio"]})
    print(json.dumps(result, indent=2))
    assert result["one_worker"]["instances"] == result["two_workers"]["instances"] == N_INSTANCES
    assert result["scaling_ratio"] > 1.0  # about 1.2-1.3 measured with a core taken by other work


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=N_INSTANCES, help="instances (default 10,000)")
    p.add_argument("--json", metavar="FILE", help="also write the figures here")
    args = p.parse_args(argv)
    result = run_all(args.n)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
