"""Testing support for asrpt and for users who property-test their own schedulers against it.

:mod:`asrpt.testing.strategies` holds hypothesis strategies that generate valid instances;
:func:`asrpt.testing.adapters.policy_schedule` turns a simulator policy (yours included) into the
offline ``schedule(instance)`` function that ``docs/examples/test_my_scheduler.py`` tests.
"""
