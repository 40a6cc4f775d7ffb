// Copies of CUDA tensors: what the core (Tensor::to) and the copying ops need of the
// CUDA backend, below the op machinery of kernels.h (the include-layering test holds
// this header, api.h and runtime.h to the core's layer).
#pragma once

#include <string_view>

#include "eagerflow/core/tensor.h"

namespace ef::cuda {

// Copies `src` into `dst` (same shape and device, any layouts: `dst` may be a view
// into a larger tensor).
void copy_strided(const Tensor& src, Tensor& dst);
// A copy of `src` on `device`; one of them is a CUDA device.
Tensor copy_to(const Tensor& src, Device device);
// A new contiguous tensor on `src`'s CUDA device holding `src`'s values converted to
// `to` by cast's rules; for the dispatcher's widening of float16/bfloat16 operands to
// float32 and rounding of results back (Note [half-precision dtypes]).
Tensor converted(const Tensor& src, DType to, std::string_view op);

}  // namespace ef::cuda
