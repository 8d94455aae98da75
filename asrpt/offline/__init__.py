"""Offline optima and lower bounds for rigid-job instances.

- :mod:`asrpt.offline.bounds`: LB1 (release), LB2 (squashed area, the virtual SRPT), LB_MBT (mean
  busy time) and :func:`lower_bounds`;
- :mod:`asrpt.offline.ilp`: the slotted (preemptive) and start-time (non-preemptive) ILPs and the
  schedule checker :func:`schedule_problems`;
- :mod:`asrpt.offline.exact`: the exact preemptive optimum (branch and bound over event sequences,
  :func:`exact_preemptive_opt`) and the configuration-LP lower bound
  (:func:`configuration_lp_bound`), on the LP engine of :mod:`asrpt.offline._lp`;
- :mod:`asrpt.offline.opt`: :func:`offline_opt`, OPT exactly where proven and a bracket elsewhere;
- :mod:`asrpt.offline.bruteforce`: exact enumeration oracles for tiny instances.

Depends only on :mod:`asrpt.instance`, :mod:`asrpt.sizes`, :mod:`asrpt.solve` and
:mod:`asrpt.single`; never on the simulator.
"""

from .bounds import Bounds, lower_bounds, mean_busy_time_bound, release_bound, squashed_area_bound
from .bruteforce import (BruteForceResult, bruteforce_rigid_nonpreemptive,
                         bruteforce_weighted_single_machine, greedy_rigid_starts)
from .exact import (ConfigurationBound, ExactResult, configuration_lp_bound, exact_preemptive_opt,
                    sequence_schedule)
from .ilp import IlpResult, RigidPiece, auto_slot, schedule_problems, slotted_ilp, start_time_ilp
from .opt import OptResult, offline_opt

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
    "ExactResult",
    "exact_preemptive_opt",
    "sequence_schedule",
    "ConfigurationBound",
    "configuration_lp_bound",
]
