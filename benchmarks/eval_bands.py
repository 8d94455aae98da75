"""Calibration of the ``hierarchy`` predictor's 10%-90% bands (issue 45): overall, by decile of
the predicted work (known at submission), by decile of the true work (not known: the largest
true jobs are largely the under-predicted ones), by hierarchy level, and the bands' median width
(log of high / low), with the online calibration on (the default, ``band_adapt=0.005``,
``band_bins=5``) and off (``band_adapt=0``: the plain empirical quantiles of earlier errors).

``--uncensored`` adds a diagnostic row: the plain bands, but each job's error enters them at its
submission (the truth read at once) instead of at its completion. If the bands' shortfall were
the censoring of long jobs (their errors arrive late), this row would be calibrated.

Predictions are replayed (:func:`asrpt.predict.metrics.replay_predictions`; completion = arrival
+ best time). Run::

    .venv/bin/python benchmarks/eval_bands.py --workloads window,philly:0,philly:76000,recurring --uncensored
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def uncensored_replay(instance):
    """The plain bands with every error added at submission (a diagnostic; reads the hierarchy
    predictor's private point model and bands)."""
    from asrpt.predict.hierarchy import HierarchyPredictor
    from asrpt.predict.metrics import replay_predictions

    class Uncensored(HierarchyPredictor):
        def reset(self, seed=None):
            out = super().reset(seed)
            self.truth_ = {j.id: j for j in instance.jobs}
            return out

        def observe(self, completed):
            add = self.bands_.add
            self.bands_.add = lambda *a, **k: None        # (completions add nothing to the bands)
            try:
                super().observe(completed)
            finally:
                self.bands_.add = add

        def quantiles(self, job, *, attained=0, truth=None, levels=(0.1, 0.5, 0.9)):
            out = super().quantiles(job, attained=attained, truth=truth, levels=levels)
            if not attained and job.id not in self.seen_:
                self.seen_.add(job.id)
                work, stratum = self._band_center(job)
                j = self.truth_[job.id]
                true = j.iterations if j.iterations is not None else j.processing_time
                self.bands_.add(stratum, work, float(true))
            return out

    p = Uncensored(band_adapt=0)
    p.seen_ = set()
    return replay_predictions(p, instance, seed=0)


def row(name, log):
    inside = [float(lo) <= float(t) <= float(hi) for t, lo, hi in zip(log.true, log.low, log.high)]
    pred = [g["coverage"] for g in log.band_coverage("predicted")]
    true = [g["coverage"] for g in log.band_coverage("size")]
    levels = {g["group"]: g for g in log.band_coverage("level")} if log.level is not None else {}
    main = " ".join(f"{k} {levels[k]['coverage']:.3f}" for k in ("user_gpus", "group", "burst") if k in levels)
    width = statistics.median(math.log(float(hi) / float(lo)) for lo, hi in zip(log.low, log.high))
    return (f"| {name} | {sum(inside) / len(inside):.3f} | {min(pred):.3f}-{max(pred):.3f} | {true[-1]:.3f} | "
            f"{main} | {width:.2f} |")


def main(argv=None) -> int:
    import eval_asrpt
    from asrpt.predict.metrics import replay_predictions

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="window,philly:0,philly:76000,recurring")
    ap.add_argument("--uncensored", action="store_true")
    args = ap.parse_args(argv)
    print("| workload, bands | coverage | by predicted decile (lowest-highest) | largest true decile | "
          "main levels | median log width |")
    print("|---|---|---|---|---|---|")
    for name in args.workloads.split(","):
        inst = eval_asrpt.load(name, argparse.Namespace(full_abstract=False, recurring_jobs=4000))
        print(row(f"{name}, calibrated (default)", replay_predictions("hierarchy", inst, seed=0)), flush=True)
        print(row(f"{name}, plain (band_adapt=0)", replay_predictions("hierarchy:band_adapt=0", inst, seed=0)),
              flush=True)
        if args.uncensored:
            print(row(f"{name}, plain, uncensored (diagnostic)", uncensored_replay(inst)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
