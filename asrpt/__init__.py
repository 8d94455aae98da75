"""asrpt: online scheduling of distributed deep-learning training jobs in GPU clusters.

A research toolkit around A-SRPT (adaptive shortest-remaining-processing-time-first; Luo, Liu,
Lee, Shroff, arXiv 2501.05563): the instance model, exact single-machine SRPT and the virtual
single machine, offline optima and lower bounds, DNN jobs as computation graphs with a calibrated
performance model, communication-aware placement, an exact event-driven cluster simulator with
the field's baselines, and the competitive-ratio theory as runnable checks.

Data flows one way: instance -> job graphs -> performance model / placement -> policy ->
simulator -> metrics and bounds. See ``docs/design.md`` for the package map.
"""

from .errors import (AsrptError, Infeasible, InvalidInstance, InvalidParameterError,
                     NotFittedError, SolverError, TraceError)
from .instance import Cluster, Instance, Job, Parallelism, Server, save_instance
from .loading import load_instance, parse_instance

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "AsrptError",
    "InvalidParameterError",
    "InvalidInstance",
    "Infeasible",
    "SolverError",
    "NotFittedError",
    "TraceError",
    "Cluster",
    "Server",
    "Job",
    "Parallelism",
    "Instance",
    "load_instance",
    "parse_instance",
    "save_instance",
]
