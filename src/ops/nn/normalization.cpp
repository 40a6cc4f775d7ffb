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

Tensor local_response_normalization(const Tensor& x, int64_t depth_radius, double bias, double alpha,
                                    double beta, CallSite where) {
  try {
    constexpr std::string_view op = "local_response_normalization";
    if (!x.defined()) fail(op, ": argument 'input' is an undefined tensor");
    if (!is_floating(x.dtype())) fail(op, ": argument 'input' must be a float tensor, got ", x.dtype());
    if (x.rank() != 4)
      fail(op, ": argument 'input' must be 4-D [batch, height, width, channels], got shape ", x.shape());
    if (depth_radius < 0) fail(op, ": argument 'depth_radius' must be >= 0, got ", depth_radius);
    const int64_t channels = x.shape()[3];
    if (channels == kUnknownDim) fail<UnimplementedError>(op, ": the channel count must be known");
    // The window sum as a sum of shifted copies: exact as TensorFlow's loop (a running
    // cumulative sum would cancel), and a window wider than the channels adds nothing.
    const int64_t r = std::min(depth_radius, std::max<int64_t>(channels - 1, 0));
    const Tensor squares = pad(square(x, where), {{0, 0}, {0, 0}, {0, 0}, {r, r}}, "CONSTANT", 0, where);
    Tensor window = slice(squares, {0, 0, 0, 0}, {-1, -1, -1, channels}, where);
    for (int64_t k = 1; k <= 2 * r; ++k)
      window = add(window, slice(squares, {0, 0, 0, k}, {-1, -1, -1, channels}, where), where);
    return divide(x, pow(add(multiply(window, alpha, where), bias, where), beta, where), where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
