"""ef.data: input pipelines with tf.data's semantics, run by the C++ runtime.

    train, test = ef.data.datasets.fashion_mnist()
    ds = (ef.data.Dataset.from_tensor_slices((train.images, train.labels))
          .shuffle(10000, seed=42).batch(32).prefetch(ef.data.AUTOTUNE))
    for epoch in range(5):
        for images, labels in ds:       # ef tensors: [32, 28, 28] float32, [32] int64
            ...

Tensors, NumPy arrays and nested lists are accepted wherever tensors are (NumPy's
uint8 becomes int32: eagerflow has no 8-bit dtype).

Elements are tuples of tensors when the dataset was built from a tuple (or a map
returned one), and single tensors otherwise. Map functions receive the element's
components as arguments and may return a tensor or a tuple of tensor-likes; with
num_parallel_calls they run on worker threads, each call holding the GIL.
"""
import collections
import types

from eagerflow import errors
from eagerflow._core import data as _data
from eagerflow._core.data import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, read_idx  # noqa: F401


class _Structure:
    """Whether elements are single tensors; a map's output learns it on its first call."""

    __slots__ = ("single",)

    def __init__(self, single):
        self.single = single


class Iterator:
    """One pass over a Dataset (iter(dataset)). Stops its background threads when dropped."""

    def __init__(self, raw, structure):
        self._raw = raw
        self._structure = structure

    def __iter__(self):
        return self

    def __next__(self):
        element = self._raw.next()
        if element is None:
            raise StopIteration
        return element[0] if self._structure.single else element

    def get_next(self):
        """The next element; raises ef.errors.OutOfRangeError at the end, as TensorFlow does."""
        try:
            return next(self)
        except StopIteration:
            raise errors.OutOfRangeError("End of sequence") from None


class Dataset:
    """An immutable input pipeline. Each iteration is a fresh pass over the data."""

    __slots__ = ("_raw", "_structure")

    def __init__(self, raw, structure):
        self._raw = raw
        self._structure = structure

    @staticmethod
    def from_tensor_slices(tensors):
        """Rows along the first axis of a tensor (or array, or list), or of each member of
        a tuple of them. First dimensions that differ raise InvalidArgumentError."""
        if isinstance(tensors, tuple):
            return Dataset(_data._Dataset.from_tensor_slices(list(tensors)), _Structure(False))
        return Dataset(_data._Dataset.from_tensor_slices([tensors]), _Structure(True))

    def _derive(self, raw, structure=None):
        return Dataset(raw, structure or self._structure)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """Shuffles with a buffer of buffer_size (TensorFlow's algorithm); see the C++ docs."""
        return self._derive(self._raw.shuffle(buffer_size, seed, reshuffle_each_iteration))

    def batch(self, batch_size, drop_remainder=False):
        """Stacks batch_size consecutive elements; the smaller last batch is kept unless drop_remainder."""
        return self._derive(self._raw.batch(batch_size, drop_remainder))

    def map(self, map_func, num_parallel_calls=None):
        """map_func over every element, in order; num_parallel_calls (or AUTOTUNE) threads."""
        source, out = self._structure, _Structure(None)

        def call(args):
            result = map_func(args[0]) if source.single else map_func(*args)
            out.single = not isinstance(result, tuple)
            return (result,) if out.single else result

        return self._derive(self._raw.map(call, 1 if num_parallel_calls is None else num_parallel_calls), out)

    def repeat(self, count=None):
        """The dataset count times over (None or -1: forever)."""
        return self._derive(self._raw.repeat(-1 if count is None else count))

    def take(self, count):
        """The first count elements (-1: all)."""
        return self._derive(self._raw.take(count))

    def prefetch(self, buffer_size=AUTOTUNE):
        """Produces up to buffer_size elements ahead on a background thread."""
        return self._derive(self._raw.prefetch(buffer_size))

    def cardinality(self):
        """The number of elements, INFINITE_CARDINALITY or UNKNOWN_CARDINALITY."""
        return self._raw.cardinality()

    def __len__(self):
        n = self.cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __iter__(self):
        return Iterator(self._raw.make_iterator(), self._structure)

    def as_numpy_iterator(self):
        """Iterates the elements as NumPy arrays (tuples of them for tuple elements)."""
        for element in self:
            yield tuple(t.numpy() for t in element) if isinstance(element, tuple) else element.numpy()


LabeledImages = collections.namedtuple("LabeledImages", ["images", "labels"])
FashionMnist = collections.namedtuple("FashionMnist", ["train", "test"])


def _fashion_mnist(directory=None):
    """Fashion-MNIST as ef tensors: images float32 [N, 28, 28] in [0, 1], labels int64.
    Reads Debian's dataset-fashion-mnist files (or `directory`, or $EF_DATASETS_DIR/fashion-mnist);
    raises NotFoundError saying how to install them when missing."""
    (xtr, ytr), (xte, yte) = _data.fashion_mnist(directory or "")
    return FashionMnist(LabeledImages(xtr, ytr), LabeledImages(xte, yte))


datasets = types.SimpleNamespace(fashion_mnist=_fashion_mnist, fashion_mnist_directory=_data.fashion_mnist_directory)
