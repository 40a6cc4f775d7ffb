// Converting whole tensors between the half-precision dtypes and float32, for the
// dispatcher's widening of half inputs and outputs (Note [half-precision dtypes] in
// eagerflow/core/half.h).
#pragma once

#include "eagerflow/core/tensor.h"

namespace ef::cpu {

// A new contiguous float32 tensor holding the values of `half` (Float16 or BFloat16,
// any strides). Exact.
Tensor widen_to_float32(const Tensor& half, std::string_view op);

// A new contiguous tensor of dtype `half` (Float16 or BFloat16) holding `wide`
// (float32, any strides) rounded to nearest even.
Tensor narrow_from_float32(const Tensor& wide, DType half, std::string_view op);

}  // namespace ef::cpu
