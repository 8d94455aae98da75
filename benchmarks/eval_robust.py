"""Theorem 3 measured: what the time-shared combination costs with good predictions and what it
saves with bad ones.

For each workload (seeded generated instances) and each prediction quality, one row per schedule:
guarded A-SRPT alone (Theorem 2's setting: static predictions), the water-filling copy alone (the
robust copy at speed (1 - lam)/3, which needs no prediction), and the combination at several
``lam``. Figures are ``sum C_j / max(LB1, LB2)`` (mean and max over the instances, a ratio to a
lower bound, so the ratio to the optimum is at most this) and the flow-time ratio
``sum (C_j - a_j) / (max(LB1, LB2) - sum a_j)`` (mean); every certificate is checked.

Usage::

    PYTHONPATH=. python benchmarks/eval_robust.py [--n 200] [--out table.md]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from fractions import Fraction

import numpy as np

from asrpt.instance import Cluster, Instance, Job
from asrpt.theory.guarded import certify_guarded_instance
from asrpt.theory.robust import certify_robust_instance
from asrpt.workloads.generators import generate

LAMS = (Fraction(1, 2), Fraction(3, 4), Fraction(9, 10))

WORKLOADS = (
    ("uniform 8 jobs, 2x4, exact predictions", "uniform", dict(n_jobs=8, cluster="2x4", mu=1)),
    ("uniform 8 jobs, 2x4, mu <= 4", "uniform", dict(n_jobs=8, cluster="2x4", mu=4)),
    ("uniform 8 jobs, 2x4, mu <= 64", "uniform", dict(n_jobs=8, cluster="2x4", mu=64)),
    ("heavy-tailed 8 jobs, 2x4, exact", "heavy_tailed", dict(n_jobs=8, cluster="2x4")),
    ("adversarial blocker, 4 GPUs, mu = 4", "adversarial", dict(pattern="blocker", gpus=4, mu=4)),
    ("adversarial mispredict, 4 GPUs, mu = 64", "adversarial", dict(pattern="mispredict", gpus=4, mu=64)),
    ("misleading, 4 GPUs, exact predictions", "misleading", dict(mu=1)),
    ("misleading, 4 GPUs, mu = 64", "misleading", dict(mu=64)),
    ("misleading, 4 GPUs, mu = 4096", "misleading", dict(mu=4096)),
)


def misleading(n: int, *, mu: int, seed: int, gpus: int = 4) -> list[Instance]:
    """One long whole-cluster job (size 200..2000) and 4..16 unit one-GPU jobs, all at time 0;
    the long job is predicted ``mu`` times too short, the unit jobs ``mu`` times too long (exact
    predictions at ``mu = 1``). With bad predictions A-SRPT runs the long job first and every
    short job waits behind it."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        size, shorts = int(rng.integers(200, 2001)), int(rng.integers(4, 17))
        jobs = [Job("long", 0, gpus, processing_time=size, predicted_processing_time=Fraction(size, mu))]
        jobs += [Job(f"s{i}", 0, 1, processing_time=1, predicted_processing_time=mu) for i in range(shorts)]
        out.append(Instance(Cluster.homogeneous(1, gpus), tuple(jobs)))
    return out


def _instances(family: str, n: int, seed: int, params: dict) -> list[Instance]:
    if family == "misleading":
        return misleading(n, seed=seed, **params)
    return generate(family, n=n, seed=seed, **params)


def _f(x) -> float:
    return float(x)


def measure(n: int, seed: int = 7) -> list[tuple]:
    rows = []
    for label, family, params in WORKLOADS:
        insts = _instances(family, n, seed, params)
        alone = [certify_guarded_instance(inst) for inst in insts]
        assert all(c.holds and c.covered for c in alone), label
        cols = {"guarded A-SRPT alone": [(_f(c.total_completion_time) / _f(c.lower_bound),
                                          _f(c.flow_ratio_to_lb)) for c in alone]}
        for lam in LAMS:
            certs = [certify_robust_instance(inst, lam=lam) for inst in insts]
            bad = [c.failures() for c in certs if not (c.holds and c.covered)]
            assert not bad, (label, lam, bad[:3])
            cols[f"combination lam = {lam}"] = [(_f(c.ratio_to_lb), _f(c.flow_ratio_to_lb)) for c in certs]
            if lam == LAMS[0]:
                cols[f"water-filling copy alone (speed {(1 - lam) / 3})"] = [
                    (_f(c.robust_ratio), float("nan")) for c in certs]
        for name, vals in cols.items():
            ratios = [r for r, _ in vals]
            flows = [f for _, f in vals if f == f]
            rows.append((label, name, statistics.fmean(ratios), max(ratios),
                         statistics.fmean(flows) if flows else None, len(vals)))
    return rows


def render(rows) -> str:
    out = ["| workload | schedule | sum C / LB, mean | max | flow / flow LB, mean | instances |",
           "|---|---|---|---|---|---|"]
    for label, name, mean, worst, flow, n in rows:
        flow_s = "—" if flow is None else f"{flow:.3f}"
        out.append(f"| {label} | {name} | {mean:.3f} | {worst:.3f} | {flow_s} | {n} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200, help="instances per workload (default 200)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", default=None, help="also write the table to this file")
    args = p.parse_args(argv)
    t0 = time.process_time()
    table = render(measure(args.n, args.seed))
    sys.stdout.write(table)
    print(f"\n{time.process_time() - t0:.1f} s CPU", file=sys.stderr)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
