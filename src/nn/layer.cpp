// Layer's lazy build (eagerflow/nn/layer.h).
#include "eagerflow/nn/layer.h"

#include <algorithm>

#include "eagerflow/graph/function.h"
#include "eagerflow/ops/math.h"

namespace ef::nn {

namespace {

// A floating input in the policy's compute dtype (Keras casts layer inputs so).
Tensor in_compute_dtype(const Tensor& input, const Policy& policy) {
  const DType compute = policy.compute_dtype();
  return is_floating(input.dtype()) && input.dtype() != compute ? cast(input, compute) : input;
}

// The dtype a mixed policy's variables are read in during the call.
std::optional<DType> autocast_of(const Policy& policy) {
  return policy.is_mixed() ? std::optional(policy.compute_dtype()) : std::nullopt;
}

}  // namespace

// The variables take the policy's variable dtype, else the input's when floating.
void Layer::build_for(const Shape& input_shape, DType dtype) {
  if (!built_) build_for(std::vector<Shape>{input_shape}, dtype);  // no vector on every call
}

void Layer::build_for(const std::vector<Shape>& input_shapes, DType dtype) {
  if (built_) return;
  dtype_ = policy_ ? policy_->variable_dtype() : is_floating(dtype) ? dtype : DType::Float32;
  build_inputs(input_shapes);
  built_input_shape_ = input_shapes.at(0);
  built_ = true;  // only after build succeeded, so a failed build can be retried
}

Tensor Layer::operator()(const Tensor& inputs, bool training, CallSite where) {
  try {
    if (!inputs.defined()) fail("layer '", name(), "': called with an undefined tensor");
    build_for(inputs.shape(), inputs.dtype());
    if (!policy_) return call(inputs, training);
    AutoCastScope autocast(autocast_of(*policy_));
    return call(in_compute_dtype(inputs, *policy_), training);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

void Layer::build_inputs(const std::vector<Shape>& input_shapes) {
  // Layers of several inputs that own variables build in their override; call_inputs
  // refuses several inputs for the others.
  if (input_shapes.size() == 1) build(input_shapes[0]);
}

std::vector<Tensor> Layer::call_inputs(const std::vector<Tensor>& inputs, bool training) {
  if (inputs.size() != 1) fail("layer '", name(), "' takes one input tensor, got a list of ", inputs.size());
  return {call(inputs[0], training)};
}

std::vector<Tensor> Layer::call_all(const std::vector<Tensor>& inputs, bool training, CallSite where) {
  return call_all(inputs, std::nullopt, training, where);
}

std::vector<Tensor> Layer::call_all(const std::vector<Tensor>& inputs, const std::optional<Tensor>& mask,
                                    bool training, CallSite where) {
  std::vector<std::optional<Tensor>> masks;
  if (mask) masks.push_back(mask);
  return call_all_masked(inputs, masks, training, where);
}

std::vector<Tensor> Layer::call_all_masked(const std::vector<Tensor>& inputs,
                                           const std::vector<std::optional<Tensor>>& masks, bool training,
                                           CallSite where) {
  try {
    if (inputs.empty()) fail("layer '", name(), "': called with an empty list of inputs");
    std::vector<Shape> shapes;
    shapes.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined()) fail("layer '", name(), "': input ", i, " is an undefined tensor");
      shapes.push_back(inputs[i].shape());
    }
    build_for(shapes, inputs[0].dtype());
    const bool masked = std::any_of(masks.begin(), masks.end(), [](const auto& m) { return m.has_value(); });
    auto run = [&](const std::vector<Tensor>& args) {
      return masked ? call_with_masks(args, masks, training) : call_inputs(args, training);
    };
    if (!policy_) return run(inputs);
    std::vector<Tensor> cast_inputs;
    cast_inputs.reserve(inputs.size());
    for (const Tensor& t : inputs) cast_inputs.push_back(in_compute_dtype(t, *policy_));
    AutoCastScope autocast(autocast_of(*policy_));
    return run(cast_inputs);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor Layer::operator()(const std::vector<Tensor>& inputs, bool training, CallSite where) {
  return only_output(call_all(inputs, training, where), where);
}

std::optional<Tensor> Layer::compute_mask(const std::vector<Tensor>& inputs,
                                          const std::optional<Tensor>& mask) const {
  (void)inputs;
  return supports_masking() ? mask : std::nullopt;
}

Variable Layer::add_weight(const std::string& name, const Shape& shape, const Initializer& initializer,
                           bool trainable) {
  InitScope init;  // built inside a function: on its first trace (Note [variables created by functions])
  Tensor initial = initializer(shape, dtype_);
  if (initial.shape() != shape || initial.dtype() != dtype_)
    fail("layer '", this->name(), "': initializer '", initializer.name(), "' for \"", name, "\" returned shape ",
         initial.shape(), " ", initial.dtype(), " where ", shape, " ", dtype_, " was asked for");
  Variable variable(initial, this->name() + "/" + name, trainable);
  variable.set_autocast(policy_ && policy_->is_mixed() && is_floating(dtype_));
  return track_variable(name, variable);
}

void Layer::set_dtype_policy(const Policy& policy) {
  if (built_)
    fail<FailedPreconditionError>("layer '", name(), "': set_dtype_policy('", policy.name(),
                                  "') after the layer was built; set it before its first call");
  policy_ = policy;
}

Config Layer::get_config() const {
  Config config = Config().set("name", name());
  if (policy_) config.set("dtype", policy_->name());
  return config;
}

Variable Layer::built_variable(const std::optional<Variable>& variable, const char* what) const {
  if (!variable)
    fail<FailedPreconditionError>("layer '", name(), "' has no ", what, " yet: it is built on its first call");
  return *variable;
}

}  // namespace ef::nn
