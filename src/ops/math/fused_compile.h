// Compiled fused kernels: a FusedPlan turned into one C++ loop that keeps every
// intermediate in registers, compiled at first use (Note [compiled fused kernels] in
// fused_compile.cpp). run_fused_block calls it in place of the step-by-step interpreter.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "ops/math/fused_plan.h"

namespace ef::detail {

// Computes the program over n elements: in[i] points at input i (one element when it is
// a single element broadcast), out[j] at output j's n elements (outputs that repeat an
// earlier output's value, FusedPlan::copies, are left to the caller).
using CompiledFusedFn = void (*)(int64_t n, const void* const* in, void* const* out);

// The kernel of `plan` for `dtype` and the values that are single elements (one entry
// per value, as FusedValues::single), compiled on first use and cached in memory and
// on disk. Null when compilation is off (set_compile_fused_kernels, and the program is
// not FusedProgram::compiled), a step's op is not
// compiled in `dtype` (ElementwiseBlock::compiled_dtypes: no shared functor, or libm), or
// compiling failed (reported once on stderr); callers then interpret the plan.
CompiledFusedFn compiled_fused_kernel(const FusedPlan& plan, DType dtype, std::span<const char> single);

// The C++ source of that kernel (for tests and for reading); empty when a step's op is
// not compiled in `dtype`.
std::string fused_kernel_source(const FusedPlan& plan, DType dtype, std::span<const char> single);

}  // namespace ef::detail
