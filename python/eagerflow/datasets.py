"""ef.datasets: Keras' dataset loaders, returning NumPy arrays exactly as Keras does.

    (x_train, y_train), (x_test, y_test) = ef.datasets.fashion_mnist.load_data()
    # x_train: uint8 (60000, 28, 28); y_train: uint8 (60000,), class ids 0-9

For ef tensors ready for training (float32 in [0, 1], int64 labels) use
ef.data.datasets.fashion_mnist().
"""
import types

from eagerflow._core import data as _data


def _load_fashion_mnist(directory=None):
    """((x_train, y_train), (x_test, y_test)) as uint8 NumPy arrays, as keras.datasets'.
    Reads Debian's dataset-fashion-mnist files (or `directory`, or $EF_DATASETS_DIR/fashion-mnist);
    raises ef.errors.NotFoundError saying how to install them when missing."""
    return _data._fashion_mnist_numpy(directory or "")


fashion_mnist = types.SimpleNamespace(load_data=_load_fashion_mnist)
