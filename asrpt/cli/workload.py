"""``asrpt workload``: generate a synthetic workload, write it as an instance file, and compare its
statistics with the published ones it is calibrated to.

SPEC is a generator with optional parameters, e.g. ``recurring_users`` (old spelling
``recurring``) or ``recurring_users:profile="helios-venus":sigma_drift=0.8`` (:func:`asrpt.workloads.make_workload`); the
options below fill the common parameters the spec leaves out.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import InvalidParameterError
from ..registry import plain_text
from ..instance import save_instance
from ._common import add_json, emit_json, format_table, positive_float, positive_int

__all__ = ["register", "comparison_rows"]


def register(sub) -> None:
    p = sub.add_parser("workload", help="generate a synthetic workload (recurring jobs) into an instance file",
                       description=plain_text(__doc__.split("\n\n", 1)[1].strip()),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", metavar="SPEC", help="generator and parameters (recurring_users[:key=value...])")
    p.add_argument("--out", metavar="FILE", help="write the instance here (JSON)")
    p.add_argument("--jobs", type=positive_int, metavar="N", help="number of jobs (n_jobs)")
    p.add_argument("--load", type=positive_float, metavar="L", help="offered load relative to capacity")
    p.add_argument("--profile", metavar="NAME", help="calibration profile (philly, helios, helios-venus, ...)")
    p.add_argument("--cluster", metavar="SPEC", help="cluster such as 8x8")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--stats", action="store_true",
                   help="print the generated statistics beside the profile's published ones")
    add_json(p)
    p.set_defaults(func=run)


def comparison_rows(instance, profile: str) -> list[list]:
    """[statistic, generated, published] rows for an instance and a profile."""
    from ..workloads import get_profile, workload_statistics

    s = workload_statistics(instance)
    p = get_profile(profile)
    rows = [["run time median (s)", s["duration_median"], p["duration_median"]],
            ["run time mean (s)", s["duration_mean"], p["duration_mean"]]]
    if p["duration_percentiles"]:
        rows += [[f"run time p{q} (s)", s["duration_percentiles"][q], p["duration_percentiles"][q]]
                 for q in (10, 25, 75, 90, 99)]
    if p["gpu_mean"] is None:
        total = sum(p["gpu_counts"].values())
        rows += [[f"share of {g}-GPU jobs", s["gpu_shares"].get(g, 0.0), c / total]
                 for g, c in p["gpu_counts"].items() if g <= instance.cluster.total_gpus]
        rows.append(["mean GPUs per job", s["gpu_mean"], sum(g * c for g, c in p["gpu_counts"].items()) / total])
    else:
        rows += [["mean GPUs per job", s["gpu_mean"], p["gpu_mean"]],
                 ["median GPUs per job", s["gpu_median"], p["gpu_median"]]]
    if s["hour_shares"] is not None:
        rows.append(["max |hour share diff|",
                     max(abs(a - b) for a, b in zip(s["hour_shares"], p["hour_shares"])), 0.0])
        rows.append(["max |weekday share diff|",
                     max(abs(a - b) for a, b in zip(s["weekday_shares"], p["weekday_shares"])), 0.0])
    rows += [["recurring share (seen group)", s["recurring_share"], None],
             ["users / groups", f"{s['users']} / {s['groups']}", None]]
    return rows


def run(args) -> int:
    from ..registry import parse_spec
    from ..workloads import WORKLOADS, make_workload

    name, params = parse_spec(args.spec)
    if name not in WORKLOADS:
        make_workload(args.spec)  # raises the did-you-mean error
    extra = {"n_jobs": args.jobs, "load": args.load, "profile": args.profile, "cluster": args.cluster,
             "seed": args.seed}
    spec = args.spec
    for key, value in extra.items():
        if value is not None and key not in params:
            spec += f":{key}={value}" if not isinstance(value, str) else f':{key}="{value}"'
    instance = make_workload(spec)
    if args.out:
        save_instance(instance, args.out)
    profile = instance.metadata.get("params", {}).get("profile")
    rows = comparison_rows(instance, profile) if profile else []
    if args.json:
        emit_json({"spec": spec, "out": args.out, "jobs": instance.n_jobs,
                   "gpus": instance.cluster.total_gpus, "metadata": dict(instance.metadata),
                   "statistics": [{"statistic": r[0], "generated": r[1], "published": r[2]} for r in rows]})
        return 0
    if args.out:
        print(f"wrote {instance.n_jobs} jobs ({instance.cluster.total_gpus} GPUs) to {args.out}", file=sys.stderr)
    if args.stats or not args.out:
        if not rows:
            raise InvalidParameterError(f"{spec!r}: no calibration profile to compare with")
        print(format_table(["statistic", "generated", f"published ({profile})"], rows))
    return 0
