"""The exact event-driven cluster simulator, from names or objects: the composition layer.

- :func:`simulate` (run.py): run a policy on an instance, from names or objects; the one place
  where policy and placement names become objects for the engine;
- re-exported from :mod:`asrpt.engine`, the layer below that knows no name:
  :func:`run_engine`, :class:`Observer`, the frozen results (:class:`SimResult`,
  :class:`JobRecord`, :class:`Segment`) and :func:`summarize`.

What policies see (:class:`~asrpt.state.ClusterView`, :class:`~asrpt.state.JobView`) lives in
:mod:`asrpt.state`, the placers in :mod:`asrpt.placement.placers`; both are re-exported here.
"""

from ..state import Allocation, ClusterView, CompletedJob, JobView, Placer
from ..engine import JobRecord, Observer, Segment, SimResult, check_records, run_engine, summarize
from .run import simulate

__all__ = ["simulate", "run_engine", "Observer", "summarize", "SimResult", "JobRecord", "Segment",
           "check_records", "ClusterView", "JobView", "CompletedJob", "Placer", "Allocation"]
