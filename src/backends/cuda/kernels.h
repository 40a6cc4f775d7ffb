// The CUDA kernels of the ops, for their definition files to name (one line per op:
// `.kernels = {reshape_cpu, ...}` or via the builders of src/ops/op_helpers.h). Each
// runs on the device of its inputs and queues its work on that device's stream.
#pragma once

#include <span>

#include "backends/cuda/codegen.h"
#include "backends/cuda/copy.h"
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

// argmax / argmin over the `axis` attr (attr 0) into the output's index dtype.
void arg_reduce_kernel(const OpCall& call, std::span<Tensor> outputs);
// cumsum / cumprod with the axis, exclusive and reverse attrs (0, 1, 2).
void scan_kernel(const OpCall& call, std::span<Tensor> outputs);

// A sliding window over NHWC images (the ops' Window2d plus the tensor sizes: n
// images, c input channels, o output channels).
struct WindowGeometry {
  int64_t in_h, in_w, k_h, k_w, stride_h, stride_w, dilation_h, dilation_w;
  int64_t pad_top, pad_left, out_h, out_w, n, c, o;
};
// out[i] = x[offsets[i / row] + i % row] (x seen contiguous; offsets an int64 tensor on
// the device, already checked against x's size).
void gather_rows(const Tensor& x, const Tensor& offsets, int64_t row, Tensor& out, std::string_view op);
// out[offsets[t] + s] += updates[t * row + s], with atomic adds (or for bool).
void scatter_add_rows(const Tensor& updates, const Tensor& offsets, int64_t row, Tensor& out,
                      std::string_view op);

// Sorts every line of `x` along `axis` (ascending or descending, NaN largest, stable)
// and writes the first `k` of each into `values` and/or `indices` (int32 positions),
// either may be null. O(n^2) per line: fine for the lines models sort, slow for huge ones.
void sort_lines(const Tensor& x, int axis, bool descending, int64_t k, Tensor* values, Tensor* indices,
                std::string_view op);

// Runs the window kernel `kind` on `inputs` into `out`.
void run_window(WindowKernel kind, const WindowGeometry& g, std::span<const Tensor> inputs, Tensor& out,
                std::string_view op);

// Building blocks the ops' files compose CUDA kernels from (with copy.h's and public
// ops).
// Every element of `out` set to `value` (an int64, double or bool attr value).
void fill(Tensor& out, const AttrValue& value);

}  // namespace ef::cuda
