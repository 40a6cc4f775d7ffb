"""Keras losses: functions give one value per example; classes weight and reduce
("sum_over_batch_size" by default, "sum", "none")."""
from eagerflow._core.keras.losses import (  # noqa: F401
    BinaryCrossentropy, CategoricalCrossentropy, CosineSimilarity, Huber, KLDivergence, LogCosh, Loss,
    MeanAbsoluteError, MeanSquaredError, Poisson, SparseCategoricalCrossentropy, binary_crossentropy,
    categorical_crossentropy, cosine_similarity, huber, kl_divergence, log_cosh, mean_absolute_error,
    mean_squared_error, poisson, sparse_categorical_crossentropy,
)

MSE = mse = mean_squared_error
MAE = mae = mean_absolute_error
KLD = kld = kl_divergence
