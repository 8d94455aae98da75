"""Scheduling policies: one small module per policy, registered by name (see :mod:`.base`).

:func:`make_policy` builds a policy from a spec (``"tiresias:thresholds=[3250,7200]"``), a
Policy instance (returned as is) or, for a user's own class, ``"module:Class"`` /
``"path/to/file.py:Class"`` (:func:`load_policy_class`); :func:`policy_names` lists the
registered names.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

from ..errors import InvalidParameterError
from ..registry import parse_spec, split_outside
from .base import POLICIES, Decision, Policy, PredictorPolicy, predictor_of, register_policy

__all__ = ["Policy", "Decision", "PredictorPolicy", "POLICIES", "register_policy", "predictor_of", "make_policy",
           "with_predictor",
           "policy_names", "describe_policies", "load_policy_class", "user_policy_spec"]


def _load_all() -> None:
    from . import _registry  # noqa: F401  (imports every policy module; each registers itself)


# The module of each registered name, so that building one policy imports only its module (the
# A-SRPT module alone pulls in numpy through the virtual machines); tests/policies/
# test_lazy_registry.py checks the map against the registry. A name not here loads them all.
_MODULE_OF = {
    "fifo": "fifo", "fifo-strict": "fifo", "gavel": "gavel", "themis": "themis",
    "qssf": "qssf", "qssf-ff": "qssf", "sjf": "sjf", "sjf-strict": "sjf", "sjf-duration": "sjf",
    "srsf": "srsf", "srtf": "srsf", "srsf-pred": "srsf", "srtf-pred": "srsf", "srsf-mean": "srsf",
    "tiresias": "tiresias", "tiresias-peer": "tiresias", "dlas-gpu-gittins": "tiresias",
    "tiresias-gittins": "gittins", "tiresias-sjf": "tiresias_sjf", "tiresias-shortest": "tiresias_sjf",
    "tiresias-shortest-gpu": "tiresias_sjf",
}


def _module_of(name: str) -> str | None:
    """The policy module registering ``name`` (None: not known without loading them all)."""
    if name.startswith("a-srpt"):
        return "asrpt"
    if name.startswith("dlas-gpu-"):
        return "tiresias"
    return _MODULE_OF.get(name)


def _load_for(spec) -> None:
    """Import what ``spec`` (a registered name, maybe with parameters) needs: its own module
    when the name is known, else every policy module (for the did-you-mean of an unknown one)."""
    if isinstance(spec, str):
        name = split_outside(spec.strip(), ":")[0].strip()
        if name in POLICIES:
            return
        module = _module_of(name)
        if module is not None:
            importlib.import_module(f"{__name__}.{module}")
            if name in POLICIES:
                return
    _load_all()


def user_policy_spec(spec: str) -> tuple[str, str, str] | None:
    """``(module or file, class name, the rest)`` when ``spec`` names a user's class
    (``"module:Class[:key=value...]"`` or ``"path/to/file.py:Class[...]"``), else None (a
    registered name). A spec names a class when its second ``:`` part is not ``key=value``.

    >>> user_policy_spec("mypolicies:Shortest:k=2"), user_policy_spec("tiresias:thresholds=[1]")
    (('mypolicies', 'Shortest', 'k=2'), None)
    """
    parts = split_outside(spec.strip(), ":")
    if len(parts) < 2 or "=" in parts[1]:
        return None
    return parts[0].strip(), parts[1].strip(), ":".join(parts[2:])


def load_policy_class(where: str, name: str) -> type:
    """The Policy subclass ``name`` of module ``where`` (an importable module path, or a ``.py``
    file), with a one-line InvalidParameterError when it cannot be loaded or is no Policy.

    >>> load_policy_class("asrpt.policies.fifo", "FIFO").__name__
    'FIFO'
    >>> load_policy_class("asrpt.policies.fifo", "Nope")
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: policy 'asrpt.policies.fifo:Nope': the module has no class 'Nope'
    """
    label = f"{where}:{name}"
    try:
        if where.endswith(".py") or os.sep in where or "/" in where:
            if not os.path.isfile(where):
                raise InvalidParameterError(f"policy {label!r}: no such file {where!r}")
            modname = "_asrpt_user_" + os.path.splitext(os.path.basename(where))[0]
            module = sys.modules.get(modname)
            if module is None or getattr(module, "__file__", None) != os.path.abspath(where):
                spec = importlib.util.spec_from_file_location(modname, os.path.abspath(where))
                module = importlib.util.module_from_spec(spec)
                sys.modules[modname] = module
                spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except InvalidParameterError:
        raise
    except ImportError as exc:
        raise InvalidParameterError(f"policy {label!r}: cannot import {where!r} ({exc})") from None
    except Exception as exc:  # the user's module failed while loading
        raise InvalidParameterError(f"policy {label!r}: loading {where!r} failed: "
                                    f"{type(exc).__name__}: {exc}") from None
    cls = getattr(module, name, None)
    if cls is None:
        raise InvalidParameterError(f"policy {label!r}: the module has no class {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise InvalidParameterError(f"policy {label!r}: {name!r} is not a subclass of asrpt.policies.Policy")
    return cls


def _make_user_policy(where: str, name: str, rest: str, params: dict) -> Policy:
    cls = load_policy_class(where, name)
    spec_params = parse_spec("x:" + rest, "policy")[1] if rest else {}
    kwargs = {**spec_params, **params}
    known = set(cls._param_names())
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise InvalidParameterError(f"policy {where}:{name} has no parameter {unknown[0]!r}; "
                                    f"its parameters: {', '.join(sorted(known)) or 'none'}")
    try:
        policy = cls(**kwargs)
    except TypeError as exc:
        raise InvalidParameterError(f"policy {where}:{name}: {exc}") from None
    policy._validate_params()
    if policy.name == Policy.name:     # a class that names itself keeps its name; else its class name
        policy.name = cls.__name__
    return policy


def with_predictor(spec: str, predictor: str | None) -> tuple[Policy, bool]:
    """``make_policy(spec)``, given ``predictor`` where the policy takes one and the spec sets
    none (what ``--predictor`` and the batch tasks' ``predictor`` option mean); and whether it
    was given.

    >>> [(p.predictor, given) for p, given in (with_predictor("srsf", "hierarchy"),
    ...  with_predictor('srsf:predictor="instance"', "hierarchy"))]
    [('hierarchy', True), ('instance', False)]
    >>> with_predictor("fifo", "hierarchy")[1]
    False
    """
    policy = make_policy(spec)
    if predictor is None or "predictor" not in policy.get_params():
        return policy, False
    user = user_policy_spec(spec)
    if user is None:
        params = parse_spec(spec)[1]
    else:
        params = parse_spec("x:" + user[2], "policy")[1] if user[2] else {}
    if "predictor" in params:
        return policy, False
    return make_policy(spec, predictor=predictor), True


def make_policy(spec: "str | Policy", **params: Any) -> Policy:
    """Build a policy from a registered name (with optional ``:key=value`` parameters) or return a
    Policy instance as is. Parameters merge as preset < spec < ``params``. Unknown names and
    parameters raise InvalidParameterError.

    Examples
    --------
    >>> make_policy("tiresias:thresholds=[3250]").thresholds
    [3250]
    >>> make_policy("fifo-strict").name
    'fifo-strict'
    >>> type(make_policy("asrpt.policies.fifo:FIFO")).__name__
    'FIFO'
    """
    if isinstance(spec, Policy):
        return POLICIES.create(spec)   # as is: loads no policy module
    if isinstance(spec, str):
        user = user_policy_spec(spec)
        if user is not None:
            return _make_user_policy(*user, params)
    _load_for(spec)
    return POLICIES.create(spec, **params)


def policy_names() -> tuple[str, ...]:
    """Every registered policy name, sorted.

    >>> "a-srpt" in policy_names()
    True
    """
    _load_all()
    return POLICIES.names()


def describe_policies() -> tuple[tuple[str, str], ...]:
    """``(name, one-line description)`` of every registered policy (``--list-policies``).

    >>> dict(describe_policies())["fifo"] != ""
    True
    """
    _load_all()
    return POLICIES.describe()
