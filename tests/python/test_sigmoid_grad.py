"""ef.math.sigmoid_grad against PyTorch's sigmoid_backward, and sigmoid's gradient (which
uses it) against torch.autograd, in both float dtypes, with broadcasting."""
import numpy as np
import pytest
import torch

import eagerflow as ef


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_torch_sigmoid_backward(dtype):
    rng = np.random.RandomState(0)
    y = rng.uniform(0, 1, (5, 7)).astype(dtype)
    dy = rng.randn(5, 7).astype(dtype)
    want = torch.ops.aten.sigmoid_backward(torch.from_numpy(dy), torch.from_numpy(y)).numpy()
    got = ef.math.sigmoid_grad(y, dy).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-15)
    # dy broadcast from one row
    np.testing.assert_allclose(ef.math.sigmoid_grad(y, dy[:1]).numpy(), dy[:1] * y * (1 - y),
                               rtol=1e-6 if dtype == np.float32 else 1e-15)


def test_sigmoid_gradient_matches_torch():
    x = np.linspace(-8, 8, 33)
    with ef.GradientTape() as tape:
        xe = ef.constant(x)
        tape.watch(xe)
        y = ef.sigmoid(xe) * ef.constant(np.arange(33.0))
    xt = torch.tensor(x, requires_grad=True)
    (torch.sigmoid(xt) * torch.arange(33.0, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(tape.gradient(y, xe).numpy(), xt.grad.numpy(), rtol=1e-14)


def test_bad_dtype():
    with pytest.raises(ef.errors.InvalidArgumentError, match="sigmoid_grad"):
        ef.math.sigmoid_grad(np.array([1, 2]), np.array([1, 2]))
