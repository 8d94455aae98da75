"""A read-only mapping that pickles: metadata of instances and jobs, placement results."""

from __future__ import annotations

from typing import Iterator, Mapping

__all__ = ["FrozenMapping"]


class FrozenMapping(Mapping):
    """A read-only dict (picklable, unlike ``types.MappingProxyType``).

    Examples
    --------
    >>> m = FrozenMapping({"a": 1})
    >>> m["a"], dict(m), m == {"a": 1}
    (1, {'a': 1}, True)
    """

    __slots__ = ("_data",)

    def __init__(self, data=()):
        object.__setattr__(self, "_data", dict(data))

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self) -> Iterator:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setattr__(self, name, value):
        raise AttributeError("FrozenMapping is read-only")

    def __reduce__(self):
        return (FrozenMapping, (self._data,))

    def __repr__(self) -> str:
        return f"FrozenMapping({self._data!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]
