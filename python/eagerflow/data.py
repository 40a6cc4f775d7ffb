"""ef.data: input pipelines with tf.data's semantics, run by the C++ runtime.

    train, test = ef.data.datasets.fashion_mnist()
    ds = (ef.data.Dataset.from_tensor_slices((train.images, train.labels))
          .shuffle(10000, seed=42).batch(32).prefetch(ef.data.AUTOTUNE))
    for epoch in range(5):
        for images, labels in ds:       # ef tensors: [32, 28, 28] float32, [32] int64
            ...

Tensors, NumPy arrays and nested lists are accepted wherever tensors are (a NumPy
array keeps its dtype: uint8 images stay uint8; cast them with ef.cast).

Elements are nested structures as in tf.data: a tensor, or tuples (namedtuples) and
dicts of them, as the dataset was built (from_tensor_slices of a tuple, zip, enumerate,
a map returning a tuple); lists are tensor-likes, never structure, as tf.data treats
them. The C++ pipeline sees the flattened components (dict values in key order); the
Python Dataset records the nesting. Functions (map, filter, flat_map, interleave)
receive a tuple element's members as separate arguments and any other element as one;
with num_parallel_calls they run on worker threads, each call holding the GIL.

A structure the pipeline learns only by running a function (what a map returns) is
known from the function's first call; until then, arguments that follow the element's
structure (padded_batch's padded_shapes) are read by their own form.
"""
import collections
import types

import numpy as np

from eagerflow import errors
from eagerflow._core import data as _data
from eagerflow import _data_structure as _nest
from eagerflow import _generator_source
from eagerflow._core.data import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, read_idx  # noqa: F401

class Iterator:
    """One pass over a Dataset, as ``iter(dataset)`` returns it.

    Iterating gives the dataset's elements (a tensor, or a nested structure of tensors);
    the background threads of its map and prefetch stages stop when it is dropped.

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
        return _nest.packed(self._structure.spec, element)

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

    Make one with from_tensor_slices, from_tensors, range, zip or from_generator, then
    chain transformations (each returns a new Dataset): shuffle, map, filter, batch,
    padded_batch, unbatch, repeat, take, skip, shard, enumerate, concatenate, cache,
    flat_map, interleave, prefetch. reduce folds a pass into one value. Elements are
    tensors or nested tuples and dicts of them, as the dataset was built.

    >>> ds = ef.data.Dataset.from_tensor_slices(([1., 2., 3.], [0, 1, 0])).batch(2)
    >>> [(x.numpy(), y.numpy()) for x, y in ds]
    [(array([1., 2.], dtype=float32), array([0, 1], dtype=int32)), (array([3.], dtype=float32), array([0], dtype=int32))]
    """

    __slots__ = ("_raw", "_structure")

    def __init__(self, raw, structure):
        self._raw = raw
        self._structure = structure

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """Creates a Dataset whose elements are the slices along the first axis.

        >>> [x.numpy() for x in ef.data.Dataset.from_tensor_slices([[1, 2], [3, 4]])]
        [array([1, 2], dtype=int32), array([3, 4], dtype=int32)]

        Args:
          tensors: A tensor-like (tensor, NumPy array, list), or a nested structure
            (tuples, dicts) of them, all with the same first dimension.
          name: Unused (tf.data's op name).

        Returns:
          A Dataset whose elements have the structure of `tensors`.

        Raises:
          InvalidArgumentError: the first dimensions differ.
        """
        leaves = []
        spec = _nest.flatten(tensors, leaves)
        return Dataset(_data._Dataset.from_tensor_slices(leaves), _nest.Structure(spec))

    @staticmethod
    def from_tensors(tensors, name=None):
        """Creates a Dataset of one element: `tensors` itself.

        >>> [x.numpy() for x in ef.data.Dataset.from_tensors([1, 2, 3])]
        [array([1, 2, 3], dtype=int32)]

        Args:
          tensors: A tensor-like, or a nested structure (tuples, dicts) of them.
          name: Unused.

        Returns:
          A Dataset with cardinality 1.
        """
        leaves = []
        spec = _nest.flatten(tensors, leaves)
        return Dataset(_data._Dataset.from_tensors(leaves), _nest.Structure(spec))

    @staticmethod
    def range(*args):
        """A Dataset of int64 scalars, as Python's range(start, stop, step) counts.

        >>> [int(x) for x in ef.data.Dataset.range(1, 7, 2)]
        [1, 3, 5]
        """
        r = range(*args)  # Python's argument rules and errors
        return Dataset.from_tensor_slices(np.arange(r.start, r.stop, r.step, dtype=np.int64))

    @staticmethod
    def zip(*args, datasets=None, name=None):
        """Zips datasets: element i is the structure of the datasets' elements i.

        Ends with the shortest dataset.

        >>> a, b = ef.data.Dataset.range(1, 4), ef.data.Dataset.range(4, 7)
        >>> [(int(x), int(y)) for x, y in ef.data.Dataset.zip(a, b)]
        [(1, 4), (2, 5), (3, 6)]

        Args:
          *args: Datasets, or one (nested) tuple or dict of datasets.
          datasets: The same as a single positional argument (tf.data's older form).
          name: Unused.

        Returns:
          A Dataset whose elements have the structure of the datasets given.

        Raises:
          TypeError: no datasets, both forms, or something else than datasets (a
            list: use a tuple, as in tf.data).
        """
        if datasets is not None and args:
            raise TypeError("zip: pass the datasets either positionally or as datasets=, not both")
        if datasets is None:
            if not args:
                raise TypeError("zip: expected at least one dataset")
            datasets = args[0] if len(args) == 1 else args
        leaves = []
        spec = _nest.flatten(datasets, leaves)
        for leaf in leaves:
            if not isinstance(leaf, Dataset):
                raise TypeError("zip: expected a (nested) tuple or dict of Datasets, got "
                                f"{type(leaf).__name__} in {datasets!r}" +
                                ("; use a tuple, not a list" if isinstance(leaf, list) else ""))
        structures = [d._structure for d in leaves]

        def derive():
            return _nest.substitute(spec, iter([s.spec for s in structures]))

        return Dataset(_data._Dataset.zip([d._raw for d in leaves]), _nest.Structure(derive=derive))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """A Dataset of the elements a Python generator yields.

        Each pass calls ``generator(*args)`` afresh and converts every yielded value to
        output_signature's structure, dtypes and shapes (NumPy's conversion, as
        tf.data's; a None dimension matches any size).

        >>> def gen():
        ...     for i in range(1, 4):
        ...         yield i, [1] * i
        >>> ds = ef.data.Dataset.from_generator(gen, output_signature=(
        ...     ef.TensorSpec(shape=(), dtype=ef.int32), ef.TensorSpec(shape=(None,), dtype=ef.int32)))
        >>> [(int(i), x.numpy().tolist()) for i, x in ds]
        [(1, [1]), (2, [1, 1]), (3, [1, 1, 1])]

        The generator runs holding the GIL on the thread that pulls the pipeline's
        source: the caller's, or a prefetch thread (iterating releases the GIL meanwhile,
        so that thread can run it). A generator that iterates another ef Dataset is fine.

        Args:
          generator: A callable returning an iterator (a generator function).
          output_types: With output_shapes, the older form of output_signature: a
            (nested) structure of dtypes.
          output_shapes: None (any shapes), or shapes matching output_types.
          args: A tuple of arguments, passed to generator as NumPy arrays.
          output_signature: A (nested) tuple or dict of ef.TensorSpec.
          name: Unused.

        Returns:
          A Dataset of unknown cardinality.

        Raises:
          TypeError: generator is not callable, or the signature is missing or
            malformed. When iterating, TypeError for a yielded value of another
            structure, one that does not convert, or a shape that does not match.
        """
        start, spec = _generator_source.parse(generator, output_types, output_shapes, args, output_signature)
        return Dataset(_data._Dataset.from_generator(start), _nest.Structure(spec))

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
          map_func: A function of the element (one argument per member of a tuple
            element) returning a tensor-like or a nested tuple or dict of them.
          num_parallel_calls: None (one call at a time), an int, or AUTOTUNE: calls
            run on that many worker threads (each holding the GIL while in Python).

        Returns:
          A Dataset.
        """
        source, out = self._structure, _nest.Structure()

        def call(args):
            leaves = []
            out.learn(_nest.flatten(_nest.call(map_func, source, args), leaves))
            return leaves

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

    def filter(self, predicate, name=None):
        """Keeps the elements for which predicate returns True.

        >>> ds = ef.data.Dataset.from_tensor_slices([1, 2, 3])
        >>> [int(x) for x in ds.filter(lambda x: x < 3)]
        [1, 2]

        Args:
          predicate: A function of the element (one argument per member of a tuple
            element) returning a scalar bool tensor (or a Python bool).
          name: Unused.

        Returns:
          A Dataset of unknown cardinality.

        Raises:
          InvalidArgumentError: when iterating, a result that is not a scalar bool.
        """
        source = self._structure
        return self._derive(self._raw.filter(lambda args: _nest.call(predicate, source, args)))

    def skip(self, count, name=None):
        """All but the first count elements (-1: none).

        >>> [int(x) for x in ef.data.Dataset.range(10).skip(7)]
        [7, 8, 9]

        Args:
          count: An int, -1 or more.
          name: Unused.

        Returns:
          A Dataset.
        """
        return self._derive(self._raw.skip(_nest.count(count, "skip: count")))

    def shard(self, num_shards, index, name=None):
        """Every num_shards-th element, from element index on (one worker's share).

        >>> [int(x) for x in ef.data.Dataset.range(10).shard(num_shards=3, index=1)]
        [1, 4, 7]

        Args:
          num_shards: A positive int.
          index: An int in [0, num_shards).
          name: Unused.

        Returns:
          A Dataset.

        Raises:
          InvalidArgumentError: num_shards < 1 or index out of range.
        """
        return self._derive(self._raw.shard(_nest.count(num_shards, "shard: num_shards"), _nest.count(index, "shard: index")))

    def enumerate(self, start=0, name=None):
        """Pairs each element with its position: (start + i, element), i an int64 scalar.

        >>> [(int(i), int(x)) for i, x in ef.data.Dataset.from_tensor_slices([1, 2, 3]).enumerate(start=5)]
        [(5, 1), (6, 2), (7, 3)]

        Args:
          start: The first position, an int.
          name: Unused.

        Returns:
          A Dataset of (index, element) pairs.
        """
        source = self._structure

        def derive():
            return None if source.spec is None else (_nest.TENSOR, source.spec)

        return self._derive(self._raw.enumerate(_nest.count(start, "enumerate: start")), _nest.Structure(derive=derive))

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then dataset's.

        >>> a, b = ef.data.Dataset.range(1, 4), ef.data.Dataset.range(4, 8)
        >>> [int(x) for x in a.concatenate(b)]
        [1, 2, 3, 4, 5, 6, 7]

        Args:
          dataset: A Dataset whose elements have the same structure and dtypes
            (shapes may differ).
          name: Unused.

        Returns:
          A Dataset.

        Raises:
          TypeError: the structures differ (when both are known).
          InvalidArgumentError: when iterating, dtypes or component counts that differ.
        """
        if not isinstance(dataset, Dataset):
            raise TypeError(f"concatenate: expected a Dataset, got {type(dataset).__name__}")
        a, b = self._structure, dataset._structure
        if a.spec is not None and b.spec is not None and a.spec != b.spec:
            raise TypeError(f"concatenate: incompatible dataset elements: {a.spec} vs. {b.spec}")
        return self._derive(self._raw.concatenate(dataset._raw), _nest.Structure(derive=lambda: a.spec or b.spec))

    def unbatch(self, name=None):
        """Splits each element along its first axis into that many elements.

        >>> [int(x) for x in ef.data.Dataset.range(5).batch(2).unbatch()]
        [0, 1, 2, 3, 4]

        Args:
          name: Unused.

        Returns:
          A Dataset (cardinality unknown: it depends on the batch sizes).

        Raises:
          InvalidArgumentError: when iterating, a scalar component, or components
            whose first dimensions differ.
        """
        return self._derive(self._raw.unbatch())

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        """Batches elements, padding each component to a common shape first.

        >>> ds = ef.data.Dataset.range(1, 4).map(lambda x: ef.fill([x], x))
        >>> [b.numpy().tolist() for b in ds.padded_batch(2)]
        [[[1, 0], [2, 2]], [[3, 3, 3]]]

        Args:
          batch_size: A positive int.
          padded_shapes: None (every dimension padded to the longest in the batch),
            or the elements' structure of shapes: lists or tuples of ints, where None
            or -1 pads that dimension to the longest, or an int for a vector.
          padding_values: None (zeros), one value for every component, or the
            elements' structure of scalars. A Python number takes the component's
            dtype; a tensor must have it.
          drop_remainder: If True, drop a smaller last batch.
          name: Unused.

        Returns:
          A Dataset of padded batches.

        Raises:
          InvalidArgumentError: batch_size < 1, a dimension below -1, a padding value
            that is not a scalar; when iterating, an element larger than its padded
            shape, ranks, dtypes or component counts that do not match.
          TypeError, ValueError: padded_shapes or padding_values do not match the
            elements' structure.
        """
        spec = self._structure.spec
        shapes = None if padded_shapes is None else _nest.shape_leaves(padded_shapes, spec)
        values = None if padding_values is None else _nest.padding_leaves(padding_values, spec)
        return self._derive(self._raw.padded_batch(_nest.count(batch_size, "padded_batch: batch_size"), shapes, values,
                                                   bool(drop_remainder)))

    def cache(self, filename="", name=None):
        """Keeps the elements in memory after the first complete pass; later passes read them.

        A pass stopped early (take, break) leaves no cache behind. Put shuffle after
        cache to shuffle every epoch.

        >>> ds = ef.data.Dataset.range(5).map(lambda x: x * x).cache()
        >>> [int(x) for x in ds], [int(x) for x in ds]
        ([0, 1, 4, 9, 16], [0, 1, 4, 9, 16])

        Args:
          filename: "" (in memory). A file cache is not implemented.
          name: Unused.

        Returns:
          A Dataset.

        Raises:
          UnimplementedError: a filename.
        """
        if filename:
            raise errors.UnimplementedError(f"cache: only the in-memory cache (filename='') is implemented, "
                                            f"got filename={filename!r}")
        return self._derive(self._raw.cache())

    def _dataset_fn(self, map_func, what):
        """map_func as the C++ pipeline calls it, and the structure of what it returns."""
        source, out = self._structure, _nest.Structure()

        def call(args):
            ds = _nest.call(map_func, source, args)
            if not isinstance(ds, Dataset):
                raise TypeError(f"{what}: map_func must return a Dataset, got {type(ds).__name__}")
            out.follow(ds._structure)
            return ds._raw

        return call, out

    def flat_map(self, map_func, name=None):
        """Maps each element to a dataset and concatenates those datasets.

        >>> ds = ef.data.Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6]])
        >>> [int(x) for x in ds.flat_map(ef.data.Dataset.from_tensor_slices)]
        [1, 2, 3, 4, 5, 6]

        Args:
          map_func: A function of the element (one argument per member of a tuple
            element) returning a Dataset.
          name: Unused.

        Returns:
          A Dataset of unknown cardinality.
        """
        call, out = self._dataset_fn(map_func, "flat_map")
        return self._derive(self._raw.flat_map(call), out)

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        """Maps each element to a dataset and interleaves them in tf.data's order.

        cycle_length datasets are open at once; block_length consecutive elements
        come from each in turn; a dataset that ends is replaced by the next input
        element's when the cycle comes back to its place.

        >>> ds = ef.data.Dataset.range(1, 6).interleave(
        ...     lambda x: ef.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
        >>> [int(x) for x in ds]
        [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]

        Args:
          map_func: A function of the element returning a Dataset.
          cycle_length: None or AUTOTUNE (the number of threads), or a positive int.
          block_length: None (1) or a positive int.
          num_parallel_calls: Accepted for tf.data's signature (None, AUTOTUNE or a
            positive int); the datasets are read one at a time, in the deterministic
            order, which is also a valid order for deterministic=False.
          deterministic: Accepted for tf.data's signature.
          name: Unused.

        Returns:
          A Dataset of unknown cardinality.

        Raises:
          InvalidArgumentError: cycle_length or block_length < 1 (other than AUTOTUNE).
        """
        if num_parallel_calls is not None and num_parallel_calls != AUTOTUNE and \
                _nest.count(num_parallel_calls, "interleave: num_parallel_calls") < 1:
            raise errors.InvalidArgumentError(
                f"interleave: num_parallel_calls must be at least 1 or AUTOTUNE, got {num_parallel_calls}")
        call, out = self._dataset_fn(map_func, "interleave")
        cycle = AUTOTUNE if cycle_length is None else _nest.count(cycle_length, "interleave: cycle_length")
        block = 1 if block_length is None else _nest.count(block_length, "interleave: block_length")
        return self._derive(self._raw.interleave(call, cycle, block), out)

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds one pass into a value: state = reduce_func(state, element) for every element.

        >>> ds = ef.data.Dataset.range(5)
        >>> int(ds.reduce(np.int64(0), lambda x, _: x + 1)), int(ds.reduce(np.int64(0), lambda x, y: x + y))
        (5, 10)

        reduce_func runs eagerly, unrecorded by gradient tapes (pipeline work, as
        tf.data's reduce has no gradient), and receives the element as one argument.

        Args:
          initial_state: A tensor-like, or a nested tuple or dict of them.
          reduce_func: A function of (state, element) returning the new state, with
            initial_state's structure and dtypes (shapes may change).
          name: Unused.

        Returns:
          The final state, in initial_state's structure (of tensors).

        Raises:
          TypeError: the new state has another structure.
          InvalidArgumentError: the new state has other dtypes.
        """
        leaves = []
        state_spec = _nest.flatten(initial_state, leaves)
        source = self._structure

        def call(state, element):
            new_state = reduce_func(_nest.packed(state_spec, state), _nest.packed(source.spec, element))
            new_leaves = []
            new_spec = _nest.flatten(new_state, new_leaves)
            if new_spec != state_spec:
                raise TypeError(f"reduce: reduce_func returned a state of structure {new_spec}; the initial state "
                                f"has {state_spec}")
            return new_leaves

        return _nest.packed(state_spec, self._raw.reduce(leaves, call))

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
        """Returns a generator of the elements as NumPy arrays (in the elements' structure).

        >>> list(ef.data.Dataset.from_tensor_slices([1, 2]).as_numpy_iterator())
        [array(1, dtype=int32), array(2, dtype=int32)]
        """
        spec = None
        for flat in iter(self._raw.make_iterator().next, None):
            spec = spec or self._structure.spec
            yield _nest.packed(spec, tuple(t.numpy() for t in flat))


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
