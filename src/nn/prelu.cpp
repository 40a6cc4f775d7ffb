// PReLU (eagerflow/nn/prelu.h) and its config.
#include "eagerflow/nn/prelu.h"

#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"

namespace ef::nn {

PReLU::PReLU(PReLUOptions options) : Layer(options.name), options_(std::move(options)) {
  for (int64_t axis : options_.shared_axes)
    if (axis < 1)
      fail("PReLU: argument 'shared_axes' holds ", axis, "; axes count from 1 (0 is the batch axis)");
}

Variable PReLU::alpha() const { return built_variable(alpha_, "alpha"); }

void PReLU::build(const Shape& input_shape) {
  const int64_t rank = input_shape.rank();
  if (rank < 2)
    fail("layer '", name(), "' (PReLU) needs inputs of rank >= 2 [batch, ...], got shape ", input_shape);
  Dims param(input_shape.dims().begin() + 1, input_shape.dims().end());
  for (int64_t axis : options_.shared_axes) {
    if (axis >= rank)
      fail("layer '", name(), "' (PReLU): shared axis ", axis, " is out of range for inputs of shape ",
           input_shape);
    param[axis - 1] = 1;
  }
  for (int64_t d : param)
    if (d < 0)
      fail("layer '", name(), "' (PReLU) needs every non-shared dimension known, got inputs of shape ",
           input_shape);
  alpha_ = add_weight("alpha", Shape(param), options_.alpha_initializer);
}

Tensor PReLU::call(const Tensor& inputs, bool) {
  const Shape& s = inputs.shape();
  const Shape& a = alpha_->shape();
  bool fits = s.rank() == a.rank() + 1;
  for (int d = 0; fits && d < a.rank(); ++d) fits = a[d] == 1 || a[d] == s[d + 1];
  if (!fits)
    fail("layer '", name(), "' (PReLU) has alpha of shape ", a, ", which does not fit inputs of shape ", s);
  return relu(inputs) - *alpha_ * relu(-inputs);
}

Config PReLU::get_config() const {
  Config c = Layer::get_config().set("alpha_initializer", options_.alpha_initializer.get_config());
  return c.set("shared_axes",
               options_.shared_axes.empty() ? ConfigValue(nullptr) : ConfigValue(options_.shared_axes));
}

std::shared_ptr<PReLU> PReLU::from_config(const Config& c) {
  const std::string who = "PReLU config";
  PReLUOptions o;
  o.alpha_initializer = Initializer::from_layer_config(c, "alpha_initializer", who, "zeros");
  o.shared_axes = c.get_optional<std::vector<int64_t>>("shared_axes", who).value_or(std::vector<int64_t>{});
  o.name = c.get<std::string>("name", who, std::string("p_re_lu"));
  return std::make_shared<PReLU>(std::move(o));
}

}  // namespace ef::nn
