"""ef.linalg's matrix functions against torch.linalg: values and gradients (with a
random upstream gradient) for batches of float32 and float64 matrices, broadcast batch
dimensions, empty batches and 0 x 0 matrices, second derivatives, inside ef.function
with unknown dimensions, and the errors for singular or ill-shaped inputs.

The torch reference runs in float64 on the same values. Inputs are well conditioned
(near-identity or X X^T + n I), so float32 results are within ~1e-4 relative."""
import numpy as np
import pytest
import torch

import eagerflow as ef

torch.set_num_threads(1)

TOL = {np.float32: dict(rtol=2e-4, atol=2e-5), np.float64: dict(rtol=1e-9, atol=1e-11)}
floats = pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])


def rng(seed):
    return np.random.default_rng(seed)


def near_identity(shape, seed, scale=2.0):
    """A batch of well-conditioned square matrices: scale I plus small noise."""
    n = shape[-1]
    return rng(seed).uniform(-0.3, 0.3, size=tuple(shape) + (n,)) + scale * np.eye(n)


def spd(shape, seed):
    """A batch of symmetric positive definite matrices X X^T + n I."""
    n = shape[-1]
    x = rng(seed).uniform(-1, 1, size=tuple(shape) + (n,))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def check(ef_fn, torch_fn, inputs, dtype, seed=0, grad=True):
    """Compares value and gradients (seeded with a random dy) of ef_fn and torch_fn."""
    inputs = [np.asarray(x, dtype=dtype) for x in inputs]
    xs = [ef.constant(x) for x in inputs]
    with ef.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = ef_fn(*xs)
    ts = [torch.tensor(x.astype(np.float64), requires_grad=True) for x in inputs]
    ty = torch_fn(*ts)
    assert y.dtype == ef.as_dtype(dtype)
    assert tuple(y.shape) == tuple(ty.shape)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), **TOL[dtype])
    if not grad:
        return
    dy = rng(seed + 1).uniform(-1, 1, size=tuple(ty.shape)).astype(dtype)
    grads = tape.gradient(y, xs, output_gradients=ef.constant(dy))
    expected = torch.autograd.grad(ty, ts, grad_outputs=torch.tensor(dy.astype(np.float64)))
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g.numpy(), e.numpy(), **{k: 10 * v for k, v in TOL[dtype].items()})


def sym(a):
    return 0.5 * (a + a.transpose(-1, -2))


@floats
@pytest.mark.parametrize("shape", [(3,), (2, 3, 5)], ids=["matrix", "batch"])
def test_cholesky(dtype, shape):
    # Symmetrized on both sides: the gradient is taken for symmetric perturbations.
    check(lambda a: ef.linalg.cholesky(0.5 * (a + ef.linalg.matrix_transpose(a))),
          lambda a: torch.linalg.cholesky(sym(a)), [spd(shape, 1)], dtype)


@floats
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_triangular_solve(dtype, lower, adjoint):
    a, b = near_identity((2, 1, 4), 2), rng(3).uniform(-1, 1, (3, 4, 2))

    def reference(a, b):
        t = torch.tril(a) if lower else torch.triu(a)
        return torch.linalg.solve_triangular(t.transpose(-1, -2) if adjoint else t, b, upper=lower == adjoint)

    check(lambda a, b: ef.linalg.triangular_solve(a, b, lower=lower, adjoint=adjoint), reference, [a, b], dtype)


@floats
@pytest.mark.parametrize("adjoint", [False, True])
def test_solve(dtype, adjoint):
    a, b = near_identity((3, 5), 4), rng(5).uniform(-1, 1, (2, 1, 5, 3))
    check(lambda a, b: ef.linalg.solve(a, b, adjoint=adjoint),
          lambda a, b: torch.linalg.solve(a.transpose(-1, -2) if adjoint else a, b), [a, b], dtype)


@floats
def test_inv_det_slogdet_logdet(dtype):
    a = near_identity((2, 4), 6)
    a[1] *= -1  # a negative determinant
    check(ef.linalg.inv, torch.linalg.inv, [a], dtype)
    check(lambda x: ef.linalg.inv(x, adjoint=True), lambda x: torch.linalg.inv(x).transpose(-1, -2), [a], dtype)
    check(ef.linalg.det, torch.linalg.det, [a], dtype)
    check(lambda x: ef.linalg.slogdet(x)[1], lambda x: torch.linalg.slogdet(x)[1], [a], dtype)
    check(lambda x: ef.linalg.slogdet(x)[0], lambda x: torch.linalg.slogdet(x)[0], [a], dtype, grad=False)
    check(lambda x: ef.linalg.logdet(0.5 * (x + ef.linalg.matrix_transpose(x))),
          lambda x: torch.logdet(sym(x)), [spd((3, 4), 7)], dtype)


@floats
def test_cholesky_solve(dtype):
    check(lambda a, b: ef.linalg.cholesky_solve(ef.linalg.cholesky(0.5 * (a + ef.linalg.matrix_transpose(a))), b),
          lambda a, b: torch.cholesky_solve(b, torch.linalg.cholesky(sym(a))),
          [spd((2, 4), 8), rng(9).uniform(-1, 1, (2, 4, 3))], dtype)


@floats
def test_bands_and_diagonals(dtype):
    x = rng(10).uniform(-1, 1, (2, 3, 4))
    check(lambda x: ef.linalg.band_part(x, 1, 0), lambda x: torch.tril(x) - torch.tril(x, -2), [x], dtype)
    check(lambda x: ef.linalg.band_part(x, -1, 1), lambda x: torch.triu(x, -10) - torch.triu(x, 2), [x], dtype)
    check(ef.linalg.trace, lambda x: torch.diagonal(x, dim1=-2, dim2=-1).sum(-1), [x], dtype)
    check(ef.linalg.diag_part, lambda x: torch.diagonal(x, dim1=-2, dim2=-1), [x], dtype)
    check(ef.linalg.diag_part, lambda x: torch.diagonal(x, dim1=-2, dim2=-1), [x.transpose(0, 2, 1)], dtype)
    check(ef.linalg.diag, torch.diag_embed, [x[0]], dtype)
    check(ef.linalg.matrix_transpose, lambda x: x.transpose(-1, -2), [x], dtype)


def test_empty_and_zero_size():
    np.testing.assert_array_equal(ef.linalg.det(ef.zeros([2, 0, 0])).numpy(), [1, 1])  # as NumPy
    sign, logabs = ef.linalg.slogdet(ef.zeros([0, 0], ef.float64))
    assert (float(sign), float(logabs)) == (1.0, 0.0)
    assert ef.linalg.det(ef.zeros([0, 3, 3])).shape == (0,)
    assert ef.linalg.inv(ef.zeros([0, 2, 2])).shape == (0, 2, 2)
    assert ef.linalg.solve(ef.zeros([0, 0]), ef.zeros([0, 4])).shape == (0, 4)
    assert ef.linalg.cholesky(ef.zeros([0, 3, 3])).shape == (0, 3, 3)


def test_second_order():
    a0 = near_identity((3,), 11)
    a = ef.constant(a0)
    with ef.GradientTape() as outer:
        outer.watch(a)
        with ef.GradientTape() as inner:
            inner.watch(a)
            y = ef.reduce_sum(ef.square(ef.linalg.inv(a))) + ef.linalg.slogdet(a)[1]
        g = inner.gradient(y, a)
        z = ef.reduce_sum(g * g)
    h = outer.gradient(z, a)
    t = torch.tensor(a0, requires_grad=True)
    ty = (torch.linalg.inv(t) ** 2).sum() + torch.linalg.slogdet(t)[1]
    (tg,) = torch.autograd.grad(ty, t, create_graph=True)
    (th,) = torch.autograd.grad((tg * tg).sum(), t)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-8, atol=1e-10)


def test_inside_function_with_unknown_dimensions():
    spec = [ef.TensorSpec([None, None, None], ef.float64), ef.TensorSpec([None, None, 2], ef.float64)]

    @ef.function(input_signature=spec)
    def f(a, b):
        with ef.GradientTape() as tape:
            tape.watch(a)
            chol = ef.linalg.cholesky(a)
            y = ef.reduce_sum(ef.linalg.solve(a, b)) + ef.reduce_sum(ef.linalg.cholesky_solve(chol, b)) \
                + ef.reduce_sum(ef.linalg.logdet(a)) + ef.reduce_sum(ef.linalg.det(a)) \
                + ef.reduce_sum(ef.linalg.inv(a)) + ef.reduce_sum(ef.linalg.trace(a))
        return y, tape.gradient(y, a)

    a0 = spd((2, 3), 12)
    b0 = rng(13).uniform(-1, 1, (2, 3, 2))
    y, g = f(ef.constant(a0), ef.constant(b0))
    ta, tb = torch.tensor(a0, requires_grad=True), torch.tensor(b0)
    ty = (torch.linalg.solve(ta, tb).sum() * 2 + torch.logdet(ta).sum() + torch.linalg.det(ta).sum()
          + torch.linalg.inv(ta).sum() + torch.diagonal(ta, dim1=-2, dim2=-1).sum())
    (tg,) = torch.autograd.grad(ty, ta)
    np.testing.assert_allclose(float(y), float(ty), rtol=1e-9)
    # ef's Cholesky gradient is the symmetric one: compare with torch's symmetrized.
    a_sym = torch.tensor(a0, requires_grad=True)
    ts = sym(a_sym)
    ty2 = (torch.linalg.solve(ts, tb).sum() * 2 + torch.logdet(ts).sum() + torch.linalg.det(ts).sum()
           + torch.linalg.inv(ts).sum() + torch.diagonal(ts, dim1=-2, dim2=-1).sum())
    (tg2,) = torch.autograd.grad(ty2, a_sym)
    np.testing.assert_allclose(sym(torch.tensor(g.numpy())).numpy(), tg2.numpy(), rtol=1e-8, atol=1e-10)
    del tg


@pytest.mark.parametrize("fn, args, match", [
    (ef.linalg.solve, ([[1., 2.], [2., 4.]], [[1.], [1.]]), "not invertible"),
    (ef.linalg.inv, ([[1., 1.], [1., 1.]],), "not invertible"),
    (ef.linalg.cholesky, ([[1., 2.], [2., 1.]],), "not positive definite"),
    (ef.linalg.triangular_solve, ([[1., 0.], [1., 0.]], [[1.], [1.]]), "not invertible"),
    (ef.linalg.solve, ([[1., 2.], [3., 4.]], [[1.], [1.], [1.]]), "rhs"),
    (ef.linalg.det, ([[1., 2., 3.]],), "square"),
    (ef.linalg.slogdet, ([1., 2.],), "rank >= 2"),
    (ef.linalg.cholesky, ([[1, 0], [0, 1]],), "int32"),
])
def test_bad_inputs(fn, args, match):
    with pytest.raises(ef.errors.InvalidArgumentError, match=match):
        fn(*args)


def test_matches_numpy_on_larger_batches():
    a = near_identity((8, 33), 14)
    b = rng(15).uniform(-1, 1, (8, 33, 70))
    np.testing.assert_allclose(ef.linalg.solve(a, b).numpy(), np.linalg.solve(a, b), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ef.linalg.det(a).numpy(), np.linalg.det(a), rtol=1e-9)
    s = spd((4, 65), 16)
    np.testing.assert_allclose(ef.linalg.cholesky(s).numpy(), np.linalg.cholesky(s), rtol=1e-9, atol=1e-12)


# Decompositions and what is built on them. Eigen- and singular vectors are compared in
# sign-free forms (squares or the reconstructed matrices): each column's sign is the
# library's choice, though both run LAPACK here.

def separated(shape, seed):
    """Matrices with well-separated singular values: diag(1, 2, ...) plus small noise."""
    m, n = shape[-2:]
    return np.eye(m, n) * np.arange(1, n + 1) + rng(seed).uniform(-0.2, 0.2, size=shape)


def separated_symmetric(shape, seed):
    """Symmetric matrices with eigenvalues near 2, 4, ..."""
    a = separated(shape, seed)
    return a + np.swapaxes(a, -1, -2)


@floats
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 3), (3, 5)], ids=["tall", "square", "wide"])
def test_qr(dtype, shape):
    a = separated(shape, 20)
    check(lambda x: ef.linalg.qr(x)[1], lambda x: torch.linalg.qr(x)[1], [a], dtype)
    check(lambda x: ef.linalg.qr(x)[0], lambda x: torch.linalg.qr(x)[0], [a], dtype)
    q, r = ef.linalg.qr(a.astype(dtype), full_matrices=True)
    tq, tr = torch.linalg.qr(torch.tensor(a), mode="complete")
    np.testing.assert_allclose(np.abs(q.numpy()), np.abs(tq.numpy()), **TOL[dtype])
    np.testing.assert_allclose(np.abs(r.numpy()), np.abs(tr.numpy()), **TOL[dtype])


@floats
def test_eigh_and_eigvalsh(dtype):
    a = separated_symmetric((2, 4, 4), 21)
    # Symmetrized on both sides: eigh reads the lower triangle (torch too), and the
    # gradients then agree for symmetric perturbations.
    symmetrized = lambda x: 0.5 * (x + ef.linalg.matrix_transpose(x))  # noqa: E731
    check(lambda x: ef.linalg.eigh(symmetrized(x))[0], lambda x: torch.linalg.eigh(sym(x))[0], [a], dtype)
    check(lambda x: ef.square(ef.linalg.eigh(symmetrized(x))[1]), lambda x: torch.linalg.eigh(sym(x))[1] ** 2,
          [a], dtype)
    check(lambda x: ef.linalg.eigvalsh(symmetrized(x)), lambda x: torch.linalg.eigvalsh(sym(x)), [a], dtype)
    # Only the lower triangle is read.
    np.testing.assert_allclose(ef.linalg.eigvalsh(np.tril(a).astype(dtype)).numpy(),
                               np.linalg.eigvalsh(a), **TOL[dtype])


@floats
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 3), (3, 5)], ids=["tall", "square", "wide"])
def test_svd(dtype, shape):
    a = separated(shape, 22)
    check(lambda x: ef.linalg.svd(x, compute_uv=False), lambda x: torch.linalg.svdvals(x), [a], dtype)
    check(lambda x: ef.linalg.svd(x)[0], lambda x: torch.linalg.svd(x, full_matrices=False)[1], [a], dtype)
    check(lambda x: ef.square(ef.linalg.svd(x)[1]), lambda x: torch.linalg.svd(x, full_matrices=False)[0] ** 2,
          [a], dtype)
    # TensorFlow's v, not v^T.
    check(lambda x: ef.square(ef.linalg.svd(x)[2]),
          lambda x: torch.linalg.svd(x, full_matrices=False)[2].transpose(-1, -2) ** 2, [a], dtype)
    s, u, v = ef.linalg.svd(a.astype(dtype), full_matrices=True)
    m, n = shape[-2:]
    assert u.shape == shape[:-2] + (m, m) and v.shape == shape[:-2] + (n, n)


@floats
def test_lstsq_pinv_matrix_power_set_diag(dtype):
    a, b = separated((2, 5, 3), 23), rng(24).uniform(-1, 1, (2, 5, 2))
    reference = lambda a, b: torch.linalg.pinv(a) @ b  # noqa: E731
    check(ef.linalg.lstsq, reference, [a, b], dtype)
    check(lambda a, b: ef.linalg.lstsq(a, b, fast=False), reference, [a, b], dtype)
    w, bw = np.swapaxes(a, -1, -2), b[:, :3]  # underdetermined: the minimum-norm solution
    check(ef.linalg.lstsq, reference, [w, bw], dtype)
    check(lambda a, b: ef.linalg.lstsq(a, b, fast=False), reference, [w, bw], dtype)
    check(lambda a, b: ef.linalg.lstsq(a, b, l2_regularizer=0.5),
          lambda a, b: torch.linalg.solve(a.transpose(-1, -2) @ a + 0.5 * torch.eye(3, dtype=a.dtype),
                                          a.transpose(-1, -2) @ b), [a, b], dtype)
    check(ef.linalg.pinv, torch.linalg.pinv, [a], dtype)
    check(ef.linalg.pinv, torch.linalg.pinv, [w], dtype)
    sq = near_identity((2, 3), 25)
    for n in (-3, 0, 1, 4):  # the identity (n = 0) does not depend on x: no gradient
        check(lambda x: ef.linalg.matrix_power(x, n), lambda x: torch.linalg.matrix_power(x, n), [sq], dtype,
              grad=n != 0)
    d = rng(26).uniform(-1, 1, (2, 3))
    mask = torch.eye(3, 4, dtype=torch.float64)
    check(ef.linalg.set_diag, lambda x, d: x * (1 - mask) + mask * d[..., :, None],
          [rng(27).uniform(-1, 1, (2, 3, 4)), d], dtype)


@floats
@pytest.mark.parametrize("ord", [2, "nuc"])
def test_matrix_norms_through_svd(dtype, ord):
    x = separated((2, 3, 4), 28)
    check(lambda x: ef.norm(x, ord=ord, axis=[-2, -1]), lambda x: torch.linalg.matrix_norm(x, ord=ord), [x], dtype)
    check(lambda x: ef.norm(x, ord=ord, axis=[0, 2], keepdims=True),
          lambda x: torch.linalg.matrix_norm(x, ord=ord, dim=(0, 2), keepdim=True), [x], dtype)


def test_decompositions_second_order():
    a0 = separated((3, 3), 29)
    a = ef.constant(a0)
    with ef.GradientTape() as outer:
        outer.watch(a)
        with ef.GradientTape() as inner:
            inner.watch(a)
            s, u, v = ef.linalg.svd(a)
            q, r = ef.linalg.qr(a)
            e = ef.linalg.eigvalsh(a + ef.linalg.matrix_transpose(a))
            y = ef.reduce_sum(s * s * s) + ef.reduce_sum(ef.square(u[:, 0])) + ef.reduce_sum(r * r * r) \
                + ef.reduce_sum(e * e * e)
        g = inner.gradient(y, a)
        z = ef.reduce_sum(g * g)
    h = outer.gradient(z, a)
    t = torch.tensor(a0, requires_grad=True)
    tu, ts, _ = torch.linalg.svd(t)
    ty = (ts ** 3).sum() + (tu[:, 0] ** 2).sum() + (torch.linalg.qr(t)[1] ** 3).sum() \
        + (torch.linalg.eigvalsh(t + t.T) ** 3).sum()
    (tg,) = torch.autograd.grad(ty, t, create_graph=True)
    (th,) = torch.autograd.grad((tg * tg).sum(), t)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-7, atol=1e-9)


def test_decompositions_inside_function_with_unknown_dimensions():
    @ef.function(input_signature=[ef.TensorSpec([None, None, 3], ef.float64)])
    def f(a):
        s = ef.linalg.svd(a, compute_uv=False)
        q, r = ef.linalg.qr(a)
        sym_a = ef.matmul(a, a, transpose_a=True)
        return s, r, ef.linalg.eigvalsh(sym_a), ef.linalg.pinv(a), ef.norm(a, ord=2, axis=[-2, -1])

    a0 = separated((2, 5, 3), 30)
    s, r, e, p, n2 = f(ef.constant(a0))
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a0, compute_uv=False), rtol=1e-10)
    np.testing.assert_allclose(np.abs(r.numpy()), np.abs(np.linalg.qr(a0)[1]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(e.numpy(), np.linalg.eigvalsh(np.swapaxes(a0, -1, -2) @ a0), rtol=1e-10)
    np.testing.assert_allclose(p.numpy(), np.linalg.pinv(a0), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(n2.numpy(), np.linalg.norm(a0, ord=2, axis=(-2, -1)), rtol=1e-10)


@pytest.mark.parametrize("fn, args, error, match", [
    (ef.linalg.qr, ([1., 2.],), ef.errors.InvalidArgumentError, "rank >= 2"),
    (ef.linalg.qr, ([[1, 2], [3, 4]],), ef.errors.InvalidArgumentError, "int32"),
    (ef.linalg.eigh, ([[1., 2., 3.]],), ef.errors.InvalidArgumentError, r"square.*\[1, 3\]"),
    (ef.linalg.eigvalsh, ([1.],), ef.errors.InvalidArgumentError, "rank >= 2"),
    (ef.linalg.svd, ([[True]],), ef.errors.InvalidArgumentError, "bool"),
    (ef.linalg.lstsq, ([[1.], [2.]], [[1.]]), ef.errors.InvalidArgumentError, "rhs"),
    (ef.linalg.lstsq, ([[1., 0.], [0., 1.]], [[1.], [1.]], 0.5, False), ef.errors.UnimplementedError,
     "l2_regularizer"),
    (ef.linalg.pinv, ([1., 2.],), ef.errors.InvalidArgumentError, "rank >= 2"),
    (ef.linalg.matrix_power, ([[1., 2.], [2., 4.]], -1), ef.errors.InvalidArgumentError, "not invertible"),
    (ef.linalg.set_diag, ([[1., 2.], [3., 4.]], [1., 2., 3.]), ef.errors.InvalidArgumentError, "diagonal"),
    (lambda x: ef.norm(x, ord="nuc"), ([[1., 2.]],), ef.errors.InvalidArgumentError, "'nuc'"),
])
def test_decomposition_bad_inputs(fn, args, error, match):
    with pytest.raises(error, match=match):
        fn(*args)


def test_unimplemented_gradients():
    a = ef.constant(separated((4, 2), 31))
    with ef.GradientTape(persistent=True) as tape:
        tape.watch(a)
        q = ef.linalg.qr(a, full_matrices=True)[0]
        s = ef.linalg.svd(a, full_matrices=True)[0]
    with pytest.raises(ef.errors.UnimplementedError, match="full_matrices"):
        tape.gradient(q, a)
    with pytest.raises(ef.errors.UnimplementedError, match="compute_uv=False"):
        tape.gradient(s, a)
