// The matrix decompositions of ef.linalg (qr, eigh, eigvalsh, svd) and the functions
// built on them, with TensorFlow's argument names. Other matrix functions: linalg_ops.cpp.
#include <optional>

#include "bindings.h"
#include "convert.h"
#include "linalg_bindings.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

}  // namespace

void bind_linalg_decompositions(py::module_& m) {
  m.def(
      "qr",
      [](TensorArg input, bool full_matrices, py::handle) {
        auto [q, r] = large(input, [&] { return ef::linalg::qr(input, full_matrices, kPython); });
        return py::make_tuple(q, r);
      },
      R"doc(Computes the QR decomposition of each matrix (tf.linalg.qr).

input = q @ r with q's columns orthonormal and r upper triangular
(Householder reflections, LAPACK's signs as in NumPy and PyTorch).

>>> q, r = ef.linalg.qr([[3., 1.], [4., 2.]])
>>> r.numpy().round(4)
array([[-5. , -2.2],
       [ 0. ,  0.4]], dtype=float32)

Args:
  input: A float32/float64 tensor-like [..., m, n].
  full_matrices: If True, q is [..., m, m] and r [..., m, n]; else (default) q is
    [..., m, k] and r [..., k, n] with k = min(m, n).
  name: Ignored (TensorFlow compatibility).

Returns:
  A tuple (q, r) of Tensors of input's dtype.

Raises:
  InvalidArgumentError: a rank below 2 or another dtype.
  UnimplementedError: (from the gradient) full_matrices=True with m > n, or
    unknown matrix dimensions in a graph, as TensorFlow.
)doc",
      "input"_a, "full_matrices"_a = false, "name"_a = py::none());
  m.def(
      "eigh",
      [](TensorArg tensor, py::handle) {
        auto [e, v] = large(tensor, [&] { return ef::linalg::eigh(tensor, kPython); });
        return py::make_tuple(e, v);
      },
      R"doc(Computes the eigenvalues and eigenvectors of each symmetric matrix (tf.linalg.eigh).

Only the lower triangle of tensor is read. The eigenvalues come in ascending
order; the eigenvectors are the columns of v (LAPACK's signs), so that
tensor = v @ diag(e) @ v^T.

The gradient follows TensorFlow (Seeger et al.). Where eigenvalues repeat,
the eigenvectors are only defined up to a rotation and the gradient through
them is inf/nan, as in TensorFlow and PyTorch; the gradient through the
eigenvalues alone stays finite.

>>> e, v = ef.linalg.eigh([[2., 1.], [1., 2.]])
>>> e.numpy().round(4)
array([1., 3.], dtype=float32)

Args:
  tensor: A float32/float64 tensor-like [..., n, n].
  name: Ignored (TensorFlow compatibility).

Returns:
  A tuple (e, v): Tensors [..., n] and [..., n, n].

Raises:
  InvalidArgumentError: a shape that is not a batch of square matrices, another
    dtype, or no convergence.
)doc",
      "tensor"_a, "name"_a = py::none());
  m.def(
      "eigvalsh",
      [](TensorArg tensor, py::handle) {
        return large(tensor, [&] { return ef::linalg::eigvalsh(tensor, kPython); });
      },
      R"doc(Computes the eigenvalues of each symmetric matrix (tf.linalg.eigvalsh).

Only the lower triangle is read; ascending order. Its gradient is finite for
repeated eigenvalues too.

>>> ef.linalg.eigvalsh([[2., 1.], [1., 2.]]).numpy().round(4)
array([1., 3.], dtype=float32)

Args:
  tensor: A float32/float64 tensor-like [..., n, n].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [..., n].

Raises:
  InvalidArgumentError: a shape that is not a batch of square matrices, or
    another dtype.
)doc",
      "tensor"_a, "name"_a = py::none());
  m.def(
      "svd",
      [](TensorArg tensor, bool full_matrices, bool compute_uv, py::handle) -> py::object {
        std::vector<ef::Tensor> r =
            large(tensor, [&] { return ef::linalg::svd(tensor, full_matrices, compute_uv, kPython); });
        if (!compute_uv) return py::cast(r[0]);
        return py::make_tuple(r[0], r[1], r[2]);
      },
      R"doc(Computes the singular value decomposition of each matrix (tf.linalg.svd).

tensor = u @ diag(s) @ v^T, singular values descending. As TensorFlow, this
returns v itself, not v^T (NumPy and PyTorch return v^T).

The gradient is Townsend's (as TensorFlow and PyTorch). Through u or v it is
inf/nan for repeated singular values, and for zero ones when m != n; through s
alone it is finite. With full_matrices=True and m != n, a gradient through u
or v raises UnimplementedError.

>>> s, u, v = ef.linalg.svd([[3., 0.], [0., -2.]])
>>> s.numpy()
array([3., 2.], dtype=float32)
>>> ef.linalg.svd([[3., 0.], [0., -2.]], compute_uv=False).numpy()
array([3., 2.], dtype=float32)

Args:
  tensor: A float32/float64 tensor-like [..., m, n].
  full_matrices: If True, u is [..., m, m] and v [..., n, n]; else (default)
    [..., m, k] and [..., n, k] with k = min(m, n).
  compute_uv: If False, only s is computed and returned.
  name: Ignored (TensorFlow compatibility).

Returns:
  s [..., k] when compute_uv is False, else a tuple (s, u, v).

Raises:
  InvalidArgumentError: a rank below 2, another dtype, or no convergence.
)doc",
      "tensor"_a, "full_matrices"_a = false, "compute_uv"_a = true, "name"_a = py::none());
  m.def(
      "lstsq",
      [](TensorArg matrix, TensorArg rhs, double l2_regularizer, bool fast, py::handle) {
        return large(matrix, [&] { return ef::linalg::lstsq(matrix, rhs, l2_regularizer, fast, kPython); });
      },
      R"doc(Solves least-squares problems matrix @ X ~ rhs (tf.linalg.lstsq).

With fast (default), from the regularized normal equations
(A^T A + l2_regularizer I) X = A^T rhs by Cholesky, or for m < n the
minimum-norm X = A^T (A A^T + l2_regularizer I)^-1 rhs; with fast=False by QR
(l2_regularizer must then be 0). Inside ef.function with unknown m or n, the
matrices are taken to have m >= n.

>>> ef.linalg.lstsq([[1., 0.], [0., 1.], [1., 1.]], [[1.], [2.], [3.]]).numpy().round(4)
array([[1.],
       [2.]], dtype=float32)

Args:
  matrix: A float32/float64 tensor-like [..., m, n].
  rhs: A tensor-like [..., m, k] of matrix's dtype.
  l2_regularizer: A float >= 0.
  fast: Normal equations (True) or QR (False).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [..., n, k].

Raises:
  InvalidArgumentError: shapes that do not match, other dtypes, or a rank-
    deficient matrix (not positive definite / not invertible).
  UnimplementedError: l2_regularizer != 0 with fast=False.
)doc",
      "matrix"_a, "rhs"_a, "l2_regularizer"_a = 0.0, "fast"_a = true, "name"_a = py::none());
  m.def(
      "pinv",
      [](TensorArg a, std::optional<double> rcond, bool, py::handle) {
        return large(a, [&] { return ef::linalg::pinv(a, rcond, kPython); });
      },
      R"doc(Computes the Moore-Penrose pseudo-inverse of each matrix (tf.linalg.pinv), via SVD.

Singular values at or below rcond times the largest count as zero; the
default rcond is 10 * max(m, n) * eps of the dtype, as TensorFlow.

>>> ef.linalg.pinv([[1., 2.], [2., 4.]]).numpy().round(4)
array([[0.04, 0.08],
       [0.08, 0.16]], dtype=float32)

Args:
  a: A float32/float64 tensor-like [..., m, n].
  rcond: Relative cutoff for small singular values, or None.
  validate_args: Ignored (TensorFlow compatibility).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [..., n, m].

Raises:
  InvalidArgumentError: a rank below 2 or another dtype.
)doc",
      "a"_a, "rcond"_a = py::none(), "validate_args"_a = false, "name"_a = py::none());
  m.def(
      "matrix_power",
      [](TensorArg a, int64_t n, py::handle) {
        return large(a, [&] { return ef::linalg::matrix_power(a, n, kPython); });
      },
      R"doc(Raises each square matrix to the integer power n (torch.linalg.matrix_power).

n = 0 gives the identity, n < 0 powers of the inverse; by repeated squaring.

>>> ef.linalg.matrix_power([[1., 1.], [0., 1.]], 3).numpy()
array([[1., 3.],
       [0., 1.]], dtype=float32)

Args:
  a: A tensor-like [..., n, n]: float32/float64, or int32/int64 when n >= 0.
  n: An int.
  name: Ignored.

Returns:
  A Tensor of a's shape and dtype.

Raises:
  InvalidArgumentError: a shape that is not a batch of square matrices, another
    dtype, or (n < 0) a singular matrix.
)doc",
      "a"_a, "n"_a, "name"_a = py::none());
  m.def(
      "set_diag",
      [](TensorArg input, TensorArg diagonal, py::handle) {
        return ef::linalg::set_diag(input, diagonal, kPython);
      },
      R"doc(Replaces the main diagonal of each matrix (tf.linalg.set_diag, k = 0).

>>> ef.linalg.set_diag([[1, 2], [3, 4]], [7, 8]).numpy()
array([[7, 2],
       [3, 8]], dtype=int32)

Args:
  input: A tensor-like [..., m, n].
  diagonal: A tensor-like [..., min(m, n)] of input's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's shape and dtype.

Raises:
  InvalidArgumentError: shapes that do not fit or different dtypes.
)doc",
      "input"_a, "diagonal"_a, "name"_a = py::none());
}

}  // namespace efpy
