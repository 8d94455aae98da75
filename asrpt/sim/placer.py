"""The simulator's placers: re-exported from :mod:`asrpt.placement.placers` (their home; kept so
that ``from asrpt.sim.placer import ...`` goes on working)."""

from ..placement import make_placer
from ..placement.placers import (PLACERS, Allocation, CountPlacer, Placer, YarnPlacer, count_allocation,
                                 register_placer, yarn_allocation)

__all__ = ["Allocation", "Placer", "CountPlacer", "PLACERS", "register_placer", "make_placer",
           "count_allocation", "yarn_allocation", "YarnPlacer"]
