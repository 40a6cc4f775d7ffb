"""Differential tests of eagerflow ops against PyTorch: forward values and gradients.

Every test builds seeded random inputs (the seed comes from the test's own name, so a
test is reproducible on its own and independent of the order tests run in), runs the
same function through eagerflow (under a GradientTape) and through torch (autograd),
and compares (helper `check`):

  * the output's shape and dtype (float32 stays float32, float64 stays float64);
  * the output's values;
  * the gradient of the output with respect to every floating input, seeded with a
    random upstream gradient `dy` (tape.gradient(..., output_gradients=dy) against
    torch.autograd.grad(..., grad_outputs=dy)), so that a gradient routed to the wrong
    element cannot hide behind an all-ones seed. A few tests use the default seed
    (the summed target). An eagerflow gradient of None (not differentiable, as in
    TensorFlow) counts as zeros.

Families: unary and binary elementwise ops (broadcasting, scalars of shape (), empty
tensors with a zero dimension, special values), reductions and scans, matmul, softmax
and losses, shape/array ops, other ops, ops on strided views, larger tensors (parallel
kernels), second derivatives (nested tapes), integer dtypes (forward only), and
TensorFlow's conventions at kinks and ties.

Tolerances (F64_*, F32_* below, each with its reasoning): the torch reference always
runs in float64 on the very same input values (float32 is exactly representable in
float64), so its own error is ~1e-16 and the tolerances budget for eagerflow's error
alone: float64 1e-10 relative; float32 1e-5 relative for values, 1e-4 for gradients,
with small absolute floors for results that cancel to ~0.

Where TensorFlow (whose semantics eagerflow follows) and PyTorch define an op
differently, the torch side is written as the expression that matches TensorFlow, and
a comment says so. At non-differentiable points eagerflow follows TensorFlow; random
data avoids those points, and the TestConventions class checks them against the
documented rule instead of against torch.
"""
import subprocess
import sys
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import eagerflow as ef

torch.set_num_threads(1)  # tiny tensors, and two shared cores

# ---------------------------------------------------------------------------------
# Tolerances (np.testing.assert_allclose: |actual - expected| <= atol + rtol * |expected|)
#
# float64: eagerflow and the reference both compute in double precision. Their libm /
#   vectorised transcendental functions differ by a few ulp (~1e-16 relative) and
#   composite ops or reductions with another summation order by ~n ulp (n <= ~100
#   here). 1e-10 relative leaves a wide margin and still catches any wrong formula;
#   the absolute floor covers results that cancel to ~0.
F64_RTOL, F64_ATOL = 1e-10, 1e-12
# float32 values: eagerflow computes in single precision (eps = 1.2e-7). Elementwise
#   ops are within a few ulp, reductions of up to 60 elements (and composites such as
#   variance or logsumexp) within ~50 ulp: 1e-5 relative, with an absolute floor of
#   1e-6 for results near 0 (e.g. sin near pi, x - mean).
F32_RTOL, F32_ATOL = 1e-5, 1e-6
# float32 gradients chain 2-6 single-precision ops (softmax: s * (g - sum(g * s)),
#   prod: two exclusive cumprods, gelu: erf, exp and products), each rounding:
#   10x the value tolerance.
F32_GRAD_RTOL, F32_GRAD_ATOL = 1e-4, 1e-5

# float32 matmul with K = 129 (test_large), computed in float32 by BLAS: an entry is a
#   sum of 129 products that cancel, so its error is ~sqrt(K) eps sum|a b| ~ 1e-5
#   absolute however small the entry (torch's float32 matmul errs identically).
F32_MATMUL_ATOL = 1e-4

FLOATS = [np.float32, np.float64]
FLOAT_IDS = ["float32", "float64"]
floats = pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)


# ---------------------------------------------------------------------------------
# Helpers

@pytest.fixture
def rng(request):
    """A NumPy Generator seeded from the test's name (parameters included)."""
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def rand(rng, shape, dtype, low=-2.0, high=2.0):
    """Uniform values in [low, high) of `shape` and `dtype` (shape () gives a 0-d array)."""
    return np.asarray(rng.uniform(low, high, size=shape)).astype(dtype)


def rand_nonzero(rng, shape, dtype, low=0.3, high=2.0):
    """Values with |x| in [low, high) and a random sign: away from 0 (kinks, poles)."""
    mag = rng.uniform(low, high, size=shape)
    sign = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
    return np.asarray(mag * sign).astype(dtype)


def tolerances(dtype, grad=False):
    if np.dtype(dtype) == np.float64:
        return F64_RTOL, F64_ATOL
    return (F32_GRAD_RTOL, F32_GRAD_ATOL) if grad else (F32_RTOL, F32_ATOL)


def assert_close(actual, expected, dtype, grad=False, what="value"):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if actual.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    rtol, atol = tolerances(dtype, grad)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def to_torch(a, requires_grad):
    """The reference's input: floats as float64 leaves, integers as int64, bools as bool."""
    if a.dtype.kind == "f":
        return torch.tensor(a.astype(np.float64), requires_grad=requires_grad)
    if a.dtype.kind in "iu":
        return torch.from_numpy(a.astype(np.int64))
    return torch.from_numpy(a.copy())


def t_numpy(t, shape):
    """A torch gradient as NumPy; None (unused input) as zeros. torch 1.13 returns some
    zero gradients (e.g. abs's second derivative) as an "efficient zero tensor" whose
    numpy() reads memory it does not own, so those are zeros too."""
    if t is None or t._is_zerotensor():
        return np.zeros(shape)
    return t.detach().numpy()


def check(rng, ef_fn, torch_fn, *arrays, wrt=None, grad=True, upstream="random", out_dtype=None, value_atol=None):
    """Compares ef_fn(*tensors) with torch_fn(*torch tensors) on the NumPy `arrays`.

    Checks the output's shape, dtype (out_dtype, by default the first floating input's
    dtype; the kind only for integer outputs) and values; then, unless grad=False or
    the output is not floating, the gradients with respect to the inputs at the
    positions in `wrt` (default: every floating input), seeded with a random upstream
    gradient (upstream="random") or with none (upstream=None: the summed target).
    value_atol, if given, replaces the absolute tolerance of the values.
    Returns the eagerflow output as a NumPy array.
    """
    arrays = [np.asarray(a) for a in arrays]
    if wrt is None:
        wrt = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    xs = [ef.constant(a) for a in arrays]
    with ef.GradientTape() as tape:
        for i in wrt:
            tape.watch(xs[i])
        y = ef_fn(*xs)
    ts = [to_torch(a, i in wrt) for i, a in enumerate(arrays)]
    yt = torch_fn(*ts)

    value = np.array(y.numpy())  # a copy: numpy() shares the tensor's memory
    ref = yt.detach().numpy()
    assert value.shape == ref.shape, f"output shape {value.shape} != torch's {ref.shape}"
    if out_dtype is None and ref.dtype.kind == "f":
        out_dtype = next(a.dtype for a in arrays if a.dtype.kind == "f")
    if out_dtype is not None:
        assert value.dtype == np.dtype(out_dtype), f"output dtype {value.dtype}, expected {np.dtype(out_dtype)}"
    else:
        assert value.dtype.kind == ref.dtype.kind or (value.dtype.kind in "iu" and ref.dtype.kind in "iu"), \
            f"output dtype {value.dtype} vs torch's {ref.dtype}"
    if value_atol is None:
        assert_close(value, ref, value.dtype)
    else:
        np.testing.assert_allclose(value, ref, rtol=tolerances(value.dtype)[0], atol=value_atol, err_msg="value")

    if not grad or not wrt or value.dtype.kind != "f":
        return value
    dy = rand(rng, value.shape, value.dtype) if upstream == "random" else np.ones(value.shape, value.dtype)
    grads = tape.gradient(y, [xs[i] for i in wrt],
                          output_gradients=ef.constant(dy) if upstream == "random" else None)
    if yt.requires_grad:
        tgrads = torch.autograd.grad(yt, [ts[i] for i in wrt], grad_outputs=torch.from_numpy(dy.astype(np.float64)),
                                     allow_unused=True)
    else:
        tgrads = [None] * len(wrt)
    for i, g, tg in zip(wrt, grads, tgrads):
        a = arrays[i]
        if g is None:
            got = np.zeros(a.shape, a.dtype)
        else:
            got = np.array(g.numpy())
            assert got.dtype == a.dtype, f"gradient of input {i}: dtype {got.dtype}, input's {a.dtype}"
        want = t_numpy(tg, a.shape)
        assert_close(got, want, a.dtype, grad=True, what=f"gradient of input {i} (shape {a.shape})")
    return value


def ef_grads(fn, *arrays, dy=None):
    """eagerflow's output and gradients (None kept) of fn at `arrays`, as NumPy."""
    xs = [ef.constant(a) for a in arrays]
    with ef.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = fn(*xs)
    grads = tape.gradient(y, xs, output_gradients=None if dy is None else ef.constant(dy))
    return np.array(y.numpy()), [None if g is None else np.array(g.numpy()) for g in grads]


def t_dims(axis, ndim):
    """An eagerflow `axis` (None, int, list) as a tuple of non-negative torch dims."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = [axis]
    return tuple(a % ndim for a in axis)


# ---------------------------------------------------------------------------------
# Elementwise unary ops

NONZERO = "nonzero"  # domain marker: |x| in [0.3, 2), random sign
# name: (eagerflow op, torch reference, input domain)
UNARY = {
    "abs": (ef.math.abs, torch.abs, NONZERO),
    "negative": (ef.math.negative, torch.neg, (-3, 3)),
    "square": (ef.math.square, torch.square, (-3, 3)),
    "reciprocal": (ef.math.reciprocal, torch.reciprocal, NONZERO),
    "exp": (ef.math.exp, torch.exp, (-3, 3)),
    "expm1": (ef.math.expm1, torch.expm1, (-3, 3)),
    "log": (ef.math.log, torch.log, (0.1, 4)),
    "log1p": (ef.math.log1p, torch.log1p, (-0.9, 3)),
    "sqrt": (ef.math.sqrt, torch.sqrt, (0.1, 4)),
    "rsqrt": (ef.math.rsqrt, torch.rsqrt, (0.1, 4)),
    "sin": (ef.math.sin, torch.sin, (-4, 4)),
    "cos": (ef.math.cos, torch.cos, (-4, 4)),
    "tan": (ef.math.tan, torch.tan, (-1.3, 1.3)),
    "asin": (ef.math.asin, torch.asin, (-0.95, 0.95)),
    "acos": (ef.math.acos, torch.acos, (-0.95, 0.95)),
    "atan": (ef.math.atan, torch.atan, (-4, 4)),
    "sinh": (ef.math.sinh, torch.sinh, (-3, 3)),
    "cosh": (ef.math.cosh, torch.cosh, (-3, 3)),
    "tanh": (ef.math.tanh, torch.tanh, (-3, 3)),
    "erf": (ef.math.erf, torch.erf, (-3, 3)),
    "sigmoid": (ef.math.sigmoid, torch.sigmoid, (-6, 6)),
    # torch's softplus switches to the identity above `threshold` (20): not reached here.
    "softplus": (ef.math.softplus, F.softplus, (-6, 6)),
    # Piecewise constant: eagerflow's gradient is None (as TF), torch's zeros.
    "floor": (ef.math.floor, torch.floor, (-3, 3)),
    "ceil": (ef.math.ceil, torch.ceil, (-3, 3)),
    # Both round half to even (TF and torch.round alike); exact halves in TestConventions.
    "round": (ef.math.round, torch.round, (-3, 3)),
    "sign": (ef.math.sign, torch.sign, NONZERO),
    # ef.nn activations
    "relu": (ef.nn.relu, torch.relu, (-3, 3)),
    "relu6": (ef.nn.relu6, F.relu6, (-3, 9)),
    "elu": (ef.nn.elu, F.elu, (-3, 3)),  # alpha = 1 in both
    "selu": (ef.nn.selu, F.selu, (-3, 3)),  # same constants (Klambauer et al.)
    "softsign": (ef.nn.softsign, F.softsign, (-3, 3)),
    "gelu": (ef.nn.gelu, F.gelu, (-4, 4)),  # exact (erf) form in both by default
    # TF's approximate=True is torch's approximate="tanh".
    "gelu_tanh": (lambda x: ef.nn.gelu(x, approximate=True), lambda x: F.gelu(x, approximate="tanh"), (-4, 4)),
    # TF's default alpha is 0.2, torch's negative_slope 0.01: pass 0.2 to torch.
    "leaky_relu": (ef.nn.leaky_relu, lambda x: F.leaky_relu(x, 0.2), (-3, 3)),
    "leaky_relu_0.05": (lambda x: ef.nn.leaky_relu(x, alpha=0.05), lambda x: F.leaky_relu(x, 0.05), (-3, 3)),
    "nn.sigmoid": (ef.nn.sigmoid, torch.sigmoid, (-6, 6)),
    "nn.tanh": (ef.nn.tanh, torch.tanh, (-3, 3)),
}
UNARY_SHAPES = [(), (7,), (2, 3, 4), (0, 3)]


def unary_input(rng, domain, shape, dtype):
    return rand_nonzero(rng, shape, dtype) if domain == NONZERO else rand(rng, shape, dtype, *domain)


@floats
@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(rng, name, shape, dtype):
    ef_op, torch_op, domain = UNARY[name]
    check(rng, ef_op, torch_op, unary_input(rng, domain, shape, dtype))


@pytest.mark.parametrize("name", ["exp", "sin", "tanh", "relu", "gelu", "abs"])
def test_unary_default_seed(rng, name):
    """tape.gradient without output_gradients differentiates the summed target."""
    ef_op, torch_op, domain = UNARY[name]
    check(rng, ef_op, torch_op, unary_input(rng, domain, (3, 4), np.float64), upstream=None)


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e-10, 50.0, -50.0, 800.0, -800.0, 1.0])
# Where TF and torch agree on NaN, infinities, zeros, overflow and underflow. Left out:
# sign (TF: sign(NaN) = NaN, torch: 0), elu/selu (torch's exp(x) - 1 loses elu(-1e-30) =
# -1e-30), gelu and softsign (inf / inf and inf * 0 are not pinned down by TF).
SPECIAL_OPS = ["abs", "negative", "square", "reciprocal", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "sin",
               "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf", "sigmoid", "softplus", "floor",
               "ceil", "round", "relu", "relu6", "leaky_relu"]


@floats
@pytest.mark.parametrize("name", SPECIAL_OPS)
def test_unary_special_values(rng, name, dtype):
    """Forward values at NaN, +-inf, +-0, tiny and huge inputs (no gradients: TF's
    conventions there are not torch's, e.g. relu'(NaN))."""
    check(rng, UNARY[name][0], UNARY[name][1], SPECIAL.astype(dtype), grad=False)


# ---------------------------------------------------------------------------------
# Elementwise binary ops (NumPy broadcasting)

# name: (eagerflow op, torch reference, x domain, y domain)
BINARY = {
    "add": (ef.add, torch.add, (-2, 2), (-2, 2)),
    "subtract": (ef.subtract, torch.sub, (-2, 2), (-2, 2)),
    "multiply": (ef.multiply, torch.mul, (-2, 2), (-2, 2)),
    "divide": (ef.divide, torch.div, (-2, 2), NONZERO),
    "pow": (ef.pow, torch.pow, (0.3, 2.5), (-2, 2)),
    "maximum": (ef.maximum, torch.maximum, (-2, 2), (-2, 2)),
    "minimum": (ef.minimum, torch.minimum, (-2, 2), (-2, 2)),
    # TF: (x - y)^2; torch has no op of its own.
    "squared_difference": (ef.squared_difference, lambda x, y: (x - y) ** 2, (-2, 2), (-2, 2)),
    # TF's floordiv on floats is floor(x / y) (not torch's fmod-based rounding_mode="floor");
    # piecewise constant, so eagerflow's gradient is None.
    "floordiv": (ef.math.floordiv, lambda x, y: torch.floor(x / y), (-5, 5), NONZERO),
    # TF's floormod takes the sign of the divisor, like Python's % and torch.remainder
    # (torch.fmod takes the dividend's). Gradients as TF: dx = g, dy = -g * floor(x / y).
    "floormod": (ef.math.floormod, torch.remainder, (-5, 5), NONZERO),
}
BINARY_SHAPES = [
    ((), ()),
    ((3, 4), (3, 4)),
    ((2, 3, 4), (4,)),
    ((2, 1, 4), (3, 1)),
    ((), (2, 3)),
    ((3, 1), ()),
    ((0, 3), (1, 3)),
    ((2, 0, 1), (4,)),
]


@floats
@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=str)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(rng, name, shapes, dtype):
    ef_op, torch_op, xdom, ydom = BINARY[name]
    x = unary_input(rng, xdom, shapes[0], dtype)
    y = unary_input(rng, ydom, shapes[1], dtype)
    check(rng, ef_op, torch_op, x, y)


@pytest.mark.parametrize("int_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("name", ["floordiv", "floormod"])
def test_integer_floordiv_floormod(rng, name, int_dtype):
    """On integers both round toward -inf (Python's // and %), as torch's floor division and remainder."""
    x = rng.integers(-20, 21, size=(4, 5)).astype(int_dtype)
    y = (rng.integers(1, 6, size=(5,)) * rng.choice([-1, 1], size=(5,))).astype(int_dtype)
    ef_op = {"floordiv": ef.math.floordiv, "floormod": ef.math.floormod}[name]
    t_op = {"floordiv": lambda a, b: torch.div(a, b, rounding_mode="floor"), "floormod": torch.remainder}[name]
    out = check(rng, ef_op, t_op, x, y, out_dtype=int_dtype)
    assert out.dtype == int_dtype


@floats
def test_pow_negative_base_integer_exponent(rng, dtype):
    """x < 0 with integral y: forward and dx as torch; dy is 0 where x <= 0 (TF's rule;
    torch gives NaN there, log of a negative number)."""
    x = -rand(rng, (3, 4), dtype, 0.5, 2)
    y = rng.integers(-2, 4, size=(4,)).astype(dtype)
    check(rng, ef.pow, torch.pow, x, y, wrt=[0])
    _, (gx, gy) = ef_grads(ef.pow, x, y)
    np.testing.assert_array_equal(gy, np.zeros_like(y))


@floats
@pytest.mark.parametrize("name", ["divide", "pow", "floormod", "floordiv", "multiply", "add"])
def test_binary_special_values(rng, name, dtype):
    """Division by zero, 0^0, 0^-1, (-8)^(1/3), infinities and NaN, forward only."""
    x = np.array([1.0, -1.0, 0.0, 0.0, 0.0, -8.0, np.inf, -np.inf, np.nan, 2.0, 5.0, -5.0], dtype)
    y = np.array([0.0, 0.0, 0.0, -1.0, 2.0, 1 / 3, 2.0, 3.0, 1.0, np.inf, -3.0, 3.0], dtype)
    check(rng, BINARY[name][0], BINARY[name][1], x, y, grad=False)


# name: (operator form on eagerflow tensors / torch tensors)
OPERATORS = {
    "x+y": lambda x, y: x + y,
    "x-y": lambda x, y: x - y,
    "x*y": lambda x, y: x * y,
    "x/y": lambda x, y: x / y,
    "x%y": lambda x, y: x % y,  # both Python's floor modulo (TF floormod)
    "x+2.5": lambda x, y: x + 2.5 + 0 * y,
    "1.5-x": lambda x, y: 1.5 - x + 0 * y,
    "3*x*y": lambda x, y: 3 * x * y,
    "2/y": lambda x, y: 2 / y + 0 * x,
    "y**2": lambda x, y: y ** 2 + x,
    "2**x": lambda x, y: 2.0 ** x + y,
    "-x": lambda x, y: -x * y,
    "abs(y)": lambda x, y: abs(y) + x,
}


@floats
@pytest.mark.parametrize("name", list(OPERATORS))
def test_operators(rng, name, dtype):
    """Python operators, with Python numbers on either side keeping the tensor's dtype."""
    f = OPERATORS[name]
    check(rng, f, f, rand(rng, (2, 3), dtype), rand_nonzero(rng, (3,), dtype))


COMPARISONS = {
    "equal": (ef.equal, torch.eq),
    "not_equal": (ef.not_equal, torch.ne),
    "less": (ef.less, torch.lt),
    "less_equal": (ef.less_equal, torch.le),
    "greater": (ef.greater, torch.gt),
    "greater_equal": (ef.greater_equal, torch.ge),
}


@floats
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 1), (4,)), ((), (5,)), ((0, 2), (2,))], ids=str)
@pytest.mark.parametrize("name", list(COMPARISONS))
def test_comparisons(rng, name, shapes, dtype):
    """Comparisons give bool; inputs from {-1, 0, 1} so that ties are frequent."""
    ef_op, torch_op = COMPARISONS[name]
    x = rng.integers(-1, 2, size=shapes[0]).astype(dtype)
    y = rng.integers(-1, 2, size=shapes[1]).astype(dtype)
    out = check(rng, ef_op, torch_op, x, y, out_dtype=np.bool_)
    assert out.dtype == np.bool_


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical(rng, name):
    x = rng.random((3, 4)) < 0.5
    y = rng.random((4,)) < 0.5
    check(rng, getattr(ef.math, name), getattr(torch, name), x, y, out_dtype=np.bool_)
    check(rng, ef.math.logical_not, torch.logical_not, x, out_dtype=np.bool_)


@floats
@pytest.mark.parametrize("bounds", ["scalars", "tensors"])
@pytest.mark.parametrize("shape", [(), (3, 4), (0, 4)], ids=str)
def test_clip_by_value(rng, shape, bounds, dtype):
    """TF's clip_by_value is minimum(maximum(t, lo), hi); with tensor bounds they broadcast
    against t and get gradients too."""
    x = rand(rng, shape, dtype)
    if bounds == "scalars":
        check(rng, lambda t: ef.clip_by_value(t, -0.5, 0.7), lambda t: torch.clamp(t, -0.5, 0.7), x)
    else:
        lo = rand(rng, (4,), dtype, -1.5, -0.1)
        hi = rand(rng, (1,) if shape == () else (shape[0], 1), dtype, 0.1, 1.5)
        check(rng, ef.clip_by_value, lambda t, a, b: torch.minimum(torch.maximum(t, a), b), x, lo, hi)


@pytest.mark.parametrize("to", ["float32", "float64", "int32", "int64"])
@floats
def test_cast(rng, dtype, to):
    """Float to float: the gradient comes back converted to the input's dtype; float to
    int truncates toward 0 (as torch) and blocks the gradient."""
    x = rand(rng, (3, 4), dtype, -5, 5)
    t_to = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32, "int64": torch.int64}[to]

    def t_cast(t):
        # To float32, the reference rounds as eagerflow must, then goes back to float64
        # (the dtype of the reference's upstream gradient).
        return t.to(t_to).to(torch.float64) if to == "float32" else t.to(t_to)

    out = check(rng, lambda t: ef.cast(t, getattr(ef, to)), t_cast, x, out_dtype=np.dtype(to))
    assert out.dtype == np.dtype(to)


# ---------------------------------------------------------------------------------
# Reductions and scans

def t_reduce(op, x, axis, keepdims):
    """torch's version of ef.reduce_<op>(x, axis, keepdims)."""
    dims = t_dims(axis, x.ndim)
    if not dims:  # an explicit empty axis list (or a scalar): nothing is reduced
        return {"variance": x * 0, "logsumexp": x}.get(op, x)
    if op == "sum":
        return x.sum(dims, keepdim=keepdims)
    if op == "mean":
        return x.mean(dims, keepdim=keepdims)
    if op == "max":  # amax/amin split the gradient among ties, as TF (max() would not)
        return x.amax(dims, keepdim=keepdims)
    if op == "min":
        return x.amin(dims, keepdim=keepdims)
    if op == "prod":  # torch.prod takes one dim at a time
        for d in sorted(dims, reverse=True):
            x = x.prod(d, keepdim=keepdims)
        return x
    if op == "logsumexp":
        return torch.logsumexp(x, dims, keepdim=keepdims)
    if op == "variance":  # TF: population variance (divides by N), i.e. unbiased=False
        return torch.var(x, dims, unbiased=False, keepdim=keepdims)
    if op == "std":
        return torch.std(x, dims, unbiased=False, keepdim=keepdims)
    raise ValueError(op)


REDUCTIONS = ["sum", "mean", "max", "min", "prod", "logsumexp", "variance", "std"]
REDUCE_CASES = [  # (shape, axis)
    ((3, 4, 5), None),
    ((3, 4, 5), 0),
    ((3, 4, 5), -1),
    ((3, 4, 5), [0, 2]),
    ((3, 4, 5), [-1, 1]),
    ((3, 4, 5), []),
    ((6,), 0),
    ((), None),
    ((0, 4), 1),
]


# std over nothing (a scalar, or axis=[]) is sqrt(0), which has no derivative: left out.
REDUCE_PARAMS = [pytest.param(op, shape, axis, id=f"{op}-{shape}-axis{axis}")
                 for op in REDUCTIONS for shape, axis in REDUCE_CASES
                 if not (op == "std" and not t_dims(axis, len(shape)))]


@floats
@pytest.mark.parametrize("keepdims", [False, True], ids=["", "keepdims"])
@pytest.mark.parametrize("op,shape,axis", REDUCE_PARAMS)
def test_reduce(rng, op, shape, axis, keepdims, dtype):
    if op == "prod":  # magnitudes near 1 keep a product of 60 values representable
        x = rand_nonzero(rng, shape, dtype, 0.5, 1.5)
    else:
        x = rand(rng, shape, dtype)
    check(rng, lambda t: getattr(ef, "reduce_" + op)(t, axis=axis, keepdims=keepdims),
          lambda t: t_reduce(op, t, axis, keepdims), x)


# An empty reduction: sum 0, prod 1, max -inf, min +inf (as TF; torch's amax/amin
# refuse), mean NaN, logsumexp -inf (documented); variance and std NaN (their mean is).
EMPTY_REDUCTION = {"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf, "mean": np.nan,
                   "logsumexp": -np.inf, "variance": np.nan, "std": np.nan}


@floats
@pytest.mark.parametrize("op", REDUCTIONS)
def test_reduce_empty_axis(op, dtype):
    x = np.zeros((0, 3), dtype)
    out = getattr(ef, "reduce_" + op)(ef.constant(x), axis=0)
    assert out.dtype == ef.as_dtype(np.dtype(dtype).name)
    np.testing.assert_array_equal(out.numpy(), np.full((3,), EMPTY_REDUCTION[op], dtype))
    _, (g,) = ef_grads(lambda t: getattr(ef, "reduce_" + op)(t, axis=0), x)
    assert g is None or g.shape == (0, 3)


@floats
@pytest.mark.parametrize("keepdims", [False, True], ids=["", "keepdims"])
@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1]], ids=str)
def test_reduce_prod_with_zeros(rng, axis, keepdims, dtype):
    """reduce_prod's gradient is exact where the input has one or several zeros."""
    x = rand_nonzero(rng, (4, 5), dtype, 0.5, 1.5)
    x[1, 2] = 0  # one zero in row 1
    x[2, 0] = x[2, 3] = 0  # two zeros in row 2
    check(rng, lambda t: ef.reduce_prod(t, axis=axis, keepdims=keepdims),
          lambda t: t_reduce("prod", t, axis, keepdims), x)


@floats
@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("shape,axis", [((7,), None), ((3, 5), 0), ((3, 5), 1), ((2, 3, 4), -1), ((0, 4), 1)],
                         ids=str)
def test_arg_reduce(rng, op, shape, axis, dtype):
    """Index of the extreme (no ties in random data), int64; axis=None means 0 (as TF)."""
    x = rand(rng, shape, dtype)
    out = check(rng, lambda t: getattr(ef, op)(t, axis=axis),
                lambda t: getattr(torch, op)(t, dim=0 if axis is None else axis), x, out_dtype=np.int64)
    assert out.dtype == np.int64


def t_scan(x, axis, exclusive, reverse, op):
    """TF's cumsum/cumprod(x, axis, exclusive, reverse) from torch's inclusive forward scans."""
    if reverse:
        x = x.flip(axis)
    if exclusive and x.shape[axis] > 0:  # shift by one, starting from the identity
        first = (torch.zeros_like if op == "cumsum" else torch.ones_like)(x.narrow(axis, 0, 1))
        x = torch.cat([first, x.narrow(axis, 0, x.shape[axis] - 1)], axis)
    y = getattr(torch, op)(x, axis)
    return y.flip(axis) if reverse else y


SCAN_CASES = [((7,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -2), ((3, 0), 1), ((0, 3), 1)]


@floats
@pytest.mark.parametrize("reverse", [False, True], ids=["", "reverse"])
@pytest.mark.parametrize("exclusive", [False, True], ids=["", "exclusive"])
@pytest.mark.parametrize("shape,axis", SCAN_CASES, ids=[f"{s}-axis{a}" for s, a in SCAN_CASES])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan(rng, op, shape, axis, exclusive, reverse, dtype):
    x = rand_nonzero(rng, shape, dtype, 0.5, 1.5)
    check(rng, lambda t: getattr(ef, op)(t, axis, exclusive=exclusive, reverse=reverse),
          lambda t: t_scan(t, axis, exclusive, reverse, op), x)


@floats
@pytest.mark.parametrize("reverse", [False, True], ids=["", "reverse"])
@pytest.mark.parametrize("exclusive", [False, True], ids=["", "exclusive"])
def test_cumprod_with_zeros(rng, exclusive, reverse, dtype):
    """cumprod's gradient is exact at and after zeros (torch's cumprod backward is too)."""
    x = rand_nonzero(rng, (4, 6), dtype, 0.5, 1.5)
    x[0, 2] = 0  # one zero
    x[1, 1] = x[1, 4] = 0  # two zeros
    x[2, 0] = 0  # a zero first
    x[3, 5] = 0  # a zero last
    check(rng, lambda t: ef.cumprod(t, 1, exclusive=exclusive, reverse=reverse),
          lambda t: t_scan(t, 1, exclusive, reverse, "cumprod"), x)


# ---------------------------------------------------------------------------------
# Matrix products

MATMUL_CASES = [  # (a shape, b shape, transpose_a, transpose_b)
    ((3, 4), (4, 5), False, False),
    ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True),
    ((4, 3), (5, 4), True, True),
    ((1, 4), (4, 1), False, False),
    ((2, 3, 4), (2, 4, 5), False, False),
    ((2, 3, 4), (4, 5), False, False),  # b broadcast over the batch
    ((4, 3), (2, 5, 4), True, True),  # a broadcast over the batch
    ((2, 1, 3, 4), (5, 4, 2), False, False),  # batch dims (2, 1) and (5,) broadcast
    ((3, 0), (0, 4), False, False),  # K = 0: zeros
    ((0, 3), (3, 4), False, False),  # M = 0
    ((2, 3, 4), (2, 4, 0), False, False),  # N = 0
    ((0, 3, 4), (4, 5), False, False),  # an empty batch
    ((0, 1, 4, 3), (5, 4, 2), True, False),  # an empty batch, broadcast
]


@floats
@pytest.mark.parametrize("a_shape,b_shape,ta,tb", MATMUL_CASES, ids=[str(c) for c in MATMUL_CASES])
def test_matmul(rng, a_shape, b_shape, ta, tb, dtype):
    def t_matmul(a, b):
        return torch.matmul(a.transpose(-1, -2) if ta else a, b.transpose(-1, -2) if tb else b)

    check(rng, lambda a, b: ef.matmul(a, b, transpose_a=ta, transpose_b=tb), t_matmul,
          rand(rng, a_shape, dtype), rand(rng, b_shape, dtype))


@floats
def test_matmul_operator(rng, dtype):
    check(rng, lambda a, b: a @ b, lambda a, b: a @ b, rand(rng, (2, 3, 4), dtype), rand(rng, (4, 2), dtype))


# ---------------------------------------------------------------------------------
# Softmax, losses, normalization

SOFTMAX_CASES = [((5,), -1), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((0, 4), -1), ((3, 0), -1)]


@floats
@pytest.mark.parametrize("shape,axis", SOFTMAX_CASES, ids=[f"{s}-axis{a}" for s, a in SOFTMAX_CASES])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax(rng, op, shape, axis, dtype):
    x = rand(rng, shape, dtype, -4, 4)
    check(rng, lambda t: getattr(ef.nn, op)(t, axis=axis), lambda t: getattr(torch, op)(t, axis), x)


SHIFTED_OPS = {  # name: (eagerflow function of (labels, logits), torch function)
    "softmax": (lambda z, x, i: ef.nn.softmax(x), lambda z, x, i: torch.softmax(x, -1)),
    "softmax_axis0": (lambda z, x, i: ef.nn.softmax(x, axis=0), lambda z, x, i: torch.softmax(x, 0)),
    "log_softmax": (lambda z, x, i: ef.nn.log_softmax(x), lambda z, x, i: torch.log_softmax(x, -1)),
    "log_softmax_axis0": (lambda z, x, i: ef.nn.log_softmax(x, axis=0), lambda z, x, i: torch.log_softmax(x, 0)),
    "logsumexp": (lambda z, x, i: ef.reduce_logsumexp(x, axis=1), lambda z, x, i: torch.logsumexp(x, 1)),
    "softmax_cross_entropy": (lambda z, x, i: ef.nn.softmax_cross_entropy_with_logits(labels=z, logits=x),
                              lambda z, x, i: -(z * torch.log_softmax(x, -1)).sum(-1)),
    "sparse_softmax_cross_entropy": (
        lambda z, x, i: ef.nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=x),
        lambda z, x, i: -torch.log_softmax(x, -1).gather(-1, i.unsqueeze(-1)).squeeze(-1)),
}
# Around an offset of 500, float32 log_softmax formed as x - (max + log(sum)) would be
# off by ~ulp(500) = 3e-5; the kernels form (x - max) - log(sum), exact to the result's ulp.


def shifted_params():
    for name in SHIFTED_OPS:
        for offset in (50, 500):
            for dtype, dtype_id in zip(FLOATS, FLOAT_IDS):
                yield pytest.param(name, offset, dtype, id=f"{name}-offset{offset}-{dtype_id}")


@pytest.mark.parametrize("name,offset,dtype", list(shifted_params()))
def test_softmax_shifted_logits(rng, name, offset, dtype):
    """Logits of a realistic spread around a large offset (50, 500): computed stably (no
    overflow) and as accurately as around 0, since x - max is exact."""
    logits = rand(rng, (6, 5), dtype, offset - 5, offset + 5)
    labels = rand(rng, (6, 5), dtype, 0, 1)
    labels = (labels / labels.sum(-1, keepdims=True)).astype(dtype)
    ids = rng.integers(0, 5, size=(6,))
    ef_fn, t_fn = SHIFTED_OPS[name]
    check(rng, ef_fn, t_fn, labels, logits, ids, wrt=[0, 1] if name == "softmax_cross_entropy" else [1])


CE_CASES = [((5,), -1), ((4, 5), -1), ((2, 3, 5), -1), ((5, 4), 0), ((0, 5), -1)]


@floats
@pytest.mark.parametrize("normalized", [True, False], ids=["probabilities", "unnormalized"])
@pytest.mark.parametrize("shape,axis", CE_CASES, ids=[f"{s}-axis{a}" for s, a in CE_CASES])
def test_softmax_cross_entropy(rng, shape, axis, normalized, dtype):
    """-sum(labels * log_softmax(logits)) along axis; gradients for labels and logits. The
    eagerflow header promises the exact gradient even for labels that do not sum to 1."""
    logits = rand(rng, shape, dtype, -3, 3)
    labels = rand(rng, shape, dtype, 0, 1)
    if normalized:
        labels = (labels / labels.sum(axis=axis, keepdims=True)).astype(dtype) if labels.size else labels
    check(rng, lambda z, x: ef.nn.softmax_cross_entropy_with_logits(labels=z, logits=x, axis=axis),
          lambda z, x: -(z * torch.log_softmax(x, axis)).sum(axis), labels, logits)


@floats
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5), (0, 5)], ids=str)
def test_sparse_softmax_cross_entropy(rng, shape, index_dtype, dtype):
    logits = rand(rng, shape, dtype, -3, 3)
    labels = rng.integers(0, shape[-1], size=shape[:-1]).astype(index_dtype)

    def t_loss(z, x):
        return -torch.log_softmax(x, -1).gather(-1, z.unsqueeze(-1)).squeeze(-1)

    check(rng, lambda z, x: ef.nn.sparse_softmax_cross_entropy_with_logits(labels=z, logits=x), t_loss, labels, logits)


@floats
@pytest.mark.parametrize("shape", [(), (3, 4), (2, 0)], ids=str)
def test_sigmoid_cross_entropy(rng, shape, dtype):
    """TF's formula max(x, 0) - x z + log1p(exp(-|x|)); it has the value of torch's
    binary_cross_entropy_with_logits, and the explicit form differentiates labels too."""
    logits = rand(rng, shape, dtype, -5, 5)
    labels = rand(rng, shape, dtype, 0, 1)
    out = check(rng, lambda z, x: ef.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
                lambda z, x: torch.clamp(x, min=0) - x * z + torch.log1p(torch.exp(-x.abs())), labels, logits)
    ref = F.binary_cross_entropy_with_logits(torch.from_numpy(logits.astype(np.float64)),
                                             torch.from_numpy(labels.astype(np.float64)), reduction="none")
    assert_close(out, ref.numpy(), dtype)


@floats
@pytest.mark.parametrize("shape,axis", [((3, 4), None), ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), [0, 2]), ((), None)],
                         ids=str)
def test_l2_normalize(rng, shape, axis, dtype):
    """x / sqrt(max(sum(x^2, axis), epsilon))."""
    def t_l2(t):
        dims = t_dims(axis, t.ndim)
        ss = (t * t).sum(dims, keepdim=True) if dims else t * t
        return t * torch.rsqrt(torch.clamp(ss, min=1e-12))

    check(rng, lambda t: ef.nn.l2_normalize(t, axis=axis), t_l2, rand(rng, shape, dtype))


@floats
def test_l2_normalize_zero_row(rng, dtype):
    """A row of zeros is divided by sqrt(epsilon): the output is 0, the gradient dy / 1e-6."""
    x = rand(rng, (3, 4), dtype)
    x[1] = 0
    check(rng, lambda t: ef.nn.l2_normalize(t, axis=1),
          lambda t: t * torch.rsqrt(torch.clamp((t * t).sum(1, keepdim=True), min=1e-12)), x)


# ---------------------------------------------------------------------------------
# Shape and array ops

@floats
@pytest.mark.parametrize("shape,new_shape", [((2, 3, 4), [6, 4]), ((2, 3, 4), [-1]), ((2, 3, 4), [4, -1, 2]),
                                             ((1, 1), []), ((), [1, 1]), ((0, 3), [3, 0])], ids=str)
def test_reshape(rng, shape, new_shape, dtype):
    check(rng, lambda t: ef.reshape(t, new_shape), lambda t: t.reshape(new_shape), rand(rng, shape, dtype))


# Arguments given as an eagerflow tensor where a sequence is expected (TF accepts both).
# Each script compares with torch's answer for the same call; it runs in a subprocess
# because the bug below is a use-after-free that can crash the interpreter.
TENSOR_AS_SEQUENCE = {
    "reshape_to_shape_of_tensor": """
import numpy as np, eagerflow as ef
x = ef.constant(np.arange(12.0))
assert tuple(ef.reshape(x, ef.shape(ef.zeros([3, 4]))).shape) == (3, 4)  # torch: x.reshape(y.shape)
assert tuple(ef.reshape(x, ef.constant(np.array([2, 6]))).shape) == (2, 6)
assert tuple(ef.broadcast_to(ef.constant(1.0), ef.shape(ef.zeros([2, 5]))).shape) == (2, 5)
""",
    # A clean Python error would do here too (whether TF unpacks a tensor there is moot); a crash would not.
    "stack_and_concat_of_a_tensor": """
import numpy as np, eagerflow as ef
a = np.arange(6.0).reshape(2, 3)
for fn, want in [(lambda t: ef.stack(t, axis=1), a.T),  # torch.stack(list(t), 1)
                 (lambda t: ef.concat(t, axis=0), a.reshape(-1))]:  # torch.cat(list(t))
    try:
        got = fn(ef.constant(a)).numpy()
    except Exception:
        continue
    np.testing.assert_array_equal(got, want)
""",
}
# Sequence arguments given as tensors, NumPy arrays or custom sequences (whose
# __getitem__ makes each item afresh): once read through borrowed handles, which
# crashed. Run in a subprocess so that a crash fails one test, not the run.


@pytest.mark.parametrize("name", ["reshape_to_shape_of_tensor", "stack_and_concat_of_a_tensor"])
def test_tensor_as_sequence_argument(name):
    result = subprocess.run([sys.executable, "-c", TENSOR_AS_SEQUENCE[name]], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, f"exit status {result.returncode}: {result.stderr[-2000:]}"


@floats
@pytest.mark.parametrize("shape,perm", [((2, 3, 4), [2, 0, 1]), ((2, 3, 4), None), ((3, 4), None),
                                        ((2, 3, 4), [0, 2, 1]), ((0, 3), [1, 0])], ids=str)
def test_transpose(rng, shape, perm, dtype):
    """perm=None reverses the axes (TF), torch's permute needs them spelled out."""
    p = list(range(len(shape)))[::-1] if perm is None else perm
    check(rng, lambda t: ef.transpose(t, perm=perm), lambda t: t.permute(p), rand(rng, shape, dtype))


CONCAT_CASES = [([(2, 3), (4, 3), (0, 3)], 0), ([(2, 1), (2, 3)], 1), ([(2, 3, 4), (2, 3, 1)], -1), ([(3,)], 0)]


@floats
@pytest.mark.parametrize("shapes,axis", CONCAT_CASES, ids=str)
def test_concat(rng, shapes, axis, dtype):
    check(rng, lambda *ts: ef.concat(list(ts), axis), lambda *ts: torch.cat(ts, axis),
          *[rand(rng, s, dtype) for s in shapes])


@floats
@pytest.mark.parametrize("shape,axis", [((2, 3), 0), ((2, 3), 1), ((2, 3), 2), ((2, 3), -1), ((), 0), ((0, 2), 1)],
                         ids=str)
def test_stack(rng, shape, axis, dtype):
    check(rng, lambda *ts: ef.stack(list(ts), axis=axis), lambda *ts: torch.stack(ts, axis),
          *[rand(rng, shape, dtype) for _ in range(3)])


@floats
@pytest.mark.parametrize("shape,multiples", [((2, 3), [2, 1]), ((2, 3), [1, 3]), ((2, 3), [2, 2]), ((3,), [4]),
                                             ((2, 1, 3), [1, 2, 1]), ((2, 3), [0, 2])], ids=str)
def test_tile(rng, shape, multiples, dtype):
    check(rng, lambda t: ef.tile(t, multiples), lambda t: t.repeat(multiples), rand(rng, shape, dtype))


def t_pad(x, paddings, mode, value):
    """TF's pad. CONSTANT is torch's F.pad (paddings listed last axis first); torch has no
    SYMMETRIC mode and REFLECT only for some ranks, so the mirrored modes are written as
    index_select with TF's index maps (REFLECT leaves the edge out, SYMMETRIC repeats it)."""
    if mode == "CONSTANT":
        return F.pad(x, [p for pair in reversed(paddings) for p in pair], value=value)
    for axis, (before, after) in enumerate(paddings):
        n = x.shape[axis]
        pos = np.arange(-before, n + after)
        if mode == "REFLECT":
            pos = np.abs(pos)
            pos = np.where(pos > n - 1, 2 * (n - 1) - pos, pos)
        else:
            pos = np.where(pos < 0, -pos - 1, pos)
            pos = np.where(pos > n - 1, 2 * n - 1 - pos, pos)
        x = x.index_select(axis, torch.from_numpy(pos))
    return x


PAD_CASES = [
    ((3, 4), [[1, 2], [0, 1]], "CONSTANT", 0),
    ((3, 4), [[0, 0], [2, 2]], "CONSTANT", 1.5),
    ((0, 2), [[1, 1], [1, 0]], "CONSTANT", 0),
    ((5,), [[2, 3]], "CONSTANT", -1),
    ((3, 4), [[1, 2], [2, 1]], "REFLECT", 0),
    ((2, 3, 4), [[1, 0], [0, 2], [3, 3]], "REFLECT", 0),
    ((3, 4), [[2, 3], [0, 4]], "SYMMETRIC", 0),
    ((5,), [[5, 1]], "SYMMETRIC", 0),
]


@floats
@pytest.mark.parametrize("shape,paddings,mode,value", PAD_CASES, ids=[str(c) for c in PAD_CASES])
def test_pad(rng, shape, paddings, mode, value, dtype):
    """Mirrored reads of one element add up in the gradient."""
    check(rng, lambda t: ef.pad(t, paddings, mode=mode, constant_values=value),
          lambda t: t_pad(t, paddings, mode, value), rand(rng, shape, dtype))


GATHER_CASES = [  # (params shape, indices, axis)
    ((5, 4), [0, 3, 3, 1], 0),  # a duplicate index: its gradients add up
    ((5, 4), [[1, 0, 1], [3, 2, 2]], 1),
    ((2, 5, 3), [4, 0, 4, 2], 1),
    ((2, 5, 3), [2, 1], -1),
    ((5, 4), 2, 0),  # a scalar index removes the axis
    ((5, 4), np.zeros((0,), np.int64), 0),  # no indices
    ((6,), [[5, 0], [0, 5]], 0),
]


@floats
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("shape,indices,axis", GATHER_CASES, ids=[f"{c[0]}-axis{c[2]}" for c in GATHER_CASES])
def test_gather(rng, shape, indices, axis, index_dtype, dtype):
    """Shape params[:axis] + indices.shape + params[axis+1:], built in torch from index_select."""
    idx = np.asarray(indices).astype(index_dtype)

    def t_gather(p, i):
        ax = axis % p.ndim
        flat = p.index_select(ax, i.reshape(-1))
        return flat.reshape(p.shape[:ax] + i.shape + p.shape[ax + 1:])

    check(rng, lambda p, i: ef.gather(p, i, axis=axis), t_gather, rand(rng, shape, dtype), idx)


@floats
@pytest.mark.parametrize("axis", [1, 2])
def test_gather_batch_dims(rng, axis, dtype):
    """batch_dims=1: each batch row picks from its own params."""
    params = rand(rng, (2, 5, 3, 2), dtype)
    idx = np.array([[2, 0, 2], [1, 1, 0]], np.int64)
    check(rng, lambda p, i: ef.gather(p, i, axis=axis, batch_dims=1),
          lambda p, i: torch.stack([p[b].index_select(axis - 1, i[b]) for b in range(2)]), params, idx)


@floats
def test_gather_nd_batch_dims(rng, dtype):
    params = rand(rng, (2, 3, 4), dtype)
    idx = np.array([[[0, 1], [2, 2]], [[1, 0], [0, 0]]], np.int64)  # per batch: two (row, column) pairs
    check(rng, lambda p, i: ef.gather_nd(p, i, batch_dims=1),
          lambda p, i: torch.stack([p[b][i[b][..., 0], i[b][..., 1]] for b in range(2)]), params, idx)


GATHER_ND_CASES = [  # (params shape, indices)
    ((4, 5), [[0, 1], [3, 4], [0, 1]]),  # scalars; a duplicate
    ((4, 5), [[2], [0], [2]]),  # rows
    ((2, 3, 4), [[[0, 1], [1, 2]], [[1, 0], [0, 1]]]),  # indices of rank 3
    ((2, 3, 4), [[1, 2, 3]]),
]


@floats
@pytest.mark.parametrize("shape,indices", GATHER_ND_CASES, ids=[str(c[0]) + "-" + str(i) for i, c in
                                                                 enumerate(GATHER_ND_CASES)])
def test_gather_nd(rng, shape, indices, dtype):
    """Shape indices[:-1] + params[indices.shape[-1]:]: torch's advanced indexing."""
    idx = np.asarray(indices, np.int64)
    check(rng, ef.gather_nd, lambda p, i: p[tuple(i[..., k] for k in range(i.shape[-1]))],
          rand(rng, shape, dtype), idx)


WHERE_CASES = [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), ()), ((), (2, 3), (2, 3)), ((2, 3), (3,), (2, 1)),
               ((0, 3), (3,), (1, 3))]


@floats
@pytest.mark.parametrize("shapes", WHERE_CASES, ids=str)
def test_where(rng, shapes, dtype):
    """Three-way broadcasting; x gets the gradient where the condition holds, y elsewhere."""
    cond = rng.random(shapes[0]) < 0.5
    check(rng, ef.where, torch.where, np.asarray(cond), rand(rng, shapes[1], dtype), rand(rng, shapes[2], dtype))


@floats
def test_where_python_number(rng, dtype):
    cond = rng.random((3, 4)) < 0.5
    check(rng, lambda c, x: ef.where(c, x, 0.5), lambda c, x: torch.where(c, x, torch.tensor(0.5, dtype=x.dtype)),
          cond, rand(rng, (3, 4), dtype))


@floats
@pytest.mark.parametrize("shape,axis", [((2, 3, 4), [0]), ((2, 3, 4), [1, 2]), ((2, 3, 4), [-1]), ((5,), 0),
                                        ((0, 3), [1])], ids=str)
def test_reverse(rng, shape, axis, dtype):
    dims = t_dims(axis, len(shape))
    check(rng, lambda t: ef.reverse(t, axis), lambda t: t.flip(dims), rand(rng, shape, dtype))


@floats
@pytest.mark.parametrize("shape,axis", [((2, 3), 0), ((2, 3), 2), ((2, 3), -1), ((), 0), ((0, 3), 1)], ids=str)
def test_expand_dims(rng, shape, axis, dtype):
    check(rng, lambda t: ef.expand_dims(t, axis), lambda t: t.unsqueeze(axis), rand(rng, shape, dtype))


@floats
@pytest.mark.parametrize("shape,axis", [((1, 3, 1), None), ((1, 3, 1), [0]), ((1, 3, 1), [-1]),
                                        ((1, 3, 1), [0, 2]), ((1, 1), None), ((1, 0), [0])], ids=str)
def test_squeeze(rng, shape, axis, dtype):
    def t_squeeze(t):
        dims = [d for d in range(t.ndim) if t.shape[d] == 1] if axis is None else t_dims(axis, t.ndim)
        for d in sorted(dims, reverse=True):
            t = t.squeeze(d)
        return t

    check(rng, lambda t: ef.squeeze(t, axis), t_squeeze, rand(rng, shape, dtype))


SLICES = {  # id: (shape, key)
    "[1:, ::2]": ((4, 5), (slice(1, None), slice(None, None, 2))),
    "[::-1]": ((5,), slice(None, None, -1)),
    "[..., 1]": ((2, 3, 4), (Ellipsis, 1)),
    "[None, :, -1]": ((3, 4), (None, slice(None), -1)),
    "[-2:, 1:3:2]": ((4, 5), (slice(-2, None), slice(1, 3, 2))),
    "[1, ::-2]": ((3, 5), (1, slice(None, None, -2))),
    "[5:10] (clamped, empty)": ((4,), slice(5, 10)),
    "[::-1, ..., 1:]": ((2, 3, 4), (slice(None, None, -1), Ellipsis, slice(1, None))),
    "[0]": ((3, 4), 0),
    "[-1, -1]": ((3, 4), (-1, -1)),
    "[3:0:-1, None]": ((5,), (slice(3, 0, -1), None)),
    "[:, 1:2] of empty": ((0, 3), (slice(None), slice(1, 2))),
}


@floats
@pytest.mark.parametrize("name", list(SLICES))
def test_slicing(rng, name, dtype):
    """t[key] against NumPy's reading of the same key. torch rejects negative steps, so the
    reference gathers the flat positions that NumPy's slicing of arange picks."""
    shape, key = SLICES[name]
    pos = np.arange(int(np.prod(shape))).reshape(shape)[key]
    check(rng, lambda t: t[key], lambda t: t.reshape(-1)[torch.from_numpy(np.ascontiguousarray(pos).reshape(-1))]
          .reshape(pos.shape), rand(rng, shape, dtype))


@floats
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
@pytest.mark.parametrize("shape,axis", [((6,), -1), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((0, 3), -1)],
                         ids=str)
def test_sort(rng, shape, axis, direction, dtype):
    """sort (values, with the gradient sent back to where each value came from) and argsort
    (int32 positions); random data has no ties."""
    x = rand(rng, shape, dtype)
    desc = direction == "DESCENDING"
    check(rng, lambda t: ef.sort(t, axis=axis, direction=direction),
          lambda t: torch.sort(t, dim=axis, descending=desc)[0], x)
    out = check(rng, lambda t: ef.argsort(t, axis=axis, direction=direction),
                lambda t: torch.argsort(t, dim=axis, descending=desc), x, out_dtype=np.int32)
    assert out.dtype == np.int32


@floats
@pytest.mark.parametrize("shape,k", [((6,), 3), ((3, 5), 2), ((3, 5), 5), ((2, 3, 4), 1), ((3, 4), 0), ((0, 4), 2)],
                         ids=str)
def test_top_k(rng, shape, k, dtype):
    """Values (differentiable) and int32 indices of the k largest along the last axis."""
    x = rand(rng, shape, dtype)
    check(rng, lambda t: ef.math.top_k(t, k=k)[0], lambda t: torch.topk(t, k, dim=-1)[0], x)
    out = check(rng, lambda t: ef.math.top_k(t, k=k)[1], lambda t: torch.topk(t, k, dim=-1)[1], x, out_dtype=np.int32)
    assert out.dtype == np.int32


# ---------------------------------------------------------------------------------
# Other ops (tensordot, norms, bias_add, splitting, one_hot, scatter_nd)

OTHER = {  # name: (input shapes, eagerflow function, torch function)
    "tensordot_1": ([(4, 3, 5), (5, 2)], lambda a, b: ef.tensordot(a, b, 1), lambda a, b: torch.tensordot(a, b, 1)),
    "tensordot_axes": ([(4, 3, 5), (5, 6, 4)], lambda a, b: ef.tensordot(a, b, [[0, 2], [2, 0]]),
                       lambda a, b: torch.tensordot(a, b, ([0, 2], [2, 0]))),
    "norm": ([(4, 3, 5)], ef.norm, lambda a: torch.linalg.vector_norm(a)),
    "norm_axis": ([(4, 3, 5)], lambda a: ef.norm(a, axis=1), lambda a: torch.linalg.vector_norm(a, dim=1)),
    "norm_1": ([(4, 3, 5)], lambda a: ef.norm(a, ord=1, axis=-1), lambda a: torch.linalg.vector_norm(a, 1, dim=-1)),
    "norm_3": ([(4, 3, 5)], lambda a: ef.norm(a, ord=3, axis=-1), lambda a: torch.linalg.vector_norm(a, 3, dim=-1)),
    "norm_inf": ([(4, 3, 5)], lambda a: ef.norm(a, ord=np.inf, axis=-1),
                 lambda a: torch.linalg.vector_norm(a, float("inf"), dim=-1)),
    "norm_fro": ([(4, 3, 5)], lambda a: ef.norm(a, ord="fro", axis=[0, 1]),
                 lambda a: torch.linalg.matrix_norm(a, "fro", dim=(0, 1))),
    "norm_matrix_1": ([(4, 3, 5)], lambda a: ef.norm(a, ord=1, axis=[0, 1]),
                      lambda a: torch.linalg.matrix_norm(a, 1, dim=(0, 1))),
    "norm_matrix_inf": ([(4, 3, 5)], lambda a: ef.norm(a, ord=np.inf, axis=[1, 2]),
                        lambda a: torch.linalg.matrix_norm(a, float("inf"), dim=(1, 2))),
    "bias_add": ([(4, 3, 5), (5,)], ef.nn.bias_add, torch.add),
    "bias_add_nchw": ([(4, 3, 5), (3,)], lambda a, b: ef.nn.bias_add(a, b, data_format="NCHW"),
                      lambda a, b: a + b[:, None]),
    "unstack": ([(4, 3, 5)], lambda a: ef.unstack(a, axis=1)[2], lambda a: a[:, 2]),
    "split": ([(4, 3, 5)], lambda a: ef.split(a, [1, 3, 1], axis=2)[1], lambda a: a[:, :, 1:4]),
    "split_even": ([(4, 3, 6)], lambda a: ef.split(a, 3, axis=-1)[2], lambda a: a[..., 4:]),
    "broadcast_to": ([(4, 1, 5)], lambda a: ef.broadcast_to(a, (2, 4, 3, 5)), lambda a: a.expand(2, 4, 3, 5)),
    "identity": ([(4, 3)], ef.identity, lambda a: a * 1),
}


@floats
@pytest.mark.parametrize("name", list(OTHER))
def test_other_ops(rng, name, dtype):
    shapes, ef_fn, t_fn = OTHER[name]
    check(rng, ef_fn, t_fn, *[rand(rng, s, dtype) for s in shapes])


def test_one_hot(rng):
    """float32 by default (TF); an out-of-range index gives a row of off_value."""
    idx = np.array([[0, 3], [1, 5]])
    check(rng, lambda i: ef.one_hot(i, 4), lambda i: F.one_hot(i.clamp(max=4), 5)[..., :4].double(), idx,
          out_dtype=np.float32)


def test_one_hot_dtype_follows_on_and_off_value():
    """TensorFlow: on_value's (else off_value's) dtype when given, a Python int being int32;
    float32 when neither is given; `dtype` converts Python numbers and must match tensors."""
    idx = [0, 2]
    ref = F.one_hot(torch.tensor(idx), 3)
    cases = [
        (dict(on_value=5), ef.int32, ref * 5),
        (dict(off_value=-1), ef.int32, torch.where(ref == 1, 1, -1)),
        (dict(on_value=5, off_value=-1), ef.int32, torch.where(ref == 1, 5, -1)),
        (dict(on_value=2.5, off_value=0.5), ef.float32, torch.where(ref == 1, 2.5, 0.5)),
        (dict(on_value=ef.constant(3, ef.int64)), ef.int64, ref * 3),
        (dict(on_value=np.float64(0.1)), ef.float64, ref.double() * 0.1),
        (dict(on_value=5, dtype=ef.float32), ef.float32, ref * 5),
        (dict(on_value=5, off_value=1, dtype=ef.float64), ef.float64, torch.where(ref == 1, 5, 1)),
        (dict(dtype=ef.int64), ef.int64, ref),
        (dict(), ef.float32, ref),
    ]
    for kwargs, dtype, expected in cases:
        out = ef.one_hot(idx, 3, **kwargs)
        assert out.dtype == dtype, kwargs
        np.testing.assert_array_equal(out.numpy(), expected.numpy(), err_msg=str(kwargs))
    # TensorFlow's TypeErrors: on and off of different dtypes, or a tensor not of `dtype`.
    with pytest.raises(TypeError, match="on_value.*int32.*off_value.*float32"):
        ef.one_hot(idx, 3, on_value=1, off_value=0.)
    with pytest.raises(TypeError, match="on_value.*int64.*dtype.*int32"):
        ef.one_hot(idx, 3, on_value=ef.constant(1, ef.int64), dtype=ef.int32)
    with pytest.raises(TypeError, match="2.5.*int32"):
        ef.one_hot(idx, 3, on_value=2.5, dtype=ef.int32)


def test_range_dtype_follows_tensorflow():
    """A Python float is float32 and a Python int int32 (int64 when it needs to be); 0-d
    tensors bring their dtype; the widest wins; `dtype` casts."""
    cases = [
        (lambda: ef.range(0., 1., .25), torch.arange(0., 1., .25), ef.float32),
        (lambda: ef.range(16.), torch.arange(16.), ef.float32),
        (lambda: ef.range(5), torch.arange(5), ef.int32),
        (lambda: ef.range(1, 2.5, 0.5), torch.arange(1, 2.5, 0.5), ef.float32),
        (lambda: ef.range(2**40, 2**40 + 3), torch.arange(2**40, 2**40 + 3), ef.int64),
        (lambda: ef.range(0., 1., .25, dtype=ef.float64), torch.arange(0., 1., .25, dtype=torch.float64), ef.float64),
        (lambda: ef.range(ef.constant(4, ef.int64)), torch.arange(4), ef.int64),
        (lambda: ef.range(ef.constant(1.5, ef.float64), 4), torch.arange(1.5, 4, dtype=torch.float64), ef.float64),
        (lambda: ef.range(ef.constant(0), ef.constant(7), ef.constant(3)), torch.arange(0, 7, 3), ef.int32),
        (lambda: ef.range(1, ef.constant(3.)), torch.arange(1., 3.), ef.float32),
        (lambda: ef.range(ef.constant(5.7), dtype=ef.int32), torch.arange(5), ef.int32),  # cast: truncates
        (lambda: ef.range(ef.constant(3), dtype=ef.float32), torch.arange(3.), ef.float32),
        (lambda: ef.range(ef.Variable(3.)), torch.arange(3.), ef.float32),
        (lambda: ef.range(np.float64(2.)), torch.arange(2., dtype=torch.float64), ef.float64),
    ]
    for i, (make, expected, dtype) in enumerate(cases):
        out = make()
        assert out.dtype == dtype, f"case {i}: {out.dtype}"
        np.testing.assert_array_equal(out.numpy(), expected.numpy(), err_msg=f"case {i}")
    with pytest.raises(ef.errors.InvalidArgumentError, match="'limit' must be a scalar"):
        ef.range(ef.constant([1, 2]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="'start' has dtype bool"):
        ef.range(ef.constant(True), 3)
    with pytest.raises(TypeError, match="0.5 to int32"):
        ef.range(0.5, 3, dtype=ef.int32)


def test_where_of_python_numbers_is_float32():
    """TensorFlow converts x first and y to x's dtype: two Python floats give float32."""
    cond = [True, False, True]
    out = ef.where(cond, 1., 0.)
    assert out.dtype == ef.float32
    np.testing.assert_array_equal(out.numpy(), torch.where(torch.tensor(cond), 1., 0.).numpy())
    assert ef.where(cond, 1, 0).dtype == ef.int32
    assert ef.where(cond, 1., 0).dtype == ef.float32
    assert ef.where(cond, [1., 2., 3.], 0).dtype == ef.float32
    assert ef.where(cond, 0, ef.constant([1., 2., 3.], ef.float64)).dtype == ef.float64
    assert ef.where(cond, np.float64(1.), 0.).dtype == ef.float64


@floats
def test_scatter_nd(rng, dtype):
    """Duplicate indices add up; the gradient of updates reads the output gradient back."""
    idx = np.array([[1], [3], [1]])
    check(rng, lambda i, u: ef.scatter_nd(i, u, [5, 3]),
          lambda i, u: torch.zeros(5, 3, dtype=u.dtype).index_put((i[:, 0],), u, accumulate=True),
          idx, rand(rng, (3, 3), dtype))


@floats
def test_tensor_scatter_nd_add(rng, dtype):
    """scatter_nd added into a tensor; the tensor's gradient passes through."""
    idx = np.array([[1], [3], [1]])
    check(rng, lambda t, i, u: ef.tensor_scatter_nd_add(t, i, u),
          lambda t, i, u: t.index_put((i[:, 0],), u, accumulate=True),
          rand(rng, (5, 3), dtype), idx, rand(rng, (3, 3), dtype))


# ---------------------------------------------------------------------------------
# Ops on views: eagerflow's transpose, slices (negative steps included) and broadcast_to
# return strided views of their input; every op must read them, and send gradients
# back through them, as it does contiguous tensors.

VIEWS = {  # name: (eagerflow view of a (6, 8) tensor, the same view in torch)
    "transpose": (lambda t: ef.transpose(t), lambda t: t.t()),
    "reversed": (lambda t: t[::-1], lambda t: t.flip(0)),
    "strided": (lambda t: t[1:, ::2], lambda t: t[1:, ::2]),
    "reversed_strided_T": (lambda t: ef.transpose(t[::-2, ::-1]), lambda t: t.flip(0)[::2].flip(1).t()),
    "broadcast": (lambda t: ef.broadcast_to(t[:, :1], (6, 5)), lambda t: t[:, :1].expand(6, 5)),
}
ON_VIEWS = {  # name: (eagerflow op, torch op), both on a matrix
    "exp": (ef.math.exp, torch.exp),
    "sigmoid": (ef.math.sigmoid, torch.sigmoid),
    "times_reversed": (lambda v: v * ef.reverse(v, [0]), lambda v: v * v.flip(0)),
    "add_row": (lambda v: v + v[0], lambda v: v + v[0]),
    "reduce_sum0": (lambda v: ef.reduce_sum(v, axis=0), lambda v: v.sum(0)),
    "reduce_sum1": (lambda v: ef.reduce_sum(v, axis=1), lambda v: v.sum(1)),
    "reduce_max1": (lambda v: ef.reduce_max(v[:, :3] + v[:, -3:] * 0.5, axis=1),
                    lambda v: (v[:, :3] + v[:, -3:] * 0.5).amax(1)),
    "reduce_prod0": (lambda v: ef.reduce_prod(v, axis=0), lambda v: v.prod(0)),
    "logsumexp": (lambda v: ef.reduce_logsumexp(v, axis=1), lambda v: torch.logsumexp(v, 1)),
    "variance": (lambda v: ef.reduce_variance(v, axis=0), lambda v: v.var(0, unbiased=False)),
    "cumsum0": (lambda v: ef.cumsum(v, 0), lambda v: v.cumsum(0)),
    "cumsum1_reverse": (lambda v: ef.cumsum(v, 1, reverse=True), lambda v: v.flip(1).cumsum(1).flip(1)),
    "cumprod1": (lambda v: ef.cumprod(v, 1), lambda v: v.cumprod(1)),
    "matmul_vvT": (lambda v: ef.matmul(v, v, transpose_b=True), lambda v: v @ v.t()),
    "matmul_vTv": (lambda v: ef.matmul(v, v, transpose_a=True), lambda v: v.t() @ v),
    "softmax_last": (ef.nn.softmax, lambda v: torch.softmax(v, -1)),
    "log_softmax_first": (lambda v: ef.nn.log_softmax(v, axis=0), lambda v: torch.log_softmax(v, 0)),
    "sort": (lambda v: ef.sort(v, axis=-1), lambda v: torch.sort(v, -1)[0]),
    "top_k": (lambda v: ef.math.top_k(v, k=2)[0], lambda v: torch.topk(v, 2, -1)[0]),
    "gather": (lambda v: ef.gather(v, ef.constant(np.array([2, 0, 2])), axis=1),
               lambda v: v.index_select(1, torch.tensor([2, 0, 2]))),
    "concat": (lambda v: ef.concat([v, ef.exp(v)], 0), lambda v: torch.cat([v, v.exp()], 0)),
    "pad": (lambda v: ef.pad(v, [[1, 0], [0, 2]]), lambda v: F.pad(v, [0, 2, 1, 0])),
    "tile": (lambda v: ef.tile(v, [2, 1]), lambda v: v.repeat(2, 1)),
    "reshape": (lambda v: ef.reshape(v, [-1]), lambda v: v.reshape(-1)),
    "where": (lambda v: ef.where(v > 0, v, v * 3), lambda v: torch.where(v > 0, v, v * 3)),
    "l2_normalize": (lambda v: ef.nn.l2_normalize(v, axis=0),
                     lambda v: v * torch.rsqrt(torch.clamp((v * v).sum(0, keepdim=True), min=1e-12))),
    "slice_of_view": (lambda v: v[1:, ::-1] * 2, lambda v: v[1:].flip(1) * 2),
}


@floats
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("op", list(ON_VIEWS))
def test_op_on_view(rng, op, view, dtype):
    ef_view, t_view = VIEWS[view]
    ef_op, t_op = ON_VIEWS[op]
    check(rng, lambda t: ef_op(ef_view(t)), lambda t: t_op(t_view(t)), rand_nonzero(rng, (6, 8), dtype, 0.5, 1.5))


# ---------------------------------------------------------------------------------
# Larger tensors: past eagerflow's break-even for parallel kernels (~20 us of work) and
# vectorized loops with remainders (odd sizes).

LARGE = {  # name: (input shapes, eagerflow function, torch function)
    "exp": ([(301, 203)], ef.math.exp, torch.exp),
    "tanh": ([(301, 203)], ef.math.tanh, torch.tanh),
    "add_broadcast": ([(301, 203), (203,)], ef.add, torch.add),
    "multiply_broadcast_col": ([(301, 203), (301, 1)], ef.multiply, torch.mul),
    "reduce_sum": ([(301, 203)], ef.reduce_sum, torch.sum),
    "reduce_sum0": ([(301, 203)], lambda t: ef.reduce_sum(t, axis=0), lambda t: t.sum(0)),
    "reduce_mean1": ([(301, 203)], lambda t: ef.reduce_mean(t, axis=1), lambda t: t.mean(1)),
    "reduce_max0": ([(301, 203)], lambda t: ef.reduce_max(t, axis=0), lambda t: t.amax(0)),
    "reduce_min": ([(301, 203)], ef.reduce_min, torch.amin),
    "reduce_variance1": ([(301, 203)], lambda t: ef.reduce_variance(t, axis=1), lambda t: t.var(1, unbiased=False)),
    "logsumexp0": ([(301, 203)], lambda t: ef.reduce_logsumexp(t, axis=0), lambda t: torch.logsumexp(t, 0)),
    "cumsum0": ([(301, 203)], lambda t: ef.cumsum(t, 0), lambda t: t.cumsum(0)),
    "cumsum1": ([(301, 203)], lambda t: ef.cumsum(t, 1), lambda t: t.cumsum(1)),
    "softmax": ([(301, 203)], ef.nn.softmax, lambda t: torch.softmax(t, -1)),
    "log_softmax0": ([(301, 203)], lambda t: ef.nn.log_softmax(t, axis=0), lambda t: torch.log_softmax(t, 0)),
    "matmul": ([(65, 129), (129, 97)], ef.matmul, torch.matmul),
    "batched_matmul": ([(7, 33, 65), (65, 31)], ef.matmul, torch.matmul),
    "transpose_copy": ([(301, 203)], lambda t: ef.transpose(t) * 2, lambda t: t.t() * 2),
    "sort": ([(101, 203)], ef.sort, lambda t: torch.sort(t, -1)[0]),
    "gelu": ([(301, 203)], ef.nn.gelu, F.gelu),
}


@floats
@pytest.mark.parametrize("name", list(LARGE))
def test_large(rng, name, dtype):
    shapes, ef_fn, t_fn = LARGE[name]
    check(rng, ef_fn, t_fn, *[rand(rng, s, dtype, -1, 1) for s in shapes],
          value_atol=F32_MATMUL_ATOL if dtype == np.float32 and "matmul" in name else None)


# ---------------------------------------------------------------------------------
# Second derivatives: eagerflow writes gradients with differentiable public ops, so a
# tape around another tape's gradient call differentiates again (torch: create_graph).

def check_second_order(rng, ef_fn, torch_fn, *arrays):
    """d/dx <v, d/dx <dy, f(x)>> for every input x, against torch."""
    arrays = [np.asarray(a) for a in arrays]
    xs = [ef.constant(a) for a in arrays]
    with ef.GradientTape() as outer:
        for x in xs:
            outer.watch(x)
        with ef.GradientTape() as inner:
            for x in xs:
                inner.watch(x)
            y = ef_fn(*xs)
        dy = rand(rng, tuple(y.shape), arrays[0].dtype)
        gs = inner.gradient(y, xs, output_gradients=ef.constant(dy))
        vs = [rand(rng, a.shape, a.dtype) for a in arrays]
        # <v, g> summed over every first-order gradient (None: no dependence).
        total = None
        for g, v in zip(gs, vs):
            if g is not None:
                term = ef.reduce_sum(g * ef.constant(v))
                total = term if total is None else total + term
    ts = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in arrays]
    tgs = torch.autograd.grad(torch_fn(*ts), ts, torch.from_numpy(dy.astype(np.float64)), create_graph=True,
                              allow_unused=True)
    ttotal = sum((tg * torch.from_numpy(v.astype(np.float64))).sum() for tg, v in zip(tgs, vs) if tg is not None)
    hs = outer.gradient(total, xs) if total is not None else [None] * len(xs)
    ths = torch.autograd.grad(ttotal, ts, allow_unused=True) if torch.is_tensor(ttotal) and ttotal.requires_grad \
        else [None] * len(ts)
    for i, (h, th, a) in enumerate(zip(hs, ths, arrays)):
        got = np.zeros(a.shape) if h is None else np.array(h.numpy())
        want = t_numpy(th, a.shape)
        assert_close(got, want, a.dtype, grad=True, what=f"second derivative for input {i}")


SECOND_ORDER = {  # name: (input domains, eagerflow function, torch function)
    **{name: ([UNARY[name][2]], UNARY[name][0], UNARY[name][1]) for name in [
        "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
        "cosh", "tanh", "erf", "sigmoid", "softplus", "reciprocal", "square", "abs", "elu", "selu", "softsign",
        "gelu", "gelu_tanh", "relu", "leaky_relu"]},
    "multiply": ([(-2, 2), (-2, 2)], ef.multiply, torch.mul),
    "divide": ([(-2, 2), NONZERO], ef.divide, torch.div),
    "pow": ([(0.3, 2.5), (-2, 2)], ef.pow, torch.pow),
    "squared_difference": ([(-2, 2), (-2, 2)], ef.squared_difference, lambda x, y: (x - y) ** 2),
    "maximum": ([(-2, 2), (-2, 2)], lambda x, y: ef.maximum(x, y) ** 2, lambda x, y: torch.maximum(x, y) ** 2),
    "reduce_prod": ([(0.5, 1.5)], lambda t: ef.reduce_prod(t, axis=1), lambda t: t.prod(1)),
    "reduce_prod_all": ([(0.5, 1.5)], ef.reduce_prod, torch.prod),
    "logsumexp": ([(-2, 2)], lambda t: ef.reduce_logsumexp(t, axis=1), lambda t: torch.logsumexp(t, 1)),
    "variance": ([(-2, 2)], lambda t: ef.reduce_variance(t, axis=0), lambda t: t.var(0, unbiased=False)),
    "std": ([(-2, 2)], lambda t: ef.reduce_std(t, axis=1), lambda t: t.std(1, unbiased=False)),
    "reduce_max_sq": ([(-2, 2)], lambda t: ef.reduce_max(t * t, axis=1), lambda t: (t * t).amax(1)),
    "cumprod": ([(0.5, 1.5)], lambda t: ef.cumprod(t, 1), lambda t: t.cumprod(1)),
    "cumsum_sq": ([(-2, 2)], lambda t: ef.cumsum(t * t, 0, exclusive=True),
                  lambda t: t_scan(t * t, 0, True, False, "cumsum")),
    "softmax": ([(-2, 2)], ef.nn.softmax, lambda t: torch.softmax(t, -1)),
    "log_softmax": ([(-2, 2)], lambda t: ef.nn.log_softmax(t, axis=0), lambda t: torch.log_softmax(t, 0)),
    "softmax_ce": ([(0, 1), (-2, 2)], lambda z, x: ef.nn.softmax_cross_entropy_with_logits(labels=z, logits=x),
                   lambda z, x: -(z * torch.log_softmax(x, -1)).sum(-1)),
    "sigmoid_ce": ([(0, 1), (-2, 2)], lambda z, x: ef.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
                   lambda z, x: torch.clamp(x, min=0) - x * z + torch.log1p(torch.exp(-x.abs()))),
    "l2_normalize": ([(-2, 2)], lambda t: ef.nn.l2_normalize(t, axis=1),
                     lambda t: t * torch.rsqrt(torch.clamp((t * t).sum(1, keepdim=True), min=1e-12))),
    "matmul_square": ([(-2, 2), (-2, 2)], lambda a, b: ef.square(ef.matmul(a, b, transpose_b=True)),
                      lambda a, b: (a @ b.t()) ** 2),
    "sort_sq": ([(-2, 2)], lambda t: ef.square(ef.sort(t)), lambda t: torch.sort(t, -1)[0] ** 2),
    "gather_sq": ([(-2, 2)], lambda t: ef.square(ef.gather(t, ef.constant(np.array([1, 1, 0])), axis=1)),
                  lambda t: t.index_select(1, torch.tensor([1, 1, 0])) ** 2),
    "where_sq": ([(-2, 2)], lambda t: ef.where(t > 0, t * t, t * t * t), lambda t: torch.where(t > 0, t * t, t ** 3)),
    "clip_sq": ([(-2, 2)], lambda t: ef.square(ef.clip_by_value(t, -1.0, 1.0)), lambda t: torch.clamp(t, -1, 1) ** 2),
}


@floats
@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_order(rng, name, dtype):
    domains, ef_fn, t_fn = SECOND_ORDER[name]
    shapes = [(3, 4), (3, 4)] if name in ("softmax_ce", "sigmoid_ce", "matmul_square") else [(3, 4), (4,)]
    check_second_order(rng, ef_fn, t_fn, *[unary_input(rng, d, s, dtype) for d, s in zip(domains, shapes)])


# ---------------------------------------------------------------------------------
# Integer dtypes (forward only: integers carry no gradient). int32 stays int32.

INT_OPS = {  # name: (eagerflow function, torch function, number of inputs)
    "add": (ef.add, torch.add, 2),
    "subtract": (ef.subtract, torch.sub, 2),
    "multiply": (ef.multiply, torch.mul, 2),
    "maximum": (ef.maximum, torch.maximum, 2),
    "minimum": (ef.minimum, torch.minimum, 2),
    "squared_difference": (ef.squared_difference, lambda x, y: (x - y) ** 2, 2),
    "pow": (lambda x, y: ef.pow(x, ef.abs(y)), lambda x, y: torch.pow(x, y.abs()), 2),
    "abs": (ef.math.abs, torch.abs, 1),
    "negative": (ef.math.negative, torch.neg, 1),
    "sign": (ef.math.sign, torch.sign, 1),
    "square": (ef.math.square, torch.square, 1),
    "reduce_sum": (lambda t: ef.reduce_sum(t, axis=0), lambda t: t.sum(0), 1),
    "reduce_prod": (lambda t: ef.reduce_prod(t, axis=1), lambda t: t.prod(1), 1),
    "reduce_max": (lambda t: ef.reduce_max(t, axis=1), lambda t: t.amax(1), 1),
    "reduce_min": (ef.reduce_min, torch.amin, 1),
    # TF's integer mean truncates toward zero (torch refuses integer means).
    "reduce_mean": (lambda t: ef.reduce_mean(t, axis=1), lambda t: torch.div(t.sum(1), t.shape[1],
                                                                          rounding_mode="trunc"), 1),
    "cumsum": (lambda t: ef.cumsum(t, 1), lambda t: t.cumsum(1), 1),
    "cumprod": (lambda t: ef.cumprod(t, 0, exclusive=True), lambda t: t_scan(t, 0, True, False, "cumprod"), 1),
    "matmul": (lambda a, b: ef.matmul(a, b, transpose_b=True), lambda a, b: a @ b.t(), 2),
    "sort": (lambda t: ef.sort(t, direction="DESCENDING"), lambda t: torch.sort(t, -1, descending=True)[0], 1),
    "transpose": (ef.transpose, lambda t: t.t(), 1),
    "slice": (lambda t: t[::-1, 1::2], lambda t: t.flip(0)[:, 1::2], 1),
    "tile": (lambda t: ef.tile(t, [1, 2]), lambda t: t.repeat(1, 2), 1),
}


@pytest.mark.parametrize("int_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("name", list(INT_OPS))
def test_integer_ops(rng, name, int_dtype):
    ef_fn, t_fn, n = INT_OPS[name]
    arrays = [rng.integers(-4, 5, size=(3, 4)).astype(int_dtype) for _ in range(n)]
    check(rng, ef_fn, t_fn, *arrays, out_dtype=int_dtype)


# ---------------------------------------------------------------------------------
# TensorFlow's conventions at non-differentiable points and ties (the documented rule,
# not torch's: torch splits maximum/minimum ties in half, for instance).

class TestConventions:
    @floats
    def test_kinks(self, dtype):
        """relu'(0) = 0; relu6' = 0 at 0 and 6; leaky_relu'(0) = alpha (the left slope);
        abs'(0) = 0; elu'(0) = 1; and these agree with torch too."""
        x = np.array([-1.0, 0.0, 3.0, 6.0, 7.0], dtype)
        cases = {
            ef.nn.relu: [0, 0, 1, 1, 1],
            ef.nn.relu6: [0, 0, 1, 0, 0],
            (lambda t: ef.nn.leaky_relu(t, alpha=0.1)): [0.1, 0.1, 1, 1, 1],
            ef.math.abs: [-1, 0, 1, 1, 1],
            ef.nn.elu: [np.exp(-1.0), 1, 1, 1, 1],
        }
        for fn, want in cases.items():
            _, (g,) = ef_grads(fn, x)
            assert_close(g, np.array(want), dtype, grad=True)
        for fn, t_fn in [(ef.nn.relu, torch.relu), (ef.nn.relu6, F.relu6), (ef.math.abs, torch.abs)]:
            tx = torch.tensor(x.astype(np.float64), requires_grad=True)
            t_fn(tx).sum().backward()
            assert_close(ef_grads(fn, x)[1][0], t_numpy(tx.grad, x.shape), dtype, grad=True)

    @floats
    def test_sign_of_zero(self, dtype):
        x = np.array([-2.0, -0.0, 0.0, 3.0], dtype)
        np.testing.assert_array_equal(ef.math.sign(ef.constant(x)).numpy(), [-1, 0, 0, 1])

    @floats
    def test_round_half_to_even(self, dtype):
        x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997], dtype)
        got = ef.math.round(ef.constant(x)).numpy()
        np.testing.assert_array_equal(got, np.round(x))  # NumPy rounds half to even too
        np.testing.assert_array_equal(got, torch.round(torch.from_numpy(x)).numpy())

    @floats
    @pytest.mark.parametrize("op", ["maximum", "minimum"])
    def test_elementwise_extreme_ties_go_to_x(self, op, dtype):
        """On ties maximum/minimum send the whole gradient to x (TF); torch splits it."""
        x = np.array([1.0, 2.0, 3.0], dtype)
        y = np.array([1.0, 0.0, 5.0], dtype)
        dy = np.array([1.0, 2.0, 4.0], dtype)
        _, (gx, gy) = ef_grads(getattr(ef, op), x, y, dy=dy)
        to_x = (x >= y) if op == "maximum" else (x <= y)
        np.testing.assert_array_equal(gx, np.where(to_x, dy, 0))
        np.testing.assert_array_equal(gy, np.where(to_x, 0, dy))

    @floats
    @pytest.mark.parametrize("op", ["max", "min"])
    def test_reduce_extreme_ties_split(self, op, dtype):
        """Tied extremes share the gradient equally (TF; torch.amax/amin agree)."""
        x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [5.0, -1.0, 5.0]], dtype)
        if op == "min":
            x = -x
        dy = np.array([1.0, 3.0, 2.0], dtype)
        _, (g,) = ef_grads(lambda t: getattr(ef, "reduce_" + op)(t, axis=1), x, dy=dy)
        want = np.array([[0, 0.5, 0.5], [1, 1, 1], [1, 0, 1]]) * np.array([[1.0], [3.0 / 3], [2.0 / 2]])
        assert_close(g, want, dtype, grad=True)
        tx = torch.tensor(x.astype(np.float64), requires_grad=True)
        getattr(tx, "a" + op)(1).backward(torch.from_numpy(dy.astype(np.float64)))
        assert_close(g, t_numpy(tx.grad, x.shape), dtype, grad=True)

    @floats
    def test_reduce_max_all_ties(self, dtype):
        x = np.full((2, 2), 4.0, dtype)
        _, (g,) = ef_grads(ef.reduce_max, x)
        assert_close(g, np.full((2, 2), 0.25), dtype, grad=True)

    @floats
    def test_arg_and_top_k_ties_take_the_lower_index(self, dtype):
        x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]], dtype)
        np.testing.assert_array_equal(ef.argmax(ef.constant(x), axis=1).numpy(), [1, 0])
        np.testing.assert_array_equal(ef.argmin(ef.constant(-x), axis=1).numpy(), [1, 0])
        values, indices = ef.math.top_k(ef.constant(x), k=2)
        np.testing.assert_array_equal(indices.numpy(), [[1, 2], [0, 1]])
        np.testing.assert_array_equal(values.numpy(), [[3, 3], [2, 2]])

    @floats
    def test_sort_and_top_k_tie_gradients_follow_the_stable_order(self, dtype):
        """Tied elements get the gradient of the slot the stable order gives them."""
        x = np.array([2.0, 1.0, 2.0, 0.0], dtype)
        dy = np.array([10.0, 20.0, 30.0, 40.0], dtype)
        _, (g,) = ef_grads(ef.sort, x, dy=dy)  # sorted: x[3], x[1], x[0], x[2]
        np.testing.assert_array_equal(g, [30, 20, 40, 10])
        _, (g,) = ef_grads(lambda t: ef.sort(t, direction="DESCENDING"), x, dy=dy)  # x[0], x[2], x[1], x[3]
        np.testing.assert_array_equal(g, [10, 30, 20, 40])
        _, (g,) = ef_grads(lambda t: ef.math.top_k(t, k=1)[0], x, dy=dy[:1])
        np.testing.assert_array_equal(g, [10, 0, 0, 0])

    @floats
    def test_nan_orders_as_largest(self, dtype):
        """sort, top_k, argmax and reduce_max treat NaN as the largest value (as torch)."""
        x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, -1.0, 0.5, 4.0]], dtype)
        t = torch.from_numpy(x.astype(np.float64))
        ex = ef.constant(x)
        np.testing.assert_array_equal(ef.sort(ex).numpy(), torch.sort(t, -1)[0].numpy())
        np.testing.assert_array_equal(ef.sort(ex, direction="DESCENDING").numpy(),
                                      torch.sort(t, -1, descending=True)[0].numpy())
        np.testing.assert_array_equal(ef.math.top_k(ex, k=2)[0].numpy(), torch.topk(t, 2)[0].numpy())
        np.testing.assert_array_equal(ef.argmax(ex, axis=1).numpy(), np.argmax(x, axis=1))  # the first NaN
        np.testing.assert_array_equal(ef.argmin(ex, axis=1).numpy(), np.argmin(x, axis=1))
        np.testing.assert_array_equal(ef.reduce_max(ex, axis=1).numpy(), t.amax(1).numpy())
        np.testing.assert_array_equal(ef.reduce_min(ex, axis=1).numpy(), t.amin(1).numpy())

    @floats
    def test_piecewise_constant_ops_have_no_gradient(self, dtype):
        x = np.array([-1.5, 0.3, 2.7], dtype)
        for fn in (ef.math.floor, ef.math.ceil, ef.math.round, ef.math.sign,
                   lambda t: ef.math.floordiv(t, 0.7)):
            _, (g,) = ef_grads(fn, x)
            assert g is None or not np.any(g)
