"""ef.image.resize against PyTorch's interpolate (align_corners=False; "nearest" is
"nearest-exact"), values and gradients, up- and downsampling, with the dtype rules of
tf.image.resize."""
import numpy as np
import pytest
import torch

import eagerflow as ef

CASES = [((2, 5, 7, 3), (9, 4)), ((1, 8, 8, 2), (3, 5)), ((3, 4, 6, 1), (4, 6)), ((1, 1, 5, 2), (3, 11))]


def torch_resize(x, size, method):
    mode = "bilinear" if method == "bilinear" else "nearest-exact"
    kwargs = {"align_corners": False} if mode == "bilinear" else {}
    nchw = torch.nn.functional.interpolate(x.permute(0, 3, 1, 2), size=size, mode=mode, **kwargs)
    return nchw.permute(0, 2, 3, 1)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("shape,size", CASES)
def test_resize_and_its_gradient_match_torch(shape, size, method):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    g = rng.standard_normal((shape[0],) + size + (shape[3],))
    tx = torch.tensor(x, requires_grad=True)
    expected = torch_resize(tx, size, method)
    (expected * torch.tensor(g)).sum().backward()
    ex = ef.constant(x)
    with ef.GradientTape() as tape:
        tape.watch(ex)
        y = ef.image.resize(ex, size, method=method)
        loss = ef.reduce_sum(y * ef.constant(g))
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tape.gradient(loss, ex).numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    y32 = ef.image.resize(ef.constant(x.astype(np.float32)), size, method=method)
    assert y32.dtype == ef.float32
    np.testing.assert_allclose(y32.numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_rank_3_images_and_integer_images():
    img = np.arange(12, dtype=np.int32).reshape(2, 2, 3)
    bilinear = ef.image.resize(img, [4, 4])
    assert bilinear.dtype == ef.float32 and bilinear.shape == (4, 4, 3)  # TensorFlow: float32
    nearest = ef.image.resize(img, [4, 4], method=ef.image.ResizeMethod.NEAREST_NEIGHBOR)
    assert nearest.dtype == ef.int32
    np.testing.assert_array_equal(nearest.numpy(), img.repeat(2, axis=0).repeat(2, axis=1))


def test_unsupported_requests_are_refused():
    with pytest.raises(ef.errors.UnimplementedError, match="bicubic"):
        ef.image.resize(ef.zeros([1, 2, 2, 1]), [3, 3], method="bicubic")
    with pytest.raises(ef.errors.UnimplementedError, match="antialias"):
        ef.image.resize(ef.zeros([1, 2, 2, 1]), [1, 1], antialias=True)
    with pytest.raises(ef.errors.InvalidArgumentError, match="size"):
        ef.image.resize(ef.zeros([1, 2, 2, 1]), [0, 3])
