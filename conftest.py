"""Root pytest configuration: doctest namespace and hypothesis profiles (shared by tests/ and the
doctests under asrpt/)."""

import os

import pytest
from hypothesis import HealthCheck, settings

# dev: quick local runs (the default); ci: derandomized so CI is reproducible, more examples;
# deep: the long worst-case searches (run with -m slow).
settings.register_profile("dev", max_examples=40, deadline=None)
settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True, database=None,
                          print_blob=True)
settings.register_profile("deep", max_examples=2000, deadline=None, database=None,
                          # the deep searches solve ILPs per example, which is slow by design
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    import asrpt
    from asrpt.instance import Cluster, Instance, Job

    doctest_namespace["asrpt"] = asrpt
    doctest_namespace["two_server_instance"] = Instance(
        Cluster.homogeneous(2, 4),
        (Job("a", 0, 2, processing_time=4), Job("b", 0, 4, processing_time=1),
         Job("c", 1, 1, processing_time=2)),
    )
