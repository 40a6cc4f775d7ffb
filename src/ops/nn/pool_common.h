// Plumbing shared by the pooling ops (max_pool.cpp, avg_pool.cpp): their attributes in
// the order of WindowAttr, and a kernel entry that picks the float32 or float64 body.
// Internal to src/ops/nn.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ops/nn/window_geometry.h"
#include "ops/op_helpers.h"

namespace ef::detail {

// {strides, padding, ksize} and, for ops that produce the input's shape from a
// gradient alone, that shape (`sizes`).
inline Attrs pool_attrs(const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                        const std::string& padding) {
  return {Dims(strides.begin(), strides.end()), padding, Dims(ksize.begin(), ksize.end())};
}
inline Attrs pool_attrs(const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                        const std::string& padding, const Shape& sizes) {
  return {Dims(strides.begin(), strides.end()), padding, Dims(ksize.begin(), ksize.end()), sizes.dims()};
}

// A pooling op's attributes read back, to call the gradient ops with them.
struct PoolArgs {
  std::vector<int64_t> ksize, strides;
  std::string padding;
  explicit PoolArgs(const Attrs& a)
      : ksize(a.get_ints(kDilationsOrKsizeAttr).begin(), a.get_ints(kDilationsOrKsizeAttr).end()),
        strides(a.get_ints(kStridesAttr).begin(), a.get_ints(kStridesAttr).end()),
        padding(a.get<std::string>(kPaddingAttr)) {}
};

// A pool's window over a batch of n images with c channels. row_cost() estimates the
// nanoseconds of one output row for parallel_for, in double: a window may be declared
// far larger than the input (only the part inside it is visited), so the integer
// product could overflow.
struct PoolDims {
  Window2d g;
  int64_t n, c;
  int64_t image_size() const { return g.in_h * g.in_w * c; }
  int64_t pooled_image_size() const { return g.out_h * g.out_w * c; }
  double row_cost(double ns_per_element) const {
    const double visited_h = static_cast<double>(std::min(g.k_h, g.in_h));
    const double visited_w = static_cast<double>(std::min(g.k_w, g.in_w));
    return ns_per_element * static_cast<double>(g.out_w) * static_cast<double>(c) * visited_h * visited_w;
  }
};

// The window of a pool over `input` [N, H, W, C]; `arg` names the input in errors.
inline PoolDims pool_dims(const OpCall& call, const Shape& input, std::string_view arg = "input") {
  return {make_pool_window(input, call.attrs, call.op.name, arg), input[0], input[3]};
}

// The kernel of a float32/float64 op with one output whose bodies are F32 and F64.
template <void (*F32)(const OpCall&, Tensor&), void (*F64)(const OpCall&, Tensor&)>
void float_kernel(const OpCall& call, std::span<Tensor> outputs) {
  cpu::dispatch_in<cpu::kFloatTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    if constexpr (std::is_same_v<typename decltype(tag)::type, float>) F32(call, outputs[0]);
    else F64(call, outputs[0]);
  });
}

}  // namespace ef::detail
