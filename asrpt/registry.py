"""One name -> plugin registry for every plugin family, and the one ``name:key=value`` spec syntax.

This module owns how a user names a plugin: policies, predictors, placers, placement methods,
generator families, workload generators and batch tasks each keep one :class:`Registry`, so they
all read specs the same way (:func:`parse_spec`), merge parameters the same way (preset < spec <
keyword arguments), reject unknown names with the same did-you-mean message and unknown
parameters with the list of known ones, and list themselves with a one-line description each
(``asrpt simulate --list-policies``, ``--list-placers``, ``--list-predictors``, ``asrpt generate
--list-families``, ``asrpt batch --list-tasks``).

A registry knows nothing about what it holds: an entry is a name, a target (a class or a
function), preset parameters and a description. ``registry[name]`` returns what the family has
always exposed (``(class, preset)`` for policies and predictors, the class for placers and
placement methods, the :class:`~asrpt.workloads.generators.Family` or
:class:`~asrpt.batch.tasks.Task` record for those).

Examples
--------
>>> class Greeter:
...     '''Says hello.'''
...     def __init__(self, *, word="hello"):
...         self.word = word
>>> GREETERS = Registry("greeter")
>>> _ = GREETERS.register("plain", Greeter)
>>> _ = GREETERS.register("loud", Greeter, description="says HELLO", word="HELLO")
>>> GREETERS.create("loud").word, GREETERS.create("plain:word=hi").word
('HELLO', 'hi')
>>> GREETERS.describe()
(('loud', 'says HELLO'), ('plain', 'Says hello.'))
>>> GREETERS.create("plane")
Traceback (most recent call last):
...
asrpt.errors.InvalidParameterError: unknown greeter 'plane' (did you mean 'plain'?); known: loud, plain
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from .errors import InvalidParameterError, unknown_name

__all__ = ["Registry", "Entry", "parse_spec", "split_outside", "split_specs", "first_line", "format_listing", "plain_text"]

_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj|ref):`(~?)([^`<]*?)\s*(?:<[^`>]*>)?`")
_LITERAL = re.compile(r"``(.+?)``")
_MODULE_DOCSTRING = re.compile(r";?\s*\(?(?:see )?the module docstring\)?|\s*\(module docstring\)")


def plain_text(text: str) -> str:
    """``text`` (docstring prose) without reStructuredText markup, for help and listings read in a
    terminal: literals lose their backquotes, cross-references become their names (the last
    component where the reference starts with ``~``), and pointers to a module docstring, which a
    command-line reader cannot follow, go.

    >>> plain_text("Run ``--task`` by :func:`~asrpt.solve.solve` (module docstring).")
    'Run --task by solve.'
    >>> plain_text("Median log time; see the module docstring. See :data:`HELIOS_ERROR_CDF`.")
    'Median log time. See HELIOS_ERROR_CDF.'
    """
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), text)
    text = _LITERAL.sub(r"\1", text)
    return _MODULE_DOCSTRING.sub("", text)


def first_line(text: str | None) -> str:
    """The first sentence of a docstring's first paragraph on one line (``""`` for None), for
    one-line listings.

    >>> first_line('''Place by GPU counts, in a
    ...     server order. More text.
    ...
    ...     Another paragraph.''')
    'Place by GPU counts, in a server order.'
    """
    paragraph = []
    for line in (text or "").strip().splitlines():
        if not line.strip():
            break
        paragraph.append(line.strip())
    joined = " ".join(paragraph)
    cut = joined.find(". ")
    return plain_text(joined[:cut + 1] if cut >= 0 else joined)


@dataclass(frozen=True)
class Entry:
    """One registered plugin: ``target`` (a class or a function) built with ``preset``
    parameters under ``name``; ``description`` is one line; ``item`` is what ``registry[name]``
    returns (see the module docstring)."""

    name: str
    target: Any
    preset: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    item: Any = None


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def split_outside(text: str, sep: str) -> list[str]:
    """Split ``text`` on ``sep`` where it is outside quotes and brackets (a spec's own values
    may contain the separator).

    >>> split_outside('a-srpt:predictor="noisy:sigma=1",fifo', ",")
    ['a-srpt:predictor="noisy:sigma=1"', 'fifo']
    >>> split_outside("tiresias:thresholds=[1,2]", ":")
    ['tiresias', 'thresholds=[1,2]']
    """
    parts, depth, quote, cur = [], 0, None, []
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def split_specs(text: str) -> list[str]:
    """Comma-separated specs (``a-srpt:predictor="noisy:sigma=1",fifo``), each stripped, empty
    items dropped (:func:`split_outside` on ``","``).

    >>> split_specs('a-srpt:predictor="noisy:sigma=1", fifo,')
    ['a-srpt:predictor="noisy:sigma=1"', 'fifo']
    """
    return [s.strip() for s in split_outside(text, ",") if s.strip()]


def parse_spec(spec: str, what: str = "policy") -> tuple[str, dict]:
    """Split ``"name:key=value:key=value"`` into the name and a parameter dict.

    Values are read as JSON when they parse (numbers, true/false, lists, quoted strings), else as
    plain strings; quote a value that itself contains ':' (a nested spec). ``what`` names the
    kind of spec in the error.

    >>> parse_spec("tiresias:thresholds=[3250,7200]:promote_knob=0")
    ('tiresias', {'thresholds': [3250, 7200], 'promote_knob': 0})
    >>> parse_spec('a-srpt:predictor="noisy:sigma=1"')
    ('a-srpt', {'predictor': 'noisy:sigma=1'})
    """
    name, *parts = split_outside(spec.strip(), ":")
    params = {}
    for part in parts:
        if "=" not in part:
            raise InvalidParameterError(f"{what} spec {spec!r}: {part!r} is not key=value")
        key, value = part.split("=", 1)
        params[key.strip()] = _parse_value(value.strip())
    return name.strip(), params


def format_listing(rows) -> str:
    """``(name, description)`` rows as the aligned lines ``--list-*`` options print.

    >>> print(format_listing([("fifo", "first come"), ("a-srpt", "the paper's")]))
    fifo    first come
    a-srpt  the paper's
    """
    rows = list(rows)
    width = max((len(n) for n, _ in rows), default=0)
    return "\n".join(f"{n:<{width}}  {d}".rstrip() for n, d in rows)


def _parameter_names(target) -> set:
    if hasattr(target, "_param_names"):
        return set(target._param_names())
    sig = inspect.signature(target)
    return {k for k, p in sig.parameters.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


class _Choices(tuple):
    """Names to list (the tuple itself) that also contain other accepted spellings."""

    def __new__(cls, names, accepted):
        self = super().__new__(cls, names)
        self._accepted = accepted
        return self

    def __contains__(self, name) -> bool:
        return name in self._accepted


class Registry(Mapping):
    """Plugins of one family by name (see the module docstring).

    Parameters
    ----------
    kind : str
        What the entries are, for messages (``"policy"``, ``"placement"``, ...).
    base : type or None
        Instances of this class are accepted by :meth:`create` as they are.
    item : callable or None
        ``item(entry)`` is what ``registry[name]`` returns (default: ``(target, preset)``).
    normalize : callable or None
        Applied to a name before lookup (e.g. hyphens read as underscores).
    validate_instances : bool
        :meth:`create` validates the parameters of a ``base`` instance given to it.
    """

    def __init__(self, kind: str, *, base: type | None = None, item: Callable[[Entry], Any] | None = None,
                 normalize: Callable[[str], str] | None = None, validate_instances: bool = False):
        self.kind = kind
        self.base = base
        self._item = item or (lambda e: (e.target, dict(e.preset)))
        self._normalize = normalize
        self._validate_instances = validate_instances
        self._entries: dict[str, Entry] = {}
        self._aliases: dict[str, str] = {}  # old spelling -> registered name

    # -- registration ------------------------------------------------------------------------------
    def register(self, name: str, target: Any = None, *, description: str | None = None, item: Any = None,
                 replace: bool = False, **preset: Any):
        """Register ``target`` under ``name`` with ``preset`` parameters; without ``target``, a
        class decorator. A class without its own ``name`` attribute gets ``name``. The
        description defaults to the first line of the target's docstring. A name is registered
        once; ``replace=True`` overwrites an entry where it stands (its place in the iteration
        order is kept).

        >>> R = Registry("thing")
        >>> @R.register("a")
        ... class A:
        ...     '''The letter A.'''
        >>> A.name, R.describe()
        ('a', (('a', 'The letter A.'),))
        >>> _ = R.register("b", A, description="the letter B")
        >>> _ = R.register("a", A, description="A again", replace=True)
        >>> list(R), R.describe()[0]
        (['a', 'b'], ('a', 'A again'))
        """
        if target is None:
            def deco(cls):
                self.register(name, cls, description=description, item=item, replace=replace, **preset)
                return cls

            return deco
        if (name in self._entries and not replace) or name in self._aliases:
            raise ValueError(f"{self.kind} {name!r} registered twice")
        if self.base is not None and isinstance(target, type) and not issubclass(target, self.base):
            raise TypeError(f"{target!r} is not a {self.base.__name__} subclass")
        if isinstance(target, type) and "name" not in target.__dict__:
            target.name = name
        if description is None:
            desc = first_line(getattr(target, "__doc__", None))
            if preset:
                desc += " [" + ", ".join(f"{k}={json.dumps(v)}" for k, v in preset.items()) + "]"
        else:
            desc = first_line(description)
        self._entries[name] = Entry(name, target, dict(preset), desc, item)
        return target

    def alias(self, old: str, name: str) -> None:
        """Accept ``old`` as another spelling of the registered ``name``.

        The registry as a mapping holds every accepted name (``old in R``, ``R[old]`` is ``R[name]``,
        :meth:`create` builds from it, under the name it was asked by); :meth:`names`,
        :meth:`describe` and :meth:`listing`, what ``--list-*`` options print, show ``name``
        only.

        >>> R = Registry("thing"); _ = R.register("new", Entry, description="the new spelling")
        >>> R.alias("old", "new")
        >>> R["old"] == R["new"], "old" in R, R.names(), R.canonical("old")
        (True, True, ('new',), 'new')
        """
        if old in self._entries or old in self._aliases:
            raise ValueError(f"{self.kind} {old!r} registered twice")
        if name not in self._entries:
            raise ValueError(f"{self.kind} {name!r} is not registered (alias {old!r})")
        self._aliases[old] = name

    def aliases(self) -> dict[str, str]:
        """Every old spelling and the registered name it stands for."""
        return dict(self._aliases)

    def canonical(self, name: str) -> str:
        """The registered name ``name`` stands for (itself unless it is an old spelling)."""
        key = self._normalize(name) if self._normalize else name
        return self._aliases.get(key, key)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (for tests that register a temporary plugin), with its aliases."""
        if self._aliases.pop(name, None) is not None:
            return
        self._entries.pop(name, None)
        for old in [o for o, n in self._aliases.items() if n == name]:
            del self._aliases[old]

    def pop(self, name: str, *default):
        """Remove ``name`` and return its item (``dict.pop`` semantics)."""
        if name not in self:
            if default:
                return default[0]
            raise KeyError(name)
        item = self[name]
        self.unregister(name)
        return item

    # -- lookup --------------------------------------------------------------------------------------
    def _key(self, name: str) -> str:
        return self.canonical(name)

    def entry(self, name: str) -> Entry:
        """The entry called ``name``; unknown names raise InvalidParameterError (did-you-mean)."""
        key = self._key(name) if isinstance(name, str) else name
        if key not in self._entries:
            raise unknown_name(self.kind, name, self._entries)
        return self._entries[key]

    def get_item(self, name: str) -> Any:
        """``registry[name]`` with the did-you-mean error for unknown names."""
        e = self.entry(name)
        return e.item if e.item is not None else self._item(e)

    def __getitem__(self, name: str) -> Any:
        e = self._entries[self._aliases.get(name, name)]
        return e.item if e.item is not None else self._item(e)

    def __iter__(self) -> Iterator[str]:
        """Every accepted name: the registered ones, then the old spellings."""
        yield from self._entries
        yield from self._aliases

    def __len__(self) -> int:
        return len(self._entries) + len(self._aliases)

    def __contains__(self, name) -> bool:
        return name in self._entries or name in self._aliases

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(sorted(self._entries))})"

    def names(self) -> tuple[str, ...]:
        """Every registered name, sorted (old spellings, see :meth:`alias`, are not listed)."""
        return tuple(sorted(self._entries))

    def choices(self) -> tuple[str, ...]:
        """:meth:`names` for an argparse ``choices=``: help texts and errors list the registered
        names, and the old spellings are accepted too.

        >>> R = Registry("thing"); _ = R.register("new", Entry); R.alias("old", "new")
        >>> c = R.choices()
        >>> list(c), "old" in c, "other" in c
        (['new'], True, False)
        """
        return _Choices(self.names(), frozenset(self))

    def describe(self) -> tuple[tuple[str, str], ...]:
        """``(name, one-line description)`` for every name, sorted by name."""
        return tuple((n, self._entries[n].description) for n in self.names())

    def listing(self) -> str:
        """The lines ``--list-*`` options print: each name and its description, aligned.

        >>> R = Registry("thing"); _ = R.register("a", Entry, description="the letter")
        >>> R.listing()
        'a  the letter'
        """
        return format_listing(self.describe())

    # -- building ------------------------------------------------------------------------------------
    def create(self, spec: Any, **params: Any) -> Any:
        """Build a plugin from ``"name[:key=value...]"`` (or return a ``base`` instance as is).

        Parameters merge as preset < spec < ``params``; unknown ones raise InvalidParameterError
        listing the known ones; the result's parameters are validated (``_validate_params``) and a
        class registered under several names (or asked for by an old spelling) gets the one it was
        built by as ``name``.
        """
        if self.base is not None and isinstance(spec, self.base):
            if self._validate_instances:
                spec._validate_params()
            return spec
        if not isinstance(spec, str):
            what = f"a {self.base.__name__}" if self.base is not None else "an object"
            raise InvalidParameterError(f"a {self.kind} must be a name or {what}, got {type(spec).__name__}")
        name, spec_params = parse_spec(spec, self.kind)
        e = self.entry(name)
        asked = self._normalize(name) if self._normalize else name
        label = asked if asked in self._aliases else e.name   # an old spelling keeps its name
        kwargs = {**e.preset, **spec_params, **params}
        known = _parameter_names(e.target)
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise InvalidParameterError(f"{self.kind} {label!r} has no parameter {unknown[0]!r}; "
                                        f"its parameters: {', '.join(sorted(known)) or 'none'}")
        obj = e.target(**kwargs)
        if isinstance(e.target, type) and getattr(obj, "name", label) != label:
            obj.name = label   # the name it was built by (one class, several presets)
        if hasattr(obj, "_validate_params"):
            obj._validate_params()
        return obj
