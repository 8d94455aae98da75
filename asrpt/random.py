"""Randomness enters asrpt only through an explicit seed or ``numpy.random.Generator``.

There is no module-level random state anywhere in the package. Functions and plugins take a
``seed`` argument and turn it into a generator at use time with :func:`as_generator`; values that
must not depend on the order in which jobs are seen (e.g. the noise of a job's prediction) use
:func:`job_generator`, which derives a generator from the seed and a stable hash of the job id.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # (annotations only: numpy is imported on first use, so that importing the
    import numpy as np  # predictors or the trace readers costs no numpy where none is drawn)

__all__ = ["as_generator", "stable_hash", "job_generator"]


def as_generator(seed) -> np.random.Generator:
    """Turn ``None``, a non-negative int or a Generator into a Generator.

    ``None`` gives fresh OS entropy (irreproducible, as documented wherever it is allowed); a
    Generator is returned as is, so callers can share one stream.

    >>> bool(as_generator(7).integers(100) == as_generator(7).integers(100))
    True
    """
    import numpy as np

    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(int(seed))


def stable_hash(text: str) -> int:
    """A 63-bit hash of a string that is the same in every process and Python version.

    >>> stable_hash("job-1") == stable_hash("job-1")
    True
    """
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def job_generator(seed: int, job_id: str) -> np.random.Generator:
    """A generator determined by ``(seed, job_id)`` alone, whatever the order jobs are seen in.

    >>> float(job_generator(1, "a").standard_normal()) == float(job_generator(1, "a").standard_normal())
    True
    """
    import numpy as np

    return np.random.default_rng([int(seed), stable_hash(job_id)])
