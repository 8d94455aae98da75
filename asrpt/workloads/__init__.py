"""Workload generators: seeded synthetic instances calibrated to production traces.

- :func:`recurring_workload` (recurring.py): users who resubmit job groups (model, dataset,
  configuration), calibrated to the Philly and Helios statistics of :mod:`.profiles`;
- :mod:`.generators`: the instance families of ``asrpt generate`` (uniform, heavy-tailed, bursty,
  adversarial, Philly-like, recurring, DNN mixes), seeded, recorded in each instance's metadata
  and regenerable (:func:`regenerate`);
- :func:`make_workload`: a workload from a spec such as ``"recurring:n_jobs=500:load=0.9:seed=2"``
  or ``"heavy_tailed:n_jobs=20:seed=1"`` (the ``name:key=value`` syntax of policies and
  predictors): :func:`recurring_workload` with all its parameters, or any generator family.
"""

from __future__ import annotations

from typing import Callable

from .._validation import validate_params
from ..errors import InvalidParameterError, unknown_name
from ..instance import Instance
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

#: Generator families by name.
WORKLOADS: dict[str, Callable[..., Instance]] = {"recurring": recurring_workload}


@validate_params({"spec": [str]})
def make_workload(spec: str) -> Instance:
    """Generate a workload from ``"family[:key=value...]"``.

    Parameters
    ----------
    spec : str
        A family of :data:`WORKLOADS` and its keyword arguments.

    Returns
    -------
    Instance

    Raises
    ------
    InvalidParameterError
        Unknown family or parameter, or a bad value.

    Examples
    --------
    >>> make_workload("recurring:n_jobs=12:seed=4").n_jobs
    12
    >>> make_workload("recuring")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: unknown workload family 'recuring' (did you mean 'recurring'?); known: adversarial, bursty, dnn, heavy_tailed, philly, recurring, uniform
    >>> make_workload("heavy_tailed:n_jobs=4:seed=1").metadata["family"]
    'heavy_tailed'
    """
    from ..registry import parse_spec

    name, params = parse_spec(spec, "workload")
    if name not in WORKLOADS:
        if name.replace("-", "_") in FAMILIES:
            return generate_one(name, **params)
        raise unknown_name("workload family", name, set(WORKLOADS) | set(FAMILIES))
    try:
        return WORKLOADS[name](**params)
    except TypeError as exc:  # an unknown keyword
        raise InvalidParameterError(f"workload {name!r}: {exc}") from None
