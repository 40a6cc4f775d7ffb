"""Keras metrics: running means over batches (update_state, result, reset_state)."""
from eagerflow._core.keras.metrics import (  # noqa: F401
    Accuracy, BinaryAccuracy, CategoricalAccuracy, Mean, MeanAbsoluteError, MeanMetricWrapper, MeanSquaredError,
    SparseCategoricalAccuracy, SparseTopKCategoricalAccuracy, TopKCategoricalAccuracy,
)
