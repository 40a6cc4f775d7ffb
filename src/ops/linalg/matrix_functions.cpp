// The matrix functions composed from public ops (no kernel, no gradient of their own):
// inv and det through solve and slogdet, logdet and cholesky_solve through the Cholesky
// factor, and the diagonal helpers through band_part. Each validates its arguments
// first, so errors name it rather than the op it runs.
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

constexpr cpu::DTypeSet kAnyNumeric = cpu::kNumericTypes;

// A batch of identity matrices shaped like the square matrices `a`; band_part of ones
// rather than eye, so that it also works for dimensions unknown until run time.
Tensor identity_like(const Tensor& a, CallSite where) { return band_part(ones_like(a, where), 0, 0, where); }

}  // namespace

Tensor inv(const Tensor& input, bool adjoint, CallSite where) {
  return with_call_site(where, [&] {
    check_matrices("inv", input, "input", true);
    return solve(input, identity_like(input, where), adjoint, where);
  });
}

Tensor det(const Tensor& input, CallSite where) {
  return with_call_site(where, [&] {
    check_matrices("det", input, "input", true);
    auto [sign, logabs] = slogdet(input, where);
    return multiply(sign, exp(logabs, where), where);
  });
}

Tensor logdet(const Tensor& matrix, CallSite where) {
  return with_call_site(where, [&] {
    check_matrices("logdet", matrix, "matrix", true);
    Tensor l = cholesky(matrix, where);
    return multiply(reduce_sum(log(diag_part(l, where), where), -1, false, where), 2.0, where);
  });
}

Tensor cholesky_solve(const Tensor& chol, const Tensor& rhs, CallSite where) {
  return with_call_site(where, [&] {
    check_matrices("cholesky_solve", chol, "chol", true);
    check_matrices("cholesky_solve", rhs, "rhs", false);
    // A = L L^T: X = L^-T (L^-1 rhs).
    return triangular_solve(chol, triangular_solve(chol, rhs, true, false, where), true, true, where);
  });
}

Tensor matrix_transpose(const Tensor& a, CallSite where) {
  return with_call_site(where, [&] {
    check_matrices("matrix_transpose", a, "a", false, cpu::kAllTypes);
    std::vector<int64_t> perm(static_cast<size_t>(a.rank()));
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::swap(perm[perm.size() - 2], perm[perm.size() - 1]);
    return transpose(a, perm, where);
  });
}

Tensor trace(const Tensor& x, CallSite where) {
  return with_call_site(where, [&] {
    check_matrices("trace", x, "x", false, kAnyNumeric);
    return reduce_sum(band_part(x, 0, 0, where), std::vector<int64_t>{-2, -1}, false, where);
  });
}

Tensor diag_part(const Tensor& input, CallSite where) {
  return with_call_site(where, [&] {
    check_matrices("diag_part", input, "input", false, kAnyNumeric);
    // Summing the diagonal band along the longer side leaves min(m, n) entries.
    const int64_t m = input.shape().dim(-2), n = input.shape().dim(-1);
    const bool tall = m != kUnknownDim && n != kUnknownDim && m > n;
    return reduce_sum(band_part(input, 0, 0, where), tall ? -2 : -1, false, where);
  });
}

Tensor diag(const Tensor& diagonal, CallSite where) {
  return with_call_site(where, [&] {
    if (!diagonal.defined() || diagonal.rank() < 1)
      fail("diag: argument 'diagonal' must have rank >= 1, got ",
           diagonal.defined() ? diagonal.shape().to_string() : "an undefined tensor");
    Tensor row = expand_dims(diagonal, -2, where);  // [..., 1, n]
    Tensor ones = multiply(ones_like(expand_dims(diagonal, -1, where), where), ones_like(row, where), where);
    return multiply(band_part(ones, 0, 0, where), row, where);
  });
}

}  // namespace ef::linalg
