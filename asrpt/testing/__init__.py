"""Testing support for asrpt and for users who property-test their own schedulers against it.

:mod:`asrpt.testing.strategies` holds hypothesis strategies that generate valid instances.
"""
