// depthwise_conv2d: a composite over pad, strided_slice, multiply and add. Each of the
// KH * KW window taps is a strided view of the (padded) input scaled per channel by its
// filter tap, so the cost is a few elementwise passes per tap, not a GEMM per channel,
// and the gradients of every order are those of the ops.
// A fused primitive would save the per-tap passes; none has been benchmarked as needed.
#include <algorithm>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/conv.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/operators.h"
#include "ops/nn/window_geometry.h"

namespace ef {

Tensor depthwise_conv2d(const Tensor& input, const Tensor& filter, const std::vector<int64_t>& strides,
                        const std::string& padding, const std::vector<int64_t>& dilations, CallSite where) {
  constexpr const char* kOp = "depthwise_conv2d";
  try {
    if (!input.defined() || !filter.defined()) fail(kOp, ": 'input' and 'filter' must be defined tensors");
    if (!is_floating(input.dtype()))
      fail(kOp, ": argument 'input' must be float32 or float64, got ", input.dtype());
    if (filter.dtype() != input.dtype())
      fail(kOp, ": argument 'filter' has dtype ", filter.dtype(), " but 'input' has dtype ", input.dtype());
    const Shape& x = input.shape();
    const Shape& f = filter.shape();
    detail::check_rank4(x, kOp, "input");
    if (f.rank() != 4)
      fail(kOp, ": argument 'filter' must have rank 4 [KH, KW, C, multiplier], got shape ", f);
    if (x[3] != f[2])
      fail(kOp, ": 'input' of shape ", x, " has ", x[3], " channels but 'filter' of shape ", f, " expects ",
           f[2]);
    if (x[1] == kUnknownDim || x[2] == kUnknownDim || x[3] == kUnknownDim || !f.is_fully_defined())
      fail(kOp, ": needs known height, width and channels, got 'input' of shape ", x,
           " and 'filter' of shape ", f);
    const detail::Window2d g =
        detail::make_window(x[1], x[2], f[0], f[1], Dims(strides.begin(), strides.end()), padding,
                            Dims(dilations.begin(), dilations.end()), kOp);
    const int64_t channels = x[3], multiplier = f[3];
    const Shape out_shape{x[0], g.out_h, g.out_w, channels * multiplier};
    if (g.out_h == 0 || g.out_w == 0 || x[0] == 0 || channels * multiplier == 0)
      return zeros(out_shape, input.dtype());
    // The padded extent the taps read: (out - 1) * stride + dilated window, from pad_top.
    const int64_t extent_h = (g.out_h - 1) * g.stride_h + (f[0] - 1) * g.dilation_h + 1;
    const int64_t extent_w = (g.out_w - 1) * g.stride_w + (f[1] - 1) * g.dilation_w + 1;
    Tensor padded = input;
    const int64_t pad_bottom = std::max<int64_t>(extent_h - x[1] - g.pad_top, 0);
    const int64_t pad_right = std::max<int64_t>(extent_w - x[2] - g.pad_left, 0);
    if (g.pad_top || g.pad_left || pad_bottom || pad_right)
      padded = pad(input, {{0, 0}, {g.pad_top, pad_bottom}, {g.pad_left, pad_right}, {0, 0}});
    // Batch and channel axes are taken whole (masks), so an unknown batch size works.
    StridedSliceMasks whole_batch_and_channels;
    whole_batch_and_channels.begin_mask = whole_batch_and_channels.end_mask = 0b1001;
    const Tensor taps = reshape(filter, {f[0] * f[1], channels, multiplier});
    Tensor sum;
    for (int64_t i = 0; i < f[0]; ++i) {
      for (int64_t j = 0; j < f[1]; ++j) {
        const int64_t top = i * g.dilation_h, left = j * g.dilation_w;
        Tensor view =
            strided_slice(padded, {0, top, left, 0},
                          {0, top + (g.out_h - 1) * g.stride_h + 1, left + (g.out_w - 1) * g.stride_w + 1, 0},
                          {1, g.stride_h, g.stride_w, 1}, whole_batch_and_channels);
        Tensor tap = slice(taps, {i * f[1] + j, 0, 0}, {1, -1, -1});
        // [N, OH, OW, C] * [C] or [N, OH, OW, C, 1] * [C, M].
        Tensor term = multiplier == 1 ? view * reshape(tap, {channels})
                                      : expand_dims(view, 4) * reshape(tap, {channels, multiplier});
        sum = sum.defined() ? sum + term : term;
      }
    }
    // Output channel c * multiplier + m, as TensorFlow orders them.
    return multiplier == 1 ? sum : reshape(sum, {-1, g.out_h, g.out_w, channels * multiplier});
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
