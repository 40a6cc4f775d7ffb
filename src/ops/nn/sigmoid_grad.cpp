// sigmoid_grad(y, dy) = dy * y * (1 - y): sigmoid's gradient from its output y, in one
// pass over memory (TensorFlow's SigmoidGrad). sigmoid's own gradient calls it. Written
// as the composite dy * (y * (1 - y)) it made three passes and two full-size
// temporaries: on the sparse-autoencoder L-BFGS benchmark (bench/python/bench_lbfgs.py,
// 60000 x 784 activations of 188 MB) that was two extra allocations and passes per
// iteration. The functor computes the composite's expression, so results are unchanged.
#include "backends/cpu/elementwise_functors.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using cpu::functors::SigmoidGradFn;

// d/dy [dy y (1 - y)] = dy (1 - 2y), and d/d(dy) = y (1 - y): with upstream g,
// g dy (1 - 2y) and sigmoid_grad(y, g). (Broadcast inputs are reduced by the tape.)
std::vector<Tensor> sigmoid_grad_grad(const GradCall& call) {
  const Tensor &y = call.forward.inputs[0], &dy = call.forward.inputs[1], &g = call.output_grads[0];
  return {call.needs(0) ? g * dy * (1 - 2 * y) : Tensor(), call.needs(1) ? sigmoid_grad(y, g) : Tensor()};
}

const OpDef& kSigmoidGrad = define_op([] {
  OpDef def = detail::with_gradient(
      detail::binary_op<SigmoidGradFn, cpu::kFloatTypes>("sigmoid_grad"), sigmoid_grad_grad,
      kGradientReadsInputs);          // y and dy, never the output (Note [gradient uses])
  def.jvp = detail::jvp_elementwise;  // elementwise: the gradient gives the jvp
  return def;
}());

}  // namespace

Tensor sigmoid_grad(const Tensor& y, const Tensor& dy, CallSite where) {
  return run_op(kSigmoidGrad, {y, dy}, {}, where);
}

}  // namespace ef
