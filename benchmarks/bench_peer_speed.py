"""Speed of asrpt against the Alibaba PAI GPU-2020 simulator (the peer of tests/sim/test_peer_alibaba.py).

Target (issue 9): on a 20,000-job Philly window on 64 x 8 GPUs, asrpt at least 20x faster than the
peer for FIFO-ff and SJF-ff (pack placement), with identical decisions.

The window is built from ../shared/traces/philly-pollux-processed/philly.csv exactly as
../shared/peer-alibaba/SOURCE.txt describes philly-40000-2000.csv: rows sorted by (timestamp, file
order), ranks start..start+n-1, job_id = rank in the window, user = the virtual cluster, submit_time =
integer seconds after the window's first job, duration = integer seconds, num_inst / num_gpu by the
largest-divisor-<=-8 rule, num_cpu = 0, philly_row = the 0-based data row. It is written to a
temporary PAI-format CSV that both simulators read. With the default window (start 40,000) its first
2,000 rows are checked to be byte-identical to the shipped philly-40000-2000.csv, and the jobs are
checked against ``asrpt.traces.read_philly(..., gang="server")``.

Timed, in one run, for each configuration:
- asrpt: ``read_pai`` of the CSV + ``simulate`` (in this process; the simulate part is also shown);
- the peer, when ``--peer-dir`` names a folder holding its files (simulator.py, cluster.py, node.py,
  scheduler.py, job_history.py, utils.py of alibaba/clusterdata cluster-trace-gpu-v2020/simulator/,
  unmodified; they are not part of this repository): run in a subprocess through its ``Simulator``
  class with the arguments run_simulator.py passes, except the trace-specific ones (arrival_rate=-1:
  the file's submit times; num_nodes=64 nodes of the default 8 GPUs; pattern=0: constant capacity;
  num_spare_node=0; alloc_policy 8 = FIFO or 0 = SJF; sort_node_policy 0 = pack). "peer s" is the
  time of ``Simulator(...)`` (which reads the CSV) + ``simulator_go()`` measured inside the
  subprocess; the subprocess wall time (interpreter start, numpy/matplotlib imports, output) is
  shown too. Every job's start, finish and placement must agree.
- ``--flat GPUS``: one node of GPUS GPUs instead (the peer's one-big-node mode, ``num_nodes=1,
  num_gpus=GPUS``; asrpt's one server, at most 65,536 GPUs, the instance format's limit), the same
  checks. The peer's figures in issue 18 are for 6,500 GPUs: ``--flat 6500`` runs that node itself.
  (Before the limit was raised from 4,096, ``--flat 4096`` stood in for it: the peer's time there
  is the same, 51.9 s against 52.5 s for FIFO, 2026-12-05.)

Second peer (issue 19): the Tiresias simulator (NSDI'19; SymbioticLab/Tiresias, folder
simulator/). Target: the same window under ``tiresias-peer`` on 64 x 8 at least 20x faster than the
peer's own CPU time (86 s for dlas-gpu and 115 s for fifo with yarn, measured on this kind of
machine when the issue was filed), with identical decisions. With ``--tiresias`` the window is also
written in the Tiresias format (job_id = rank, num_gpu, submit_time, iterations = duration,
model_name = resnet50, duration, interval = 0, philly_row; model_name and interval never change the
peer's decisions), its first 2,000 jobs are checked against the shipped
../shared/peer-tiresias/input_philly-40000-2000.csv, and asrpt is timed (``read_tiresias`` +
``simulate``) for ``dlas-gpu`` (``tiresias-peer`` on one pool of 512 GPUs, the peer's count scheme)
and ``fifo-yarn`` (``fifo-strict`` with the ``yarn`` placer on 1 x 64 x 8). With
``--tiresias-dir`` naming the peer's simulator folder (run_sim.py and its modules; the unmodified
code needs Python 2.7, give it with ``--tiresias-python``, or a Python 3 port), the peer runs in a
subprocess (``run_sim.py --schedule --scheme --trace_file --cluster_spec --log_path``, in its folder
so that it finds yarn-gput1000.csv); "peer cpu" is the subprocess's CPU time (getrusage), and every
job's first start, finish and preemption count in its job.csv must agree.

Usage::

    .venv/bin/python benchmarks/bench_peer_speed.py [--peer-dir /tmp/peer-sim] [--jobs 20000]
        [--start 40000] [--flat 6500] [--json out.json] [--tiresias] [--tiresias-dir /tmp/Tiresias/simulator]
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import hashlib
import io
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

from asrpt.instance import LIMITS, Cluster, Server
from asrpt.sim import simulate
from asrpt.traces import read_pai, read_philly, read_tiresias, shared_path
from asrpt.traces.base import missing_file_message
from asrpt.traces.philly import gang_instances

PHILLY = shared_path("traces", "philly-pollux-processed", "philly.csv")
SHIPPED = shared_path("peer-alibaba", "philly-40000-2000.csv")
SHIPPED_SHA256 = "a6dcd71630a897ffab692e9a2efb79c99db12988fc1c5f1617c8776cc3d540a9"
HEADER = ["job_id", "user", "submit_time", "duration", "num_inst", "num_gpu", "num_cpu", "philly_row"]

# configuration -> (peer alloc_policy, asrpt policy spec); both with pack placement ("first_fit")
CONFIGS = {"fifo-ff": (8, "fifo"), "sjf-ff": (0, "sjf-duration")}

# Run inside the subprocess, with the peer's folder first on sys.path. Our code: it only calls the
# peer's Simulator class and writes each job's start, finish and placement as JSON.
PEER_DRIVER = r"""
import json, logging, sys, time
peer_dir, csv_file, n_rows, n_nodes, alloc_policy, out, flat_gpus = sys.argv[1:8]
flat = int(flat_gpus)  # 0: n_nodes nodes of 8 GPUs; else the peer's one-big-node mode with this many GPUs
# (its CPUs are never short: the window's jobs ask for none)
sys.path.insert(0, peer_dir)
logging.basicConfig(level=logging.WARNING, format="%(message)s")
from simulator import Simulator
t0, c0 = time.perf_counter(), time.process_time()
sim = Simulator(csv_file=csv_file, alloc_policy=int(alloc_policy), preempt_policy=2, sort_node_policy=0,
                num_nodes=1 if flat else int(n_nodes), random_seed=42, max_time=int(1e9), num_spare_node=0,
                pattern=0, hetero=False, num_gpus=flat or None, num_cpus=(96 * flat) if flat else None,
                describe_file=None, log_file=None,
                export_job_stats=False, export_cluster_util=False, arrival_rate=-1,
                num_jobs_limit=int(n_rows), gpu_type_matching=0, verbose=0)
result = sim.simulator_go(repeat=1)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
jobs = {}
for inst in sim.cluster.job_history.job_done_list:
    finish = inst["submit_time"] + inst["jct"]
    j = jobs.setdefault(str(inst["job_id"]), {"start": finish - inst["duration"], "finish": finish, "nodes": {},
                                              "n": 0, "num_inst": inst["num_inst"]})
    assert (j["start"], j["finish"]) == (finish - inst["duration"], finish)
    node = 0 if flat else inst["node"]  # the big node is the peer's node 1, asrpt's server 0
    j["nodes"][node] = j["nodes"].get(node, 0) + inst["num_gpu"] // 100
    j["n"] += 1
decisions = {}
for job_id, j in jobs.items():
    assert j["n"] == j["num_inst"], job_id
    decisions[job_id] = [j["start"], j["finish"], ";".join("%d:%d" % kv for kv in sorted(j["nodes"].items()))]
with open(out, "w") as fh:
    json.dump({"seconds": seconds, "cpu": cpu, "makespan": result[0][3], "decisions": decisions}, fh)
"""


def _epoch(text: str) -> float:
    return _dt.datetime.fromisoformat(text.strip()).replace(tzinfo=_dt.timezone.utc).timestamp()


def build_window(philly: str, start: int, n: int, server_gpus: int = 8) -> list[list]:
    """PAI-format rows of ranks start..start+n-1 of philly.csv (see the module docstring)."""
    if not os.path.isfile(philly):
        raise SystemExit(f"bench: {missing_file_message(philly)}")
    with open(philly, newline="") as fh:
        rows = list(csv.DictReader(fh))
    order = sorted(range(len(rows)), key=lambda i: (_epoch(rows[i]["timestamp"]), i))
    window = order[start:start + n]
    if len(window) < n:
        raise SystemExit(f"philly.csv has only {len(order)} rows; ranks {start}..{start + n - 1} do not exist")
    t0 = _epoch(rows[window[0]]["timestamp"])
    out = []
    for rank, i in enumerate(window):
        r = rows[i]
        submit, duration, gpus = _epoch(r["timestamp"]) - t0, float(r["duration"]), int(r["num_gpus"])
        if not (submit.is_integer() and duration.is_integer() and duration >= 1):
            raise SystemExit(f"row {i}: submit {submit} or duration {duration} is not a whole number of seconds")
        inst = gang_instances(gpus, server_gpus)
        out.append([rank, r["cluster"].strip(), int(submit), int(duration), inst, gpus // inst, 0, i])
    return out


def write_csv(rows: list[list], path: str) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(HEADER)
        w.writerows(rows)


def check_window(rows: list[list], args, cluster: Cluster) -> list[str]:
    """Checks of the built window; returns lines for the report (raises SystemExit on a mismatch)."""
    notes = []
    if args.start == 40000 and len(rows) >= 2000 and os.path.exists(SHIPPED):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(HEADER)
        w.writerows(rows[:2000])
        with open(SHIPPED, "rb") as fh:
            shipped = fh.read()
        if buf.getvalue().encode() != shipped:
            raise SystemExit("the first 2,000 rows differ from the shipped philly-40000-2000.csv")
        sha_ok = hashlib.sha256(shipped).hexdigest() == SHIPPED_SHA256
        notes.append("first 2,000 rows byte-identical to the shipped philly-40000-2000.csv"
                     + (" (sha256 as in SOURCE.txt)" if sha_ok else " (WARNING: its sha256 differs from SOURCE.txt)"))
    inst, _ = read_philly(args.philly, start=args.start, limit=len(rows), cluster=cluster, gang="server")
    by_row = {int(j.id): j for j in inst.jobs}
    for rank, _user, submit, duration, n_inst, per, _cpu, row in rows:
        j = by_row.get(row)
        if j is None or (j.arrival, j.processing_time, j.gpus, j.instances or 1) != (submit, duration, n_inst * per,
                                                                                   n_inst):
            raise SystemExit(f"rank {rank} (philly row {row}) differs from asrpt.traces.read_philly: {j}")
    if len(by_row) != len(rows):
        raise SystemExit(f"read_philly kept {len(by_row)} jobs, the window has {len(rows)}")
    notes.append(f"all {len(rows):,} jobs equal to asrpt.traces.read_philly(start={args.start}, "
                 f"limit={len(rows)}, gang='server')")
    return notes


def run_asrpt(csv_path: str, cluster: Cluster, spec: str) -> tuple[float, float, float, dict]:
    """Wall seconds of read_pai + simulate, of simulate alone, CPU seconds of both, decisions."""
    t0, c0 = time.perf_counter(), time.process_time()
    instance, report = read_pai(csv_path, cluster)
    t1 = time.perf_counter()
    result = simulate(instance, spec, placement="first_fit")
    t2, c2 = time.perf_counter(), time.process_time()
    decisions = {r.id: [r.start, r.completion, r.placement] for r in result.records}
    return t2 - t0, t2 - t1, c2 - c0, decisions


def run_peer(peer_dir: str, python: str, csv_path: str, n_rows: int, n_nodes: int, alloc_policy: int,
             timeout: float, flat: int = 0) -> tuple[float, float, float, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "peer.json")
        cmd = [python, "-c", PEER_DRIVER, os.path.abspath(peer_dir), csv_path, str(n_rows), str(n_nodes),
               str(alloc_policy), out, str(flat)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"the peer failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        with open(out) as fh:
            data = json.load(fh)
    return data["seconds"], data["cpu"], wall, data["decisions"]


def compare(ours: dict, theirs: dict) -> tuple[bool, str]:
    if set(ours) != set(theirs):
        return False, f"job sets differ ({len(ours)} vs {len(theirs)})"
    for job_id in sorted(ours, key=int):
        mine = tuple(ours[job_id])
        peer = tuple(theirs[job_id])
        if mine != peer:
            return False, f"first differing job {job_id}: asrpt (start, finish, placement) = {mine}, peer = {peer}"
    return True, f"all {len(ours):,} jobs: same start, finish and placement"


TIRESIAS_SHIPPED = shared_path("peer-tiresias", "input_philly-40000-2000.csv")
TIRESIAS_HEADER = ["job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration", "interval",
                   "philly_row"]
# configuration -> (peer schedule, peer scheme, asrpt policy, asrpt placement, reference peer CPU s)
TIRESIAS_CONFIGS = {"dlas-gpu": ("dlas-gpu", "count", "tiresias-peer", "first_fit", 86.0),
                    "fifo-yarn": ("fifo", "yarn", "fifo-strict", "yarn", 115.0)}


def tiresias_rows(rows: list[list]) -> list[list]:
    """The PAI-format window rows in the Tiresias format (module docstring)."""
    return [[rank, n_inst * per, submit, duration, "resnet50", duration, 0, row]
            for rank, _user, submit, duration, n_inst, per, _cpu, row in rows]


def run_tiresias_asrpt(csv_path: str, cluster: Cluster, spec: str, placement: str) -> tuple[float, float, dict]:
    """Wall and CPU seconds of read_tiresias + simulate, and the decisions."""
    t0, c0 = time.perf_counter(), time.process_time()
    instance, _ = read_tiresias(csv_path, cluster)
    result = simulate(instance, spec, placement=placement)
    t1, c1 = time.perf_counter(), time.process_time()
    return t1 - t0, c1 - c0, {r.id: (r.start, r.completion, r.preemptions) for r in result.records}


def run_tiresias_peer(peer_dir: str, python: str, csv_path: str, nodes: int, schedule: str, scheme: str,
                      timeout: float) -> tuple[float, float, dict]:
    """Wall and CPU seconds of the peer's run_sim.py in a subprocess, and its job.csv decisions."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "spec.csv")
        with open(spec, "w") as fh:
            fh.write(f"num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n1,{nodes},8,64,256\n")
        log = os.path.join(tmp, "log")
        cmd = [python, "run_sim.py", f"--schedule={schedule}", f"--scheme={scheme}", f"--trace_file={csv_path}",
               f"--cluster_spec={spec}", f"--log_path={log}"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=peer_dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              timeout=timeout)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"the Tiresias peer failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        with open(os.path.join(log, "job.csv"), newline="") as fh:
            decisions = {r["job_id"]: (int(r["start_time"]), int(r["end_time"]), int(r["preempt"]))
                         for r in csv.DictReader(fh)}
    return wall, cpu, decisions


def tiresias_part(args, rows: list[list]) -> list[dict]:
    """Time asrpt (and the Tiresias peer when given) on the window; print and return the rows."""
    t_rows = tiresias_rows(rows)
    if args.start == 40000 and len(rows) >= 2000 and os.path.exists(TIRESIAS_SHIPPED):
        with open(TIRESIAS_SHIPPED, newline="") as fh:
            shipped = [(r["job_id"], r["num_gpu"], r["submit_time"], r["duration"], r["philly_row"])
                       for r in csv.DictReader(fh)]
        mine = [tuple(str(r[i]) for i in (0, 1, 2, 5, 7)) for r in t_rows[:2000]]
        if mine != shipped:
            raise SystemExit("the first 2,000 Tiresias rows differ from the shipped input_philly-40000-2000.csv")
        print("  Tiresias format: first 2,000 jobs equal to the shipped input_philly-40000-2000.csv "
              "(job_id, num_gpu, submit_time, duration, philly_row)")
    peer = args.tiresias_dir is not None and os.path.isfile(os.path.join(args.tiresias_dir, "run_sim.py"))
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"tiresias-{args.start}-{args.jobs}.csv")
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(TIRESIAS_HEADER)
            w.writerows(t_rows)
        warm = os.path.join(tmp, "warm-up.csv")
        with open(warm, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(TIRESIAS_HEADER)
            w.writerows(t_rows[:50])
        for name, (schedule, scheme, spec, placement, reference) in TIRESIAS_CONFIGS.items():
            cluster = (Cluster((Server(args.nodes * 8),)) if scheme == "count"
                       else Cluster.from_spec(f"1x{args.nodes}x8"))
            run_tiresias_asrpt(warm, cluster, spec, placement)
            wall, cpu, ours = run_tiresias_asrpt(path, cluster, spec, placement)
            e = {"configuration": f"tiresias {name}", "asrpt_policy": spec, "placement": placement,
                 "asrpt_s": round(wall, 3), "asrpt_cpu_s": round(cpu, 3), "reference_peer_cpu_s": reference,
                 "reference_cpu_ratio": round(reference / cpu, 1), "peer_s": None, "peer_cpu_s": None,
                 "cpu_ratio": None, "identical": None, "detail": None}
            if peer:
                p_wall, p_cpu, theirs = run_tiresias_peer(args.tiresias_dir, args.tiresias_python, path, args.nodes,
                                                          schedule, scheme, args.peer_timeout)
                same = ours == {k: v for k, v in theirs.items()}
                detail = f"all {len(ours):,} jobs: same first start, finish and preemptions" if same else next(
                    (f"first differing job {k}: asrpt {ours.get(k)}, peer {theirs.get(k)}"
                     for k in sorted(set(ours) | set(theirs), key=int) if ours.get(k) != theirs.get(k)), "")
                e.update(peer_s=round(p_wall, 3), peer_cpu_s=round(p_cpu, 3), cpu_ratio=round(p_cpu / cpu, 1),
                         identical=same, detail=detail)
            out.append(e)
            print(f"  tiresias {name} ({spec}, {placement}): asrpt {wall:.2f} s wall, {cpu:.2f} s CPU; "
                  f"{reference / cpu:.1f}x less CPU than the peer's reference {reference:.0f} s"
                  + (f"; peer {e['peer_cpu_s']:.2f} s CPU ({e['cpu_ratio']:.1f}x), {e['detail']}" if peer else ""),
                  flush=True)
    if not peer:
        print("  Tiresias peer not run" + (f" (no run_sim.py in {args.tiresias_dir})" if args.tiresias_dir else
                                           " (no --tiresias-dir)") + ": ratios against its reference CPU times")
    ok = all((e["cpu_ratio"] if peer else e["reference_cpu_ratio"]) >= 20 for e in out)
    print("  Tiresias target (>= 20x less CPU" + (", identical decisions" if peer else "") + "): "
          + ("met" if ok and all(e["identical"] is not False for e in out) else "NOT met"))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer-dir", default=None, help="folder with the peer simulator's files (optional)")
    ap.add_argument("--peer-python", default=sys.executable, help="interpreter for the peer (needs numpy, matplotlib)")
    ap.add_argument("--peer-timeout", type=float, default=3600.0, help="seconds allowed per peer run")
    ap.add_argument("--jobs", type=int, default=20000, help="jobs in the window (default 20,000)")
    ap.add_argument("--start", type=int, default=40000, help="rank of the window's first job (default 40,000)")
    ap.add_argument("--nodes", type=int, default=64, help="nodes of 8 GPUs (default 64)")
    ap.add_argument("--flat", type=int, default=0, metavar="GPUS",
                    help="one node of GPUS GPUs instead of --nodes (the peer's one-big-node mode; asrpt "
                         f"holds at most {LIMITS['server_gpus']} GPUs per server)")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated, from: " + ", ".join(CONFIGS))
    ap.add_argument("--philly", default=PHILLY, help="philly.csv (default: the shared copy)")
    ap.add_argument("--keep-csv", default=None, help="also write the window's PAI CSV here")
    ap.add_argument("--json", default=None, help="write the table and details as JSON here")
    ap.add_argument("--tiresias", action="store_true", help="also time the Tiresias-peer configurations")
    ap.add_argument("--tiresias-dir", default=None,
                    help="folder of the Tiresias simulator (run_sim.py ...; implies --tiresias)")
    ap.add_argument("--tiresias-python", default=sys.executable,
                    help="interpreter for the Tiresias peer (Python 2.7 for its unmodified code)")
    ap.add_argument("--only-tiresias", action="store_true", help="skip the PAI configurations")
    args = ap.parse_args(argv)
    if args.tiresias_dir or args.only_tiresias:
        args.tiresias = True
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"unknown configuration {c!r}")

    if args.flat and not 1 <= args.flat <= LIMITS["server_gpus"]:
        ap.error(f"--flat {args.flat}: a server holds 1 to {LIMITS['server_gpus']} GPUs")
    nodes = Cluster.homogeneous(args.nodes, 8)  # the window's gangs are of 8-GPU servers, flat or not
    cluster = Cluster((Server(args.flat),)) if args.flat else nodes
    rows = build_window(args.philly, args.start, args.jobs)
    notes = check_window(rows, args, nodes)
    peer = args.peer_dir is not None and os.path.isfile(os.path.join(args.peer_dir, "simulator.py"))
    if not peer:
        notes.append("peer not available" + (f" (no simulator.py in {args.peer_dir})" if args.peer_dir else
                                             " (no --peer-dir)") + ": asrpt timings only")

    print(f"window: Philly ranks {args.start:,}..{args.start + args.jobs - 1:,} ({len(rows):,} jobs), "
          + (f"one node of {args.flat} GPUs" if args.flat else f"{args.nodes} x 8 GPUs") + ", pack placement")
    for line in notes:
        print("  " + line)

    if args.only_tiresias:
        configs = []
    tiresias = tiresias_part(args, rows) if args.tiresias else []
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = os.path.join(tmp, f"philly-{args.start}-{args.jobs}.csv")
        write_csv(rows, csv_path)
        if args.keep_csv:
            write_csv(rows, args.keep_csv)
        # warm-up (lazy imports, policy registry) on the first 50 jobs, untimed: the peer's time
        # excludes its interpreter start and imports too
        warm = os.path.join(tmp, "warm-up.csv")
        write_csv(rows[:50], warm)
        for name in configs:
            run_asrpt(warm, cluster, CONFIGS[name][1])
        for name in configs:
            alloc_policy, spec = CONFIGS[name]
            a_total, a_sim, a_cpu, ours = run_asrpt(csv_path, cluster, spec)
            entry = {"configuration": name, "asrpt_policy": spec, "placement": "first_fit", "peer_alloc_policy": alloc_policy,
                     "asrpt_s": round(a_total, 3), "asrpt_simulate_s": round(a_sim, 3), "asrpt_cpu_s": round(a_cpu, 3),
                     "peer_s": None, "peer_cpu_s": None, "peer_wall_s": None, "ratio": None, "cpu_ratio": None,
                     "identical": None, "detail": None}
            if peer:
                p_sim, p_cpu, p_wall, theirs = run_peer(args.peer_dir, args.peer_python, csv_path, len(rows), args.nodes,
                                                 alloc_policy, args.peer_timeout, args.flat)
                same, detail = compare(ours, theirs)
                entry.update(peer_s=round(p_sim, 3), peer_cpu_s=round(p_cpu, 3), peer_wall_s=round(p_wall, 3),
                             ratio=round(p_sim / a_total, 1), cpu_ratio=round(p_cpu / a_cpu, 1),
                             identical=same, detail=detail)
            table.append(entry)
            print(f"  {name}: asrpt {a_total:.2f} s" + (f", peer {entry['peer_s']:.2f} s" if peer else ""), flush=True)

    print()
    fmt = (lambda v, spec, suffix="": format(v, spec) + suffix if v is not None else "-")
    head = (f"{'configuration':<14} {'asrpt s':>8} {'peer s':>8} {'ratio':>7} {'asrpt cpu':>10} {'peer cpu':>9} "
            f"{'cpu ratio':>9}  identical")
    print(head)
    print("-" * len(head))
    for e in table:
        ident = "-" if e["identical"] is None else ("yes" if e["identical"] else "NO")
        print(f"{e['configuration']:<14} {e['asrpt_s']:>8.2f} {fmt(e['peer_s'], '.2f'):>8} {fmt(e['ratio'], '.1f', 'x'):>7} "
              f"{e['asrpt_cpu_s']:>10.2f} {fmt(e['peer_cpu_s'], '.2f'):>9} {fmt(e['cpu_ratio'], '.1f', 'x'):>9}  {ident}")
    print("(s: wall seconds; asrpt = read_pai + simulate, of which simulate alone: "
          + ", ".join(f"{e['configuration']} {e['asrpt_simulate_s']:.2f} s" for e in table)
          + ("; peer = Simulator() + simulator_go() inside its process, whose whole wall time was "
             + ", ".join(f"{e['configuration']} {e['peer_wall_s']:.2f} s" for e in table) if peer else "")
          + "; cpu: process CPU seconds of the same spans)")
    if hasattr(os, "getloadavg"):
        print("load average at the end (1, 5, 15 min): %.2f %.2f %.2f on %d CPUs" % (*os.getloadavg(), os.cpu_count()))
    for e in table:
        if e["detail"]:
            print(f"  {e['configuration']}: {e['detail']}")
    if not peer:
        print("peer not available: asrpt timings only (pass --peer-dir with the peer's files)")
    else:
        ok = all(e["identical"] and e["ratio"] >= 20 for e in table)
        print("target (>= 20x faster in wall time, identical decisions): " + ("met" if ok else "NOT met"))

    if args.json:
        payload = {"window": {"start": args.start, "jobs": len(rows), "nodes": 1 if args.flat else args.nodes,
                              "gpus_per_node": args.flat or 8,
                              "source": os.path.abspath(args.philly)},
                   "checks": notes, "peer_available": peer, "results": table, "tiresias": tiresias,
                   "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                               "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None}}
        with open(args.json, "w") as fh:
            json.dump(payload, fh, indent=2)
    if peer and not all(e["identical"] for e in table):
        return 1
    if any(e["identical"] is False for e in tiresias):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
