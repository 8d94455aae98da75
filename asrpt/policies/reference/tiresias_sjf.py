"""Plain preemptive shortest-first family of the Tiresias simulator (``tiresias-sjf``,
``tiresias-shortest``, ``tiresias-shortest-gpu``) (the reference copy of
:mod:`asrpt.policies.tiresias_sjf`).

**Rule.** The runnable jobs form a list: arrivals join its end (by instance order), completed
jobs leave it. At every decision the list is stably sorted, in place, by one key:

- ``key="gpus"``: the job's GPU count;
- ``key="remaining"``: its remaining seconds, ``remaining work x tau*``;
- ``key="remaining_gpu_time"``: remaining seconds x GPUs;

so ties keep the list's previous order. The engine fills the GPUs greedily in that order,
skipping jobs that do not fit, and preempts the running jobs left out. Clairvoyant (the remaining
work is the truth).

Examples
--------
>>> from asrpt.instance import Cluster, Instance, Job
>>> from asrpt.sim import simulate
>>> inst = Instance(Cluster.homogeneous(1, 2), (Job("a", 0, 2, processing_time=4),
...                                             Job("b", 1, 1, processing_time=1)))
>>> simulate(inst, ReferenceTiresiasSJF(key="gpus")).completion_times
{'a': 5, 'b': 2}
"""

from __future__ import annotations

from ...state import Decision, Policy
from ..tiresias_sjf import TiresiasSJF

__all__ = ["ReferenceTiresiasSJF"]


class ReferenceTiresiasSJF(Policy):
    """The Tiresias simulator's preemptive SJF family, plainly (module docstring)."""

    name = "tiresias-shortest"
    parameter_constraints = TiresiasSJF.parameter_constraints
    preemptive = True
    clairvoyant = True
    work_conserving = True

    def __init__(self, *, key: str = "remaining"):
        self.key = key

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._list: list = []       # the runnable jobs, in the list's order

    def _key(self, view, job):
        if self.key == "gpus":
            return job.gpus
        remaining = view.remaining_work(job) * job.tau_star
        return remaining if self.key == "remaining" else remaining * job.gpus

    def decide(self, view):
        done = {c.job.index for c in view.completed}
        jobs = [job for job in self._list if job.index not in done]
        jobs += sorted(view.arrived, key=lambda job: job.index)
        keys = {job.index: self._key(view, job) for job in jobs}
        jobs.sort(key=lambda job: keys[job.index])
        self._list = jobs
        return Decision(list(jobs), backfill=True)
