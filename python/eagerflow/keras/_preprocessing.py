"""Keras' preprocessing layers: Rescaling, Resizing and CenterCrop on [batch, height,
width, channels] images (or one [height, width, channels] image), and Normalization.
They work in Sequential, functional and subclassed models, and save with them; only
Normalization holds variables (its statistics)."""
from eagerflow import _core
from eagerflow.image import _hw, crop_to_bounding_box, resize
from eagerflow.keras.models import register_keras_serializable


def _as_float(inputs):
    """The images as float32 (float64 stays float64), as Keras' float compute dtype."""
    x = _core.convert_to_tensor(inputs)
    return x if x.dtype in (_core.float32, _core.float64) else _core.cast(x, _core.float32)


@register_keras_serializable()
class Rescaling(_core.Layer):
    """Multiplies the inputs by `scale` and adds `offset` (keras.layers.Rescaling).

    >>> ef.keras.layers.Rescaling(0.5, offset=-1)(np.array([[0, 2, 4]], np.uint8)).numpy()
    array([[-1.,  0.,  1.]], dtype=float32)

    Integer inputs become float32 first; float64 stays float64.
    """

    def __init__(self, scale, offset=0.0, name=None):
        super().__init__(name=name or "rescaling")
        self.scale = scale
        self.offset = offset

    def call(self, inputs):
        """inputs * scale + offset, in float."""
        x = _as_float(inputs)
        return x * _core.cast(self.scale, x.dtype) + _core.cast(self.offset, x.dtype)

    def get_config(self):
        """scale and offset, with the base layer's keys."""
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


@register_keras_serializable()
class Resizing(_core.Layer):
    """Resizes images to height x width (keras.layers.Resizing), with ef.image.resize.

    With crop_to_aspect_ratio, the largest centred crop of the target's aspect ratio
    is resized instead, so nothing is stretched.

    >>> ef.keras.layers.Resizing(2, 3)(np.ones((1, 4, 4, 3), np.float32)).shape
    TensorShape([1, 2, 3, 3])
    """

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False, name=None):
        super().__init__(name=name or "resizing")
        self.height, self.width = int(height), int(width)
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = crop_to_aspect_ratio

    def call(self, inputs):
        """The resized images: float32 (float64 stays), the inputs' dtype for "nearest"."""
        x, in_height, in_width = _hw(inputs, f"layer '{self.name}' (Resizing)")
        if self.crop_to_aspect_ratio:
            # Keras' arithmetic: the crop keeps the target's aspect ratio inside the image.
            crop_height = min(in_height, int(in_width * self.height / self.width))
            crop_width = min(in_width, int(in_height * self.width / self.height))
            x = crop_to_bounding_box(x, (in_height - crop_height) // 2, (in_width - crop_width) // 2, crop_height,
                                     crop_width)
        return resize(x, [self.height, self.width], method=self.interpolation)

    def get_config(self):
        """The target size and options, with the base layer's keys."""
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation, "crop_to_aspect_ratio": self.crop_to_aspect_ratio}


@register_keras_serializable()
class CenterCrop(_core.Layer):
    """The centred height x width crop of each image (keras.layers.CenterCrop).

    An image smaller than the crop on either side is first resized (bilinear) to cover it,
    keeping its aspect ratio, as Keras does.

    >>> ef.keras.layers.CenterCrop(2, 2)(np.arange(16.0).reshape(1, 4, 4, 1)).numpy()[0, :, :, 0]
    array([[ 5.,  6.],
           [ 9., 10.]])
    """

    def __init__(self, height, width, name=None):
        super().__init__(name=name or "center_crop")
        self.height, self.width = int(height), int(width)

    def call(self, inputs):
        """The crops, in the inputs' dtype (float32 when they had to be resized)."""
        x, in_height, in_width = _hw(inputs, f"layer '{self.name}' (CenterCrop)")
        if in_height < self.height or in_width < self.width:
            return Resizing(self.height, self.width, crop_to_aspect_ratio=True)(x)
        return crop_to_bounding_box(x, (in_height - self.height) // 2, (in_width - self.width) // 2, self.height,
                                    self.width)

    def get_config(self):
        """The crop size, with the base layer's keys."""
        return {**super().get_config(), "height": self.height, "width": self.width}


@register_keras_serializable()
class Normalization(_core.Layer):
    """Shifts and scales inputs to mean 0 and variance 1 per feature (keras.layers.Normalization).

    The mean and variance are given, or learned from data by adapt(); they are the
    layer's (non-trainable) weights, so they are saved with the model. Along `axis`
    each index has its own statistics, computed over every other axis.

    >>> norm = ef.keras.layers.Normalization()
    >>> norm.adapt(np.array([[0.0, 10.0], [2.0, 30.0]]))
    >>> norm(np.array([[1.0, 20.0]])).numpy()
    array([[0., 0.]])

    Args:
      axis: The feature axis or axes (default -1); None for one mean over everything.
      mean, variance: Statistics to use instead of adapt's (broadcastable to the
        features).
      invert: Undo the normalization instead: mean + inputs * stddev.
      name: The layer's name.
    """

    _EPSILON = 1e-7  # Keras' backend.epsilon(): the smallest standard deviation divided by

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, name=None):
        super().__init__(name=name or "normalization")
        self.axis = (axis,) if isinstance(axis, int) else tuple(axis) if axis is not None else ()
        if (mean is None) != (variance is None):
            raise ValueError("Normalization: give both mean and variance, or neither (then call adapt)")
        self._given = None if mean is None else (mean, variance)
        self.invert = invert

    def _feature_shape(self, shape):
        """The statistics' shape for inputs of `shape`: its sizes on self.axis, 1 elsewhere."""
        rank = len(shape)
        axes = [a % rank for a in self.axis] if rank else []
        if any(not -rank <= a < rank for a in self.axis):
            raise ValueError(f"layer '{self.name}' (Normalization): axis {self.axis} is outside inputs of shape "
                             f"{tuple(shape)}")
        return [int(shape[i]) if i in axes else 1 for i in range(rank)]

    def build(self, input_shape):
        """Makes the mean and variance weights for inputs of input_shape's features."""
        shape = self._feature_shape(list(input_shape))
        if any(s is None or s < 0 for s in shape):
            raise ValueError(f"layer '{self.name}' (Normalization): axis {self.axis} of inputs of shape "
                             f"{tuple(input_shape)} must have a known size")
        self.mean = self.add_weight("mean", shape, "zeros", trainable=False)
        self.variance = self.add_weight("variance", shape, "ones", trainable=False)
        if self._given is not None:
            import numpy as np
            self.mean.assign(np.broadcast_to(np.asarray(self._given[0], np.float32), shape))
            self.variance.assign(np.broadcast_to(np.asarray(self._given[1], np.float32), shape))

    def adapt(self, data):
        """Sets the mean and variance to those of `data` (an array or a Dataset of batches)."""
        import numpy as np
        batches = [np.asarray(b.numpy() if hasattr(b, "numpy") else b, np.float64)
                   for b in (data if hasattr(data, "batch") else [data])]
        if not batches or any(b.shape[1:] != batches[0].shape[1:] for b in batches):
            raise ValueError(f"layer '{self.name}' (Normalization): adapt needs data of one shape, got "
                             f"{[b.shape for b in batches]}")
        values = np.concatenate(batches) if batches[0].ndim else np.stack(batches)
        shape = self._feature_shape(values.shape)
        reduce = tuple(i for i, s in enumerate(shape) if s == 1)
        if not self.built:  # build through a call (on no rows), as Keras' adapt builds the layer
            self(np.zeros((0,) + values.shape[1:], np.float32))
        self.mean.assign(values.mean(axis=reduce, keepdims=True).astype(np.float32).reshape(self.mean.shape))
        self.variance.assign(values.var(axis=reduce, keepdims=True).astype(np.float32).reshape(self.variance.shape))

    def call(self, inputs):
        """(inputs - mean) / max(stddev, 1e-7), or its inverse."""
        x = _as_float(inputs)
        mean, variance = _core.cast(self.mean, x.dtype), _core.cast(self.variance, x.dtype)
        stddev = _core.maximum(_core.sqrt(variance), _core.cast(self._EPSILON, x.dtype))
        return mean + x * stddev if self.invert else (x - mean) / stddev

    def get_config(self):
        """axis, invert and the given mean and variance (as Keras: a layer made from the
        config alone normalizes as this one; adapt's statistics are weights), with the
        base layer's keys."""
        import numpy as np
        axis = list(self.axis) if len(self.axis) != 1 else self.axis[0]
        given = {} if self._given is None else {
            "mean": np.asarray(self._given[0], np.float64).tolist(),
            "variance": np.asarray(self._given[1], np.float64).tolist()}
        return {**super().get_config(), "axis": axis if self.axis else None, "invert": self.invert, **given}
