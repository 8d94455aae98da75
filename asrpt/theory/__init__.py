"""Theory for A-SRPT: Theorem 1's per-instance certificate and the worst-case search.

- :mod:`asrpt.theory.certificate`: :func:`certify` (the certificate of model.md section 8 on a
  finished run, exact for exact data), :func:`run_asrpt` and :func:`certify_instance` (A-SRPT
  under the theorem's assumptions);

Everything here reads run records (:class:`~asrpt.sim.records.SimResult`) and the instance, never
simulator internals. The proofs are in ``proofs/`` at the repository root.
"""

from .certificate import (THEOREM_OPTIONS, Certificate, Inequality, JobCertificate, certify,
                          certify_instance, run_asrpt)

__all__ = [
    "THEOREM_OPTIONS",
    "Certificate",
    "Inequality",
    "JobCertificate",
    "certify",
    "certify_instance",
    "run_asrpt",
]
