"""Speed figures of issue 18 in one table, each against its peer or its previous value, in one run.

Every figure is CPU seconds (user + system, ``resource.getrusage``; the machine is shared, so
wall times are noisy), the median of ``--repeat`` runs. "Previous" is the same measurement on the
tree of ``--base`` (a git revision, default the commit the latest round of issue 18 started from),
extracted with ``git archive`` into a temporary folder and run from there, so that both sides run
in this process's session under the same load. The PAI peer's times are not measured here (its
code is not part of this repository; benchmarks/bench_peer_speed.py runs it when given its files):
they are the figures issue 18 records for it (FIFO first-fit on the 20,000-job window: 117.6 s on
64 x 8 GPUs, 45.0 s on one 6,500-GPU node).

Rows:

- ``asrpt --version`` and ``asrpt validate instances/small-cluster.json``: process CPU, this tree
  against the base (target: under 0.3 s);
- ``asrpt simulate`` on the 20,000-job PAI window (built from philly.csv as bench_peer_speed.py
  does) with ``--out``: FIFO and SJF on 64 x 8 and on one flat node, process CPU end to end,
  against the base and, for FIFO on 64 x 8, against the peer (target: under 1 s; >= 100x the peer;
  the flat node runs as 1 x 4096, the format's largest server until the limit became 65,536, see FLAT); the files written (per-job
  CSV, summary.json and comparison.csv, their wall times left out) must be byte-identical between
  the trees, else the benchmark fails;
- ``read_pai`` of the same window, in a child process of each tree (the load alone);
- one call of a ``validate_params``-decorated function of three parameters, microseconds per
  call, each tree;
- SRSF, Themis, Gavel, Tiresias (2D-LAS) and Tiresias-Gittins on ``--rank-jobs`` Philly jobs (the bundled window, abstract) on
  ``--rank-cluster`` (default 64 x 8):
  the incremental rankings against the plain reference policies of asrpt/policies/reference/,
  in one child process of this tree per policy (whole simulation CPU; identical decisions are the
  tests' business, equal mean JCTs are checked here);
- ``asrpt run``, policy by policy (``--run-policies``, default the command's eight, each with the
  ``hierarchy`` predictor where it takes one, as the command gives them) on the first
  ``--run-jobs`` jobs of the bundled window (default all 20,000) with DNN jobs on 64 x 8, and
  their sum: the simulation CPU of each policy in one child process per tree and policy (reading
  the trace not counted), the trees taking turns policy by policy, this tree against the base; the per-job CSV and the result's
  JSON (its wall time left out) must be byte-identical between the trees, else the benchmark
  fails, except for the policies ``--rounding`` names (a change that moves float wake-up times
  by rounding), whose mean JCTs are reported instead (target: the sum plus loading under 15 s);
- ``--whole``: the same per policy on the whole Philly trace (``traces/philly-pollux-processed/
  philly.csv`` under ``ASRPT_SHARED``) with DNN jobs on 64 x 8, this tree only, against the
  target of 30 s each (``--whole-policies``: a list, or ``all`` for every registered policy;
  ``--whole-base`` also runs the base tree, for ratios: slow).

Both trees are byte-compiled first (``compileall``): with ``PYTHONDONTWRITEBYTECODE`` set, as on
the shared machine, every process would otherwise compile each module it imports.

docs/speed.md is the record of issue 18: the targets with their latest figures, what each round
built, and what was tried and not kept. The round-by-round figures, with their commands, are in
this file's history (``git log -p benchmarks/bench_speed.py``, up to b34c17c).

(Each run row is one child process per policy, so each pays the performance model's first
evaluations of its placements; ``asrpt run`` itself runs the eight in one process, which shares them.)

Usage::

    .venv/bin/python benchmarks/bench_speed.py [--repeat 3] [--base REV] [--rank-jobs 10000] [--rank-cluster 64x8]
        [--only version,validate,simulate,load,params,srsf,themis,gavel,tiresias,gittins,run]
        [--run-jobs N] [--run-policies P,...] [--whole [--whole-policies P,...|all] [--whole-base]]
        [--rounding P,...] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # this tree's asrpt, not whichever the environment has installed

BASE = "b34c17c"  # main before issue 18's closing round (the earlier rounds' bases: docs/speed.md)
PEER_FIFO = {"64x8": 117.6, "6500": 45.0}  # issue 18's measured PAI-simulator seconds (not re-run)
PARTS = ("version", "validate", "simulate", "load", "params", "srsf", "themis", "gavel", "tiresias", "gittins",
         "run")
RUN_POLICIES = "a-srpt,srsf,sjf,qssf,tiresias,gavel,themis,fifo"  # asrpt run's (asrpt/cli/run.py)
WHOLE_TARGET = 30.0  # issue 18: every policy on the whole Philly trace with DNN jobs under 30 s of CPU
# ranking rows: part -> (module, class, reference class in asrpt.policies.reference, file)
RANKED = {"srsf": ("srsf", "SRSF", "ReferenceSRSF", "srsf"),
          "themis": ("themis", "Themis", "ReferenceThemis", "themis"),
          "gavel": ("gavel", "Gavel", "ReferenceGavel", "gavel"),
          "tiresias": ("tiresias", "Tiresias", "ReferenceTiresias", "tiresias"),
          "gittins": ("gittins", "TiresiasGittins", "ReferenceTiresiasGittins", "tiresias")}
# The flat node: the PAI peer's figure is for one 6,500-GPU node. The instance format held at most
# 4,096 GPUs per server until the limit was raised to 65,536 (asrpt.instance.LIMITS), so the row
# recorded in docs/speed.md is 1 x 4096; it stays so, to compare with base trees from before the
# change (which refuse 1 x 6500). The row is compared with the previous tree only.
FLAT = "1x4096"

LOAD_CHILD = r"""
import resource, sys
from asrpt.instance import Cluster
from asrpt.traces import read_pai
u0 = resource.getrusage(resource.RUSAGE_SELF)
inst, report = read_pai(sys.argv[1], cluster=Cluster.from_spec("64x8"))
u1 = resource.getrusage(resource.RUSAGE_SELF)
print((u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime), inst.n_jobs)
"""

PARAMS_CHILD = r"""
import resource
from asrpt._validation import Interval, validate_params
@validate_params({"a": [Interval(int, 0, None)], "b": [Interval(float, 0, 1)], "c": ["boolean"]})
def f(a, b=0.5, *, c=False):
    return a
n = 200000
u0 = resource.getrusage(resource.RUSAGE_SELF)
for i in range(n):
    f(i, 0.25, c=True)
u1 = resource.getrusage(resource.RUSAGE_SELF)
print(((u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime)) / n * 1e6)
"""

RANK_CHILD = r"""
import resource, sys
from importlib import resources
from asrpt.instance import Cluster
from asrpt.sim import simulate
from asrpt.traces import read_philly
import importlib
module, cls_name, ref_name, ref_file = sys.argv[2].split(",")
new = getattr(importlib.import_module(f"asrpt.policies.{module}"), cls_name)
old = getattr(importlib.import_module("asrpt.policies.reference"), ref_name)
path = str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
inst, _ = read_philly(path, limit=int(sys.argv[1]), cluster=Cluster.from_spec(sys.argv[3]), dnn=False)
out = []
for cls in (new, old):
    u0 = resource.getrusage(resource.RUSAGE_SELF)
    r = simulate(inst, cls())
    u1 = resource.getrusage(resource.RUSAGE_SELF)
    out.append(((u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime), r.summary["mean_jct"]))
print(out[0][0], out[1][0], out[0][1], out[1][1])
"""


RUN_CHILD = r"""
import hashlib, json, resource, sys
from importlib import resources
from asrpt.instance import Cluster
from asrpt.traces.philly import read_philly
from asrpt.cli.simulate import policies_from
from asrpt.sim import simulate
from asrpt._json import jsonable
trace, limit, policies = sys.argv[1], int(sys.argv[2]), sys.argv[3]
path = trace or str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
inst, _ = read_philly(path, limit=limit or None, cluster=Cluster.from_spec("64x8"), dnn=True, seed=0)
for label, policy in policies_from(policies, "hierarchy"):
    u0 = resource.getrusage(resource.RUSAGE_SELF)
    r = simulate(inst, policy, label=label, seed=0)
    u1 = resource.getrusage(resource.RUSAGE_SELF)
    d = r.to_dict()
    d["summary"] = {k: v for k, v in d["summary"].items() if k != "wall_time"}
    text = r.jobs_csv() + json.dumps(jsonable(d), sort_keys=True, allow_nan=False)
    print(label, (u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime),
          hashlib.sha256(text.encode()).hexdigest(), repr(r.summary["mean_jct"]), flush=True)
"""


def run_policies(py: str, tree: str, trace: str, limit: int, policies: str) -> dict:
    """{label: (CPU s, output hash, mean JCT)} of each policy of ``policies`` in one child of
    ``tree``."""
    out = child_cpu([py, "-c", RUN_CHILD, trace, str(limit), policies], tree)[1]
    rows = {}
    for line in out.splitlines():
        label, cpu, digest, mean_jct = line.split()
        rows[label] = (float(cpu), digest, float(mean_jct))
    return rows


def same_outputs(where: str, label: str, ours: tuple, ref: tuple, rounding: set) -> None:
    """Exit unless the two runs' outputs are byte-identical; for a policy in ``rounding`` (one
    whose change this round moves float results by rounding) report the mean JCTs instead."""
    if ours[1] == ref[1]:
        return
    if label.split("[")[0] not in rounding:
        raise SystemExit(f"bench_speed: {where} {label}: the outputs differ from the base's")
    print(f"  {where} {label}: outputs differ by rounding (allowed): mean JCT {ours[2]!r} against {ref[2]!r} "
          f"({(ours[2] - ref[2]) / ref[2]:+.2e} relative)", file=sys.stderr, flush=True)


def child_cpu(cmd: list[str], cwd: str) -> tuple[float, str]:
    """CPU seconds of one child process (user + system) and its stdout; exits on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"bench_speed: {' '.join(cmd[:4])} ... in {cwd} failed: {proc.stderr.strip()[-300:]}")
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), proc.stdout


def sim_outputs(out_dir: str) -> dict:
    """What ``asrpt simulate --out`` wrote to ``out_dir``, less its wall times (summary.json's
    ``wall_time`` and comparison.csv's last column): each file's text by name, for the
    byte-identical check between the trees."""
    files = {}
    for name in sorted(os.listdir(out_dir)):
        with open(os.path.join(out_dir, name), encoding="utf-8") as fh:
            text = fh.read()
        if name == "summary.json":
            data = json.loads(text)
            for result in data["results"]:
                result["summary"].pop("wall_time", None)
            text = json.dumps(data, sort_keys=True)
        elif name == "comparison.csv":
            text = "\n".join(line.rsplit(",", 1)[0] for line in text.splitlines())
        files[name] = text
    return files


def compile_tree(py: str, tree: str) -> None:
    """Byte-compile ``tree``'s package once, so that no measured process spends its time compiling
    (with ``PYTHONDONTWRITEBYTECODE`` set, as on the shared machine, every process otherwise
    compiles every module it imports from source)."""
    subprocess.run([py, "-m", "compileall", "-q", os.path.join(tree, "asrpt")], check=True,
                   capture_output=True)


def median_of(repeat: int, fn) -> float:
    return statistics.median(fn() for _ in range(repeat))


def extract(rev: str, dest: str) -> None:
    """The tree of ``rev`` in ``dest`` (git archive), so that it runs from its own folder."""
    archive = subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", rev], capture_output=True)
    if archive.returncode != 0:
        raise SystemExit(f"bench_speed: git archive {rev}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", dest], input=archive.stdout, check=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure, the median is shown (default 3)")
    ap.add_argument("--base", default=BASE, help=f"git revision of the previous implementation (default {BASE})")
    ap.add_argument("--rank-jobs", type=int, default=10000,
                    help="Philly jobs for the SRSF, Themis and Gavel rows (default 10,000)")
    ap.add_argument("--rank-cluster", default="64x8",
                    help="cluster of those rows (default 64x8; a smaller one, e.g. 16x8, gives deep queues)")
    ap.add_argument("--only", default=",".join(PARTS), help="comma-separated parts, from: " + ", ".join(PARTS))
    ap.add_argument("--run-jobs", type=int, default=0,
                    help="jobs of the bundled window for the asrpt run rows (default 0: all 20,000)")
    ap.add_argument("--run-policies", default=RUN_POLICIES, help=f"policies of those rows (default {RUN_POLICIES})")
    ap.add_argument("--whole", action="store_true",
                    help="also run each --whole-policies policy on the whole Philly trace with DNN jobs")
    ap.add_argument("--whole-policies", default=RUN_POLICIES,
                    help=f"policies of the --whole rows, or 'all' (default {RUN_POLICIES})")
    ap.add_argument("--whole-base", action="store_true", help="run the --whole rows on the base tree too")
    ap.add_argument("--rounding", default="",
                    help="policies whose outputs may differ from the base's by float rounding (a change "
                         "that moves wake-up times by ulps): their mean JCTs are reported instead of failing")
    ap.add_argument("--json", default=None, help="also write the table as JSON here")
    args = ap.parse_args(argv)
    rounding = {p for p in args.rounding.split(",") if p}
    parts = {p for p in args.only.split(",") if p}  # --only "" with --whole: the whole-trace rows alone
    if parts - set(PARTS):
        ap.error(f"unknown part(s) {sorted(parts - set(PARTS))}")
    from asrpt.traces import shared_path
    from asrpt.traces.base import missing_file_message

    philly = shared_path("traces", "philly-pollux-processed", "philly.csv")  # the whole trace, the PAI window's source
    if (args.whole or parts & {"simulate", "load"}) and not os.path.isfile(philly):  # before minutes of other rows
        raise SystemExit(f"bench_speed: {missing_file_message(philly)}")
    py = sys.executable
    rows: list[tuple[str, float, float, str]] = []  # figure, this, reference, reference name

    def add(figure, ours, ref, ref_name):
        rows.append((figure, ours, ref, ref_name))
        print(f"  {figure}: {ours:.3f} against {ref:.3f} ({ref_name})", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-speed-") as tmp:
        base = os.path.join(tmp, "base")
        os.mkdir(base)
        extract(args.base, base)
        trees = {"this": ROOT, "previous": base}
        for tree in trees.values():   # both trees import compiled modules, as an installed package does
            compile_tree(py, tree)

        def cli(tree, *argv):
            return median_of(args.repeat, lambda: child_cpu([py, "-m", "asrpt", *argv], trees[tree])[0])

        if "version" in parts:
            add("asrpt --version (CPU s)", cli("this", "--version"), cli("previous", "--version"), "previous")
        small = os.path.join(ROOT, "instances", "small-cluster.json")
        if "validate" in parts:
            add("asrpt validate small-cluster.json (CPU s)", cli("this", "validate", small),
                cli("previous", "validate", small), "previous")
        csv_path = os.path.join(tmp, "pai-20000.csv")
        if parts & {"simulate", "load"}:
            sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
            import bench_peer_speed as peer

            peer.write_csv(peer.build_window(philly, 40000, 20000), csv_path)
        if "simulate" in parts:
            for spec in ("64x8", FLAT):
                for policy in ("fifo", "sjf-duration"):
                    def argv(tree):
                        return ["simulate", csv_path, "--format", "pai", "--cluster", spec, "--policy", policy,
                                "--placement", "first_fit", "--out", os.path.join(tmp, f"out-{tree}")]
                    ours = cli("this", *argv("this"))
                    add(f"simulate 20k PAI {policy} {spec} (CPU s)", ours, cli("previous", *argv("previous")),
                        "previous")
                    if sim_outputs(os.path.join(tmp, "out-this")) != sim_outputs(os.path.join(tmp, "out-previous")):
                        raise SystemExit(f"bench_speed: simulate {policy} {spec}: the outputs differ from the base's")
                    if policy == "fifo" and spec in PEER_FIFO:
                        add(f"simulate 20k PAI {policy} {spec} (CPU s)", ours, PEER_FIFO[spec], "PAI peer (issue 18)")
        if "load" in parts:
            def load(tree):
                return median_of(args.repeat, lambda: float(child_cpu([py, "-c", LOAD_CHILD, csv_path],
                                                                      trees[tree])[1].split()[0]))
            add("read_pai 20k jobs (CPU s)", load("this"), load("previous"), "previous")
        if "params" in parts:
            def params(tree):
                return median_of(args.repeat, lambda: float(child_cpu([py, "-c", PARAMS_CHILD], trees[tree])[1]))
            add("validate_params call (CPU us)", params("this"), params("previous"), "previous")
        for name, spec in RANKED.items():
            if name in parts:
                out = child_cpu([py, "-c", RANK_CHILD, str(args.rank_jobs), ",".join(spec), args.rank_cluster],
                                ROOT)[1].split()
                if out[2] != out[3]:
                    raise SystemExit(f"bench_speed: {name} runs disagree (mean JCT {out[2]} against {out[3]})")
                add(f"{name} {args.rank_jobs} Philly jobs {args.rank_cluster} (CPU s)", float(out[0]), float(out[1]),
                    "previous (reference copy)")

        if "run" in parts:
            jobs = args.run_jobs or 20000
            ours, ref = {}, {}
            for name in args.run_policies.split(","):   # the trees take turns: a load change hits both
                ours.update(run_policies(py, ROOT, "", args.run_jobs, name))
                ref.update(run_policies(py, base, "", args.run_jobs, name))
            for label, row in ours.items():
                same_outputs("asrpt run", label, row, ref[label], rounding)
                add(f"asrpt run {label} {jobs} jobs DNN 64x8 (CPU s)", row[0], ref[label][0], "previous")
            add(f"asrpt run, {len(ours)} policies, sum (CPU s)", sum(r[0] for r in ours.values()),
                sum(r[0] for r in ref.values()), "previous")
        if args.whole:
            names = args.whole_policies
            if names == "all":
                from asrpt.policies import policy_names

                names = ",".join(policy_names())
            for name in names.split(","):   # one child per policy: a failure names its policy
                ours = run_policies(py, ROOT, philly, 0, name)
                (label, row), = ours.items()
                cpu = row[0]
                if args.whole_base:
                    ref_row, = run_policies(py, base, philly, 0, name).values()
                    same_outputs("whole trace", label, row, ref_row, rounding)
                    add(f"whole Philly {label} DNN 64x8 (CPU s)", cpu, ref_row[0], "previous")
                else:
                    add(f"whole Philly {label} DNN 64x8 (CPU s)", cpu, WHOLE_TARGET, "target")

    width = max(len(r[0]) for r in rows) if rows else 10
    print(f"{'figure':<{width}}  {'this':>9}  {'reference':>9}  {'ratio':>7}  reference")
    for figure, ours, ref, name in rows:
        print(f"{figure:<{width}}  {ours:>9.3f}  {ref:>9.3f}  {ref / ours if ours else float('inf'):>6.1f}x  {name}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"base": args.base, "repeat": args.repeat,
                       "rows": [{"figure": f, "this": o, "reference": r, "reference_name": n,
                                 "ratio": (r / o if o else None)} for f, o, r, n in rows]}, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
