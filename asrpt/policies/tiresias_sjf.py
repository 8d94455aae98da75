"""The Tiresias simulator's preemptive shortest-first family (``sjf``, ``shortest``,
``shortest-gpu`` of SymbioticLab/Tiresias ``simulator/run_sim.py``), rule for rule.

At every decision (the peer's events: arrivals and completions) the runnable jobs (a list in
arrival order at first, new jobs appended at its end) are stably sorted **in place** by one key:

- ``key="gpus"`` (``tiresias-sjf``, the peer's ``sjf``): the job's GPU count;
- ``key="remaining"`` (``tiresias-shortest``): remaining seconds, ``duration - seconds run``;
- ``key="remaining_gpu_time"`` (``tiresias-shortest-gpu``): remaining seconds x GPUs.

Ties keep the previous list order (not the arrival order: the list is sorted again at every
event). The engine then selects greedily by GPU count in that order, skipping jobs that do not fit,
and preempts running jobs left out: the peer re-places every runnable job from an empty cluster
in that order. The peer counts GPUs only (its yarn variant leaks node memory), so run these on a
one-server cluster to reproduce it. These policies are clairvoyant (they read the remaining work;
``sjf`` by GPUs does not need it, but keeps the family together). Remaining seconds are
``remaining work x tau*`` (abstract jobs: the remaining processing time).

A decision costs O(A log A) for A active jobs (a nearly sorted list sorts in about O(A)).
"""

from __future__ import annotations

from .._validation import Options
from .base import Decision, Policy, register_policy

__all__ = ["TiresiasSJF"]


@register_policy("tiresias-sjf", key="gpus")
@register_policy("tiresias-shortest", key="remaining")
@register_policy("tiresias-shortest-gpu", key="remaining_gpu_time")
class TiresiasSJF(Policy):
    """The Tiresias simulator's preemptive SJF family (module docstring).

    Parameters
    ----------
    key : {"gpus", "remaining", "remaining_gpu_time"}

    Examples
    --------
    A 1-GPU job arriving later preempts the 2-GPU job under ``sjf`` (by GPUs):

    >>> from asrpt.instance import Cluster, Instance, Job
    >>> from asrpt.sim import simulate
    >>> inst = Instance(Cluster.homogeneous(1, 2), (Job("a", 0, 2, processing_time=4),
    ...                                             Job("b", 1, 1, processing_time=1)))
    >>> res = simulate(inst, TiresiasSJF(key="gpus"))
    >>> res.completion_times, res.record("a").preemptions
    ({'a': 5, 'b': 2}, 1)
    """

    parameter_constraints = {"key": [Options(str, {"gpus", "remaining", "remaining_gpu_time"})]}
    preemptive = True
    clairvoyant = True
    work_conserving = True

    def __init__(self, *, key: str = "remaining"):
        self.key = key

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._list: list = []      # runnable jobs, in the peer's list order

    def decide(self, view):
        done = {c.job.index for c in view.completed}
        jobs = [j for j in self._list if j.index not in done] if done else self._list
        jobs.extend(sorted(view.arrived, key=lambda j: j.index))
        if self.key == "gpus":
            jobs.sort(key=lambda j: j.gpus)
        else:
            rem = {j.index: view.remaining_work(j) * j.tau_star for j in jobs}
            if self.key == "remaining":
                jobs.sort(key=lambda j: rem[j.index])
            else:
                jobs.sort(key=lambda j: rem[j.index] * j.gpus)
        self._list = jobs
        return Decision(list(jobs), backfill=True)
