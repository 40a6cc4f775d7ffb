"""ef.recompute_grad: gradient checkpointing, checked against the plain function and
against torch.utils.checkpoint on the same block."""
import numpy as np
import pytest

import eagerflow as ef

torch = pytest.importorskip("torch")
import torch.utils.checkpoint  # noqa: E402  (a submodule torch does not import itself)


def test_gradients_equal_the_plain_functions_and_torch_checkpoint():
    rng = np.random.default_rng(0)
    x_np, w_np = rng.standard_normal((5, 4)), rng.standard_normal((4, 4))
    w = ef.Variable(ef.constant(w_np))

    def block(x):
        h = ef.tanh(x @ w)
        return {"out": h * ef.sigmoid(h), "norm": ef.reduce_sum(h * h, axis=1)}

    def grads(f):
        x = ef.constant(x_np)
        with ef.GradientTape(persistent=True) as tape:
            tape.watch(x)
            out = f(x)
            loss = ef.reduce_sum(out["out"] ** 2) + ef.reduce_sum(ef.sin(out["norm"]))
        return tape.gradient(loss, [x, w])

    plain, recomputed = grads(block), grads(ef.recompute_grad(block))
    for a, b in zip(plain, recomputed):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12)

    xt = torch.tensor(x_np, requires_grad=True)
    wt = torch.tensor(w_np, requires_grad=True)

    def torch_block(x):
        h = torch.tanh(x @ wt)
        return h * torch.sigmoid(h), (h * h).sum(1)

    out, norm = torch.utils.checkpoint.checkpoint(torch_block, xt, use_reentrant=False)
    ((out ** 2).sum() + torch.sin(norm).sum()).backward()
    np.testing.assert_allclose(recomputed[0].numpy(), xt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(recomputed[1].numpy(), wt.grad.numpy(), rtol=1e-10)


def test_second_order_and_dropout_inside():
    x = ef.constant(np.random.default_rng(1).standard_normal((6,)))
    f = ef.recompute_grad(lambda x: ef.nn.dropout(ef.exp(ef.sin(x)), 0.5))
    ef.random.set_seed(3)
    with ef.GradientTape() as outer:
        outer.watch(x)
        with ef.GradientTape() as inner:
            inner.watch(x)
            y = ef.reduce_sum(f(x))
        g = inner.gradient(y, x)
        g_sum = ef.reduce_sum(g)
    gg = outer.gradient(g_sum, x)
    ef.random.set_seed(3)
    with ef.GradientTape() as outer:
        outer.watch(x)
        with ef.GradientTape() as inner:
            inner.watch(x)
            y_plain = ef.reduce_sum(ef.nn.dropout(ef.exp(ef.sin(x)), 0.5))
        g_plain = inner.gradient(y_plain, x)
        g_plain_sum = ef.reduce_sum(g_plain)
    gg_plain = outer.gradient(g_plain_sum, x)
    np.testing.assert_allclose(y.numpy(), y_plain.numpy(), rtol=1e-12)
    np.testing.assert_allclose(g.numpy(), g_plain.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), gg_plain.numpy(), rtol=1e-12)


def test_keyword_arguments_pass_through():
    x = ef.constant([0.5, -1.0])
    f = ef.recompute_grad(lambda x, scale=1.0: ef.sin(x) * scale)
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = ef.reduce_sum(f(x, scale=3.0))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 3.0 * np.cos([0.5, -1.0]), rtol=1e-6)
