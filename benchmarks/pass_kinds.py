"""Where a policy's decision passes come from, and what each kind costs: a diagnostic for speed work.

A run's time is its decision passes times their cost (docs/design.md, "Speed"). This script runs
each policy on the first ``--jobs`` jobs of the bundled Philly window (or ``--trace``, a Philly
CSV) with DNN jobs on 64 x 8, as ``asrpt run`` does, and splits its passes by what brought them:

- ``arrival``: a job arrived (completions may have come at the same time);
- ``completion``: a job completed, none arrived;
- ``stop``: a preempted job reached its iteration boundary, nothing else happened;
- ``wake``: only the policy's own wake-up (a round's end, a crossing, a deadline).

For each kind: the passes, their wall seconds in all (``time.perf_counter`` around the engine's
pass, the policy's ``decide`` and ``next_wake`` included) and the mean per pass. The engine's
pass is wrapped from outside (``asrpt.engine.core._Engine._decide``, an internal name: this is a
diagnostic, not an interface), so a pass where a held decision is applied without the policy
(``Decision.stands_until``) counts as a pass of its kind too. Wall times on a shared machine are
noisy: compare policies within one run, not runs across sessions.

Usage::

    .venv/bin/python benchmarks/pass_kinds.py [--policies a-srpt,srsf] [--jobs 20000] [--trace PATH]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from importlib import resources


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policies", default="a-srpt,srsf", help="comma-separated policy names (default a-srpt,srsf)")
    ap.add_argument("--jobs", type=int, default=20000, help="first jobs of the trace (0: all; default 20,000)")
    ap.add_argument("--trace", default=None, help="a Philly CSV (default: the bundled 20,000-job window)")
    args = ap.parse_args(argv)

    from asrpt.cli.simulate import policies_from
    from asrpt.instance import Cluster
    from asrpt.sim import engine, simulate
    from asrpt.traces.philly import read_philly

    path = args.trace or str(resources.files("asrpt").joinpath("data/philly-40000-20000.csv.gz"))
    inst, _ = read_philly(path, limit=args.jobs or None, cluster=Cluster.from_spec("64x8"), dnn=True, seed=0)
    count: collections.Counter = collections.Counter()
    spent: collections.Counter = collections.Counter()
    original = engine._Engine._decide

    def timed(self):
        kind = ("arrival" if self.arrived else "completion" if self.completed
                else "stop" if self.just_stopped else "wake")
        t0 = time.perf_counter()
        original(self)
        spent[kind] += time.perf_counter() - t0
        count[kind] += 1

    engine._Engine._decide = timed
    try:
        print(f"{'policy':<20} {'kind':<11} {'passes':>8} {'seconds':>8} {'us/pass':>8}")
        for label, policy in policies_from(args.policies, "hierarchy"):
            count.clear()
            spent.clear()
            simulate(inst, policy, label=label, seed=0)
            for kind in ("arrival", "completion", "stop", "wake"):
                if count[kind]:
                    print(f"{label:<20} {kind:<11} {count[kind]:>8} {spent[kind]:>8.2f} "
                          f"{spent[kind] / count[kind] * 1e6:>8.1f}")
    finally:
        engine._Engine._decide = original
    return 0


if __name__ == "__main__":
    sys.exit(main())
