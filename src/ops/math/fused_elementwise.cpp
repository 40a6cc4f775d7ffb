// fused_elementwise: a chain of elementwise ops (a FusedProgram, see fused_program.cpp
// for its encoding) run as one pass over memory: inputs are read once, outputs written
// once, and intermediates never reach main memory. The thread pool takes blocks, each
// run by run_fused_block (fused_run.h), so values are bit for bit those of the ops run
// one by one.
#include <algorithm>
#include <cstring>

#include "backends/cpu/elementwise.h"
#include "backends/cpu/stream_copy.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/fused_elementwise.h"
#include "eagerflow/ops/math.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/math/fused_eval.h"
#include "ops/math/fused_run.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using detail::FusedPlan;
using detail::FusedStep;

void infer_fused(const OpCall& call, OutputMetas& out) {
  const auto plan = detail::fused_plan(call.attrs);
  const Shape shape = detail::fused_output_shape(call, *plan);
  for (size_t j = 0; j < plan->outputs.size(); ++j) out.add(call.inputs[0].dtype(), shape);
}

void fused_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const auto plan_ptr = detail::fused_plan(call.attrs);
  const FusedPlan& plan = *plan_ptr;
  const int64_t n = outputs[0].num_elements();
  if (n == 0) return;
  const detail::FusedValues values = detail::prepare_fused_values(plan, call.inputs);
  const int64_t item = values.item;
  std::vector<std::byte*> out_data(outputs.size());
  for (size_t j = 0; j < outputs.size(); ++j)
    out_data[j] = static_cast<std::byte*>(outputs[j].impl()->storage->data()) + outputs[j].impl()->offset * item;

  // Outputs too large for the cache are computed into scratch buffers (one per output,
  // after the intermediates') and streamed out (backends/cpu/stream_copy.h).
  const bool stream = checked_mul(n * item, static_cast<int64_t>(outputs.size()), call.op.name) >=
                      cpu::kStreamingStoreBytes;
  // An output written into an input's buffer (OpTraits::in_place) whose step comes
  // before a later step's read of that input is staged in scratch too, and copied out
  // once the block is done.
  const std::vector<char> staged =
      stream ? std::vector<char>(outputs.size(), 1) : detail::staged_outputs(plan, values, out_data);
  const bool any_staged = std::find(staged.begin(), staged.end(), 1) != staged.end();
  const int64_t num_slots = plan.num_slots + (any_staged ? static_cast<int64_t>(outputs.size()) : 0);
  const int64_t block = detail::kFusedBlockBytes / item;
  const int64_t blocks = (n + block - 1) / block;
  parallel_for(blocks, plan.cost_ns * static_cast<double>(block), [&](int64_t first, int64_t last) {
    std::byte* slots = detail::fused_scratch(static_cast<size_t>(num_slots * detail::kFusedBlockBytes));
    auto out_at = [&](int output, int64_t start) {
      return staged[output] ? slots + (plan.num_slots + output) * detail::kFusedBlockBytes
                            : out_data[output] + start * item;
    };
    std::vector<const std::byte*> at;
    std::vector<std::byte*> out(outputs.size());
    for (int64_t b = first; b < last; ++b) {
      const int64_t start = b * block, len = std::min(block, n - start);
      for (size_t j = 0; j < out.size(); ++j) out[j] = out_at(static_cast<int>(j), start);
      detail::run_fused_block(plan, values, slots, start, len, out, at);
      for (auto [to, from] : plan.copies)
        std::memcpy(out_at(to, start), out_at(from, start), len * item);
      if (stream)
        for (size_t j = 0; j < outputs.size(); ++j)
          cpu::stream_copy(out_data[j] + start * item, out_at(static_cast<int>(j), start), len * item);
      else if (any_staged)
        for (size_t j = 0; j < outputs.size(); ++j)
          if (staged[j]) std::memcpy(out_data[j] + start * item, out_at(static_cast<int>(j), start), len * item);
    }
    if (stream) cpu::stream_fence();
  });
}

// Every value of `program` computed op by op through public dispatch (so it runs in
// graphs and under tapes): the inputs, then each instruction's result.
std::vector<Tensor> run_one_by_one(const FusedProgram& program, std::span<const Tensor> inputs) {
  std::vector<Tensor> values(inputs.begin(), inputs.end());
  const CallSite here = CallSite::current();
  for (const FusedInstruction& ins : program.instructions) {
    Tensor operands[2];
    for (size_t j = 0; j < ins.operands.size(); ++j) operands[j] = values[static_cast<size_t>(ins.operands[j])];
    values.push_back(run_op(*ins.op, std::span<const Tensor>(operands, ins.operands.size()), {}, here));
  }
  return values;
}

// The gradient replays the program with the ops themselves (public dispatch, so it
// runs in graphs and under outer tapes: higher orders work) and then runs each
// instruction's own gradient function in reverse, as a tape would over the unfused
// chain. Gradients stop at instructions without one (sign, floor, ...), as on tapes.
std::vector<Tensor> fused_grad(const GradCall& c) {
  const auto plan = detail::fused_plan(c.forward.attrs);
  const int64_t num_inputs = plan->num_inputs;
  std::vector<Tensor> values = run_one_by_one(plan->program, c.forward.inputs);
  std::vector<char> needs(static_cast<size_t>(num_inputs));
  for (int64_t i = 0; i < num_inputs; ++i) needs[i] = c.needs(i);
  for (const FusedStep& step : plan->steps)
    needs.push_back(needs[step.operands[0]] || (step.arity == 2 && needs[step.operands[1]]));
  const CallSite here = CallSite::current();
  std::vector<Tensor> grads(values.size());
  auto accumulate = [&](int64_t v, const Tensor& g) {
    if (g.defined()) grads[v] = grads[v].defined() ? add(grads[v], g, here) : g;
  };
  for (size_t j = 0; j < plan->outputs.size(); ++j) accumulate(plan->outputs[j], c.output_grads[j]);
  static const Attrs kNoAttrs;
  for (size_t k = plan->steps.size(); k-- > 0;) {
    const FusedStep& step = plan->steps[k];
    const int64_t v = num_inputs + static_cast<int64_t>(k);
    if (!grads[v].defined() || !needs[v] || !step.op->gradient) continue;
    Tensor operands[2] = {values[step.operands[0]], values[step.operands[1]]};
    const bool operand_needs[2] = {needs[step.operands[0]] != 0, needs[step.operands[1]] != 0};
    OpCall forward{*step.op, std::span<const Tensor>(operands, step.arity), kNoAttrs};
    std::vector<Tensor> operand_grads = step.op->gradient(
        GradCall{forward, {&values[v], 1}, {&grads[v], 1}, {operand_needs, static_cast<size_t>(step.arity)}});
    for (int j = 0; j < step.arity; ++j)
      if (operand_needs[j]) accumulate(step.operands[j], operand_grads[j]);
  }
  grads.resize(num_inputs);
  return grads;
}

// On CUDA devices the program runs op by op on the device's kernels: correct, not yet
// fused (one generated kernel per program is the CUDA fusion still to come).
void fused_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const auto plan = detail::fused_plan(call.attrs);
  std::vector<Tensor> values = run_one_by_one(plan->program, call.inputs);
  for (size_t j = 0; j < outputs.size(); ++j) outputs[j] = values[static_cast<size_t>(plan->outputs[j])];
}

// Tangents forward through the program, one step's jvp rule at a time (the gradient's
// replay, the other way).
std::vector<Tensor> fused_jvp(const JvpCall& c) {
  const auto plan = detail::fused_plan(c.forward.attrs);
  const int64_t num_inputs = plan->num_inputs;
  std::vector<Tensor> values = run_one_by_one(plan->program, c.forward.inputs);
  std::vector<Tensor> tangents(values.size());
  for (int64_t i = 0; i < num_inputs; ++i)
    if (c.has_tangent(i)) tangents[i] = c.input_tangents[i];
  static const Attrs kNoAttrs;
  for (size_t k = 0; k < plan->steps.size(); ++k) {
    const FusedStep& step = plan->steps[k];
    const Tensor operand_tangents[2] = {tangents[step.operands[0]],
                                        step.arity == 2 ? tangents[step.operands[1]] : Tensor()};
    if (!operand_tangents[0].defined() && !operand_tangents[1].defined()) continue;
    if (!step.op->not_differentiable.empty()) continue;
    if (!step.op->jvp)
      fail<UnimplementedError>(step.op->name,
                               " (in fused_elementwise): forward-mode differentiation is not "
                               "implemented for this op");
    const size_t v = static_cast<size_t>(num_inputs) + k;
    Tensor operands[2] = {values[step.operands[0]], values[step.operands[1]]};
    OpCall forward{*step.op, std::span<const Tensor>(operands, step.arity), kNoAttrs};
    tangents[v] = step.op->jvp(
        JvpCall{forward, {&values[v], 1}, {operand_tangents, static_cast<size_t>(step.arity)}})[0];
  }
  std::vector<Tensor> out;
  for (size_t j = 0; j < plan->outputs.size(); ++j) {
    const Tensor& t = tangents[plan->outputs[j]];
    out.push_back(t.defined() ? detail::broadcast_like(t, c.outputs[j]) : Tensor());
  }
  return out;
}

// A fused program broadcasts single elements only: every other input is given the
// batched output's full shape (a broadcast view, no copy).
std::vector<Tensor> batch_fused(const BatchCall& call) {
  if (call.batch_size == kUnknownDim) return {};
  Shape element;
  for (size_t i = 0; i < call.call.inputs.size(); ++i) {
    const Tensor& x = call.input(i);
    const Shape shape =
        call.is_batched(i) ? Shape(Dims(x.shape().dims().begin() + 1, x.shape().dims().end())) : x.shape();
    element = broadcast_shapes(element, shape, call.call.op.name);
  }
  Dims full{call.batch_size};
  for (int64_t d : element.dims()) full.push_back(d);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < call.call.inputs.size(); ++i) {
    const Tensor& x = call.input(i);
    if (!call.is_batched(i) && x.num_elements() == 1) {
      inputs.push_back(x);
      continue;
    }
    Tensor batched = detail::batched_input(call, i);
    Dims aligned{call.batch_size};
    for (int d = batched.rank() - 1; d < element.rank(); ++d) aligned.push_back(1);
    for (int d = 1; d < batched.rank(); ++d) aligned.push_back(batched.shape()[d]);
    inputs.push_back(broadcast_to(reshape(batched, Shape(aligned)), Shape(full)));
  }
  return detail::run_batched(call, inputs, call.attrs());
}

const OpDef& kFusedElementwise = define_op({
    .name = "fused_elementwise",
    .attr_names = {"ops", "operands", "outputs", "num_inputs", "compiled"},
    .infer = infer_fused,
    .kernels = {fused_cpu, fused_cuda},
    .gradient = fused_grad,
    .gradient_uses = kGradientReadsInputs,  // the replay recomputes everything else
    .jvp = fused_jvp,
    .batch = batch_fused,
    .traits = {.elementwise = true, .in_place = true},  // staged_outputs makes it safe
});

}  // namespace

namespace detail {

// Elements from which a fused pass pays for the program's encoding (a few microseconds).
constexpr int64_t kFuseFromElements = 1 << 15;

Tensor evaluate_elementwise(const FusedProgram& program, std::span<const Tensor> inputs) {
  const Tensor* largest = &inputs[0];
  for (const Tensor& t : inputs)
    if (t.num_elements() > largest->num_elements()) largest = &t;
  bool fuse = largest->num_elements() >= kFuseFromElements && is_floating(largest->dtype());
  for (const Tensor& t : inputs)
    fuse = fuse && !t.is_symbolic() && t.dtype() == largest->dtype() &&
           (t.shape() == largest->shape() || t.num_elements() == 1);
  if (fuse) return fused_elementwise(program, inputs, CallSite::current())[0];
  return run_one_by_one(program, inputs)[static_cast<size_t>(program.outputs.at(0))];
}

std::vector<Tensor> fused_values_one_by_one(const FusedProgram& program, std::span<const Tensor> inputs) {
  return run_one_by_one(program, inputs);
}

}  // namespace detail

std::vector<Tensor> fused_elementwise(const FusedProgram& program, std::span<const Tensor> inputs, CallSite where) {
  return detail::run_fused_op(kFusedElementwise, program, inputs, where);
}

}  // namespace ef
