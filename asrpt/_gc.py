"""``gc_paused()``: the cyclic garbage collector paused while a bulk step builds many objects.

Reading a trace, building a run's job views and states and running the event loop make tens of
thousands of objects and no reference cycles: their garbage goes by reference counting, but the
allocations alone make the cyclic collector sweep every live job object again and again (a fifth
to a third of a 20,000-job FIFO run). Those steps run with the collector paused; its state is
restored however they end, and the objects they made join the oldest generation (collected by
full collections only) instead of all being swept at the next young one.
"""

from __future__ import annotations

import contextlib
import gc

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector for the ``with`` block (restored after, even on errors;
    a block inside another one leaves it paused).

    >>> with gc_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        yield
    finally:
        if collecting:
            if not gc.get_freeze_count():
                # The block's objects are all young: the first collection after it would sweep
                # them all (and the next ones again, as they age). Freezing and unfreezing moves
                # every tracked object into the oldest generation in O(1), without a sweep; they
                # stay collectable there. (Skipped when someone else keeps frozen objects.)
                gc.freeze()
                gc.unfreeze()
            gc.enable()
