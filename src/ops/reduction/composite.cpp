// Composite reductions: reduce_mean, reduce_logsumexp, reduce_variance, reduce_std.
// Plain functions over public ops: no kernel and no gradient of their own.
#include <limits>

#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "ops/math/complex.h"
#include "ops/reduction/axes_util.h"

namespace ef {
namespace {

// Errors raised here (before any op runs) get the user's call site like op errors.
template <class F>
Tensor with_call_site(CallSite where, F&& f) {
  try {
    return f();
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

void require_float(const Tensor& x, std::string_view op) {
  if (!x.defined()) fail(op, ": argument 'input_tensor' is undefined");
  if (!is_floating(x.dtype()))
    fail(op, ": argument 'input_tensor' has dtype ", x.dtype(),
         ", which this op does not support (supported: float32, float64)");
}

// Number of elements reduced into each output, as a tensor of x's dtype: known shapes
// give a constant; partly known (graph mode) shapes count with a reduction of ones,
// kept in the sum's shape (`keepdims` as the sum's) so that sum / count is elementwise.
Tensor reduced_count(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  if (x.shape().is_fully_defined()) {
    Dims axes = detail::reduction_axes_attr(x, axis);
    axes = detail::checked_reduction_axes(std::span<const int64_t>(axes.data(), axes.size()), x.rank(),
                                          "reduce_mean");
    int64_t count = 1;
    for (int64_t a : axes) count *= x.shape()[static_cast<int>(a)];
    return scalar_tensor(count, x.dtype(), "reduce_mean");
  }
  return reduce_sum(ones_like(x, where), axis, keepdims, where);
}

}  // namespace

Tensor reduce_mean(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  return with_call_site(where, [&] {
    if (x.defined() && is_complex(x.dtype())) return detail::complex_reduce("reduce_mean", x, axis, keepdims);
    if (x.defined() && x.dtype() == DType::Bool)
      fail("reduce_mean: argument 'input_tensor' has dtype bool, which this op does not support (cast it first)");
    // Half dtypes: the sum is taken and divided in float32, then rounded once (as NumPy
    // and PyTorch; TensorFlow's mean accumulates half in float32 too). A float16 sum
    // rounded before the division overflows past 65504 (the mean of 5000 values of 30
    // was inf) and loses the mean's low bits (the variance of [1000, 1001, 1002] was
    // 0.92, not 0.67).
    if (x.defined() && is_half(x.dtype()))
      return cast(reduce_mean(cast(x, DType::Float32, where), axis, keepdims, where), x.dtype(), where);
    // The small integer dtypes sum in int64, as TensorFlow's: a sum that wrapped before
    // the division would be wrong (the mean of ten uint8 200s was 20, and int32 wraps
    // past 8.4 million of them), while the mean itself fits.
    if (x.defined() && is_small_integer(x.dtype()))
      return cast(reduce_mean(cast(x, DType::Int64, where), axis, keepdims, where), x.dtype(), where);
    Tensor sum = reduce_sum(x, axis, keepdims, where);  // validates dtype and axes first
    Tensor count = reduced_count(x, axis, keepdims, where);
    if (is_integer(x.dtype()) && count.shape().is_fully_defined() && count.item<int64_t>() == 0)
      fail("reduce_mean: cannot take the mean of an empty reduction of the integer tensor of shape ", x.shape());
    return divide(sum, count, where);
  });
}

Tensor reduce_logsumexp(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  return with_call_site(where, [&] {
    require_float(x, "reduce_logsumexp");
    Tensor m = reduce_max(x, axis, true, where);
    // Shift by the maximum, clipped to finite values: a -inf maximum (every input -inf,
    // or an empty reduction) must not give -inf - -inf = NaN; it gives exp(-inf) = 0
    // and the result -inf. +inf and NaN maxima still propagate through the sum.
    double big = x.dtype() == DType::Float32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    Tensor shift = clip_by_value(m, -big, big, where);
    Tensor sum = reduce_sum(exp(subtract(x, shift, where), where), axis, keepdims, where);
    if (!keepdims) shift = reduce_max(shift, axis, false, where);  // drops the size-1 axes
    return add(log(sum, where), shift, where);
  });
}

Tensor reduce_variance(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  return with_call_site(where, [&] {
    require_float(x, "reduce_variance");
    Tensor mean = reduce_mean(x, axis, true, where);
    return reduce_mean(squared_difference(x, mean, where), axis, keepdims, where);
  });
}

Tensor reduce_std(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  return with_call_site(where, [&] {
    require_float(x, "reduce_std");
    return sqrt(reduce_variance(x, axis, keepdims, where), where);
  });
}

}  // namespace ef
