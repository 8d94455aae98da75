"""Adapters that let a user's test suite treat a simulator policy as an offline scheduler.

This module owns :func:`policy_schedule`: the property tests of ``docs/examples/
test_my_scheduler.py`` take a function ``my_schedule(instance) -> {job id: [(start, end, gpus),
...]}``; this turns any policy (a registered spec, your own ``file.py:Class`` spec, a class or
an instance of :class:`asrpt.policies.Policy`) into such a function, by simulating it and reading
its records. The same checker, lower bounds and optima then judge it.
"""

from __future__ import annotations

from typing import Callable

from ..errors import InvalidParameterError
from ..instance import Instance

__all__ = ["policy_schedule"]


def policy_schedule(policy, **simulate_options) -> Callable[[Instance], dict]:
    """A function ``schedule(instance) -> {job id: [(start, end, gpus), ...]}`` that simulates
    ``policy`` on the instance (:func:`asrpt.sim.simulate`, ``simulate_options`` passed on: a
    ``placement``, a ``seed``, ...) and returns each job's segments, the pieces during which it
    held its GPUs (several for a preemptive policy).

    Parameters
    ----------
    policy : str, Policy class or Policy
        A spec as ``asrpt simulate --policy`` takes it (``"a-srpt"``,
        ``"my_policy.py:LeastServiceFirst"``), a :class:`~asrpt.policies.Policy` subclass
        (built with its defaults) or an instance (a fresh copy is used for every run).
    **simulate_options
        Keyword arguments of :func:`asrpt.sim.simulate`.

    Returns
    -------
    callable
        ``schedule(instance)``; a run that fails raises as :func:`asrpt.sim.simulate` does.

    Raises
    ------
    InvalidParameterError
        ``policy`` is not a policy, or a spec that names none (checked here, before any run).

    Examples
    --------
    >>> from asrpt.offline import schedule_problems
    >>> schedule = policy_schedule("srsf")
    >>> schedule(two_server_instance)
    {'a': [(0, 4, 2)], 'b': [(0, 1, 4)], 'c': [(1, 3, 1)]}
    >>> schedule_problems(two_server_instance, schedule(two_server_instance), preemptive=True)
    []
    >>> policy_schedule(42)
    Traceback (most recent call last):
    ...
    asrpt.errors.InvalidParameterError: policy_schedule: policy must be a spec, a Policy class or a Policy, got int
    """
    from ..policies import Policy, make_policy
    from ..sim import simulate

    if isinstance(policy, type) and issubclass(policy, Policy):
        policy = policy()
    elif isinstance(policy, str):
        make_policy(policy)            # (an unknown name or a file that does not load fails now)
    elif not isinstance(policy, Policy):
        raise InvalidParameterError(f"policy_schedule: policy must be a spec, a Policy class or a Policy, "
                                    f"got {type(policy).__name__}")

    def schedule(instance: Instance) -> dict:
        result = simulate(instance, policy, **simulate_options)
        return {r.id: [(s.start, s.end, r.gpus) for s in r.segments] for r in result.records}

    return schedule
