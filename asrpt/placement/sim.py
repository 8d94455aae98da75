"""Graph placements as simulator placers: re-exported from :mod:`asrpt.placement.graph_placers`
(their home; kept so that ``from asrpt.placement.sim import GraphPlacer`` goes on working)."""

from .graph_placers import GraphPlacer

__all__ = ["GraphPlacer"]
