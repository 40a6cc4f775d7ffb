"""ef.Tensor in Python: conversion, NumPy and DLPack exchange, printing, the Python
number protocol, operators, indexing, and errors."""
import gc

import numpy as np
import pytest
import torch

import eagerflow as ef

ALL_DTYPES = [ef.float32, ef.float64, ef.int32, ef.int64, ef.bool, ef.complex64, ef.complex128]
NUMPY_OF = {ef.float32: np.float32, ef.float64: np.float64, ef.int32: np.int32,
            ef.int64: np.int64, ef.bool: np.bool_, ef.complex64: np.complex64, ef.complex128: np.complex128}


# ---- conversion ----

def test_python_values_take_tensorflows_default_dtypes():
    assert ef.constant(1.5).dtype == ef.float32
    assert ef.constant(3).dtype == ef.int32
    assert ef.constant(2**40).dtype == ef.int64
    assert ef.constant(True).dtype == ef.bool
    assert ef.constant([[1.0, 2.0]]).shape == (1, 2)
    assert ef.constant(1.5).shape == ()


def test_numpy_arrays_keep_their_dtype():
    for np_dtype, dtype in [(np.float64, ef.float64), (np.float32, ef.float32),
                            (np.int64, ef.int64), (np.int32, ef.int32), (np.bool_, ef.bool)]:
        t = ef.constant(np.zeros((2, 3), np_dtype))
        assert t.dtype == dtype and t.shape == (2, 3)
    # Non-contiguous arrays are copied in row-major order.
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    np.testing.assert_array_equal(ef.constant(a).numpy(), a)


def test_constant_with_dtype_and_shape():
    t = ef.constant(7, dtype=ef.float64, shape=[2, 2])
    assert t.dtype == ef.float64
    np.testing.assert_array_equal(t.numpy(), np.full((2, 2), 7.0))
    assert ef.constant([1, 2, 3, 4], shape=(2, 2)).shape == (2, 2)
    assert ef.convert_to_tensor([1.0], dtype="float64").dtype == ef.float64
    assert ef.as_dtype(np.float32) == ef.float32 and ef.as_dtype("int64") == ef.int64


def test_every_op_accepts_anything_tensor_like():
    np.testing.assert_array_equal(ef.matmul([[2.0]], [[2.0]]).numpy(), [[4.0]])
    assert ef.add(1.0, 2.0).dtype == ef.float32
    assert ef.reduce_sum(np.ones((2, 2))).numpy() == 4.0
    x = ef.constant([1.0, 2.0], dtype=ef.float64)
    assert (x + 1).dtype == ef.float64  # a Python number takes the tensor's dtype
    assert (2 * x).dtype == ef.float64


def test_unconvertible_values_raise_type_error():
    with pytest.raises(TypeError):
        ef.constant("text")
    with pytest.raises(TypeError):
        ef.constant(np.zeros(2, "datetime64[s]"))


# ---- NumPy and DLPack ----

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_numpy_round_trip_for_every_dtype(dtype):
    values = np.array([[0, 1, 2], [3, 4, 5]]).astype(NUMPY_OF[dtype])
    t = ef.constant(values)
    assert t.dtype == dtype
    out = t.numpy()
    assert out.dtype == values.dtype
    np.testing.assert_array_equal(out, values)
    np.testing.assert_array_equal(np.asarray(t), values)


def test_numpy_shares_memory_and_keeps_the_tensor_alive():
    t = ef.range(0, 1000, dtype=ef.float32)
    a = t.numpy()
    b = np.asarray(t)
    assert np.shares_memory(a, b)
    view = ef.transpose(ef.reshape(t, [10, 100]))  # a strided view: no copy either
    v = view.numpy()
    assert v.strides == (4, 400)
    del t, view
    gc.collect()
    _ = [ef.ones([1000]) for _ in range(100)]  # reuse freed buffers, if any were freed
    np.testing.assert_array_equal(a, np.arange(1000, dtype=np.float32))
    np.testing.assert_array_equal(v[3], np.arange(3, 1000, 100, dtype=np.float32))


def test_numpy_views_are_read_only():
    # A tensor is immutable: a write through its NumPy view would change values that a
    # tape or a graph still holds. np.array(t) is the writable copy.
    x = ef.constant([1.0, 2.0])
    w = ef.Variable([1.0, 2.0])
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    for view in (x.numpy(), np.asarray(x), w.numpy(), y.numpy()):
        assert not view.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            view[0] = 100.0
    copy = np.array(x)
    copy[0] = 100.0
    assert x.numpy().tolist() == [1.0, 2.0]
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 4.0]


@pytest.mark.parametrize("dtype", [ef.float32, ef.float64, ef.int32, ef.int64], ids=lambda d: d.name)
def test_dlpack_round_trips_without_copies(dtype):
    t = ef.reshape(ef.range(0, 6, dtype=dtype), [2, 3])
    as_numpy = np.from_dlpack(t)
    as_torch = torch.from_dlpack(t)
    np.testing.assert_array_equal(as_numpy, t.numpy())
    np.testing.assert_array_equal(as_torch.numpy(), t.numpy())
    assert as_numpy.ctypes.data == t.numpy().ctypes.data
    back = ef.from_dlpack(as_torch)
    assert back.dtype == dtype
    assert back.numpy().ctypes.data == t.numpy().ctypes.data
    # Memory from the other side: a strided torch view and a NumPy array.
    source = torch.arange(24, dtype=torch.float64).reshape(4, 6)[1:, ::2]
    imported = ef.from_dlpack(source)
    np.testing.assert_array_equal(imported.numpy(), source.numpy())
    arr = np.arange(5, dtype=np.int64)
    shared = ef.from_dlpack(arr)
    arr[0] = 42
    assert shared.numpy()[0] == 42  # the same memory


def test_dlpack_exports_views_with_their_strides_and_reversed_ones_as_copies():
    base = ef.reshape(ef.range(0, 12, dtype=ef.float32), [3, 4])
    strided = ef.transpose(base)[:, ::2]
    shared = torch.from_dlpack(strided)
    np.testing.assert_array_equal(shared.numpy(), strided.numpy())
    assert shared.data_ptr() == base.numpy().ctypes.data  # no copy
    # A backwards view would crash PyTorch (negative strides): it gets a copy.
    for backwards in (base[::-1], base[:, ::-2], ef.reverse(base, [0, 1])):
        np.testing.assert_array_equal(torch.from_dlpack(backwards).numpy(), backwards.numpy())
        np.testing.assert_array_equal(np.from_dlpack(backwards), backwards.numpy())


def test_dlpack_import_keeps_the_source_alive():
    shared = ef.from_dlpack(torch.arange(1000, dtype=torch.float32))
    gc.collect()
    _ = [torch.ones(1000) for _ in range(100)]
    np.testing.assert_array_equal(shared.numpy(), np.arange(1000, dtype=np.float32))


def test_dlpack_bool():
    t = ef.constant([True, False])
    back = ef.from_dlpack(t)  # our own capsule understands bool
    np.testing.assert_array_equal(back.numpy(), [True, False])


# ---- printing and the Python number protocol ----

def test_repr_and_str_like_tensorflow():
    t = ef.constant([[4.0]])
    assert str(t) == "Tensor([[4.]], shape=(1, 1), dtype=float32)"
    assert repr(t) == "<ef.Tensor: shape=(1, 1), dtype=float32, numpy=array([[4.]], dtype=float32)>"
    assert repr(ef.float32) == "ef.float32" and str(ef.float32) == "<dtype: 'float32'>"


def test_python_number_protocol():
    assert float(ef.constant(2.5)) == 2.5
    assert int(ef.constant(7)) == 7
    assert [10, 20, 30][ef.constant(1)] == 20  # __index__
    assert bool(ef.constant(True)) and not bool(ef.constant(0.0))
    assert len(ef.zeros([4, 2])) == 4
    rows = list(ef.constant([[1, 2], [3, 4]]))
    assert len(rows) == 2 and rows[1].numpy().tolist() == [3, 4]
    with pytest.raises(TypeError):
        len(ef.constant(1.0))
    with pytest.raises(TypeError):
        float(ef.constant([1.0, 2.0]))
    with pytest.raises(TypeError):
        [1][ef.constant(0.0)]
    t = ef.constant([1.0, 2.0])
    assert t.ndim == 1 and t.device == "/job:localhost/replica:0/task:0/device:CPU:0" and t.shape.as_list() == [2]


# ---- operators ----

def test_arithmetic_operators_and_reflections():
    x = ef.constant([1.0, 2.0, 4.0])
    n = x.numpy()
    cases = {
        "add": (x + 2, n + 2), "radd": (2 + x, 2 + n), "sub": (x - 1, n - 1), "rsub": (1 - x, 1 - n),
        "mul": (x * 3, n * 3), "rmul": (3 * x, 3 * n), "div": (x / 2, n / 2), "rdiv": (2 / x, 2 / n),
        "floordiv": (x // 3, n // 3), "rfloordiv": (7 // x, 7 // n), "mod": (x % 3, n % 3),
        "rmod": (7 % x, 7 % n), "pow": (x ** 2, n ** 2), "rpow": (2 ** x, 2 ** n),
        "neg": (-x, -n), "abs": (abs(-x), n), "pos": (+x, n),
        "numpy_left": (np.float32(2) * x, 2 * n),
    }
    for name, (got, expected) in cases.items():
        assert isinstance(got, ef.Tensor), name
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, err_msg=name)


def test_matmul_operator():
    a = ef.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal((a @ a).numpy(), a.numpy() @ a.numpy())
    np.testing.assert_array_equal((np.eye(2, dtype=np.float32) @ a).numpy(), a.numpy())


def test_comparison_and_logical_operators():
    x = ef.constant([1, 2, 3])
    assert (x < 2).numpy().tolist() == [True, False, False]
    assert (x >= 2).numpy().tolist() == [False, True, True]
    assert (x == 2).numpy().tolist() == [False, True, False]
    assert (x != 2).numpy().tolist() == [True, False, True]
    assert (x == None) is False and (x != None) is True  # noqa: E711
    a, b = ef.constant([True, True, False]), ef.constant([True, False, False])
    assert (a & b).numpy().tolist() == [True, False, False]
    assert (a | b).numpy().tolist() == [True, True, False]
    assert (a ^ b).numpy().tolist() == [False, True, False]
    assert (~a).numpy().tolist() == [False, False, True]
    assert (True & b).numpy().tolist() == [True, False, False]
    with pytest.raises(TypeError):
        x & x
    with pytest.raises(TypeError):
        ~x


def test_branching_on_tensor_values():
    a, b = ef.constant([3.0]), ef.constant([2.0])
    steps = 0
    while True:
        steps += 1
        a = a - 1
        if a[0] < b[0]:
            break
    assert steps == 2


# ---- indexing ----

def test_getitem_matches_numpy():
    n = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    t = ef.constant(n)
    keys = [0, -1, (1, 2), (slice(None), 1), (slice(1, None),), (slice(None, None, -1),),
            (Ellipsis, 1), (None, 0), (0, None, slice(None, None, 2)), (slice(None), slice(None, 2), -1),
            (Ellipsis,), (1, Ellipsis, None), (slice(-2, None), slice(None, None, 2), slice(3, 0, -1)),
            (ef.constant(1),), (np.int64(1), 2)]
    for key in keys:
        np.testing.assert_array_equal(t[key].numpy(), n[key], err_msg=repr(key))


def test_getitem_errors():
    t = ef.zeros([2, 3])
    with pytest.raises(ef.errors.OutOfRangeError):
        t[5]
    with pytest.raises(IndexError):  # OutOfRangeError is an IndexError too
        t[0, 7]
    with pytest.raises(TypeError):
        t[ef.constant([0, 1])]
    with pytest.raises(TypeError):
        t["a"]
    with pytest.raises(ValueError):
        t[::0]


# ---- errors ----

def test_errors_are_python_exceptions_of_matching_classes():
    with pytest.raises(ef.errors.InvalidArgumentError) as info:
        ef.add(ef.ones([2, 3]), ef.ones([4]))
    assert isinstance(info.value, ValueError) and isinstance(info.value, ef.errors.OpError)
    assert "add" in str(info.value) and "[2, 3]" in str(info.value) and "[4]" in str(info.value)
    assert ".cpp" not in str(info.value)  # no C++ location in Python messages
    with pytest.raises(ef.errors.InvalidArgumentError):
        ef.reduce_sum(ef.ones([2]), axis=3)
    with pytest.raises(ef.errors.InvalidArgumentError):
        ef.reshape(ef.ones([6]), [4, -1])
    with pytest.raises(ef.errors.InvalidArgumentError):
        ef.zeros([-1])
    with pytest.raises(ef.errors.ResourceExhaustedError):
        ef.zeros([2**40, 2**40])
    with pytest.raises(ef.errors.FailedPreconditionError):
        x = ef.constant(1.0)
        with ef.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
        tape.gradient(y, x)


def test_long_kernels_release_the_gil():
    import threading
    import time
    a = ef.random.uniform((1500, 1500), seed=1)
    window = {}

    def work():
        window["start"] = time.perf_counter()
        ef.matmul(a, a)
        window["end"] = time.perf_counter()

    worker = threading.Thread(target=work)
    stamps = []
    worker.start()
    while worker.is_alive():
        stamps.append(time.perf_counter())
    worker.join()
    # The main thread ran Python code while the worker was inside the one long call,
    # which it cannot do while the call holds the GIL.
    margin = (window["end"] - window["start"]) * 0.2
    inside = [t for t in stamps if window["start"] + margin < t < window["end"] - margin]
    assert len(inside) > 100


@pytest.mark.parametrize("call, match", [
    (lambda: ef.zeros([2**64]), "shape: 18446744073709551616 does not fit in 64 bits"),
    (lambda: ef.fill([2**64], 1.), "shape: .* does not fit in 64 bits"),
    (lambda: ef.reshape(ef.constant([1.0]), [2**64]), "shape: .* does not fit in 64 bits"),
    (lambda: ef.constant(2**63), "does not fit in int64"),
    (lambda: ef.constant(2**64), "does not fit in 64 bits"),
    (lambda: ef.constant([1, 2**63]), "does not fit in int64"),        # NumPy would make it float
    (lambda: ef.constant(2**40, dtype=ef.int32), "does not fit in int32"),
    (lambda: ef.constant([1.0])[2**64], "index: .* does not fit in 64 bits"),
    (lambda: ef.reduce_sum(ef.constant([1.0]), axis=2**64), "axis: .* does not fit in 64 bits"),
    (lambda: ef.random.uniform([2], seed=2**64), "seed: .* does not fit in 64 bits"),
])
def test_big_python_ints_are_typed_errors_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("make", [ef.zeros, ef.ones, lambda shape: ef.fill(shape, 1.),
                                  lambda shape: ef.random.uniform(shape)])
def test_a_negative_dimension_is_shown_as_given(make):
    # -1 prints as "?" (unknown) in shapes; here it is the value given, and the message says so.
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"dimension 0 is -1.*\[-1\]"):
        make([-1])
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"dimension 1 is -1.*\[2, -1\]"):
        make([2, -1])


def test_lossy_python_conversions_are_refused():
    # TensorFlow raises for both; ef.cast is the explicit way to truncate.
    with pytest.raises(TypeError, match="cannot convert 1.7 to int32 without losing the fraction"):
        ef.constant(1.7, dtype=ef.int32)
    with pytest.raises(TypeError, match="int64 without losing"):
        ef.convert_to_tensor([1.0, 2.5], dtype=ef.int64)
    assert int(ef.cast(ef.constant(1.7), ef.int32)) == 1
    assert int(ef.constant(2.0, dtype=ef.int32)) == 2                  # exact values convert
    assert ef.constant(0.1, dtype=ef.float64).numpy() == 0.1           # not 0.1 rounded to float32 first
    assert ef.constant([2**40, -2**63]).dtype == ef.int64


def test_converting_a_tensor_never_changes_its_dtype():
    # TensorFlow refuses (a silent cast would truncate 1.5 to 1); ef.cast converts.
    x = ef.constant([1.5, 2.5])
    for convert in (ef.constant, ef.convert_to_tensor):
        with pytest.raises(ef.errors.InvalidArgumentError, match="use ef.cast"):
            convert(x, dtype=ef.int32)
        with pytest.raises(ef.errors.InvalidArgumentError, match="float32"):
            convert(ef.Variable([1.0]), dtype=ef.float64)
        assert convert(x, dtype=ef.float32).dtype == ef.float32
    assert ef.cast(x, ef.int32).numpy().tolist() == [1, 2]
