// FusedPlan: a FusedProgram decoded from fused_elementwise's attrs, validated, and laid
// out for the kernel (which scratch buffer holds each intermediate). Internal to
// fused_program.cpp and fused_elementwise.cpp.
#pragma once

#include <memory>
#include <vector>

#include "eagerflow/ops/fused_elementwise.h"
#include "eagerflow/runtime/op_def.h"

namespace ef::detail {

// Positions of fused_elementwise's attrs.
enum FusedAttr { kFusedOps, kFusedOperands, kFusedOutputs, kFusedNumInputs, kFusedCompiled };

struct FusedStep {
  const OpDef* op = nullptr;
  int arity = 0;
  int64_t operands[2] = {0, 0};  // value indices
  // Where the result goes: output `output` (-1: none), else scratch buffer `slot`.
  int output = -1;
  int slot = -1;
};

struct CompiledKernelCache;  // fused_compile.cpp
std::shared_ptr<CompiledKernelCache> new_compiled_kernel_cache();

struct FusedPlan {
  FusedProgram program;  // as decoded, for the gradient and for printing
  int64_t num_inputs = 0;
  std::vector<FusedStep> steps;
  std::vector<int64_t> outputs;  // value indices
  // Outputs that repeat an earlier output's value: {output, earlier output}.
  std::vector<std::pair<int, int>> copies;
  int num_slots = 0;     // scratch buffers a block needs (intermediates live at once)
  double cost_ns = 0;    // per element, all steps together
  uint32_t dtypes = ~0u;  // dtypes every step supports (bit i: DType i)
  // This plan's compiled kernels, per dtype and single values (fused_compile.h).
  std::shared_ptr<CompiledKernelCache> kernel_cache = new_compiled_kernel_cache();
};

// The validated plan of `attrs`. Decoding looks ops up by name, so the last few plans
// are kept per thread and reused while the same programs run again (a graph's nodes, a
// traced function's calls). Throws the errors documented in fused_elementwise.h.
std::shared_ptr<const FusedPlan> fused_plan(const Attrs& attrs);

}  // namespace ef::detail
