// bias_add and l2_normalize: composites over public ops.
#include <string>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"

namespace ef {

Tensor bias_add(const Tensor& value, const Tensor& bias, const std::string& data_format, CallSite where) {
  try {
    if (data_format != "NHWC" && data_format != "NCHW")
      fail("bias_add: argument 'data_format' must be \"NHWC\" or \"NCHW\", got \"", data_format, "\"");
    if (value.dtype() != bias.dtype())
      fail("bias_add: value and bias must have the same dtype, got value ", value.dtype(), " and bias ",
           bias.dtype());
    if (!is_numeric(value.dtype())) fail("bias_add: argument 'value' must be numeric, got ", value.dtype());
    if (value.rank() < 2) fail("bias_add: argument 'value' must have rank >= 2, got shape ", value.shape());
    if (bias.rank() != 1) fail("bias_add: argument 'bias' must be 1-D, got shape ", bias.shape());
    const int channel_axis = data_format == "NHWC" ? value.rank() - 1 : 1;
    const int64_t channels = value.shape()[channel_axis];
    if (bias.shape()[0] != channels && bias.shape()[0] != kUnknownDim && channels != kUnknownDim)
      fail("bias_add: bias of shape ", bias.shape(), " does not match the ", channels,
           " channels (dimension ", channel_axis, ", ", data_format, ") of value of shape ", value.shape());
    if (data_format == "NHWC" || channel_axis == value.rank() - 1) return add(value, bias, where);
    // NCHW: bias as [C, 1, ..., 1] broadcasts over the spatial dimensions.
    Dims dims(value.rank() - 1, 1);
    dims[0] = bias.shape()[0];
    return add(value, reshape(bias, Shape(dims), where), where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor l2_normalize(const Tensor& x, const Axes& axis, double epsilon, CallSite where) {
  try {
    if (!is_floating(x.dtype()))
      fail("l2_normalize: argument 'x' must be float32 or float64, got ", x.dtype());
    // Checked here so that a bad axis is reported as l2_normalize's.
    if (!axis.all())
      normalize_axes(std::span<const int64_t>(axis.values().begin(), axis.values().size()), x.rank(), "l2_normalize",
                     false);
    // max with epsilon keeps an all-zero slice at zero instead of 0/0.
    Tensor square_sum = reduce_sum(square(x, where), axis, /*keepdims=*/true, where);
    return x * rsqrt(maximum(square_sum, epsilon, where), where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
