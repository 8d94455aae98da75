"""Sorted Python lists of unique entries, kept with :mod:`bisect` (in C).

The queues of the simulator's policies and of the virtual machine (:mod:`asrpt.single.gang`)
hold hundreds to a few thousand tuples, added and removed one at a time and read in order. At
those sizes a plain list, with a bisection and a move of its pointers per change, costs less
than ``sortedcontainers.SortedList``, whose every call runs several Python frames.

>>> entries = []
>>> for e in [(3, "c"), (1, "a"), (2, "b")]:
...     insort(entries, e)
>>> remove_sorted(entries, (2, "b")); entries
[(1, 'a'), (3, 'c')]
>>> remove_sorted(entries, (2, "b"))
Traceback (most recent call last):
...
ValueError: (2, 'b') is not in the sorted list
"""

from __future__ import annotations

from bisect import bisect_left, insort

__all__ = ["insort", "remove_sorted"]


def remove_sorted(entries: list, entry) -> None:
    """Delete ``entry`` from the sorted list ``entries`` (ValueError if it is not there)."""
    i = bisect_left(entries, entry)
    if i == len(entries) or entries[i] != entry:
        raise ValueError(f"{entry!r} is not in the sorted list")
    del entries[i]
