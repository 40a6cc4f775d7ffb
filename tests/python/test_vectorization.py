"""ef.vectorized_map, ef.vmap, vectorized jacobians and ef.hessians against PyTorch.

Per-example gradients of a small MLP through ef.vmap of a GradientTape equal
functorch.vmap(functorch.grad(loss)) (PyTorch 1.13's torch.func); Jacobians and Hessians
equal torch.autograd.functional's. The C++ suite checks every op's batching rule
against the loop it replaces (docs/gradient_coverage.md); these tests check the Python
API: nested structures, in_axes/out_axes, and agreement with an independent
implementation.
"""
import numpy as np
import pytest

import eagerflow as ef

torch = pytest.importorskip("torch")
functorch = pytest.importorskip("functorch")


def _rng(seed):
    return np.random.default_rng(seed)


def test_vectorized_map_equals_the_loop_for_nested_structures():
    rng = _rng(1)
    xs, ys = rng.normal(size=(5, 3)), rng.normal(size=(5,))

    def fn(element):
        x, y = element["x"], element["y"]
        return {"scaled": x * y, "norm": ef.reduce_sum(x * x)}

    out = ef.vectorized_map(fn, {"x": ef.constant(xs), "y": ef.constant(ys)})
    np.testing.assert_allclose(out["scaled"].numpy(), xs * ys[:, None], rtol=1e-14)
    np.testing.assert_allclose(out["norm"].numpy(), (xs * xs).sum(1), rtol=1e-14)


def test_vmap_in_axes_and_out_axes():
    rng = _rng(2)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3,))
    f = ef.vmap(lambda col, v: (col * v, ef.reduce_max(col)), in_axes=(1, None), out_axes=(1, 0))
    prod, top = f(ef.constant(a), ef.constant(b))
    np.testing.assert_allclose(prod.numpy(), a * b[:, None], rtol=1e-14)
    np.testing.assert_allclose(top.numpy(), a.max(0), rtol=1e-14)
    with pytest.raises(ValueError, match="in_axes has 1 entries for 2 arguments"):
        ef.vmap(lambda x, y: x, in_axes=[0])(ef.constant(a), ef.constant(b))


def test_per_example_gradients_match_functorch():
    rng = _rng(3)
    w1, b1, w2 = rng.normal(size=(4, 8)), rng.normal(size=(8,)), rng.normal(size=(8, 1))
    xs, ys = rng.normal(size=(16, 4)), rng.normal(size=(16,))
    params = [ef.constant(w1), ef.constant(b1), ef.constant(w2)]

    def grads_of_one(x, y):
        with ef.GradientTape() as tape:
            tape.watch(params)
            h = ef.tanh(ef.matmul(x[None], params[0]) + params[1])
            loss = ef.reduce_sum((ef.matmul(h, params[2]) - y) ** 2)
        return tape.gradient(loss, params)

    got = ef.vmap(grads_of_one)(ef.constant(xs), ef.constant(ys))

    def torch_loss(p, x, y):
        h = torch.tanh(x[None] @ p[0] + p[1])
        return ((h @ p[2] - y) ** 2).sum()

    tp = [torch.tensor(w1), torch.tensor(b1), torch.tensor(w2)]
    want = functorch.vmap(functorch.grad(torch_loss), in_dims=(None, 0, 0))(tp, torch.tensor(xs), torch.tensor(ys))
    for g, t in zip(got, want):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def test_per_example_gradients_of_a_cnn_match_functorch():
    # Both inputs of the filter gradient differ by example (Note [convolution batching rules]).
    rng = _rng(5)
    k1, k2 = rng.normal(size=(3, 3, 2, 4)), rng.normal(size=(2, 2, 4, 3))
    xs, ys = rng.normal(size=(6, 9, 9, 2)), rng.normal(size=(6,))
    params = [ef.constant(k1), ef.constant(k2)]

    def grads_of_one(x, y):
        with ef.GradientTape() as tape:
            tape.watch(params)
            h = ef.tanh(ef.nn.conv2d(x[None], params[0], 1, "SAME"))
            h = ef.nn.conv2d(h, params[1], 2, "VALID", dilations=1)
            loss = (ef.reduce_sum(h * h) - y) ** 2
        return tape.gradient(loss, params)

    got = ef.vmap(grads_of_one)(ef.constant(xs), ef.constant(ys))

    def torch_loss(p, x, y):
        h = torch.tanh(torch.nn.functional.conv2d(x[None], p[0], padding=1))
        h = torch.nn.functional.conv2d(h, p[1], stride=2)
        return ((h * h).sum() - y) ** 2

    tp = [torch.tensor(k.transpose(3, 2, 0, 1).copy()) for k in (k1, k2)]
    want = functorch.vmap(functorch.grad(torch_loss), in_dims=(None, 0, 0))(
        tp, torch.tensor(xs.transpose(0, 3, 1, 2).copy()), torch.tensor(ys))
    for g, t in zip(got, want):
        np.testing.assert_allclose(g.numpy(), t.numpy().transpose(0, 3, 4, 2, 1), rtol=1e-10, atol=1e-10)


def test_cond_and_while_loop_that_differ_by_element():
    # Each element takes its own branch and iterates its own number of times, without a
    # loop over the elements (Note [vectorized control flow]).
    data = ef.constant(np.arange(10.0))

    def partial_sum(n):  # reads data[i] only while i < n
        return ef.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc + ef.gather(data, i)),
                             [ef.constant(0), ef.constant(0.0, dtype=ef.float64)])[1]

    ns = ef.constant([0, 3, 10, 7])
    got = ef.vectorized_map(partial_sum, ns, fallback_to_while_loop=False)
    np.testing.assert_array_equal(got.numpy(), [0.0, 3.0, 45.0, 21.0])
    xs = _rng(6).normal(size=(6, 3))

    def branchy(x):
        return ef.cond(ef.reduce_sum(x) > 0, lambda: ef.reduce_max(x) * 2.0, lambda: -ef.reduce_min(x))

    got = ef.vectorized_map(branchy, ef.constant(xs), fallback_to_while_loop=False)
    want = np.where(xs.sum(1) > 0, xs.max(1) * 2, -xs.min(1))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)


def test_tape_around_vectorized_map():
    rng = _rng(4)
    xs = ef.constant(rng.normal(size=(6, 3)))
    w = ef.Variable(rng.normal(size=(3,)))
    with ef.GradientTape() as tape:
        tape.watch(xs)
        total = ef.reduce_sum(ef.vectorized_map(lambda x: ef.sin(ef.reduce_sum(x * w)), xs))
    gx, gw = tape.gradient(total, [xs, w])
    c = np.cos(xs.numpy() @ w.numpy())
    np.testing.assert_allclose(gx.numpy(), c[:, None] * w.numpy()[None], rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), (c[:, None] * xs.numpy()).sum(0), rtol=1e-12)


def test_vectorized_map_inside_a_function():
    f = ef.function(lambda xs: ef.vectorized_map(lambda x: ef.reduce_sum(ef.tanh(x)), xs))
    xs = _rng(5).normal(size=(4, 3))
    np.testing.assert_allclose(f(ef.constant(xs)).numpy(), np.tanh(xs).sum(1), rtol=1e-14)


def test_fallback_off_raises_for_an_op_without_a_rule():
    ids = ef.constant([[1, 2, 2], [3, 3, 0]])
    with pytest.raises(ef.errors.UnimplementedError, match="bincount"):
        ef.vectorized_map(lambda x: ef.math.bincount(x, minlength=4), ids, fallback_to_while_loop=False)
    counts = ef.vectorized_map(lambda x: ef.math.bincount(x, minlength=4), ids)
    np.testing.assert_array_equal(counts.numpy(), [[0, 1, 2, 0], [1, 0, 0, 2]])


@pytest.mark.parametrize("use_pfor", [True, False])
def test_jacobians_match_torch(use_pfor):
    rng = _rng(6)
    x, w = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    ex = ef.constant(x)
    with ef.GradientTape(persistent=True) as tape:
        tape.watch(ex)
        y = ef.tanh(ef.matmul(ex, ef.constant(w)))
    jac = tape.jacobian(y, ex, experimental_use_pfor=use_pfor)
    batch = tape.batch_jacobian(y, ex, experimental_use_pfor=use_pfor)
    want = torch.autograd.functional.jacobian(lambda t: torch.tanh(t @ torch.tensor(w)), torch.tensor(x))
    np.testing.assert_allclose(jac.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(batch.numpy(), np.einsum("aiaj->aij", want.numpy()), rtol=1e-12, atol=1e-14)


def test_hessians_match_torch():
    rng = _rng(7)
    x = rng.normal(size=(5,))
    h = ef.hessians(lambda v: ef.reduce_sum(ef.sin(v) * v ** 2), [ef.constant(x)])[0]
    want = torch.autograd.functional.hessian(lambda v: (torch.sin(v) * v ** 2).sum(), torch.tensor(x))
    np.testing.assert_allclose(h.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
