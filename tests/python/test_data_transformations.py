"""ef.data transformations beyond the basics: filter, skip, shard, enumerate, concatenate,
zip, from_tensors, unbatch, padded_batch, cache, flat_map, interleave, from_generator,
reduce; against hand-computed lists and the outputs tf.data's documentation prints."""
import collections
import gc
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import eagerflow as ef

Dataset = ef.data.Dataset


def py(value):
    """A nested element as Python values (tensors become lists or numbers)."""
    if isinstance(value, tuple):
        return type(value)(*map(py, value)) if hasattr(value, "_fields") else tuple(py(v) for v in value)
    if isinstance(value, dict):
        return {k: py(v) for k, v in value.items()}
    return value.numpy().tolist()


def values(ds):
    return [py(e) for e in ds]


# ---- filter, skip, shard ----

def test_filter_documentation_examples():
    ds = Dataset.from_tensor_slices([1, 2, 3]).filter(lambda x: x < 3)
    assert values(ds) == [1, 2]
    assert values(ds.filter(lambda x: ef.equal(x, 1))) == [1]
    assert ds.cardinality() == ef.data.UNKNOWN_CARDINALITY


def test_filter_unpacks_tuples_and_accepts_python_bools():
    pairs = Dataset.from_tensor_slices((np.arange(6), np.arange(6) * 10))
    assert values(pairs.filter(lambda x, y: int(y) % 20 == 0)) == [(0, 0), (2, 20), (4, 40)]
    assert values(Dataset.range(4).filter(lambda x: True)) == [0, 1, 2, 3]
    assert values(Dataset.range(4).filter(lambda x: np.bool_(int(x) > 2))) == [3]


def test_filter_errors():
    with pytest.raises(ef.errors.InvalidArgumentError, match="filter.*scalar bool"):
        values(Dataset.range(3).filter(lambda x: x))
    with pytest.raises(ZeroDivisionError):
        values(Dataset.range(3).filter(lambda x: 1 / 0))


def test_skip_and_shard_documentation_examples():
    assert values(Dataset.range(10).skip(7)) == [7, 8, 9]
    assert values(Dataset.range(10).shard(num_shards=3, index=0)) == [0, 3, 6, 9]
    assert values(Dataset.range(10).shard(num_shards=3, index=1)) == [1, 4, 7]
    assert values(Dataset.range(10).shard(num_shards=3, index=2)) == [2, 5, 8]
    assert Dataset.range(10).skip(7).cardinality() == 3 and Dataset.range(10).skip(-1).cardinality() == 0
    assert [len(Dataset.range(10).shard(3, i)) for i in range(3)] == [4, 3, 3]
    assert values(Dataset.range(5).skip(np.int64(3))) == [3, 4]


def test_skip_and_shard_errors():
    with pytest.raises(ef.errors.InvalidArgumentError, match="skip.*count.*-2"):
        Dataset.range(3).skip(-2)
    with pytest.raises(ef.errors.InvalidArgumentError, match="shard.*num_shards"):
        Dataset.range(3).shard(0, 0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="shard.*index"):
        Dataset.range(3).shard(2, 5)
    with pytest.raises(TypeError, match="skip"):
        Dataset.range(3).skip(1.5)


# ---- enumerate, concatenate, zip, from_tensors ----

def test_enumerate_documentation_examples():
    ds = Dataset.from_tensor_slices([1, 2, 3]).enumerate(start=5)
    assert values(ds) == [(5, 1), (6, 2), (7, 3)]
    nested = Dataset.from_tensor_slices([(7, 8), (9, 10)]).enumerate()
    assert values(nested) == [(0, [7, 8]), (1, [9, 10])]
    i, x = next(iter(nested))
    assert i.dtype == ef.int64
    # The element keeps its structure inside the pair; map receives (index, element).
    pairs = Dataset.from_tensor_slices((np.arange(3), np.arange(3) * 2)).enumerate()
    assert values(pairs) == [(0, (0, 0)), (1, (1, 2)), (2, (2, 4))]
    assert values(pairs.map(lambda i, xy: i + xy[1])) == [0, 3, 6]


def test_concatenate_documentation_example_and_errors():
    a, b = Dataset.range(1, 4), Dataset.range(4, 8)
    assert values(a.concatenate(b)) == [1, 2, 3, 4, 5, 6, 7]
    assert len(a.concatenate(b)) == 7
    c = Dataset.zip((a, b))
    with pytest.raises(TypeError, match="incompatible"):
        a.concatenate(c)
    with pytest.raises(ef.errors.InvalidArgumentError, match="concatenate.*float32.*int64"):
        values(a.concatenate(Dataset.from_tensor_slices([1.0, 2.0])))
    assert values(c.concatenate(c)) == [(1, 4), (2, 5), (3, 6)] * 2


def test_zip_documentation_examples():
    a, b = Dataset.range(1, 4), Dataset.range(4, 7)
    assert values(Dataset.zip(a, b)) == [(1, 4), (2, 5), (3, 6)]
    assert values(Dataset.zip(b, a)) == [(4, 1), (5, 2), (6, 3)]
    c = Dataset.range(7, 13).batch(2)
    d = Dataset.range(13, 15)
    assert values(Dataset.zip(a, b, c)) == [(1, 4, [7, 8]), (2, 5, [9, 10]), (3, 6, [11, 12])]
    assert values(Dataset.zip(a, d)) == [(1, 13), (2, 14)]
    assert values(Dataset.zip((a, b))) == values(Dataset.zip(datasets=(a, b)))
    # Nested structures of datasets, and datasets of tuples.
    nested = Dataset.zip((a, (b, Dataset.zip(a, d))))
    assert values(nested) == [(1, (4, (1, 13))), (2, (5, (2, 14)))]
    assert values(Dataset.zip({"x": a, "y": b}).take(1)) == [{"x": 1, "y": 4}]
    assert Dataset.zip(a, d).cardinality() == 2


def test_zip_errors():
    a = Dataset.range(3)
    with pytest.raises(TypeError, match="at least one"):
        Dataset.zip()
    with pytest.raises(TypeError, match="tuple, not a list"):
        Dataset.zip([a, a])
    with pytest.raises(TypeError, match="not both"):
        Dataset.zip(a, datasets=(a, a))
    with pytest.raises(TypeError, match="int"):
        Dataset.zip((a, 3))


def test_zip_of_mapped_datasets_learns_their_structure():
    a = Dataset.range(3).map(lambda x: (x, x * 2))
    z = Dataset.zip(a, Dataset.range(3))
    assert values(z) == [((0, 0), 0), ((1, 2), 1), ((2, 4), 2)]


def test_from_tensors_and_nested_structures():
    assert values(Dataset.from_tensors([1, 2, 3])) == [[1, 2, 3]]
    ds = Dataset.from_tensors({"b": np.zeros(2), "a": (1, np.array([5, 6]))})
    assert len(ds) == 1
    assert values(ds) == [{"a": (1, [5, 6]), "b": [0.0, 0.0]}]
    slices = Dataset.from_tensor_slices({"x": np.arange(2), "y": np.arange(2) * 3})
    assert values(slices) == [{"x": 0, "y": 0}, {"x": 1, "y": 3}]
    assert values(slices.map(lambda e: e["x"] + e["y"])) == [0, 4]  # a dict is one argument
    Point = collections.namedtuple("Point", "x y")
    pts = Dataset.from_tensor_slices(Point(np.arange(2), np.arange(2) + 10))
    first = next(iter(pts))
    assert isinstance(first, Point) and py(first) == Point(0, 10)
    assert values(pts.batch(2)) == [Point([0, 1], [10, 11])]
    assert list(pts.as_numpy_iterator())[1].y == 11
    with pytest.raises(ef.errors.InvalidArgumentError, match="from_tensors"):
        Dataset.from_tensors(())


# ---- unbatch, padded_batch ----

def test_unbatch():
    assert values(Dataset.range(7).batch(3).unbatch()) == list(range(7))
    pairs = Dataset.from_tensor_slices((np.arange(4), np.arange(8).reshape(4, 2))).batch(3).unbatch()
    assert values(pairs) == [(0, [0, 1]), (1, [2, 3]), (2, [4, 5]), (3, [6, 7])]
    assert pairs.cardinality() == ef.data.UNKNOWN_CARDINALITY
    with pytest.raises(ef.errors.InvalidArgumentError, match="unbatch.*scalar"):
        values(Dataset.range(3).unbatch())


def test_unbatch_of_generator_documentation_example():
    elements = [[1, 2, 3], [1, 2], [1, 2, 3, 4]]
    ds = Dataset.from_generator(lambda: elements, ef.int64).unbatch()
    assert values(ds) == [1, 2, 3, 1, 2, 1, 2, 3, 4]


def test_padded_batch_documentation_examples():
    a = Dataset.range(1, 5).map(lambda x: ef.fill([x], ef.cast(x, ef.int32)))
    assert values(a.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert values(a.padded_batch(2, padded_shapes=5)) == [
        [[1, 0, 0, 0, 0], [2, 2, 0, 0, 0]], [[3, 3, 3, 0, 0], [4, 4, 4, 4, 0]]]
    assert values(a.padded_batch(2, padded_shapes=5, padding_values=-1)) == [
        [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]], [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]]]
    elements = [([1, 2, 3], [10]), ([4, 5], [11, 12])]
    gen = Dataset.from_generator(lambda: iter(elements), (ef.int32, ef.int32))
    got = values(gen.padded_batch(2, padded_shapes=([4], [None]), padding_values=(-1, 100)))
    assert got == [([[1, 2, 3, -1], [4, 5, -1, -1]], [[10, 100], [11, 12]])]
    e = Dataset.zip((a, a)).padded_batch(2, padding_values=-1)
    assert values(e) == [([[1, -1], [2, 2]], [[1, -1], [2, 2]]),
                         ([[3, 3, 3, -1], [4, 4, 4, 4]], [[3, 3, 3, -1], [4, 4, 4, 4]])]
    batch = next(iter(a.padded_batch(2)))
    assert batch.dtype == ef.int32 and batch.shape == (2, 2)


def test_padded_batch_shapes_follow_the_structure():
    ds = Dataset.from_tensor_slices((np.arange(3), np.arange(3) * 2)).map(
        lambda x, y: (ef.fill([x + 1], 1.0), {"n": ef.fill([y, 2], y)}))
    next(iter(ds))  # the map has run: its structure is known
    got = values(ds.padded_batch(3, padded_shapes=([None], {"n": [-1, 3]}), padding_values=(0.5, {"n": 7})))
    assert got[0][0] == [[1.0, 0.5, 0.5], [1.0, 1.0, 0.5], [1.0, 1.0, 1.0]]
    assert np.array(got[0][1]["n"]).shape == (3, 4, 3)
    assert got[0][1]["n"][1] == [[2, 2, 7], [2, 2, 7], [7, 7, 7], [7, 7, 7]]
    # Before the map has run, the shapes are read by their own form.
    fresh = Dataset.range(3).map(lambda x: (ef.fill([x], x), x))
    assert values(fresh.padded_batch(3, padded_shapes=((None,), ()))) == [([[0, 0], [1, 0], [2, 2]], [0, 1, 2])]
    assert Dataset.range(5).padded_batch(2, drop_remainder=True).cardinality() == 2


def test_padded_batch_errors():
    a = Dataset.range(1, 5).map(lambda x: ef.fill([x], x))
    with pytest.raises(ef.errors.InvalidArgumentError, match="padded_batch.*batch_size"):
        a.padded_batch(0)
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"padded_batch.*\[4\].*padded_shapes\[0\] = \[3\]"):
        values(a.padded_batch(2, padded_shapes=[3]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="padded_batch.*scalar"):
        a.padded_batch(2, padding_values=np.array([1, 2]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="padded_batch.*float32.*int64"):
        values(a.padded_batch(2, padding_values=np.float32(1.5)))
    with pytest.raises(ValueError, match="padded_shapes.*None"):
        Dataset.zip((a, a)).padded_batch(2, padded_shapes=([None], None))
    pairs = Dataset.zip((Dataset.range(3), Dataset.range(3)))
    with pytest.raises(TypeError, match="padded_shapes does not match"):
        pairs.padded_batch(2, padded_shapes=([], [], []))


# ---- cache ----

def test_cache_documentation_example_and_single_computation():
    calls = []

    def square(x):
        calls.append(int(x))
        return x * x

    ds = Dataset.range(5).map(square).cache()
    assert values(ds) == [0, 1, 4, 9, 16]
    assert values(ds) == [0, 1, 4, 9, 16]
    assert calls == [0, 1, 2, 3, 4]
    assert len(ds) == 5


def test_cache_partial_pass_leaves_no_cache():
    calls = []
    ds = Dataset.range(4).map(lambda x: calls.append(1) or x).cache()
    assert values(ds.take(2)) == [0, 1]
    for i, _ in enumerate(ds):
        if i == 1:
            break
    assert values(ds) == [0, 1, 2, 3]
    made = len(calls)
    assert values(ds.repeat(2)) == [0, 1, 2, 3] * 2
    assert len(calls) == made
    with pytest.raises(ef.errors.UnimplementedError, match="filename"):
        Dataset.range(3).cache("/tmp/cache")


def test_cache_then_shuffle_reshuffles_but_shuffle_then_cache_does_not():
    once = Dataset.range(20).shuffle(20, seed=1).cache()
    assert values(once) == values(once)
    each = Dataset.range(20).cache().shuffle(20, seed=1)
    assert values(each) != values(each)


# ---- flat_map, interleave ----

def test_flat_map_documentation_example():
    ds = Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).flat_map(Dataset.from_tensor_slices)
    assert values(ds) == list(range(1, 10))
    assert ds.cardinality() == ef.data.UNKNOWN_CARDINALITY


def test_flat_map_structures_and_errors():
    pairs = Dataset.range(3).flat_map(lambda x: Dataset.from_tensors((x, x * 10)).repeat(x))
    assert values(pairs) == [(1, 10), (2, 20), (2, 20)]
    mapped = Dataset.range(3).flat_map(lambda x: Dataset.range(2).map(lambda y: {"v": x + y}))
    assert values(mapped) == [{"v": 0}, {"v": 1}, {"v": 1}, {"v": 2}, {"v": 2}, {"v": 3}]
    with pytest.raises(TypeError, match="flat_map: map_func must return a Dataset"):
        values(Dataset.range(2).flat_map(lambda x: x))


def test_interleave_documentation_example():
    ds = Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert values(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]


def test_interleave_orders_and_arguments():
    tens = lambda x: Dataset.range(10 * int(x), 11 * int(x) + 1)  # noqa: E731
    assert values(Dataset.range(5).interleave(tens, cycle_length=3, block_length=2)) == \
        [0, 10, 11, 20, 21, 30, 31, 22, 32, 33, 40, 41, 42, 43, 44]
    assert values(Dataset.range(3).interleave(tens, cycle_length=8)) == [0, 10, 20, 11, 21, 22]
    assert sorted(values(Dataset.range(3).interleave(tens))) == [0, 10, 11, 20, 21, 22]
    same = Dataset.range(3).interleave(tens, cycle_length=2, num_parallel_calls=ef.data.AUTOTUNE, deterministic=False)
    assert values(same) == values(Dataset.range(3).interleave(tens, cycle_length=2))
    with pytest.raises(ef.errors.InvalidArgumentError, match="interleave.*cycle_length"):
        Dataset.range(3).interleave(tens, cycle_length=0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="interleave.*block_length"):
        Dataset.range(3).interleave(tens, cycle_length=2, block_length=0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="num_parallel_calls"):
        Dataset.range(3).interleave(tens, num_parallel_calls=0)


def test_interleave_under_prefetch_and_parallel_map():
    ds = (Dataset.range(6).map(lambda x: x * 2, num_parallel_calls=3)
          .interleave(lambda x: Dataset.from_tensors(x).repeat(2), cycle_length=2).prefetch(2))
    assert values(ds) == [0, 2, 0, 2, 4, 6, 4, 6, 8, 10, 8, 10]


# ---- from_generator ----

def test_from_generator_documentation_example():
    import itertools

    def gen():
        for i in itertools.count(1):
            yield (i, [1] * i)

    ds = Dataset.from_generator(gen, output_signature=(ef.TensorSpec(shape=(), dtype=ef.int32),
                                                        ef.TensorSpec(shape=(None,), dtype=ef.int32)))
    assert values(ds.take(3)) == [(1, [1]), (2, [1, 1]), (3, [1, 1, 1])]
    assert ds.cardinality() == ef.data.UNKNOWN_CARDINALITY
    x = next(iter(ds))[1]
    assert x.dtype == ef.int32


def test_from_generator_each_pass_restarts_and_args_are_numpy():
    seen = []

    def gen(n, scale):
        seen.append((type(n), type(scale)))
        for i in range(int(n)):
            yield {"i": i, "v": i * scale}

    ds = Dataset.from_generator(gen, args=(3, 0.5), output_signature={
        "i": ef.TensorSpec(shape=(), dtype=ef.int64), "v": ef.TensorSpec(shape=(), dtype=ef.float32)})
    assert values(ds) == [{"i": 0, "v": 0.0}, {"i": 1, "v": 0.5}, {"i": 2, "v": 1.0}]
    assert values(ds.batch(2)) == [{"i": [0, 1], "v": [0.0, 0.5]}, {"i": [2], "v": [1.0]}]
    assert seen == [(np.ndarray, np.ndarray)] * 2
    assert next(iter(ds))["i"].dtype == ef.int64


def test_from_generator_errors():
    with pytest.raises(TypeError, match="callable"):
        Dataset.from_generator([1, 2], output_signature=ef.TensorSpec(shape=(), dtype=ef.int32))
    with pytest.raises(TypeError, match="output_signature"):
        Dataset.from_generator(lambda: iter([]))
    sig = ef.TensorSpec(shape=(2,), dtype=ef.int32)
    with pytest.raises(TypeError, match=r"shape \(3,\).*\(2,\)"):
        values(Dataset.from_generator(lambda: iter([[1, 2], [1, 2, 3]]), output_signature=sig))
    with pytest.raises(TypeError, match="structure"):
        values(Dataset.from_generator(lambda: iter([(1, 2)]), output_signature=(sig, sig, sig)))
    with pytest.raises(TypeError, match="does not convert"):
        values(Dataset.from_generator(lambda: iter([["a", "b"]]), output_signature=sig))
    with pytest.raises(RuntimeError, match="generator failed"):
        def bad():
            yield [1, 2]
            raise RuntimeError("generator failed")
        values(Dataset.from_generator(bad, output_signature=sig))


@pytest.mark.parametrize("calls", [None, 3])
def test_from_generator_under_prefetch_runs_on_the_prefetch_thread(calls):
    # The consumer releases the GIL while it waits, so the prefetch thread can run the
    # generator (Note [datasets and the GIL]): no deadlock, elements in order.
    threads = set()

    def gen():
        for i in range(50):
            threads.add(threading.get_ident())
            yield i

    ds = (Dataset.from_generator(gen, output_signature=ef.TensorSpec(shape=(), dtype=ef.int64))
          .map(lambda x: x + 1, num_parallel_calls=calls).prefetch(4))
    assert values(ds) == list(range(1, 51))
    assert threads and threading.get_ident() not in threads


def test_from_generator_abandoned_under_prefetch_stops_and_closes():
    state = {"made": 0, "closed": 0}

    def gen():
        try:
            while True:
                state["made"] += 1
                yield state["made"]
        finally:
            state["closed"] += 1

    ds = Dataset.from_generator(gen, output_signature=ef.TensorSpec(shape=(), dtype=ef.int64)).prefetch(3)
    it = iter(ds)
    assert int(next(it)) == 1
    del it
    gc.collect()
    made = state["made"]
    time.sleep(0.02)
    assert state["made"] == made and state["closed"] == 1


FIT_ON_PYTHON_PIPELINE_THREADS = """
import numpy as np
import eagerflow as ef

x = np.random.rand(64, 4).astype(np.float32)
y = (x.sum(1) > 2).astype(np.int64)


def gen():
    for i in range(4):
        yield x[16 * i:16 * i + 16], y[16 * i:16 * i + 16]


signature = (ef.TensorSpec((None, 4), ef.float32), ef.TensorSpec((None,), ef.int64))
model = ef.keras.Sequential([ef.keras.layers.Dense(2)])
model.compile(optimizer="sgd", loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
for ds in [ef.data.Dataset.from_generator(gen, output_signature=signature).prefetch(2),
           ef.data.Dataset.from_tensor_slices((x, y)).batch(16).map(lambda a, b: (a * 2.0, b), num_parallel_calls=3)]:
    model.fit(ds, epochs=2, verbose=0)
    model.evaluate(ds, verbose=0)
print("trained")
"""


def test_model_fit_of_a_pipeline_running_python_on_its_threads():
    # Model.fit iterates in C++ holding the GIL; the wait hooks the bindings install release
    # it while fit waits for the pipeline's threads, which run the generator and the map
    # (Note [waiting on pipeline threads]). Run apart, so a regression fails by timeout
    # instead of hanging the test run.
    result = subprocess.run([sys.executable, "-c", FIT_ON_PYTHON_PIPELINE_THREADS], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "trained" in result.stdout


def test_from_generator_iterating_another_dataset():
    inner = Dataset.range(3).map(lambda x: x * 2, num_parallel_calls=2).prefetch(1)

    def gen():
        for x in inner:
            yield int(x) + 1

    ds = Dataset.from_generator(gen, output_signature=ef.TensorSpec(shape=(), dtype=ef.int64)).prefetch(2)
    assert values(ds) == [1, 3, 5]


# ---- reduce ----

def test_reduce_documentation_examples():
    assert int(Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1)) == 5
    assert int(Dataset.range(5).reduce(np.int64(0), lambda x, y: x + y)) == 10


def test_reduce_structures():
    pairs = Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 10))
    total, count = pairs.reduce((np.int64(0), np.int64(0)), lambda s, xy: (s[0] + xy[1], s[1] + 1))
    assert int(total) == 60 and int(count) == 4
    state = Dataset.range(3).reduce({"sum": np.int64(0), "seen": np.zeros(0, np.int64)},
                                    lambda s, x: {"sum": s["sum"] + x, "seen": ef.concat([s["seen"], [x]], 0)})
    assert int(state["sum"]) == 3 and state["seen"].numpy().tolist() == [0, 1, 2]
    assert int(Dataset.range(0).reduce(np.int64(7), lambda s, x: s + x)) == 7
    # Python map stages under prefetch: reduce releases the GIL while it iterates.
    ds = Dataset.range(20).map(lambda x: x * 2, num_parallel_calls=3).prefetch(2)
    assert int(ds.reduce(np.int64(0), lambda s, x: s + x)) == 380


def test_reduce_errors_and_no_gradient():
    with pytest.raises(TypeError, match="reduce.*structure"):
        Dataset.range(3).reduce(np.int64(0), lambda s, x: (s, x))
    with pytest.raises(ef.errors.InvalidArgumentError, match="reduce.*dtype"):
        Dataset.range(3).reduce(np.int64(0), lambda s, x: ef.cast(s, ef.float32))
    w = ef.Variable(2.0)
    with ef.GradientTape() as tape:
        out = Dataset.from_tensor_slices([1.0, 2.0]).reduce(0.0, lambda s, x: s + x * w)
    assert float(out) == 6.0
    assert tape.gradient(out, w) is None
