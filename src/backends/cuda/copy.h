// Copies and fills of CUDA tensors: what the core (Tensor::to) and the copying ops
// need of the CUDA backend, without the op machinery of kernels.h.
#pragma once

#include <string_view>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/attrs.h"

namespace ef::cuda {

// Every element of `out` set to `value` (an int64, double or bool attr value).
void fill(Tensor& out, const AttrValue& value);
// Copies `src` into `dst` (same shape and device, any layouts: `dst` may be a view
// into a larger tensor).
void copy_strided(const Tensor& src, Tensor& dst);
// A copy of `src` on `device`; one of them is a CUDA device.
Tensor copy_to(const Tensor& src, Device device);

}  // namespace ef::cuda
