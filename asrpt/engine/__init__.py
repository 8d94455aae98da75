"""The event-driven cluster simulator's engine and what it produces; it knows no policy or placer
by name (:mod:`asrpt.sim` turns names into objects above it).

- :func:`run_reference` (reference.py): the specification, a plain engine with no fast path,
  read first; :func:`run_engine`, :class:`Observer` (core.py): the fast engine, objects only,
  which must give the reference's records (tests/engine/test_reference.py);
- :class:`SimResult`, :class:`JobRecord`, :class:`Segment`, :func:`check_records` (records.py):
  frozen results;
- :func:`summarize`, :func:`percentile` (metrics.py): summary metrics from the records alone.

Policies, predictors and the theory read records from here; nothing here imports them.
"""

from .core import Observer, run_engine
from .reference import run_reference
from .metrics import percentile, summarize
from .records import JobRecord, Segment, SimResult, check_records

__all__ = ["run_engine", "run_reference", "Observer", "summarize", "percentile", "SimResult", "JobRecord", "Segment",
           "check_records"]
