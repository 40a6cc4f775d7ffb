"""ef.image's flips, rotations, dtype conversion and adjustments against NumPy written
from TensorFlow's definitions (tf.image), and their gradients."""
import zlib

import numpy as np
import pytest

import eagerflow as ef


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


@pytest.mark.parametrize("batched", [False, True])
def test_flips_and_rotations_are_numpys(batched, rng):
    shape = (2, 4, 5, 3) if batched else (4, 5, 3)
    x = rng.integers(0, 256, shape, dtype=np.uint8)
    h, w = (1, 2) if batched else (0, 1)
    np.testing.assert_array_equal(ef.image.flip_left_right(x).numpy(), np.flip(x, w))
    np.testing.assert_array_equal(ef.image.flip_up_down(x).numpy(), np.flip(x, h))
    for k in (-1, 0, 1, 2, 3, 5):
        np.testing.assert_array_equal(ef.image.rot90(x, k).numpy(), np.rot90(x, k, axes=(h, w)), err_msg=str(k))
    with pytest.raises(ef.errors.InvalidArgumentError, match="rot90.*shape"):
        ef.image.rot90(np.zeros((4, 5), np.uint8))


def test_convert_image_dtype_follows_tensorflow():
    u8 = np.array([0, 1, 127, 128, 255], np.uint8)
    np.testing.assert_allclose(ef.image.convert_image_dtype(u8, ef.float32).numpy(),
                               u8.astype(np.float32) * np.float32(1 / 255), rtol=0)
    np.testing.assert_array_equal(ef.image.convert_image_dtype(u8, ef.uint16).numpy(), u8.astype(np.uint16) * 256)
    u16 = np.array([0, 255, 256, 65535], np.uint16)
    np.testing.assert_array_equal(ef.image.convert_image_dtype(u16, ef.uint8).numpy(), u16 // 256)
    i32 = np.array([0, 2 ** 23 - 1, 2 ** 23, 2 ** 31 - 1], np.int32)
    np.testing.assert_array_equal(ef.image.convert_image_dtype(i32, ef.uint8).numpy(), [0, 0, 1, 255])
    f = np.array([-0.5, 0.0, 0.5, 0.999, 1.0, 1.7, np.nan], np.float32)
    expected = np.nan_to_num(np.clip(np.trunc(f * np.float32(255.5)), 0, 255)).astype(np.uint8)
    np.testing.assert_array_equal(ef.image.convert_image_dtype(f, ef.uint8).numpy(), expected)
    assert ef.image.convert_image_dtype(f, ef.float64).dtype == ef.float64
    i8 = np.array([-128, 0, 127], np.int8)  # signed: full intensity is the max, 127
    np.testing.assert_allclose(ef.image.convert_image_dtype(i8, ef.float32).numpy(), i8 / 127, rtol=1e-6)


def test_brightness_and_contrast_compute_in_float_and_saturate(rng):
    x = rng.integers(0, 256, (2, 3, 4, 3), dtype=np.uint8)
    as_float = x.astype(np.float32) * np.float32(1 / 255)
    back = lambda v: np.clip(np.trunc(v * np.float32(255.5)), 0, 255).astype(np.uint8)  # noqa: E731
    np.testing.assert_array_equal(ef.image.adjust_brightness(x, 0.2).numpy(), back(as_float + np.float32(0.2)))
    mean = as_float.mean(axis=(1, 2), keepdims=True)
    got = ef.image.adjust_contrast(x, 1.7).numpy().astype(int)
    assert np.abs(got - back((as_float - mean) * np.float32(1.7) + mean).astype(int)).max() <= 1  # float sums
    f = rng.random((4, 4, 3))
    np.testing.assert_allclose(ef.image.adjust_brightness(f.astype(np.float32), -0.1).numpy(), f - 0.1, rtol=1e-6)
    f_mean = f.mean(axis=(0, 1), keepdims=True)
    np.testing.assert_allclose(ef.image.adjust_contrast(f.astype(np.float32), 0.5).numpy(),
                               (f - f_mean) * 0.5 + f_mean, rtol=1e-5)


def test_per_image_standardization_and_grayscale(rng):
    x = rng.integers(0, 256, (2, 5, 6, 3), dtype=np.uint8)
    got = ef.image.per_image_standardization(x)
    assert got.dtype == ef.float32
    v = x.astype(np.float64)
    mean = v.mean(axis=(1, 2, 3), keepdims=True)
    std = np.maximum(v.std(axis=(1, 2, 3), keepdims=True), 1 / np.sqrt(5 * 6 * 3))
    np.testing.assert_allclose(got.numpy(), (v - mean) / std, rtol=1e-5, atol=1e-5)
    flat = np.full((2, 2, 1), 7, np.uint8)  # stddev 0: divided by 1 / sqrt(N) instead
    np.testing.assert_array_equal(ef.image.per_image_standardization(flat).numpy(), 0)
    rgb = rng.random((3, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(ef.image.rgb_to_grayscale(rgb).numpy(),
                               (rgb @ np.array([0.2989, 0.5870, 0.1140], np.float32))[..., None], rtol=1e-5)
    u8 = ef.image.rgb_to_grayscale(x)
    assert u8.dtype == ef.uint8 and u8.shape == (2, 5, 6, 1)
    with pytest.raises(ef.errors.InvalidArgumentError, match="3 channels"):
        ef.image.rgb_to_grayscale(np.zeros((2, 2, 4), np.float32))


def test_gradients_flow_through_the_float_ops(rng):
    x = ef.Variable(rng.random((1, 3, 4, 3)))
    w = ef.constant(rng.random((1, 4, 3, 3)))
    with ef.GradientTape() as tape:
        y = ef.reduce_sum(ef.image.rot90(ef.image.flip_left_right(x)) * w)
    # rot90 of a flip is a transpose; the gradient is w moved back.
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.flip(np.rot90(w.numpy(), -1, axes=(1, 2)), 2))
    # per_image_standardization's gradient against PyTorch's autograd of the same formula.
    import torch
    v = rng.random((1, 3, 4, 3))
    weights = rng.random((1, 3, 4, 3))
    xf = ef.Variable(v.astype(np.float32))
    with ef.GradientTape() as tape:
        z = ef.reduce_sum(ef.image.per_image_standardization(xf) * ef.constant(weights, dtype=ef.float32))
    t = torch.tensor(v, requires_grad=True)
    mean = t.mean(dim=(1, 2, 3), keepdim=True)
    std = torch.clamp(t.std(dim=(1, 2, 3), keepdim=True, unbiased=False), min=1 / np.sqrt(36))
    (((t - mean) / std) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(tape.gradient(z, xf).numpy(), t.grad.numpy(), rtol=1e-3, atol=1e-4)


def test_bounding_boxes_crops_and_pads_as_numpy():
    image = np.arange(2 * 6 * 5 * 3, dtype=np.float32).reshape(2, 6, 5, 3)
    np.testing.assert_array_equal(ef.image.crop_to_bounding_box(image, 1, 2, 4, 3).numpy(), image[:, 1:5, 2:5])
    padded = ef.image.pad_to_bounding_box(image[0], 2, 1, 9, 7).numpy()
    np.testing.assert_array_equal(padded, np.pad(image[0], [(2, 1), (1, 1), (0, 0)]))
    # TensorFlow's offsets: int((size - size * fraction) / 2) on each side.
    np.testing.assert_array_equal(ef.image.central_crop(image, 0.5).numpy(), image[:, 1:5, 1:4])
    np.testing.assert_array_equal(ef.image.central_crop(image, 1.0).numpy(), image)
    # Cropped where larger (height 6 -> 4), padded where smaller (width 5 -> 8).
    both = ef.image.resize_with_crop_or_pad(image, 4, 8).numpy()
    np.testing.assert_array_equal(both, np.pad(image[:, 1:5], [(0, 0), (0, 0), (1, 2), (0, 0)]))
    np.testing.assert_array_equal(ef.image.grayscale_to_rgb(image[..., :1]).numpy(), np.repeat(image[..., :1], 3, -1))
    with pytest.raises(ValueError, match="does not fit"):
        ef.image.crop_to_bounding_box(image, 3, 0, 4, 5)
    with pytest.raises(ValueError, match="does not fit"):
        ef.image.pad_to_bounding_box(image, 0, 0, 5, 5)
    with pytest.raises(ValueError, match="central_fraction"):
        ef.image.central_crop(image, 0.0)
    with pytest.raises(ValueError, match="rank 3 or 4"):
        ef.image.crop_to_bounding_box(np.ones((4, 4)), 0, 0, 2, 2)


def test_random_flips_flip_each_image_of_a_batch_on_its_own_coin():
    images = np.random.default_rng(5).random((64, 3, 4, 1)).astype(np.float32)
    ef.random.set_seed(11)
    flipped = ef.image.random_flip_left_right(images, seed=7).numpy()
    same = [np.array_equal(f, i) for f, i in zip(flipped, images)]
    mirrored = [np.array_equal(f, i[:, ::-1]) for f, i in zip(flipped, images)]
    assert all(s != m for s, m in zip(same, mirrored))  # each image one or the other
    assert 16 < sum(mirrored) < 48
    ef.random.set_seed(11)  # the same seeds, the same flips (as TensorFlow's seeds work)
    np.testing.assert_array_equal(ef.image.random_flip_left_right(images, seed=7).numpy(), flipped)
    up_down = ef.image.random_flip_up_down(images[0], seed=3).numpy()
    assert np.array_equal(up_down, images[0]) or np.array_equal(up_down, images[0][::-1])
