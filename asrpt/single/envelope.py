"""The envelope virtual machine: a job finishes virtually once the fluid machine has done its
GPU-time *and* its own length has passed since its release.

The gang-aware machine of :mod:`asrpt.single.gang` ranks jobs by remaining time whatever their
width, so a stream of wide jobs starves narrow ones and its total ``sum C~_j`` is not within any
constant of the optimum (``proofs/theorem2.md``, Counterexample 3: the ratio grows like
``sqrt(M / 2)``). The envelope of the two lower-bound schedules has a proven constant:

    C~_j = max(C^f_j, a_j + P_j)

where ``C^f_j`` is the completion of preemptive SRPT on one machine with releases ``a_j`` and
sizes ``g_j P_j / M`` (the fluid machine of :mod:`asrpt.single.virtual`) and ``P_j`` the job's
(predicted) processing time. It has the two properties the proof of Theorem 2 uses
(``proofs/theorem2.md``, Lemma 7):

- ``C~_j >= a_j + P_j``;
- for every ``t``, the jobs with ``C~_k <= t`` have GPU-time ``sum g_k P_k <= M t`` (they all
  have ``C^f_k <= t``, and the fluid machine serves GPU-time at rate at most ``M``);

and ``sum_j C~_j <= sum_j (a_j + P_j) + SRPT_1(a, g P / M)``, i.e. at most ``LB1 + LB2`` with true
sizes and ``mu_over (LB1 + LB2)`` with predicted ones. It is online: ``C~_j`` is known at time
``C~_j`` (the fluid completion is known when it happens, ``a_j + P_j`` at arrival).

Arithmetic is exact when the data are (ints and Fractions).

Examples
--------
>>> envelope_schedule([0, 0, 1], [4, 1, 2], [2, 4, 1], 4, ids=["A", "B", "C"])
(4, 1, 3)
"""

from __future__ import annotations

from typing import Sequence

from ..errors import InvalidParameterError
from ..sizes import exact_div, exact_mul
from .srpt import srpt_schedule

__all__ = ["envelope_schedule"]


def envelope_schedule(releases: Sequence, times: Sequence, gpus: Sequence[int], capacity: int, *,
                      ids: Sequence[str] | None = None) -> tuple:
    """Virtual completions ``max(C^f_j, a_j + P_j)`` of the envelope machine, in job order.

    Parameters
    ----------
    releases, times : sequences of numbers
        Release times ``a_j`` and processing times ``P_j`` (at the job's full gang).
    gpus : sequence of int
        Gang sizes ``g_j`` (1 <= g_j <= capacity).
    capacity : int
        The cluster's GPU count M.
    ids : sequence of str, optional
        Job ids for tie-breaking in the fluid machine (``id_key``), else by index.

    Returns
    -------
    tuple of numbers

    Raises
    ------
    InvalidParameterError
        Sequences of different lengths, a gang outside ``[1, capacity]``, or numbers the fluid
        machine refuses (negative, non-finite).

    Examples
    --------
    Five one-GPU jobs of length 8 and two 6-GPU jobs of length 7 (at 0 and 7) on 6 GPUs: the
    gang machine makes the narrow jobs wait for both wide ones; the envelope does not.

    >>> c = envelope_schedule([0] * 6 + [7], [8] * 5 + [7, 7], [1] * 5 + [6, 6], 6)
    >>> c, sum(c)
    ((8, 8, 8, 8, 8, Fraction(41, 3), Fraction(62, 3)), Fraction(223, 3))
    """
    if not (len(releases) == len(times) == len(gpus)) or (ids is not None and len(ids) != len(times)):
        raise InvalidParameterError("envelope_schedule: releases, times, gpus (and ids) must have the same length")
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise InvalidParameterError(f"envelope_schedule: capacity must be an int >= 1, got {capacity!r}")
    for g in gpus:
        if isinstance(g, bool) or not isinstance(g, int) or not 1 <= g <= capacity:
            raise InvalidParameterError(f"envelope_schedule: every gang must be an int in [1, {capacity}], got {g!r}")
    fluid = srpt_schedule(list(releases), [exact_div(exact_mul(g, p), capacity) for g, p in zip(gpus, times)],
                          ids=ids).completion_times
    return tuple(max(c, a + p) for c, a, p in zip(fluid, releases, times))
