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
           "crop_and_resize", "crop_to_bounding_box", "pad_to_bounding_box", "central_crop",
           "resize_with_crop_or_pad", "grayscale_to_rgb", "random_flip_left_right", "random_flip_up_down"]


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


def _hw(image, op):
    """The image as a tensor, and its height and width (rank 3 or 4, known sizes)."""
    image = _core.convert_to_tensor(image)
    if image.ndim not in (3, 4):
        raise ValueError(f"{op}: 'image' must have rank 3 or 4, got shape {tuple(image.shape)}")
    height, width = image.shape[-3], image.shape[-2]
    if height is None or width is None:
        raise ValueError(f"{op}: 'image' needs a known height and width, got shape {tuple(image.shape)}")
    return image, int(height), int(width)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The target_height x target_width window of image whose top left corner is at
    (offset_height, offset_width) (tf.image.crop_to_bounding_box).

    >>> ef.image.crop_to_bounding_box(np.arange(16.0).reshape(4, 4, 1), 1, 2, 2, 2)[..., 0].numpy()
    array([[ 6.,  7.],
           [10., 11.]])

    Raises:
      ValueError: a window that is empty or does not fit inside the image.
    """
    image, height, width = _hw(image, "crop_to_bounding_box")
    if min(offset_height, offset_width) < 0 or min(target_height, target_width) <= 0 or \
            offset_height + target_height > height or offset_width + target_width > width:
        raise ValueError(f"crop_to_bounding_box: the window at ({offset_height}, {offset_width}) of "
                         f"{target_height} x {target_width} does not fit in an image of {height} x {width}")
    begin = [0] * image.ndim
    size = [-1] * image.ndim
    begin[-3], begin[-2], size[-3], size[-2] = offset_height, offset_width, target_height, target_width
    return _core.slice(image, begin, size)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """image placed at (offset_height, offset_width) in a zero image of target_height x
    target_width (tf.image.pad_to_bounding_box).

    Raises:
      ValueError: negative offsets, or an image that does not fit.
    """
    image, height, width = _hw(image, "pad_to_bounding_box")
    after_height = target_height - offset_height - height
    after_width = target_width - offset_width - width
    if min(offset_height, offset_width, after_height, after_width) < 0:
        raise ValueError(f"pad_to_bounding_box: an image of {height} x {width} at ({offset_height}, "
                         f"{offset_width}) does not fit in {target_height} x {target_width}")
    paddings = [[0, 0]] * image.ndim
    paddings[-3], paddings[-2] = [offset_height, after_height], [offset_width, after_width]
    return _core.pad(image, paddings)


def central_crop(image, central_fraction):
    """The central part of image: central_fraction of its height and of its width
    (tf.image.central_crop, with TensorFlow's rounding of the offsets).

    Raises:
      ValueError: central_fraction outside (0, 1].
    """
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError(f"central_crop: central_fraction must be in (0, 1], got {central_fraction}")
    image, height, width = _hw(image, "central_crop")
    if central_fraction == 1.0:
        return image
    top = int((height - height * central_fraction) / 2)
    left = int((width - width * central_fraction) / 2)
    return crop_to_bounding_box(image, top, left, height - 2 * top, width - 2 * left)


def resize_with_crop_or_pad(image, target_height, target_width):
    """image centred in target_height x target_width: cropped where it is larger, padded
    with zeros where it is smaller (tf.image.resize_with_crop_or_pad).

    >>> ef.image.resize_with_crop_or_pad(np.ones((2, 4, 1)), 4, 2)[..., 0].numpy()
    array([[0., 0.],
           [1., 1.],
           [1., 1.],
           [0., 0.]])
    """
    image, height, width = _hw(image, "resize_with_crop_or_pad")
    if min(target_height, target_width) <= 0:
        raise ValueError(f"resize_with_crop_or_pad: the target must be positive, got {target_height} x "
                         f"{target_width}")
    crop_top, crop_left = max((height - target_height) // 2, 0), max((width - target_width) // 2, 0)
    cropped = crop_to_bounding_box(image, crop_top, crop_left, min(height, target_height), min(width, target_width))
    pad_top, pad_left = max((target_height - height) // 2, 0), max((target_width - width) // 2, 0)
    return pad_to_bounding_box(cropped, pad_top, pad_left, target_height, target_width)


def grayscale_to_rgb(images, name=None):
    """One grey channel repeated as three (tf.image.grayscale_to_rgb).

    Raises:
      ValueError: images whose last axis is not of size 1.
    """
    images = _core.convert_to_tensor(images)
    if images.ndim < 1 or images.shape[-1] != 1:
        raise ValueError(f"grayscale_to_rgb: the last axis must have size 1, got shape {tuple(images.shape)}")
    return _core.tile(images, [1] * (images.ndim - 1) + [3])


def _random_flip(image, seed, flip, op):
    from eagerflow import random
    image = _core.convert_to_tensor(image)
    if image.ndim == 3:
        coin = random.uniform([], seed=seed)
        return flip(image) if float(coin) < 0.5 else image
    if image.ndim != 4:
        raise ValueError(f"{op}: 'image' must have rank 3 or 4, got shape {tuple(image.shape)}")
    # Each image of a batch on its own coin.
    coins = random.uniform([int(image.shape[0]), 1, 1, 1], seed=seed) < 0.5
    return _core.where(coins, flip(image), image)


def random_flip_left_right(image, seed=None):
    """image mirrored left to right with probability 1/2, each image of a batch on its
    own (tf.image.random_flip_left_right)."""
    return _random_flip(image, seed, flip_left_right, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """image mirrored top to bottom with probability 1/2, each image of a batch on its
    own (tf.image.random_flip_up_down)."""
    return _random_flip(image, seed, flip_up_down, "random_flip_up_down")
