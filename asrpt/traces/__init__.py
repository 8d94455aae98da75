"""Trace importers: real job traces into asrpt instances, with a report of every filtered row.

- :func:`read_philly` (philly.py): Microsoft Philly, Pollux's processed per-job table;
- :func:`read_pai` (pai.py): the Alibaba PAI GPU-2020 simulator's job CSV;
- :func:`read_alibaba_pods` (alibaba.py): Alibaba PAI 2023 (openb) pod list;
- :func:`read_helios` (helios.py): the Helios cluster_log schema;
- :func:`read_tiresias` (tiresias.py): the Tiresias simulator's job CSV;
- :func:`read_trace` (detect.py): any of them, detected from the header.
"""

from .alibaba import alibaba_cluster, read_alibaba_pods
from .base import RowProblem, TraceReport, shared_path
from .detect import detect_format, read_trace
from .helios import read_helios
from .pai import read_pai
from .philly import read_philly
from .tiresias import read_tiresias

__all__ = ["TraceReport", "RowProblem", "shared_path", "read_philly", "read_pai", "read_alibaba_pods",
           "alibaba_cluster", "read_helios", "read_tiresias", "read_trace", "detect_format"]
