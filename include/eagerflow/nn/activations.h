// Activation: the function a layer applies to its output, given by Keras name or as
// any function of a tensor.
//
//   ef::nn::Dense a(64, {.activation = "relu"});
//   ef::nn::Dense b(64, {.activation = [](const ef::Tensor& x) { return x * ef::sigmoid(x); }});
#pragma once

#include <functional>
#include <string>

#include "eagerflow/core/tensor.h"

namespace ef::nn {

class Activation {
 public:
  using Fn = std::function<Tensor(const Tensor&)>;
  // The identity ("linear").
  Activation() = default;
  // By name: linear, relu, relu6, sigmoid, tanh, softmax, log_softmax, elu, selu, gelu,
  // softplus, softsign, leaky_relu, swish (= silu). Unknown names throw
  // InvalidArgumentError listing the known ones.
  Activation(const std::string& name);                             // NOLINT: implicit by design
  Activation(const char* name) : Activation(std::string(name)) {}  // NOLINT
  Activation(Fn fn, std::string name = "custom") : name_(std::move(name)), fn_(std::move(fn)) {}  // NOLINT

  Tensor operator()(const Tensor& x) const { return fn_ ? fn_(x) : x; }
  bool is_linear() const { return !fn_; }
  const std::string& name() const { return name_; }
  // The name a layer config saves; UnimplementedError naming `layer` for a C++ function.
  const std::string& config_name(const std::string& layer) const;

 private:
  std::string name_ = "linear";
  Fn fn_;
};

}  // namespace ef::nn
