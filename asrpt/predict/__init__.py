"""Predictors of training iterations (job work), one interface for all: see :mod:`.base`.

The random forest (:mod:`.forest`) imports scikit-learn only when it first fits.
"""

from .forest import RandomForestPredictor
from .base import (PREDICTORS, ConstantPredictor, GroupMeanPredictor, InstancePredictor,
                   NoisyPredictor, OraclePredictor, PredictionTracker, Predictor, make_predictor,
                   register_predictor)

__all__ = ["Predictor", "PredictionTracker", "PREDICTORS", "make_predictor", "register_predictor",
           "OraclePredictor", "InstancePredictor", "NoisyPredictor", "GroupMeanPredictor",
           "ConstantPredictor", "RandomForestPredictor"]
