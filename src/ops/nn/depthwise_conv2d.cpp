// depthwise_conv2d: a composite over public ops, so its gradients of every order are
// those of the ops. With stride 1, each of the KH * KW window taps is a view of the
// (padded) input scaled per channel by its filter tap: a few elementwise passes per tap,
// not a GEMM per channel. With larger strides those views are strided, and each one's
// gradient scatters into a zero tensor of the input's size, so instead one gather
// collects every tap's pixels ([N, OH * OW * taps, C]) and its gradient is a single
// scatter-add. A fused primitive would save the intermediate passes; none has been
// benchmarked as needed.
#include <algorithm>
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/conv.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
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
      return zeros(out_shape, input.dtype()).to(input.device());
    // The padded extent the taps read: (out - 1) * stride + dilated window, from pad_top.
    const int64_t extent_h = (g.out_h - 1) * g.stride_h + (f[0] - 1) * g.dilation_h + 1;
    const int64_t extent_w = (g.out_w - 1) * g.stride_w + (f[1] - 1) * g.dilation_w + 1;
    Tensor padded = input;
    const int64_t pad_bottom = std::max<int64_t>(extent_h - x[1] - g.pad_top, 0);
    const int64_t pad_right = std::max<int64_t>(extent_w - x[2] - g.pad_left, 0);
    if (g.pad_top || g.pad_left || pad_bottom || pad_right)
      padded = pad(input, {{0, 0}, {g.pad_top, pad_bottom}, {g.pad_left, pad_right}, {0, 0}});
    const int64_t taps = f[0] * f[1];
    if (g.stride_h > 1 || g.stride_w > 1) {
      const int64_t width = padded.shape()[2], pixels = padded.shape()[1] * width;
      std::vector<int64_t> positions;
      positions.reserve(static_cast<size_t>(g.out_h * g.out_w * taps));
      for (int64_t oh = 0; oh < g.out_h; ++oh)
        for (int64_t ow = 0; ow < g.out_w; ++ow)
          for (int64_t i = 0; i < f[0]; ++i)
            for (int64_t j = 0; j < f[1]; ++j)
              positions.push_back((oh * g.stride_h + i * g.dilation_h) * width + ow * g.stride_w +
                                  j * g.dilation_w);
      const int64_t count = static_cast<int64_t>(positions.size());
      Tensor patches =
          gather(reshape(padded, {-1, pixels, channels}), constant(positions, {count}).to(input.device()), 1);
      patches = reshape(patches, {-1, g.out_h, g.out_w, taps, channels});
      if (multiplier == 1) return reduce_sum(patches * reshape(filter, {taps, channels}), 3);
      const Tensor sum =
          reduce_sum(expand_dims(patches, 5) * reshape(filter, {taps, channels, multiplier}), 3);
      return reshape(sum, {-1, g.out_h, g.out_w, channels * multiplier});
    }
    // Batch and channel axes are taken whole (masks), so an unknown batch size works.
    StridedSliceMasks whole_batch_and_channels;
    whole_batch_and_channels.begin_mask = whole_batch_and_channels.end_mask = 0b1001;
    const Tensor filter_taps = reshape(filter, {taps, channels, multiplier});
    Tensor sum;
    for (int64_t i = 0; i < f[0]; ++i) {
      for (int64_t j = 0; j < f[1]; ++j) {
        const int64_t top = i * g.dilation_h, left = j * g.dilation_w;
        Tensor view = strided_slice(padded, {0, top, left, 0}, {0, top + g.out_h, left + g.out_w, 0}, {},
                                    whole_batch_and_channels);
        Tensor tap = slice(filter_taps, {i * f[1] + j, 0, 0}, {1, -1, -1});
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
