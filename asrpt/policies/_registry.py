"""Imports every policy module so that each registers itself (used by policy_names/make_policy)."""

from . import asrpt, fifo, gavel, gittins, qssf, sjf, srsf, themis, tiresias, tiresias_sjf  # noqa: F401
