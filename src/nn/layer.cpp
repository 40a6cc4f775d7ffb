// Layer's lazy build (eagerflow/nn/layer.h).
#include "eagerflow/nn/layer.h"

#include "eagerflow/graph/function.h"

namespace ef::nn {

void Layer::build_for(const Shape& input_shape, DType dtype) {
  if (built_) return;
  dtype_ = is_floating(dtype) ? dtype : DType::Float32;
  build(input_shape);
  built_input_shape_ = input_shape;
  built_ = true;  // only after build succeeded, so a failed build can be retried
}

Tensor Layer::operator()(const Tensor& inputs, bool training, CallSite where) {
  try {
    if (!inputs.defined()) fail("layer '", name(), "': called with an undefined tensor");
    build_for(inputs.shape(), inputs.dtype());
    return call(inputs, training);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Variable Layer::add_weight(const std::string& name, const Shape& shape, const Initializer& initializer,
                           bool trainable) {
  InitScope init;  // built inside a function: on its first trace (Note [variables created by functions])
  Tensor initial = initializer(shape, dtype_);
  if (initial.shape() != shape || initial.dtype() != dtype_)
    fail("layer '", this->name(), "': initializer '", initializer.name(), "' for \"", name, "\" returned shape ",
         initial.shape(), " ", initial.dtype(), " where ", shape, " ", dtype_, " was asked for");
  return track_variable(name, Variable(initial, this->name() + "/" + name, trainable));
}

Config Layer::get_config() const { return Config().set("name", name()); }

Variable Layer::built_variable(const std::optional<Variable>& variable, const char* what) const {
  if (!variable)
    fail<FailedPreconditionError>("layer '", name(), "' has no ", what, " yet: it is built on its first call");
  return *variable;
}

}  // namespace ef::nn
