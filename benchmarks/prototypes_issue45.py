"""Three prototype orders tried against the loss of issue 45 (docs/asrpt.md, "What was tried
against it"), kept as user policies so that the measured negative results can be rerun:

    .venv/bin/python benchmarks/eval_asrpt.py --workloads philly:10000,philly:40000 \
        --policies benchmarks/prototypes_issue45.py:SRSFQuantum,benchmarks/prototypes_issue45.py:Lindy \
        --classes tiresias

Each changes only the order among the jobs that are not overdue (Theorem 2 allows any), so any
could become an option of the guarded order if it won; none did.
"""

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
