"""int8, uint8, int16, uint16 and uint32 (Note [small integer dtypes] in eagerflow/core/dtype.h).

They are stored in their own width and computed in int32 (uint32: int64), so every
result must equal NumPy's in the same dtype: arithmetic wraps modulo 2^bits,
comparisons see the true values, sums wrap only at the end. Inputs span each dtype's
whole range, extremes included. PyTorch checks the DLPack exchange.
"""
import numpy as np
import pytest
import torch

import eagerflow as ef

SMALL = [ef.int8, ef.uint8, ef.int16, ef.uint16, ef.uint32]
NUMPY = {ef.int8: np.int8, ef.uint8: np.uint8, ef.int16: np.int16, ef.uint16: np.uint16, ef.uint32: np.uint32}
small = pytest.mark.parametrize("dtype", SMALL, ids=[d.name for d in SMALL])


def full_range(dtype, shape, rng, nonzero=False):
    info = np.iinfo(NUMPY[dtype])
    a = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.int64)
    a.flat[:4] = [info.min, info.max, 0, 1]  # the extremes, always
    if nonzero:
        a[a == 0] = 1
    return a.astype(NUMPY[dtype])


@pytest.fixture
def rng(request):
    import zlib
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


@small
def test_dtype_objects(dtype):
    info = np.iinfo(NUMPY[dtype])
    assert dtype.name == np.dtype(NUMPY[dtype]).name
    assert dtype.size == np.dtype(NUMPY[dtype]).itemsize
    assert dtype.is_integer and not dtype.is_floating
    assert dtype.is_unsigned == (info.min == 0)
    assert (dtype.min, dtype.max) == (info.min, info.max)
    assert ef.as_dtype(NUMPY[dtype]) == dtype and ef.as_dtype(dtype.name) == dtype
    assert dtype.as_numpy_dtype == NUMPY[dtype]


def test_uint64_and_dtype_limits():
    with pytest.raises(TypeError, match="dtype"):
        ef.as_dtype(np.uint64)
    with pytest.raises(ValueError, match="beyond int64"):
        ef.constant(np.array([2 ** 63], dtype=np.uint64))
    assert ef.constant(np.array([7], dtype=np.uint64)).dtype == ef.int64
    assert ef.float16.max == 65504.0 and ef.int32.min == -2 ** 31 and ef.bool.max is True


@small
def test_numpy_round_trip_keeps_dtype_and_values(dtype, rng):
    a = full_range(dtype, (3, 5), rng)
    t = ef.constant(a)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.numpy().dtype == a.dtype
    assert ef.constant(a[1, 2]).dtype == dtype  # a NumPy scalar too


@small
def test_python_values_must_fit(dtype):
    info = np.iinfo(NUMPY[dtype])
    assert ef.constant([info.min, info.max], dtype=dtype).numpy().tolist() == [info.min, info.max]
    with pytest.raises(ValueError, match="does not fit"):
        ef.constant([1, info.max + 1], dtype=dtype)
    with pytest.raises(ValueError, match="does not fit"):
        ef.constant([info.min - 1], dtype=dtype)
    with pytest.raises(ValueError, match="outside the range"):
        ef.constant([float(info.max) + 1.0], dtype=dtype)
    with pytest.raises(TypeError, match="fraction"):
        ef.constant([1.5], dtype=dtype)
    x = ef.constant([1, 2], dtype=dtype)
    assert (x + 1).dtype == dtype
    with pytest.raises(ef.errors.InvalidArgumentError, match=f"dtype {dtype.name}"):
        x + (info.max + 1)


BINARY = {
    "add": (ef.add, np.add),
    "subtract": (ef.subtract, np.subtract),
    "multiply": (ef.multiply, np.multiply),
    "maximum": (ef.maximum, np.maximum),
    "minimum": (ef.minimum, np.minimum),
    "less": (ef.less, np.less),
    "greater_equal": (ef.greater_equal, np.greater_equal),
    "equal": (ef.equal, np.equal),
}


@small
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_ops_equal_numpy_in_the_dtype(dtype, name, rng):
    a, b = full_range(dtype, (4, 33), rng), full_range(dtype, (33,), rng)
    ours, theirs = BINARY[name]
    with np.errstate(over="ignore"):
        expected = theirs(a, b)
    got = ours(ef.constant(a), ef.constant(b))
    assert got.dtype == (ef.bool if expected.dtype == np.bool_ else dtype)
    np.testing.assert_array_equal(got.numpy(), expected)


@small
def test_integer_division_and_modulo_equal_numpy(dtype, rng):
    a, b = full_range(dtype, (64,), rng), full_range(dtype, (64,), rng, nonzero=True)
    if np.iinfo(NUMPY[dtype]).min < 0:  # min // -1 overflows; NumPy warns, both wrap
        b[b == -1] = 3
    x, y = ef.constant(a), ef.constant(b)
    np.testing.assert_array_equal((x // y).numpy(), a // b)
    np.testing.assert_array_equal((x % y).numpy(), a % b)
    np.testing.assert_array_equal(ef.truncatediv(x, y).numpy(), (np.trunc(a / b)).astype(NUMPY[dtype]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="division by zero"):
        x // ef.constant(np.zeros(64, NUMPY[dtype]))
    # True division: float32 for 8 and 16 bits, float64 for 32, as TensorFlow.
    q = x / y
    assert q.dtype == (ef.float32 if dtype.size <= 2 else ef.float64)
    np.testing.assert_allclose(q.numpy(), a.astype(np.float64) / b, rtol=1e-6)


@small
def test_unary_ops_wrap_like_numpy(dtype, rng):
    a = full_range(dtype, (50,), rng)
    x = ef.constant(a)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal((-x).numpy(), -a)
        np.testing.assert_array_equal(ef.abs(x).numpy(), np.abs(a))
        np.testing.assert_array_equal(ef.square(x).numpy(), a * a)
    np.testing.assert_array_equal(ef.sign(x).numpy(), np.sign(a))


@small
def test_reductions_accumulate_wide_and_wrap_once(dtype, rng):
    a = full_range(dtype, (6, 40), rng)
    x = ef.constant(a)
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(ef.reduce_sum(x, axis=axis).numpy(), np.sum(a, axis=axis, dtype=a.dtype))
        np.testing.assert_array_equal(ef.reduce_max(x, axis=axis).numpy(), np.max(a, axis=axis))
        np.testing.assert_array_equal(ef.reduce_min(x, axis=axis).numpy(), np.min(a, axis=axis))
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(ef.reduce_prod(x, axis=axis).numpy(),
                                          np.prod(a, axis=axis, dtype=a.dtype))
    # The mean divides the wide sum: no overflow before the division (TensorFlow's
    # integer mean truncates toward zero).
    wide = a.astype(np.int64)
    expected = np.trunc(wide.sum(axis=1) / wide.shape[1]).astype(a.dtype)
    mean = ef.reduce_mean(x, axis=1)
    assert mean.dtype == dtype
    np.testing.assert_array_equal(mean.numpy(), expected)
    np.testing.assert_array_equal(ef.argmax(x, axis=1).numpy(), np.argmax(a, axis=1))
    np.testing.assert_array_equal(ef.cumsum(x, axis=1).numpy(), np.cumsum(a, axis=1, dtype=a.dtype))


@small
def test_casts_wrap_from_integers_and_saturate_from_floats(dtype, rng):
    info = np.iinfo(NUMPY[dtype])
    wide = rng.integers(-2 ** 40, 2 ** 40, size=100, dtype=np.int64)
    wide[:4] = [info.min - 1, info.max + 1, -1, 2 ** 33 + 5]
    np.testing.assert_array_equal(ef.cast(ef.constant(wide), dtype).numpy(), wide.astype(NUMPY[dtype]))
    np.testing.assert_array_equal(ef.cast(ef.constant(wide.astype(np.int32)), dtype).numpy(),
                                  wide.astype(np.int32).astype(NUMPY[dtype]))
    floats = np.array([np.nan, -np.inf, np.inf, info.min - 10.5, info.max + 10.5, -0.9, 0.9, 7.99, -7.99])
    expected = np.nan_to_num(np.clip(np.trunc(floats), info.min, info.max), nan=0).astype(NUMPY[dtype])
    for float_dtype in (ef.float32, ef.float64, ef.float16, ef.bfloat16):
        got = ef.cast(ef.constant(floats, dtype=float_dtype), dtype)
        if float_dtype in (ef.float16, ef.bfloat16):  # their rounding of the inputs first
            rounded = ef.cast(ef.constant(floats, dtype=float_dtype), ef.float64).numpy()
            expected_here = np.nan_to_num(np.clip(np.trunc(rounded), info.min, info.max), nan=0).astype(NUMPY[dtype])
        else:
            expected_here = expected
        np.testing.assert_array_equal(got.numpy(), expected_here, err_msg=float_dtype.name)
    # Widening is exact, to every dtype.
    a = full_range(dtype, (30,), rng)
    for to in (ef.int32, ef.int64, ef.float64, ef.int8, ef.uint16, ef.bool):
        np.testing.assert_array_equal(ef.cast(ef.constant(a), to).numpy(), a.astype(to.as_numpy_dtype))


@small
def test_moves_views_and_indexing(dtype, rng):
    a = full_range(dtype, (4, 6), rng)
    x = ef.constant(a)
    np.testing.assert_array_equal(ef.transpose(x).numpy(), a.T)
    np.testing.assert_array_equal(x[1:, ::2].numpy(), a[1:, ::2])
    np.testing.assert_array_equal((x[:, ::2] + x[:, 1::2]).numpy(), a[:, ::2] + a[:, 1::2])
    np.testing.assert_array_equal(ef.concat([x, x], axis=0).numpy(), np.concatenate([a, a]))
    np.testing.assert_array_equal(ef.gather(x, [3, 0], axis=0).numpy(), a[[3, 0]])
    np.testing.assert_array_equal(ef.reshape(x, [-1]).numpy(), a.reshape(-1))
    np.testing.assert_array_equal(ef.sort(x, axis=1).numpy(), np.sort(a, axis=1))
    np.testing.assert_array_equal(ef.where(x > 0, x, ef.zeros_like(x)).numpy(), np.where(a > 0, a, 0))
    np.testing.assert_array_equal(ef.zeros([2], dtype=dtype).numpy(), np.zeros(2, NUMPY[dtype]))
    np.testing.assert_array_equal(ef.fill([2], ef.constant(5, dtype=dtype)).numpy(), np.full(2, 5, NUMPY[dtype]))
    np.testing.assert_array_equal(ef.range(0, 10, 3, dtype=dtype).numpy(), np.arange(0, 10, 3, dtype=NUMPY[dtype]))
    # Indices of a small integer dtype work as int32 ones do.
    np.testing.assert_array_equal(ef.gather(x, ef.constant([3, 0], dtype=dtype)).numpy(), a[[3, 0]])


@small
def test_printing_shows_numbers(dtype):
    info = np.iinfo(NUMPY[dtype])
    t = ef.constant([info.min, 65 % (info.max + 1), info.max], dtype=dtype)
    text = repr(t)
    assert f"dtype={dtype.name}" in text and str(info.max) in text and str(info.min) in text
    assert int(t[2]) == info.max


@pytest.mark.parametrize("dtype,torch_dtype", [(ef.int8, torch.int8), (ef.uint8, torch.uint8),
                                               (ef.int16, torch.int16)], ids=["int8", "uint8", "int16"])
def test_dlpack_with_torch_both_ways(dtype, torch_dtype, rng):
    a = full_range(dtype, (3, 7), rng)
    theirs = torch.utils.dlpack.from_dlpack(ef.constant(a))
    assert theirs.dtype == torch_dtype
    np.testing.assert_array_equal(theirs.numpy(), a)
    back = ef.from_dlpack(torch.from_numpy(a.copy()))
    assert back.dtype == dtype
    np.testing.assert_array_equal(back.numpy(), a)


@small
def test_safetensors_round_trip(dtype, rng, tmp_path):
    a = full_range(dtype, (2, 9), rng)
    ef.io.save_safetensors(str(tmp_path / "t.safetensors"), {"x": ef.constant(a)})
    back = ef.io.load_safetensors(str(tmp_path / "t.safetensors"))["x"]
    assert back.dtype == dtype
    np.testing.assert_array_equal(back.numpy(), a)


def test_functions_and_datasets_keep_uint8():
    images = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3) * 15

    @ef.function
    def brighten(x):
        return x + ef.constant(10, dtype=ef.uint8)  # wraps past 255, as eagerly

    np.testing.assert_array_equal(brighten(ef.constant(images)).numpy(), images + np.uint8(10))
    ds = ef.data.Dataset.from_tensor_slices(images).map(lambda x: ef.cast(x, ef.float32) / 255.0)
    first = next(iter(ds))
    assert first.dtype == ef.float32
    np.testing.assert_allclose(first.numpy(), images[0] / 255.0, rtol=1e-6)
    assert next(iter(ef.data.Dataset.from_tensor_slices(images))).dtype == ef.uint8


def test_no_gradient_through_integers():
    x = ef.Variable([1.5, 2.5])
    with ef.GradientTape() as tape:
        y = ef.cast(ef.cast(x, ef.uint8), ef.float32) * x
    g = tape.gradient(y, x)
    np.testing.assert_array_equal(g.numpy(), [1.0, 2.0])  # only the float path: d(c * x)/dx = c


@small
def test_ops_that_read_values_before_running(dtype):
    # Inference reads these inputs' values before the dispatcher widens them.
    ids = ef.constant([0, 0, 2, 3], dtype=dtype)
    np.testing.assert_array_equal(ef.math.bincount(ids).numpy(), [2, 0, 1, 1])
    np.testing.assert_array_equal(ef.math.segment_sum(ef.constant([1., 2., 3., 4.]), ids).numpy(), [3, 0, 3, 4])
    values, positions = ef.unique(ids)
    assert values.dtype == dtype
    np.testing.assert_array_equal(values.numpy(), [0, 2, 3])
    np.testing.assert_array_equal(positions.numpy(), [0, 0, 1, 2])
    np.testing.assert_array_equal(ef.where(ids).numpy(), [[2], [3]])


@pytest.mark.parametrize("dtype", [ef.float16, ef.bfloat16], ids=["float16", "bfloat16"])
def test_half_inputs_whose_values_inference_reads(dtype):
    x = ef.constant([1.5, 0.0, 1.5, -2.0], dtype=dtype)
    values, positions = ef.unique(x)
    np.testing.assert_array_equal(ef.cast(values, ef.float32).numpy(), [1.5, 0.0, -2.0])
    np.testing.assert_array_equal(positions.numpy(), [0, 1, 0, 2])
    np.testing.assert_array_equal(ef.where(x).numpy(), [[0], [2], [3]])


@pytest.mark.parametrize("dtype", [ef.int8, ef.int16, ef.uint8, ef.float16, ef.bfloat16],
                         ids=["int8", "int16", "uint8", "float16", "bfloat16"])
def test_empty_unsorted_segments_hold_the_dtypes_own_extremes(dtype):
    # TensorFlow's lowest / largest value of the dtype itself, not of the wide one it
    # is computed in (which wrapped to -1 and 0 for int8, or rounded to inf for float16).
    data = ef.cast(ef.constant([5]), dtype)
    lowest, largest = dtype.min, dtype.max
    got_max = ef.cast(ef.math.unsorted_segment_max(data, [0], 2), ef.float64).numpy()
    got_min = ef.cast(ef.math.unsorted_segment_min(data, [0], 2), ef.float64).numpy()
    np.testing.assert_array_equal(got_max, [5, lowest])
    np.testing.assert_array_equal(got_min, [5, largest])


def test_means_of_many_values_do_not_wrap():
    np.testing.assert_array_equal(ef.reduce_mean(ef.constant(np.full(100000, 40000, np.uint16))).numpy(), 40000)
    np.testing.assert_array_equal(ef.reduce_mean(ef.constant(np.full(100000, 30000, np.int16))).numpy(), 30000)


def test_integer_targets_have_no_gradient_in_graph_mode():
    g = ef.Graph()
    with g.as_default():
        a = ef.placeholder(ef.float32, shape=(2,))
        assert ef.gradients(ef.cast(a, ef.uint8), [a]) == [None]
        assert ef.gradients(ef.cast(a, ef.int32), [a]) == [None]


def test_shapes_and_indices_given_as_small_integer_tensors():
    x = ef.reshape(ef.range(6), ef.constant([2, 3], dtype=ef.uint8))
    assert x.shape == (2, 3)
    assert int(x[ef.constant(1, dtype=ef.int16), 2]) == 5


def test_segment_means_sum_wide():
    # Integers: int64 sums, truncated quotients (TensorFlow's integer mean); float16: float32 sums.
    ids = [0, 0, 1, 1, 1]
    np.testing.assert_array_equal(ef.math.segment_mean(ef.constant([200, 201, -3, 0, 1], dtype=ef.int16), ids).numpy(),
                                  [200, 0])
    # TensorFlow's unsorted mean is a true division: float64 for int32.
    unsorted = ef.math.unsorted_segment_mean(np.array([-3, 0, 5], np.int32), np.array([0, 0, 2]), 3)
    assert unsorted.dtype == ef.float64
    np.testing.assert_array_equal(unsorted.numpy(), [-1.5, 0, 5])
    halves = ef.constant(np.full(5000, 30.0, np.float16))
    np.testing.assert_array_equal(ef.math.unsorted_segment_mean(halves, np.zeros(5000, np.int32), 1).numpy(), [30])
