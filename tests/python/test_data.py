"""ef.data and ef.datasets: the tf.data-style pipeline from Python, IDX files, Fashion-MNIST."""
import gc
import gzip
import os
import struct
import threading
import time

import numpy as np
import pytest

import eagerflow as ef

Dataset = ef.data.Dataset


def values(ds):
    """Every element of one pass, as Python values (tuples for tuple elements)."""
    out = []
    for e in ds:
        out.append(tuple(t.numpy().tolist() for t in e) if isinstance(e, tuple) else e.numpy().tolist())
    return out


def test_from_tensor_slices_single_and_tuple():
    assert values(Dataset.from_tensor_slices(np.arange(3))) == [0, 1, 2]
    assert values(Dataset.from_tensor_slices([[1, 2], [3, 4]])) == [[1, 2], [3, 4]]  # a list is one tensor
    pairs = Dataset.from_tensor_slices((ef.constant([[1.0, 2.0], [3.0, 4.0]]), np.array([7, 8])))
    assert values(pairs) == [([1.0, 2.0], 7), ([3.0, 4.0], 8)]
    x, y = next(iter(pairs))
    assert isinstance(x, ef.Tensor) and x.dtype == ef.float32 and y.dtype == ef.int64
    assert len(pairs) == 2 and pairs.cardinality() == 2


def test_from_tensor_slices_errors():
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"first dimension.*\[3\], \[2\]"):
        Dataset.from_tensor_slices((np.zeros(3), np.zeros(2)))
    with pytest.raises(ef.errors.InvalidArgumentError, match="scalar"):
        Dataset.from_tensor_slices(1.0)


def test_argument_errors():
    ds = Dataset.from_tensor_slices(np.arange(4))
    with pytest.raises(ef.errors.InvalidArgumentError, match="batch_size"):
        ds.batch(0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="buffer_size"):
        ds.shuffle(0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="num_parallel_calls"):
        ds.map(lambda x: x, num_parallel_calls=0)


def test_shuffle_seeded_and_reshuffled_each_pass():
    ds = Dataset.from_tensor_slices(np.arange(50)).shuffle(50, seed=3)
    p0, p1 = values(ds), values(ds)
    assert sorted(p0) == list(range(50)) and p0 != list(range(50)) and p0 != p1
    again = Dataset.from_tensor_slices(np.arange(50)).shuffle(50, seed=3)
    assert values(again) == p0 and values(again) == p1
    fixed = Dataset.from_tensor_slices(np.arange(50)).shuffle(50, seed=3, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)
    assert values(Dataset.from_tensor_slices(np.arange(50)).shuffle(50, seed=4)) != p0  # another seed


def test_batch_repeat_take():
    ds = Dataset.from_tensor_slices(np.arange(5))
    assert values(ds.batch(2)) == [[0, 1], [2, 3], [4]]
    assert values(ds.batch(2, drop_remainder=True)) == [[0, 1], [2, 3]]
    assert ds.batch(2).cardinality() == 3 and ds.batch(2, drop_remainder=True).cardinality() == 2
    assert values(ds.repeat(2).take(7)) == [0, 1, 2, 3, 4, 0, 1]
    assert values(ds.take(2).repeat(2)) == [0, 1, 0, 1]
    assert ds.repeat().cardinality() == ef.data.INFINITE_CARDINALITY
    with pytest.raises(TypeError, match="infinite"):
        len(ds.repeat())
    assert values(ds.repeat().batch(3).take(2)) == [[0, 1, 2], [3, 4, 0]]


def test_shuffle_after_repeat_keeps_every_element():
    # The repeat's last pass ends with row numbers still in the shuffle buffer.
    assert sorted(values(Dataset.range(10).repeat(2).shuffle(10, seed=3))) == sorted(list(range(10)) * 2)
    batches = values(Dataset.range(10).take(5).repeat(2).shuffle(10, seed=3).batch(3))
    assert sorted(v for batch in batches for v in batch) == sorted(list(range(5)) * 2)


def test_map_structure_and_order():
    ds = Dataset.from_tensor_slices((np.arange(6), np.arange(6) * 10))
    summed = ds.map(lambda a, b: a + b)  # components as arguments; one tensor out
    assert values(summed) == [0, 11, 22, 33, 44, 55]
    swapped = ds.map(lambda a, b: (b, a), num_parallel_calls=3)
    assert values(swapped) == [(10 * i, i) for i in range(6)]
    as_numpy = Dataset.from_tensor_slices(np.arange(3)).map(lambda x: np.float64(x.numpy()) * 2)
    assert values(as_numpy) == [0.0, 2.0, 4.0]


def test_parallel_map_runs_python_on_threads_in_order():
    threads = set()

    def slow(x):
        threads.add(threading.get_ident())
        time.sleep(0.001 * (8 - int(x) % 8))
        return x * x

    ds = Dataset.from_tensor_slices(np.arange(32)).map(slow, num_parallel_calls=4).prefetch(2)
    assert values(ds) == [i * i for i in range(32)]
    assert threading.get_ident() not in threads and len(threads) > 1


def test_map_exceptions_reach_the_consumer():
    def boom(x):
        if int(x) == 3:
            raise ValueError("bad element 3")
        return x

    for calls in (None, 2):
        it = iter(Dataset.from_tensor_slices(np.arange(10)).map(boom, num_parallel_calls=calls).prefetch(4))
        assert [int(next(it)) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(ValueError, match="bad element 3"):
            next(it)


def test_prefetch_abandoned_early_stops_cleanly():
    calls = []
    ds = Dataset.from_tensor_slices(np.arange(10)).map(lambda x: calls.append(1) or x, num_parallel_calls=2)
    for _ in range(10):
        it = iter(ds.repeat().prefetch(3))
        next(it)
        del it  # joins the producer, which may be waiting for the GIL
    for i, _ in enumerate(ds.repeat().prefetch(2)):
        if i == 5:
            break
    made = len(calls)
    time.sleep(0.02)
    assert len(calls) == made  # no thread is still calling the function


@pytest.mark.parametrize("calls", [None, 3])
def test_garbage_collector_drops_a_pass_on_its_own_thread(calls):
    # An abandoned pass caught in a reference cycle is collected by whichever thread runs
    # the collector, here the pass's own producer (or map worker): it must not join itself.
    state = {"collect": False, "calls": 0}

    def fn(x):
        state["calls"] += 1
        if state["collect"]:
            state["collect"] = False
            gc.collect()
        return x

    it = iter(Dataset.from_tensor_slices(np.arange(10)).repeat().map(fn, num_parallel_calls=calls).prefetch(100000))
    next(it)
    cycle = [it]
    cycle.append(cycle)
    del it, cycle
    state["collect"] = True
    deadline = time.time() + 10
    while state["collect"] and time.time() < deadline:
        time.sleep(0.001)
    assert not state["collect"]
    time.sleep(0.05)
    made = state["calls"]
    time.sleep(0.05)
    assert state["calls"] == made  # the pass was destroyed: nothing calls fn any more


def test_iterator_get_next_and_end():
    it = iter(Dataset.from_tensor_slices(np.arange(2)))
    assert int(it.get_next()) == 0 and int(it.get_next()) == 1
    with pytest.raises(ef.errors.OutOfRangeError):
        it.get_next()


def test_as_numpy_iterator():
    got = list(Dataset.from_tensor_slices((np.arange(4.0), np.arange(4))).batch(2).as_numpy_iterator())
    assert len(got) == 2
    np.testing.assert_array_equal(got[1][0], [2.0, 3.0])
    assert got[1][1].dtype == np.int64


def test_epoch_of_fashion_mnist_sized_batches_is_fast():
    images, labels = np.zeros((60000, 28, 28), np.float32), np.zeros(60000, np.int64)
    ds = Dataset.from_tensor_slices((images, labels)).shuffle(60000, seed=1).batch(32)
    start = time.perf_counter()
    n = sum(1 for _ in ds)
    assert n == 1875
    assert time.perf_counter() - start < 1.0  # ~50 ms here; generous for a loaded machine


# ---- IDX ----

def idx_bytes(type_code, fmt, dims, items):
    return struct.pack(">BBBB", 0, 0, type_code, len(dims)) + struct.pack(">%dI" % len(dims), *dims) + \
        struct.pack(">%d%s" % (len(items), fmt), *items)


@pytest.mark.parametrize("compress", [False, True])
def test_read_idx_round_trip(tmp_path, compress):
    def write(name, data):
        path = tmp_path / (name + (".gz" if compress else ""))
        path.write_bytes(gzip.compress(data) if compress else data)
        return str(path)

    t = ef.data.read_idx(write("u8", idx_bytes(0x08, "B", [2, 2], [0, 1, 254, 255])))
    assert t.dtype == ef.int32 and t.shape == (2, 2)
    np.testing.assert_array_equal(t.numpy(), [[0, 1], [254, 255]])
    f = ef.data.read_idx(write("f32", idx_bytes(0x0D, "f", [3], [1.5, -2.0, 0.25])))
    assert f.dtype == ef.float32
    np.testing.assert_array_equal(f.numpy(), [1.5, -2.0, 0.25])
    d = ef.data.read_idx(write("f64", idx_bytes(0x0E, "d", [1], [np.pi])))
    assert d.dtype == ef.float64 and d.numpy()[0] == np.pi
    s = ef.data.read_idx(write("i16", idx_bytes(0x0B, "h", [2], [-300, 7])))
    np.testing.assert_array_equal(s.numpy(), [-300, 7])


def test_read_idx_errors(tmp_path):
    with pytest.raises(ef.errors.NotFoundError, match="missing"):
        ef.data.read_idx(str(tmp_path / "missing"))
    bad = tmp_path / "bad"
    bad.write_bytes(b"\x01\x00\x08\x01\x00\x00\x00\x01\x05")
    with pytest.raises(ef.errors.InvalidArgumentError, match="magic number"):
        ef.data.read_idx(str(bad))
    short = tmp_path / "short.gz"
    short.write_bytes(gzip.compress(idx_bytes(0x08, "B", [4], [1, 2, 3, 4])[:-1]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="truncated"):
        ef.data.read_idx(str(short))


# ---- Fashion-MNIST ----

INSTALLED = any(os.path.exists(os.path.join(ef.data.datasets.fashion_mnist_directory(), "train-images-idx3-ubyte" + ext))
                for ext in (".gz", ""))
needs_fashion_mnist = pytest.mark.skipif(
    not INSTALLED, reason="Fashion-MNIST is not installed (sudo apt-get install dataset-fashion-mnist)")


def test_fashion_mnist_missing_says_how_to_install(tmp_path):
    with pytest.raises(ef.errors.NotFoundError, match="sudo apt-get install dataset-fashion-mnist"):
        ef.datasets.fashion_mnist.load_data(str(tmp_path))
    with pytest.raises(ef.errors.NotFoundError, match=str(tmp_path)):
        ef.data.datasets.fashion_mnist(str(tmp_path))


@needs_fashion_mnist
def test_fashion_mnist_load_data_matches_keras_layout():
    (x_train, y_train), (x_test, y_test) = ef.datasets.fashion_mnist.load_data()
    assert x_train.shape == (60000, 28, 28) and x_train.dtype == np.uint8
    assert y_train.shape == (60000,) and y_train.dtype == np.uint8
    assert x_test.shape == (10000, 28, 28) and y_test.shape == (10000,)
    assert y_train.min() == 0 and y_train.max() == 9
    np.testing.assert_array_equal(np.bincount(y_train), [6000] * 10)
    np.testing.assert_array_equal(y_train[:10], [9, 0, 0, 3, 0, 2, 7, 2, 5, 5])  # as in Keras


@needs_fashion_mnist
def test_fashion_mnist_as_tensors():
    train, test = ef.data.datasets.fashion_mnist()
    assert train.images.shape == (60000, 28, 28) and train.images.dtype == ef.float32
    assert train.labels.dtype == ef.int64 and test.labels.shape == (10000,)
    assert float(ef.reduce_max(train.images)) == 1.0 and float(ef.reduce_min(train.images)) == 0.0
    (_, _), (x_test, y_test) = ef.datasets.fashion_mnist.load_data()
    np.testing.assert_allclose(test.images.numpy(), x_test / np.float32(255), rtol=1e-6)
    np.testing.assert_array_equal(test.labels.numpy(), y_test)
