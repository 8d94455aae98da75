"""Scheduling policies: one small module per policy, registered by name (see :mod:`.base`)."""

from .base import POLICIES, Decision, Policy, make_policy, policy_names, register_policy

__all__ = ["Policy", "Decision", "POLICIES", "register_policy", "make_policy", "policy_names"]
