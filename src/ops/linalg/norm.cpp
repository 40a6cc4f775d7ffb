// linalg::norm: vector and matrix norms, composed from public ops (no kernel, no
// gradient of its own); the matrix 2-norm and the nuclear norm through the singular
// values (svd with compute_uv = false, whose gradient is finite for repeated ones).
#include <cmath>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "ops/linalg/lapack.h"
#include "ops/reduction/axes_util.h"

namespace ef::linalg {
namespace {

std::string ord_string(const NormOrd& ord) {
  return ord.is_name() ? "'" + ord.name() + "'" : detail::str(ord.p());
}

bool is_euclidean(const NormOrd& ord) { return ord.is_name() && ord.name() == "euclidean"; }
bool is_fro(const NormOrd& ord) { return ord.is_name() && ord.name() == "fro"; }
bool is_nuc(const NormOrd& ord) { return ord.is_name() && ord.name() == "nuc"; }

// The largest (ord 2) or summed ("nuc") singular values of the matrices over axes (a0, a1).
Tensor spectral_norm(const Tensor& x, bool nuclear, int64_t a0, int64_t a1, bool keepdims, CallSite where) {
  const int64_t r = x.rank();
  a0 = a0 < 0 ? a0 + r : a0;
  a1 = a1 < 0 ? a1 + r : a1;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < r; ++i)
    if (i != a0 && i != a1) perm.push_back(i);
  perm.push_back(a0);
  perm.push_back(a1);
  Tensor m = transpose(x, perm, where);
  linalg_detail::check_matrices("norm", m, "tensor", false);
  Tensor s = svd(m, false, false, where)[0];
  Tensor n = nuclear ? reduce_sum(s, -1, false, where) : reduce_max(s, -1, false, where);
  if (!keepdims) return n;
  for (int64_t axis : {std::min(a0, a1), std::max(a0, a1)}) n = expand_dims(n, axis, where);
  return n;
}

Tensor vector_norm(const Tensor& x, const NormOrd& ord, const Axes& axis, bool keepdims, CallSite where) {
  if (is_euclidean(ord) || (!ord.is_name() && ord.p() == 2))
    return sqrt(reduce_sum(square(x, where), axis, keepdims, where), where);
  if (ord.is_name())
    fail("norm: ord ", ord_string(ord), " is not a vector norm (use 'euclidean' or a number p > 0)");
  const double p = ord.p();
  if (!(p > 0)) fail("norm: ord must be a number > 0 for a vector norm, got ", p);
  Tensor a = abs(x, where);
  if (std::isinf(p)) return reduce_max(a, axis, keepdims, where);
  if (p == 1) return reduce_sum(a, axis, keepdims, where);
  return pow(reduce_sum(pow(a, p, where), axis, keepdims, where), 1.0 / p, where);
}

// Matrix norms over axes (rows, cols) = (a0, a1).
Tensor matrix_norm(const Tensor& x, const NormOrd& ord, int64_t a0, int64_t a1, bool keepdims, CallSite where) {
  const Axes both = std::vector<int64_t>{a0, a1};
  if (is_euclidean(ord) || is_fro(ord))
    return sqrt(reduce_sum(square(x, where), both, keepdims, where), where);
  if (is_nuc(ord)) return spectral_norm(x, true, a0, a1, keepdims, where);
  if (ord.is_name())
    fail("norm: ord ", ord_string(ord), " is not a matrix norm (use 'fro', 'euclidean', 'nuc', 1, 2 or inf)");
  const double p = ord.p();
  if (p == 2) return spectral_norm(x, false, a0, a1, keepdims, where);
  if (p != 1 && !(std::isinf(p) && p > 0))
    fail("norm: ord ", p, " is not supported for matrix norms (use 'fro', 'euclidean', 'nuc', 1, 2 or inf)");
  // 1: the largest column sum (sum over rows, then max over columns); inf: the reverse.
  const int64_t sum_axis = p == 1 ? a0 : a1, max_axis = p == 1 ? a1 : a0;
  Tensor sums = reduce_sum(abs(x, where), sum_axis, true, where);
  Tensor m = reduce_max(sums, max_axis, true, where);
  // Both axes now have size 1; a reduction over them drops them.
  return keepdims ? m : reduce_max(m, both, false, where);
}

}  // namespace

Tensor norm(const Tensor& x, const NormOrd& ord, const Axes& axis, bool keepdims, CallSite where) {
  try {
    if (!x.defined()) fail("norm: argument 'tensor' is undefined");
    if (!is_floating(x.dtype()))
      fail("norm: argument 'tensor' has dtype ", x.dtype(), ", which this op does not support (supported: float32, "
           "float64)");
    if (ord.is_name() && !is_euclidean(ord) && !is_fro(ord) && !is_nuc(ord))
      fail("norm: unknown ord ", ord_string(ord), " (expected 'euclidean', 'fro', 'nuc' or a number)");
    if (axis.all()) {
      if (is_nuc(ord)) fail("norm: ord 'nuc' needs two axes (a matrix), got every axis of shape ", x.shape());
      // The whole tensor as one vector; 'fro' then means 'euclidean'.
      return vector_norm(x, is_fro(ord) ? NormOrd("euclidean") : ord, axis, keepdims, where);
    }
    const Dims& values = axis.values();
    detail::checked_reduction_axes(std::span<const int64_t>(values.data(), values.size()), x.rank(), "norm");
    if (values.size() == 1) {
      if (is_fro(ord) || is_nuc(ord))
        fail("norm: ord ", ord_string(ord), " needs two axes (a matrix), got axis ", values[0]);
      return vector_norm(x, ord, axis, keepdims, where);
    }
    if (values.size() == 2) return matrix_norm(x, ord, values[0], values[1], keepdims, where);
    fail("norm: argument 'axis' must name one axis (vector norm) or two (matrix norm), got ", values.size(),
         " axes for a tensor of shape ", x.shape());
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::linalg
