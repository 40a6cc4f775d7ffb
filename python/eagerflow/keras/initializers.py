"""Keras initializers, by class (GlorotUniform(seed=1)) or by name ("glorot_uniform").
Seeded initializers give the same values on every call."""
from eagerflow._core import keras as _keras

Initializer = _keras.Initializer
_init = _keras.initializers


def Zeros():  # noqa: N802  (Keras' class names)
    return _init.zeros()


def Ones():  # noqa: N802
    return _init.ones()


def Constant(value=0.0):  # noqa: N802
    return _init.constant(value)


def RandomNormal(mean=0.0, stddev=0.05, seed=None):  # noqa: N802
    return _init.random_normal(mean, stddev, seed)


def RandomUniform(minval=-0.05, maxval=0.05, seed=None):  # noqa: N802
    return _init.random_uniform(minval, maxval, seed)


def TruncatedNormal(mean=0.0, stddev=0.05, seed=None):  # noqa: N802
    return _init.truncated_normal(mean, stddev, seed)


def GlorotUniform(seed=None):  # noqa: N802
    return _init.glorot_uniform(seed)


def GlorotNormal(seed=None):  # noqa: N802
    return _init.glorot_normal(seed)


def HeNormal(seed=None):  # noqa: N802
    return _init.he_normal(seed)


def HeUniform(seed=None):  # noqa: N802
    return _init.he_uniform(seed)


def LecunNormal(seed=None):  # noqa: N802
    return _init.lecun_normal(seed)


def get(identifier):
    """An Initializer from a name, an Initializer, or a function (shape, dtype)."""
    return Initializer(identifier)
