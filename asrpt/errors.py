"""The exceptions asrpt raises, one class per meaning.

Every error the toolkit raises on purpose derives from :class:`AsrptError`, so a caller (and the
CLI) can tell "asrpt refused this input" from a bug. Each message is one line: what, where, why.

Hierarchy::

    AsrptError
    ├── InvalidParameterError   a function or plugin got a parameter outside its constraints
    ├── InvalidInstance         an instance (file or object) breaks the instance format
    ├── Infeasible              no schedule / placement exists (e.g. not enough free GPUs)
    ├── SolverError             a solver backend is missing or failed
    ├── NotFittedError          a predictor was used before ``fit``
    └── TraceError              a trace file could not be read

The CLI maps each of them to one line on stderr and exit status 2. :func:`did_you_mean` and
:func:`unknown_name` word the "unknown name" messages of every registry the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

__all__ = [
    "AsrptError",
    "InvalidParameterError",
    "InvalidInstance",
    "Problem",
    "Infeasible",
    "SolverError",
    "NotFittedError",
    "TraceError",
    "did_you_mean",
    "unknown_name",
]


class AsrptError(Exception):
    """Base class of every error asrpt raises on purpose."""


class InvalidParameterError(AsrptError, ValueError):
    """A parameter of a public function or plugin is outside its declared constraints.

    The message reads ``The 'gap' parameter of solve must be a float in [0, 1). Got -0.1 instead.``
    """


@dataclass(frozen=True)
class Problem:
    """One problem found while validating an instance: where it is and what is wrong.

    ``location`` is a JSON path such as ``jobs[3].gpus``; ``message`` says why.
    """

    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class InvalidInstance(AsrptError, ValueError):
    """An instance breaks the format; carries every problem found, each with its location.

    Examples
    --------
    >>> err = InvalidInstance([Problem("jobs[0].gpus", "9 exceeds the cluster's 8 GPUs")], source="x.json")
    >>> str(err)
    "x.json: jobs[0].gpus: 9 exceeds the cluster's 8 GPUs"
    """

    def __init__(self, problems, source: str | None = None):
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.source = source
        super().__init__(self._one_line())

    def _one_line(self) -> str:
        head = str(self.problems[0]) if self.problems else "invalid instance"
        more = len(self.problems) - 1
        if more > 0:
            head += f" (and {more} more problem{'s' if more > 1 else ''})"
        return f"{self.source}: {head}" if self.source else head


class Infeasible(AsrptError, ValueError):
    """No feasible answer exists: a job cannot be placed, an ILP is infeasible, a configuration
    does not fit in GPU memory."""


class SolverError(AsrptError, RuntimeError):
    """A solver backend is unavailable or failed without an answer."""


class NotFittedError(AsrptError, RuntimeError):
    """A learned object (predictor) was used before ``fit`` was called."""


class TraceError(AsrptError, ValueError):
    """A trace file is missing, unreadable, or has a malformed header."""


def did_you_mean(name: str, known: Iterable[str], *, cutoff: float = 0.6) -> str:
    """The hint `` (did you mean 'x'?)`` for a misspelt ``name``, or ``""`` when nothing in
    ``known`` is close (difflib ratio >= ``cutoff``; exact case first, then ignoring case).

    Examples
    --------
    >>> did_you_mean("gredy", ["greedy", "kl"])
    " (did you mean 'greedy'?)"
    >>> did_you_mean("h200", ["H200", "A100"])
    " (did you mean 'H200'?)"
    >>> did_you_mean("zzz", ["greedy"])
    ''
    """
    import difflib   # (here: only a misspelt name needs it)

    known = [str(k) for k in known]
    close = difflib.get_close_matches(name, known, n=1, cutoff=cutoff)
    if not close:
        lowered = {k.lower(): k for k in known}
        close = [lowered[c] for c in difflib.get_close_matches(name.lower(), list(lowered), n=1,
                                                               cutoff=cutoff)]
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_name(what: str, name: str, known: Iterable[str]) -> InvalidParameterError:
    """The error for a name missing from a registry: what it is, the closest known name, and
    every known name (sorted).

    Examples
    --------
    >>> str(unknown_name("policy", "fifoo", ["sjf", "fifo"]))
    "unknown policy 'fifoo' (did you mean 'fifo'?); known: fifo, sjf"
    """
    known = sorted(str(k) for k in known)
    return InvalidParameterError(f"unknown {what} {name!r}{did_you_mean(name, known)}; known: "
                                 f"{', '.join(known)}")
