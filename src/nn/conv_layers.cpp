// Conv2D, MaxPool2D, AveragePool2D, BatchNormalization over the ops of
// eagerflow/ops/conv.h: the ops validate shapes and own the gradients.
#include "eagerflow/nn/conv_layers.h"

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/conv.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/runtime/context.h"
#include "nn/conv_arguments.h"
#include "nn/normalization_params.h"

namespace ef::nn {

namespace {

using detail::op_padding;
using detail::two;

void check_images(const Layer& layer, const char* type, const Tensor& inputs) {
  if (inputs.rank() != 4)
    fail("layer '", layer.name(), "' (", type, ") needs NHWC inputs of rank 4, got shape ", inputs.shape());
}

}  // namespace

// ---- Conv2D ----

Conv2D::Conv2D(int64_t filters, Window kernel_size, Conv2DOptions options)
    : Layer(options.name),
      filters_(filters),
      kernel_size_(two("Conv2D", "kernel_size", std::move(kernel_size))),
      options_(std::move(options)),
      padding_(op_padding("Conv2D", options_.padding)) {
  if (filters <= 0) fail("Conv2D: argument 'filters' must be positive, got ", filters);
  options_.strides = two("Conv2D", "strides", options_.strides);
  options_.dilation_rate = two("Conv2D", "dilation_rate", options_.dilation_rate);
}

Variable Conv2D::kernel() const { return built_variable(kernel_, "kernel"); }
Variable Conv2D::bias() const { return built_variable(bias_, "bias"); }

void Conv2D::build(const Shape& input_shape) {
  if (input_shape.rank() != 4 || input_shape[3] < 0)
    fail("layer '", name(), "' (Conv2D) needs NHWC inputs of rank 4 with a known channel count, got shape ",
         input_shape);
  kernel_ = add_weight("kernel", {kernel_size_[0], kernel_size_[1], input_shape[3], filters_},
                       options_.kernel_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", {filters_}, options_.bias_initializer);
}

Tensor Conv2D::call(const Tensor& inputs, bool) {
  check_images(*this, "Conv2D", inputs);
  const int64_t channels = kernel_->shape()[2];
  if (inputs.shape()[3] != channels)
    fail("layer '", name(), "' (Conv2D) was built for ", channels, " input channels, got inputs of shape ",
         inputs.shape());
  Tensor y = conv2d(inputs, *kernel_, options_.strides, padding_, options_.dilation_rate);
  if (bias_) y = y + *bias_;
  return options_.activation(y);
}

// ---- Pooling ----

MaxPool2D::MaxPool2D(Window pool_size, Pool2DOptions options)
    : Layer(options.name.empty() ? "max_pooling2d" : options.name),
      pool_size_(two("MaxPool2D", "pool_size", std::move(pool_size))),
      strides_(options.strides ? two("MaxPool2D", "strides", *options.strides) : pool_size_),
      padding_(op_padding("MaxPool2D", options.padding)) {}

Tensor MaxPool2D::call(const Tensor& inputs, bool) {
  check_images(*this, "MaxPool2D", inputs);
  return max_pool2d(inputs, pool_size_, strides_, padding_);
}

AveragePool2D::AveragePool2D(Window pool_size, Pool2DOptions options)
    : Layer(options.name.empty() ? "average_pooling2d" : options.name),
      pool_size_(two("AveragePool2D", "pool_size", std::move(pool_size))),
      strides_(options.strides ? two("AveragePool2D", "strides", *options.strides) : pool_size_),
      padding_(op_padding("AveragePool2D", options.padding)) {}

Tensor AveragePool2D::call(const Tensor& inputs, bool) {
  check_images(*this, "AveragePool2D", inputs);
  return avg_pool2d(inputs, pool_size_, strides_, padding_);
}

// ---- BatchNormalization ----

BatchNormalization::BatchNormalization(BatchNormalizationOptions options)
    : Layer(options.name), options_(std::move(options)) {
  detail::check_epsilon("BatchNormalization", options_.epsilon);
  if (!(options_.momentum >= 0 && options_.momentum <= 1))
    fail("BatchNormalization: argument 'momentum' must be in [0, 1], got ", options_.momentum);
}

Variable BatchNormalization::moving_mean() const { return built_variable(moving_mean_, "moving_mean"); }
Variable BatchNormalization::moving_variance() const {
  return built_variable(moving_variance_, "moving_variance");
}

void BatchNormalization::build(const Shape& input_shape) {
  detail::NormalizationParams params =
      detail::build_normalization_params(*this, "BatchNormalization", input_shape, options_);
  axis_ = params.axis;
  gamma_ = params.gamma;
  beta_ = params.beta;
  const Shape param_shape{input_shape[axis_]};
  moving_mean_ = add_weight("moving_mean", param_shape, options_.moving_mean_initializer, /*trainable=*/false);
  moving_variance_ =
      add_weight("moving_variance", param_shape, options_.moving_variance_initializer, /*trainable=*/false);
}

std::pair<Tensor, Tensor> BatchNormalization::batch_moments(const Tensor& inputs,
                                                            const std::vector<int64_t>& axes) {
  return moments(inputs, axes, /*keepdims=*/true);
}

Tensor BatchNormalization::call(const Tensor& inputs, bool training) {
  if (inputs.rank() <= axis_ || inputs.shape()[axis_] != moving_mean_->shape()[0])
    fail("layer '", name(), "' (BatchNormalization) was built for ", moving_mean_->shape()[0],
         " features on axis ", axis_, ", got inputs of shape ", inputs.shape());
  // Parameters shaped to broadcast along axis_.
  const Shape broadcast = detail::broadcast_along(inputs, axis_);
  Tensor gamma = gamma_ ? reshape(*gamma_, broadcast) : Tensor();
  Tensor beta = beta_ ? reshape(*beta_, broadcast) : Tensor();
  if (!training)
    return batch_normalization(inputs, reshape(*moving_mean_, broadcast), reshape(*moving_variance_, broadcast),
                               beta, gamma, options_.epsilon);
  std::vector<int64_t> axes;
  for (int d = 0; d < inputs.rank(); ++d)
    if (d != axis_) axes.push_back(d);
  auto [mean, variance] = batch_moments(inputs, axes);
  {
    // The moving statistics follow the batch's (Note [state updates are not recorded]).
    RecordingPaused paused;
    const double m = options_.momentum;
    const Shape features = moving_mean_->shape();
    moving_mean_->assign(moving_mean_->value() * m + reshape(mean, features) * (1 - m));
    moving_variance_->assign(moving_variance_->value() * m + reshape(variance, features) * (1 - m));
  }
  return batch_normalization(inputs, mean, variance, beta, gamma, options_.epsilon);
}

}  // namespace ef::nn
