"""float16 and bfloat16 (Note [half-precision dtypes] in eagerflow/core/half.h).

Conversions are checked bit for bit against PyTorch: every one of the 65,536 patterns
half -> float32, and float32 -> half on every half value, every midpoint between
neighbours, the floats just either side of each midpoint, and a spread of random bit
patterns. Ops are checked against torch in float64 on the very same (already rounded)
inputs, with tolerances fitted to the dtype:

  eps: the spacing of the dtype at 1 (float16 2^-10, bfloat16 2^-7).
  values: eagerflow computes each op in float32 and rounds once to nearest, an error
    of at most eps/2 relative (plus float32's, ~1e-7): rtol = eps; atol = 1e-5 covers
    results near zero (float16's subnormals are 6e-8 apart).
  gradients: a gradient formula chains 2-5 ops, each rounding to the half dtype, and
    the seed dy is itself rounded: rtol = 8 eps, and an absolute floor of 8 eps times
    the largest reference gradient for entries that cancel.
  matmul / reductions / softmax: accumulated in float32 and rounded once: as values,
    with the absolute floor scaled by the sum of |terms|.
"""
import numpy as np
import pytest
import torch

import eagerflow as ef
import safetensors_reference as ref
from test_ops_vs_torch import BINARY, NONZERO, UNARY, rand, rand_nonzero

HALVES = [ef.float16, ef.bfloat16]
TORCH = {ef.float16: torch.float16, ef.bfloat16: torch.bfloat16}
EPS = {ef.float16: 2.0 ** -10, ef.bfloat16: 2.0 ** -7}
halves = pytest.mark.parametrize("dtype", HALVES, ids=["float16", "bfloat16"])


@pytest.fixture
def rng(request):
    import zlib
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def bits_of(t):
    """The raw 16-bit patterns of an eagerflow half tensor, through DLPack into torch."""
    return torch.from_dlpack(t).view(torch.int16).numpy().view(np.uint16)


def from_bits(bits, dtype):
    """An eagerflow tensor holding the 16-bit patterns `bits`, through DLPack from torch."""
    return ef.from_dlpack(torch.from_numpy(bits.view(np.int16)).view(TORCH[dtype]))


# ---------------------------------------------------------------------------------
# Conversions, bit for bit

ALL_PATTERNS = np.arange(65536, dtype=np.uint32).astype(np.uint16)


@halves
def test_every_pattern_widens_as_torch(dtype):
    ours = ef.cast(from_bits(ALL_PATTERNS, dtype), ef.float32).numpy().view(np.uint32)
    theirs = torch.from_numpy(ALL_PATTERNS.view(np.int16)).view(TORCH[dtype]).float().numpy().view(np.uint32)
    np.testing.assert_array_equal(ours, theirs)


def float32_probes(dtype, rng):
    """Every half value, every midpoint between neighbours, the floats either side of
    each midpoint, and random float32 bit patterns (NaNs and infs included)."""
    wide = torch.from_numpy(ALL_PATTERNS.view(np.int16)).view(TORCH[dtype]).double().numpy()
    finite = np.sort(wide[np.isfinite(wide)])
    mid = ((finite[:-1] + finite[1:]) / 2).astype(np.float32)  # exact: 11 or 8 significant bits + 1
    probes = [finite.astype(np.float32), mid, np.nextafter(mid, np.float32(-np.inf)),
              np.nextafter(mid, np.float32(np.inf)), rng.integers(0, 2**32, 200_000, dtype=np.uint64)
              .astype(np.uint32).view(np.float32), np.array([np.inf, -np.inf, 1e30, -1e30, 65519.99, 65520], np.float32)]
    return np.concatenate(probes)


@halves
def test_float32_rounds_to_half_as_torch(dtype, rng):
    values = float32_probes(dtype, rng)
    ours = bits_of(ef.cast(ef.constant(values), dtype))
    theirs = torch.from_numpy(values).to(TORCH[dtype]).view(torch.int16).numpy().view(np.uint16)
    nan = np.isnan(values)
    np.testing.assert_array_equal(ours[~nan], theirs[~nan])
    # NaN stays NaN. torch's vectorized and scalar bfloat16 paths disagree on the
    # pattern (0xffff and 0x7fc0); eagerflow gives the canonical quiet NaN of the sign.
    widened = ef.cast(from_bits(ours[nan], dtype), ef.float32).numpy()
    assert np.isnan(widened).all()


def test_float16_matches_numpy_both_ways():
    halves_np = ALL_PATTERNS.view(np.float16)
    t = ef.constant(halves_np)
    assert t.dtype == ef.float16
    np.testing.assert_array_equal(t.numpy().view(np.uint16), ALL_PATTERNS)  # no copy changes bits
    finite = np.isfinite(halves_np)
    wide = halves_np[finite].astype(np.float32)
    np.testing.assert_array_equal(ef.cast(ef.constant(wide), ef.float16).numpy(), halves_np[finite])
    # A Python float converts in one rounding, straight to float16.
    assert ef.constant(0.1, dtype=ef.float16).numpy() == np.float16(0.1)


def test_bfloat16_has_no_numpy_dtype_and_says_how_to_get_one():
    t = ef.cast(ef.constant([1.5, 0.1]), ef.bfloat16)
    with pytest.raises(TypeError, match=r"bfloat16 has no NumPy dtype.*numpy\(dtype=np.float32\)"):
        t.numpy()
    np.testing.assert_array_equal(t.numpy(dtype=np.float32), np.array([1.5, 0.10009765625], np.float32))
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), [1.5, 0.10009765625])
    assert repr(t) == "<ef.Tensor: shape=(2,), dtype=bfloat16, values=[1.5 0.1]>"
    assert str(t) == "Tensor([1.5 0.1], shape=(2,), dtype=bfloat16)"
    v = ef.Variable(t)
    assert "dtype=bfloat16, values=[1.5 0.1]" in repr(v)
    assert v.numpy(dtype=np.float32).dtype == np.float32


@halves
def test_dlpack_with_torch_both_ways(dtype):
    x = torch.tensor([1.0, -2.5, 3.25], dtype=TORCH[dtype])
    t = ef.from_dlpack(x)
    assert t.dtype == dtype
    back = torch.from_dlpack(ef.cast(t, dtype) * 2.0)
    assert back.dtype == TORCH[dtype]
    assert torch.equal(back, x * 2)


@halves
def test_safetensors_round_trip_and_torch_layout(dtype, tmp_path):
    t = ef.cast(ef.constant([[0.5, -1.0], [3.0, 1e-3]]), dtype)
    ef.io.save_safetensors(tmp_path / "h.safetensors", {"h": t})
    back = ef.io.load_safetensors(tmp_path / "h.safetensors")["h"]
    assert back.dtype == dtype
    np.testing.assert_array_equal(bits_of(back), bits_of(t))
    # A float16 file written by another tool (no eagerflow checksums) reads too.
    ref.write(tmp_path / "other.safetensors", {"w": np.array([1, 2, 65504], np.float16)})
    w = ef.io.load_safetensors(tmp_path / "other.safetensors")["w"]
    assert w.dtype == ef.float16 and w.numpy().tolist() == [1, 2, 65504]


def test_dtypes_by_name_and_promotion_errors():
    assert ef.as_dtype("float16") == ef.float16 and ef.as_dtype("bfloat16") == ef.bfloat16
    assert ef.as_dtype(np.float16) == ef.float16 and ef.as_dtype("half") == ef.float16
    assert ef.float16.size == 2 and ef.bfloat16.is_floating
    h = ef.ones([2], dtype=ef.float16)
    with pytest.raises(ef.errors.InvalidArgumentError, match="float16.*float32|float32.*float16"):
        h + ef.ones([2])
    with pytest.raises(ef.errors.InvalidArgumentError, match="bfloat16"):
        ef.matmul(ef.ones([2, 2], dtype=ef.bfloat16), ef.ones([2, 2], dtype=ef.float16))
    assert (h * 3).dtype == ef.float16  # Python numbers follow the tensor
    # Out of range is inf, as IEEE 754 says, never an error.
    assert ef.cast(ef.constant(1e6), ef.float16).numpy() == np.inf


# ---------------------------------------------------------------------------------
# Ops against torch in float64 on the same rounded inputs

def half_input(array, dtype):
    """The eagerflow half tensor nearest to `array`, and its exact values in float64."""
    t = ef.cast(ef.constant(np.asarray(array, np.float32)), dtype)
    return t, t.numpy(dtype=np.float64)


def check_half(rng, dtype, ef_fn, torch_fn, *arrays, grad=True, scale=None):
    """ef_fn on half inputs against torch_fn in float64 on the same values (tolerances
    in the module docstring). `scale`: the sum of |terms| of an accumulating op's
    outputs, which sets the absolute floor of its values."""
    eps = EPS[dtype]
    pairs = [half_input(a, dtype) for a in arrays]
    xs = [p[0] for p in pairs]
    with ef.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = ef_fn(*xs)
    assert y.dtype == dtype
    ts = [torch.tensor(p[1], requires_grad=grad) for p in pairs]
    yt = torch_fn(*ts)
    got = y.numpy(dtype=np.float64)
    want = yt.detach().numpy()
    atol = 1e-5 if scale is None else eps * scale
    np.testing.assert_allclose(got, want, rtol=eps, atol=atol, equal_nan=True, err_msg="value")
    if not grad:
        return
    dy, dy64 = half_input(rand(rng, got.shape, np.float32), dtype)
    grads = tape.gradient(y, xs, output_gradients=dy)
    tgrads = torch.autograd.grad(yt, ts, grad_outputs=torch.tensor(dy64), allow_unused=True)
    for i, (g, tg) in enumerate(zip(grads, tgrads)):
        want = np.zeros(arrays[i].shape) if tg is None else tg.numpy()
        got = np.zeros(want.shape) if g is None else g.numpy(dtype=np.float64)
        if g is not None:
            assert g.dtype == dtype
        floor = 8 * eps * max(1.0, float(np.abs(want).max(initial=0)))
        np.testing.assert_allclose(got, want, rtol=8 * eps, atol=floor, err_msg=f"gradient of input {i}")


def domain_input(rng, domain, shape):
    return rand_nonzero(rng, shape, np.float32) if domain == NONZERO else rand(rng, shape, np.float32, *domain)


@halves
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(rng, name, dtype):
    ef_fn, torch_fn, domain = UNARY[name]
    check_half(rng, dtype, ef_fn, torch_fn, domain_input(rng, domain, (3, 5)))


@halves
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_broadcasting(rng, name, dtype):
    ef_fn, torch_fn, dx, dy = BINARY[name]
    check_half(rng, dtype, ef_fn, torch_fn, domain_input(rng, dx, (2, 3, 4)), domain_input(rng, dy, (4,)))


@halves
def test_matmul_accumulates_in_float32(rng, dtype):
    a, b = rand(rng, (5, 130), np.float32), rand(rng, (130, 3), np.float32)
    check_half(rng, dtype, ef.matmul, torch.matmul, a, b, scale=float((np.abs(a) @ np.abs(b)).max()))


@halves
@pytest.mark.parametrize("op", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_logsumexp"])
def test_reductions(rng, op, dtype):
    # Distinct values (k / 64, k < 256: exact in both dtypes): at a tie, TensorFlow's
    # reduce_max splits the gradient and torch's max gives it to one element.
    x = np.stack([rng.permutation(256)[:250] for _ in range(6)]).astype(np.float32) / 64 - 2
    torch_fns = {"reduce_sum": lambda t: t.sum(1), "reduce_mean": lambda t: t.mean(1),
                 "reduce_max": lambda t: t.max(1).values, "reduce_logsumexp": lambda t: t.logsumexp(1)}
    scale = {"reduce_sum": 500.0}.get(op, 2.0)
    check_half(rng, dtype, lambda t: getattr(ef, op)(t, axis=1), torch_fns[op], x, scale=scale)


@halves
def test_mean_and_variance_divide_the_float32_sum(rng, dtype):
    # The mean of half values is the float32 sum divided in float32, rounded once (as
    # torch and NumPy). Rounding the sum to the half dtype first overflowed float16 (the
    # mean of 5000 values of 30 was inf) and shifted the mean, and so the variance (that
    # of [1000, 1001, 1002] was 0.92).
    big = ef.cast(ef.fill([5000], 30.0), dtype)
    assert ef.reduce_mean(big).dtype == dtype
    assert float(ef.reduce_mean(big)) == 30.0
    x, x64 = half_input([[1000.0, 1001.0, 1002.0], [-3.0, 0.5, 7.25]], dtype)
    t = torch.tensor(x64)
    for name, want in [("reduce_mean", t.mean(1)), ("reduce_variance", t.var(1, unbiased=False)),
                       ("reduce_std", t.std(1, unbiased=False))]:
        np.testing.assert_allclose(getattr(ef, name)(x, axis=1).numpy(dtype=np.float64), want.numpy(),
                                   rtol=EPS[dtype], err_msg=name)
    mean, variance = ef.nn.moments(x, axes=[1])
    np.testing.assert_allclose(variance.numpy(dtype=np.float64), t.var(1, unbiased=False).numpy(), rtol=EPS[dtype])
    # The gradient still flows, in the half dtype.
    check_half(rng, dtype, lambda u: ef.reduce_mean(u, axis=0), lambda u: u.mean(0), rand(rng, (300, 3), np.float32))


@halves
def test_softmax_and_cross_entropy(rng, dtype):
    logits = rand(rng, (4, 10), np.float32, -4, 4)
    check_half(rng, dtype, ef.nn.softmax, lambda t: torch.softmax(t, -1), logits)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 4)]
    check_half(rng, dtype, lambda z, x: ef.nn.softmax_cross_entropy_with_logits(labels=z, logits=x),
               lambda z, x: -(z * torch.log_softmax(x, -1)).sum(-1), labels, logits, scale=4.0)


@halves
def test_conv2d_and_pooling(rng, dtype):
    x, w = rand(rng, (2, 7, 7, 3), np.float32), rand(rng, (3, 3, 3, 4), np.float32)

    def t_conv(x, w):
        return torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w.permute(3, 2, 0, 1)).permute(0, 2, 3, 1)

    check_half(rng, dtype, lambda x, w: ef.nn.conv2d(x, w, strides=1, padding="VALID"), t_conv, x, w, scale=60.0)
    check_half(rng, dtype, lambda x: ef.nn.max_pool2d(x, 2, 2, "VALID"),
               lambda x: torch.nn.functional.max_pool2d(x.permute(0, 3, 1, 2), 2).permute(0, 2, 3, 1), x)
    check_half(rng, dtype, lambda x: ef.nn.avg_pool2d(x, 2, 2, "VALID"),
               lambda x: torch.nn.functional.avg_pool2d(x.permute(0, 3, 1, 2), 2).permute(0, 2, 3, 1), x, scale=2.0)


@halves
def test_gather_concat_and_random(dtype):
    x = ef.cast(ef.reshape(ef.range(12, dtype=ef.float32), [3, 4]), dtype)
    assert ef.gather(x, [2, 0]).numpy(dtype=np.float32).tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
    assert ef.concat([x, x], 0).shape == (6, 4) and ef.concat([x, x], 0).dtype == dtype
    u = ef.random.uniform([1000], dtype=dtype, seed=3)
    assert u.dtype == dtype
    values = u.numpy(dtype=np.float32)
    assert 0 <= values.min() and values.max() <= 1 and 0.4 < values.mean() < 0.6
    n = ef.random.normal([4000], dtype=dtype, seed=5).numpy(dtype=np.float64)
    assert abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1


def test_checkpoint_converts_float_dtypes_only_when_asked(tmp_path):
    w = ef.Variable([0.1, -2.5])
    ef.train.Checkpoint(w=w).save(tmp_path / "f32")
    half = ef.Variable(ef.zeros([2], dtype=ef.bfloat16))
    ckpt = ef.train.Checkpoint(w=half)
    with pytest.raises(ef.errors.InvalidArgumentError, match="convert_dtypes"):
        ckpt.restore(tmp_path / "f32")
    ckpt.restore(tmp_path / "f32", convert_dtypes=True)
    assert half.dtype == ef.bfloat16
    np.testing.assert_array_equal(half.numpy(dtype=np.float32), ef.cast(w, ef.bfloat16).numpy(dtype=np.float32))
