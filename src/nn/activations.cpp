// Activations by Keras name, mapped onto the ops of eagerflow/ops/nn.h and math.h.
#include "eagerflow/nn/activations.h"

#include <map>

#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"

namespace ef::nn {

Activation::Activation(const std::string& name) : name_(name) {
  static const std::map<std::string, Fn> by_name = {
      {"linear", nullptr},
      {"relu", [](const Tensor& x) { return relu(x); }},
      {"relu6", [](const Tensor& x) { return relu6(x); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }},
      {"softmax", [](const Tensor& x) { return softmax(x); }},
      {"log_softmax", [](const Tensor& x) { return log_softmax(x); }},
      {"elu", [](const Tensor& x) { return elu(x); }},
      {"selu", [](const Tensor& x) { return selu(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"softplus", [](const Tensor& x) { return softplus(x); }},
      {"softsign", [](const Tensor& x) { return softsign(x); }},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x); }},
      {"swish", [](const Tensor& x) { return x * sigmoid(x); }},
      {"silu", [](const Tensor& x) { return x * sigmoid(x); }},
      {"exponential", [](const Tensor& x) { return exp(x); }},
      // Keras 3's: relu6(x + 3) / 6 (Keras 2 had clip(0.2 x + 0.5, 0, 1)).
      {"hard_sigmoid", [](const Tensor& x) { return relu6(x + 3.0) / 6.0; }},
      {"hard_silu", [](const Tensor& x) { return x * (relu6(x + 3.0) / 6.0); }},
      {"hard_swish", [](const Tensor& x) { return x * (relu6(x + 3.0) / 6.0); }},
      {"mish", [](const Tensor& x) { return x * tanh(softplus(x)); }},
  };
  auto it = by_name.find(name);
  if (it == by_name.end()) {
    std::string known;
    for (auto& entry : by_name) known += (known.empty() ? "" : ", ") + entry.first;
    fail("unknown activation \"", name, "\"; known: ", known);
  }
  fn_ = it->second;
}

const std::string& Activation::config_name(const std::string& layer) const {
  if (name_ == "custom")
    fail<UnimplementedError>("layer '", layer,
                             "': its activation is a C++ function and has no config to save; ",
                             "use a named activation");
  return name_;
}

}  // namespace ef::nn
