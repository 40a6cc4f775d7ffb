"""Keras layers. Each builds its variables on its first call from the input's shape."""
import functools

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
Activation = _core.keras.Activation
ReLU = _core.keras.ReLU
LeakyReLU = _core.keras.LeakyReLU
ELU = _core.keras.ELU
Softmax = _core.keras.Softmax
Reshape = _core.keras.Reshape
Permute = _core.keras.Permute
RepeatVector = _core.keras.RepeatVector
GlobalAveragePooling1D = _core.keras.GlobalAveragePooling1D
GlobalAveragePooling2D = _core.keras.GlobalAveragePooling2D
GlobalMaxPooling1D = _core.keras.GlobalMaxPooling1D
GlobalMaxPooling2D = _core.keras.GlobalMaxPooling2D
ZeroPadding2D = _core.keras.ZeroPadding2D
Cropping2D = _core.keras.Cropping2D
UpSampling2D = _core.keras.UpSampling2D
GaussianNoise = _core.keras.GaussianNoise
SimpleRNN = _core.keras.SimpleRNN
Conv1D = _core.keras.Conv1D
MaxPooling1D = MaxPool1D = _core.keras.MaxPooling1D
AveragePooling1D = AveragePool1D = _core.keras.AveragePooling1D
LSTM = _core.keras.LSTM
GRU = _core.keras.GRU
InputLayer = _core.keras.InputLayer
Concatenate = _core.keras.Concatenate
Add = _core.keras.Add
Subtract = _core.keras.Subtract
Multiply = _core.keras.Multiply
Average = _core.keras.Average
Maximum = _core.keras.Maximum
Minimum = _core.keras.Minimum
MultiHeadAttention = _core.keras.MultiHeadAttention
Attention = _core.keras.Attention
CausalMask = _core.keras.CausalMask
TimeDistributed = _core.keras.TimeDistributed
Bidirectional = _core.keras.Bidirectional
from eagerflow.keras._functional import Input, Lambda  # noqa: E402,F401
Conv2DTranspose = _core.keras.Conv2DTranspose
DepthwiseConv2D = _core.keras.DepthwiseConv2D
SeparableConv2D = _core.keras.SeparableConv2D
GroupNormalization = _core.keras.GroupNormalization
PReLU = _core.keras.PReLU
SpatialDropout2D = _core.keras.SpatialDropout2D
Masking = _core.keras.Masking


def _policy_name(dtype):
    """A dtype= argument as a policy: a Policy, its name, or a dtype (ef.float64, np.float32)."""
    if isinstance(dtype, (str, _core.keras.mixed_precision.Policy)):
        return dtype
    if hasattr(dtype, "name"):
        return str(dtype.name)
    import numpy as np

    return np.dtype(dtype).name


def _accepting_dtype(cls):
    """Gives a layer class Keras' dtype= constructor argument (the layer's
    mixed-precision policy, or a dtype, set before its first call)."""
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, dtype=None, **kwargs):
        init(self, *args, **kwargs)
        if dtype is not None:
            self.dtype_policy = _policy_name(dtype)

    cls.__init__ = __init__


# Every built-in layer, and Layer itself (Python subclasses pass dtype= to it, and their
# from_config gets "dtype" from get_config).
for _cls in {c for c in list(globals().values()) if isinstance(c, type) and issubclass(c, Layer)}:
    if _cls.__module__.startswith("eagerflow._core"):
        _accepting_dtype(_cls)

# from_config: the built-in layers through the C++ registry (under Keras' class names),
# Python subclasses as Keras does it: cls(**config).
_KERAS_NAMES = {AveragePool2D: "AveragePooling2D", MaxPool2D: "MaxPooling2D"}


def _from_config(cls, config):
    """Makes a layer of this class again from the dict get_config returned.

    Built-in layers go through the C++ registry under their Keras class names;
    Python subclasses are made as cls(**config), as Keras does.
    """
    if cls.__module__.startswith("eagerflow._core"):
        return _core.keras._layer_from_config(_KERAS_NAMES.get(cls, cls.__name__), dict(config))
    return cls(**config)


Layer.from_config = classmethod(_from_config)


def _get_weights(self):
    """The values of the layer's variables (in layer.variables' order) as NumPy arrays."""
    return [v.numpy() for v in self.variables]


def _set_weights(self, weights):
    """Sets the layer's variables from a list of arrays (get_weights' order and shapes).

    Every array is checked before any variable changes, so a bad list leaves the
    layer as it was.
    """
    import numpy as np

    variables = self.variables
    weights = list(weights)
    if len(weights) != len(variables):
        raise ValueError(f"layer '{self.name}': set_weights got {len(weights)} arrays for "
                         f"{len(variables)} variables")
    values = []
    for i, (variable, weight) in enumerate(zip(variables, weights)):
        array = np.asarray(weight)
        if tuple(array.shape) != tuple(variable.shape):
            raise ValueError(f"layer '{self.name}': weight {i} ('{variable.name}') has shape "
                             f"{tuple(variable.shape)}, the array given for it {tuple(array.shape)}")
        values.append(_core.constant(array, dtype=variable.dtype))
    for variable, value in zip(variables, values):
        variable.assign(value)


Layer.get_weights = _get_weights
Layer.set_weights = _set_weights

# The image preprocessing layers, written in Python over ef.image.
from eagerflow.keras._preprocessing import CenterCrop, Normalization, Rescaling, Resizing  # noqa: E402,F401
from eagerflow.keras._volumetric import Conv3D  # noqa: E402,F401


def _sync_batch_normalization(*args, **kwargs):
    from eagerflow import distribute
    return distribute._group().SyncBatchNormalization(*args, **kwargs)


class experimental:  # noqa: N801 (TensorFlow's tf.keras.layers.experimental namespace)
    """Layers under tf.keras.layers.experimental."""

    SyncBatchNormalization = staticmethod(
        getattr(getattr(_core, "distribute", None), "SyncBatchNormalization", None) or _sync_batch_normalization)
