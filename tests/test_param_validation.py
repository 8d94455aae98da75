"""Every public function and plugin declares a constraint per parameter, and bad values are
rejected with one line naming the parameter (scikit-learn's check_param_validation, for asrpt)."""

import importlib
import inspect
import pkgutil
from fractions import Fraction

import numpy as np
import pytest

import asrpt
from asrpt._validation import (Interval, InstanceOf, Options, Params, Real, Integral, is_integer,
                               is_number, make_invalid_value, validate_parameter_constraints,
                               validate_params)
from asrpt.errors import InvalidParameterError


def _public_modules():
    for info in pkgutil.walk_packages(asrpt.__path__, "asrpt."):
        if ".cli" in info.name:
            continue
        try:
            yield importlib.import_module(info.name)
        except ImportError as exc:  # optional dependency missing
            if "No module named" not in str(exc):
                raise


def _validated_callables():
    seen = {}
    for module in _public_modules():
        for name, obj in vars(module).items():
            if name.startswith("_"):
                continue
            constraints = getattr(obj, "parameter_constraints", None)
            if inspect.isfunction(obj) and constraints is not None:
                seen[f"{obj.__module__}.{obj.__qualname__}"] = (obj, constraints)
    return sorted(seen.items())


CALLABLES = _validated_callables()


def test_there_are_validated_public_functions():
    assert any(name == "asrpt.solve.solve" for name, _ in CALLABLES)


@pytest.mark.parametrize("name, item", CALLABLES, ids=[n for n, _ in CALLABLES])
def test_each_parameter_rejects_a_value_derived_from_its_constraints(name, item):
    func, constraints = item
    sig = inspect.signature(func)
    assert set(constraints) == set(sig.parameters), "every parameter has exactly one constraint entry"
    for param, accepted in constraints.items():
        if accepted == "no_validation":
            continue
        bad = make_invalid_value(accepted)
        with pytest.raises(InvalidParameterError, match=rf"^The '{param}' parameter of {func.__name__} must be "):
            validate_parameter_constraints(constraints, {param: bad}, func.__name__)


def test_constraint_descriptions_and_checks():
    assert str(Interval(Real, 0, 1, closed="left")) == "a float in [0, 1)"
    assert str(Interval(Integral, 1, None, closed="left")) == "an int in [1, inf)"
    assert str(Options(str, {"b", "a"})) == "a str among {'a', 'b'}"
    assert Interval(Real, 0, None).is_satisfied_by(Fraction(1, 3))
    assert not Interval(Real, 0, None).is_satisfied_by(True)
    assert not Interval(Real, 0, None).is_satisfied_by(float("inf"))
    assert not Interval(Integral, 0, None).is_satisfied_by(2.0)
    assert Interval(Integral, 0, None).is_satisfied_by(np.int64(3))
    assert not Interval(Real, 0, 1, closed="neither").is_satisfied_by(0)
    assert is_number(np.float64(1.5)) and not is_number("1") and not is_number(np.bool_(True))
    assert is_integer(np.int32(1)) and not is_integer(1.0)


def test_validate_params_decorator_and_seed_constraint():
    @validate_params({"seed": ["seed"], "flag": ["boolean"], "name": [Options(str, {"x"}), None]})
    def f(seed=None, flag=False, name=None):
        return seed

    assert f(3) == 3 and f(np.random.default_rng(0)) is not None and f(name="x") is None
    for kwargs, text in [({"seed": -1}, "'seed' parameter of f must be None, a non-negative int"),
                         ({"flag": 1}, "'flag' parameter of f must be a bool"),
                         ({"name": "y"}, "'name' parameter of f must be a str among {'x'} or None")]:
        with pytest.raises(InvalidParameterError, match=text):
            f(**kwargs)
    assert f.parameter_constraints["seed"] == ["seed"]

    with pytest.raises(TypeError, match="no constraint declared"):
        @validate_params({})
        def g(x):
            return x


class _Plugin(Params):
    parameter_constraints = {"rate": [Interval(Real, 0, None, closed="neither")], "mode": [Options(str, {"a", "b"})]}

    def __init__(self, *, rate=1.0, mode="a"):
        self.rate = rate
        self.mode = mode


def test_params_mixin_round_trips_and_validates_late():
    p = _Plugin(rate=2.0, mode="b")
    assert type(p)(**p.get_params()) == p and repr(p) == "_Plugin(mode='b', rate=2.0)"
    bad = _Plugin(rate=-1)  # constructing only stores ...
    with pytest.raises(InvalidParameterError, match="The 'rate' parameter of _Plugin must be a float in \\(0, inf\\)"):
        bad._validate_params()  # ... validation happens where work starts
    assert make_invalid_value([InstanceOf(int)]) is not None
