// Reductions and scans, with TensorFlow's names and semantics.
//
//   ef::Tensor x = ef::constant({{1.f, 2.f}, {3.f, 4.f}});
//   ef::reduce_sum(x);                 // 10.
//   ef::reduce_max(x, 1);              // [2., 4.]
//   ef::reduce_mean(x, {0, 1}, true);  // [[2.5]]
//   ef::argmax(x, -1);                 // [1, 1] (int64)
//   ef::cumsum(x, 0);                  // [[1., 2.], [4., 6.]]
//
// `axis` (ef::Axes) is one axis, a list, or nothing for every axis; negative axes count
// from the end; an explicit empty list reduces nothing. Out-of-range or repeated axes,
// and any axis of a scalar, throw InvalidArgumentError naming the op, the axis and the
// rank. `keepdims` keeps reduced axes with size 1. Results never depend on the thread
// count.
#pragma once

#include "eagerflow/core/tensor.h"
#include "eagerflow/ops/axes.h"
#include "eagerflow/ops/scalar.h"

namespace ef {

// ---- Primitive reductions ----
// Sum over `axis` (numeric dtypes). Float32 accumulates in float64; integer sums wrap
// on overflow. An empty reduction gives 0. Bool input throws InvalidArgumentError.
Tensor reduce_sum(const Tensor& x, const Axes& axis = {}, bool keepdims = false,
                  CallSite where = CallSite::current());
// Product over `axis` (numeric dtypes); integer products wrap; an empty reduction gives 1.
Tensor reduce_prod(const Tensor& x, const Axes& axis = {}, bool keepdims = false,
                   CallSite where = CallSite::current());
// Maximum over `axis`; NaN propagates. An empty reduction gives -inf for floats (as
// TensorFlow) and throws InvalidArgumentError for integers (no identity value).
Tensor reduce_max(const Tensor& x, const Axes& axis = {}, bool keepdims = false,
                  CallSite where = CallSite::current());
// Minimum over `axis`; NaN propagates. An empty reduction gives +inf for floats and
// throws InvalidArgumentError for integers.
Tensor reduce_min(const Tensor& x, const Axes& axis = {}, bool keepdims = false,
                  CallSite where = CallSite::current());
// Logical or over `axis` of a bool tensor (false when empty); other dtypes throw.
Tensor reduce_any(const Tensor& x, const Axes& axis = {}, bool keepdims = false,
                  CallSite where = CallSite::current());
// Logical and over `axis` of a bool tensor (true when empty); other dtypes throw.
Tensor reduce_all(const Tensor& x, const Axes& axis = {}, bool keepdims = false,
                  CallSite where = CallSite::current());

// `x` summed over the axes along which a tensor of `like`'s shape was broadcast to x's
// shape (leading extra axes, and axes where `like` has size 1): the gradient of a
// broadcast, with the axes chosen from the actual shapes when the op runs, so it also
// serves graphs whose static shapes are partial. Reads only `like`'s shape.
Tensor sum_to_shape_of(const Tensor& x, const Tensor& like, CallSite where = CallSite::current());

// Index of the largest value along `axis` (any dtype): first index on ties, the first
// NaN counts as the largest (as NumPy). `output_type` is int64 or int32. A scalar, an
// empty axis, or an axis too long for int32 output throws InvalidArgumentError.
Tensor argmax(const Tensor& x, int64_t axis = 0, DType output_type = DType::Int64,
              CallSite where = CallSite::current());
// Index of the smallest value along `axis`; ties and NaN as argmax.
Tensor argmin(const Tensor& x, int64_t axis = 0, DType output_type = DType::Int64,
              CallSite where = CallSite::current());

// Cumulative sum along `axis` (numeric dtypes, rank >= 1). `exclusive` leaves out the
// element itself (the first output is 0); `reverse` accumulates from the end. As TF.
Tensor cumsum(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false,
              CallSite where = CallSite::current());
// Cumulative product along `axis`; `exclusive` starts from 1. As TF.
Tensor cumprod(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false,
               CallSite where = CallSite::current());
// log(cumsum(exp(x))) along `axis`, without overflow or underflow (float dtypes);
// `exclusive` starts from -inf. As TF's cumulative_logsumexp.
Tensor cumulative_logsumexp(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false,
                            CallSite where = CallSite::current());

// ---- Composite reductions (built from the ops above) ----
// Mean over `axis`. Integer inputs use truncating integer division (as TF); the mean of
// an empty float reduction is NaN, of an empty integer reduction InvalidArgumentError.
Tensor reduce_mean(const Tensor& x, const Axes& axis = {}, bool keepdims = false,
                   CallSite where = CallSite::current());
// log(sum(exp(x))) over `axis`, computed stably (shifted by the maximum); -inf inputs and
// empty reductions give -inf. Float dtypes only.
Tensor reduce_logsumexp(const Tensor& x, const Axes& axis = {}, bool keepdims = false,
                        CallSite where = CallSite::current());
// Population variance (divides by N, as TF) over `axis`. Float dtypes only.
Tensor reduce_variance(const Tensor& x, const Axes& axis = {}, bool keepdims = false,
                       CallSite where = CallSite::current());
// Population standard deviation, sqrt(reduce_variance). Float dtypes only.
Tensor reduce_std(const Tensor& x, const Axes& axis = {}, bool keepdims = false,
                  CallSite where = CallSite::current());

}  // namespace ef
