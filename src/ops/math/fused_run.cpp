// Running a FusedPlan block by block (see fused_run.h).
#include "ops/math/fused_run.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "backends/cpu/elementwise.h"
#include "ops/array/copy.h"
#include "eagerflow/runtime/dispatch.h"
#include "ops/op_helpers.h"

namespace ef::detail {
namespace {

// An input whose strides are all zero holds one element broadcast to its shape (a
// broadcast_to view, as reduce_sum's gradient returns): the kernel reads that element.
bool is_broadcast_element(const Tensor& t) {
  if (t.num_elements() == 1) return true;
  const Dims& strides = t.strides();
  return std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 0; });
}

// Each input either has the output's elements (its shape is the output shape up to
// leading 1s) or is a single element; in graph mode unknown dimensions pass.
void check_input_shapes(const OpCall& call, const Shape& out) {
  const int64_t n = out.num_elements();
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Shape& s = call.inputs[i].shape();
    const int64_t m = s.num_elements();
    if (m == 1 || m == kUnknownDim || n == kUnknownDim || m == n) continue;
    fail(call.op.name, ": input ", i, " has shape ", s, ", which is neither the output shape ", out,
         " nor a single element; ", call.op.name, " broadcasts single elements only");
  }
}

}  // namespace

Shape fused_output_shape(const OpCall& call, const FusedPlan& plan) {
  const auto& in = call.inputs;
  if (static_cast<int64_t>(in.size()) != plan.num_inputs)
    fail(call.op.name, ": the program takes ", plan.num_inputs, " inputs, got ", in.size());
  const DType dtype = in[0].dtype();
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].dtype() != dtype)
      fail(call.op.name, ": inputs must share one dtype, but input 0 is ", dtype, " and input ", i, " is ",
           in[i].dtype());
  if (!cpu::contains(plan.dtypes & cpu::kFloatTypes, dtype))
    fail(call.op.name, ": inputs are ", dtype, ", but the program computes only ",
         dtype_set_names(plan.dtypes & cpu::kFloatTypes));
  Shape shape = in[0].shape();
  for (size_t i = 1; i < in.size(); ++i) {
    try {
      shape = broadcast_shapes(shape, in[i].shape(), call.op.name);
    } catch (const InvalidArgumentError&) {
      fail(call.op.name, ": input ", i, " has shape ", in[i].shape(), ", which does not broadcast with ",
           shape, " (the inputs before it)");
    }
  }
  check_input_shapes(call, shape);
  return shape;
}

FusedValues prepare_fused_values(const FusedPlan& plan, std::span<const Tensor> inputs) {
  FusedValues v;
  v.dtype = inputs[0].dtype();
  v.item = static_cast<int64_t>(size_of(v.dtype));
  const int64_t num_values = plan.num_inputs + static_cast<int64_t>(plan.steps.size());
  v.inputs.assign(inputs.begin(), inputs.end());
  v.base.assign(static_cast<size_t>(plan.num_inputs), nullptr);
  v.single.assign(static_cast<size_t>(num_values), 0);
  for (int64_t i = 0; i < plan.num_inputs; ++i) {
    Tensor& t = v.inputs[i];
    v.single[i] = is_broadcast_element(t);
    if (!v.single[i] && !t.is_contiguous()) t = materialize(t);
    v.base[i] = static_cast<const std::byte*>(t.impl()->storage->data()) + t.impl()->offset * v.item;
  }
  // A step whose operands are all single elements computes one element.
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const FusedStep& step = plan.steps[k];
    bool all = true;
    for (int j = 0; j < step.arity; ++j) all = all && v.single[step.operands[j]];
    v.single[plan.num_inputs + static_cast<int64_t>(k)] = all;
  }
  v.kernel = compiled_fused_kernel(plan, v.dtype, v.single);
  return v;
}

std::vector<char> staged_outputs(const FusedPlan& plan, const FusedValues& values,
                                 std::span<std::byte* const> out_data) {
  std::vector<char> staged(out_data.size(), 0);
  if (values.kernel) return staged;
  const auto& base = values.base;
  std::vector<int64_t> last_read(static_cast<size_t>(plan.num_inputs), -1);
  for (size_t k = 0; k < plan.steps.size(); ++k)
    for (int j = 0; j < plan.steps[k].arity; ++j)
      if (plan.steps[k].operands[j] < plan.num_inputs) last_read[plan.steps[k].operands[j]] = static_cast<int64_t>(k);
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const int output = plan.steps[k].output;
    if (output < 0) continue;
    for (int64_t i = 0; i < plan.num_inputs; ++i)
      if (base[i] == out_data[output] && last_read[i] > static_cast<int64_t>(k)) staged[output] = 1;
  }
  return staged;
}

std::vector<Tensor> run_fused_op(const OpDef& op, const FusedProgram& program, std::span<const Tensor> inputs,
                                 CallSite where) {
  Attrs attrs;
  try {
    attrs = fused_program_to_attrs(program);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  return run_op_multi(op, inputs, attrs, where);
}

std::byte* fused_scratch(size_t bytes) {
  struct Free {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  thread_local std::unique_ptr<std::byte[], Free> buffer;
  thread_local size_t capacity = 0;
  if (bytes > capacity) {
    buffer.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(64))));
    capacity = bytes;
  }
  return buffer.get();
}

void run_fused_block(const FusedPlan& plan, const FusedValues& values, std::byte* slots, int64_t start,
                     int64_t len, std::span<std::byte* const> out, std::vector<const std::byte*>& at) {
  const int64_t item = values.item;
  const auto& single = values.single;
  at.resize(single.size());
  for (int64_t i = 0; i < plan.num_inputs; ++i) at[i] = single[i] ? values.base[i] : values.base[i] + start * item;
  if (values.kernel) {
    values.kernel(len, reinterpret_cast<const void* const*>(at.data()),
                  reinterpret_cast<void* const*>(out.data()));
    return;
  }
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const FusedStep& step = plan.steps[k];
    const int64_t v = plan.num_inputs + static_cast<int64_t>(k);
    std::byte* dst = step.output >= 0 ? out[static_cast<size_t>(step.output)] : slots + step.slot * kFusedBlockBytes;
    // A step of single elements runs on one element, as the op would on its own.
    const void* in[2] = {at[step.operands[0]], at[step.operands[1]]};
    const bool in_single[2] = {!single[v] && single[step.operands[0]], !single[v] && single[step.operands[1]]};
    step.op->elementwise_block.fn(values.dtype, single[v] ? 1 : len, dst, {in, static_cast<size_t>(step.arity)},
                                  {in_single, static_cast<size_t>(step.arity)});
    if (single[v] && step.output >= 0)  // an output that depends on single elements only
      for (int64_t i = 1; i < len; ++i) std::memcpy(dst + i * item, dst, item);
    at[v] = dst;
  }
}

}  // namespace ef::detail
