"""Forward-mode autodiff (ef.autodiff.ForwardAccumulator, ef.jvp) against PyTorch.

Each case runs the same function through ef.jvp and through functorch.jvp (PyTorch
1.13's torch.func) on the same float64 inputs and random tangents, and compares the
outputs and the tangents. Hessian-vector products of a small MLP's loss, computed
forward-over-reverse and reverse-over-forward, are compared with
torch.autograd.functional.hvp. The C++ suite checks every op's rule against central
differences and the reverse mode (docs/gradient_coverage.md); these tests check the
Python API and agreement with an independent implementation.
"""
import zlib

import numpy as np
import pytest

import eagerflow as ef

torch = pytest.importorskip("torch")
functorch = pytest.importorskip("functorch")

TOL = 1e-10


def _rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def _check(name, ef_fn, torch_fn, *shapes, positive=False):
    rng = _rng(name)
    xs = [rng.uniform(0.5, 2.0, s) if positive else rng.uniform(-1.5, 1.5, s) for s in shapes]
    vs = [rng.uniform(-1, 1, s) for s in shapes]
    y, t = ef.jvp(ef_fn, [ef.constant(x) for x in xs], [ef.constant(v) for v in vs])
    ty, tt = functorch.jvp(torch_fn, tuple(torch.tensor(x) for x in xs), tuple(torch.tensor(v) for v in vs))
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(t.numpy(), tt.numpy(), rtol=1e-9, atol=1e-9)


UNARY = {
    "exp": (ef.exp, torch.exp), "log": (ef.math.log, torch.log), "sin": (ef.sin, torch.sin),
    "cos": (ef.cos, torch.cos), "tanh": (ef.tanh, torch.tanh), "sigmoid": (ef.sigmoid, torch.sigmoid),
    "sqrt": (ef.sqrt, torch.sqrt), "rsqrt": (ef.math.rsqrt, torch.rsqrt), "square": (ef.square, torch.square),
    "abs": (ef.abs, torch.abs), "reciprocal": (ef.math.reciprocal, torch.reciprocal),
    "erf": (ef.math.erf, torch.erf), "lgamma": (ef.math.lgamma, torch.lgamma),
    "relu": (ef.nn.relu, torch.relu), "elu": (ef.nn.elu, torch.nn.functional.elu),
    "gelu": (ef.nn.gelu, torch.nn.functional.gelu), "softplus": (ef.nn.softplus, torch.nn.functional.softplus),
    "selu": (ef.nn.selu, torch.selu),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op):
    e, t = UNARY[op]
    _check("unary" + op, e, t, (3, 4), positive=op in ("log", "sqrt", "rsqrt", "lgamma"))


BINARY = {
    "add": (ef.add, torch.add), "subtract": (ef.subtract, torch.sub), "multiply": (ef.multiply, torch.mul),
    "divide": (ef.divide, torch.div), "pow": (ef.pow, torch.pow), "maximum": (ef.maximum, torch.maximum),
    "minimum": (ef.minimum, torch.minimum), "atan2": (ef.atan2, torch.atan2),
    "squared_difference": (ef.squared_difference, lambda a, b: (a - b) ** 2),
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_with_broadcasting(op):
    e, t = BINARY[op]
    _check("binary" + op, e, t, (3, 4), (4,), positive=op == "pow")


def test_matmul_reductions_and_softmax():
    _check("matmul", ef.matmul, torch.matmul, (3, 4), (4, 5))
    _check("sum", lambda x: ef.reduce_sum(x, 1), lambda x: x.sum(1), (3, 4))
    _check("max", lambda x: ef.reduce_max(x, 0), lambda x: x.max(0).values, (3, 4))
    _check("prod", lambda x: ef.reduce_prod(x, 1), lambda x: x.prod(1), (3, 4))
    _check("softmax", lambda x: ef.nn.softmax(x, -1), lambda x: torch.softmax(x, -1), (3, 4))
    _check("log_softmax", lambda x: ef.nn.log_softmax(x, -1), lambda x: torch.log_softmax(x, -1), (3, 4))
    _check("cumsum", lambda x: ef.cumsum(x, 1), lambda x: x.cumsum(1), (3, 4))
    _check("cumprod", lambda x: ef.cumprod(x, 1), lambda x: x.cumprod(1), (3, 4))
    _check("logsumexp", lambda x: ef.math.reduce_logsumexp(x, 1), lambda x: x.logsumexp(1), (3, 4))


def test_shape_ops():
    _check("reshape", lambda x: ef.reshape(x, [4, 3]), lambda x: x.reshape(4, 3), (3, 4))
    _check("transpose", lambda x: ef.transpose(x, [1, 0]), lambda x: x.t(), (3, 4))
    _check("concat", lambda a, b: ef.concat([a, b], 0), lambda a, b: torch.cat([a, b], 0), (2, 4), (3, 4))
    _check("slice", lambda x: x[1:, ::2], lambda x: x[1:, ::2], (3, 4))
    _check("gather", lambda x: ef.gather(x, ef.constant([2, 0]), axis=1), lambda x: x[:, [2, 0]], (3, 4))
    _check("pad", lambda x: ef.pad(x, [[1, 0], [0, 2]], constant_values=3.0),
           lambda x: torch.nn.functional.pad(x, (0, 2, 1, 0), value=3.0), (3, 4))
    _check("tile", lambda x: ef.tile(x, [2, 1]), lambda x: x.repeat(2, 1), (3, 4))
    _check("where", lambda a, b: ef.where(a > b, a, b), lambda a, b: torch.where(a > b, a, b), (3, 4), (3, 4))
    _check("broadcast_to", lambda x: ef.broadcast_to(x, [3, 4]), lambda x: x.expand(3, 4), (4,))


def test_conv_pool_and_losses():
    _check("conv2d", lambda x, w: ef.nn.conv2d(x, w, 1, "VALID"),
           lambda x, w: torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w.permute(3, 2, 0, 1)).permute(0, 2, 3, 1),
           (2, 5, 5, 3), (3, 3, 3, 4))
    _check("max_pool", lambda x: ef.nn.max_pool2d(x, 2, 2, "VALID"),
           lambda x: torch.nn.functional.max_pool2d(x.permute(0, 3, 1, 2), 2, 2).permute(0, 2, 3, 1), (2, 4, 4, 3))
    _check("avg_pool", lambda x: ef.nn.avg_pool2d(x, 2, 2, "VALID"),
           lambda x: torch.nn.functional.avg_pool2d(x.permute(0, 3, 1, 2), 2, 2).permute(0, 2, 3, 1), (2, 4, 4, 3))
    labels = np.eye(4)[[0, 3, 1]]
    _check("xent", lambda x: ef.nn.softmax_cross_entropy_with_logits(ef.constant(labels), x),
           lambda x: -(torch.tensor(labels) * torch.log_softmax(x, -1)).sum(-1), (3, 4))


def _mlp_loss(lib, params, x, labels):
    if lib is ef:
        w1, w2 = ef.reshape(params[:12], [3, 4]), ef.reshape(params[12:], [4, 2])
        logits = ef.matmul(ef.tanh(ef.matmul(x, w1)), w2)
        return ef.reduce_mean(ef.nn.softmax_cross_entropy_with_logits(labels, logits))
    w1, w2 = params[:12].reshape(3, 4), params[12:].reshape(4, 2)
    logits = torch.tanh(x @ w1) @ w2
    return -(labels * torch.log_softmax(logits, -1)).sum(-1).mean()


def test_hessian_vector_products_match_torch():
    rng = _rng("hvp")
    params, v, x = rng.normal(size=20), rng.normal(size=20), rng.normal(size=(5, 3))
    labels = np.eye(2)[[0, 1, 1, 0, 1]]
    ep, ev, ex, el = (ef.constant(a) for a in (params, v, x, labels))
    with ef.autodiff.ForwardAccumulator(ep, ev) as acc:  # forward over reverse
        with ef.GradientTape() as tape:
            tape.watch(ep)
            loss = _mlp_loss(ef, ep, ex, el)
        hvp_fwd_rev = acc.jvp(tape.gradient(loss, ep))
    with ef.GradientTape() as tape:  # reverse over forward
        tape.watch(ep)
        with ef.autodiff.ForwardAccumulator(ep, ev) as acc:
            loss = _mlp_loss(ef, ep, ex, el)
        hvp_rev_fwd = tape.gradient(acc.jvp(loss), ep)
    tx, tl = torch.tensor(x), torch.tensor(labels)
    _, want = torch.autograd.functional.hvp(lambda p: _mlp_loss(torch, p, tx, tl), torch.tensor(params),
                                            torch.tensor(v))
    np.testing.assert_allclose(hvp_fwd_rev.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hvp_rev_fwd.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_forward_ad_dual_numbers_agree():
    fwAD = torch.autograd.forward_ad
    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -0.25])
    with fwAD.dual_level():
        dual = fwAD.make_dual(torch.tensor(x), torch.tensor(v))
        want = fwAD.unpack_dual(torch.sin(dual) * dual).tangent
    _, got = ef.jvp(lambda a: ef.sin(a) * a, [ef.constant(x)], [ef.constant(v)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_accumulator_semantics():
    x, y = ef.constant([1.0, 2.0]), ef.constant(3.0)
    with ef.autodiff.ForwardAccumulator({"x": x}, {"x": ef.constant([1.0, 1.0])}) as acc:
        z = x * 2.0
        unrelated = y * 2.0
        index = ef.argmax(x)
    assert acc.jvp(unrelated) is None
    assert acc.jvp(index) is None
    np.testing.assert_array_equal(acc.jvp(unrelated, unconnected_gradients="zero").numpy(), 0.0)
    tangents = acc.jvp({"z": z, "both": [z, unrelated]})
    np.testing.assert_array_equal(tangents["z"].numpy(), [2.0, 2.0])
    assert tangents["both"][1] is None
    outside = x * 3.0  # after the block: not tracked
    assert acc.jvp(outside) is None


def test_nested_accumulators_give_second_derivatives():
    x = ef.constant(0.5)
    with ef.autodiff.ForwardAccumulator(x, ef.constant(1.0)) as outer:
        with ef.autodiff.ForwardAccumulator(x, ef.constant(1.0)) as inner:
            y = x * x * x
        d1 = inner.jvp(y)
    assert float(outer.jvp(d1)) == pytest.approx(6 * 0.5)


def test_variables_and_functions():
    w = ef.Variable([1.0, 2.0])
    with ef.autodiff.ForwardAccumulator(w, ef.constant([1.0, 0.0])) as acc:
        y = ef.reduce_sum(w * w)
    assert float(acc.jvp(y)) == pytest.approx(2.0)

    f = ef.function(lambda a: ef.reduce_sum(ef.sin(a)))
    a = ef.constant([0.1, 0.2])
    out, tangent = ef.jvp(f, [a], [ef.constant([1.0, 1.0])])
    assert float(tangent) == pytest.approx(np.cos(0.1) + np.cos(0.2))


def test_custom_jvp_matches_torch_autograd_function():
    # A function whose gradient and tangent are its own (PyTorch: autograd.Function with
    # backward and jvp): forward mode uses the jvp, reverse mode the gradient.
    @ef.custom_gradient
    def scaled_sin(x, a):
        def grad(dy):
            return dy * ef.cos(x) * a, dy * ef.sin(x)

        def jvp(dx, da):
            return ef.cos(x) * a * dx + ef.sin(x) * da

        return ef.sin(x) * a, grad, jvp

    class ScaledSin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, a):
            ctx.save_for_forward(x, a)
            return torch.sin(x) * a

        @staticmethod
        def jvp(ctx, dx, da):
            x, a = ctx.saved_tensors
            return torch.cos(x) * a * dx + torch.sin(x) * da

    x, a, v = np.array([0.3, -1.2]), np.array([2.0, 0.5]), np.array([1.0, -0.5])
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        dual = fwAD.make_dual(torch.tensor(x), torch.tensor(v))
        want = fwAD.unpack_dual(ScaledSin.apply(dual, torch.tensor(a))).tangent
    _, got = ef.jvp(lambda t: scaled_sin(t, ef.constant(a)), [ef.constant(x)], [ef.constant(v)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-14)

    @ef.custom_gradient
    def marked(x):  # a jvp that differs from the gradient on purpose: forward mode uses it
        return x * 2.0, lambda dy: dy * 2.0, lambda dx: dx * 7.0

    _, tangent = ef.jvp(marked, [ef.constant([1.0, 2.0])], [ef.constant([1.0, 1.0])])
    np.testing.assert_array_equal(tangent.numpy(), [7.0, 7.0])
    bad = ef.custom_gradient(lambda t: (t * 1.0, lambda dy: dy, lambda dt: ef.reduce_sum(dt)))
    with pytest.raises(ef.errors.InvalidArgumentError, match="jvp function's tangent for output 0"):
        ef.jvp(bad, [ef.constant(x)], [ef.constant(v)])


def test_op_without_rule_raises_naming_it():
    @ef.custom_gradient
    def doubled(x):
        return x * 2.0, lambda dy: dy * 2.0

    @ef.function
    def traced(x):  # the custom gradient passes through custom_gradient_in_graph, which has no rule
        with ef.autodiff.ForwardAccumulator(x, ef.ones_like(x)) as acc:
            y = doubled(x)
        return acc.jvp(y, unconnected_gradients="zero")

    with pytest.raises(ef.errors.UnimplementedError, match="custom_gradient_in_graph"):
        traced(ef.constant([1.0, 2.0]))


def test_bad_tangent_is_an_error():
    with pytest.raises(ef.errors.InvalidArgumentError, match="shape"):
        ef.autodiff.ForwardAccumulator(ef.constant([1.0, 2.0]), ef.constant([1.0]))
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        ef.autodiff.ForwardAccumulator([ef.constant(1.0), ef.constant(2.0)], [ef.constant(1.0)])


def test_linearize_matches_jvp_for_several_tangents():
    rng = _rng("linearize")
    w, x = rng.normal(size=(4, 3)), rng.normal(size=(5, 4))
    y, f_jvp = ef.linearize(lambda a: {"h": ef.tanh(ef.matmul(ef.constant(x), a))}, ef.constant(w))
    np.testing.assert_allclose(y["h"].numpy(), np.tanh(x @ w), rtol=1e-12)
    for seed in range(2):
        v = np.random.default_rng(seed).normal(size=(4, 3))
        _, want = functorch.jvp(lambda a: torch.tanh(torch.tensor(x) @ a), (torch.tensor(w),), (torch.tensor(v),))
        np.testing.assert_allclose(f_jvp(ef.constant(v))["h"].numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
