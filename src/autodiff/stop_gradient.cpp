// stop_gradient: an identity that tapes never record, so no gradient flows through it.
#include "eagerflow/autodiff/gradient_tape.h"
#include "ops/batch_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

void infer_stop_gradient(const OpCall& call, OutputMetas& out) {
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}

void stop_gradient_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  outputs[0] = detail::make_view(x, x.shape(), x.strides(), x.impl()->offset);
}

const OpDef& kStopGradient = define_op({
    .name = "stop_gradient",
    .infer = infer_stop_gradient,
    .kernels = {stop_gradient_cpu},
    .not_differentiable = "stop_gradient exists to block gradients",
    .batch = detail::batch_leading_dims,
    .traits = {.view = true},
});

}  // namespace

Tensor stop_gradient(const Tensor& x, CallSite where) { return run_op(kStopGradient, {x}, {}, where); }

}  // namespace ef
