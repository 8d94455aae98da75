"""Four prototype orders tried against the loss of issue 45 (docs/asrpt.md, "What was tried
against it"), kept as user policies so that the measured negative results can be rerun:

    .venv/bin/python benchmarks/eval_asrpt.py --workloads philly:10000,philly:40000 \
        --policies benchmarks/prototypes_issue45.py:SRSFQuantum,benchmarks/prototypes_issue45.py:Lindy \
        --classes tiresias

(``SRSFProtect`` and ``ConditionalGittins`` the same way; the last takes about 45 s of CPU per
window against A-SRPT's 3 s: its ranks are a table rebuilt every 50 completions.)

Each changes only the order among the jobs that are not overdue (Theorem 2 allows any), so any
could become an option of the guarded order if it won; none did.
"""

import math
from numbers import Real

from asrpt.policies import Decision, PredictorPolicy
from asrpt.policies.srsf import SRSF


class SRSFQuantum(SRSF):
    """SRSF on predictions with hysteresis, after a first quantum as Tiresias's first queue:
    jobs whose attained service is below ``quantum`` GPU-seconds come first (SRSF among them),
    then the others (SRSF among them)."""

    name = "srsf-quantum"
    parameter_constraints = {**SRSF.parameter_constraints, "quantum": [Real]}

    def __init__(self, *, key="gpu_time", predictor="hierarchy", adaptive="doubling", epsilon=0.5,
                 quantum=3250.0):
        super().__init__(key=key, predictor=predictor, adaptive=adaptive, epsilon=epsilon)
        self.quantum = quantum

    def decide(self, view):
        order = list(super().decide(view).order)
        q = self.quantum
        fresh = [j for j in order if view.attained_service(j) < q]
        old = [j for j in order if view.attained_service(j) >= q]
        wake = None                 # (the next time a running job leaves its first quantum)
        for j in view.running:
            a = view.attained_service(j)
            if a < q:
                t = view.now + (q - a) / j.gpus
                wake = t if wake is None or t < wake else wake
        return Decision(fresh + old, backfill=True, wake_at=wake)
class Lindy(PredictorPolicy):
    """SRSF on predictions while a job is inside its prediction; past it, its remaining GPU-time
    is estimated by `factor` times its attained GPU-time (a heavy tail's conditional estimate)
    instead of doubling's sawtooth; hysteresis epsilon for running jobs."""

    name = "lindy"
    preemptive = True
    work_conserving = True
    parameter_constraints = {"predictor": "no_validation", "epsilon": [Real], "factor": [Real]}

    def __init__(self, *, predictor="hierarchy", epsilon=0.5, factor=1.0):
        self.predictor = predictor
        self.epsilon = epsilon
        self.factor = factor

    def decide(self, view):
        tr = self.tracker_
        tr.update(view)
        pred = tr.predicted
        now = view.now
        wake = None
        eps = self.epsilon

        def key(j, running, stopping, done, tau):
            p = pred[j.index]
            if done < p:
                size = (p - done) * j.tau_star * j.gpus
            else:
                size = self.factor * done * j.tau_star * j.gpus
            if running and not stopping:
                size *= (1 - eps)
            return (size, j.arrival, j.key, j.index)

        entries = []
        for j, done, tau, stopping in view.running_progress():
            entries.append((key(j, True, stopping, done, tau), j))
            p = pred[j.index]
            if done < p:
                t = now + (p - done) * tau
                if t > now and (wake is None or t < wake):
                    wake = t
        for j in view.waiting:
            entries.append((key(j, False, False, view.attained_work(j), None), j))
        entries.sort(key=lambda e: e[0])
        return Decision([j for _, j in entries], backfill=True, wake_at=wake)


class SRSFProtect(SRSFQuantum):
    """SRSF on predictions with hysteresis, where a running job that has attained less than
    ``quantum`` GPU-seconds is not preempted for a job that is not overdue: such jobs come first
    (in the SRSF order), then the rest (SRSF). Aimed at the measured cause of the small jobs'
    wait: started, then preempted for newcomers predicted shorter."""

    name = "srsf-protect"

    def decide(self, view):
        order = list(SRSF.decide(self, view).order)       # (plain SRSF's order, not the quantum's)
        q = self.quantum
        protected = [j for j in order if view.is_running(j) and not view.is_stopping(j)
                     and view.attained_service(j) < q]
        keep = {j.index for j in protected}
        wake = None                 # (the next time a protected job leaves its quantum)
        for j in protected:
            t = view.now + (q - view.attained_service(j)) / j.gpus
            wake = t if wake is None or t < wake else wake
        return Decision(protected + [j for j in order if j.index not in keep], backfill=True, wake_at=wake)


class ConditionalGittins(PredictorPolicy):
    """The Gittins rank of each job's remaining GPU-time under the *population's* error
    distribution: a job predicted ``p`` (iterations) has size ``p * R``, where ``R`` is drawn from
    the ratios true/predicted of the last ``window`` completed jobs (learned online: a job's truth
    is read at its completion only). Given its work done ``a``, its rank is

        p * min_x  E[min(R, x) - a/p | R > a/p] / P(R <= x | R > a/p)   (x over the sampled ratios)

    times ``tau_star * gpus``; lowest rank first, hysteresis ``epsilon`` for running jobs. With a
    point distribution (``R = 1``) this is SRSF's remaining GPU-time; with a heavy tail a job that
    outran most ratios ranks by what the tail still expects of it, so a giant predicted small is
    demoted once it passes its band, while a medium job that just overran keeps a short rank.
    Below ``min_completed`` completions it is SRSF on predictions with doubling. Ranks come from
    a table over ``a/p`` on a log grid, rebuilt every ``refresh`` completions; a running job is
    woken each time its ``a/p`` doubles (the rank changes between events too)."""

    name = "gittins-conditional"
    preemptive = True
    work_conserving = True
    parameter_constraints = {"predictor": "no_validation", "epsilon": [Real], "window": [Real],
                             "refresh": [Real], "min_completed": [Real]}

    def __init__(self, *, predictor="hierarchy", epsilon=0.5, window=2000, refresh=50, min_completed=50):
        self.predictor = predictor
        self.epsilon = epsilon
        self.window = window
        self.refresh = refresh
        self.min_completed = min_completed

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self.ratios_ = []
        self.since_ = 0
        self.table_ = None

    def _rebuild(self):
        import numpy as np

        r = np.sort(np.asarray(self.ratios_[-int(self.window):], dtype=float))
        n = len(r)
        prefix = np.concatenate(([0.0], np.cumsum(r)))
        grid = np.concatenate(([0.0], np.geomspace(1e-3, max(r[-1], 1e-3) * 1.0001, 400)))
        ranks = np.empty(len(grid))
        for g, x in enumerate(grid):
            m = int(np.searchsorted(r, x, side="right"))
            if m >= n:
                ranks[g] = x           # past every sampled ratio: as much again as done
                continue
            k = np.arange(m, n)
            count = k - m + 1
            num = (prefix[k + 1] - prefix[m]) - count * x + (n - 1 - k) * (r[k] - x)
            ranks[g] = float(np.min(num / count))
        self.table_ = (grid, ranks, float(r[-1]))

    def _rank(self, x):
        import numpy as np

        grid, ranks, top = self.table_
        if x >= top:
            return x
        return float(np.interp(x, grid, ranks))

    def decide(self, view):
        tr = self.tracker_
        pred = tr.predicted
        for c in view.completed:
            p = pred.get(c.job.index)
            if p:
                self.ratios_.append(float(c.work) / float(p))
                self.since_ += 1
        tr.update(view)
        if len(self.ratios_) >= self.min_completed and (self.table_ is None or self.since_ >= self.refresh):
            self._rebuild()
            self.since_ = 0
        now = view.now
        eps = self.epsilon
        wake = None
        entries = []
        table = self.table_

        def size(j, done):
            p = float(pred[j.index])
            if table is None:
                while p <= done:
                    p *= 2
                return (p - done) * j.tau_star * j.gpus
            return p * self._rank(done / p) * j.tau_star * j.gpus

        for j, done, tau, stopping in view.running_progress():
            s = size(j, done)
            if not stopping:
                s *= (1 - eps)
            entries.append(((s, j.arrival, j.key, j.index), j))
            p = float(pred[j.index])
            nxt = p * 2 ** math.floor(math.log2(max(done / p, 1e-3)) + 1) if table is not None else p
            while nxt <= done:
                nxt *= 2
            t = now + (nxt - done) * tau
            if t > now and (wake is None or t < wake):
                wake = t
        for j in view.waiting:
            entries.append(((size(j, view.attained_work(j)), j.arrival, j.key, j.index), j))
        entries.sort(key=lambda e: e[0])
        return Decision([j for _, j in entries], backfill=True, wake_at=wake)
