"""The single-machine core: exact preemptive SRPT, the classical rules, the virtual machine.

- :mod:`asrpt.single.srpt`: :class:`Piece`, :class:`Schedule`, :func:`srpt_schedule` and the
  incremental :class:`SRPTMachine`;
- :mod:`asrpt.single.rules`: FCFS, SPT, WSPT (Smith), preemptive LAS, processor sharing, the
  fixed-ratio LP schedule and SRPT on m identical machines;
- :mod:`asrpt.single.virtual`: the virtual single machine (proofs/model.md, Definition 3; sizes
  ``g_j P_j / M`` and their SRPT schedule);
- :mod:`asrpt.single.gang` and :mod:`asrpt.single.waterfill`: the gang-capped fluid machine served
  by gang-capped SRPT (A-SRPT's virtual machine) and by prediction-free water-filling.

Everything here works on plain numbers (ints, floats or Fractions, exact when no float is given)
and depends only on :mod:`asrpt.instance` and :mod:`asrpt.sizes`.
"""

from .rules import (fcfs_schedule, las_schedule, lp_schedule, multi_srpt_schedule, ps_schedule,
                    spt_schedule, wspt_schedule)
from .srpt import Piece, Schedule, SRPTMachine, srpt_schedule
from .virtual import virtual_schedule, virtual_sizes

__all__ = [
    "Piece",
    "Schedule",
    "SRPTMachine",
    "srpt_schedule",
    "fcfs_schedule",
    "spt_schedule",
    "wspt_schedule",
    "las_schedule",
    "ps_schedule",
    "lp_schedule",
    "multi_srpt_schedule",
    "virtual_sizes",
    "virtual_schedule",
]
