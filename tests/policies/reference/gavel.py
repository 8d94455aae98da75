"""The Gavel policy as it was before the incremental waiting order (issue 18), kept unchanged as
the reference that tests/policies/test_incremental_rankings.py compares the new one against,
decision by decision. Not registered; not part of the package. See asrpt/policies/gavel.py.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Sequence

from asrpt._validation import Interval, validate_params
from asrpt.errors import InvalidParameterError
from asrpt.sizes import exact_div, exact_mul
from asrpt.policies.base import Decision, Policy, register_policy

__all__ = ["ReferenceGavel"]

_INF = math.inf


@validate_params({
    "demands": [list, tuple],
    "capacity": [Interval(Real, 0, None, closed="left")],
    "weights": [None, list, tuple],
})
def water_fill(demands: Sequence, capacity, weights: Sequence | None = None):
    """Max-min fair shares: ``share_j = min(demand_j, level * weight_j)`` with the shares summing
    to ``capacity`` (exact for ints and Fractions).

    Parameters
    ----------
    demands : sequence of number > 0
        GPU demands g_j.
    capacity : number >= 0
        GPUs to share, M.
    weights : sequence of number > 0 or None
        Weights w_j (None: all 1).

    Returns
    -------
    level : number
        The water level lambda (``inf`` when the demands fit together: every share is the full
        demand).
    shares : list
        g_j X_j for each job, in input order.

    Raises
    ------
    InvalidParameterError
        Non-positive demands or weights, or lengths that differ.

    Examples
    --------
    Demands 1, 2 and 4 on 4 GPUs: the 1-GPU job gets its demand, the others 3/2 each.

    >>> level, shares = water_fill([1, 2, 4], 4)
    >>> level, [str(s) for s in shares]
    (Fraction(3, 2), ['1', '3/2', '3/2'])
    """
    n = len(demands)
    w = [1] * n if weights is None else list(weights)
    if len(w) != n or not all(d > 0 for d in demands) or not all(x > 0 for x in w):
        raise InvalidParameterError(
            "water_fill needs positive demands and positive weights of the same length. "
            f"Got demands={list(demands)!r}, weights={weights!r} instead.")
    order = sorted(range(n), key=lambda i: exact_div(demands[i], w[i]))
    left, weight = capacity, sum(w)
    shares: list = [None] * n
    level = _INF
    for pos, i in enumerate(order):
        if level == _INF and demands[i] * weight <= left * w[i]:  # demand_i / w_i <= left / weight
            shares[i] = demands[i]
            left -= demands[i]
            weight -= w[i]
            continue
        if level == _INF:
            level = exact_div(left, weight)
        shares[i] = level if w[i] == 1 else level * w[i]
    return level, shares


class ReferenceGavel(Policy):
    """Gavel's max-min fairness (LAS) policy with its round mechanism, one GPU type.

    Parameters
    ----------
    round_length : float > 0
        Round length in seconds (default 360, Gavel's).
    weighted : bool
        Use the job weights w_j in the water-filling (default False: equal weights).

    Attributes
    ----------
    rounds_ : int
        Rounds started so far.
    round_end_ : number or None
        When the current round ends.
    level_ : number or None
        The water level lambda of the current round (inf without contention).

    Examples
    --------
    >>> from asrpt.sim import simulate
    >>> simulate(two_server_instance, "gavel").completion_times
    {'a': 4, 'b': 1, 'c': 3}
    """

    parameter_constraints = {
        "round_length": [Interval(Real, 0, None, closed="neither")],
        "weighted": ["boolean"],
    }
    preemptive = True
    clairvoyant = False
    work_conserving = True

    def __init__(self, *, round_length: float = 360.0, weighted: bool = False):
        self.round_length = round_length
        self.weighted = weighted

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self._total_gpus = cluster.total_gpus
        length = self.round_length  # an integral float as an int, so exact runs stay exact
        self._length = int(length) if isinstance(length, float) and length.is_integer() else length
        self.rounds_ = 0
        self.round_end_ = None
        self.level_ = None
        self._keys: dict[int, tuple] = {}

    @staticmethod
    def _new_key(job) -> tuple:
        return (-_INF, -job.gpus, job.arrival, job.key)

    def _new_round(self, view) -> None:
        self.rounds_ += 1
        now = view.now
        self.round_end_ = now + self._length
        jobs = list(view.active())
        level, shares = water_fill([j.gpus for j in jobs], self._total_gpus,
                                   [j.weight for j in jobs] if self.weighted else None)
        self.level_ = level
        keys = {}
        for j, share in zip(jobs, shares):
            executed = view.executed_time(j)
            elapsed = now - j.arrival
            if not executed > 0 or not elapsed > 0:
                keys[j.index] = self._new_key(j)
                continue
            x = exact_div(share, j.gpus)
            priority = exact_div(exact_mul(x, elapsed), executed)  # X_j / (executed / elapsed)
            keys[j.index] = (-priority, -j.gpus, j.arrival, j.key)
        self._keys = keys

    def decide(self, view):
        now = view.now
        if not view.running and not view.waiting:
            return Decision(())
        if self.round_end_ is None or now >= self.round_end_:
            self._new_round(view)
            order = sorted(view.active(), key=lambda j: self._keys[j.index])
        else:
            keys = self._keys
            held = sorted((j for j in view.running if not view.is_stopping(j)),
                          key=lambda j: keys.get(j.index) or self._new_key(j))
            rest = sorted((j for j in view.active() if not view.is_running(j) or view.is_stopping(j)),
                          key=lambda j: keys.get(j.index) or self._new_key(j))
            order = held + rest
        demand = sum(j.gpus for j in view.active())
        wake = self.round_end_ if demand > self._total_gpus else None
        return Decision(order, backfill=True, wake_at=wake)

    def report(self) -> dict:
        return {"rounds": self.rounds_}
