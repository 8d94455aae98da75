"""A policy of your own, as docs/policies.md shows it: least attained GPU-service first.

Run it beside the registered policies, or against the offline optimum:

    asrpt simulate instances/small-cluster.json --policy docs/examples/my_policy.py:LeastServiceFirst,tiresias
    asrpt batch out/gen --task compare-opt -o policies=a-srpt,docs/examples/my_policy.py:LeastServiceFirst --out r.jsonl
"""

from asrpt.policies import Decision, Policy


class LeastServiceFirst(Policy):
    """Preemptive: the jobs with the least attained GPU-service run first."""

    preemptive = True

    def decide(self, view):
        order = sorted(view.active(), key=lambda j: (view.attained_service(j), j.arrival, j.key))
        return Decision(order)
