#include "ops/jvp_helpers.h"

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/runtime/dispatch.h"

namespace ef::detail {
namespace {

bool in_mask(uint64_t mask, size_t i) { return (mask >> std::min<size_t>(i, 63)) & 1; }

Tensor sum_defined(const Tensor& a, const Tensor& b) {
  return !a.defined() ? b : !b.defined() ? a : add(a, b);
}

// GradCall::needs_grad asking for input i only (ops have at most a few dozen inputs).
struct OnlyInput {
  bool flags[64] = {};
  size_t size = 0;
  operator std::span<const bool>() const { return {flags, size}; }  // NOLINT
};
OnlyInput only(size_t i, const OpCall& f) {
  OnlyInput o;
  if (f.inputs.size() > 64) return o;  // an empty span: all inputs
  o.size = f.inputs.size();
  o.flags[i] = true;
  return o;
}

}  // namespace

Tensor tangent_or_zeros(const JvpCall& call, size_t input) {
  return call.has_tangent(input) ? call.input_tangents[input] : zeros_like(call.forward.inputs[input]);
}

Tensor broadcast_like(const Tensor& t, const Tensor& like) {
  if (t.shape() == like.shape() && t.shape().is_fully_defined()) return t;
  if (like.shape().is_fully_defined()) return broadcast_to(t, like.shape());
  return add(t, zeros_like(like));  // a partial shape: broadcast when the graph runs
}

std::vector<Tensor> jvp_linear(const JvpCall& call, uint64_t linear) {
  const OpCall& f = call.forward;
  bool any = false;
  for (size_t i = 0; i < f.inputs.size(); ++i) any = any || (in_mask(linear, i) && call.has_tangent(i));
  if (!any) return std::vector<Tensor>(call.outputs.size());
  std::vector<Tensor> inputs(f.inputs.begin(), f.inputs.end());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (in_mask(linear, i)) inputs[i] = tangent_or_zeros(call, i);
  return run_op_multi(f.op, inputs, f.attrs, CallSite::current());
}

std::vector<Tensor> jvp_multilinear(const JvpCall& call, uint64_t factors) {
  const OpCall& f = call.forward;
  std::vector<Tensor> total(call.outputs.size());
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    if (!in_mask(factors, i) || !call.has_tangent(i)) continue;
    std::vector<Tensor> inputs(f.inputs.begin(), f.inputs.end());
    inputs[i] = call.input_tangents[i];
    std::vector<Tensor> term = run_op_multi(f.op, inputs, f.attrs, CallSite::current());
    for (size_t k = 0; k < total.size(); ++k) total[k] = sum_defined(total[k], term[k]);
  }
  return total;
}

std::vector<Tensor> jvp_elementwise(const JvpCall& call) {
  const OpCall& f = call.forward;
  if (call.outputs.size() != 1)
    fail<InternalError>(f.op.name, ": jvp_elementwise serves ops with one output, this one has ",
                        call.outputs.size());
  Tensor total;
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    if (!call.has_tangent(i)) continue;
    const Tensor g = broadcast_like(call.input_tangents[i], call.outputs[0]);
    std::vector<Tensor> grads =
        f.op.gradient(GradCall{f, call.outputs, std::span<const Tensor>(&g, 1), only(i, f)});
    if (i < grads.size() && grads[i].defined())
      total = sum_defined(total, broadcast_like(grads[i], call.outputs[0]));
  }
  return {total};
}

std::vector<Tensor> jvp_grouped(const JvpCall& call,
                                Tensor (*sum)(const JvpCall& call, const Tensor& terms)) {
  const OpCall& f = call.forward;
  if (!call.has_tangent(0)) return std::vector<Tensor>(call.outputs.size());
  const Tensor ones = ones_like(call.outputs[0]);
  std::vector<Tensor> grads =
      f.op.gradient(GradCall{f, call.outputs, std::span<const Tensor>(&ones, 1), only(0, f)});
  std::vector<Tensor> out(call.outputs.size());
  if (!grads.empty() && grads[0].defined()) out[0] = sum(call, multiply(grads[0], call.input_tangents[0]));
  return out;
}

}  // namespace ef::detail
