// fused_elementwise: a chain of elementwise ops (a FusedProgram, see fused_program.cpp
// for its encoding) run as one pass over memory. The elements are cut into blocks of
// kBlockBytes; the thread pool takes blocks, and within a block every instruction runs
// in turn on small per-thread scratch buffers, which stay in L1/L2: inputs are read
// once, outputs written once, and intermediates never reach main memory. Each
// instruction is its op's own block function (Note [elementwise blocks] in op_def.h),
// so values are bit for bit those of the ops run one by one.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "backends/cpu/elementwise.h"
#include "backends/cpu/stream_copy.h"
#include "eagerflow/ops/fused_elementwise.h"
#include "eagerflow/ops/math.h"
#include "ops/array/copy.h"
#include "ops/math/fused_eval.h"
#include "ops/math/fused_plan.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using detail::FusedPlan;
using detail::FusedStep;

// 16 KiB per buffer (4096 float32): a few live intermediates plus the input and output
// streams of a block stay in L2. Measured with bench/cpp/ef_fusion_bench.cpp (8-op
// chains, 1e6 and 1e7 float32): blocks of 2 to 32 KiB came within 10% of each other,
// since each instruction's loads and stores hit L1/L2 whatever the size.
constexpr int64_t kBlockBytes = 16384;

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
         " nor a single element; fused_elementwise broadcasts single elements only");
  }
}

void infer_fused(const OpCall& call, OutputMetas& out) {
  const auto plan = detail::fused_plan(call.attrs);
  const auto& in = call.inputs;
  if (static_cast<int64_t>(in.size()) != plan->num_inputs)
    fail(call.op.name, ": the program takes ", plan->num_inputs, " inputs, got ", in.size());
  const DType dtype = in[0].dtype();
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].dtype() != dtype)
      fail(call.op.name, ": inputs must share one dtype, but input 0 is ", dtype, " and input ", i, " is ",
           in[i].dtype());
  if (!cpu::contains(plan->dtypes & cpu::kFloatTypes, dtype))
    fail(call.op.name, ": inputs are ", dtype, ", but the program computes only ",
         detail::dtype_set_names(plan->dtypes & cpu::kFloatTypes));
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
  for (size_t j = 0; j < plan->outputs.size(); ++j) out.add(dtype, shape);
}

// Per-thread scratch for the intermediates of a block, 64-byte aligned, grown on demand.
std::byte* scratch(size_t bytes) {
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

// Which outputs share the buffer of an input that a step reads after the
// step writing the output: written directly, they would overwrite elements that step
// still reads. A step reading the input it writes over is fine (Note [rows may alias]
// in backends/cpu/elementwise.h). Outputs are fresh buffers or an input's very buffer.
std::vector<char> staged_outputs(const FusedPlan& plan, std::span<const std::byte* const> base,
                                 std::span<std::byte* const> out_data) {
  std::vector<char> staged(out_data.size(), 0);
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

void fused_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const auto plan_ptr = detail::fused_plan(call.attrs);
  const FusedPlan& plan = *plan_ptr;
  const int64_t n = outputs[0].num_elements();
  if (n == 0) return;
  const DType dtype = call.inputs[0].dtype();
  const int64_t item = static_cast<int64_t>(size_of(dtype));
  const int64_t num_values = plan.num_inputs + static_cast<int64_t>(plan.steps.size());

  // Value v's data: a pointer to its element 0 (inputs), and whether it is one element
  // broadcast. A step whose operands are all single elements computes one element.
  std::vector<Tensor> inputs(call.inputs.begin(), call.inputs.end());
  std::vector<const std::byte*> base(num_values, nullptr);
  std::vector<char> single(num_values, 0);
  for (int64_t i = 0; i < plan.num_inputs; ++i) {
    Tensor& t = inputs[i];
    single[i] = is_broadcast_element(t);
    if (!single[i] && !t.is_contiguous()) t = detail::materialize(t);
    base[i] = static_cast<const std::byte*>(t.impl()->storage->data()) + t.impl()->offset * item;
  }
  for (const FusedStep& step : plan.steps) {
    bool all = true;
    for (int j = 0; j < step.arity; ++j) all = all && single[step.operands[j]];
    single[&step - plan.steps.data() + plan.num_inputs] = all;
  }
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
      stream ? std::vector<char>(outputs.size(), 1) : staged_outputs(plan, base, out_data);
  const bool any_staged = std::find(staged.begin(), staged.end(), 1) != staged.end();
  const int64_t num_slots = plan.num_slots + (any_staged ? static_cast<int64_t>(outputs.size()) : 0);
  const int64_t block = kBlockBytes / item;
  const int64_t blocks = (n + block - 1) / block;
  parallel_for(blocks, plan.cost_ns * static_cast<double>(block), [&](int64_t first, int64_t last) {
    std::byte* slots = scratch(static_cast<size_t>(num_slots * kBlockBytes));
    auto out_at = [&](int output, int64_t start) {
      return staged[output] ? slots + (plan.num_slots + output) * kBlockBytes : out_data[output] + start * item;
    };
    std::vector<const std::byte*> at(num_values);  // value pointers within the current block
    for (int64_t b = first; b < last; ++b) {
      const int64_t start = b * block, len = std::min(block, n - start);
      for (int64_t i = 0; i < plan.num_inputs; ++i) at[i] = single[i] ? base[i] : base[i] + start * item;
      for (size_t k = 0; k < plan.steps.size(); ++k) {
        const FusedStep& step = plan.steps[k];
        const int64_t v = plan.num_inputs + static_cast<int64_t>(k);
        std::byte* dst = step.output >= 0 ? out_at(step.output, start) : slots + step.slot * kBlockBytes;
        // A step of single elements runs on one element, as the op would on its own.
        const void* in[2] = {at[step.operands[0]], at[step.operands[1]]};
        const bool in_single[2] = {!single[v] && single[step.operands[0]], !single[v] && single[step.operands[1]]};
        step.op->elementwise_block.fn(dtype, single[v] ? 1 : len, dst, {in, static_cast<size_t>(step.arity)},
                                      {in_single, static_cast<size_t>(step.arity)});
        if (single[v] && step.output >= 0)  // an output that depends on single elements only
          for (int64_t i = 1; i < len; ++i) std::memcpy(dst + i * item, dst, item);
        at[v] = dst;
      }
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

const OpDef& kFusedElementwise = define_op({
    .name = "fused_elementwise",
    .attr_names = {"ops", "operands", "outputs", "num_inputs"},
    .infer = infer_fused,
    .kernels = {fused_cpu},
    .gradient = fused_grad,
    .gradient_uses = kGradientReadsInputs,  // the replay recomputes everything else
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

}  // namespace detail

std::vector<Tensor> fused_elementwise(const FusedProgram& program, std::span<const Tensor> inputs, CallSite where) {
  Attrs attrs;
  try {
    attrs = fused_program_to_attrs(program);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  return run_op_multi(kFusedElementwise, inputs, attrs, where);
}

}  // namespace ef
