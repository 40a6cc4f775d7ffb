// Plumbing shared by the pooling ops (max_pool.cpp, avg_pool.cpp): their attributes in
// the order of WindowAttr, and a kernel entry that picks the float32 or float64 body.
// Internal to src/ops/nn.
#pragma once

#include <string>
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

// The kernel of a float32/float64 op with one output whose bodies are F32 and F64.
template <void (*F32)(const OpCall&, Tensor&), void (*F64)(const OpCall&, Tensor&)>
void float_kernel(const OpCall& call, std::span<Tensor> outputs) {
  cpu::dispatch_in<cpu::kFloatTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    if constexpr (std::is_same_v<typename decltype(tag)::type, float>) F32(call, outputs[0]);
    else F64(call, outputs[0]);
  });
}

}  // namespace ef::detail
