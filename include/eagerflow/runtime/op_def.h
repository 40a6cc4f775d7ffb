// OpDef: the single definition of a primitive op — its name, attributes, shape and
// dtype inference, kernels per device, gradient and traits. Each op's OpDef lives in
// one file under src/ops/<family>/ next to its public function, which keeps a direct
// reference to it (no look-up by name on the hot path). See docs/dev/adding_an_op.md.
#pragma once

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

// What inference and kernels see of one call.
struct OpCall {
  const OpDef& op;
  std::span<const Tensor> inputs;
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

// Properties that passes and tooling read from the op itself, never from lists kept
// elsewhere.
struct OpTraits {
  bool elementwise = false;  // output element i depends only on input elements i (after broadcasting)
  bool reduction = false;
  bool view = false;         // outputs alias an input's storage (Note [views])
  bool random = false;       // output depends on a random stream: never fold or deduplicate
  bool stateful = false;
};

class OpDef {
 public:
  std::string_view name;
  std::vector<std::string_view> attr_names;
  InferFn infer = nullptr;
  KernelFn kernels[kNumDeviceTypes] = {};
  GradFn gradient = nullptr;
  // Set instead of `gradient` for ops that have no gradient, saying why.
  std::string_view not_differentiable;
  OpTraits traits;
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
