"""keras.layers.Conv3D, in Python over ef.nn.conv3d: volumes (video, scans) of shape
[batch, depth, height, width, channels]."""
from eagerflow import _core
from eagerflow.keras.models import register_keras_serializable


def _triple(value, what):
    values = (value,) * 3 if isinstance(value, int) else tuple(int(v) for v in value)
    if len(values) != 3 or min(values) <= 0:
        raise ValueError(f"Conv3D: {what} must be a positive int or three of them, got {value!r}")
    return values


@register_keras_serializable()
class Conv3D(_core.Layer):
    """A 3-D convolution: activation(conv3d(inputs, kernel) + bias) (keras.layers.Conv3D).

    kernel is [kernel depth, height, width, input channels, filters], made on the
    first call from the input's channels.

    >>> ef.keras.layers.Conv3D(4, 3, padding="same")(np.ones((2, 5, 6, 7, 3), np.float32)).shape
    TensorShape([2, 5, 6, 7, 4])

    Args:
      filters: The number of output channels.
      kernel_size: An int or (depth, height, width).
      strides, dilation_rate: An int or three (default 1).
      padding: "valid" or "same".
      activation: None or an activation name ("relu", ...) as Dense takes.
      use_bias: Whether to add a bias per filter.
      kernel_initializer, bias_initializer: Keras initializer names.
      name: The layer's name.
    """

    def __init__(self, filters, kernel_size, strides=1, padding="valid", dilation_rate=1, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros", name=None):
        super().__init__(name=name or "conv3d")
        if int(filters) <= 0:
            raise ValueError(f"Conv3D: filters must be positive, got {filters!r}")
        if str(padding).lower() not in ("valid", "same"):
            raise ValueError(f"Conv3D: padding must be 'valid' or 'same', got {padding!r}")
        self.filters = int(filters)
        self.kernel_size = _triple(kernel_size, "kernel_size")
        self.strides = _triple(strides, "strides")
        self.dilation_rate = _triple(dilation_rate, "dilation_rate")
        self.padding = str(padding).lower()
        self.activation = activation
        self._activation = _core.keras.Activation(activation) if activation is not None else None
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer

    def build(self, input_shape):
        """Makes kernel (and bias) for inputs of input_shape's channels."""
        if len(input_shape) != 5:
            raise ValueError(f"layer '{self.name}' (Conv3D) takes [batch, depth, height, width, channels] "
                             f"inputs, got shape {tuple(input_shape)}")
        self.kernel = self.add_weight("kernel", [*self.kernel_size, int(input_shape[-1]), self.filters],
                                      self.kernel_initializer)
        self.bias = self.add_weight("bias", [self.filters], self.bias_initializer) if self.use_bias else None

    def call(self, inputs):
        """activation(conv3d(inputs, kernel) + bias)."""
        y = _core.conv3d(inputs, self.kernel, list(self.strides), self.padding.upper(),
                         dilations=list(self.dilation_rate))
        if self.bias is not None:
            y = y + self.bias
        return self._activation(y) if self._activation is not None else y

    def get_config(self):
        """The constructor's arguments, with the base layer's keys."""
        return {**super().get_config(), "filters": self.filters, "kernel_size": list(self.kernel_size),
                "strides": list(self.strides), "padding": self.padding, "dilation_rate": list(self.dilation_rate),
                "activation": self.activation, "use_bias": self.use_bias,
                "kernel_initializer": self.kernel_initializer, "bias_initializer": self.bias_initializer}
