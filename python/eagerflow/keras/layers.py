"""Keras layers. Each builds its variables on its first call from the input's shape."""
from eagerflow import _core
from eagerflow import module as _module  # noqa: F401  (installs attribute tracking)

Layer = _core.Layer
Dense = _core.keras.Dense
Dropout = _core.keras.Dropout
Embedding = _core.keras.Embedding
Flatten = _core.keras.Flatten
LayerNormalization = _core.keras.LayerNormalization
