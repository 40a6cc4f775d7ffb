// Batching rules of conv2d, conv2d_backprop_input and conv2d_backprop_filter (Note
// [convolution batching rules] in conv2d_batching.cpp). Internal to src/ops/nn.
#pragma once

#include <vector>

#include "eagerflow/runtime/op_def.h"

namespace ef::detail {

std::vector<Tensor> batch_conv2d(const BatchCall& call);
std::vector<Tensor> batch_conv2d_backprop_input(const BatchCall& call);
std::vector<Tensor> batch_conv2d_backprop_filter(const BatchCall& call);

}  // namespace ef::detail
