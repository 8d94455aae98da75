"""validate_params binds arguments without inspect.Signature.bind (issue 18): same values, same
order, same errors."""

import inspect

import pytest

from asrpt._validation import Interval, _fast_binder, validate_params
from asrpt.errors import InvalidParameterError


def f(a, b=2, *, c=3, d):
    return (a, b, c, d)


CALLS = [((1,), {"d": 4}), ((1, 5), {"d": 4, "c": 0}), ((), {"a": 1, "d": 4}), ((), {"d": 4, "a": 1, "b": 7}),
         ((1,), {}), ((1, 2, 3), {"d": 4}), ((1,), {"a": 1, "d": 4}), ((1,), {"d": 4, "e": 5}), ((), {})]


@pytest.mark.parametrize("args,kwargs", CALLS)
def test_fast_binder_agrees_with_signature_bind(args, kwargs):
    sig = inspect.signature(f)
    fast = _fast_binder(sig)(args, kwargs)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        assert fast is None
        return
    bound.apply_defaults()
    assert fast is not None and list(fast.items()) == list(bound.arguments.items())


def test_signatures_with_star_args_use_the_general_path():
    assert _fast_binder(inspect.signature(lambda *a: None)) is None
    assert _fast_binder(inspect.signature(lambda **k: None)) is None
    assert _fast_binder(inspect.signature(lambda a, /: None)) is None


def test_decorated_function_reports_the_first_bad_parameter_in_signature_order():
    g = validate_params({"a": [Interval(int, 0, None)], "b": [Interval(int, 0, None)],
                         "c": [Interval(int, 0, None)], "d": [Interval(int, 0, None)]})(f)
    assert g(1, d=4) == (1, 2, 3, 4)
    with pytest.raises(InvalidParameterError, match="'b' parameter of f"):
        g(d=-1, b=-1, a=0)
    with pytest.raises(TypeError):
        g(1)
