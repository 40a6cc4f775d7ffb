"""Keras metrics: running statistics over batches (update_state, result, reset_state):
means of per-example values, and Precision, Recall and AUC from confusion-matrix counts."""
from eagerflow._core.keras.metrics import (  # noqa: F401
    AUC, Accuracy, BinaryAccuracy, CategoricalAccuracy, Mean, MeanAbsoluteError, MeanMetricWrapper, MeanSquaredError,
    Metric, Precision, Recall, RootMeanSquaredError, SparseCategoricalAccuracy, SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy,
)
