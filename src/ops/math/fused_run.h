// Running a FusedPlan block by block: what fused_elementwise (fused_elementwise.cpp)
// and fused_reduce_sum (fused_reduce_sum.cpp) share. The elements are cut into blocks
// of kFusedBlockBytes; within a block every step runs in turn on small per-thread
// scratch buffers, which stay in L1/L2, each step by its op's own block function (Note
// [elementwise blocks] in op_def.h), so values are bit for bit those of the ops run
// one by one.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "ops/math/fused_compile.h"
#include "ops/math/fused_plan.h"

namespace ef::detail {

// 4 KiB per buffer (1024 float32): the live intermediates and a block of each input
// and output stay in L1, so a cheap step (add, multiply) costs about one load-load-store
// per vector. Measured single-threaded on 1e6 float32 (CPU time per call): an 8-op
// arithmetic chain ran 17% faster than with 16 KiB blocks, the tanh/sigmoid/exp chain
// 3% faster.
inline constexpr int64_t kFusedBlockBytes = 4096;

// Checks a call's inputs against its plan (count, one float dtype the program computes,
// shapes that are the output shape or a single element) and returns the shape of the
// program's outputs: the broadcast of the input shapes.
Shape fused_output_shape(const OpCall& call, const FusedPlan& plan);

// A call's values, ready for run_fused_block: input i at base[i] (contiguous copies made
// where an input was not), and for every value (inputs, then step results) whether it
// is a single element broadcast.
struct FusedValues {
  std::vector<Tensor> inputs;  // keeps the copies alive
  std::vector<const std::byte*> base;
  std::vector<char> single;
  DType dtype = DType::Float32;
  int64_t item = 0;  // bytes per element
  CompiledFusedFn kernel = nullptr;  // the plan compiled, when compile_fused_kernels() is on
};
FusedValues prepare_fused_values(const FusedPlan& plan, std::span<const Tensor> inputs);

// Which outputs must be staged in scratch and copied out after each block: those
// written into the buffer of an input (the graph executor's in-place reuse,
// OpTraits::in_place) that a later step still reads. A step reading the input it
// writes over is fine (Note [rows may alias] in backends/cpu/elementwise.h). Outputs are
// fresh buffers or an input's very buffer; a null output is never staged. A compiled
// kernel stages nothing: it reads every input element before writing any output element.
std::vector<char> staged_outputs(const FusedPlan& plan, const FusedValues& values,
                                 std::span<std::byte* const> out_data);

// Runs `op` (fused_elementwise or fused_reduce_sum) with `program` as its attrs; an
// invalid program's error carries `where`.
std::vector<Tensor> run_fused_op(const OpDef& op, const FusedProgram& program, std::span<const Tensor> inputs,
                                 CallSite where);

// Per-thread scratch, 64-byte aligned, grown on demand.
std::byte* fused_scratch(size_t bytes);

// Runs every step over elements [start, start + len): intermediates go to their slot in
// `slots` (kFusedBlockBytes each), output j to out[j], which receives len elements. With
// a compiled kernel, that kernel computes the block instead, slots unused.
// `at` (one entry per value) is the caller's, reused from block to block.
void run_fused_block(const FusedPlan& plan, const FusedValues& values, std::byte* slots, int64_t start,
                     int64_t len, std::span<std::byte* const> out, std::vector<const std::byte*>& at);

}  // namespace ef::detail
