// conv1d and conv3d as composites of conv2d, as TensorFlow builds conv1d, so that their
// gradients of every order are conv2d's (and pad's, strided_slice's, reshape's).
//  - conv1d: a row of one pixel's height.
//  - conv3d: one conv2d per filter depth tap kd, over the input's depth slices that tap
//    reads (every stride-th slice from kd * dilation on, of the depth-padded input) folded
//    into the batch, the taps' outputs summed. Depth padding follows TensorFlow's SAME
//    rule (out = ceil(in / stride), the smaller half of the padding first), as conv2d's
//    does for height and width.
#include <string>
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/conv.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "ops/nn/window_geometry.h"

namespace ef {
namespace {

// The (depth, height, width) of a conv3d attribute given as 1 value, 3 values, or 5 in
// NDHWC order with batch and channel entries 1; every value positive.
std::vector<int64_t> spatial_triple(const std::vector<int64_t>& values, std::string_view arg) {
  std::vector<int64_t> out;
  if (values.size() == 1) out.assign(3, values[0]);
  if (values.size() == 3) out = values;
  if (values.size() == 5 && values[0] == 1 && values[4] == 1)
    out.assign(values.begin() + 1, values.end() - 1);
  if (out.empty() || out[0] <= 0 || out[1] <= 0 || out[2] <= 0)
    fail("conv3d: argument '", arg, "' must be 1 or 3 positive values, or 5 in NDHWC order with batch and ",
         "channel entries 1, got ", Shape(values));
  return out;
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& filters, int64_t stride, const std::string& padding,
              int64_t dilation, CallSite where) {
  constexpr std::string_view kOp = "conv1d";
  const Shape& x = input.shape();
  const Shape& f = filters.shape();
  if (x.rank() != 3) fail(kOp, ": argument 'input' must have rank 3 [batch, width, channels], got shape ", x);
  if (f.rank() != 3)
    fail(kOp, ": argument 'filters' must have rank 3 [width, in_channels, out_channels], got shape ", f);
  if (input.dtype() != filters.dtype())
    fail(kOp, ": argument 'filters' has dtype ", filters.dtype(), " but 'input' has dtype ", input.dtype());
  if (x[2] != f[1] && x[2] != kUnknownDim && f[1] != kUnknownDim)
    fail(kOp, ": 'input' of shape ", x, " has ", x[2], " channels but 'filters' of shape ", f, " expects ",
         f[1]);
  if (stride <= 0 || dilation <= 0)
    fail(kOp, ": arguments 'stride' and 'dilation' must be positive, got ", stride, " and ", dilation);
  const Tensor y = conv2d(expand_dims(input, 1, where), expand_dims(filters, 0, where), {1, stride}, padding,
                          {1, dilation}, where);
  return squeeze(y, {1}, where);
}

Tensor conv3d(const Tensor& input, const Tensor& filters, const std::vector<int64_t>& strides,
              const std::string& padding, const std::vector<int64_t>& dilations, CallSite where) {
  constexpr std::string_view kOp = "conv3d";
  const Shape& x = input.shape();
  const Shape& f = filters.shape();
  if (x.rank() != 5)
    fail(kOp, ": argument 'input' must have rank 5 [batch, depth, height, width, channels], got shape ", x);
  if (f.rank() != 5)
    fail(
        kOp,
        ": argument 'filters' must have rank 5 [depth, height, width, in_channels, out_channels], got shape ",
        f);
  if (input.dtype() != filters.dtype())
    fail(kOp, ": argument 'filters' has dtype ", filters.dtype(), " but 'input' has dtype ", input.dtype());
  if (x[4] != f[3] && x[4] != kUnknownDim && f[3] != kUnknownDim)
    fail(kOp, ": 'input' of shape ", x, " has ", x[4], " channels but 'filters' of shape ", f, " expects ",
         f[3]);
  detail::check_padding(padding, kOp);
  const std::vector<int64_t> stride = spatial_triple(strides, "strides");
  const std::vector<int64_t> dilation = spatial_triple(dilations, "dilations");
  if (x[1] == kUnknownDim || x[2] == kUnknownDim || x[3] == kUnknownDim || x[4] == kUnknownDim ||
      !f.is_fully_defined())
    fail(kOp,
         ": needs known depth, height, width and channels and a known filter shape, got 'input' of shape ", x,
         " and 'filters' of shape ", f);
  if (f[0] == 0 || f[1] == 0 || f[2] == 0)
    fail(kOp, ": argument 'filters' of shape ", f, " has an empty window");
  const int64_t depth = x[1], taps = f[0], reach = (taps - 1) * dilation[0] + 1;
  int64_t out_depth = 0, pad_front = 0, pad_back = 0;
  if (padding == "SAME") {
    out_depth = (depth + stride[0] - 1) / stride[0];
    const int64_t pad_total = std::max<int64_t>((out_depth - 1) * stride[0] + reach - depth, 0);
    pad_front = pad_total / 2;
    pad_back = pad_total - pad_front;
  } else {
    if (reach > depth)
      fail(kOp, ": with VALID padding the filter's dilated depth ", reach, " exceeds the input's depth ",
           depth, " (input of shape ", x, ", filters of shape ", f, ")");
    out_depth = (depth - reach) / stride[0] + 1;
  }
  if (out_depth == 0) {  // an input of depth 0: an empty output, of the size conv2d gives the rest
    if (x[0] == kUnknownDim) fail(kOp, ": an input of depth 0 needs a known batch size, got shape ", x);
    const Tensor tap =
        reshape(slice(filters, {0, 0, 0, 0, 0}, {1, -1, -1, -1, -1}, where), {f[1], f[2], f[3], f[4]}, where);
    const Shape y = conv2d(zeros({0, x[2], x[3], x[4]}, input.dtype(), where), tap, {stride[1], stride[2]},
                           padding, {dilation[1], dilation[2]}, where)
                        .shape();
    return zeros({x[0], 0, y[1], y[2], y[3]}, input.dtype(), where);
  }
  const Tensor padded =
      pad_front + pad_back > 0
          ? pad(input, {{0, 0}, {pad_front, pad_back}, {0, 0}, {0, 0}, {0, 0}}, "CONSTANT", 0, where)
          : input;
  // All of every axis but depth (begin and end masks), every stride-th depth slice.
  StridedSliceMasks all_but_depth;
  all_but_depth.begin_mask = all_but_depth.end_mask = 0b11101;
  Tensor sum;
  for (int64_t kd = 0; kd < taps; ++kd) {
    const int64_t first = kd * dilation[0];
    const Tensor slices =
        strided_slice(padded, {0, first, 0, 0, 0}, {0, first + (out_depth - 1) * stride[0] + 1, 0, 0, 0},
                      {1, stride[0], 1, 1, 1}, all_but_depth, where);
    // The batch and output depth fold into one axis (spelled out where known: a -1
    // cannot be inferred for a tensor with no elements).
    const Tensor folded =
        reshape(slices, {x[0] == kUnknownDim ? -1 : x[0] * out_depth, x[2], x[3], x[4]}, where);
    const Tensor tap = reshape(slice(filters, {kd, 0, 0, 0, 0}, {1, -1, -1, -1, -1}, where),
                               {f[1], f[2], f[3], f[4]}, where);
    const Tensor y = conv2d(folded, tap, {stride[1], stride[2]}, padding, {dilation[1], dilation[2]}, where);
    sum = kd == 0 ? y : add(sum, y, where);
  }
  const Shape& y = sum.shape();
  return reshape(sum, {x[0], out_depth, y[1], y[2], y[3]}, where);
}

}  // namespace ef
