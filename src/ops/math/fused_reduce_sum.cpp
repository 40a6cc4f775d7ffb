// fused_reduce_sum: the sum of all elements of a FusedProgram's single output, without
// materializing that output: each block's values land in a per-thread staging buffer
// and are summed there. Graph mode's reduction-fusion pass emits it for
// reduce_sum(elementwise chain), e.g. the dot products sum(a * b) of the L-BFGS two-loop
// recursion, which would otherwise write and read back a full-size product.
//
// Note [fused sums are reduce_sum's bits]: reduce_sum sums a contiguous tensor in
// blocks of cpu::kReduceBlock elements, each block by SumR::row, and adds the blocks'
// sums in order (Note [deterministic reductions] in backends/cpu/reduce.h). This op
// stages exactly those blocks and sums them with the same SumR, and the program's
// values are those of the ops one by one (Note [elementwise blocks]), so the result is
// bit for bit reduce_sum of the unfused chain, at any thread count.
#include <algorithm>
#include <memory>

#include "backends/cpu/elementwise.h"
#include "backends/cpu/reduce.h"
#include "eagerflow/ops/fused_elementwise.h"
#include "ops/math/fused_run.h"
#include "ops/op_helpers.h"
#include "ops/reduction/sum_reducer.h"

namespace ef {
namespace {

void infer_fused_reduce_sum(const OpCall& call, OutputMetas& out) {
  const auto plan = detail::fused_plan(call.attrs);
  if (plan->outputs.size() != 1)
    fail(call.op.name, ": the program must have exactly one output (the values summed), got ",
         plan->outputs.size());
  detail::fused_output_shape(call, *plan);
  out.add(call.inputs[0].dtype(), Shape{});
}

template <class T>
void sum_program(const detail::FusedPlan& plan, const detail::FusedValues& values, int64_t n, T* result) {
  using Acc = typename detail::SumR<T>::Acc;
  const int64_t item = values.item;
  const int64_t block = detail::kFusedBlockBytes / item;
  const int64_t blocks = (n + cpu::kReduceBlock - 1) / cpu::kReduceBlock;
  std::unique_ptr<Acc[]> partial(new Acc[static_cast<size_t>(blocks)]);
  const double cost = (plan.cost_ns + cpu::kReduceElementNs) * static_cast<double>(cpu::kReduceBlock);
  parallel_for(blocks, cost, [&](int64_t first, int64_t last) {
    std::byte* slots = detail::fused_scratch(
        static_cast<size_t>(plan.num_slots * detail::kFusedBlockBytes + cpu::kReduceBlock * item));
    std::byte* staging = slots + plan.num_slots * detail::kFusedBlockBytes;
    std::vector<const std::byte*> at;
    for (int64_t k = first; k < last; ++k) {
      const int64_t begin = k * cpu::kReduceBlock, end = std::min(n, begin + cpu::kReduceBlock);
      for (int64_t start = begin; start < end; start += block) {
        std::byte* out[1] = {staging + (start - begin) * item};
        detail::run_fused_block(plan, values, slots, start, std::min(block, end - start), out, at);
      }
      partial[k] = detail::SumR<T>::row(reinterpret_cast<const T*>(staging), end - begin, 1);
    }
  });
  Acc acc = partial[0];
  for (int64_t k = 1; k < blocks; ++k) acc = detail::SumR<T>::merge(acc, partial[k]);
  *result = detail::SumR<T>::finish(acc);
}

void fused_reduce_sum_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const auto plan = detail::fused_plan(call.attrs);
  int64_t n = 1;  // the program's element count: every input has it or is one element
  for (const Tensor& t : call.inputs) n = std::max(n, t.num_elements());
  for (const Tensor& t : call.inputs) n = t.num_elements() == 0 ? 0 : n;
  const detail::FusedValues values = detail::prepare_fused_values(*plan, call.inputs);
  cpu::dispatch_in<cpu::kFloatTypes>(values.dtype, call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* result = cpu::typed_output<T>(outputs[0]);
    if (n == 0) *result = T(0);
    else sum_program<T>(*plan, values, n, result);
  });
}

// The gradient is reduce_sum's gradient (the incoming gradient broadcast to the
// program's output) fed to fused_elementwise's, which replays the instructions' own
// gradients: both run with public ops, so higher orders work.
std::vector<Tensor> fused_reduce_sum_grad(const GradCall& c) {
  static const OpDef& sum = find_op("reduce_sum");
  static const OpDef& fused = find_op("fused_elementwise");
  const Tensor values = fused_elementwise(fused_program_from_attrs(c.forward.attrs), c.forward.inputs)[0];
  Dims all_axes;
  for (int i = 0; i < values.rank(); ++i) all_axes.push_back(i);
  const Attrs sum_attrs{all_axes, false};
  const OpCall sum_call{sum, {&values, 1}, sum_attrs};
  const Tensor values_grad = sum.gradient(GradCall{sum_call, c.outputs, c.output_grads})[0];
  const OpCall fused_call{fused, c.forward.inputs, c.forward.attrs};
  return fused.gradient(GradCall{fused_call, {&values, 1}, {&values_grad, 1}, c.needs_grad});
}

const OpDef& kFusedReduceSum = define_op({
    .name = "fused_reduce_sum",
    .attr_names = {"ops", "operands", "outputs", "num_inputs"},
    .infer = infer_fused_reduce_sum,
    .kernels = {fused_reduce_sum_cpu},
    .gradient = fused_reduce_sum_grad,
    .gradient_uses = kGradientReadsInputs,
    .traits = {.reduction = true},
});

}  // namespace

Tensor fused_reduce_sum(const FusedProgram& program, std::span<const Tensor> inputs, CallSite where) {
  Attrs attrs;
  try {
    attrs = fused_program_to_attrs(program);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  return run_op(kFusedReduceSum, inputs, attrs, where);
}

}  // namespace ef
