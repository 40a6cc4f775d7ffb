// Fused elementwise chains: the op that graph mode's elementwise-fusion pass emits in
// place of a chain of elementwise ops. The chain runs as one pass over memory in
// cache-sized blocks, each op computed by its own functor (Note [elementwise blocks]
// in runtime/op_def.h), so results are bit for bit those of the ops one by one and
// no intermediate tensor is allocated.
//
//   ef::FusedProgram p;                        // y = tanh(x * a + b)
//   p.num_inputs = 3;                          // values 0, 1, 2 are x, a, b
//   int64_t xa = p.add("multiply", {0, 1});    // value 3
//   int64_t y = p.add("tanh", {p.add("add", {xa, 2})});
//   p.outputs = {y};
//   ef::Tensor out = ef::fused_elementwise(p, {x, a, b})[0];
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/attrs.h"

namespace ef {

class OpDef;

// One step of a FusedProgram: an elementwise op applied to earlier values.
struct FusedInstruction {
  const OpDef* op = nullptr;       // an op with an elementwise block function
  std::vector<int64_t> operands;   // value indices, as many as the op has inputs
};

// A straight-line program of elementwise ops. Values are numbered in order: 0 ..
// num_inputs-1 are the inputs, num_inputs + k is the result of instruction k. An
// operand may name only values defined before its instruction; outputs name
// instruction results (one value may be listed twice).
struct FusedProgram {
  int64_t num_inputs = 0;
  std::vector<FusedInstruction> instructions;
  std::vector<int64_t> outputs;
  // Run as a compiled kernel even while set_compile_fused_kernels is off (below): what
  // ef.function(jit_compile=True) asks of its fused nodes.
  bool compiled = false;

  // Appends `op` applied to `operands` and returns the index of its result.
  int64_t add(const OpDef& op, std::vector<int64_t> operands);
  // The same with the op looked up by name; throws NotFoundError for unknown names.
  int64_t add(std::string_view op_name, std::vector<int64_t> operands);
};

// The program as fused_elementwise's attrs (op names, flattened operands, outputs,
// input count), and back. from_attrs validates like the op does and throws its errors.
Attrs fused_program_to_attrs(const FusedProgram& program);
FusedProgram fused_program_from_attrs(const Attrs& attrs);

// Runs `program` over `inputs` and returns its outputs. Inputs share one dtype
// (float32 or float64); each has the output shape (the broadcast of all input shapes)
// or is a single element, broadcast. Invalid programs (unknown or non-fusible ops,
// operand counts, forward references), other broadcasts and dtype mismatches throw
// InvalidArgumentError (NotFoundError for unknown ops). Differentiable: its gradient
// replays the instructions' own gradient functions.
std::vector<Tensor> fused_elementwise(const FusedProgram& program, std::span<const Tensor> inputs,
                                      CallSite where = CallSite::current());
inline std::vector<Tensor> fused_elementwise(const FusedProgram& program, std::initializer_list<Tensor> inputs,
                                             CallSite where = CallSite::current()) {
  return fused_elementwise(program, std::span<const Tensor>(inputs.begin(), inputs.size()), where);
}

// Runs `program` like fused_elementwise but sums its last output instead of returning
// it: returns the other outputs (as fused_elementwise would), then the sum of all
// elements of the last one, a scalar of the inputs' dtype, which is never materialized.
// The sum is bit for bit reduce_sum(fused_elementwise(program, inputs).back()) at any
// thread count. Graph mode's reduction fusion emits it for reduce_sum of an elementwise
// chain. Inputs and errors as fused_elementwise's; differentiable.
//   ef::FusedProgram dot;  dot.num_inputs = 2;  dot.outputs = {dot.add("multiply", {0, 1})};
//   ef::Tensor d = ef::fused_reduce_sum(dot, {a, b})[0];   // sum(a * b)
std::vector<Tensor> fused_reduce_sum(const FusedProgram& program, std::span<const Tensor> inputs,
                                     CallSite where = CallSite::current());
inline std::vector<Tensor> fused_reduce_sum(const FusedProgram& program, std::initializer_list<Tensor> inputs,
                                            CallSite where = CallSite::current()) {
  return fused_reduce_sum(program, std::span<const Tensor>(inputs.begin(), inputs.size()), where);
}

// Compiled fused kernels (Note [compiled fused kernels] in src/ops/math/fused_compile.cpp):
// when on, fused_elementwise and fused_reduce_sum run each program as one loop generated
// for it, which keeps every intermediate in a register, compiled with the C++ compiler
// that built the library at the program's first run (about a second) and cached on disk
// ($EF_KERNEL_CACHE_DIR, else ~/.cache/eagerflow/kernels). Results are bit for bit the
// same. Off by default (as TensorFlow's XLA JIT); the environment variable
// EF_COMPILE_FUSED_KERNELS=1 turns it on at startup. Without a working compiler, fused
// ops keep running interpreted, and the first failure is reported on stderr.
void set_compile_fused_kernels(bool enabled);
bool compile_fused_kernels();

}  // namespace ef
