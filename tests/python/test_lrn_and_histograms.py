"""local_response_normalization against PyTorch (values, first and second order
gradients), histogram_fixed_width against NumPy, keras.utils.to_categorical."""
import zlib

import numpy as np
import pytest
import torch

import eagerflow as ef


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def torch_lrn(x_nhwc, depth_radius, bias, alpha, beta):
    # PyTorch's size is the whole window and it divides alpha by it.
    size = 2 * depth_radius + 1
    out = torch.nn.functional.local_response_norm(x_nhwc.permute(0, 3, 1, 2), size, alpha * size, beta, bias)
    return out.permute(0, 2, 3, 1)


@pytest.mark.parametrize("depth_radius,channels", [(0, 3), (1, 4), (2, 7), (5, 3), (5, 16)])
def test_lrn_matches_torch_with_gradients(depth_radius, channels, rng):
    v = rng.standard_normal((2, 3, 2, channels))
    bias, alpha, beta = 1.5, 0.3, 0.75
    x = ef.Variable(v)
    with ef.GradientTape() as outer:
        with ef.GradientTape() as inner:
            y = ef.nn.local_response_normalization(x, depth_radius, bias, alpha, beta)
            loss = ef.reduce_sum(y * ef.sin(ef.constant(v)))
        g = inner.gradient(loss, x)
        gg = ef.reduce_sum(g * g)
    h = outer.gradient(gg, x)
    t = torch.tensor(v, requires_grad=True)
    ty = torch_lrn(t, depth_radius, bias, alpha, beta)
    (tg,) = torch.autograd.grad((ty * torch.sin(torch.tensor(v))).sum(), t, create_graph=True)
    (th,) = torch.autograd.grad((tg * tg).sum(), t)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-8, atol=1e-10)
    assert ef.nn.lrn is ef.nn.local_response_normalization


def test_lrn_bad_input():
    with pytest.raises(ef.errors.InvalidArgumentError, match="local_response_normalization.*4-D"):
        ef.nn.local_response_normalization(ef.ones([2, 3]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="depth_radius"):
        ef.nn.local_response_normalization(ef.ones([1, 1, 1, 2]), depth_radius=-1)
    with pytest.raises(ef.errors.InvalidArgumentError, match="float"):
        ef.nn.local_response_normalization(ef.ones([1, 1, 1, 2], dtype=ef.int32))


def reference_histogram(values, lo, hi, nbins):
    """TensorFlow's rule written out: clamp below, float64 bins, cap at the last."""
    v = values[~np.isnan(values)] if values.dtype.kind == "f" else values
    shifted = (np.maximum(v, lo) - lo).astype(np.float64)
    bins = np.minimum(np.floor(shifted / ((hi - lo) / nbins)), nbins - 1).astype(np.int64)
    return np.bincount(bins, minlength=nbins)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_histogram_fixed_width(dtype, rng):
    values = (rng.standard_normal(500) * 30).astype(dtype)
    got = ef.histogram_fixed_width(values, [-20, 40], nbins=7)
    assert got.dtype == ef.int32
    np.testing.assert_array_equal(got.numpy(), reference_histogram(values, dtype(-20), dtype(40), 7))
    inside = values[(values >= -20) & (values < 40)]  # NumPy agrees within the range
    np.testing.assert_array_equal(ef.histogram_fixed_width(inside, [-20, 40], nbins=7, dtype=ef.int64).numpy(),
                                  np.histogram(inside, bins=7, range=(-20, 40))[0])


def test_histogram_nans_count_nowhere_and_bad_arguments():
    got = ef.histogram_fixed_width([np.nan, 0.5, np.inf, -np.inf], [0.0, 1.0], nbins=2).numpy()
    np.testing.assert_array_equal(got, [1, 2])  # -inf in the first bin, inf in the last, NaN nowhere
    big = np.array([2 ** 62, 2 ** 62 + 1], np.int64)  # ends 2 apart that one double cannot tell apart
    np.testing.assert_array_equal(ef.histogram_fixed_width(big, np.array([2 ** 62, 2 ** 62 + 2]), nbins=2).numpy(),
                                  [1, 1])
    with pytest.raises(ef.errors.InvalidArgumentError, match="lo < hi"):
        ef.histogram_fixed_width([1.0], [1.0, 1.0])
    with pytest.raises(ef.errors.InvalidArgumentError, match="nbins"):
        ef.histogram_fixed_width([1.0], [0.0, 1.0], nbins=0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="value_range"):
        ef.histogram_fixed_width([1.0], [0.0, 1.0, 2.0])


def test_to_categorical():
    np.testing.assert_array_equal(ef.keras.utils.to_categorical(np.array([[1], [0]], np.uint8)), [[0, 1], [1, 0]])
    assert ef.keras.utils.to_categorical([3], num_classes=5, dtype="int32").dtype == np.int32
    with pytest.raises(ValueError, match="not below"):
        ef.keras.utils.to_categorical([3], num_classes=2)
    with pytest.raises(ValueError, match="non-negative"):
        ef.keras.utils.to_categorical([-1])
