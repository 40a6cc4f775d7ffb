"""ef.image: image operations (tf.image).

Images are [height, width, channels] or [batch, height, width, channels]. Integer
images span [0, dtype.max], float images [0, 1] (convert_image_dtype moves between
them); the adjustments compute in float32 and convert back, as TensorFlow's do.
"""
from eagerflow import _core
from eagerflow.io import decode_image, decode_jpeg, decode_png, encode_png  # noqa: F401 (tf.image has them too)

__all__ = ["resize", "ResizeMethod", "flip_left_right", "flip_up_down", "rot90", "convert_image_dtype",
           "adjust_brightness", "adjust_contrast", "per_image_standardization", "rgb_to_grayscale",
           "decode_image", "decode_jpeg", "decode_png", "encode_png", "scale_and_translate",
           "crop_and_resize"]


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

    Each constant is the string resize takes ("bilinear", "nearest", ...); the strings
    work as well.
    """
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False, name=None):
    """Resizes images to `size` (tf.image.resize).

    Half-pixel centers, as TensorFlow 2: output pixel o samples the input at
    (o + 0.5) * in / out - 0.5. "bilinear" and "nearest" are PyTorch's interpolate with
    align_corners=False ("bilinear", "nearest-exact"); "bicubic" is Keys' cubic with
    a = -0.5 whose taps outside the image drop out (the rest renormalized); "area"
    averages the input area each output pixel covers; "lanczos3", "lanczos5",
    "gaussian" and "mitchellcubic" are windowed kernels.

    >>> ef.image.resize(ef.reshape(ef.constant([0.0, 2.0]), [1, 2, 1]), [1, 4])[0, :, 0].numpy()
    array([0. , 0.5, 1.5, 2. ], dtype=float32)

    Args:
      images: A tensor-like of shape [batch, height, width, channels] or [height,
        width, channels].
      size: [new_height, new_width], positive integers.
      method: One of ResizeMethod's strings.
      preserve_aspect_ratio: Scale both axes by one factor, the largest that fits
        inside size.
      antialias: When downscaling, widen the kernel so that every input pixel counts
        (bilinear, bicubic and the windowed kernels; PyTorch's antialias=True).
      name: Ignored (TensorFlow compatibility).

    Returns:
      The resized images: the images' dtype for "nearest"; otherwise float64 for
      float64 images and float32 for every other dtype.

    Raises:
      InvalidArgumentError: images of another rank, a bad size or an unknown method.
    """
    size = [int(s) for s in (size.numpy().tolist() if hasattr(size, "numpy") else size)]
    return _core._resize_images(images, size, method, antialias, preserve_aspect_ratio)


def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear", extrapolation_value=0.0,
                    name=None):
    """Crops boxes out of a batch of images and resizes each crop (tf.image.crop_and_resize).

    Box b is [y1, x1, y2, x2] in normalized coordinates (0 and 1 are the first and the
    last pixel's centers) over image box_indices[b]; crop row y samples the image at
    y1 * (H - 1) + y * (y2 - y1) * (H - 1) / (crop_height - 1), columns likewise.

    Args:
      image: [batch, height, width, channels], any numeric dtype.
      boxes: [num_boxes, 4] float boxes; y1 > y2 flips a crop upside down.
      box_indices: [num_boxes] integers in [0, batch).
      crop_size: [crop_height, crop_width], positive integers.
      method: "bilinear" or "nearest".
      extrapolation_value: The value of samples outside the image.
      name: Ignored (TensorFlow compatibility).

    Returns:
      [num_boxes, crop_height, crop_width, channels]: float64 for float64 images,
      float32 otherwise; differentiable in image and boxes.
    """
    crop_size = [int(s) for s in (crop_size.numpy().tolist() if hasattr(crop_size, "numpy") else crop_size)]
    return _core._crop_and_resize(image, boxes, box_indices, crop_size, method, float(extrapolation_value))


def scale_and_translate(images, size, scale, translate, kernel_type="lanczos3", antialias=True):
    """Resamples images with a scale and an offset (TensorFlow's ScaleAndTranslate).

    Output pixel (y, x) samples the input at ((y + 0.5 - translate[0]) / scale[0],
    (x + 0.5 - translate[1]) / scale[1]); the kernel's taps inside the image are
    renormalized to sum to 1, and samples outside it give 0.

    Args:
      images: A float tensor-like of shape [batch, height, width, channels].
      size: [new_height, new_width], positive integers.
      scale: [scale_y, scale_x], positive.
      translate: [translate_y, translate_x], in output pixels.
      kernel_type: "lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle",
        "keyscubic" or "mitchellcubic".
      antialias: Widen the kernel by 1 / scale when downscaling.

    Returns:
      A tensor [batch, new_height, new_width, channels] of the images' dtype.
    """
    return _core._scale_and_translate(images, [int(s) for s in size], [float(s) for s in scale],
                                      [float(t) for t in translate], kernel_type, antialias)
