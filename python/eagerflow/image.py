"""ef.image: image operations (tf.image)."""
from eagerflow import _core

__all__ = ["resize", "ResizeMethod"]


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
