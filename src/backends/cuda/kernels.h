// The CUDA kernels of the ops, for their definition files to name (one line per op:
// `.kernels = {reshape_cpu, ...}` or via the builders of src/ops/op_helpers.h). Each
// runs on the device of its inputs and queues its work on that device's stream.
#pragma once

#include <span>

#include "eagerflow/runtime/attrs.h"
#include "eagerflow/runtime/op_def.h"

namespace ef::cuda {

// Elementwise ops computed by a functor of device_code/functors.cuh named after the op.
void elementwise_kernel(const OpCall& call, std::span<Tensor> outputs);
// Whether elementwise_kernel computes the op called `op` (for the OpDef builders).
bool has_elementwise_kernel(std::string_view op);

void cast_kernel(const OpCall& call, std::span<Tensor> outputs);
// reduce_sum / prod / max / min / any / all over the `axis` attr (attr 0).
void reduce_kernel(const OpCall& call, std::span<Tensor> outputs);
// matmul(a, b) with the transpose_a / transpose_b attrs (0 and 1), through cuBLAS.
void matmul_kernel(const OpCall& call, std::span<Tensor> outputs);

// Building blocks for kernels and for Tensor::to.
void fill(Tensor& out, const AttrValue& value);
// Copies `src` (any layout, on a CUDA device) into the contiguous `dst` on the same device.
void copy_strided(const Tensor& src, Tensor& dst);
// A copy of `src` on `device`; one of them is a CUDA device.
Tensor copy_to(const Tensor& src, Device device);

}  // namespace ef::cuda
