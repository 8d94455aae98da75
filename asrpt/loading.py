"""Loading instances with every check, DNN jobs included: the loaders the commands use.

:mod:`asrpt.instance` owns the data model and the file format and checks what an instance says on
its own terms: fields, limits, unique ids, every demand against the cluster. Whether a DNN job's
model is in the zoo, its GPU types and precision are known and its parallelism fits the memory of
the cluster's GPUs is a question for the performance model (:mod:`asrpt.dnn.validate`), which is
built on the instance's data types; asking it from inside :mod:`asrpt.instance` would make the
two import each other. This module owns asking both: its loaders are :mod:`asrpt.instance`'s,
followed by the DNN checks, with the same problems, locations and one-line messages. The
commands, the batch runner, the trace readers and the workload generators load or build their
instances through it, and ``asrpt.load_instance`` / ``asrpt.parse_instance`` are the ones here.

:mod:`asrpt.dnn` is imported only when an instance has a DNN job, so abstract instances load
without numpy or networkx.

Examples
--------
>>> data = {"cluster": {"servers": [{"gpus": 8}], "gpu_type": "A100"},
...         "jobs": [{"id": "a", "arrival": 0, "gpus": 1, "model": "resnet5", "iterations": 10}]}
>>> problems, inst = instance_problems(data)
>>> [str(p) for p in problems], inst
(["jobs[0].model: unknown model 'resnet5' (did you mean 'resnet50'?)"], None)
>>> from asrpt import instance
>>> instance.parse_instance(data).jobs[0].model   # the data model alone does not ask the zoo
'resnet5'
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from . import instance as _instance
from .errors import InvalidInstance, Problem
from .instance import Cluster, Instance

__all__ = ["dnn_problems", "check_instance", "instance_problems", "parse_instance",
           "loads_instance", "load_instance"]


def dnn_problems(cluster: Cluster, jobs: Sequence[Any]) -> list[Problem]:
    """Every problem of the DNN jobs of ``jobs`` on ``cluster`` (empty when all are abstract).

    The checks of :func:`asrpt.dnn.validate.instance_problems`; :mod:`asrpt.dnn` is imported only
    when a job has a model.

    >>> from asrpt.instance import Job
    >>> dnn_problems(Cluster.homogeneous(1, 4), [Job("a", 0, 1, processing_time=3)])
    []
    >>> [str(p) for p in dnn_problems(Cluster.homogeneous(1, 8, "H20"),
    ...                               [Job("a", 0, 1, model="gpt2", iterations=5)])]
    ["cluster.gpu_type: unknown GPU type 'H20' (did you mean 'H200'?)"]
    """
    if all(getattr(j, "model", None) is None for j in jobs):
        return []
    from .dnn import validate

    return validate.instance_problems(cluster, jobs)


def check_instance(inst: Instance, *, source: str | None = None) -> Instance:
    """``inst`` itself once its DNN jobs pass :func:`dnn_problems`; InvalidInstance otherwise.

    What code that builds an :class:`~asrpt.instance.Instance` of DNN jobs (a generator, a trace
    given models, an instance moved onto another cluster) calls before handing it on.

    >>> from asrpt.instance import Job
    >>> ok = Instance(Cluster.homogeneous(1, 8, "A100"), (Job("a", 0, 1, model="gpt2", iterations=5),))
    >>> check_instance(ok) is ok
    True
    >>> check_instance(Instance(Cluster.homogeneous(1, 8, "A100"),
    ...                         (Job("a", 0, 1, model="gpt3", iterations=5),)))
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidInstance: jobs[0].model: unknown model 'gpt3' (did you mean 'gpt2'?)
    """
    problems = dnn_problems(inst.cluster, inst.jobs)
    if problems:
        raise InvalidInstance(problems, source=source)
    return inst


def instance_problems(data: Any, *, exact: bool = False) -> tuple[list[Problem], Instance | None]:
    """Validate a JSON-like object, DNN jobs included; ``(problems, instance)`` (None if problems).

    :func:`asrpt.instance.instance_problems` first; the DNN checks run once that finds nothing.
    This never raises for bad data: every problem is returned with its location.

    >>> problems, inst = instance_problems({"cluster": {"servers": [{"gpus": 8}]},
    ...     "jobs": [{"id": "a", "arrival": 0, "gpus": 9, "processing_time": 1}]})
    >>> [str(p) for p in problems]
    ["jobs[0].gpus: 9 exceeds the cluster's 8 GPUs"]
    """
    problems, inst = _instance.instance_problems(data, exact=exact)
    if inst is None:
        return problems, None
    problems = dnn_problems(inst.cluster, inst.jobs)
    return (problems, None) if problems else ([], inst)


def parse_instance(data: Any, *, source: str | None = None, exact: bool = False) -> Instance:
    """Build an Instance from a JSON-like object, or raise InvalidInstance listing every problem.

    As :func:`asrpt.instance.parse_instance`, DNN jobs checked too; ``exact=True`` reads every
    number as an exact rational.

    >>> parse_instance({"cluster": {"servers": [{"gpus": 4}]},
    ...                 "jobs": [{"id": "a", "arrival": 0, "gpus": 2, "processing_time": 5}]}).n_jobs
    1
    """
    return check_instance(_instance.parse_instance(data, source=source, exact=exact), source=source)


def loads_instance(text: str, *, source: str | None = None, exact: bool = False) -> Instance:
    """Parse an instance from JSON text, DNN jobs checked (InvalidInstance also for malformed JSON).

    >>> loads_instance('{"cluster": {"servers": [{"gpus": 2}]}, "jobs": []}').cluster.total_gpus
    2
    """
    return check_instance(_instance.loads_instance(text, source=source, exact=exact), source=source)


def load_instance(path: str | os.PathLike, *, exact: bool = False) -> Instance:
    """Read and validate an instance file, DNN jobs included.

    Raises InvalidInstance (carrying every problem with its location) for a missing or unreadable
    file, malformed JSON, or an invalid instance.

    >>> load_instance("instances/worked-example.json").n_jobs
    3
    """
    return check_instance(_instance.load_instance(path, exact=exact), source=os.fspath(path))
