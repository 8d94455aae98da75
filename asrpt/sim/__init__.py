"""The exact event-driven cluster simulator and what it produces.

- :func:`simulate` (engine.py): run a policy on an instance;
- :class:`SimResult`, :class:`JobRecord`, :class:`Segment` (records.py): frozen results;
- :class:`ClusterView`, :class:`JobView` (view.py): what policies may see;
- placers (placer.py): the placement step; :func:`summarize` (metrics.py).
"""

from .engine import simulate
from .metrics import summarize
from .placer import Allocation, CountPlacer, Placer, make_placer, register_placer
from .records import JobRecord, Segment, SimResult, check_records
from .view import ClusterView, CompletedJob, JobView

__all__ = ["simulate", "summarize", "SimResult", "JobRecord", "Segment", "check_records",
           "ClusterView", "JobView", "CompletedJob", "Placer", "CountPlacer", "Allocation",
           "make_placer", "register_placer"]
