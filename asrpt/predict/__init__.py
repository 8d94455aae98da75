"""Predictors of training iterations (job work), one interface for all: see :mod:`.base`."""

from .base import (PREDICTORS, ConstantPredictor, GroupMeanPredictor, InstancePredictor,
                   NoisyPredictor, OraclePredictor, PredictionTracker, Predictor, make_predictor,
                   register_predictor)

__all__ = ["Predictor", "PredictionTracker", "PREDICTORS", "make_predictor", "register_predictor",
           "OraclePredictor", "InstancePredictor", "NoisyPredictor", "GroupMeanPredictor",
           "ConstantPredictor"]
