"""Theory for A-SRPT: the certificates of Theorems 1-3, the worst-case search and the classical checks.

- :mod:`asrpt.theory.audit`: what every certificate recomputes instead of trusting: a run's
  records audited against its instance, the predictions and the virtual completions recomputed,
  the premises checked instant by instant (:class:`~asrpt.theory.audit.Premise`, reported as
  ``not covered: (A4) fails at t = 1 for C: ...``);
- :mod:`asrpt.theory.certificate`: :func:`certify` (Theorem 1's certificate, proofs/theorem1.md, on
  a finished run, exact for exact data), :func:`run_asrpt` and :func:`certify_instance` (A-SRPT
  under the theorem's assumptions);
- :mod:`asrpt.theory.worstcase`: :func:`worst_case` (hypothesis ``target()`` plus local search for
  instances maximising ALG / OPT), :func:`evaluate` and the tightness table of ``proofs/``;
- :mod:`asrpt.theory.classical`: WSRPT, the Phillips-Stein-Wein conversion, SPJF, PRR and SPRPT
  for the classical checks of proofs/classical.md (Results 5, 7, 8, 12, Counterexample 2);
- :mod:`asrpt.theory.queueing`: the M/M/1 queue with predictions, simulated and analytic
  (proofs/classical.md, Result 13);
- :mod:`asrpt.theory.guarded`: Theorem 2's certificate of the default guarded A-SRPT (and
  Corollary 2's ratio to the optimum with the envelope or fluid machine);
- :mod:`asrpt.theory.robust`: Theorem 3, guarded A-SRPT time-shared with prediction-free
  water-filling (a bound that does not grow with prediction errors) and its certificate.

Everything here reads run records (:class:`~asrpt.engine.records.SimResult`) and the instance, never
simulator internals. The proofs are in ``proofs/`` at the repository root; every statement there
names the test that checks it.

The worst-case names are loaded on first use, so that ``python -m asrpt.theory.worstcase`` does
not import its own module twice.
"""

from .certificate import (THEOREM_OPTIONS, Certificate, Inequality, JobCertificate, certify,
                          certify_instance, run_asrpt)
from .classical import prr_schedule, psw_schedule, spjf_schedule, sprpt_schedule, wsrpt_schedule
from .queueing import QueueResult, mean_response_time, simulate_queue

_WORSTCASE = ("Cell", "Evaluation", "WorstCase", "evaluate", "worst_case", "worst_case_table",
              "render_table")

__all__ = [
    "THEOREM_OPTIONS",
    "Certificate",
    "Inequality",
    "JobCertificate",
    "certify",
    "certify_instance",
    "run_asrpt",
    "wsrpt_schedule",
    "psw_schedule",
    "spjf_schedule",
    "prr_schedule",
    "sprpt_schedule",
    "QueueResult",
    "simulate_queue",
    "mean_response_time",
    *_WORSTCASE,
]


def __getattr__(name: str):
    if name in _WORSTCASE:
        from . import worstcase

        return getattr(worstcase, name)
    raise AttributeError(f"module 'asrpt.theory' has no attribute {name!r}")
