"""Keras initializers, by class (GlorotUniform(seed=1)) or by name ("glorot_uniform").
Seeded initializers give the same values on every call."""
from eagerflow._core import keras as _keras

Initializer = _keras.Initializer
_init = _keras.initializers


def Zeros():  # noqa: N802  (Keras' class names)
    """Returns an Initializer filling tensors with 0 (the name "zeros").

    >>> ef.keras.initializers.Zeros()([2]).numpy()
    array([0., 0.], dtype=float32)

    Returns:
      An Initializer; call it with a shape (and dtype, default float32).
    """
    return _init.zeros()


def Ones():  # noqa: N802
    """Returns an Initializer filling tensors with 1 (the name "ones").

    >>> ef.keras.initializers.Ones()([2]).numpy()
    array([1., 1.], dtype=float32)

    Returns:
      An Initializer; call it with a shape (and dtype, default float32).
    """
    return _init.ones()


def Constant(value=0.0):  # noqa: N802
    """Returns an Initializer filling tensors with one value.

    >>> ef.keras.initializers.Constant(3.)([2]).numpy()
    array([3., 3.], dtype=float32)

    Args:
      value: A Python number (default 0).

    Returns:
      An Initializer; call it with a shape (and dtype, default float32).
    """
    return _init.constant(value)


def RandomNormal(mean=0.0, stddev=0.05, seed=None):  # noqa: N802
    """Returns an Initializer drawing from a normal distribution.

    >>> ef.keras.initializers.RandomNormal(stddev=1., seed=1)([3, 2]).shape
    TensorShape([3, 2])

    Args:
      mean: The mean (default 0).
      stddev: The standard deviation (default 0.05).
      seed: None (values follow the global seed), or an int: every call then gives
        the same values.

    Returns:
      An Initializer; call it with a shape (and float dtype, default float32).
    """
    return _init.random_normal(mean, stddev, seed)


def RandomUniform(minval=-0.05, maxval=0.05, seed=None):  # noqa: N802
    """Returns an Initializer drawing uniformly from [minval, maxval).

    >>> x = ef.keras.initializers.RandomUniform(-1., 1., seed=1)([100])
    >>> bool(ef.reduce_all(ef.abs(x) <= 1.))
    True

    Args:
      minval: The lower bound (default -0.05).
      maxval: The upper bound (default 0.05).
      seed: None (values follow the global seed), or an int: every call then gives
        the same values.

    Returns:
      An Initializer; call it with a shape (and float dtype, default float32).
    """
    return _init.random_uniform(minval, maxval, seed)


def TruncatedNormal(mean=0.0, stddev=0.05, seed=None):  # noqa: N802
    """Returns an Initializer drawing from a normal distribution truncated at 2 stddev.

    Draws further than two standard deviations from the mean are redrawn.

    >>> x = ef.keras.initializers.TruncatedNormal(stddev=1., seed=1)([1000])
    >>> bool(ef.reduce_max(ef.abs(x)) <= 2.)
    True

    Args:
      mean: The mean (default 0).
      stddev: The standard deviation before truncation (default 0.05).
      seed: None (values follow the global seed), or an int: every call then gives
        the same values.

    Returns:
      An Initializer; call it with a shape (and float dtype, default float32).
    """
    return _init.truncated_normal(mean, stddev, seed)


def GlorotUniform(seed=None):  # noqa: N802
    """Returns the Glorot (Xavier) uniform initializer, Keras' default for kernels.

    Uniform in [-limit, limit] with limit = sqrt(6 / (fan_in + fan_out)); for a
    convolution kernel [h, w, in, out] the receptive field h * w multiplies both fans.

    >>> init = ef.keras.initializers.GlorotUniform(seed=1)
    >>> bool(ef.reduce_all(ef.equal(init([2, 2]), init([2, 2]))))  # seeded: same values
    True

    Args:
      seed: None (values follow the global seed), or an int.

    Returns:
      An Initializer; call it with a shape (and float dtype, default float32).
    """
    return _init.glorot_uniform(seed)


def GlorotNormal(seed=None):  # noqa: N802
    """Returns the Glorot (Xavier) normal initializer.

    A truncated normal with stddev sqrt(2 / (fan_in + fan_out)) / 0.87962566 (Keras'
    correction for the truncation at two standard deviations).

    >>> ef.keras.initializers.GlorotNormal(seed=1)([4, 3]).shape
    TensorShape([4, 3])

    Args:
      seed: None (values follow the global seed), or an int.

    Returns:
      An Initializer; call it with a shape (and float dtype, default float32).
    """
    return _init.glorot_normal(seed)


def HeNormal(seed=None):  # noqa: N802
    """Returns the He normal initializer, for ReLU layers.

    A truncated normal with stddev sqrt(2 / fan_in) / 0.87962566.

    >>> ef.keras.initializers.HeNormal(seed=1)([4, 3]).shape
    TensorShape([4, 3])

    Args:
      seed: None (values follow the global seed), or an int.

    Returns:
      An Initializer; call it with a shape (and float dtype, default float32).
    """
    return _init.he_normal(seed)


def HeUniform(seed=None):  # noqa: N802
    """Returns the He uniform initializer: uniform in [-limit, limit], limit = sqrt(6 / fan_in).

    >>> ef.keras.initializers.HeUniform(seed=1)([4, 3]).shape
    TensorShape([4, 3])

    Args:
      seed: None (values follow the global seed), or an int.

    Returns:
      An Initializer; call it with a shape (and float dtype, default float32).
    """
    return _init.he_uniform(seed)


def LecunNormal(seed=None):  # noqa: N802
    """Returns the LeCun normal initializer, for SELU layers.

    A truncated normal with stddev sqrt(1 / fan_in) / 0.87962566.

    >>> ef.keras.initializers.LecunNormal(seed=1)([4, 3]).shape
    TensorShape([4, 3])

    Args:
      seed: None (values follow the global seed), or an int.

    Returns:
      An Initializer; call it with a shape (and float dtype, default float32).
    """
    return _init.lecun_normal(seed)


def get(identifier):
    """Returns an Initializer from a name, an Initializer, or a function.

    >>> ef.keras.initializers.get("he_normal").name
    'he_normal'

    Args:
      identifier: A Keras name ("glorot_uniform", "zeros", "orthogonal", ...), an
        Initializer, or a function (shape, dtype) -> tensor.

    Returns:
      An Initializer.

    Raises:
      InvalidArgumentError: an unknown name.
      TypeError: anything else.
    """
    return Initializer(identifier)
