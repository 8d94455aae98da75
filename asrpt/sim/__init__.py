"""The exact event-driven cluster simulator and what it produces.

- :func:`simulate` (run.py): run a policy on an instance, from names or objects;
- :func:`run_engine`, :class:`Observer` (engine.py): the engine itself, objects only;
- :class:`SimResult`, :class:`JobRecord`, :class:`Segment` (records.py): frozen results;
- :func:`summarize` (metrics.py).

What policies see (:class:`~asrpt.state.ClusterView`, :class:`~asrpt.state.JobView`) lives in
:mod:`asrpt.state`, the placers in :mod:`asrpt.placement.placers`; both are re-exported here.
"""

from ..state import Allocation, ClusterView, CompletedJob, JobView, Placer
from .engine import Observer, run_engine
from .metrics import summarize
from .records import JobRecord, Segment, SimResult, check_records
from .run import simulate

__all__ = ["simulate", "run_engine", "Observer", "summarize", "SimResult", "JobRecord", "Segment",
           "check_records", "ClusterView", "JobView", "CompletedJob", "Placer", "Allocation"]
