// Layer: a Module that maps a tensor to a tensor and creates its variables on the
// first call, when the input's shape is known (Keras' lazy build).
//
//   struct Scale : ef::nn::Layer {
//     Scale() : Layer("scale") {}
//     void build(const ef::Shape& input_shape) override {
//       factor_ = add_weight("factor", {input_shape[input_shape.rank() - 1]}, "ones");
//     }
//     ef::Tensor call(const ef::Tensor& x, bool /*training*/) override { return x * factor_; }
//     ef::Variable factor_{ef::zeros({0})};
//   };
//
// The variables take the layer's dtype: its policy's variable dtype when it has a
// policy (eagerflow/nn/mixed_precision.h: the global one when the layer was made, or
// set_dtype_policy), else the first input's if it is floating, float32 otherwise
// (integer ids into an Embedding, say).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "eagerflow/nn/config.h"
#include "eagerflow/nn/initializers.h"
#include "eagerflow/nn/mixed_precision.h"
#include "eagerflow/nn/module.h"

namespace ef::nn {

class KerasTensor;  // eagerflow/nn/functional.h

class Layer : public Module {
 public:
  explicit Layer(std::string name = "layer") : Module(std::move(name)), policy_(global_policy()) {}

  // Builds on first use, then runs call(). `training` switches layers such as Dropout
  // and BatchNormalization between their training and inference behaviour.
  Tensor operator()(const Tensor& inputs, bool training = false, CallSite where = CallSite::current());
  // Several inputs (Concatenate()({a, b}), MultiHeadAttention) to the layer's one output.
  Tensor operator()(const std::vector<Tensor>& inputs, bool training = false,
                    CallSite where = CallSite::current());
  // Every output, for layers with several (a functional model with several outputs).
  std::vector<Tensor> call_all(const std::vector<Tensor>& inputs, bool training = false,
                               CallSite where = CallSite::current());
  // The same with the mask of the first input (Note [masks]).
  std::vector<Tensor> call_all(const std::vector<Tensor>& inputs, const std::optional<Tensor>& mask,
                               bool training = false, CallSite where = CallSite::current());
  // The same with each input's mask (a functional model's layer of several inputs).
  std::vector<Tensor> call_all_masked(const std::vector<Tensor>& inputs,
                                      const std::vector<std::optional<Tensor>>& masks, bool training = false,
                                      CallSite where = CallSite::current());

  // Note [masks]: a mask is a [batch, steps] bool tensor saying which steps of a padded
  // sequence are real (Keras' masking). Masking and Embedding(mask_zero) make one;
  // Sequential and Functional models hand it from layer to layer: each layer receives
  // its first input's mask (call_masked) and gives its outputs' (compute_mask).
  // Recurrent layers skip masked steps and GlobalAveragePooling1D leaves them out of
  // its average; layers that work step by step (Dense, Dropout, ...) pass the mask on
  // (supports_masking); any other layer ends it. A model's output that still carries a
  // mask has it weigh its per-step losses and metrics in fit and evaluate (Keras'
  // masked losses: the loss averages over the real steps only).
  virtual bool supports_masking() const { return false; }
  // The mask of this layer's first output for `inputs` carrying `mask`.
  virtual std::optional<Tensor> compute_mask(const std::vector<Tensor>& inputs,
                                             const std::optional<Tensor>& mask) const;

  // The functional API (eagerflow/nn/functional.h): on symbolic inputs the layer builds,
  // works out its outputs' shapes, and records the call for a Functional model. The
  // layer must be held by a std::shared_ptr.
  KerasTensor operator()(const KerasTensor& input, CallSite where = CallSite::current());
  KerasTensor operator()(const std::vector<KerasTensor>& inputs, CallSite where = CallSite::current());
  std::vector<KerasTensor> call_all(const std::vector<KerasTensor>& inputs,
                                    CallSite where = CallSite::current());

  // Builds now for inputs of `input_shape` (dimensions past the first must be known)
  // unless already built.
  void build_for(const Shape& input_shape, DType dtype = DType::Float32);
  // The same for a layer of several inputs.
  void build_for(const std::vector<Shape>& input_shapes, DType dtype = DType::Float32);
  bool built() const { return built_; }
  // The input shape the layer was built for (none before it was built).
  const std::optional<Shape>& built_input_shape() const { return built_input_shape_; }
  // The dtype of the layer's variables (its policy's variable dtype).
  DType dtype() const { return dtype_; }
  // The policy the layer computes with, if any: under one, call() receives floating
  // inputs cast to its compute dtype and reads the layer's variables in it (Keras'
  // dtype= argument). Throws FailedPreconditionError once the layer is built.
  void set_dtype_policy(const Policy& policy);
  const std::optional<Policy>& dtype_policy() const { return policy_; }
  // The dtype call() computes in: the policy's compute dtype, else dtype().
  DType compute_dtype() const { return policy_ ? policy_->compute_dtype() : dtype_; }

  // Keras' class name ("Dense") under which layer_from_config makes it again; empty for
  // a layer that has not registered one (it cannot be saved with its architecture).
  virtual std::string class_name() const { return ""; }
  // What it takes to make the layer again (Keras' get_config): {"name": ...} here,
  // each layer adds its arguments (eagerflow/nn/config.h).
  virtual Config get_config() const;

  // Creates a variable named "<layer>/<name>", filled by `initializer` in the layer's
  // dtype, and tracks it under `name` (Keras' add_weight).
  Variable add_weight(const std::string& name, const Shape& shape, const Initializer& initializer,
                      bool trainable = true);

 protected:
  // Creates the variables for inputs of `input_shape`. The default creates none.
  virtual void build(const Shape& input_shape) { (void)input_shape; }
  // The layer's computation.
  virtual Tensor call(const Tensor& inputs, bool training) = 0;
  // Layers of several inputs or outputs override these (build_inputs when they have
  // variables); the defaults give one input's shape and value to build() and call().
  virtual void build_inputs(const std::vector<Shape>& input_shapes);
  virtual std::vector<Tensor> call_inputs(const std::vector<Tensor>& inputs, bool training);
  // A call whose first input carries `mask`; layers that use masks override it, the
  // default ignores the mask.
  virtual std::vector<Tensor> call_masked(const std::vector<Tensor>& inputs, const Tensor& mask,
                                          bool training) {
    (void)mask;
    return call_inputs(inputs, training);
  }
  // A call whose inputs carry `masks` (one per input, some empty); layers that use the
  // masks of several inputs (MultiHeadAttention) override it, the default hands the
  // first input's to call_masked.
  virtual std::vector<Tensor> call_with_masks(const std::vector<Tensor>& inputs,
                                              const std::vector<std::optional<Tensor>>& masks,
                                              bool training) {
    if (!masks.empty() && masks[0]) return call_masked(inputs, *masks[0], training);
    return call_inputs(inputs, training);
  }
  // `variable` as created by build(), for accessors such as Dense::kernel(); throws
  // FailedPreconditionError naming `what` before the first call.
  Variable built_variable(const std::optional<Variable>& variable, const char* what) const;
  // The one element of `outputs`; InvalidArgumentError naming the layer when a call
  // gave several (call_all returns them all).
  template <class T>
  T only_output(std::vector<T> outputs, CallSite where = CallSite::current()) const {
    if (outputs.size() != 1) {
      InvalidArgumentError error(
          detail::str("layer '", name(), "' gives ", outputs.size(), " outputs; call_all returns them all"));
      error.add_call_site(where);
      throw error;
    }
    return std::move(outputs[0]);
  }

 private:
  bool built_ = false;
  std::optional<Shape> built_input_shape_;
  DType dtype_ = DType::Float32;
  std::optional<Policy> policy_;
};

}  // namespace ef::nn
