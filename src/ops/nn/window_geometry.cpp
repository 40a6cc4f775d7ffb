// Window geometry of conv2d and the pools (see window_geometry.h).
#include "ops/nn/window_geometry.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "eagerflow/core/error.h"

namespace ef::detail {
namespace {

std::string dims_string(const Dims& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Output size and padding before of one spatial dimension.
void one_dim(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool same, int64_t& out, int64_t& pad_before) {
  pad_before = 0;
  if (in == kUnknownDim) {
    out = kUnknownDim;
    return;
  }
  const int64_t k_eff = (k - 1) * dilation + 1;  // no overflow: checked by the caller
  if (same) {
    out = in / stride + (in % stride != 0);
    // (out - 1) * stride + k_eff - in, arranged so that nothing overflows.
    const int64_t reach = in - (out - 1) * stride;
    const int64_t pad_total = in == 0 ? 0 : std::max<int64_t>(k_eff - reach, 0);
    pad_before = pad_total / 2;
  } else {
    out = in >= k_eff ? (in - k_eff) / stride + 1 : 0;
  }
}

}  // namespace

std::pair<int64_t, int64_t> spatial_pair(const Dims& values, std::string_view op, std::string_view arg) {
  std::pair<int64_t, int64_t> hw;
  if (values.size() == 1) hw = {values[0], values[0]};
  else if (values.size() == 2) hw = {values[0], values[1]};
  else if (values.size() == 4) {
    if (values[0] != 1 || values[3] != 1)
      fail(op, ": argument '", arg, "' given as 4 values (NHWC) must be 1 in the batch and channel entries, got ",
           dims_string(values));
    hw = {values[1], values[2]};
  } else {
    fail(op, ": argument '", arg, "' must have 1, 2 or 4 values, got ", dims_string(values));
  }
  if (hw.first < 1 || hw.second < 1)
    fail(op, ": argument '", arg, "' must be positive, got ", dims_string(values));
  return hw;
}

void check_padding(const std::string& padding, std::string_view op) {
  if (padding != "SAME" && padding != "VALID")
    fail(op, ": argument 'padding' must be \"SAME\" or \"VALID\", got \"", padding, "\"");
}

Window2d make_window(int64_t in_h, int64_t in_w, int64_t k_h, int64_t k_w, const Dims& strides,
                     const std::string& padding, const Dims& dilations, std::string_view op) {
  check_padding(padding, op);
  Window2d w;
  w.in_h = in_h;
  w.in_w = in_w;
  w.k_h = k_h;
  w.k_w = k_w;
  std::tie(w.stride_h, w.stride_w) = spatial_pair(strides, op, "strides");
  std::tie(w.dilation_h, w.dilation_w) = spatial_pair(dilations, op, "dilations");
  if ((k_h > 1 && w.dilation_h > (INT64_MAX - 1) / (k_h - 1)) || (k_w > 1 && w.dilation_w > (INT64_MAX - 1) / (k_w - 1)))
    fail(op, ": the dilated window (", k_h, "x", k_w, ", dilations ", w.dilation_h, "x", w.dilation_w,
         ") is too large");
  const bool same = padding == "SAME";
  one_dim(in_h, k_h, w.stride_h, w.dilation_h, same, w.out_h, w.pad_top);
  one_dim(in_w, k_w, w.stride_w, w.dilation_w, same, w.out_w, w.pad_left);
  // An empty input stays empty; a non-empty one must leave at least one position.
  if (!same && ((in_h > 0 && w.out_h == 0) || (in_w > 0 && w.out_w == 0)))
    fail(op, ": with padding \"VALID\" the window (", k_h, "x", k_w, ", dilations ", w.dilation_h, "x", w.dilation_w,
         ", dilated size ", (k_h - 1) * w.dilation_h + 1, "x", (k_w - 1) * w.dilation_w + 1,
         ") does not fit in the input's spatial size ", in_h, "x", in_w, ": the output would be empty");
  return w;
}

void check_rank4(const Shape& shape, std::string_view op, std::string_view arg) {
  if (shape.rank() != 4)
    fail(op, ": argument '", arg, "' must have rank 4 (", arg == "filters" ? "HWIO" : "NHWC", "), got shape ", shape);
}

Window2d make_pool_window(const Shape& input, const Attrs& attrs, std::string_view op, std::string_view arg) {
  check_rank4(input, op, arg);
  const auto [k_h, k_w] = spatial_pair(attrs.get_ints(kDilationsOrKsizeAttr), op, "ksize");
  return make_window(input[1], input[2], k_h, k_w, attrs.get_ints(kStridesAttr), attrs.get<std::string>(kPaddingAttr),
                     Dims{1}, op);
}

}  // namespace ef::detail
