"""``slot_builder(cls)``: a quick constructor for the frozen slotted dataclasses built in bulk.

A frozen dataclass sets each field through ``object.__setattr__`` (its own ``__setattr__``
refuses), and setting a slot through its descriptor's ``__set__`` is a call per field: for the
objects made once per job or per event (``Job`` by the trace readers, ``JobView``, ``JobRecord``,
``Segment``, ``CompletedJob``, ``Allocation`` in a run) that is most of their cost. The builder
stores the values into an instance of a plain twin class with the very same slots (ordinary
attribute stores, which the interpreter does quickest), then gives the object its real class
(``__class__`` assignment, allowed between classes of identical layout). The object is then
exactly what ``cls(...)`` of the same values makes, without ``__post_init__`` or any check: the
callers pass values already checked.
"""

from __future__ import annotations

__all__ = ["slot_builder"]


def slot_builder(cls: type):
    """A function ``build(*values)`` returning an instance of ``cls`` with its slots set to
    ``values``, positionally in ``cls.__slots__`` order (the dataclass field order).

    ``cls`` must be a slotted class whose slots are all its state (a ``@dataclass(slots=True)``
    on no base but ``object``, without ``__dict__`` or ``__weakref__``).

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True, slots=True)
    ... class P:
    ...     x: int
    ...     y: int = 0
    >>> build = slot_builder(P)
    >>> p = build(1, 2)
    >>> type(p) is P, p == P(1, 2)
    (True, True)
    """
    slots = vars(cls).get("__slots__")
    if not isinstance(slots, tuple) or not all(type(name) is str and name.isidentifier() for name in slots):
        raise TypeError(f"slot_builder: {cls.__name__} has no plain tuple of slot names")
    if cls.__bases__ != (object,) or cls.__dictoffset__ or cls.__weakrefoffset__:
        raise TypeError(f"slot_builder: {cls.__name__} has state outside its own slots")
    twin = type(f"_{cls.__name__}Slots", (), {"__slots__": slots, "__module__": cls.__module__})
    args = ", ".join(slots)
    body = "".join(f"    obj.{name} = {name}\n" for name in slots)
    source = f"def build({args}):\n    obj = _new(_twin)\n{body}    obj.__class__ = _cls\n    return obj\n"
    namespace = {"_new": object.__new__, "_twin": twin, "_cls": cls}
    exec(source, namespace)   # (like the dataclass machinery: one function over the field names)
    build = namespace["build"]
    build.__qualname__ = f"slot_builder.<{cls.__name__}>"
    build.__doc__ = f"{cls.__name__}({args}) without the per-field setattr."
    return build
