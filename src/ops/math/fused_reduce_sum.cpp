// fused_reduce_sum: the sum of all elements of a FusedProgram's last output, without
// materializing that output: each block's values land in a per-thread staging buffer
// and are summed there. The program's other outputs are written out as
// fused_elementwise writes them. Graph mode's reduction-fusion pass emits it for
// reduce_sum(elementwise chain), e.g. the dot products sum(a * b) of the L-BFGS
// two-loop recursion, which would otherwise write and read back a full-size product;
// with other outputs, for a chain whose result is both kept and summed (q' = q - a * y
// and then sum(s * q')).
//
// Note [fused sums are reduce_sum's bits]: reduce_sum sums a contiguous tensor in
// blocks of cpu::kReduceBlock elements, each block by SumR::row, and adds the blocks'
// sums in order (Note [deterministic reductions] in backends/cpu/reduce.h). This op
// stages exactly those blocks and sums them with the same SumR, and the program's
// values are those of the ops one by one (Note [elementwise blocks]), so the result is
// bit for bit reduce_sum of the unfused chain, at any thread count.
#include <algorithm>
#include <cstring>
#include <memory>

#include "backends/cpu/elementwise.h"
#include "backends/cpu/reduce.h"
#include "eagerflow/ops/fused_elementwise.h"
#include "eagerflow/ops/reduction.h"
#include "ops/math/fused_eval.h"
#include "ops/math/fused_run.h"
#include "ops/op_helpers.h"
#include "ops/reduction/sum_reducer.h"

namespace ef {
namespace {

void infer_fused_reduce_sum(const OpCall& call, OutputMetas& out) {
  const auto plan = detail::fused_plan(call.attrs);
  const Shape shape = detail::fused_output_shape(call, *plan);
  for (size_t j = 0; j + 1 < plan->outputs.size(); ++j) out.add(call.inputs[0].dtype(), shape);
  out.add(call.inputs[0].dtype(), Shape{});
}

// Runs the program over n elements: outputs but the last to `kept` (n elements each;
// staged[j]: through scratch, see staged_outputs), the last one's sum to *result.
template <class T>
void sum_program(const detail::FusedPlan& plan, const detail::FusedValues& values, int64_t n,
                 std::span<std::byte* const> kept, const std::vector<char>& staged, T* result) {
  using Acc = typename detail::SumR<T>::Acc;
  const int64_t item = values.item;
  const int64_t block = detail::kFusedBlockBytes / item;
  const int64_t blocks = (n + cpu::kReduceBlock - 1) / cpu::kReduceBlock;
  const int64_t num_slots = plan.num_slots + static_cast<int64_t>(kept.size());
  std::unique_ptr<Acc[]> partial(new Acc[static_cast<size_t>(blocks)]);
  const double cost = (plan.cost_ns + cpu::kReduceElementNs) * static_cast<double>(cpu::kReduceBlock);
  parallel_for(blocks, cost, [&](int64_t first, int64_t last) {
    std::byte* slots = detail::fused_scratch(
        static_cast<size_t>(num_slots * detail::kFusedBlockBytes + cpu::kReduceBlock * item));
    std::byte* staging = slots + num_slots * detail::kFusedBlockBytes;
    std::vector<const std::byte*> at;
    std::vector<std::byte*> out(kept.size() + 1);
    for (int64_t k = first; k < last; ++k) {
      const int64_t begin = k * cpu::kReduceBlock, end = std::min(n, begin + cpu::kReduceBlock);
      for (int64_t start = begin; start < end; start += block) {
        const int64_t len = std::min(block, end - start);
        for (size_t j = 0; j < kept.size(); ++j)
          out[j] = staged[j] ? slots + (plan.num_slots + static_cast<int64_t>(j)) * detail::kFusedBlockBytes
                             : kept[j] + start * item;
        out.back() = staging + (start - begin) * item;
        detail::run_fused_block(plan, values, slots, start, len, out, at);
        for (auto [to, from] : plan.copies) std::memcpy(out[to], out[from], len * item);
        for (size_t j = 0; j < kept.size(); ++j)
          if (staged[j]) std::memcpy(kept[j] + start * item, out[j], len * item);
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
  // The program's element count: every input has it or is one element (inference checked).
  int64_t n = 1;
  for (const Tensor& t : call.inputs)
    if (t.num_elements() != 1) n = t.num_elements();
  const detail::FusedValues values = detail::prepare_fused_values(*plan, call.inputs);
  // The kept outputs, then a null stand-in for the summed one (never an input's buffer).
  std::vector<std::byte*> out_data(outputs.size(), nullptr);
  for (size_t j = 0; j + 1 < outputs.size(); ++j)
    out_data[j] = static_cast<std::byte*>(outputs[j].impl()->storage->data()) + outputs[j].impl()->offset * values.item;
  const std::vector<char> staged = detail::staged_outputs(*plan, values, out_data);
  cpu::dispatch_in<cpu::kFloatTypes>(values.dtype, call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* result = cpu::typed_output<T>(outputs.back());
    if (n == 0) *result = T(0);
    else sum_program<T>(*plan, values, n, std::span<std::byte* const>(out_data).first(outputs.size() - 1), staged,
                        result);
  });
}

// The gradient is fused_elementwise's (which replays the instructions' own gradients)
// with, for the summed output, reduce_sum's gradient (the incoming gradient broadcast
// to the program's output shape). Both run with public ops, so higher orders work.
std::vector<Tensor> fused_reduce_sum_grad(const GradCall& c) {
  static const OpDef& sum = find_op("reduce_sum");
  static const OpDef& fused = find_op("fused_elementwise");
  const std::vector<Tensor> values = fused_elementwise(fused_program_from_attrs(c.forward.attrs), c.forward.inputs);
  std::vector<Tensor> grads(c.output_grads.begin(), c.output_grads.end());
  const Tensor& summed = values.back();
  if (grads.back().defined()) {
    Dims all_axes;
    for (int i = 0; i < summed.rank(); ++i) all_axes.push_back(i);
    const Attrs sum_attrs{all_axes, false};
    const OpCall sum_call{sum, std::span<const Tensor>(&summed, 1), sum_attrs};
    grads.back() = sum.gradient(GradCall{sum_call, c.outputs.last(1), c.output_grads.last(1)})[0];
  }
  const OpCall fused_call{fused, c.forward.inputs, c.forward.attrs};
  return fused.gradient(GradCall{fused_call, values, grads, c.needs_grad});
}

// fused_elementwise's jvp, and the summed output's tangent summed.
std::vector<Tensor> fused_reduce_sum_jvp(const JvpCall& c) {
  static const OpDef& fused = find_op("fused_elementwise");
  const std::vector<Tensor> values =
      fused_elementwise(fused_program_from_attrs(c.forward.attrs), c.forward.inputs);
  const OpCall fused_call{fused, c.forward.inputs, c.forward.attrs};
  std::vector<Tensor> tangents = fused.jvp(JvpCall{fused_call, values, c.input_tangents});
  if (tangents.back().defined()) tangents.back() = reduce_sum(tangents.back());
  return tangents;
}

// On CUDA devices: the program op by op, then reduce_sum of its last output (not yet
// fused, and summed in the device reduction's order rather than the CPU's).
void fused_reduce_sum_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const auto plan = detail::fused_plan(call.attrs);
  std::vector<Tensor> values = detail::fused_values_one_by_one(plan->program, call.inputs);
  for (size_t j = 0; j + 1 < outputs.size(); ++j) outputs[j] = values[static_cast<size_t>(plan->outputs[j])];
  outputs.back() = reduce_sum(values[static_cast<size_t>(plan->outputs.back())]);
}

const OpDef& kFusedReduceSum = define_op({
    .name = "fused_reduce_sum",
    .attr_names = {"ops", "operands", "outputs", "num_inputs", "compiled"},
    .infer = infer_fused_reduce_sum,
    .kernels = {fused_reduce_sum_cpu, fused_reduce_sum_cuda},
    .gradient = fused_reduce_sum_grad,
    .gradient_uses = kGradientReadsInputs,
    // Output 0 is a kept output, staged when a later step reads the input it overwrites,
    // or the sum, written once every element has been read.
    .jvp = fused_reduce_sum_jvp,
    .traits = {.reduction = true, .in_place = true},
});

}  // namespace

std::vector<Tensor> fused_reduce_sum(const FusedProgram& program, std::span<const Tensor> inputs, CallSite where) {
  return detail::run_fused_op(kFusedReduceSum, program, inputs, where);
}

}  // namespace ef
