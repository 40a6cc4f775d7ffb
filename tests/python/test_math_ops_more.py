"""ef.math's special functions, truncating divisions, xlogy family, log_sigmoid and
nan_to_num against PyTorch: values on random inputs plus edge values (poles, domain
ends, signed zeros, infinities), float32 and float64, and gradients against torch
autograd with a random upstream gradient. Where TensorFlow (whose rules eagerflow
follows) differs from PyTorch (the xlogy family at x == 0: value and both gradients
are 0 whatever y is), the rule is pinned."""
import math

import numpy as np
import pytest

import eagerflow as ef

torch = pytest.importorskip("torch")

DTYPES = [("float32", np.float32, 2e-5, 2e-4), ("float64", np.float64, 1e-11, 1e-9)]

UNARY = [
    # name, ef op, torch op, sampling range, edge values
    ("asinh", ef.math.asinh, torch.asinh, (-3, 3), [0.0, -0.0, 1e3, -1e3, math.inf, math.nan]),
    ("acosh", ef.math.acosh, torch.acosh, (1.1, 4), [1.0, 0.5, math.inf]),
    ("atanh", ef.math.atanh, torch.atanh, (-0.9, 0.9), [1.0, -1.0, 2.0, 0.0]),
    ("lgamma", ef.math.lgamma, torch.lgamma, (0.1, 6), [0.0, -1.0, -2.5, -0.5, 1.0, 2.0, 100.0, math.inf]),
    ("digamma", ef.math.digamma, torch.digamma, (0.1, 6), [0.0, -2.0, -2.3, -0.5, 1.0, 50.0]),
    ("erfc", ef.math.erfc, torch.special.erfc, (-3, 3), [0.0, 10.0, -10.0, math.inf, -math.inf]),
    ("erfinv", ef.math.erfinv, torch.special.erfinv, (-0.95, 0.95), [0.0, 1.0, -1.0, 1.5, 0.999, -0.9999]),
    ("bessel_i0e", ef.math.bessel_i0e, torch.special.i0e, (-30, 30), [0.0, 20.0, -20.0, 25.0, 500.0]),
    ("bessel_i1e", ef.math.bessel_i1e, torch.special.i1e, (-30, 30), [0.0, -0.0, 20.0, -20.0, 25.0, 500.0]),
    ("log_sigmoid", ef.math.log_sigmoid, torch.nn.functional.logsigmoid, (-10, 10), [-100.0, 0.0, 100.0]),
    ("nan_to_num", ef.math.nan_to_num, torch.nan_to_num, (-3, 3), [math.nan, math.inf, -math.inf, 1.0]),
]


def _rng(name):
    return np.random.default_rng(abs(hash(name)) % (2**32))


def _close(got, want, rtol, atol=None):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol if atol is None else atol, equal_nan=True)


def _ef_grad(fn, inputs, dy):
    xs = [ef.constant(a) for a in inputs]
    with ef.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = fn(*xs)
    return y, tape.gradient(y, xs, output_gradients=ef.constant(dy))


def _torch_grad(fn, inputs, dy):
    ts = [torch.tensor(np.asarray(a, np.float64), requires_grad=True) for a in inputs]
    y = fn(*ts)
    return y.detach().numpy(), torch.autograd.grad(y, ts, grad_outputs=torch.tensor(dy.astype(np.float64)))


@pytest.mark.parametrize("dtype_name,dtype,rtol,grad_rtol", DTYPES)
@pytest.mark.parametrize("name,op,ref,lohi,edges", UNARY, ids=[u[0] for u in UNARY])
def test_unary_values_and_gradients(name, op, ref, lohi, edges, dtype_name, dtype, rtol, grad_rtol):
    rng = _rng(name + dtype_name)
    x = rng.uniform(*lohi, size=(4, 5)).astype(dtype)
    dy = rng.normal(size=x.shape).astype(dtype)
    y, (g,) = _ef_grad(op, [x], dy)
    assert y.dtype == getattr(ef, dtype_name) and y.shape == x.shape
    want, (want_g,) = _torch_grad(ref, [x], dy)
    _close(y.numpy(), want, rtol)
    _close(g.numpy(), want_g.numpy(), grad_rtol)
    # Edge values: the forward values only (torch computes them in float64 here).
    e = np.array(edges, dtype)
    got = op(ef.constant(e)).numpy()
    want = ref(torch.tensor(e.astype(np.float64))).numpy()
    if name == "nan_to_num":  # the dtype's own largest finite values
        want = torch.nan_to_num(torch.tensor(e)).numpy()
    _close(got.astype(np.float64), want, rtol, atol=1e-30)
    assert np.array_equal(np.signbit(got[np.isfinite(got) & (got == 0)]), np.signbit(want[np.isfinite(want) & (want == 0)]))


@pytest.mark.parametrize("dtype_name,dtype,rtol,grad_rtol", DTYPES)
def test_atan2_against_torch(dtype_name, dtype, rtol, grad_rtol):
    rng = _rng("atan2" + dtype_name)
    y = rng.uniform(-2, 2, size=(3, 4)).astype(dtype)
    x = rng.uniform(-2, 2, size=(4,)).astype(dtype)
    dy = rng.normal(size=(3, 4)).astype(dtype)
    z, (gy, gx) = _ef_grad(ef.math.atan2, [y, x], dy)
    want, (want_gy, want_gx) = _torch_grad(torch.atan2, [y, x], dy)
    _close(z.numpy(), want, rtol)
    _close(gy.numpy(), want_gy.numpy(), grad_rtol)
    _close(gx.numpy(), want_gx.numpy(), grad_rtol)
    # Quadrants and signed zeros.
    ey = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, math.inf, 0.0], dtype)
    ex = np.array([-1.0, -1.0, 1.0, 1.0, 0.0, 0.0, math.inf, 0.0], dtype)
    got = ef.atan2(ey, ex).numpy()
    want = torch.atan2(torch.tensor(ey), torch.tensor(ex)).numpy()
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype_name,dtype,rtol,grad_rtol", DTYPES)
@pytest.mark.parametrize("name,op,ref", [
    ("xlogy", ef.math.xlogy, torch.special.xlogy),
    ("xlog1py", ef.math.xlog1py, torch.special.xlog1py),
    ("xdivy", ef.math.xdivy, lambda x, y: torch.where(x == 0, torch.zeros_like(x), x / y)),
])
def test_xlogy_family_against_torch(name, op, ref, dtype_name, dtype, rtol, grad_rtol):
    rng = _rng(name + dtype_name)
    x = rng.uniform(-2, 2, size=(3, 4)).astype(dtype)
    x[0, :2] = 0
    y = rng.uniform(0.2, 3, size=(4,)).astype(dtype)
    dy = rng.normal(size=(3, 4)).astype(dtype)
    z, (gx, gy) = _ef_grad(op, [x, y], dy)
    want, (want_gx, want_gy) = _torch_grad(ref, [x, y], dy)
    _close(z.numpy(), want, rtol)
    # Where x == 0 TensorFlow's x gradient is 0 (xlogy(x != 0, y)); PyTorch's is log(y).
    nonzero = x != 0
    _close(gx.numpy()[nonzero], want_gx.numpy()[nonzero], grad_rtol)
    np.testing.assert_array_equal(gx.numpy()[~nonzero], 0)
    _close(gy.numpy(), want_gy.numpy(), grad_rtol)


def test_xlogy_at_zero_follows_tensorflow():
    # 0 wherever x == 0, even for y == 0 or NaN, and so are both gradients (PyTorch's
    # xlogy(0, nan) is nan and its y gradient at (0, 0) is nan; TensorFlow's are 0).
    x = np.array([0.0, 0.0, 0.0])
    y = np.array([0.0, math.nan, -1.0])
    for op in (ef.math.xlogy, ef.math.xdivy, ef.math.xlog1py):
        z, (gx, gy) = _ef_grad(op, [x, y], np.ones(3))
        np.testing.assert_array_equal(z.numpy(), [0, 0, 0])
        np.testing.assert_array_equal(gx.numpy(), [0, 0, 0])
        np.testing.assert_array_equal(gy.numpy(), [0, 0, 0])


@pytest.mark.parametrize("dtype_name,dtype,rtol,grad_rtol", DTYPES)
def test_polygamma_and_second_order_against_torch(dtype_name, dtype, rtol, grad_rtol):
    rng = _rng("polygamma" + dtype_name)
    x = rng.uniform(0.3, 4, size=(5,)).astype(dtype)
    # PyTorch's trigamma (polygamma(1)) is accurate to about 5e-10 relative (SciPy agrees
    # with eagerflow to 2e-16), so float64 compares to 2e-9 here.
    rtol, grad_rtol = max(rtol, 2e-9), max(grad_rtol, 2e-9)
    for n in (1, 2, 3):
        got = ef.math.polygamma(dtype(n), x).numpy()
        _close(got, torch.polygamma(n, torch.tensor(x.astype(np.float64))).numpy(), rtol)
    # Second derivatives: lgamma'' = polygamma(1), digamma'' = polygamma(2).
    for fn, order in ((ef.math.lgamma, 1), (ef.math.digamma, 2)):
        xe = ef.constant(x)
        with ef.GradientTape() as outer:
            outer.watch(xe)
            with ef.GradientTape() as inner:
                inner.watch(xe)
                y = fn(xe)
            g = inner.gradient(y, xe)
        gg = outer.gradient(g, xe)
        _close(gg.numpy(), torch.polygamma(order, torch.tensor(x.astype(np.float64))).numpy(), grad_rtol)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_truncating_division_against_torch(dtype):
    rng = _rng("trunc" + np.dtype(dtype).name)
    x = rng.integers(-20, 20, size=(4, 5)).astype(dtype)
    y = rng.integers(1, 6, size=(5,)).astype(dtype) * np.where(rng.random(5) < 0.5, -1, 1).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        x = x + rng.uniform(-0.5, 0.5, size=x.shape).astype(dtype)
    tx, ty = torch.tensor(x), torch.tensor(y)
    np.testing.assert_allclose(ef.truncatediv(x, y).numpy(), torch.div(tx, ty, rounding_mode="trunc").numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(ef.truncatemod(x, y).numpy(), torch.fmod(tx, ty).numpy(), rtol=1e-5, atol=1e-5)
    assert ef.truncatediv(x, y).dtype == ef.as_dtype(np.dtype(dtype).name)


def test_truncatemod_gradient_against_torch():
    rng = _rng("truncatemod-grad")
    x = rng.uniform(-5, 5, size=(6,))
    y = rng.uniform(0.7, 2, size=(6,))
    dy = rng.normal(size=6)
    _, (gx, gy) = _ef_grad(ef.truncatemod, [x, y], dy)
    _, (want_gx, want_gy) = _torch_grad(torch.fmod, [x, y], dy)
    _close(gx.numpy(), want_gx.numpy(), 1e-12)
    _close(gy.numpy(), want_gy.numpy(), 1e-12)


@pytest.mark.parametrize("dtype_name,dtype,rtol,grad_rtol", DTYPES)
@pytest.mark.parametrize("axis,reverse", [(0, False), (1, False), (-1, True), (0, True)])
def test_cumulative_logsumexp_against_torch(axis, reverse, dtype_name, dtype, rtol, grad_rtol):
    rng = _rng(f"cumlse{axis}{reverse}{dtype_name}")
    x = rng.uniform(-3, 3, size=(3, 5)).astype(dtype)
    x[0, 0] = -800 if dtype == np.float64 else -90  # far below the rest: no underflow to -inf
    dy = rng.normal(size=x.shape).astype(dtype)

    def ref(t):
        return torch.logcumsumexp(t.flip(axis), axis).flip(axis) if reverse else torch.logcumsumexp(t, axis)

    y, (g,) = _ef_grad(lambda t: ef.math.cumulative_logsumexp(t, axis=axis, reverse=reverse), [x], dy)
    want, (want_g,) = _torch_grad(ref, [x], dy)
    _close(y.numpy(), want, rtol)
    _close(g.numpy(), want_g.numpy(), grad_rtol)
    # exclusive: the inclusive result shifted by one, -inf first.
    ex = ef.math.cumulative_logsumexp(x, axis=axis, exclusive=True, reverse=reverse).numpy()
    inc = np.moveaxis(y.numpy(), axis, 0)
    ex = np.moveaxis(ex, axis, 0)
    if reverse:
        inc, ex = inc[::-1], ex[::-1]
    assert np.all(ex[0] == -np.inf)
    _close(ex[1:], inc[:-1], rtol)


def test_nan_to_num_arguments_and_dtypes():
    x = np.array([math.nan, math.inf, -math.inf, 2.0], np.float32)
    np.testing.assert_array_equal(ef.math.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0).numpy(), [1, 2, -3, 2])
    np.testing.assert_array_equal(ef.math.nan_to_num(x).numpy(), torch.nan_to_num(torch.tensor(x)).numpy())
    np.testing.assert_array_equal(ef.math.nan_to_num([1, 2]).numpy(), [1, 2])


def test_bad_inputs():
    with pytest.raises(ef.errors.InvalidArgumentError, match="lgamma"):
        ef.math.lgamma([1, 2])
    with pytest.raises(ef.errors.InvalidArgumentError, match="atan2"):
        ef.math.atan2(ef.constant([1.0]), ef.constant([1.0], dtype=ef.float64))
    with pytest.raises(ef.errors.InvalidArgumentError, match="xlogy"):
        ef.math.xlogy([1, 2], [3, 4])
    with pytest.raises(ef.errors.InvalidArgumentError, match="division by zero"):
        ef.truncatediv([1, 2], [1, 0])
    with pytest.raises(ef.errors.InvalidArgumentError, match="division by zero"):
        ef.truncatemod([1, 2], 0)
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"\[2\].*\[3\]"):
        ef.math.xlog1py([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ef.errors.UnimplementedError, match="polygamma"):
        a = ef.constant([1.0])
        with ef.GradientTape() as tape:
            tape.watch(a)
            y = ef.math.polygamma(a, [2.0])
        tape.gradient(y, a)
