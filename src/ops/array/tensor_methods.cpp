// Tensor::operator[] and Tensor::contiguous(): methods of the core handle implemented
// as op calls, so that graph mode and gradient tapes see them like any other op.
#include "backends/cuda/kernels.h"
#include "eagerflow/ops/array.h"
#include "ops/array/copy.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// ---- contiguous: a row-major copy of a strided tensor ----
void infer_contiguous(const OpCall& call, OutputMetas& out) {
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}

// Runs on any device: copy_elements copies on the tensors' device.
void copy_kernel(const OpCall& call, std::span<Tensor> outputs) {
  detail::copy_elements(*call.inputs[0].impl(), *outputs[0].impl());
}

// Gradient: passed through unchanged (a copy does not change values).
std::vector<Tensor> contiguous_grad(const GradCall& call) { return {call.output_grads[0]}; }

const OpDef& kContiguous = define_op({
    .name = "contiguous",
    .infer = infer_contiguous,
    .kernels = {copy_kernel, copy_kernel},
    .gradient = contiguous_grad,
    .jvp = detail::jvp_linear<>,
    .traits = {.elementwise = true, .complex = true},
});

}  // namespace

Tensor Tensor::contiguous() const {
  // A symbolic tensor's layout is only known when the graph runs: always add the copy.
  if (!is_symbolic() && is_contiguous()) return *this;
  return run_op(kContiguous, {*this}, {}, CallSite::current());
}

Tensor Tensor::operator[](int64_t index) const {
  if (rank() == 0)
    fail<InvalidArgumentError>("operator[]: cannot index a scalar (shape ", shape(), ", dtype ", dtype(), ")");
  // Checked here as well as in strided_slice so that the message speaks of indexing.
  int64_t size = shape()[0];
  if (size != kUnknownDim && (index < -size || index >= size))
    fail<OutOfRangeError>("operator[]: index ", index, " is out of range for axis 0 of size ", size,
                          " (shape ", shape(), ")");
  // A shrunk axis ignores `end`; passing `index` avoids computing index + 1.
  return strided_slice(*this, {index}, {index}, {1}, {.shrink_axis_mask = 1});
}

}  // namespace ef
