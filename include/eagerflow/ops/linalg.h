// Linear algebra: matrix products, tensor contractions and norms.
//
//   ef::Tensor c = ef::matmul(a, b);                  // [..., m, k] x [..., k, n] -> [..., m, n]
//   ef::Tensor g = ef::matmul(x, x, true, false);     // x^T x, without copying x
//   ef::Tensor d = ef::tensordot(a, b, 1);            // contracts a's last axis with b's first
//   ef::Tensor e = ef::einsum("bij,bjk->bik", {a, b}); // batched matmul, by subscripts
//   ef::Tensor n = ef::linalg::norm(v, 1, -1);        // L1 norm over the last axis
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/ops/axes.h"
#include "eagerflow/ops/scalar.h"

namespace ef {

// Matrix product of the last two dimensions of `a` and `b` (rank >= 2 each), after
// transposing them when `transpose_a` / `transpose_b`; the leading (batch) dimensions
// broadcast as in NumPy. float32/float64 (OpenBLAS), int32/int64 (wrapping). Throws
// InvalidArgumentError for rank < 2, mismatched inner or batch dimensions, different
// dtypes, or bool inputs. K = 0 gives zeros.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false,
              CallSite where = CallSite::current());

// Which axes tensordot contracts: a count N (a's last N with b's first N, in order) or
// two equally long lists of axes (negative counts from the end).
class TensordotAxes {
 public:
  TensordotAxes(int64_t n) : count_(n) {}  // NOLINT: implicit by design
  TensordotAxes(int n) : count_(n) {}      // NOLINT
  TensordotAxes(std::vector<int64_t> a_axes, std::vector<int64_t> b_axes)
      : a_(std::move(a_axes)), b_(std::move(b_axes)), is_count_(false) {}
  bool is_count() const { return is_count_; }
  int64_t count() const { return count_; }
  const std::vector<int64_t>& a_axes() const { return a_; }
  const std::vector<int64_t>& b_axes() const { return b_; }

 private:
  int64_t count_ = 0;
  std::vector<int64_t> a_, b_;
  bool is_count_ = true;
};

// Sum of products of `a` and `b` over the contracted axes (as tf.tensordot); the result
// has a's free axes then b's. Throws InvalidArgumentError for mismatched contracted
// sizes, a bad count, repeated or out-of-range axes, or different dtypes.
Tensor tensordot(const Tensor& a, const Tensor& b, const TensordotAxes& axes,
                 CallSite where = CallSite::current());

// Einstein summation over `operands` as tf.einsum / np.einsum: "ij,jk->ik", implicit
// output (the labels that appear once, sorted), "..." broadcasting, repeated labels
// (diagonals), size-1 dimensions broadcasting; several operands are contracted pairwise
// in a greedy order. Throws InvalidArgumentError for a malformed equation, a term that
// does not match its operand's rank, inconsistent label sizes, or mixed or bool dtypes.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands,
              CallSite where = CallSite::current());

namespace linalg {

// The `ord` of a norm: "euclidean" / "fro", or a number p > 0 (1, 2, infinity, ...).
class NormOrd {
 public:
  NormOrd(const char* name) : name_(name) {}       // NOLINT: implicit by design
  NormOrd(std::string name) : name_(std::move(name)) {}  // NOLINT
  NormOrd(double p) : p_(p), is_name_(false) {}    // NOLINT
  NormOrd(int p) : p_(p), is_name_(false) {}       // NOLINT
  bool is_name() const { return is_name_; }
  const std::string& name() const { return name_; }
  double p() const { return p_; }

 private:
  std::string name_;
  double p_ = 2;
  bool is_name_ = true;
};

// Norm of a float tensor (as tf.norm). `axis` = every axis or one axis: a vector norm
// ("euclidean", p > 0, or infinity = max |x|). Two axes: a matrix norm ("euclidean" and
// "fro" = Frobenius, 1 = max column sum, infinity = max row sum, 2 = largest singular
// value, "nuc" = sum of singular values; 2 and "nuc" for float32/float64 only). Other ords, more axes or
// integer inputs throw InvalidArgumentError.
Tensor norm(const Tensor& x, const NormOrd& ord = "euclidean", const Axes& axis = {}, bool keepdims = false,
            CallSite where = CallSite::current());

// Matrix functions of batches of matrices [..., m, n] (the leading dimensions are the
// batch), as tf.linalg, float32/float64 on LAPACK. Ill-shaped inputs or other dtypes
// throw InvalidArgumentError naming the op, argument and shape.

// The lower-triangular L with L L^T = A for each symmetric positive definite matrix A
// (only A's lower triangle is read). Throws InvalidArgumentError when A is not
// positive definite. Its gradient is symmetric.
Tensor cholesky(const Tensor& input, CallSite where = CallSite::current());

// X with A X = rhs for each A = L L^T given its Cholesky factor `chol` = L. Batch
// dimensions broadcast.
Tensor cholesky_solve(const Tensor& chol, const Tensor& rhs, CallSite where = CallSite::current());

// X with op(A) X = rhs for triangular A = `matrix` (only its lower triangle is read
// when `lower`, else its upper), op(A) = A^T when `adjoint`. Batch dimensions
// broadcast. Throws InvalidArgumentError for a zero on A's diagonal.
Tensor triangular_solve(const Tensor& matrix, const Tensor& rhs, bool lower = true, bool adjoint = false,
                        CallSite where = CallSite::current());

// X with op(A) X = rhs for square A = `matrix` (LU with partial pivoting), op(A) = A^T
// when `adjoint`. Batch dimensions broadcast. Throws InvalidArgumentError ("not
// invertible") for a singular A.
Tensor solve(const Tensor& matrix, const Tensor& rhs, bool adjoint = false, CallSite where = CallSite::current());

// The inverse of each square matrix (its transpose's when `adjoint`). Throws
// InvalidArgumentError ("not invertible") for a singular matrix.
Tensor inv(const Tensor& input, bool adjoint = false, CallSite where = CallSite::current());

// The determinant of each square matrix, shape [...] (1 for a 0 x 0 matrix, 0 for a
// singular one; the gradient at a singular matrix throws, as the inverse does).
Tensor det(const Tensor& input, CallSite where = CallSite::current());

// (sign, log |det|) of each square matrix, each of shape [...]: a singular matrix gives
// (0, -inf). The gradient flows through log |det| (A^-T).
std::pair<Tensor, Tensor> slogdet(const Tensor& input, CallSite where = CallSite::current());

// log det A of each symmetric positive definite matrix (through its Cholesky factor:
// throws InvalidArgumentError when A is not positive definite).
Tensor logdet(const Tensor& matrix, CallSite where = CallSite::current());

// The QR decomposition A = Q R of each m x n matrix (Householder, LAPACK's signs): Q
// [..., m, k] with orthonormal columns and upper-triangular R [..., k, n], k = min(m, n),
// or k = m when `full_matrices`. The gradient throws UnimplementedError for
// full_matrices with m > n, or for unknown matrix dimensions (as TensorFlow).
std::pair<Tensor, Tensor> qr(const Tensor& input, bool full_matrices = false,
                             CallSite where = CallSite::current());

// The eigenvalues e [..., n] (ascending) and orthonormal eigenvectors v [..., n, n]
// (columns, LAPACK's signs) of each symmetric matrix, of which only the lower triangle
// is read. The gradient through v is inf/nan where eigenvalues repeat (as TensorFlow).
std::pair<Tensor, Tensor> eigh(const Tensor& tensor, CallSite where = CallSite::current());

// The eigenvalues [..., n] (ascending) of each symmetric matrix (lower triangle read);
// its gradient is finite for repeated eigenvalues too.
Tensor eigvalsh(const Tensor& tensor, CallSite where = CallSite::current());

// The singular values s [..., k] (descending, k = min(m, n)) of each m x n matrix and,
// when `compute_uv`, U and V (not V^T) with A = U diag(s) V^T, as tf.linalg.svd: {s} or
// {s, u, v}; U [..., m, k] and V [..., n, k], or [..., m, m] and [..., n, n] when
// `full_matrices`. The gradient through U or V is inf/nan for repeated or (m != n) zero
// singular values, and throws UnimplementedError for full_matrices with m != n.
std::vector<Tensor> svd(const Tensor& tensor, bool full_matrices = false, bool compute_uv = true,
                        CallSite where = CallSite::current());

// The least-squares solutions X of matrix X = rhs ([..., m, n] and [..., m, k] ->
// [..., n, k]; the minimum-norm one when m < n), as tf.linalg.lstsq: with `fast`, from
// the normal equations (A^T A + l2 I) X = A^T rhs by Cholesky (A A^T when m < n);
// otherwise by QR, where l2_regularizer must be 0 (else UnimplementedError). Rank-
// deficient matrices throw InvalidArgumentError (not positive definite / invertible).
Tensor lstsq(const Tensor& matrix, const Tensor& rhs, double l2_regularizer = 0.0, bool fast = true,
             CallSite where = CallSite::current());

// The Moore-Penrose pseudo-inverse of each matrix ([..., m, n] -> [..., n, m]) through the
// SVD, singular values at or below rcond times the largest taken as zero (default rcond:
// 10 max(m, n) eps, as TensorFlow).
Tensor pinv(const Tensor& a, std::optional<double> rcond = std::nullopt,
            CallSite where = CallSite::current());

// The n-th matrix power of each square matrix by repeated squaring: the identity for
// n = 0, powers of the inverse for n < 0 (InvalidArgumentError when not invertible).
// int32/int64 matrices too when n >= 0.
Tensor matrix_power(const Tensor& a, int64_t n, CallSite where = CallSite::current());

// `input` [..., m, n] with each main diagonal replaced by `diagonal` [..., min(m, n)]
// (tf.linalg.set_diag), any dtype. Throws InvalidArgumentError when the shapes do not fit.
Tensor set_diag(const Tensor& input, const Tensor& diagonal, CallSite where = CallSite::current());

// Keeps, of each matrix, the `num_lower` subdiagonals and `num_upper` superdiagonals
// (negative: all of them) and zeroes the rest: band_part(x, -1, 0) is the lower
// triangle, band_part(x, 0, 0) the diagonal. Any dtype.
Tensor band_part(const Tensor& input, int64_t num_lower, int64_t num_upper, CallSite where = CallSite::current());

// Each matrix transposed ([..., m, n] -> [..., n, m]), a view.
Tensor matrix_transpose(const Tensor& a, CallSite where = CallSite::current());

// The sum of the diagonal of each matrix, shape [...].
Tensor trace(const Tensor& x, CallSite where = CallSite::current());

// The diagonal of each matrix, [..., m, n] -> [..., min(m, n)]. With unknown matrix
// dimensions (graph mode) the matrices are taken to have no more rows than columns.
Tensor diag_part(const Tensor& input, CallSite where = CallSite::current());

// The diagonal matrices with `diagonal` [..., n] on their diagonal, [..., n, n].
Tensor diag(const Tensor& diagonal, CallSite where = CallSite::current());

}  // namespace linalg
}  // namespace ef
