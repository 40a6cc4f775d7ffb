// Conv1D and the 1D pooling layers (eagerflow/nn/conv_layers.h): the 2D ops on inputs of
// height 1, so they share those kernels and gradients.
#include <algorithm>

#include "eagerflow/nn/conv_layers.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/conv.h"
#include "eagerflow/ops/operators.h"

namespace ef::nn {
namespace {

void check_sequences(const Layer& layer, const char* type, const Tensor& inputs) {
  if (inputs.rank() != 3)
    fail("layer '", layer.name(), "' (", type, ") needs inputs [batch, steps, channels], got shape ",
         inputs.shape());
}

std::string upper_padding(const char* layer, const std::string& padding, bool causal_allowed) {
  if (padding == "valid") return "VALID";
  if (padding == "same") return "SAME";
  if (padding == "causal" && causal_allowed) return "CAUSAL";
  fail(layer, ": padding must be \"valid\", \"same\"", causal_allowed ? " or \"causal\"" : "", ", got \"",
       padding, "\"");
}

}  // namespace

// ---- Conv1D ----

Conv1D::Conv1D(int64_t filters, int64_t kernel_size, Conv1DOptions options)
    : Layer(options.name), filters_(filters), kernel_size_(kernel_size), options_(std::move(options)) {
  if (filters <= 0 || kernel_size <= 0)
    fail("Conv1D: 'filters' and 'kernel_size' must be positive, got ", filters, " and ", kernel_size);
  if (options_.strides <= 0 || options_.dilation_rate <= 0)
    fail("Conv1D: 'strides' and 'dilation_rate' must be positive");
  upper_padding("Conv1D", options_.padding, true);
}

void Conv1D::build(const Shape& input_shape) {
  if (input_shape.rank() != 3 || input_shape[2] < 0)
    fail("layer '", name(),
         "' (Conv1D) needs inputs [batch, steps, channels] with known channels, got shape ", input_shape);
  kernel_ = add_weight("kernel", {kernel_size_, input_shape[2], filters_}, options_.kernel_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", {filters_}, options_.bias_initializer);
}

Tensor Conv1D::call(const Tensor& inputs, bool) {
  check_sequences(*this, "Conv1D", inputs);
  const int64_t channels = kernel_->shape()[1];
  if (inputs.shape()[2] != channels)
    fail("layer '", name(), "' (Conv1D) was built for ", channels, " input channels, got inputs of shape ",
         inputs.shape());
  std::string padding = upper_padding("Conv1D", options_.padding, true);
  Tensor x = inputs;
  if (padding == "CAUSAL") {  // the output at step t sees steps <= t only
    x = pad(x, {{0, 0}, {(kernel_size_ - 1) * options_.dilation_rate, 0}, {0, 0}});
    padding = "VALID";
  }
  const Tensor kernel = reshape(*kernel_, {1, kernel_size_, channels, filters_});
  Tensor y = conv2d(expand_dims(x, 1), kernel, {1, options_.strides}, padding, {1, options_.dilation_rate});
  y = squeeze(y, 1);
  if (bias_) y = y + *bias_;
  return options_.activation(y);
}

// ---- 1D pooling ----

Pool1D::Pool1D(bool max, int64_t pool_size, std::optional<int64_t> strides, std::string padding,
               std::string name)
    : Layer(name.empty() ? (max ? "max_pooling1d" : "average_pooling1d") : std::move(name)),
      max_(max),
      pool_size_(pool_size),
      strides_(strides.value_or(pool_size)),
      padding_(std::move(padding)) {
  if (pool_size <= 0 || strides_ <= 0) fail(class_name(), ": pool_size and strides must be positive");
  upper_padding(max ? "MaxPooling1D" : "AveragePooling1D", padding_, false);
}

Tensor Pool1D::call(const Tensor& inputs, bool) {
  check_sequences(*this, max_ ? "MaxPooling1D" : "AveragePooling1D", inputs);
  const std::string padding = upper_padding("Pool1D", padding_, false);
  const Tensor x = expand_dims(inputs, 1);
  const Tensor y = max_ ? max_pool2d(x, {1, pool_size_}, {1, strides_}, padding)
                        : avg_pool2d(x, {1, pool_size_}, {1, strides_}, padding);
  return squeeze(y, 1);
}

Config Pool1D::get_config() const {
  return Layer::get_config().set("pool_size", pool_size_).set("strides", strides_).set("padding", padding_);
}

std::shared_ptr<Pool1D> Pool1D::from_config(bool max, const Config& c) {
  const std::string who = max ? "MaxPooling1D config" : "AveragePooling1D config";
  return std::make_shared<Pool1D>(
      max, c.get<int64_t>("pool_size", who, int64_t{2}), c.get_optional<int64_t>("strides", who),
      c.get<std::string>("padding", who, std::string("valid")),
      c.get<std::string>("name", who, std::string(max ? "max_pooling1d" : "average_pooling1d")));
}

}  // namespace ef::nn
