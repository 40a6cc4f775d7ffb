"""Gradients through while loops in graphs: an @ef.function's AutoGraph'd `while` under
ef.GradientTape (first and second order, against the eager loop and PyTorch), and
ef.gradients through ef.while_loop in graph mode."""
import numpy as np
import pytest
import torch

import eagerflow as ef


def tanh_steps(x, w, n):
    """x = tanh(x * w + 0.1) while i < n (a tensor): a loop whose length is data."""
    i = ef.constant(0)
    while i < n:
        x = ef.tanh(x * w + 0.1)
        i += 1
    return ef.reduce_sum(x * x)


traced_tanh_steps = ef.function(tanh_steps)


def tape_gradients(f, x, w, n):
    """d f / d(x, w) and d/d(x, w) of sum(d f / dx), by nested tapes."""
    with ef.GradientTape(persistent=True) as outer:
        outer.watch([x, w])
        with ef.GradientTape() as inner:
            inner.watch([x, w])
            y = f(x, w, n)
        dx, dw = inner.gradient(y, [x, w])
        s = ef.reduce_sum(dx)
    ddx, ddw = outer.gradient(s, [x, w])
    zero = ef.zeros_like(x)
    return [y, dx, zero if dw is None else dw, zero if ddx is None else ddx, zero if ddw is None else ddw]


def torch_gradients(x, w, n):
    x, w = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, w))
    h = x
    for _ in range(n):
        h = torch.tanh(h * w + 0.1)
    y = (h * h).sum()
    dx, dw = torch.autograd.grad(y, [x, w], create_graph=True, allow_unused=True)
    dw = torch.zeros(3, dtype=torch.float64) if dw is None else dw
    ddx, ddw = torch.autograd.grad(dx.sum(), [x, w], allow_unused=True)
    return [y, dx, dw] + [torch.zeros(3, dtype=torch.float64) if d is None else d for d in (ddx, ddw)]


@pytest.mark.parametrize("n", [0, 1, 4])
def test_autograph_while_under_tapes_matches_eager_and_torch(n):
    xv, wv = np.array([0.3, -0.7, 1.1]), np.array([0.9, 1.4, -0.6])
    x, w = ef.constant(xv), ef.constant(wv)
    traced = tape_gradients(traced_tanh_steps, x, w, ef.constant(n))
    eager = tape_gradients(tanh_steps, x, w, ef.constant(n))
    reference = torch_gradients(xv, wv, n)
    for got, want, ref in zip(traced, eager, reference):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got.numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert traced_tanh_steps.experimental_get_tracing_count() == 1


def test_graph_mode_gradients_through_while_loop_to_second_order():
    g = ef.Graph()
    with g.as_default():
        x = ef.placeholder(ef.float64, shape=(None,), name="x")
        w = ef.placeholder(ef.float64, shape=(None,), name="w")
        n = ef.placeholder(ef.int32, shape=(), name="n")
        _, y = ef.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * w), (0, x))
        loss = ef.reduce_sum(y)
        dx, dw = ef.gradients(loss, [x, w])
        (ddw,) = ef.gradients(ef.reduce_sum(dw), [w])
    xv, wv = np.array([1.5, -2.0]), np.array([0.5, 3.0])
    with ef.Session(g) as sess:
        for k in (0, 2, 3):
            got = sess.run([loss, dx, dw, ddw], feed_dict={x: xv, w: wv, n: k})
            np.testing.assert_allclose(got[0], np.sum(xv * wv**k))
            np.testing.assert_allclose(got[1], wv**k)
            np.testing.assert_allclose(got[2], k * xv * wv ** (k - 1))
            np.testing.assert_allclose(got[3], k * (k - 1) * xv * wv ** (k - 2) if k > 1 else np.zeros(2),
                                       atol=1e-12)


def test_shape_changing_loop_variable_has_no_gradient():
    @ef.function(input_signature=[ef.TensorSpec((None,), ef.float64)])
    def grow(x):
        while ef.reduce_sum(x) < 6.0:
            x = ef.concat([x, ef.ones((1,), ef.float64)], 0)
        return ef.reduce_sum(x)

    x = ef.constant(np.array([1.0, 2.0]))
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = grow(x)
    assert float(y) == 6.0
    with pytest.raises(ef.errors.InvalidArgumentError, match="while_loop's gradient.*loop variable 0"):
        tape.gradient(y, x)


def test_variables_read_in_the_loop_get_gradients():
    w = ef.Variable(np.array([0.5, 1.5]), name="w")

    def power(x, n):
        i = ef.constant(0)
        while i < n:
            x = x * w
            i += 1
        return ef.reduce_sum(x)

    traced = ef.function(power)
    x, n = ef.constant(np.array([2.0, -1.0])), ef.constant(3)
    with ef.GradientTape() as tape:
        y = traced(x, n)
    with ef.GradientTape() as eager_tape:
        y_eager = power(x, n)
    got, want = tape.gradient(y, w), eager_tape.gradient(y_eager, w)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(got.numpy(), 3 * np.array([2.0, -1.0]) * np.array([0.5, 1.5]) ** 2, rtol=1e-12)
