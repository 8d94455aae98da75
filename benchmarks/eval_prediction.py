"""Evaluation of prediction-assisted scheduling (issue 7): the figures of the closing note.

Part 1, policies x load levels x seeds on recurring workloads (:func:`asrpt.workloads.recurring_workload`,
Philly-calibrated median and mean run time with run times capped at one day, on 2 x 8 A100: with
Philly's own 53-day clip the 1 % longest jobs carry most of the GPU-time of a sample this size
and the other jobs barely queue, whatever the policy): A-SRPT with the random forest (doubling and re-prediction
adaptive rules), the oracle, the group mean, noisy truth (sigma 0.5) and no prediction (a constant),
and QSSF and SRSF with the same forest. For each, the mean and p99 JCT averaged over seeds with a
95 % confidence interval (Student t over seeds), and the same normalised per seed by A-SRPT with
the oracle (a paired ratio: heavy-tailed workloads vary a lot between seeds, the ratio much less).
The forest's accuracy at submission (median |log ratio|, mu) is reported beside it.

Part 2, robustness: A-SRPT with static predictions (``adaptive="off"``, Theorem 1's setting) and
the noisy predictor ``N^ = N exp(sigma Z)`` over a sweep of sigma: mean JCT (with CI), the measured
ratio sum C_j / LB (LB the best lower bound of :mod:`asrpt.offline.bounds`), the per-instance
certificate ``(beta LB1 + beta rho mu_under sum C~_j) / LB`` and Theorem 1's bound
``beta (1 + rho mu)`` (model.md section 8), with ``mu`` the measured distortion of the run's
predictions, ``rho = max_j M / (M - g_j + 1)`` and ``beta`` the largest placement stretch.
Plotted (matplotlib, Figure API) to the PNG given with ``--plot``.

Part 0, prediction quality and its scheduling effect (issue 14; ``--issue14``, the figures of
docs/prediction.md): (a) the scores of each predictor (:data:`ACCURACY_PREDICTORS`), replayed
(each job predicted at submission from the jobs completed by then, completion = arrival + P*):
Spearman rho, median |log error|, share within 2x, R^2 on log over successful runs, 80 % band
coverage, on the recurring generator (``--rec-jobs`` jobs, seeds ``0 .. --rec-seeds - 1``, also
on the successful runs of groups seen before) and on Philly windows by rank (``--windows``);
(b) the Philly ceiling: bursts (same VC and GPU count, at most 60 s apart), how well the median of
a job's other burst members predicts it (look-ahead), and how many burst members have a
completed sibling when submitted; (c) the mean JCT of A-SRPT and SRSF with each predictor of
:data:`SCHEDULE_PREDICTORS` relative to the oracle, on the default window (the bundled Philly
window, DNN jobs, 64 x 8 GPUs; ``--window-limit`` jobs of it) and on the recurring workload.

Run (a few minutes with the defaults)::

    .venv/bin/python benchmarks/eval_prediction.py --plot /tmp/sigma.png --json /tmp/eval.json
    .venv/bin/python benchmarks/eval_prediction.py --issue14 --window-limit 5000   # part 0 only
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time

import numpy as np
from scipy import stats

from asrpt.offline.bounds import lower_bounds
from asrpt.predict.metrics import run_predictions
from asrpt.sim import simulate
from asrpt.workloads import recurring_workload

POLICIES = {
    "A-SRPT forest (doubling)": 'a-srpt:predictor=forest',
    "A-SRPT forest (re-predict)": 'a-srpt:predictor=forest:adaptive="repredict"',
    "A-SRPT oracle": "a-srpt:predictor=oracle",
    "A-SRPT group mean": "a-srpt:predictor=group_mean",
    "A-SRPT noisy sigma=0.5": 'a-srpt:predictor="noisy:sigma=0.5"',
    "A-SRPT no prediction": "a-srpt:predictor=constant",
    "QSSF forest": "qssf:predictor=forest",
    "SRSF forest": "srsf:predictor=forest",
}
REFERENCE = "A-SRPT oracle"


ACCURACY_PREDICTORS = ("group_mean", "forest", "hierarchy", 'hierarchy:residual="gbm"', "helios")
SCHEDULE_PREDICTORS = ("oracle", "hierarchy", "forest", "group_mean", "helios", "constant")


def _philly_window(start: int, limit: int, dnn: bool = False):
    """Philly ranks ``start .. start+limit-1`` (ranks 40,000-59,999 are the bundled default window)."""
    from asrpt.traces.philly import DEFAULT_PHILLY, read_philly

    return read_philly(DEFAULT_PHILLY, start=start, limit=limit, dnn=dnn)[0]


def seen_successful(instance) -> set:
    """Ids of successful runs whose group had a completed successful run at their submission
    (completion = arrival + P*)."""
    from asrpt.sizes import processing_times

    p = [float(x) for x in processing_times(instance)]
    done: dict = {}
    events = sorted(((float(j.arrival) + p[k], j) for k, j in enumerate(instance.jobs)), key=lambda e: e[0])
    out, e = set(), 0
    for j in sorted(instance.jobs, key=lambda j: float(j.arrival)):
        while e < len(events) and events[e][0] <= float(j.arrival):
            if events[e][1].status == "succeeded":
                done[events[e][1].group] = True
            e += 1
        if j.status == "succeeded" and done.get(j.group):
            out.add(j.id)
    return out


def _score_row(label, log) -> dict:
    s = log.scores()
    return {"workload": label, **s.to_dict()}


def part0_accuracy(args) -> list:
    from asrpt.predict.metrics import replay_predictions

    rows = []
    for seed in range(args.rec_seeds):
        inst = recurring_workload(args.rec_jobs, seed=seed)
        seen = seen_successful(inst)
        for spec in ACCURACY_PREDICTORS:
            t = time.perf_counter()
            log = replay_predictions(spec, inst)
            row = {"predictor": spec, **_score_row(f"recurring seed {seed}", log)}
            row["seen_ok_spearman"] = log.subset(seen).scores().spearman
            row["wall_s"] = time.perf_counter() - t
            rows.append(row)
            print(f"accuracy recurring seed {seed} {spec}: rho {row['spearman']:.3f} "
                  f"(seen ok {row['seen_ok_spearman']:.3f}) ({row['wall_s']:.0f} s)", file=sys.stderr, flush=True)
    for start, limit in args.windows:
        inst = _philly_window(start, limit)
        for spec in ACCURACY_PREDICTORS:
            if "gbm" in spec and not args.gbm_on_philly:
                continue
            t = time.perf_counter()
            row = {"predictor": spec, **_score_row(f"philly {start}-{start + limit - 1}",
                                                   replay_predictions(spec, inst))}
            row["wall_s"] = time.perf_counter() - t
            rows.append(row)
            print(f"accuracy philly {start} {spec}: rho {row['spearman']:.3f} med {row['median_abs_log']:.3f} "
                  f"({row['wall_s']:.0f} s)", file=sys.stderr, flush=True)
    return rows


def table0(rows) -> str:
    def f(x):
        return "-" if x is None else f"{x:.3f}"

    lines = ["| workload | predictor | rho | rho (ok, seen group) | med \\|log\\| | within 2x | R2 log (ok) | 80 % coverage |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['workload']} | {r['predictor']} | {f(r['spearman'])} | {f(r.get('seen_ok_spearman'))} | "
                     f"{f(r['median_abs_log'])} | {f(r['within_2x'])} | {f(r['r2_log_succeeded'])} | {f(r['coverage_80'])} |")
    return "\n".join(lines)


def philly_ceiling(start: int, limit: int, gap: float = 60.0) -> dict:
    """Bursts of a Philly window and how much a burst's members say about each other."""
    from asrpt.predict.metrics import PredictionLog

    inst = _philly_window(start, limit)
    jobs = sorted(inst.jobs, key=lambda j: (float(j.arrival), j.id))
    last: dict = {}
    burst_of: dict = {}
    members: dict = {}
    for j in jobs:
        k = (j.user, j.gpus)
        prev = last.get(k)
        if prev is None or float(j.arrival) - prev[0] > gap:
            n = 0 if prev is None else prev[1] + 1
        else:
            n = prev[1]
        last[k] = (float(j.arrival), n)
        b = burst_of[j.id] = (k, n)
        members.setdefault(b, []).append(j)
    in_burst = [j for j in jobs if len(members[burst_of[j.id]]) >= 2]
    sizes = sorted(len(members[burst_of[j.id]]) for j in jobs)
    ids, true, pred = [], [], []
    later, with_done, waits = 0, 0, []
    for j in in_burst:
        others = [math.log(float(o.processing_time)) for o in members[burst_of[j.id]] if o is not j]
        ids.append(j.id)
        true.append(float(j.processing_time))
        pred.append(math.exp(statistics.median(others)))
        earlier = [o for o in members[burst_of[j.id]] if float(o.arrival) < float(j.arrival)]
        if earlier:
            later += 1
            first_done = min(float(o.arrival) + float(o.processing_time) for o in earlier)
            if first_done <= float(j.arrival):
                with_done += 1
            else:
                waits.append(first_done - float(j.arrival))
    s = PredictionLog(tuple(ids), tuple(true), tuple(pred)).scores()
    return {"window": f"{start}-{start + limit - 1}", "jobs": len(jobs), "in_bursts": len(in_burst) / len(jobs),
            "median_burst_size": sizes[len(sizes) // 2], "burst_median_spearman": s.spearman,
            "burst_median_abs_log": s.median_abs_log, "burst_median_within_2x": s.within_2x,
            "burst_median_r2_log": s.r2_log,
            "later_members_with_completed_sibling": with_done / later if later else None,
            "median_wait_for_first_sibling_s": statistics.median(waits) if waits else None}


def part0_schedule(args) -> list:
    rows = []
    workloads = [("default window", lambda: _philly_window(40000, args.window_limit, dnn=True)),
                 ("recurring", lambda: recurring_workload(args.rec_jobs, seed=0, load=0.9, cluster="2x8",
                                                          max_duration=args.max_duration))]
    for label, build in workloads:
        inst = build()
        for policy in ("a-srpt", "srsf"):
            ref = None
            for spec in SCHEDULE_PREDICTORS:
                t = time.perf_counter()
                res = simulate(inst, f"{policy}:predictor={spec}", seed=0)
                mean = float(res.summary["mean_jct"])
                ref = mean if spec == "oracle" else ref
                rows.append({"workload": label, "jobs": inst.n_jobs, "policy": policy, "predictor": spec,
                             "mean_jct": mean, "vs_oracle": mean / ref, "wall_s": time.perf_counter() - t})
                print(f"schedule {label} {policy} {spec}: mean JCT {mean:.0f} ({mean / ref:.3f} x oracle, "
                      f"{time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
    return rows


def table0_schedule(rows) -> str:
    lines = ["| workload | jobs | policy | predictor | mean JCT (s) | / oracle |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['workload']} | {r['jobs']} | {r['policy']} | {r['predictor']} | {r['mean_jct']:,.0f} | "
                     f"{r['vs_oracle']:.3f} |")
    return "\n".join(lines)


def ci(values) -> tuple[float, float]:
    """Mean and half-width of the 95 % Student-t interval."""
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return float(v.mean()), float("nan")
    return float(v.mean()), float(stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))


def fmt(mean, half, digits=0) -> str:
    return f"{mean:,.{digits}f} ± {half:,.{digits}f}"


def part1(args) -> dict:
    results: dict = {}
    for load in args.loads:
        for seed in range(args.seeds):
            inst = recurring_workload(args.jobs, seed=seed, load=load, cluster=args.cluster,
                                      max_duration=args.max_duration)
            for label, spec in POLICIES.items():
                t = time.perf_counter()
                res = simulate(inst, spec, seed=seed)
                row = {"mean_jct": float(res.summary["mean_jct"]), "p99_jct": float(res.summary["p99_jct"]),
                       "wall_s": time.perf_counter() - t}
                if "forest" in spec and res.policy_data.get("initial_predictions"):
                    acc = run_predictions(res).accuracy()
                    row.update(median_abs_log=acc.median_abs_log, mu=float(acc.distortion.mu),
                               r2_log=acc.r2_log)
                results.setdefault(load, {}).setdefault(label, []).append(row)
                print(f"load {load} seed {seed} {label:<28} mean JCT {row['mean_jct']:>10.0f} "
                      f"p99 {row['p99_jct']:>10.0f} ({row['wall_s']:.1f} s)", file=sys.stderr, flush=True)
    return results


def table1(results) -> str:
    lines = ["| load | policy | mean JCT (s) | p99 JCT (s) | mean JCT / oracle | p99 JCT / oracle |",
             "|---|---|---|---|---|---|"]
    for load, by_policy in results.items():
        ref = by_policy[REFERENCE]
        for label, rows in by_policy.items():
            m = ci([r["mean_jct"] for r in rows])
            p = ci([r["p99_jct"] for r in rows])
            rm = ci([r["mean_jct"] / o["mean_jct"] for r, o in zip(rows, ref)])
            rp = ci([r["p99_jct"] / o["p99_jct"] for r, o in zip(rows, ref)])
            lines.append(f"| {load} | {label} | {fmt(*m)} | {fmt(*p)} | {fmt(*rm, 3)} | {fmt(*rp, 3)} |")
    return "\n".join(lines)


def accuracy_lines(results) -> str:
    lines = []
    for load, by_policy in results.items():
        rows = by_policy["A-SRPT forest (doubling)"]
        med = ci([r["median_abs_log"] for r in rows])
        r2 = ci([r["r2_log"] for r in rows])
        mus = [r["mu"] for r in rows]
        lines.append(f"load {load}: forest at submission: median |log(N^/N)| {fmt(*med, 3)}, "
                     f"R^2 log {fmt(*r2, 3)}, mu median {statistics.median(mus):.3g} (max {max(mus):.3g})")
    return "\n".join(lines)


def part2(args) -> dict:
    out: dict = {"sigma": list(args.sigmas), "runs": []}
    refs: dict = {"forest": [], "group_mean": []}
    for seed in range(args.seeds):
        inst = recurring_workload(args.sweep_jobs, seed=seed, load=args.sweep_load, cluster=args.cluster,
                                  max_duration=args.max_duration)
        lb = lower_bounds(inst)
        M = inst.cluster.total_gpus
        rho = max(M / (M - j.gpus + 1) for j in inst.jobs)
        for sigma in args.sigmas:
            res = simulate(inst, f'a-srpt:predictor="noisy:sigma={sigma}:seed={seed}":adaptive="off"', seed=seed)
            d = run_predictions(res).accuracy().distortion
            beta = max(r.beta for r in res.records)
            total = float(res.summary["total_completion_time"])
            virtual = sum(float(c) for c in res.policy_data["virtual_completion_times"].values())
            certificate = beta * float(lb.lb1) + beta * rho * float(d.mu_under) * virtual
            arrivals = sum(float(j.arrival) for j in inst.jobs)
            out["runs"].append({"seed": seed, "sigma": sigma, "mean_jct": float(res.summary["mean_jct"]),
                                "ratio": total / float(lb.best), "certificate": certificate / float(lb.best),
                                "flow_ratio": (total - arrivals) / (float(lb.best) - arrivals),
                                "bound": beta * (1 + rho * float(d.mu)), "mu": float(d.mu), "beta": beta,
                                "rho": rho})
        for name in refs:
            res = simulate(inst, f"a-srpt:predictor={name}", seed=seed)
            refs[name].append(float(res.summary["mean_jct"]))
        print(f"sweep seed {seed} done", file=sys.stderr, flush=True)
    out["references"] = refs
    return out


def table2(sweep) -> str:
    exact = {r["seed"]: r["mean_jct"] for r in sweep["runs"] if r["sigma"] == sweep["sigma"][0]}
    lines = ["| sigma | mean JCT (s) | JCT / JCT(sigma_0) | sum C / LB | flow / (LB - sum a) | certificate / LB (median) "
             "| bound beta(1+rho mu) (median) | mu (median) | certified |",
             "|---|---|---|---|---|---|---|---|---|"]
    for sigma in sweep["sigma"]:
        runs = [r for r in sweep["runs"] if r["sigma"] == sigma]
        ok = sum(r["certificate"] <= r["bound"] * (1 + 1e-9) and r["ratio"] <= r["certificate"] * (1 + 1e-9)
                 for r in runs)
        lines.append(f"| {sigma} | {fmt(*ci([r['mean_jct'] for r in runs]))} | "
                     f"{fmt(*ci([r['mean_jct'] / exact[r['seed']] for r in runs]), 3)} | "
                     f"{fmt(*ci([r['ratio'] for r in runs]), 3)} | {fmt(*ci([r['flow_ratio'] for r in runs]), 3)} | "
                     f"{statistics.median(r['certificate'] for r in runs):.3g} | "
                     f"{statistics.median(r['bound'] for r in runs):.3g} | "
                     f"{statistics.median(r['mu'] for r in runs):.3g} | {ok}/{len(runs)} |")
    seeds = sorted(exact)
    for name, values in sweep["references"].items():
        rel = ci([v / exact[k] for k, v in zip(seeds, values)])
        lines.append(f"| ({name}, adaptive doubling) | {fmt(*ci(values))} | {fmt(*rel, 3)} | | | | | | |")
    return "\n".join(lines)


def plot(sweep, path: str) -> None:
    from matplotlib.figure import Figure

    sig = sweep["sigma"]
    by = {s: [r for r in sweep["runs"] if r["sigma"] == s] for s in sig}
    fig = Figure(figsize=(10, 4), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2)
    exact = {r["seed"]: r["mean_jct"] for r in by[sig[0]]}
    m = [ci([r["mean_jct"] / exact[r["seed"]] for r in by[s]]) for s in sig]
    ax1.errorbar(sig, [a for a, _ in m], yerr=[b for _, b in m], marker="o", capsize=3,
                 label="A-SRPT, noisy truth (static)")
    seeds = sorted(exact)
    for name, style in (("forest", "--"), ("group_mean", ":")):
        rel = np.mean([v / exact[k] for k, v in zip(seeds, sweep["references"][name])])
        ax1.axhline(rel, linestyle=style, color="grey", label=f"A-SRPT, {name.replace('_', ' ')} (adaptive)")
    ax1.set_xlabel("noise sigma (N^ = N exp(sigma Z))")
    ax1.set_ylabel(f"mean JCT / mean JCT at sigma={sig[0]:g} (same seed)")
    ax1.set_title("Mean JCT vs prediction noise (95 % CI over seeds)")
    ax1.legend(fontsize=8)
    for key, label, marker in (("ratio", "measured sum C / LB", "o"),
                               ("flow_ratio", "measured flow / (LB - sum a)", "v"),
                               ("certificate", "certificate / LB", "s"),
                               ("bound", "Theorem 1: beta (1 + rho mu)", "^")):
        ax2.plot(sig, [statistics.median(r[key] for r in by[s]) for s in sig], marker=marker, label=label)
    ax2.set_yscale("log")
    ax2.set_xlabel("noise sigma")
    ax2.set_ylabel("ratio to the lower bound (median over seeds)")
    ax2.set_title("Theorem 1's mu-dependent bound")
    ax2.legend(fontsize=8)
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=800, help="jobs per workload (part 1)")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--loads", type=lambda s: [float(x) for x in s.split(",")], default=[0.7, 0.85, 1.0])
    p.add_argument("--cluster", default="2x8")
    p.add_argument("--max-duration", type=float, default=86400.0,
                   help="run-time clip in seconds (default one day; see recurring_workload)")
    p.add_argument("--sigmas", type=lambda s: [float(x) for x in s.split(",")],
                   default=[0.0, 0.25, 0.5, 1.0, 1.5, 2.0])
    p.add_argument("--sweep-jobs", type=int, default=400)
    p.add_argument("--sweep-load", type=float, default=0.8)
    p.add_argument("--skip-policies", action="store_true", help="only the sigma sweep")
    p.add_argument("--skip-sweep", action="store_true", help="only the policy table")
    p.add_argument("--plot", metavar="PNG", help="write the sigma-sweep figure here")
    p.add_argument("--json", metavar="FILE", help="write every run's figures here")
    p.add_argument("--issue14", action="store_true", help="only part 0 (prediction quality, ceiling, JCT effect)")
    p.add_argument("--rec-jobs", type=int, default=2000, help="recurring jobs per seed (part 0)")
    p.add_argument("--rec-seeds", type=int, default=3)
    p.add_argument("--windows", type=lambda s: [tuple(int(x) for x in w.split(":")) for w in s.split(",")],
                   default=[(20000, 20000), (40000, 20000), (60000, 10000)],
                   help="Philly windows START:LIMIT,... (part 0)")
    p.add_argument("--window-limit", type=int, default=20000, help="jobs of the default window (part 0 JCT)")
    p.add_argument("--gbm-on-philly", action="store_true", help="also score the residual model on Philly (slow)")
    p.add_argument("--skip-schedule", action="store_true", help="part 0 without the JCT runs")
    p.add_argument("--skip-accuracy", action="store_true", help="part 0: only the JCT runs")
    args = p.parse_args(argv)
    started = time.perf_counter()
    payload: dict = {"args": vars(args)}
    if args.issue14:
        if not args.skip_accuracy:
            acc = part0_accuracy(args)
            payload["accuracy"] = acc
            print("\n## Prediction scores (replay, at submission)\n")
            print(table0(acc))
            payload["ceiling"] = [philly_ceiling(a, n) for a, n in args.windows]
            print("\n## Philly bursts (ceiling)\n")
            for c in payload["ceiling"]:
                print(json.dumps(c))
        if not args.skip_schedule:
            sched = part0_schedule(args)
            payload["schedule"] = sched
            print("\n## Mean JCT with each predictor, relative to the oracle\n")
            print(table0_schedule(sched))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(payload, fh, indent=1, default=float)
        print(f"\n(total {time.perf_counter() - started:.0f} s)")
        return 0
    if not args.skip_policies:
        results = part1(args)
        payload["policies"] = {str(k): v for k, v in results.items()}
        print(f"\n## Policies ({args.jobs} jobs, {args.seeds} seeds, cluster {args.cluster}, run times <= "
              f"{args.max_duration:g} s; mean ± 95 % CI)\n")
        print(table1(results))
        print()
        print(accuracy_lines(results))
    if not args.skip_sweep:
        sweep = part2(args)
        payload["sweep"] = sweep
        print(f"\n## Sigma sweep (A-SRPT static predictions, {args.sweep_jobs} jobs, load {args.sweep_load}, "
              f"{args.seeds} seeds)\n")
        print(table2(sweep))
        if args.plot:
            plot(sweep, args.plot)
            print(f"\nfigure: {args.plot}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=1, default=float)
    print(f"\n(total {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
