"""Keras layers. Each builds its variables on its first call from the input's shape."""
from eagerflow import _core
from eagerflow import module as _module  # noqa: F401  (installs attribute tracking)

Layer = _core.Layer
AveragePooling2D = AveragePool2D = _core.keras.AveragePool2D
BatchNormalization = _core.keras.BatchNormalization
Conv2D = _core.keras.Conv2D
MaxPooling2D = MaxPool2D = _core.keras.MaxPool2D
Dense = _core.keras.Dense
Dropout = _core.keras.Dropout
Embedding = _core.keras.Embedding
Flatten = _core.keras.Flatten
LayerNormalization = _core.keras.LayerNormalization
