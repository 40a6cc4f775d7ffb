// Sliding-window geometry shared by conv2d and the 2-D pools (NHWC): how the
// TensorFlow-style attributes (strides, ksize, dilations as 1, 2 or 4 integers;
// padding "SAME" or "VALID") map to output sizes and padding, with their validation.
//
// TensorFlow's rules: VALID gives out = ceil((in - k_eff + 1) / stride); SAME gives
// out = ceil(in / stride) with pad_total = max((out - 1) * stride + k_eff - in, 0), of
// which the smaller half goes before (top/left). k_eff = (k - 1) * dilation + 1.
// Internal to src/ops/nn.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "backends/cuda/kernels.h"
#include "eagerflow/core/shape.h"
#include "eagerflow/runtime/attrs.h"

namespace ef::detail {

// One spatial window over an [N, H, W, C] tensor: sizes, steps, dilations and padding
// of the two spatial dimensions, and the output's spatial size.
struct Window2d {
  int64_t in_h = 0, in_w = 0;
  int64_t k_h = 1, k_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t out_h = 0, out_w = 0;

  // The window is one pixel that visits every input pixel: the input itself is the
  // im2col matrix.
  bool pointwise() const {
    return k_h == 1 && k_w == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 && pad_left == 0;
  }
};

// The (height, width) pair of an attribute given as 1 value (both), 2 values (h, w) or
// 4 values in NHWC order (the N and C entries must be 1, as TensorFlow requires). Every
// value must be positive. Throws InvalidArgumentError naming `op` and `arg`.
std::pair<int64_t, int64_t> spatial_pair(const Dims& values, std::string_view op, std::string_view arg);

// Throws InvalidArgumentError naming `op` unless padding is "SAME" or "VALID".
void check_padding(const std::string& padding, std::string_view op);

// The window of a kernel of spatial size (k_h, k_w) over an input of spatial size
// (in_h, in_w); unknown input sizes give unknown output sizes. Throws when VALID
// padding leaves no output position (the dilated kernel is larger than the input).
Window2d make_window(int64_t in_h, int64_t in_w, int64_t k_h, int64_t k_w, const Dims& strides,
                     const std::string& padding, const Dims& dilations, std::string_view op);

// Throws InvalidArgumentError naming `op` and `arg` unless `t` has rank 4 (NHWC).
void check_rank4(const Shape& shape, std::string_view op, std::string_view arg);

// The attributes as the ops store them, in this order: conv ops hold dilations and
// pools ksize in the third place; ops that produce a shape hold it in the fourth.
enum WindowAttr { kStridesAttr, kPaddingAttr, kDilationsOrKsizeAttr, kSizesAttr };

// The window of a pool (attributes strides, padding, ksize) over `input` [N, H, W, C],
// validated (rank, attributes; `arg` names the input in errors).
Window2d make_pool_window(const Shape& input, const Attrs& attrs, std::string_view op, std::string_view arg);

// The input rows [begin, end) under output row `oh` of an undilated window (a pool):
// the window clipped to the input, never empty for SAME or VALID padding.
struct Span {
  int64_t begin, end;
};
// A window may be declared far larger than the input, so its end is clipped without
// forming start + k where that could overflow.
inline Span clipped_span(int64_t start, int64_t k, int64_t in) {
  const int64_t end = start >= 0 && k >= in - start ? in : std::min(start + k, in);
  return {std::max<int64_t>(start, 0), end};
}
// The window with the tensor sizes, as the CUDA window kernels take it.
inline cuda::WindowGeometry cuda_window(const Window2d& g, int64_t n, int64_t c, int64_t o) {
  return {g.in_h,     g.in_w,  g.k_h,   g.k_w, g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, g.pad_top,
          g.pad_left, g.out_h, g.out_w, n,     c,          o};
}

inline Span window_rows(const Window2d& g, int64_t oh) {
  return clipped_span(oh * g.stride_h - g.pad_top, g.k_h, g.in_h);
}
inline Span window_cols(const Window2d& g, int64_t ow) {
  return clipped_span(ow * g.stride_w - g.pad_left, g.k_w, g.in_w);
}

}  // namespace ef::detail
