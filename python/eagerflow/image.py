"""ef.image: image operations (tf.image).

Images are [height, width, channels] or [batch, height, width, channels]. Integer
images span [0, dtype.max], float images [0, 1] (convert_image_dtype moves between
them); the adjustments compute in float32 and convert back, as TensorFlow's do.
"""
from eagerflow import _core
from eagerflow.io import decode_image, decode_jpeg, decode_png, encode_png  # noqa: F401 (tf.image has them too)

__all__ = ["resize", "ResizeMethod", "flip_left_right", "flip_up_down", "rot90", "convert_image_dtype",
           "adjust_brightness", "adjust_contrast", "per_image_standardization", "rgb_to_grayscale",
           "decode_image", "decode_jpeg", "decode_png", "encode_png"]


def flip_left_right(image):
    """The image mirrored left to right (its width axis reversed).

    >>> ef.image.flip_left_right(ef.reshape(ef.range(3), [1, 3, 1]))[0, :, 0].numpy()
    array([2, 1, 0], dtype=int32)
    """
    return _core._flip_left_right(image)


def flip_up_down(image):
    """The image mirrored top to bottom (its height axis reversed).

    >>> ef.image.flip_up_down(ef.reshape(ef.range(3), [3, 1, 1]))[:, 0, 0].numpy()
    array([2, 1, 0], dtype=int32)
    """
    return _core._flip_up_down(image)


def rot90(image, k=1, name=None):
    """The image turned ``k`` quarter turns counter-clockwise (k may be negative).

    As np.rot90 over the height and width axes of [h, w, c] or [n, h, w, c] images.

    >>> ef.image.rot90(ef.reshape(ef.range(4), [2, 2, 1]))[..., 0].numpy()
    array([[1, 3],
           [0, 2]], dtype=int32)
    """
    return _core._rot90(image, int(k))


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """The image in ``dtype``, its values rescaled: integer images span [0, max], float
    images [0, 1] (uint8 255 becomes 1.0; 1.0 becomes uint8 255). Float to integer
    always saturates in eagerflow, so ``saturate`` changes nothing."""
    return _core._convert_image_dtype(image, dtype, bool(saturate))


def adjust_brightness(image, delta):
    """Adds ``delta`` to every value, on the [0, 1] scale of float images.

    Integer images are converted to float32 (convert_image_dtype), adjusted and
    converted back, saturating, as TensorFlow does.
    """
    return _core._adjust_brightness(image, float(delta))


def adjust_contrast(images, contrast_factor):
    """Scales each value's distance to its channel's mean by ``contrast_factor``.

    The mean of each channel is over each image's pixels; integer images are adjusted
    in float32 and converted back, saturating, as TensorFlow does.
    """
    return _core._adjust_contrast(images, float(contrast_factor))


def per_image_standardization(image):
    """Scales each image to mean 0 and variance 1, in float32.

    Computes (x - mean) / max(stddev, 1 / sqrt(N)) over each image's N = height *
    width * channels values, so a flat image gives zeros, not NaN.
    """
    return _core._per_image_standardization(image)


def rgb_to_grayscale(images, name=None):
    """Converts RGB images to one grey channel, in their own dtype.

    Grey is 0.2989 R + 0.5870 G + 0.1140 B, computed in float32 as TensorFlow does.
    """
    return _core._rgb_to_grayscale(images)


class ResizeMethod:
    """The methods resize supports, under tf.image.ResizeMethod's names.

    BILINEAR is "bilinear" and NEAREST_NEIGHBOR is "nearest"; both strings work too.
    """
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False, name=None):
    """Resizes images to `size` (tf.image.resize).

    Half-pixel centers and no antialiasing, as TensorFlow 2: output pixel o samples the
    input at (o + 0.5) * in / out - 0.5, which is PyTorch's interpolate with
    align_corners=False (mode "bilinear", or "nearest-exact" for "nearest").

    >>> ef.image.resize(ef.reshape(ef.constant([0.0, 2.0]), [1, 2, 1]), [1, 4])[0, :, 0].numpy()
    array([0. , 0.5, 1.5, 2. ], dtype=float32)

    Args:
      images: A tensor-like of shape [batch, height, width, channels] or [height,
        width, channels].
      size: [new_height, new_width], positive integers.
      method: "bilinear" or "nearest" (ResizeMethod.BILINEAR / NEAREST_NEIGHBOR).
      preserve_aspect_ratio, antialias: Only False is supported.
      name: Ignored (TensorFlow compatibility).

    Returns:
      The resized images: float32 for "bilinear" unless images are float64
      (TensorFlow's rule), the images' dtype for "nearest".

    Raises:
      InvalidArgumentError: images of another rank, or a bad size.
      UnimplementedError: another method, preserve_aspect_ratio or antialias.
    """
    from eagerflow import errors
    if preserve_aspect_ratio or antialias:
        raise errors.UnimplementedError("image.resize: preserve_aspect_ratio and antialias are not supported")
    if method not in (ResizeMethod.BILINEAR, ResizeMethod.NEAREST_NEIGHBOR):
        raise errors.UnimplementedError(
            f"image.resize: method {method!r} is not supported; use 'bilinear' or 'nearest'")
    images = _core.convert_to_tensor(images)
    single = images.ndim == 3
    if single:
        images = _core.expand_dims(images, 0)
    if method == ResizeMethod.BILINEAR and images.dtype not in (_core.float32, _core.float64):
        images = _core.cast(images, _core.float32)
    size = [int(s) for s in (size.numpy().tolist() if hasattr(size, "numpy") else size)]
    out = _core._resize_images(images, size, method)
    return _core.squeeze(out, [0]) if single else out
