// OpDef: the single definition of a primitive op — its name, attributes, shape and
// dtype inference, kernels per device, gradient and traits. Each op's OpDef lives in
// one file under src/ops/<family>/ next to its public function, which keeps a direct
// reference to it (no look-up by name on the hot path). See docs/dev/adding_an_op.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/attrs.h"

namespace ef {

class OpDef;

// Dtype and (possibly partial, see Note [unknown dimensions]) shape of an op output.
struct TensorMeta {
  DType dtype = DType::Float32;
  Shape shape;
};

// The outputs an op's inference produced. Keeps two inline so that single-output
// ops allocate nothing here.
class OutputMetas {
 public:
  void add(DType dtype, Shape shape) {
    if (count_ < 2) inline_[count_] = {dtype, std::move(shape)};
    else more_.push_back({dtype, std::move(shape)});
    ++count_;
  }
  size_t size() const { return count_; }
  const TensorMeta& operator[](size_t i) const { return i < 2 ? inline_[i] : more_[i - 2]; }

 private:
  TensorMeta inline_[2];
  std::vector<TensorMeta> more_;
  size_t count_ = 0;
};

// The tensor inputs of an op call: a span whose indexing is checked. An op's public
// function always passes its op's number of inputs, but a graph read from a file may
// name any number (Note [loading validates everything] in saved_model.h), and inference
// reads the inputs it expects: reading past the end throws InvalidArgumentError instead
// of reading out of bounds, whether or not the op checks its input count itself.
class OpInputs {
 public:
  OpInputs() = default;
  OpInputs(std::span<const Tensor> inputs) : inputs_(inputs) {}     // NOLINT: implicit by design
  OpInputs(const std::vector<Tensor>& inputs) : inputs_(inputs) {}  // NOLINT

  const Tensor& operator[](size_t i) const {
    if (i >= inputs_.size()) [[unlikely]]
      fail_missing(i);
    return inputs_[i];
  }
  size_t size() const { return inputs_.size(); }
  bool empty() const { return inputs_.empty(); }
  const Tensor* begin() const { return inputs_.data(); }
  const Tensor* end() const { return inputs_.data() + inputs_.size(); }
  std::span<const Tensor> subspan(size_t offset, size_t count = std::dynamic_extent) const {
    if (offset > inputs_.size() || (count != std::dynamic_extent && count > inputs_.size() - offset))
        [[unlikely]]
      fail_missing(offset + (count == std::dynamic_extent ? 0 : count));
    return inputs_.subspan(offset, count);
  }
  operator std::span<const Tensor>() const { return inputs_; }  // NOLINT

 private:
  [[noreturn]] void fail_missing(size_t i) const {
    fail("op call: input ", i, " is read but the call has only ", inputs_.size(), " inputs");
  }
  std::span<const Tensor> inputs_;
};

// What inference and kernels see of one call.
struct OpCall {
  const OpDef& op;
  OpInputs inputs;
  const Attrs& attrs;
};

// Validates inputs and attrs and describes the outputs. Must throw a typed Error
// naming the op, the argument and the shapes/dtypes for every bad input. Serves eager
// and graph mode alike, so it must accept symbolic inputs with unknown dimensions.
using InferFn = void (*)(const OpCall& call, OutputMetas& outputs);

// Computes the outputs. For ordinary ops `outputs` arrive allocated (contiguous, of
// the inferred dtype and shape); for view ops (OpTraits::view) they arrive undefined
// and the kernel sets them to views of an input.
using KernelFn = void (*)(const OpCall& call, std::span<Tensor> outputs);

// Inputs of a gradient function: the forward call and the gradients flowing into its
// outputs (undefined where an output received none).
struct GradCall {
  const OpCall& forward;
  std::span<const Tensor> outputs;
  std::span<const Tensor> output_grads;
  // Per input: whether its gradient is wanted (empty: all are). A gradient function may
  // return an undefined tensor for an input that is not, and skip computing it.
  std::span<const bool> needs_grad = {};

  bool needs(size_t input) const { return needs_grad.empty() || needs_grad[input]; }
};
// Returns one gradient per input (undefined for inputs that get none), written with
// public ops so it runs eagerly, in graphs, and can itself be differentiated.
using GradFn = std::vector<Tensor> (*)(const GradCall& call);

// Inputs of a forward-mode rule (Note [forward mode] in autodiff/forward_accumulator.h):
// the forward call, its outputs, and one tangent per input, undefined where the input
// has none (a zero tangent). At least one tangent is defined.
struct JvpCall {
  const OpCall& forward;
  std::span<const Tensor> outputs;
  std::span<const Tensor> input_tangents;

  bool has_tangent(size_t input) const {
    return input < input_tangents.size() && input_tangents[input].defined();
  }
};
// Returns one tangent per output (undefined where it is zero), written with public ops
// so that it runs eagerly and in graphs and can itself be differentiated, in either mode.
using JvpFn = std::vector<Tensor> (*)(const JvpCall& call);

// Inputs of a batching rule (Note [vectorization] in eagerflow/graph/vectorized_map.h):
// the op's call, in which each batched input carries the batch as its first axis and
// every other input is as in the unbatched program.
struct BatchCall {
  const OpCall& call;
  std::span<const bool> batched;  // per input
  int64_t batch_size;             // kUnknownDim while tracing with an unknown batch

  bool is_batched(size_t input) const { return input < batched.size() && batched[input]; }
  const Tensor& input(size_t i) const { return call.inputs[i]; }
  const Attrs& attrs() const { return call.attrs; }
};
// Returns every output with the batch as its first axis, written with public ops; or
// nothing, to decline this combination of batched inputs (vectorized_map then runs the
// op once per element).
using BatchFn = std::vector<Tensor> (*)(const BatchCall& call);

// Note [gradient uses]: a tape keeps, for each recorded op, the forward values its
// gradient function may read, and nothing else. An op declares in its OpDef which of
// its inputs and outputs the gradient reads; the default is all of them, so an op that
// declares nothing behaves as if every value were kept. For each value that the
// gradient does not read, the tape records a stand-in instead: a tensor with the same
// identity on the tape, dtype, shape and device, but no storage (a symbolic tensor whose
// SymbolicValue says the tape released it). The real tensor is then freed as soon as
// the program drops it, as PyTorch's autograd frees what no backward node saved: for a
// dense layer's matmul the output (often the largest tensor of the step) is not kept.
//
// Reading a stand-in's shape, dtype or device works (backprop sums broadcast gradients
// down to input shapes); reading its values fails loudly: data()/item() throw, and an
// op given one throws FailedPreconditionError naming the op and Note. So an op marked
// wrongly fails in its gradient tests (first and second order) rather than giving wrong
// numbers. Declare a value unread only after reading the gradient function: passing it
// to any op counts as a read, even to one that looks only at its shape (zeros_like(x));
// use x.shape() and x.dtype() instead. Outputs that are views of inputs (Note [views]) share
// their input's storage: releasing them frees nothing but the handle, which is harmless.
// Symbolic values (graph mode) have no memory and are always kept.

// Bit masks over an op's inputs or outputs for GradientUses: bit i is value i, and bit
// 63 stands for every value from 63 on.
inline constexpr uint64_t kAllValues = ~uint64_t{0};
inline constexpr uint64_t kNoValues = 0;
constexpr uint64_t value_bit(int i) { return uint64_t{1} << i; }

// Which forward values an op's gradient function reads (Note [gradient uses]).
struct GradientUses {
  uint64_t inputs = kAllValues;
  uint64_t outputs = kAllValues;

  bool reads_input(size_t i) const { return (inputs >> std::min<size_t>(i, 63)) & 1; }
  bool reads_output(size_t k) const { return (outputs >> std::min<size_t>(k, 63)) & 1; }
  bool reads_all() const { return inputs == kAllValues && outputs == kAllValues; }
};

// The common cases, for OpDefs to cite.
inline constexpr GradientUses kGradientReadsInputs{.inputs = kAllValues, .outputs = kNoValues};
inline constexpr GradientUses kGradientReadsOutputs{.inputs = kNoValues, .outputs = kAllValues};
inline constexpr GradientUses kGradientReadsNoValues{.inputs = kNoValues, .outputs = kNoValues};

// Properties that passes and tooling read from the op itself, never from lists kept
// elsewhere.
struct OpTraits {
  bool elementwise = false;  // output element i depends only on input elements i (after broadcasting)
  bool reduction = false;
  bool view = false;         // outputs alias an input's storage (Note [views])
  bool random = false;       // output depends on a random stream: never fold or deduplicate
  bool stateful = false;
  // Output 0 may be written into the buffer of an input of its dtype and shape (same
  // element for element): the kernel reads each element of that input before writing
  // the same element of the output, and nothing else. The graph executor uses it to
  // reuse a dead input's buffer (Note [in-place reuse] in src/graph/executor.cpp).
  bool in_place = false;
  // Accepts complex64/complex128 inputs and outputs (on the CPU); the dispatcher refuses
  // complex tensors to every other op (Note [complex dtypes] in core/dtype.h).
  bool complex = false;
};

// Note [elementwise blocks]: an elementwise op computed by one scalar functor also
// exposes that functor as a block function, which computes the op over n contiguous
// elements of one dtype into `out`; each input is either n contiguous elements or, where
// in_is_scalar says so, a single element broadcast to all n. fused_elementwise
// (src/ops/math/fused_elementwise.cpp) chains block functions over cache-sized blocks,
// so a fused chain runs the very same code as the ops called one by one. The builders
// unary_op and binary_op (src/ops/op_helpers.h) fill it in from the functor.
using ElementwiseBlockFn = void (*)(DType dtype, int64_t n, void* out, std::span<const void* const> in,
                                   std::span<const bool> in_is_scalar);
struct ElementwiseBlock {
  ElementwiseBlockFn fn = nullptr;  // null: the op cannot be fused
  int arity = 0;                    // number of inputs fn reads
  uint32_t dtypes = 0;              // bit i set: fn computes DType i (output dtype = input dtype)
  double cost_ns = 0;               // rough time per element, for threading decisions
  // The functor's qualified name when it is one of src/backends/cpu/elementwise_functors.h,
  // which compiled fused kernels call (Note [compiled fused kernels]), else empty; and the
  // dtypes in which they may call it (those it computes without libm).
  std::string_view functor;
  uint32_t compiled_dtypes = 0;
};

class OpDef {
 public:
  std::string_view name;
  std::vector<std::string_view> attr_names;
  InferFn infer = nullptr;
  KernelFn kernels[kNumDeviceTypes] = {};
  GradFn gradient = nullptr;
  // The forward values `gradient` reads; the rest are not kept by tapes.
  GradientUses gradient_uses;
  // Set instead of `gradient` for ops that have no gradient, saying why.
  std::string_view not_differentiable;
  // The forward-mode rule. Null on a differentiable op: a tangent reaching it throws
  // UnimplementedError. Ops marked not_differentiable give no tangent, as they give no
  // gradient.
  JvpFn jvp = nullptr;
  // The batching rule (Note [vectorization]). Null: vectorized_map runs the op once per
  // element. define_op gives ops marked elementwise the shared rule when they have none.
  BatchFn batch = nullptr;
  OpTraits traits;
  // Set for elementwise ops that fused_elementwise can run (Note [elementwise blocks]).
  ElementwiseBlock elementwise_block;
};

// Registers `def` under its name and returns the stored definition, whose address is
// stable for the life of the program. Throws InternalError for a duplicate name, a
// definition without inference, or one with neither a gradient nor a reason for
// having none.
const OpDef& define_op(OpDef def);

// Every registered op, sorted by name (for graph mode and tooling).
std::vector<const OpDef*> registered_ops();
// The op called `name`; throws NotFoundError.
const OpDef& find_op(std::string_view name);

}  // namespace ef
