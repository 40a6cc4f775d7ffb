// The matrix functions composed from the decompositions (no kernel, no gradient of
// their own): lstsq through Cholesky of the normal equations or QR, pinv through the
// SVD, matrix_power through repeated squaring. Each validates its arguments first, so
// errors name it rather than the op it runs.
#include <cmath>
#include <limits>
#include <optional>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "ops/linalg/lapack.h"

namespace ef::linalg {
namespace {

using detail::with_call_site;
using linalg_detail::check_matrices;

// A batch of identity matrices shaped like the square matrices `a` (works for unknown
// dimensions too).
Tensor identity_like(const Tensor& a, CallSite where) { return band_part(ones_like(a, where), 0, 0, where); }

// A^T A + l2 I (or A A^T + l2 I when `rows`): the regularized Gram matrix.
Tensor gram(const Tensor& a, bool rows, double l2, CallSite where) {
  Tensor g = rows ? matmul(a, a, false, true, where) : matmul(a, a, true, false, where);
  return l2 == 0 ? g : add(g, multiply(identity_like(g, where), l2, where), where);
}

}  // namespace

Tensor lstsq(const Tensor& matrix, const Tensor& rhs, double l2_regularizer, bool fast, CallSite where) {
  return with_call_site(where, [&] {
    check_matrices("lstsq", matrix, "matrix", false);
    check_matrices("lstsq", rhs, "rhs", false);
    if (matrix.dtype() != rhs.dtype())
      fail("lstsq: arguments 'matrix' (", matrix.dtype(), ") and 'rhs' (", rhs.dtype(),
           ") must have the same dtype");
    const int64_t m = matrix.shape().dim(-2), n = matrix.shape().dim(-1), rows = rhs.shape().dim(-2);
    if (m != kUnknownDim && rows != kUnknownDim && m != rows)
      fail("lstsq: 'matrix' of shape ", matrix.shape(), " and 'rhs' of shape ", rhs.shape(),
           " do not match: rhs must have as many rows as the matrix");
    if (!(l2_regularizer >= 0)) fail("lstsq: l2_regularizer must be >= 0, got ", l2_regularizer);
    // Underdetermined (fewer rows than columns): the minimum-norm solution. Unknown
    // dimensions are taken to be overdetermined.
    const bool wide = m != kUnknownDim && n != kUnknownDim && m < n;
    if (fast) {
      // The normal equations by Cholesky, as TensorFlow's fast path.
      Tensor chol = cholesky(gram(matrix, wide, l2_regularizer, where), where);
      if (!wide) return cholesky_solve(chol, matmul(matrix, rhs, true, false, where), where);
      return matmul(matrix, cholesky_solve(chol, rhs, where), true, false, where);
    }
    if (l2_regularizer != 0)
      fail<UnimplementedError>("lstsq: l2_regularizer must be 0 when fast=False, got ", l2_regularizer);
    if (!wide) {  // A = Q R: X = R^-1 Q^T B
      auto [q, r] = qr(matrix, false, where);
      return triangular_solve(r, matmul(q, rhs, true, false, where), false, false, where);
    }
    // A^T = Q R: X = Q R^-T B.
    auto [q, r] = qr(matrix_transpose(matrix, where), false, where);
    return matmul(q, triangular_solve(r, rhs, false, true, where), false, false, where);
  });
}

Tensor pinv(const Tensor& a, std::optional<double> rcond, CallSite where) {
  return with_call_site(where, [&] {
    check_matrices("pinv", a, "a", false);
    const int64_t m = a.shape().dim(-2), n = a.shape().dim(-1);
    const double eps = a.dtype() == DType::Float32 ? std::numeric_limits<float>::epsilon()
                                                   : std::numeric_limits<double>::epsilon();
    std::vector<Tensor> svd_out = svd(a, false, true, where);
    const Tensor &s = svd_out[0], &u = svd_out[1], &v = svd_out[2];
    // TensorFlow's default: 10 max(m, n) eps of the largest singular value.
    Tensor scale = reduce_max(s, -1, true, where);
    Tensor cutoff;
    if (rcond) {
      cutoff = multiply(scale, *rcond, where);
    } else if (m != kUnknownDim && n != kUnknownDim) {
      cutoff = multiply(scale, 10.0 * static_cast<double>(std::max(m, n)) * eps, where);
    } else {
      Tensor dims = strided_slice(shape(a, DType::Int64, where), {-2}, {0}, {}, {.end_mask = 1}, where);
      cutoff = multiply(
          scale, multiply(cast(reduce_max(dims, {}, false, where), a.dtype(), where), 10.0 * eps, where),
          where);
    }
    // Singular values at or below the cutoff count as zero: 1 / inf.
    Tensor kept = ef::where(greater(s, cutoff, where), s, std::numeric_limits<double>::infinity(), where);
    return matmul(divide(v, expand_dims(kept, -2, where), where), u, false, true, where);
  });
}

Tensor matrix_power(const Tensor& a, int64_t n, CallSite where) {
  return with_call_site(where, [&] {
    // Integer matrices too, as matmul, for powers that need no inverse.
    constexpr cpu::DTypeSet kMatmulTypes =
        linalg_detail::kLapackTypes | cpu::dtype_bit(DType::Int32) | cpu::dtype_bit(DType::Int64);
    check_matrices("matrix_power", a, "a", true, n < 0 ? linalg_detail::kLapackTypes : kMatmulTypes);
    if (n == 0) return identity_like(a, where);
    if (n == 1) return identity(a, where);
    Tensor base = n < 0 ? inv(a, false, where) : a;
    // Repeated squaring: the bits of |n| from the lowest.
    uint64_t k = n < 0 ? uint64_t(0) - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
    Tensor result;
    while (true) {
      if (k & 1) result = result.defined() ? matmul(result, base, false, false, where) : base;
      k >>= 1;
      if (!k) break;
      base = matmul(base, base, false, false, where);
    }
    return result;
  });
}

}  // namespace ef::linalg
