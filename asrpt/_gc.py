"""``gc_paused()``: the cyclic garbage collector paused while a bulk step builds many objects.

Reading a trace, building a run's job views and states and running the event loop make tens of
thousands of objects and no reference cycles: their garbage goes by reference counting, but the
allocations alone make the cyclic collector sweep every live job object again and again (a fifth
to a third of a 20,000-job FIFO run). Those steps run with the collector paused; its state is
restored however they end, and nothing else about the process changes.
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
            gc.enable()
