"""ef.image.resize against PyTorch's interpolate (align_corners=False; "nearest" is
"nearest-exact"; antialias=True, whose bicubic is Keys' a = -0.5 as TensorFlow's),
adaptive average pooling (area at whole factors), PIL's resize (the antialiased
kernels, lanczos3 included) and a float64 NumPy transcription of TensorFlow's
ScaleAndTranslate (the other windowed kernels); values and gradients, up- and
downsampling, with the dtype rules of tf.image.resize."""
import math

import numpy as np
import pytest
import torch
from PIL import Image

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


def torch_interpolate(x, size, mode, antialias):
    nchw = torch.nn.functional.interpolate(x.permute(0, 3, 1, 2), size=size, mode=mode, align_corners=False,
                                           antialias=antialias)
    return nchw.permute(0, 2, 3, 1)


def value_and_gradient(x, g, fn):
    ex = ef.constant(x)
    with ef.GradientTape() as tape:
        tape.watch(ex)
        y = fn(ex)
        loss = ef.reduce_sum(y * ef.constant(g))
    return y.numpy(), tape.gradient(loss, ex).numpy()


def torch_value_and_gradient(x, g, fn):
    tx = torch.tensor(x, requires_grad=True)
    y = fn(tx)
    (y * torch.tensor(g)).sum().backward()
    return y.detach().numpy(), tx.grad.numpy()


@pytest.mark.parametrize("method,mode", [("bilinear", "bilinear"), ("bicubic", "bicubic")])
@pytest.mark.parametrize("shape,size", CASES)
def test_antialiased_resize_matches_torch(shape, size, method, mode):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    g = rng.standard_normal((shape[0],) + size + (shape[3],))
    y, dx = value_and_gradient(x, g, lambda t: ef.image.resize(t, size, method=method, antialias=True))
    ty, tdx = torch_value_and_gradient(x, g, lambda t: torch_interpolate(t, size, mode, True))
    np.testing.assert_allclose(y, ty, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dx, tdx, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape,size", [((2, 3, 4, 2), (7, 9)), ((1, 5, 5, 1), (5, 11)), ((1, 2, 6, 3), (4, 6))])
def test_bicubic_upsampling_matches_torch_keys_cubic(shape, size):
    # Upsampling, the kernel is not widened: TensorFlow's ResizeBicubic with half-pixel
    # centers is PyTorch's antialiased bicubic (a = -0.5, outside taps dropped).
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape)
    g = rng.standard_normal((shape[0],) + size + (shape[3],))
    y, dx = value_and_gradient(x, g, lambda t: ef.image.resize(t, size, method="bicubic"))
    ty, tdx = torch_value_and_gradient(x, g, lambda t: torch_interpolate(t, size, "bicubic", True))
    np.testing.assert_allclose(y, ty, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dx, tdx, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape,size", [((2, 8, 6, 3), (4, 3)), ((1, 9, 12, 2), (3, 4)), ((1, 4, 4, 1), (4, 4))])
def test_area_at_whole_factors_is_average_pooling(shape, size):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    g = rng.standard_normal((shape[0],) + size + (shape[3],))
    y, dx = value_and_gradient(x, g, lambda t: ef.image.resize(t, size, method="area"))
    pool = lambda t: torch.nn.functional.adaptive_avg_pool2d(t.permute(0, 3, 1, 2), size).permute(0, 2, 3, 1)
    ty, tdx = torch_value_and_gradient(x, g, pool)
    np.testing.assert_allclose(y, ty, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dx, tdx, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method,pil_filter", [("lanczos3", Image.LANCZOS), ("bicubic", Image.BICUBIC),
                                               ("bilinear", Image.BILINEAR)])
@pytest.mark.parametrize("in_hw,out_hw", [((20, 30), (7, 11)), ((9, 8), (20, 13)), ((16, 16), (5, 40))])
def test_antialiased_kernels_match_pil(method, pil_filter, in_hw, out_hw):
    x = np.random.default_rng(4).uniform(0, 255, in_hw).astype(np.float32)
    expected = np.asarray(Image.fromarray(x, mode="F").resize(out_hw[::-1], pil_filter))
    got = ef.image.resize(x[:, :, None], list(out_hw), method=method, antialias=True).numpy()[:, :, 0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-3)


# TensorFlow's ScaleAndTranslate (scale_and_translate_op.cc and sampling_kernels.h), in
# float64: the reference for the kernels no other library here has.
KERNELS = {
    "lanczos3": (3.0, lambda x: 1.0 if x <= 1e-3 else 3 * math.sin(math.pi * x) * math.sin(math.pi * x / 3)
                 / (math.pi * x) ** 2),
    "lanczos5": (5.0, lambda x: 1.0 if x <= 1e-3 else 5 * math.sin(math.pi * x) * math.sin(math.pi * x / 5)
                 / (math.pi * x) ** 2),
    "gaussian": (1.5, lambda x: math.exp(-x * x / 0.5)),
    "mitchellcubic": (2.0, lambda x: ((7 / 6 * x - 2) * x * x + 8 / 9) if x < 1
                      else (((-7 / 18 * x + 2) * x - 10 / 3) * x + 16 / 9)),
}


def reference_axis_matrix(kernel, antialias, scale, translate, n_in, n_out):
    radius, k = KERNELS[kernel]
    ks = max(1 / scale, 1.0) if antialias else 1.0
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        sample = (o + 0.5 - translate) / scale
        if sample < 0 or sample > n_in:
            continue
        lo = min(max(math.ceil(sample - radius * ks - 0.5), 0), n_in - 1)
        hi = min(max(math.floor(sample + radius * ks - 0.5), 0), n_in - 1)
        w = [k(abs(i + 0.5 - sample) / ks) if abs(i + 0.5 - sample) / ks < radius else 0.0
             for i in range(lo, hi + 1)]
        m[o, lo:hi + 1] = np.array(w) / sum(w)
    return m


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("antialias", [False, True])
def test_windowed_kernels_match_scale_and_translate(kernel, antialias):
    x = np.random.default_rng(5).standard_normal((2, 13, 6, 3))
    size = (5, 14)
    rows = reference_axis_matrix(kernel, antialias, size[0] / 13, 0.0, 13, size[0])
    cols = reference_axis_matrix(kernel, antialias, size[1] / 6, 0.0, 6, size[1])
    expected = np.einsum("oh,bhwc,pw->bopc", rows, x, cols)
    got = ef.image.resize(x, list(size), method=kernel, antialias=antialias).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # With a translation the samples past an edge are zero pixels.
    rows = reference_axis_matrix(kernel, antialias, 0.7, 2.5, 13, 9)
    cols = reference_axis_matrix(kernel, antialias, 1.9, -1.0, 6, 10)
    expected = np.einsum("oh,bhwc,pw->bopc", rows, x, cols)
    got = ef.image.scale_and_translate(x, [9, 10], [0.7, 1.9], [2.5, -1.0], kernel, antialias).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_dtypes_and_aspect_ratio():
    img = np.arange(2 * 6 * 3, dtype=np.uint8).reshape(2, 6, 3)
    for method in ["bilinear", "bicubic", "area", "lanczos3"]:
        assert ef.image.resize(img, [4, 4], method=method).dtype == ef.float32
    assert ef.image.resize(img, [4, 4], method="nearest").dtype == ef.uint8
    assert ef.image.resize(img.astype(np.float16), [4, 4]).dtype == ef.float32
    assert ef.image.resize(img.astype(np.float64), [4, 4], method="area").dtype == ef.float64
    assert ef.image.resize(img, [3, 3], preserve_aspect_ratio=True).shape == (1, 3, 3)


def test_bad_requests_are_refused():
    with pytest.raises(ef.errors.InvalidArgumentError, match="cubic"):
        ef.image.resize(ef.zeros([1, 2, 2, 1]), [3, 3], method="cubic")
    with pytest.raises(ef.errors.InvalidArgumentError, match="size"):
        ef.image.resize(ef.zeros([1, 2, 2, 1]), [0, 3])
    with pytest.raises(ef.errors.InvalidArgumentError, match="kernel_type"):
        ef.image.scale_and_translate(ef.zeros([1, 2, 2, 1]), [3, 3], [1, 1], [0, 0], "cubic")


def reference_crop_and_resize(image, boxes, box_indices, crop_size, method, extrapolation_value):
    """TensorFlow's CropAndResize kernel (crop_and_resize_op.cc), in float64."""
    _, height, width, channels = image.shape
    crop_h, crop_w = crop_size
    out = np.empty((len(boxes), crop_h, crop_w, channels))
    for b, (y1, x1, y2, x2) in enumerate(boxes):
        img = image[box_indices[b]]
        h_scale = (y2 - y1) * (height - 1) / (crop_h - 1) if crop_h > 1 else 0
        w_scale = (x2 - x1) * (width - 1) / (crop_w - 1) if crop_w > 1 else 0
        for y in range(crop_h):
            in_y = y1 * (height - 1) + y * h_scale if crop_h > 1 else 0.5 * (y1 + y2) * (height - 1)
            for x in range(crop_w):
                in_x = x1 * (width - 1) + x * w_scale if crop_w > 1 else 0.5 * (x1 + x2) * (width - 1)
                if not (0 <= in_y <= height - 1 and 0 <= in_x <= width - 1):
                    out[b, y, x] = extrapolation_value
                elif method == "nearest":
                    out[b, y, x] = img[int(math.floor(in_y + 0.5)), int(math.floor(in_x + 0.5))]
                else:
                    t, bt, l, r = math.floor(in_y), math.ceil(in_y), math.floor(in_x), math.ceil(in_x)
                    yl, xl = in_y - t, in_x - l
                    top = img[t, l] + (img[t, r] - img[t, l]) * xl
                    bottom = img[bt, l] + (img[bt, r] - img[bt, l]) * xl
                    out[b, y, x] = top + (bottom - top) * yl
    return out


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("crop_size", [(5, 4), (1, 3), (1, 1)])
def test_crop_and_resize_matches_tensorflows_kernel(method, crop_size):
    rng = np.random.default_rng(6)
    image = rng.standard_normal((3, 7, 6, 2))
    boxes = np.concatenate([rng.uniform(-0.2, 1.2, (6, 4)), [[0, 0, 1, 1], [1, 1, 0, 0]]])
    box_indices = np.array([0, 2, 1, 1, 0, 2, 1, 0], dtype=np.int32)
    got = ef.image.crop_and_resize(image, boxes, box_indices, crop_size, method=method, extrapolation_value=-3.0)
    assert got.dtype == ef.float64
    expected = reference_crop_and_resize(image, boxes, box_indices, crop_size, method, -3.0)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)
    as_float32 = ef.image.crop_and_resize(image.astype(np.uint8), boxes.astype(np.float32), box_indices, crop_size)
    assert as_float32.dtype == ef.float32 and as_float32.shape == (8,) + crop_size + (2,)


def test_crop_and_resize_gradient_of_the_boxes_matches_finite_differences():
    rng = np.random.default_rng(7)
    image = rng.standard_normal((1, 5, 5, 1))
    boxes = np.array([[0.13, 0.21, 0.77, 0.9]])
    b = ef.constant(boxes)
    with ef.GradientTape() as tape:
        tape.watch(b)
        loss = ef.reduce_sum(ef.square(ef.image.crop_and_resize(image, b, [0], [3, 3])))
    grad = tape.gradient(loss, b).numpy()
    f = lambda bx: np.sum(reference_crop_and_resize(image, bx, [0], (3, 3), "bilinear", 0.0) ** 2)
    eps = 1e-6
    for k in range(4):
        d = np.zeros_like(boxes)
        d[0, k] = eps
        np.testing.assert_allclose(grad[0, k], (f(boxes + d) - f(boxes - d)) / (2 * eps), rtol=1e-6, atol=1e-8)


def test_nearest_picks_tensorflows_pixel_where_the_sample_is_a_whole_number():
    # (o + 0.5) * in / out is an integer for o = 5 of 26 -> 11 and 30 -> 11; float32 (as
    # TensorFlow and PyTorch compute it) and double can land on either side of it.
    for n_in in range(1, 65):
        x = np.arange(n_in, dtype=np.float32).reshape(1, 1, n_in, 1)
        for n_out in range(1, 65):
            got = ef.image.resize(x, [1, n_out], method="nearest").numpy().ravel()
            expected = torch_resize(torch.tensor(x), (1, n_out), "nearest").numpy().ravel()
            np.testing.assert_array_equal(got, expected, err_msg=f"{n_in} -> {n_out}")


def test_resizing_inside_functions_with_unknown_sizes():
    @ef.function(input_signature=[ef.TensorSpec([None, 5, 6, 3], ef.float32)])
    def gradient(images):
        with ef.GradientTape() as tape:
            tape.watch(images)
            loss = ef.reduce_sum(ef.square(ef.image.resize(images, [3, 4], method="bicubic")))
            loss += ef.reduce_sum(ef.image.resize(images, [7, 2], method="lanczos3", antialias=True))
        return tape.gradient(loss, images)

    x = np.random.default_rng(8).random((2, 5, 6, 3)).astype(np.float32)
    eager = ef.constant(x)
    with ef.GradientTape() as tape:
        tape.watch(eager)
        loss = ef.reduce_sum(ef.square(ef.image.resize(eager, [3, 4], method="bicubic")))
        loss += ef.reduce_sum(ef.image.resize(eager, [7, 2], method="lanczos3", antialias=True))
    np.testing.assert_allclose(gradient(x).numpy(), tape.gradient(loss, eager).numpy(), rtol=1e-6)

    @ef.function(input_signature=[ef.TensorSpec([2, 5, 6, 2], ef.float32), ef.TensorSpec([None, 4], ef.float32),
                                  ef.TensorSpec([None], ef.int32)])
    def crops(image, boxes, indices):
        return ef.image.crop_and_resize(image, boxes, indices, [4, 3])

    image, boxes = np.random.default_rng(9).random((2, 5, 6, 2)).astype(np.float32), np.array(
        [[0.1, 0.2, 0.9, 0.7], [0.0, 0.0, 1.0, 1.0], [0.5, 0.5, 0.2, 0.1]], np.float32)
    expected = ef.image.crop_and_resize(image, boxes, np.array([0, 1, 1]), [4, 3])  # int64 indices
    np.testing.assert_allclose(crops(image, boxes, np.array([0, 1, 1], np.int32)).numpy(), expected.numpy())


def test_odd_shapes_stay_cheap_and_typed():
    # A tall image made wide passes through the smaller intermediate.
    tall = ef.image.resize(np.ones((1, 10000, 1, 1), np.float32), [1, 10000])
    assert tall.shape == (1, 1, 10000, 1) and float(ef.reduce_max(ef.abs(tall - 1.0))) < 1e-6
    # No pixels to compute: no maps built either.
    assert ef.image.resize(np.zeros((0, 4, 4, 1), np.float32), [2**31, 1], "nearest").shape == (0, 2**31, 1, 1)
    assert ef.image.scale_and_translate(np.ones((1, 2, 2, 1), np.uint8), [3, 3], [1.5, 1.5], [0, 0]).dtype == \
        ef.float32
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"got \[-1, 2\]"):
        ef.image.resize(ef.zeros([1, 2, 2, 1]), [-1, 2])
