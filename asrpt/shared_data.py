"""Where the data nobody here wrote lives: the one setting ``ASRPT_SHARED`` and the paths under it.

A leaf module (it imports nothing of asrpt), so that every layer that reads shared data (the
trace importers, the performance model's calibration, tests and benchmarks) can use it without
importing another layer. :mod:`asrpt.traces.base` re-exports its names.
"""

from __future__ import annotations

import os

__all__ = ["shared_path", "missing_file_message", "UNSET_SHARED"]


#: Stands for the shared data folder in paths built while ``ASRPT_SHARED`` is unset.
UNSET_SHARED = "$ASRPT_SHARED"


def shared_path(*parts: str) -> str:
    """Path of a file in the shared data folder: ``$ASRPT_SHARED/<parts>``.

    ``ASRPT_SHARED`` is the one setting that locates the data nobody here wrote (the real traces,
    measurements and the published simulators' decisions: the folder that holds ``traces/``,
    ``measurements/``, ``peer-alibaba/`` and ``peer-tiresias/``). There is no fallback: while it is
    unset the path starts with the literal ``$ASRPT_SHARED`` and does not exist, so a reader
    fails with a message that says to set it, and tests that need the data skip.

    Examples
    --------
    >>> shared_path("traces", "philly.csv").endswith(os.path.join("traces", "philly.csv"))
    True
    """
    base = os.environ.get("ASRPT_SHARED")
    if not base:
        return os.path.join(UNSET_SHARED, *parts)
    return os.path.normpath(os.path.join(os.path.abspath(base), *parts))


def missing_file_message(path: str) -> str:
    """What to say about a data file that does not exist (names ``ASRPT_SHARED`` when it is the
    cause)."""
    if path.startswith(UNSET_SHARED):
        return f"{path}: the shared data folder is not set (set ASRPT_SHARED to the folder that holds traces/)"
    return f"{path}: no such file"
