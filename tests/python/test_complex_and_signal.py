"""Complex tensors and ef.signal against PyTorch (torch.complex, torch.fft, torch.stft):
values, gradients through both parts, NumPy and DLPack, functions, and bad input."""
import numpy as np
import pytest
import torch

import eagerflow as ef


def _pair(shape, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)


def _loss_ef(z):
    re, im = ef.math.real(z), ef.math.imag(z)
    return ef.reduce_sum(re * re) + ef.reduce_sum(im * (re + 0.5))


def _loss_torch(z):
    return (z.real * z.real).sum() + (z.imag * (z.real + 0.5)).sum()


def _grads(f_ef, f_torch, *parts):
    """Gradients of the same real loss in each real input, in eagerflow and in PyTorch."""
    ef_parts = [ef.constant(p) for p in parts]
    with ef.GradientTape() as tape:
        for p in ef_parts:
            tape.watch(p)
        ef_loss = f_ef(*ef_parts)
    ef_grads = tape.gradient(ef_loss, ef_parts)
    torch_parts = [torch.tensor(p, requires_grad=True) for p in parts]
    torch_loss = f_torch(*torch_parts)
    torch_loss.backward()
    return ef_loss, ef_grads, torch_loss, [p.grad for p in torch_parts]


def _assert_grads_match(f_ef, f_torch, *parts, rtol=1e-10):
    ef_loss, ef_grads, torch_loss, torch_grads = _grads(f_ef, f_torch, *parts)
    np.testing.assert_allclose(ef_loss.numpy(), torch_loss.detach().numpy(), rtol=rtol)
    for mine, theirs in zip(ef_grads, torch_grads):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=rtol, atol=1e-12)


def test_dtypes_numpy_and_python_numbers():
    z = ef.constant(np.array([1 + 2j, -3.5j], dtype=np.complex64))
    assert z.dtype == ef.complex64 and z.dtype.is_complex and z.dtype.real_dtype == ef.float32
    np.testing.assert_array_equal(z.numpy(), np.array([1 + 2j, -3.5j], dtype=np.complex64))
    assert ef.constant(1 + 2j).dtype == ef.complex128  # Python complex numbers, as TensorFlow
    assert ef.constant([1j, 2], dtype=ef.complex64).dtype == ef.complex64
    assert complex(ef.constant(1 + 2j).numpy()) == 1 + 2j
    np.testing.assert_array_equal((z * 2).numpy(), z.numpy() * 2)
    np.testing.assert_array_equal((z + 1j).numpy(), z.numpy() + np.complex64(1j))
    np.testing.assert_allclose((2 / z).numpy(), 2 / z.numpy(), rtol=1e-6)
    assert "1.+2.j" in repr(z) and "complex64" in repr(z)
    assert ef.cast(z, ef.float32).numpy().tolist() == [1.0, 0.0]  # the real part
    assert ef.complex64.max == np.finfo(np.float32).max


def test_dlpack_with_torch_both_ways():
    re, im = _pair([3, 4], 0)
    z = ef.complex(re, im)
    t = torch.from_dlpack(z)
    assert t.dtype == torch.complex128
    np.testing.assert_array_equal(t.numpy(), re + 1j * im)
    back = ef.from_dlpack(torch.complex(torch.ones(2), torch.zeros(2)))
    assert back.dtype == ef.complex64
    np.testing.assert_array_equal(back.numpy(), np.ones(2, np.complex64))


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
def test_arithmetic_and_its_gradients_match_torch(op):
    a, b = _pair([2, 3], 1)
    c, d = _pair([3], 2)
    ef_op, torch_op = getattr(ef, op), getattr(torch, {"subtract": "sub", "multiply": "mul", "divide": "div"}.get(op, op))
    za, zb = ef.complex(a, b), ef.complex(c, d)
    expected = torch_op(torch.complex(torch.tensor(a), torch.tensor(b)), torch.complex(torch.tensor(c), torch.tensor(d)))
    np.testing.assert_allclose(ef_op(za, zb).numpy(), expected.numpy(), rtol=1e-12)
    _assert_grads_match(lambda a, b, c, d: _loss_ef(ef_op(ef.complex(a, b), ef.complex(c, d))),
                        lambda a, b, c, d: _loss_torch(torch_op(torch.complex(a, b), torch.complex(c, d))), a, b, c, d)


@pytest.mark.parametrize("name", ["abs", "angle", "conj", "exp", "log", "neg", "square", "sum", "mean", "matmul"])
def test_unary_ops_and_their_gradients_match_torch(name):
    a, b = _pair([3, 3], 3)
    ef_fns = {"abs": ef.abs, "angle": ef.math.angle, "conj": ef.math.conj, "exp": ef.exp, "log": ef.math.log,
              "neg": lambda z: -z, "square": ef.square, "sum": lambda z: ef.reduce_sum(z, axis=0),
              "mean": ef.reduce_mean, "matmul": lambda z: ef.matmul(z, z)}
    torch_fns = {"abs": torch.abs, "angle": torch.angle, "conj": lambda z: z.conj().resolve_conj(), "exp": torch.exp,
                 "log": torch.log, "neg": lambda z: -z, "square": lambda z: z * z, "sum": lambda z: z.sum(0),
                 "mean": torch.mean, "matmul": lambda z: z @ z}
    f, g = ef_fns[name], torch_fns[name]
    z = ef.complex(a, b)
    expected = g(torch.complex(torch.tensor(a), torch.tensor(b)))
    np.testing.assert_allclose(f(z).numpy(), expected.numpy(), rtol=1e-12)
    real_output = name in ("abs", "angle")
    _assert_grads_match(
        lambda a, b: ef.reduce_sum(f(ef.complex(a, b)) * a) if real_output else _loss_ef(f(ef.complex(a, b))),
        lambda a, b: (g(torch.complex(a, b)) * a).sum() if real_output else _loss_torch(g(torch.complex(a, b))), a, b)


@pytest.mark.parametrize("n", [1, 5, 16, 30, 49, 97, 254])
def test_fft_and_ifft_match_torch(n):
    a, b = _pair([2, n], n)
    z = ef.complex(a, b)
    tz = torch.complex(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(ef.signal.fft(z).numpy(), torch.fft.fft(tz).numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ef.signal.ifft(z).numpy(), torch.fft.ifft(tz).numpy(), rtol=1e-10, atol=1e-12)
    single = ef.signal.fft(ef.cast(z, ef.complex64))
    assert single.dtype == ef.complex64
    np.testing.assert_allclose(single.numpy(), torch.fft.fft(tz.to(torch.complex64)).numpy(), rtol=1e-4, atol=1e-4)
    _assert_grads_match(lambda a, b: _loss_ef(ef.signal.fft(ef.complex(a, b))),
                        lambda a, b: _loss_torch(torch.fft.fft(torch.complex(a, b))), a, b)
    _assert_grads_match(lambda a, b: _loss_ef(ef.signal.ifft(ef.complex(a, b))),
                        lambda a, b: _loss_torch(torch.fft.ifft(torch.complex(a, b))), a, b)


@pytest.mark.parametrize("length,fft_length", [(8, None), (9, None), (9, 6), (5, 12), (1, None)])
def test_rfft_and_irfft_match_torch(length, fft_length):
    x, _ = _pair([3, length], length)
    n = fft_length or length
    expected = torch.fft.rfft(torch.tensor(x), n=n).numpy()
    np.testing.assert_allclose(ef.signal.rfft(x, fft_length).numpy(), expected, rtol=1e-10, atol=1e-12)
    _assert_grads_match(lambda x: _loss_ef(ef.signal.rfft(x, fft_length)),
                        lambda x: _loss_torch(torch.fft.rfft(x, n=n)), x)
    a, b = _pair([2, length], length + 1)
    out_n = fft_length or 2 * (length - 1) or 2
    expected = torch.fft.irfft(torch.complex(torch.tensor(a), torch.tensor(b)), n=out_n).numpy()
    np.testing.assert_allclose(ef.signal.irfft(ef.complex(a, b), [out_n]).numpy(), expected, rtol=1e-10,
                               atol=1e-12)
    # PyTorch's irfft gradient treats the imaginary parts of bin 0 (and n/2) as inputs of
    # a Hermitian signal it then drops; both give them no gradient.
    _assert_grads_match(lambda a, b: ef.reduce_sum(ef.signal.irfft(ef.complex(a, b), [out_n]) ** 2),
                        lambda a, b: (torch.fft.irfft(torch.complex(a, b), n=out_n) ** 2).sum(), a, b)


def test_two_dimensional_transforms_match_torch():
    a, b = _pair([2, 3, 5], 4)
    tz = torch.complex(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(ef.signal.fft2d(ef.complex(a, b)).numpy(), torch.fft.fft2(tz).numpy(), rtol=1e-10)
    np.testing.assert_allclose(ef.signal.ifft2d(ef.complex(a, b)).numpy(), torch.fft.ifft2(tz).numpy(), rtol=1e-10)


def test_stft_matches_torch_and_inverts():
    x, _ = _pair([2, 1000], 5)
    s = ef.signal.stft(x, frame_length=128, frame_step=32)
    expected = torch.stft(torch.tensor(x), n_fft=128, hop_length=32, window=torch.hann_window(128, periodic=True,
                          dtype=torch.float64), center=False, return_complex=True).transpose(1, 2)
    np.testing.assert_allclose(s.numpy(), expected.numpy(), rtol=1e-10, atol=1e-10)
    y = ef.signal.inverse_stft(s, 128, 32, window_fn=ef.signal.inverse_stft_window_fn(32))
    np.testing.assert_allclose(y.numpy()[:, 128:-128], x[:, 128:y.shape[1] - 128], atol=1e-10)
    # A frame shorter than fft_length is zero-padded at its end, as TensorFlow does.
    short = ef.signal.stft(x[0], frame_length=100, frame_step=50, fft_length=128, window_fn=None)
    frames = np.stack([x[0, i * 50:i * 50 + 100] for i in range(19)])
    np.testing.assert_allclose(short.numpy(), np.fft.rfft(frames, 128), rtol=1e-10, atol=1e-10)


def test_stft_gradient_matches_torch_and_runs_in_functions():
    x, _ = _pair([300], 6)
    window = torch.hann_window(64, periodic=True, dtype=torch.float64)
    _assert_grads_match(lambda x: ef.reduce_sum(ef.abs(ef.signal.stft(x, 64, 16))),
                        lambda x: torch.stft(x, n_fft=64, hop_length=16, window=window, center=False,
                                             return_complex=True).abs().sum(), x)

    @ef.function
    def spectrogram_loss(signal):
        with ef.GradientTape() as tape:
            tape.watch(signal)
            loss = ef.reduce_sum(ef.abs(ef.signal.stft(signal, 64, 16)))
        return loss, tape.gradient(loss, signal)

    loss, grad = spectrogram_loss(ef.constant(x))
    eager_loss, eager_grad = _grads(lambda x: ef.reduce_sum(ef.abs(ef.signal.stft(x, 64, 16))),
                                    lambda x: x.sum(), x)[:2]
    np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), eager_grad[0].numpy(), rtol=1e-10, atol=1e-12)


def test_frames_windows_and_overlap_add_match_numpy():
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(ef.signal.frame(x, 4, 3).numpy(), [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    np.testing.assert_array_equal(ef.signal.frame(x, 4, 3, pad_end=True, pad_value=-1).numpy()[-1], [9, -1, -1, -1])
    np.testing.assert_allclose(ef.signal.hann_window(16).numpy(), torch.hann_window(16).numpy(), atol=1e-6)
    np.testing.assert_allclose(ef.signal.hamming_window(16, periodic=False).numpy(),
                               torch.hamming_window(16, periodic=False).numpy(), atol=1e-6)
    frames = np.ones([3, 4], np.float32)
    np.testing.assert_array_equal(ef.signal.overlap_and_add(frames, 2).numpy(), [1, 1, 2, 2, 2, 2, 1, 1])


def test_bad_input_is_a_clear_error():
    z = ef.complex([1.], [2.])
    with pytest.raises(ef.errors.UnimplementedError, match="sqrt.*complex64"):
        ef.sqrt(z)
    with pytest.raises(ef.errors.InvalidArgumentError, match="complex64.*float32"):
        z + ef.constant([1.])
    with pytest.raises(ef.errors.InvalidArgumentError, match="float32.*complex128"):
        ef.constant([1.]) + 1j
    with pytest.raises(ef.errors.InvalidArgumentError, match="fft.*float32"):
        ef.signal.fft([1., 2.])
    with pytest.raises(ef.errors.InvalidArgumentError, match="fft_length"):
        ef.signal.rfft([1., 2.], [2, 3])
    with pytest.raises(ef.errors.InvalidArgumentError, match="frame_step"):
        ef.signal.frame([1., 2.], 1, 0)
