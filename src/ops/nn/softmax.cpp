// softmax and log_softmax along an axis.
//
// Why primitives and not composites (exp(x - max) / sum): the composite makes five
// passes over memory with four temporaries (max, subtract, exp, sum, divide); the
// fused kernel reads each row while it is in cache and writes the output once, with
// no temporaries, and it is the hottest op of every classifier. The composite remains
// the definition that the gradient will be written with.
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/reduction.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/nn/softmax_kernels.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum SoftmaxAttr { kAxis };

void infer_softmax(const OpCall& call, OutputMetas& out) {
  const Tensor& logits = call.inputs[0];
  detail::check_dtype(call, logits.dtype(), cpu::kFloatTypes, "logits");
  if (logits.rank() == 0)
    fail(call.op.name, ": argument 'logits' must have at least one dimension, got a scalar");
  normalize_axis(call.attrs.get_int(kAxis), logits.rank(), call.op.name);
  out.add(logits.dtype(), logits.shape());
}

// Rough cost per element (one exp plus a few flops).
constexpr double kSoftmaxElementNs = 3.0;

template <bool Log>
void softmax_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor x = call.inputs[0].contiguous();
  Tensor& out = outputs[0];
  const int axis = normalize_axis(call.attrs.get_int(kAxis), x.rank(), call.op.name);
  const detail::AxisGeometry g = detail::axis_geometry(x.shape(), axis);
  if (x.num_elements() == 0) return;
  cpu::dispatch_in<cpu::kFloatTypes>(x.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = cpu::typed_data<T>(x);
    T* dst = cpu::typed_output<T>(out);
    if (g.inner == 1) {
      // Rows in parallel; each row is one cache-friendly, vectorized pass.
      parallel_for(g.outer, kSoftmaxElementNs * static_cast<double>(g.n), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) detail::softmax_row<T, Log>(src + r * g.n, dst + r * g.n, g.n);
      });
      return;
    }
    // Axis not last: blocks of columns of each [n, inner] slab, in parallel.
    const int64_t blocks = (g.inner + detail::kColumnBlock - 1) / detail::kColumnBlock;
    parallel_for(g.outer * blocks, kSoftmaxElementNs * static_cast<double>(g.n * detail::kColumnBlock),
                 [&](int64_t b, int64_t e) {
                   for (int64_t t = b; t < e; ++t) {
                     const int64_t o = t / blocks, c0 = (t % blocks) * detail::kColumnBlock;
                     const int64_t cols = std::min(detail::kColumnBlock, g.inner - c0);
                     const int64_t base = o * g.n * g.inner + c0;
                     detail::softmax_columns<T, Log>(src + base, dst + base, g.n, g.inner, cols);
                   }
                 });
  });
}

// With y = softmax(x): dx = y * (g - sum(g * y)) along the axis.
std::vector<Tensor> softmax_grad(const GradCall& call) {
  const Tensor &y = call.outputs[0], &g = call.output_grads[0];
  const int64_t axis = call.forward.attrs.get_int(kAxis);
  return {multiply(y, subtract(g, reduce_sum(multiply(g, y), axis, true)))};
}

// With y = log_softmax(x): dx = g - exp(y) * sum(g) along the axis (exp(y) = softmax).
std::vector<Tensor> log_softmax_grad(const GradCall& call) {
  const Tensor &y = call.outputs[0], &g = call.output_grads[0];
  const int64_t axis = call.forward.attrs.get_int(kAxis);
  return {subtract(g, multiply(exp(y), reduce_sum(g, axis, true)))};
}

// On CUDA devices: composed of the device's reduction and elementwise kernels, the
// maximum subtracted first as on the CPU.
template <bool Log>
void softmax_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  if (x.num_elements() == 0) return;
  const int64_t axis = normalize_axis(call.attrs.get_int(kAxis), x.rank(), call.op.name);
  Tensor shifted = subtract(x, reduce_max(x, axis, true));
  Tensor e = exp(shifted);
  Tensor sum = reduce_sum(e, axis, true);
  outputs[0] = Log ? subtract(shifted, log(sum)) : divide(e, sum);
}

// dy = y * (t - sum(t * y)): softmax's Jacobian is symmetric, so this is its gradient's form.
std::vector<Tensor> softmax_jvp(const JvpCall& call) {
  const Tensor &y = call.outputs[0], &t = call.input_tangents[0];
  const int64_t axis = call.forward.attrs.get_int(kAxis);
  return {multiply(y, subtract(t, reduce_sum(multiply(t, y), axis, true)))};
}

const OpDef& kSoftmax = define_op({
    .name = "softmax",
    .attr_names = {"axis"},
    .infer = infer_softmax,
    .kernels = {softmax_cpu<false>, softmax_cuda<false>},
    .gradient = softmax_grad,
    .gradient_uses = kGradientReadsOutputs,  // y only (Note [gradient uses])
    .jvp = softmax_jvp,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, 0); },
});

// dy = t - sum(softmax * t) (the transpose of the gradient's g - softmax * sum(g)).
std::vector<Tensor> log_softmax_jvp(const JvpCall& call) {
  const Tensor &y = call.outputs[0], &t = call.input_tangents[0];
  const int64_t axis = call.forward.attrs.get_int(kAxis);
  return {subtract(t, reduce_sum(multiply(exp(y), t), axis, true))};
}

const OpDef& kLogSoftmax = define_op({
    .name = "log_softmax",
    .attr_names = {"axis"},
    .infer = infer_softmax,
    .kernels = {softmax_cpu<true>, softmax_cuda<true>},
    .gradient = log_softmax_grad,
    .gradient_uses = kGradientReadsOutputs,  // y only (Note [gradient uses])
    .jvp = log_softmax_jvp,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, 0); },
});

}  // namespace

Tensor softmax(const Tensor& logits, int64_t axis, CallSite where) {
  return run_op(kSoftmax, {logits}, {axis}, where);
}

Tensor log_softmax(const Tensor& logits, int64_t axis, CallSite where) {
  return run_op(kLogSoftmax, {logits}, {axis}, where);
}

}  // namespace ef
