// Helpers shared by op definitions: dtype checks for inference, and OpDef builders for
// elementwise ops (inference + CPU kernel from one functor). Internal to src/ops.
#pragma once

#include <string>
#include <type_traits>

#include "backends/cpu/elementwise.h"
#include "backends/cpu/elementwise_functors.h"
#include "backends/cuda/kernels.h"
#include "eagerflow/runtime/dispatch.h"
#include "eagerflow/runtime/op_def.h"

namespace ef::detail {

using cpu::DTypeSet;

// "float32, float64" for error messages.
std::string dtype_set_names(DTypeSet set);

// Throws InvalidArgumentError naming op, argument and dtype unless `t` is in `allowed`.
void check_dtype(const OpCall& call, DType t, DTypeSet allowed, std::string_view arg);

// Throws InvalidArgumentError naming both unless inputs i and j have the same dtype.
void check_same_dtype(const OpCall& call, size_t i, size_t j, std::string_view arg_i,
                      std::string_view arg_j);

// Throws InvalidArgumentError unless the call has exactly `count` inputs (an op run
// through run_op by name, as graphs and tests may, can be given any number).
void check_input_count(const OpCall& call, size_t count);

// Inference of a binary elementwise op: same dtype in `Set`, broadcast shapes; the
// output is bool when BoolOutput, else the input dtype.
template <DTypeSet Set, bool BoolOutput = false>
void infer_binary(const OpCall& call, OutputMetas& out) {
  check_input_count(call, 2);
  check_dtype(call, call.inputs[0].dtype(), Set, "x");
  check_same_dtype(call, 0, 1, "x", "y");
  out.add(BoolOutput ? DType::Bool : call.inputs[0].dtype(),
          broadcast_shapes(call.inputs[0].shape(), call.inputs[1].shape(), call.op.name));
}

template <DTypeSet Set, bool BoolOutput = false>
void infer_unary(const OpCall& call, OutputMetas& out) {
  check_input_count(call, 1);
  check_dtype(call, call.inputs[0].dtype(), Set, "x");
  out.add(BoolOutput ? DType::Bool : call.inputs[0].dtype(), call.inputs[0].shape());
}

// F's qualified name, "ef::cpu::functors::TanhFn", when F is one of the shared
// functors of backends/cpu/elementwise_functors.h, else empty: compiled fused kernels
// name the functor in the code they generate (Note [compiled fused kernels]).
template <class F>
constexpr std::string_view shared_functor_name() {
  constexpr std::string_view kPrefix = "ef::cpu::functors::";
  // GCC: "... [with F = ef::cpu::functors::TanhFn; ...]"; clang: "... [F = ef::cpu::functors::TanhFn]".
  std::string_view s = __PRETTY_FUNCTION__;
  const size_t at = s.find("F = ");
  if (at == std::string_view::npos) return {};
  s.remove_prefix(at + 4);
  s = s.substr(0, s.find_first_of(";]"));
  return s.starts_with(kPrefix) ? s : std::string_view{};
}

// The block function of functor F (Note [elementwise blocks] in op_def.h), for the
// float dtypes of Set. Left empty (not fusible) for bool outputs, functors that read
// attrs (a fused program carries no per-instruction attrs), and integer dtypes (whose
// division and pow kernels check their operands before running the functor).
template <class F, DTypeSet Set, int Arity, bool BoolOutput, bool Expensive>
ElementwiseBlock elementwise_block_of() {
  constexpr DTypeSet fusible = Set & cpu::kFloatTypes & ~cpu::kHalfTypes;
  if constexpr (BoolOutput || fusible == 0 || std::is_constructible_v<F, const Attrs&>) {
    return {};
  } else {
    constexpr std::string_view functor = shared_functor_name<F>();
    constexpr DTypeSet compiled =
        functor.empty() ? 0
                        : (cpu::functors::calls_libm<F, float>() ? 0 : cpu::dtype_bit(DType::Float32)) |
                              (cpu::functors::calls_libm<F, double>() ? 0 : cpu::dtype_bit(DType::Float64));
    return {cpu::elementwise_block<F, fusible, Arity>, Arity, fusible,
            Expensive ? cpu::kExpensiveElementNs : cpu::kCheapElementNs, functor, compiled & fusible};
  }
}

// OpDef of a binary elementwise op computed by functor F on the dtypes in Set.
template <class F, DTypeSet Set, bool BoolOutput = false, bool Expensive = false>
OpDef binary_op(std::string_view name) {
  OpDef def;
  def.name = name;
  def.infer = infer_binary<Set, BoolOutput>;
  def.kernels[static_cast<int>(DeviceType::CPU)] = cpu::binary_kernel<F, Set, Expensive>;
  if (cuda::has_elementwise_kernel(name))
    def.kernels[static_cast<int>(DeviceType::CUDA)] = cuda::elementwise_kernel;
  def.traits.elementwise = true;
  def.traits.in_place = true;  // the row loops of backends/cpu/elementwise.h allow it
  def.elementwise_block = elementwise_block_of<F, Set, 2, BoolOutput, Expensive>();
  return def;
}

// OpDef of a unary elementwise op computed by functor F on the dtypes in Set.
template <class F, DTypeSet Set, bool BoolOutput = false, bool Expensive = false>
OpDef unary_op(std::string_view name, std::vector<std::string_view> attr_names = {}) {
  OpDef def;
  def.name = name;
  def.attr_names = std::move(attr_names);
  def.infer = infer_unary<Set, BoolOutput>;
  def.kernels[static_cast<int>(DeviceType::CPU)] = cpu::unary_kernel<F, Set, Expensive>;
  if (cuda::has_elementwise_kernel(name))
    def.kernels[static_cast<int>(DeviceType::CUDA)] = cuda::elementwise_kernel;
  def.traits.elementwise = true;
  def.traits.in_place = true;  // the row loops of backends/cpu/elementwise.h allow it
  def.elementwise_block = elementwise_block_of<F, Set, 1, BoolOutput, Expensive>();
  return def;
}

// `def` left out of fusion: for elementwise ops whose functor is not one of
// backends/cpu/elementwise_functors.h's (special functions with series of their own),
// since fused programs name only the shared functors (Note [compiled fused kernels]).
inline OpDef not_fused(OpDef def) {
  def.elementwise_block = {};
  return def;
}

// A device kernel that runs the op's CPU kernel `Cpu` on host copies of the inputs and
// copies the outputs to the device. For ops whose outputs are a few numbers computed
// from attrs and shapes (range, eye, shape), whose output shape depends on values
// (where), or whose numbers must be exactly the CPU's (the random ops, until their
// counter-based generator runs on devices too). Not for anything else.
template <KernelFn Cpu>
void computed_on_host(const OpCall& call, std::span<Tensor> outputs) {
  std::vector<Tensor> inputs;
  for (const Tensor& t : call.inputs) inputs.push_back(t.cpu());
  std::vector<Tensor> host(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i)
    host[i] = empty_tensor(outputs[i].dtype(), outputs[i].shape(), kCPU, call.op.name);
  Cpu(OpCall{call.op, inputs, call.attrs}, host);
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i] = host[i].to(outputs[i].device());
}

// Runs a composite op's body, adding the user's call site to an error it raises (before
// or between the ops it runs), as dispatch does for primitive ops.
template <class Body>
auto with_call_site(CallSite where, Body&& body) {
  try {
    return body();
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

// `def` with its gradient function set (for OpDefs made by the builders above), and
// the forward values it reads (Note [gradient uses] in op_def.h).
inline OpDef with_gradient(OpDef def, GradFn gradient, GradientUses uses = {}) {
  def.gradient = gradient;
  def.gradient_uses = uses;
  return def;
}

// `def` marked as having no gradient, saying why.
inline OpDef not_differentiable(OpDef def, std::string_view reason) {
  def.not_differentiable = reason;
  return def;
}

}  // namespace ef::detail
