"""ef.data: input pipelines with tf.data's semantics, run by the C++ runtime.

    train, test = ef.data.datasets.fashion_mnist()
    ds = (ef.data.Dataset.from_tensor_slices((train.images, train.labels))
          .shuffle(10000, seed=42).batch(32).prefetch(ef.data.AUTOTUNE))
    for epoch in range(5):
        for images, labels in ds:       # ef tensors: [32, 28, 28] float32, [32] int64
            ...

Tensors, NumPy arrays and nested lists are accepted wherever tensors are (a NumPy
array keeps its dtype: uint8 images stay uint8; cast them with ef.cast).

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
    """One pass over a Dataset, as ``iter(dataset)`` returns it.

    Iterating gives the dataset's elements (a tensor, or a tuple of tensors); the
    background threads of its map and prefetch stages stop when it is dropped.

    >>> it = iter(ef.data.Dataset.from_tensor_slices([1, 2]))
    >>> next(it).numpy(), it.get_next().numpy()
    (array(1, dtype=int32), array(2, dtype=int32))
    """

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
        """Returns the next element.

        Raises:
          OutOfRangeError: the pass is over (as TensorFlow; ``next()`` raises
            StopIteration instead).
        """
        try:
            return next(self)
        except StopIteration:
            raise errors.OutOfRangeError("End of sequence") from None


class Dataset:
    """An immutable input pipeline with tf.data's semantics; each iteration is a fresh pass.

    Make one with Dataset.from_tensor_slices, then chain shuffle, map, batch, repeat,
    take and prefetch (each returns a new Dataset). Elements are tuples of tensors
    when the dataset was built from a tuple (or a map returned one), else tensors.

    >>> ds = ef.data.Dataset.from_tensor_slices(([1., 2., 3.], [0, 1, 0])).batch(2)
    >>> [(x.numpy(), y.numpy()) for x, y in ds]
    [(array([1., 2.], dtype=float32), array([0, 1], dtype=int32)), (array([3.], dtype=float32), array([0], dtype=int32))]
    """

    __slots__ = ("_raw", "_structure")

    def __init__(self, raw, structure):
        self._raw = raw
        self._structure = structure

    @staticmethod
    def from_tensor_slices(tensors):
        """Creates a Dataset whose elements are the slices along the first axis.

        >>> [x.numpy() for x in ef.data.Dataset.from_tensor_slices([[1, 2], [3, 4]])]
        [array([1, 2], dtype=int32), array([3, 4], dtype=int32)]

        Args:
          tensors: A tensor-like (tensor, NumPy array, list), or a tuple of them,
            all with the same first dimension.

        Returns:
          A Dataset of tensors, or of tuples when `tensors` is a tuple.

        Raises:
          InvalidArgumentError: the first dimensions differ.
        """
        if isinstance(tensors, tuple):
            return Dataset(_data._Dataset.from_tensor_slices(list(tensors)), _Structure(False))
        return Dataset(_data._Dataset.from_tensor_slices([tensors]), _Structure(True))

    @staticmethod
    def range(*args):
        """A Dataset of int64 scalars, as Python's range(start, stop, step) counts.

        >>> [int(x) for x in ef.data.Dataset.range(1, 7, 2)]
        [1, 3, 5]
        """
        import numpy as np
        r = range(*args)  # Python's argument rules and errors
        return Dataset.from_tensor_slices(np.arange(r.start, r.stop, r.step, dtype=np.int64))

    def _derive(self, raw, structure=None):
        return Dataset(raw, structure or self._structure)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """Randomly shuffles the elements with a buffer of buffer_size (TensorFlow's algorithm).

        Each element is drawn from a buffer of the next buffer_size elements; a buffer
        at least as large as the dataset gives a uniform shuffle.

        Args:
          buffer_size: A positive int.
          seed: None (follows the global seed), or an int.
          reshuffle_each_iteration: If True (default), each pass has a new order;
            else every pass repeats the first one's.

        Returns:
          A Dataset.
        """
        return self._derive(self._raw.shuffle(buffer_size, seed, reshuffle_each_iteration))

    def batch(self, batch_size, drop_remainder=False):
        """Stacks batch_size consecutive elements into one (a new first axis).

        Args:
          batch_size: A positive int.
          drop_remainder: If True, drop a smaller last batch (default False: keep it).

        Returns:
          A Dataset of batched tensors (or tuples of them).
        """
        return self._derive(self._raw.batch(batch_size, drop_remainder))

    def map(self, map_func, num_parallel_calls=None):
        """Applies map_func to every element, keeping their order.

        >>> ds = ef.data.Dataset.from_tensor_slices([1., 2.]).map(lambda x: (x, x * 10.))
        >>> [(a.numpy(), b.numpy()) for a, b in ds]
        [(array(1., dtype=float32), array(10., dtype=float32)), (array(2., dtype=float32), array(20., dtype=float32))]

        Args:
          map_func: A function of the element's components (one argument per tuple
            member) returning a tensor-like or a tuple of them.
          num_parallel_calls: None (one call at a time), an int, or AUTOTUNE: calls
            run on that many worker threads (each holding the GIL while in Python).

        Returns:
          A Dataset.
        """
        source, out = self._structure, _Structure(None)

        def call(args):
            result = map_func(args[0]) if source.single else map_func(*args)
            out.single = not isinstance(result, tuple)
            return (result,) if out.single else result

        return self._derive(self._raw.map(call, 1 if num_parallel_calls is None else num_parallel_calls), out)

    def repeat(self, count=None):
        """Repeats the dataset count times (None or -1: forever).

        Args:
          count: None, -1, or a non-negative int.

        Returns:
          A Dataset.
        """
        return self._derive(self._raw.repeat(-1 if count is None else count))

    def take(self, count):
        """Keeps only the first count elements (-1: all).

        Args:
          count: An int.

        Returns:
          A Dataset.
        """
        return self._derive(self._raw.take(count))

    def prefetch(self, buffer_size=AUTOTUNE):
        """Produces up to buffer_size elements ahead, on a background thread.

        Args:
          buffer_size: An int, or AUTOTUNE (the default).

        Returns:
          A Dataset.
        """
        return self._derive(self._raw.prefetch(buffer_size))

    def cardinality(self):
        """Returns the number of elements as an int, or INFINITE_CARDINALITY / UNKNOWN_CARDINALITY.

        >>> ef.data.Dataset.from_tensor_slices([1, 2, 3]).batch(2).cardinality()
        2
        """
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
        """Returns a generator of the elements as NumPy arrays (tuples of them for tuple elements).

        >>> list(ef.data.Dataset.from_tensor_slices([1, 2]).as_numpy_iterator())
        [array(1, dtype=int32), array(2, dtype=int32)]
        """
        for element in self:
            yield tuple(t.numpy() for t in element) if isinstance(element, tuple) else element.numpy()


LabeledImages = collections.namedtuple("LabeledImages", ["images", "labels"])
LabeledImages.__doc__ = """A split of an image dataset: (images, labels).

Fields:
  images: A float32 Tensor [N, height, width] with values in [0, 1].
  labels: An int64 Tensor [N] of class ids.
"""
FashionMnist = collections.namedtuple("FashionMnist", ["train", "test"])
FashionMnist.__doc__ = """Fashion-MNIST as ef.data.datasets.fashion_mnist() returns it: (train, test).

Fields:
  train: A LabeledImages of 60000 examples.
  test: A LabeledImages of 10000 examples.
"""


def _fashion_mnist(directory=None):
    """Fashion-MNIST as ef tensors: images float32 [N, 28, 28] in [0, 1], labels int64.
    Reads Debian's dataset-fashion-mnist files (or `directory`, or $EF_DATASETS_DIR/fashion-mnist);
    raises NotFoundError saying how to install them when missing."""
    (xtr, ytr), (xte, yte) = _data.fashion_mnist(directory or "")
    return FashionMnist(LabeledImages(xtr, ytr), LabeledImages(xte, yte))


datasets = types.SimpleNamespace(fashion_mnist=_fashion_mnist, fashion_mnist_directory=_data.fashion_mnist_directory)
