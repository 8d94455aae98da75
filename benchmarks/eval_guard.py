"""Where A-SRPT's guard makes the difference: the ``starvation`` family (one wide job in a
Poisson stream of one-GPU jobs; :func:`asrpt.workloads.generators.starvation_instance`).

For each stream length and seed it runs each policy and prints the wide job's time in the system
(JCT), the mean JCT of all jobs and, for guarded A-SRPT, whether the wide job became overdue. An
order by remaining GPU-time (SRSF) runs the wide job only when the stream leaves a server idle,
so its JCT grows with the stream; guarded A-SRPT runs it from its deadline
``a + kappa (C~ - a)`` on, a time set by the virtual machine, not by the stream's length.

Run (about five minutes on one core)::

    .venv/bin/python benchmarks/eval_guard.py
    .venv/bin/python benchmarks/eval_guard.py --jobs 1000,10000 --seeds 0 --mu 4 --wide-after 0
"""

from __future__ import annotations

import argparse
import statistics

POLICIES = "a-srpt,a-srpt:kappa=4,srsf,srsf:epsilon=0.5,tiresias,fifo,gavel,themis"


def main(argv=None) -> int:
    from asrpt.registry import split_specs
    from asrpt.sim import simulate
    from asrpt.workloads.generators import starvation_instance

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", default="1000,3000,10000,30000", help="stream lengths (n_jobs), comma-separated")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--policies", default=POLICIES)
    ap.add_argument("--load", type=float, default=0.875)
    ap.add_argument("--cluster", default="1x8")
    ap.add_argument("--mu", type=float, default=1.0, help="distortion of the instance's predictions (1: exact)")
    ap.add_argument("--wide-after", type=int, default=None, help="narrow jobs before the wide one (default a tenth)")
    args = ap.parse_args(argv)
    policies = split_specs(args.policies)
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"# starvation family: cluster {args.cluster}, narrow load {args.load}, mu {args.mu}; the wide job's JCT "
          f"per seed ({', '.join(map(str, seeds))}), and the mean JCT over all jobs (mean of the seeds)")
    print("| jobs | stream (s) | " + " | ".join(f"{p} wide JCT | {p} mean" for p in policies) + " |")
    print("|---|---|" + "---|---|" * len(policies))
    for n in (int(x) for x in args.jobs.split(",")):
        insts = [starvation_instance(n, cluster=args.cluster, load=args.load, mu=args.mu,
                                     wide_after=args.wide_after, seed=s) for s in seeds]
        span = statistics.mean(float(i.jobs[-1].arrival) for i in insts)
        cells = []
        for p in policies:
            wides, means = [], []
            for inst in insts:
                run = simulate(inst, p)
                wide = next(r for r in run.records if r.id == "wide")
                late = "*" if "wide" in ((run.policy_data or {}).get("overdue_at") or ()) else ""
                wides.append(f"{float(wide.completion - wide.arrival):,.0f}{late}")
                means.append(statistics.mean(float(r.completion - r.arrival) for r in run.records))
            cells.append(f"{' / '.join(wides)} | {statistics.mean(means):.1f}")
        print(f"| {n:,} | {span:,.0f} | " + " | ".join(cells) + " |", flush=True)
    print("(* the wide job became overdue: the guard ran it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
