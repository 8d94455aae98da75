"""Plain reference copies of every registered policy family, for differential tests.

The live policies (:mod:`asrpt.policies`) are fast and intricate: orders kept sorted across
decisions, running jobs keyed in numpy, decisions held until a round's end (``stands_until``)
and lazily merged orders (:class:`~asrpt.order.MergedOrder`). Each class here states its family's
rule plainly instead: at every decision it recomputes every key from the
:class:`~asrpt.state.ClusterView` (its public API only), sorts the active jobs and returns a
plain list (asked at every pass: no decision held), with no chunk, no numpy and no incremental state (only the state the
algorithm itself needs: round boundaries, Tiresias's counters and queue lists, predictions
already made, A-SRPT's virtual machine). Each takes exactly its live class's parameters, is not
registered (``asrpt simulate --list-policies`` does not list it) and must make the live class's
decisions (tests/policies/test_reference_policies.py runs both on every registered name).

- :data:`REFERENCE_OF`: live class -> reference class;
- :func:`reference_policy`: the reference copy of a live policy object (same parameters, same
  ``name``).

Examples
--------
>>> from asrpt.policies import make_policy
>>> from asrpt.sim import simulate
>>> live = make_policy("fifo-strict")
>>> ref = reference_policy(live)
>>> type(ref).__name__, ref.name, ref.backfill
('ReferenceFIFO', 'fifo-strict', False)
>>> simulate(two_server_instance, ref).completion_times == simulate(two_server_instance, live).completion_times
True
"""

from __future__ import annotations

from ...state import Policy
from ..asrpt import ASRPT
from ..fifo import FIFO
from ..gavel import Gavel
from ..gittins import TiresiasGittins
from ..qssf import QSSF
from ..sjf import SJF
from ..srsf import SRSF
from ..themis import Themis
from ..tiresias import Tiresias
from ..tiresias_sjf import TiresiasSJF
from .asrpt import ReferenceASRPT
from .fifo import ReferenceFIFO
from .gavel import ReferenceGavel
from .gittins import ReferenceTiresiasGittins
from .qssf import ReferenceQSSF
from .sjf import ReferenceSJF
from .srsf import ReferenceSRSF
from .themis import ReferenceThemis
from .tiresias import ReferenceTiresias
from .tiresias_sjf import ReferenceTiresiasSJF

__all__ = ["REFERENCE_OF", "reference_policy", "ReferenceFIFO", "ReferenceSJF", "ReferenceQSSF", "ReferenceSRSF",
           "ReferenceTiresias", "ReferenceTiresiasGittins", "ReferenceTiresiasSJF", "ReferenceGavel",
           "ReferenceThemis", "ReferenceASRPT"]

#: The reference class of each live policy class.
REFERENCE_OF: dict[type, type] = {
    FIFO: ReferenceFIFO,
    SJF: ReferenceSJF,
    QSSF: ReferenceQSSF,
    SRSF: ReferenceSRSF,
    Tiresias: ReferenceTiresias,
    TiresiasGittins: ReferenceTiresiasGittins,
    TiresiasSJF: ReferenceTiresiasSJF,
    Gavel: ReferenceGavel,
    Themis: ReferenceThemis,
    ASRPT: ReferenceASRPT,
}


def reference_policy(policy: Policy) -> Policy:
    """The reference copy of the live ``policy`` (an object of a class in :data:`REFERENCE_OF`):
    the same parameters and the same ``name``, a fresh object (no run state).

    Raises
    ------
    KeyError
        ``policy``'s class has no reference copy (a subclass of a live class is not its class).
    """
    cls = REFERENCE_OF[type(policy)]
    ref = cls(**policy.get_params())
    ref.name = policy.name
    return ref
