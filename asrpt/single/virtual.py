"""The virtual single machine (proofs/model.md, Definition 3): a cluster instance squashed onto one
machine.

Job j becomes a single-machine job released at its arrival ``a_j`` with size

    p~_j = g_j * P_j / M        (GPU-time divided by the cluster's GPU count M)

where ``P_j`` is the job's processing time from :mod:`asrpt.sizes` (the true ``P*_j``, or the
predicted one with ``predicted=True``). Preemptive SRPT on these sizes gives the virtual
completion times ``C~_j``; with true sizes their sum is the lower bound LB2
(proofs/lemma1-lower-bounds.md, Lemma 1). This module owns only that mapping; the SRPT itself is
:func:`asrpt.single.srpt.srpt_schedule`, with ties broken by ``id_key`` of the job ids.

Arithmetic is exact when the instance is (ints and Fractions give Fractions, never floats).

Examples
--------
>>> virtual_sizes(two_server_instance)
(1, Fraction(1, 2), Fraction(1, 4))
"""

from __future__ import annotations

from ..instance import Instance
from ..sizes import exact_div, exact_mul, predicted_processing_times, processing_times
from .._validation import InstanceOf, validate_params
from .srpt import Schedule, srpt_schedule

__all__ = ["virtual_sizes", "virtual_schedule"]


@validate_params({"instance": [InstanceOf(Instance)], "predicted": ["boolean"]})
def virtual_sizes(instance: Instance, *, predicted: bool = False) -> tuple:
    """Virtual sizes ``p~_j = g_j * P_j / M`` in job order.

    Parameters
    ----------
    instance : Instance
        The cluster instance (abstract or DNN jobs).
    predicted : bool
        Use predicted processing times (the job's prediction where it has one, else the truth)
        instead of the true ones.

    Returns
    -------
    tuple of numbers
        One size per job; exact for int/Fraction instances.

    Raises
    ------
    InvalidParameterError
        ``instance`` is not an Instance or ``predicted`` not a bool.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Instance, Job
    >>> inst = Instance(Cluster.homogeneous(1, 4), (Job("A", 0, 2, processing_time=4),
    ...     Job("B", 0, 4, processing_time=1), Job("C", 1, 1, processing_time=2)))
    >>> virtual_sizes(inst)
    (2, 1, Fraction(1, 2))
    """
    times = predicted_processing_times(instance) if predicted else processing_times(instance)
    m = instance.cluster.total_gpus
    return tuple(exact_div(exact_mul(job.gpus, p), m) for job, p in zip(instance.jobs, times))


@validate_params({"instance": [InstanceOf(Instance)], "predicted": ["boolean"]})
def virtual_schedule(instance: Instance, *, predicted: bool = False) -> Schedule:
    """The virtual SRPT schedule: preemptive SRPT on releases ``a_j`` and sizes ``p~_j``.

    Parameters
    ----------
    instance : Instance
        The cluster instance.
    predicted : bool
        Use predicted sizes (what A-SRPT sees online) instead of the true ones.

    Returns
    -------
    Schedule
        Indexed like ``instance.jobs``, with the job ids attached (``by_id()``); ties broken by
        ``id_key`` of the ids. With true sizes ``total_completion_time`` is LB2 (unit weights).

    Raises
    ------
    InvalidParameterError
        ``instance`` is not an Instance or ``predicted`` not a bool.

    Examples
    --------
    >>> from asrpt.instance import Cluster, Instance, Job
    >>> inst = Instance(Cluster.homogeneous(1, 4), (Job("A", 0, 2, processing_time=4),
    ...     Job("B", 0, 4, processing_time=1), Job("C", 1, 1, processing_time=2)))
    >>> s = virtual_schedule(inst)
    >>> s.by_id(), s.total_completion_time
    ({'A': Fraction(7, 2), 'B': 1, 'C': Fraction(3, 2)}, 6)
    """
    sizes = virtual_sizes(instance, predicted=predicted)
    return srpt_schedule([j.arrival for j in instance.jobs], list(sizes),
                         ids=[j.id for j in instance.jobs])
