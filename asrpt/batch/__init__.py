"""Batch solving: one task over many instance files, resumable, on processes or dask.

- :mod:`asrpt.batch.tasks`: the tasks (``srpt``, ``opt``, ``certify``, ``certify-guarded``,
  ``certify-robust``, ``simulate``, ``compare-opt``, ``place``),
  each a pure function from an instance to a JSON-ready dict of figures; option normalisation
  and the instance hash (the resume key);
- :mod:`asrpt.batch.executors`: where work runs (worker processes, or dask.distributed) and the
  per-instance time limit;
- :mod:`asrpt.batch.runner`: :func:`run_batch` (the loop behind ``asrpt batch``), the
  append-only results file, :func:`read_results` and :func:`ratio_rows` (``compare-opt`` rows
  as one flat record per instance and policy).

The workflow from ``asrpt generate`` to a results table is in ``docs/workflows.md``.
"""

from .executors import DaskExecutor, ProcessExecutor, make_executor
from .runner import SCHEMA, BatchSummary, ResultsLog, expand_inputs, ratio_rows, read_results, run_batch
from .tasks import TASKS, execute, get_task, instance_hash, normalize_options, task_names

__all__ = ["run_batch", "read_results", "ratio_rows", "expand_inputs", "BatchSummary", "ResultsLog", "SCHEMA",
           "TASKS", "task_names", "get_task", "normalize_options", "instance_hash", "execute",
           "ProcessExecutor", "DaskExecutor", "make_executor"]
