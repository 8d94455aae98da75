"""Validation time and peak memory of a large valid instance, this tree against a previous one, in one run.

Issue 17 (item 4) measured 108 s and 0.9 GB to validate a valid 50 MB instance. This script
measures, for this tree and for the tree of ``--base`` (a git revision, extracted with ``git
archive`` into a temporary folder, so that both sides run in this session under the same load):

- ``load``: :func:`asrpt.instance.loads_instance` on the whole file's text (default: a ~55 MB
  ``uniform`` instance of 740,000 jobs on 64 x 8 GPUs made by ``asrpt generate``; the library call
  with the format's 16 MiB file limit lifted in that child, as the format refuses such a file), in a
  child process: CPU seconds
  (user + system) of the call, and the child's peak resident memory (``ru_maxrss``) minus its
  resident memory before the call, that is, what validating adds to holding the text;
- ``cli``: ``asrpt validate`` on the largest prefix of the same jobs that fits the 16 MiB limit:
  process CPU seconds and peak resident memory of the whole command.

Each figure is the median of ``--repeat`` runs; the table gives previous / this as a ratio
(above 1: this tree is faster or smaller). The machine is shared, so CPU time, not wall time.

Measured when it was written (issue 17; 2 shared cores, ``--repeat 1``; previous = 3c07eeb, which
validated every job twice): loads_instance of the 55.6 MB file 43.2 -> 23.0 CPU s (1.87x) and
913 -> 433 MiB added (2.11x); ``asrpt validate`` of its 16 MiB prefix (223,281 jobs) 13.1 -> 6.6
CPU s (1.99x) and 303 -> 163 MiB peak (1.86x).

Usage::

    .venv/bin/python benchmarks/bench_validate.py [--file BIG.json] [--repeat 3] [--base REV] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = "3c07eeb"  # the tree before the loader stopped validating every job twice (issue 17)

LOAD_CHILD = r"""
import resource, sys
from types import MappingProxyType
import asrpt.instance as m
# the format refuses files over 16 MiB; lift that one limit here to measure the 50 MB case
m.LIMITS = MappingProxyType({**m.LIMITS, "file_bytes": 2**31})
loads_instance = m.loads_instance
def rss_kb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() // 1024
text = open(sys.argv[1], encoding="utf-8").read()
before = rss_kb()
u0 = resource.getrusage(resource.RUSAGE_SELF)
inst = loads_instance(text)
u1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = (u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime)
print(cpu, max(0, u1.ru_maxrss - before) / 1024, inst.n_jobs)
"""


def child(cmd: list[str], cwd: str) -> tuple[float, float, str]:
    """CPU seconds and peak RSS (MiB) of one child process (its own ``wait4`` usage), and its
    stdout; exits on failure."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"bench_validate: {' '.join(cmd[:4])} ... in {cwd} failed: {err.read().strip()[-300:]}")
        return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


def extract(rev: str, dest: str) -> None:
    archive = subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", rev], capture_output=True)
    if archive.returncode != 0:
        raise SystemExit(f"bench_validate: git archive {rev}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", dest], input=archive.stdout, check=True)


PREFIX_CHILD = r"""
import json, os, sys
big, dest, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(big, encoding="utf-8") as fh:
    data = json.load(fh)
jobs = data["jobs"]
n = min(len(jobs), int(limit / (os.path.getsize(big) / max(1, len(jobs)))))
while True:
    text = json.dumps({**data, "jobs": jobs[:n]}, separators=(",", ":"))
    if len(text.encode()) <= limit:
        break
    n = int(n * 0.98)
with open(dest, "w", encoding="utf-8") as fh:
    fh.write(text)
print(n)
"""


def cli_prefix(big: str, dest: str, limit: int = 16 * 2**20) -> tuple[str, int]:
    """The largest prefix of ``big``'s jobs whose file fits ``limit`` bytes, written to ``dest``
    by a child process: this process stays small, as a child's ``ru_maxrss`` counts the size of
    the process it was forked from."""
    _, _, out = child([sys.executable, "-c", PREFIX_CHILD, big, dest, str(limit)], ROOT)
    return dest, int(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", default=None, help="a valid instance to load (default: generate a ~55 MB one)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure, the median is shown (default 3)")
    ap.add_argument("--base", default=BASE, help=f"git revision of the previous tree (default {BASE})")
    ap.add_argument("--json", default=None, help="also write the table as JSON here")
    args = ap.parse_args(argv)
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-validate-") as tmp:
        base = os.path.join(tmp, "base")
        os.mkdir(base)
        extract(args.base, base)
        trees = {"this": ROOT, "previous": base}
        big = args.file
        if big is None:
            subprocess.run([py, "-m", "asrpt", "generate", "uniform", "--n-jobs", "740000", "--cluster", "64x8",
                            "--out", tmp, "--no-progress"], cwd=ROOT, check=True, capture_output=True)
            big = os.path.join(tmp, "uniform-00000.json")
        small, n_small = cli_prefix(big, os.path.join(tmp, "prefix.json"))
        size_mb = os.path.getsize(big) / 1e6
        rows = []
        for tree in ("this", "previous"):
            loads = [child([py, "-c", LOAD_CHILD, big], trees[tree]) for _ in range(args.repeat)]
            cpu = statistics.median(float(o.split()[0]) for _, _, o in loads)
            mem = statistics.median(float(o.split()[1]) for _, _, o in loads)
            n_jobs = int(loads[0][2].split()[2])
            clis = [child([py, "-m", "asrpt", "validate", small], trees[tree]) for _ in range(args.repeat)]
            rows.append({"tree": tree, "load_cpu_s": cpu, "load_added_mib": mem,
                         "cli_cpu_s": statistics.median(c for c, _, _ in clis),
                         "cli_peak_mib": max(m for _, m, _ in clis)})
            print(f"  {tree}: {rows[-1]}", file=sys.stderr, flush=True)
    this, prev = rows
    print(f"load: {size_mb:.1f} MB, {n_jobs} jobs; cli: 16 MiB prefix, {n_small} jobs; median of {args.repeat}")
    print(f"{'figure':<32}  {'this':>9}  {'previous':>9}  {'ratio':>6}")
    for key, name in (("load_cpu_s", "loads_instance CPU s"), ("load_added_mib", "loads_instance added RSS MiB"),
                      ("cli_cpu_s", "asrpt validate CPU s"), ("cli_peak_mib", "asrpt validate peak RSS MiB")):
        ratio = prev[key] / this[key] if this[key] else float("inf")
        print(f"{name:<32}  {this[key]:>9.2f}  {prev[key]:>9.2f}  {ratio:>5.2f}x")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"base": args.base, "repeat": args.repeat, "file_mb": size_mb, "jobs": n_jobs,
                       "cli_jobs": n_small, "rows": rows}, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
