"""Predictors of training iterations (job work), one interface for all: see :mod:`.base`.

The random forest (:mod:`.forest`) imports scikit-learn only when it first fits. The default
predictor is :data:`DEFAULT_PREDICTOR` (the key hierarchy, :mod:`.hierarchy`).
"""

from __future__ import annotations

from .forest import RandomForestPredictor
from .hierarchy import HierarchyPredictor
from .base import (DEFAULT_PREDICTOR, PREDICTORS, QUANTILE_LEVELS, ConstantPredictor, ErrorBands,
                   GroupMeanPredictor, HeliosPredictor, InstancePredictor, NoisyPredictor,
                   OraclePredictor, PredictionTracker, Predictor, register_predictor)

__all__ = ["Predictor", "PredictionTracker", "PREDICTORS", "make_predictor", "register_predictor",
           "OraclePredictor", "InstancePredictor", "NoisyPredictor", "GroupMeanPredictor",
           "ConstantPredictor", "HeliosPredictor", "RandomForestPredictor", "HierarchyPredictor",
           "ErrorBands", "DEFAULT_PREDICTOR", "QUANTILE_LEVELS", "describe_predictors"]


def make_predictor(spec: "str | Predictor", **params) -> Predictor:
    """A predictor from a name with optional ``:key=value`` parameters, or a Predictor as is.

    >>> make_predictor("noisy:sigma=0.5:seed=3")
    NoisyPredictor(clip=None, seed=3, sigma=0.5)
    """
    return PREDICTORS.create(spec, **params)


def describe_predictors() -> tuple[tuple[str, str], ...]:
    """``(name, one-line description)`` of every predictor (``asrpt simulate --list-predictors``).

    >>> "hierarchy" in dict(describe_predictors())
    True
    """
    return PREDICTORS.describe()
