"""The event-driven cluster simulator's engine and what it produces; it knows no policy or placer
by name (:mod:`asrpt.sim` turns names into objects above it).

- :func:`run_engine`, :class:`Observer` (core.py): the engine, objects only;
- :class:`SimResult`, :class:`JobRecord`, :class:`Segment`, :func:`check_records` (records.py):
  frozen results;
- :func:`summarize`, :func:`percentile` (metrics.py): summary metrics from the records alone.

Policies, predictors and the theory read records from here; nothing here imports them.
"""

from .core import Observer, run_engine
from .metrics import percentile, summarize
from .records import JobRecord, Segment, SimResult, check_records

__all__ = ["run_engine", "Observer", "summarize", "percentile", "SimResult", "JobRecord", "Segment",
           "check_records"]
