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

# from_config: the built-in layers through the C++ registry (under Keras' class names),
# Python subclasses as Keras does it: cls(**config).
_KERAS_NAMES = {AveragePool2D: "AveragePooling2D", MaxPool2D: "MaxPooling2D"}


def _from_config(cls, config):
    if cls.__module__.startswith("eagerflow._core"):
        return _core.keras._layer_from_config(_KERAS_NAMES.get(cls, cls.__name__), dict(config))
    return cls(**config)


Layer.from_config = classmethod(_from_config)
