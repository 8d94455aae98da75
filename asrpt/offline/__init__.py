"""Offline optima and lower bounds for rigid-job instances.

- :mod:`asrpt.offline.bounds`: LB1 (release), LB2 (squashed area, the virtual SRPT), LB_MBT (mean
  busy time) and :func:`lower_bounds`;
- :mod:`asrpt.offline.ilp`: the slotted (preemptive) and start-time (non-preemptive) ILPs, the
  bracket :func:`offline_opt` and the schedule checker :func:`schedule_problems`;
- :mod:`asrpt.offline.bruteforce`: exact enumeration oracles for tiny instances.

Depends only on :mod:`asrpt.instance`, :mod:`asrpt.sizes`, :mod:`asrpt.solve` and
:mod:`asrpt.single`; never on the simulator.
"""

from .bounds import Bounds, lower_bounds, mean_busy_time_bound, release_bound, squashed_area_bound
from .bruteforce import (BruteForceResult, bruteforce_rigid_nonpreemptive,
                         bruteforce_weighted_single_machine, greedy_rigid_starts)
from .ilp import (IlpResult, OptResult, RigidPiece, auto_slot, offline_opt, schedule_problems,
                  slotted_ilp, start_time_ilp)

__all__ = [
    "Bounds",
    "release_bound",
    "squashed_area_bound",
    "mean_busy_time_bound",
    "lower_bounds",
    "BruteForceResult",
    "greedy_rigid_starts",
    "bruteforce_rigid_nonpreemptive",
    "bruteforce_weighted_single_machine",
    "RigidPiece",
    "IlpResult",
    "OptResult",
    "slotted_ilp",
    "start_time_ilp",
    "offline_opt",
    "auto_slot",
    "schedule_problems",
]
