"""Workload generators: seeded synthetic instances calibrated to production traces.

- :func:`recurring_workload` (recurring.py): users who resubmit job groups (model, dataset,
  configuration), calibrated to the Philly and Helios statistics of :mod:`.profiles`;
- :mod:`.generators`: the instance families of ``asrpt generate`` (uniform, heavy-tailed, bursty,
  adversarial, Philly-like, recurring, DNN mixes), seeded, recorded in each instance's metadata
  and regenerable (:func:`regenerate`);
- :func:`make_workload`: a workload from a spec such as
  ``"recurring_users:n_jobs=500:load=0.9:seed=2"`` or ``"heavy_tailed:n_jobs=20:seed=1"`` (the
  ``name:key=value`` syntax of every registry, :mod:`asrpt.registry`): :func:`recurring_workload`
  with all its parameters (:data:`WORKLOADS`), or any generator family.

Names: ``recurring_users`` (:func:`recurring_workload`, the profile's own cluster and defaults)
is not the generator family ``recurring`` (:func:`recurring_instance`: the same generator with
``asrpt generate``'s small defaults, e.g. a 2x8 cluster). The old spelling ``recurring`` of
``recurring_users`` is still read by :func:`make_workload` and ``asrpt workload`` / ``asrpt
predict-eval`` (where it always meant :func:`recurring_workload`).
"""

from __future__ import annotations


from .._validation import validate_params
from ..errors import InvalidParameterError, unknown_name
from ..instance import Instance
from ..registry import Registry, parse_spec
from .generators import (FAMILIES, bursty_instance, dnn_instance, family_names, generate,
                         generate_files, generate_one, heavy_tailed_instance, philly_instance,
                         recurring_instance, regenerate, uniform_instance, adversarial_instance)
from .profiles import PROFILES, get_profile, helios_statistics, philly_statistics
from .recurring import RecurringParams, gpu_distribution, recurring_workload, workload_statistics

__all__ = ["WORKLOADS", "make_workload", "recurring_workload", "RecurringParams",
           "workload_statistics", "gpu_distribution", "PROFILES", "get_profile",
           "philly_statistics", "helios_statistics", "FAMILIES", "family_names", "generate",
           "generate_one", "generate_files", "regenerate", "uniform_instance",
           "heavy_tailed_instance", "bursty_instance", "adversarial_instance", "philly_instance",
           "recurring_instance", "dnn_instance"]

#: Workload generators by name (``WORKLOADS[name]`` is the function); the generator families of
#: :data:`FAMILIES` are read by :func:`make_workload` too.
WORKLOADS = Registry("workload", item=lambda e: e.target)
WORKLOADS.register("recurring_users", recurring_workload,
                   description="users resubmitting job groups, calibrated to a trace profile")
WORKLOADS.alias("recurring", "recurring_users")  # the old name (not the generator family recurring)


@validate_params({"spec": [str]})
def make_workload(spec: str) -> Instance:
    """The :class:`~asrpt.instance.Instance` of ``spec``, ``"family[:key=value...]"``: a generator
    of :data:`WORKLOADS` or a family of :data:`FAMILIES` with its keyword arguments. An unknown
    family or parameter, or a bad value, raises InvalidParameterError.

    Examples
    --------
    >>> make_workload("recurring_users:n_jobs=12:seed=4").n_jobs
    12
    >>> make_workload("recuring")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: unknown workload family 'recuring' (did you mean 'recurring'?); known: adversarial, bursty, dnn, heavy_tailed, philly, recurring, recurring_users, starvation, uniform
    >>> make_workload("heavy_tailed:n_jobs=4:seed=1").metadata["family"]
    'heavy_tailed'
    """
    name, params = parse_spec(spec, "workload")
    if name not in WORKLOADS:
        if name.replace("-", "_") in FAMILIES:
            return generate_one(name, **params)
        raise unknown_name("workload family", name, set(WORKLOADS) | set(FAMILIES))
    try:
        return WORKLOADS[name](**params)
    except TypeError as exc:  # an unknown keyword
        raise InvalidParameterError(f"workload {name!r}: {exc}") from None
