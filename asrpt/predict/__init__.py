"""Predictors of training iterations (job work), one interface for all: see :mod:`.base`.

The random forest (:mod:`.forest`) imports scikit-learn only when it first fits. The default
predictor is :data:`DEFAULT_PREDICTOR` (the key hierarchy, :mod:`.hierarchy`).
"""

from .forest import RandomForestPredictor
from .hierarchy import HierarchyPredictor
from .base import (DEFAULT_PREDICTOR, PREDICTORS, QUANTILE_LEVELS, ConstantPredictor, ErrorBands,
                   GroupMeanPredictor, HeliosPredictor, InstancePredictor, NoisyPredictor,
                   OraclePredictor, PredictionTracker, Predictor, make_predictor, register_predictor)

__all__ = ["Predictor", "PredictionTracker", "PREDICTORS", "make_predictor", "register_predictor",
           "OraclePredictor", "InstancePredictor", "NoisyPredictor", "GroupMeanPredictor",
           "ConstantPredictor", "HeliosPredictor", "RandomForestPredictor", "HierarchyPredictor",
           "ErrorBands", "DEFAULT_PREDICTOR", "QUANTILE_LEVELS"]
