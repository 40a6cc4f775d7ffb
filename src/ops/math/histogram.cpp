// histogram_fixed_width: equal-width bins over a value range, as a composite (the bin
// of each value, then bincount).
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "ops/op_helpers.h"

namespace ef {

Tensor histogram_fixed_width(const Tensor& values, const Tensor& value_range, int64_t nbins, DType dtype,
                             CallSite where) {
  return detail::with_call_site(where, [&] {
    constexpr std::string_view op = "histogram_fixed_width";
    if (!values.defined() || !value_range.defined()) fail(op, ": an argument is an undefined tensor");
    if (!is_floating(values.dtype()) && !is_integer(values.dtype()))
      fail(op, ": argument 'values' must be a number tensor, got ", values.dtype());
    if (value_range.dtype() != values.dtype() || value_range.shape() != Shape{2})
      fail(op, ": argument 'value_range' must be [lo, hi] of values' dtype ", values.dtype(), ", got ",
           value_range.dtype(), " of shape ", value_range.shape());
    if (nbins < 1) fail(op, ": argument 'nbins' must be positive, got ", nbins);
    if (dtype != DType::Int32 && dtype != DType::Int64)
      fail(op, ": argument 'dtype' must be int32 or int64, got ", dtype);
    const Tensor lo = value_range[0], hi = value_range[1];
    // Compared in the values' dtype: int64 ends 1 apart may be one double.
    if (!value_range.is_symbolic() && !less(lo, hi, where).item<bool>())
      fail(op, ": value_range must have lo < hi, got ", value_range.to_string());
    // TensorFlow's arithmetic: (max(v, lo) - lo) in values' dtype, then in float64
    // divided by the bin width and capped at the last bin.
    const Tensor width =
        divide(cast(subtract(hi, lo, where), DType::Float64, where), static_cast<double>(nbins), where);
    const Tensor offset = cast(subtract(maximum(values, lo, where), lo, where), DType::Float64, where);
    const Tensor position =
        minimum(floor(divide(offset, width, where), where), static_cast<double>(nbins - 1), where);
    const Tensor flat = reshape(position, {-1}, where);
    // NaNs (not equal to themselves) go to an extra bin, dropped at the end.
    const Tensor bins = ef::where(equal(flat, flat, where), flat, static_cast<double>(nbins), where);
    const Tensor counts =
        bincount(cast(bins, DType::Int64, where), std::nullopt, nbins + 1, nbins + 1, dtype, where);
    return slice(counts, {0}, {nbins}, where);
  });
}

}  // namespace ef
