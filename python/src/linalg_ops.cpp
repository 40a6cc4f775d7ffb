// The matrix functions of ef.linalg (cholesky, solve, det, ...), with TensorFlow's
// argument names. Matrix products and norms: other_ops.cpp.
#include "bindings.h"
#include "convert.h"
#include "linalg_bindings.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

}  // namespace

void bind_linalg_ops(py::module_& m) {
  m.def(
      "cholesky",
      [](TensorArg input, py::handle) {
        return large(input, [&] { return ef::linalg::cholesky(input, kPython); });
      },
      R"doc(Computes the Cholesky factor of each symmetric positive definite matrix (tf.linalg.cholesky).

Returns the lower-triangular L with L @ L^T = input; only input's lower
triangle is read. The gradient is symmetric (Murray 2016).

>>> ef.linalg.cholesky([[4., 2.], [2., 3.]]).numpy().round(4)
array([[2.    , 0.    ],
       [1.    , 1.4142]], dtype=float32)

Args:
  input: A float32/float64 tensor-like of shape [..., n, n].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's shape and dtype.

Raises:
  InvalidArgumentError: a matrix that is not positive definite, a shape that is
    not a batch of square matrices, or another dtype.
)doc",
      "input"_a, "name"_a = py::none());
  m.def(
      "cholesky_solve",
      [](TensorArg chol, TensorArg rhs, py::handle) {
        return large(rhs, [&] { return ef::linalg::cholesky_solve(chol, rhs, kPython); });
      },
      R"doc(Solves A X = rhs given the Cholesky factor chol of A (tf.linalg.cholesky_solve).

>>> l = ef.linalg.cholesky([[4., 2.], [2., 3.]])
>>> ef.linalg.cholesky_solve(l, [[1.], [2.]]).numpy().round(4)
array([[-0.125],
       [ 0.75 ]], dtype=float32)

Args:
  chol: Lower-triangular factors [..., n, n] (ef.linalg.cholesky's output).
  rhs: Right-hand sides [..., n, k] of chol's dtype; batch dimensions broadcast.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [..., n, k].

Raises:
  InvalidArgumentError: shapes that do not match, or other dtypes.
)doc",
      "chol"_a, "rhs"_a, "name"_a = py::none());
  m.def(
      "triangular_solve",
      [](TensorArg matrix, TensorArg rhs, bool lower, bool adjoint, py::handle) {
        return large(rhs, [&] { return ef::linalg::triangular_solve(matrix, rhs, lower, adjoint, kPython); });
      },
      R"doc(Solves op(matrix) X = rhs for triangular matrices (tf.linalg.triangular_solve).

Only the lower triangle of matrix is read when lower, else the upper one;
op(matrix) is its transpose when adjoint.

>>> ef.linalg.triangular_solve([[2., 0.], [1., 1.]], [[2.], [3.]]).numpy()
array([[1.],
       [2.]], dtype=float32)

Args:
  matrix: A float32/float64 tensor-like [..., n, n].
  rhs: Right-hand sides [..., n, k] of matrix's dtype; batch dimensions broadcast.
  lower: Whether matrix is lower (True) or upper (False) triangular.
  adjoint: Solve with matrix's transpose.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [..., n, k].

Raises:
  InvalidArgumentError: a zero on the diagonal (not invertible), shapes that do
    not match, or other dtypes.
)doc",
      "matrix"_a, "rhs"_a, "lower"_a = true, "adjoint"_a = false, "name"_a = py::none());
  m.def(
      "solve",
      [](TensorArg matrix, TensorArg rhs, bool adjoint, py::handle) {
        return large(matrix, [&] { return ef::linalg::solve(matrix, rhs, adjoint, kPython); });
      },
      R"doc(Solves op(matrix) X = rhs for square matrices (tf.linalg.solve), by LU decomposition.

op(matrix) is its transpose when adjoint.

>>> ef.linalg.solve([[1., 2.], [3., 4.]], [[5.], [6.]]).numpy()
array([[-4. ],
       [ 4.5]], dtype=float32)

Args:
  matrix: A float32/float64 tensor-like [..., n, n].
  rhs: Right-hand sides [..., n, k] of matrix's dtype; batch dimensions broadcast.
  adjoint: Solve with matrix's transpose.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [..., n, k].

Raises:
  InvalidArgumentError: a singular matrix ("not invertible"), shapes that do not
    match, or other dtypes.
)doc",
      "matrix"_a, "rhs"_a, "adjoint"_a = false, "name"_a = py::none());
  m.def(
      "inv",
      [](TensorArg input, bool adjoint, py::handle) {
        return large(input, [&] { return ef::linalg::inv(input, adjoint, kPython); });
      },
      R"doc(Computes the inverse of each square matrix (tf.linalg.inv).

>>> ef.linalg.inv([[1., 2.], [3., 4.]]).numpy()
array([[-2. ,  1. ],
       [ 1.5, -0.5]], dtype=float32)

Args:
  input: A float32/float64 tensor-like [..., n, n].
  adjoint: Invert each matrix's transpose.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's shape and dtype.

Raises:
  InvalidArgumentError: a singular matrix ("not invertible"), a shape that is not
    a batch of square matrices, or another dtype.
)doc",
      "input"_a, "adjoint"_a = false, "name"_a = py::none());
  m.def(
      "det",
      [](TensorArg input, py::handle) {
        return large(input, [&] { return ef::linalg::det(input, kPython); });
      },
      R"doc(Computes the determinant of each square matrix (tf.linalg.det).

0 for a singular matrix, 1 for a 0 x 0 one. The gradient at a singular matrix
raises, as it needs the inverse.

>>> round(float(ef.linalg.det([[1., 2.], [3., 4.]])), 4)
-2.0

Args:
  input: A float32/float64 tensor-like [..., n, n].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [...].

Raises:
  InvalidArgumentError: a shape that is not a batch of square matrices, or
    another dtype.
)doc",
      "input"_a, "name"_a = py::none());
  m.def(
      "slogdet",
      [](TensorArg input, py::handle) {
        auto [sign, logabs] = large(input, [&] { return ef::linalg::slogdet(input, kPython); });
        return py::make_tuple(sign, logabs);
      },
      R"doc(Computes the sign and log |det| of each square matrix (tf.linalg.slogdet).

A singular matrix gives sign 0 and log |det| = -inf.

>>> sign, logabs = ef.linalg.slogdet([[1., 2.], [3., 4.]])
>>> float(sign), round(float(logabs), 4)
(-1.0, 0.6931)

Args:
  input: A float32/float64 tensor-like [..., n, n].
  name: Ignored (TensorFlow compatibility).

Returns:
  A tuple (sign, log_abs_determinant) of Tensors [...].

Raises:
  InvalidArgumentError: a shape that is not a batch of square matrices, or
    another dtype.
)doc",
      "input"_a, "name"_a = py::none());
  m.def(
      "logdet",
      [](TensorArg matrix, py::handle) {
        return large(matrix, [&] { return ef::linalg::logdet(matrix, kPython); });
      },
      R"doc(Computes log det of each symmetric positive definite matrix (tf.linalg.logdet), via Cholesky.

>>> round(float(ef.linalg.logdet([[4., 2.], [2., 3.]])), 4)
2.0794

Args:
  matrix: A float32/float64 tensor-like [..., n, n].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [...].

Raises:
  InvalidArgumentError: a matrix that is not positive definite, a shape that is
    not a batch of square matrices, or another dtype.
)doc",
      "matrix"_a, "name"_a = py::none());
  m.def(
      "band_part",
      [](TensorArg input, int64_t num_lower, int64_t num_upper, py::handle) {
        return ef::linalg::band_part(input, num_lower, num_upper, kPython);
      },
      R"doc(Keeps a band around the diagonal of each matrix and zeroes the rest (tf.linalg.band_part).

num_lower subdiagonals and num_upper superdiagonals are kept (negative: all):
(-1, 0) is the lower triangle, (0, 0) the diagonal.

>>> ef.linalg.band_part([[1, 2], [3, 4]], -1, 0).numpy()
array([[1, 0],
       [3, 4]], dtype=int32)

Args:
  input: A tensor-like [..., m, n] of any dtype.
  num_lower: How many subdiagonals to keep (negative: all).
  num_upper: How many superdiagonals to keep (negative: all).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's shape and dtype.

Raises:
  InvalidArgumentError: a rank below 2.
)doc",
      "input"_a, "num_lower"_a, "num_upper"_a, "name"_a = py::none());
  m.def(
      "matrix_transpose",
      [](TensorArg a, bool conjugate, py::handle) {
        (void)conjugate;  // real dtypes only: conjugation changes nothing
        return ef::linalg::matrix_transpose(a, kPython);
      },
      R"doc(Transposes the last two dimensions (tf.linalg.matrix_transpose).

>>> ef.linalg.matrix_transpose(ef.zeros([2, 3, 4])).shape
TensorShape([2, 4, 3])

Args:
  a: A tensor-like of rank >= 2.
  conjugate: Ignored (no complex dtypes).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [..., n, m].

Raises:
  InvalidArgumentError: a rank below 2.
)doc",
      "a"_a, "conjugate"_a = false, "name"_a = py::none());
  m.def(
      "trace", [](TensorArg x, py::handle) { return ef::linalg::trace(x, kPython); },
      R"doc(Sums the diagonal of each matrix (tf.linalg.trace).

>>> float(ef.linalg.trace([[1., 2.], [3., 4.]]))
5.0

Args:
  x: A numeric tensor-like [..., m, n].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [...].

Raises:
  InvalidArgumentError: a rank below 2 or a bool dtype.
)doc",
      "x"_a, "name"_a = py::none());
  m.def(
      "diag_part", [](TensorArg input, py::handle) { return ef::linalg::diag_part(input, kPython); },
      R"doc(Returns the diagonal of each matrix (tf.linalg.diag_part).

>>> ef.linalg.diag_part([[1., 2.], [3., 4.]]).numpy()
array([1., 4.], dtype=float32)

Args:
  input: A numeric tensor-like [..., m, n].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [..., min(m, n)].

Raises:
  InvalidArgumentError: a rank below 2 or a bool dtype.
)doc",
      "input"_a, "name"_a = py::none());
  m.def(
      "diag", [](TensorArg diagonal, py::handle) { return ef::linalg::diag(diagonal, kPython); },
      R"doc(Builds diagonal matrices from their diagonals (tf.linalg.diag).

>>> ef.linalg.diag([1., 2.]).numpy()
array([[1., 0.],
       [0., 2.]], dtype=float32)

Args:
  diagonal: A numeric tensor-like [..., n].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor [..., n, n].

Raises:
  InvalidArgumentError: a scalar.
)doc",
      "diagonal"_a, "name"_a = py::none());
}

}  // namespace efpy
