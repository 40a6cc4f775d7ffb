"""ef.signal: Fourier transforms, framing, windows and short-time Fourier transforms (tf.signal).

The transforms work on the innermost axis (two for fft2d), compute in double precision
and are differentiable: the gradient of a real loss in a complex tensor is
dL/dreal + i dL/dimag, as in TensorFlow and PyTorch.
"""
from eagerflow import _core

__all__ = ["fft", "ifft", "fft2d", "ifft2d", "rfft", "irfft", "frame", "overlap_and_add", "hann_window",
           "hamming_window", "stft", "inverse_stft", "inverse_stft_window_fn"]


def fft(input, name=None):
    """The discrete Fourier transform of the innermost axis, sum_k x_k e^(-2 pi i jk / n).

    >>> ef.signal.fft(ef.complex([1., 0., 0., 0.], [0., 0., 0., 0.])).numpy()
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)

    Args:
      input: A complex64 or complex128 tensor-like with at least one axis.
      name: Ignored (TensorFlow compatibility).

    Returns:
      A Tensor of input's dtype and shape.
    """
    return _core.signal_fft(input)


def ifft(input, name=None):
    """The inverse of fft over the innermost axis: (1/n) sum_k x_k e^(+2 pi i jk / n).

    >>> ef.signal.ifft(ef.complex([4., 0.], [0., 0.])).numpy()
    array([2.+0.j, 2.+0.j], dtype=complex64)
    """
    return _core.signal_ifft(input)


def fft2d(input, name=None):
    """The discrete Fourier transform of the two innermost axes.

    >>> ef.signal.fft2d(ef.complex(ef.ones([2, 2]), ef.zeros([2, 2]))).numpy()
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    return _core.signal_fft2d(input)


def ifft2d(input, name=None):
    """The inverse of fft2d over the two innermost axes.

    >>> ef.signal.ifft2d(ef.complex([[4., 0.], [0., 0.]], ef.zeros([2, 2]))).numpy()
    array([[1.+0.j, 1.+0.j],
           [1.+0.j, 1.+0.j]], dtype=complex64)
    """
    return _core.signal_ifft2d(input)


def rfft(input_tensor, fft_length=None, name=None):
    """The Fourier transform of a real signal: its fft_length // 2 + 1 non-negative frequencies.

    The innermost axis is cropped or zero-padded to fft_length (default: its length).

    >>> ef.signal.rfft([1., 2., 3., 4.]).numpy()
    array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)

    Args:
      input_tensor: A float32 or float64 tensor-like (float32 gives complex64).
      fft_length: None, an int, or a list or tensor of one int.
      name: Ignored (TensorFlow compatibility).
    """
    return _core.signal_rfft(input_tensor, fft_length)


def irfft(input_tensor, fft_length=None, name=None):
    """The real signal of length fft_length whose rfft is input_tensor.

    fft_length defaults to 2 * (m - 1) for m frequencies; the frequencies are cropped
    or zero-padded to fft_length // 2 + 1.

    >>> ef.signal.irfft(ef.signal.rfft([1., 2., 3., 4.])).numpy()
    array([1., 2., 3., 4.], dtype=float32)
    """
    return _core.signal_irfft(input_tensor, fft_length)


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Frames of frame_length samples every frame_step samples along axis.

    The axis becomes two, [frames, frame_length]. With pad_end the signal is padded with
    pad_value so that there are ceil(length / frame_step) frames.

    >>> ef.signal.frame([1, 2, 3, 4, 5], 3, 2).numpy()
    array([[1, 2, 3],
           [3, 4, 5]], dtype=int32)
    """
    return _core.signal_frame(signal, frame_length, frame_step, pad_end, float(pad_value), axis)


def overlap_and_add(signal, frame_step, name=None):
    """The frames of signal [..., frames, frame_length], frame_step apart, added up.

    >>> ef.signal.overlap_and_add([[1., 1., 1.], [1., 1., 1.]], 2).numpy()
    array([1., 1., 2., 1., 1.], dtype=float32)
    """
    return _core.signal_overlap_and_add(signal, frame_step)


def hann_window(window_length, periodic=True, dtype=None, name=None):
    """The Hann window 0.5 - 0.5 cos(2 pi n / N), N = window_length (periodic) or window_length - 1.

    >>> ef.signal.hann_window(4).numpy()
    array([0. , 0.5, 1. , 0.5], dtype=float32)
    """
    return _core.signal_hann_window(window_length, periodic, dtype)


def hamming_window(window_length, periodic=True, dtype=None, name=None):
    """The Hamming window 0.54 - 0.46 cos(2 pi n / N), N as for hann_window.

    >>> ef.signal.hamming_window(4).numpy()
    array([0.08, 0.54, 1.  , 0.54], dtype=float32)
    """
    return _core.signal_hamming_window(window_length, periodic, dtype)


def _window(window_fn, frame_length, dtype):
    """The window tensor for window_fn (None: no window, ones)."""
    if window_fn is None:
        return _core.ones([frame_length], dtype)
    return window_fn(frame_length, dtype=dtype)


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window, pad_end=False, name=None):
    """The short-time Fourier transform of real signals [..., samples].

    Frames (see frame), each multiplied by window_fn(frame_length, dtype=...) (None: no
    window), through rfft of fft_length (default: the smallest power of 2 >= frame_length).

    >>> ef.signal.stft(ef.zeros([1024]), frame_length=256, frame_step=128).shape
    TensorShape([7, 129])

    Returns:
      A complex Tensor [..., frames, fft_length // 2 + 1].
    """
    signals = _core.convert_to_tensor(signals)
    window = _window(window_fn, frame_length, signals.dtype)
    return _core.signal_stft(signals, frame_length, frame_step, fft_length, window, pad_end)


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window, name=None):
    """The signals whose stft is stfts: each frame's irfft, windowed, overlapped and added.

    For a perfect reconstruction pass window_fn=inverse_stft_window_fn(frame_step).

    >>> x = ef.random.normal([1024], seed=1)
    >>> s = ef.signal.stft(x, 256, 64)
    >>> y = ef.signal.inverse_stft(s, 256, 64, window_fn=ef.signal.inverse_stft_window_fn(64))
    >>> bool(ef.reduce_max(ef.abs(y[256:-256] - x[256:-256])) < 1e-5)
    True
    """
    stfts = _core.convert_to_tensor(stfts)
    window = _window(window_fn, frame_length, stfts.dtype.real_dtype)
    return _core.signal_inverse_stft(stfts, frame_length, frame_step, fft_length, window)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """A window function for inverse_stft that undoes stft with forward_window_fn.

    >>> fn = ef.signal.inverse_stft_window_fn(2)
    >>> fn(4, dtype=ef.float32).numpy()
    array([0., 1., 1., 1.], dtype=float32)
    """
    def window_fn(frame_length, dtype=None):
        dtype = _core.float32 if dtype is None else dtype
        forward = None if forward_window_fn is None else _window(forward_window_fn, frame_length, dtype)
        if forward is None:
            forward = _core.ones([frame_length], dtype)
        return _core.signal_inverse_stft_window(frame_length, frame_step, forward, dtype)

    return window_fn
