// Converting whole tensors between the storage-only dtypes and the dtypes kernels
// compute them in, for the dispatcher's widening of inputs and narrowing of outputs
// (Notes [half-precision dtypes] in eagerflow/core/half.h and [small integer dtypes]
// in eagerflow/core/dtype.h).
#pragma once

#include "eagerflow/core/tensor.h"

namespace ef::cpu {

// A new contiguous tensor of dtype `to` holding the values of `src` (any strides), where
// one of the two dtypes is storage-only and the other its compute dtype. Widening is
// exact; narrowing rounds float32 to nearest even for the half dtypes and keeps the low
// bits of an integer (wraps) for the small integer dtypes.
Tensor storage_converted(const Tensor& src, DType to, std::string_view op);

}  // namespace ef::cpu
