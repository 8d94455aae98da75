"""Imports every policy module so that each registers itself (used by policy_names/make_policy)."""

from . import fifo, sjf  # noqa: F401
