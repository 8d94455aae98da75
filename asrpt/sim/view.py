"""What a policy may see: re-exported from :mod:`asrpt.state`, which owns the job and cluster views
(kept so that ``from asrpt.sim.view import JobView`` goes on working)."""

from ..state import ClusterView, CompletedJob, JobView, NotClairvoyantError, job_views

__all__ = ["JobView", "CompletedJob", "ClusterView", "NotClairvoyantError", "job_views"]
