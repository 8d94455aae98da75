"""The documented, seeded rule that turns trace jobs into DNN jobs.

Traces such as Philly record a job's GPU count and duration, not its model. To study placement and
the performance model on real arrival processes, each abstract trace job j (g_j GPUs, duration d_j,
GPU-time g_j d_j) gets:

1. **a model**, drawn uniformly (with ``job_generator(seed, job id)``, so independently of job order)
   from the pool of its GPU-time bucket, in the spirit of Pollux's workload construction:

   ========================  ===========================================================
   GPU-time                  pool
   ========================  ===========================================================
   < 1 GPU-hour              resnet18_cifar, mobilenet_v2, bert-base, resnet18
   < 10 GPU-hours            resnet50, vgg16, densenet121, gpt2
   < 100 GPU-hours           resnet50, vit_b_16, bert-large, gpt2-medium
   >= 100 GPU-hours          gpt2-large, gpt2-xl, llama-1b, gpt3-1.3b; with >= 16 GPUs
                             also llama-7b and gpt3-2.7b
   ========================  ===========================================================

2. **a parallel configuration** of exactly g_j GPUs: the first that fits GPU memory on the
   cluster's GPU type (:mod:`asrpt.dnn.validate`) in the order pure data parallelism (g, 1, 1);
   tensor parallelism tp = 2, 4, 8 (dividing g) with dp = g / tp; then tp = 8 with pipeline
   depths pp = 2, 4, 8 (dividing g / 8). If no configuration of the drawn model fits, the next
   models of the pool are tried in order; a job for which none fits stays abstract (counted in
   the report's notes). The global batch is the model's default;

3. **iterations** N_j = max(1, round(d_j / tau*_j)), so that its best processing time N_j tau*_j
   is the trace duration up to half an iteration. ``meta["trace_duration"]`` keeps d_j as a check;

4. **a sequence length** for the transformers whose training length differs from their context
   (:data:`TRAINING_SEQ_LEN`): BERT at 128 tokens (fine-tuning, as in the BERT paper's GLUE
   runs), LLaMA at 2048; GPT-2 and GPT-3 train at their context (no ``seq_len``).

The trace's own ``instances`` are dropped for DNN jobs (the worker graph's placement decides how
a job spreads); ``user`` and the other fields are kept.
"""

from __future__ import annotations

from collections import Counter


from .._validation import Interval, validate_params
from ..instance import LIMITS, Instance, Job, Parallelism
from ..loading import check_instance
from ..random import job_generator

__all__ = ["assign_models", "MODEL_POOLS", "TRAINING_SEQ_LEN", "candidate_configurations"]

_HOUR = 3600.0
MODEL_POOLS = (
    (1 * _HOUR, ("resnet18_cifar", "mobilenet_v2", "bert-base", "resnet18")),
    (10 * _HOUR, ("resnet50", "vgg16", "densenet121", "gpt2")),
    (100 * _HOUR, ("resnet50", "vit_b_16", "bert-large", "gpt2-medium")),
    (float("inf"), ("gpt2-large", "gpt2-xl", "llama-1b", "gpt3-1.3b")),
)
_BIG_POOL_EXTRA = ("llama-7b", "gpt3-2.7b")
#: Sequence length of assigned models that train shorter than their context.
TRAINING_SEQ_LEN = {"bert-base": 128, "bert-large": 128, "llama-1b": 2048, "llama-7b": 2048}


def _pool(gpus: int, gpu_seconds: float) -> tuple[str, ...]:
    for limit, pool in MODEL_POOLS:
        if gpu_seconds < limit:
            return pool if limit != float("inf") or gpus < 16 else pool + _BIG_POOL_EXTRA
    raise AssertionError("unreachable: the last pool has no limit")


def candidate_configurations(gpus: int) -> list[Parallelism]:
    """The configurations tried, in order, for a job of ``gpus`` GPUs.

    >>> [p.as_tuple() for p in candidate_configurations(16)]
    [(16, 1, 1), (8, 1, 2), (4, 1, 4), (2, 1, 8), (1, 2, 8)]
    """
    out = [Parallelism(gpus, 1, 1)]
    for tp in (2, 4, 8):
        if tp <= gpus and gpus % tp == 0:
            out.append(Parallelism(gpus // tp, 1, tp))
    if gpus % 8 == 0:
        rest = gpus // 8
        for pp in (2, 4, 8):
            if pp <= rest and rest % pp == 0:
                out.append(Parallelism(rest // pp, pp, 8))
    return out


def _dnn_job(job: Job, model: str, par: Parallelism, iterations: int, seq, meta: dict) -> Job:
    """``Job(job.id, job.arrival, job.gpus, weight=job.weight, model=model, parallelism=par,
    iterations=iterations, user=job.user, group=job.group, dataset=job.dataset, status=job.status,
    meta=meta, seq_len=seq)``, checked once here: the fields taken from ``job`` were checked when it was built,
    ``model`` is a zoo name, ``par`` has ``job.gpus`` GPUs; what is left to check is checked, and
    anything unusual (nested meta, numbers past the limits) goes through ``Job`` itself."""
    if (type(iterations) is int and 1 <= iterations <= LIMITS["count"] and par.gpus == job.gpus
            and (seq is None or (type(seq) is int and seq >= 1))
            and all(type(v) in (int, float, str) for v in meta.values())
            and type(meta.get("trace_duration")) in (int, float)):
        return Job._checked({"id": job.id, "arrival": job.arrival, "gpus": job.gpus,
                             "weight": job.weight, "model": model, "parallelism": par,
                             "iterations": iterations, "user": job.user, "group": job.group,
                             "dataset": job.dataset, "status": job.status, "meta": dict(meta),
                             "seq_len": seq})
    return Job(job.id, job.arrival, job.gpus, weight=job.weight, model=model, parallelism=par,
               iterations=iterations, user=job.user, group=job.group, dataset=job.dataset,
               status=job.status, meta=meta, seq_len=seq)


@validate_params({"instance": [Instance], "seed": [Interval(int, 0, None, closed="left")]})
def assign_models(instance: Instance, *, seed: int = 0) -> Instance:
    """Give every abstract job of ``instance`` a zoo model, a configuration and iterations.

    DNN jobs already in the instance are kept as they are. The instance metadata records the rule,
    the seed and how many jobs stayed abstract because no configuration fitted.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Instance, Job
    >>> inst = Instance(Cluster.homogeneous(2, 8, "A100"), (Job("7", 0, 4, processing_time=7200),))
    >>> job = assign_models(inst, seed=1).jobs[0]
    >>> job.model in MODEL_POOLS[1][1], job.parallelism.gpus, job.meta["trace_duration"]
    (True, 4, 7200)
    """
    from ..dnn.perf import best_iteration_time
    from ..dnn.validate import job_problems

    cluster = instance.cluster
    fits_cache: dict[tuple, bool] = {}
    tau_cache: dict[tuple, float] = {}   # tau* depends on the model and configuration only
    stayed = Counter()
    jobs = []
    for job in instance.jobs:
        if not job.is_abstract:
            jobs.append(job)
            continue
        pool = _pool(job.gpus, float(job.gpus) * float(job.processing_time))
        first = int(job_generator(seed, job.id).integers(len(pool)))
        chosen = None
        for model in pool[first:] + pool[:first]:
            for par in candidate_configurations(job.gpus):
                key = (model, par.as_tuple())
                if key not in fits_cache:
                    trial = Job("probe", 0, job.gpus, model=model, parallelism=par, iterations=1,
                                seq_len=TRAINING_SEQ_LEN.get(model))
                    fits_cache[key] = not job_problems(trial, cluster)
                if fits_cache[key]:
                    chosen = (model, par)
                    break
            if chosen:
                break
        if chosen is None:
            stayed[job.gpus] += 1
            jobs.append(job)
            continue
        model, par = chosen
        meta = dict(job.meta)
        meta.setdefault("trace_duration", job.processing_time)
        seq = TRAINING_SEQ_LEN.get(model)
        tau = tau_cache.get((model, par))
        if tau is None:
            probe = Job(job.id, job.arrival, job.gpus, weight=job.weight, model=model, parallelism=par,
                        iterations=1, user=job.user, group=job.group, dataset=job.dataset, meta=meta,
                        seq_len=seq)
            tau = tau_cache[(model, par)] = best_iteration_time(probe, cluster)
        iterations = max(1, round(float(job.processing_time) / tau))
        jobs.append(_dnn_job(job, model, par, iterations, seq, meta))
    metadata = dict(instance.metadata)
    metadata["model_assignment"] = {"rule": "asrpt.traces.assign", "seed": seed,
                                    "stayed_abstract": sum(stayed.values())}
    return check_instance(Instance(cluster, tuple(jobs), metadata))
