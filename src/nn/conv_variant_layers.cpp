// Conv2DTranspose, DepthwiseConv2D and SeparableConv2D over ef::conv2d_transpose,
// ef::depthwise_conv2d and ef::conv2d: the ops validate shapes and own the gradients.
// Their configs are in layer_configs.cpp with the other built-in layers'.
#include "eagerflow/nn/conv_variant_layers.h"

#include <algorithm>
#include <string>

#include "eagerflow/ops/conv.h"
#include "eagerflow/ops/operators.h"
#include "nn/conv_arguments.h"

namespace ef::nn {
namespace {

using detail::op_padding;
using detail::two;

// Checks NHWC inputs against the channel count the layer was built for.
void check_images(const Layer& layer, const char* type, const Tensor& inputs, int64_t channels) {
  if (inputs.rank() != 4)
    fail("layer '", layer.name(), "' (", type, ") needs NHWC inputs of rank 4, got shape ", inputs.shape());
  if (inputs.shape()[3] != channels)
    fail("layer '", layer.name(), "' (", type, ") was built for ", channels,
         " input channels, got inputs of shape ", inputs.shape());
}

void check_build_shape(const Layer& layer, const char* type, const Shape& input_shape) {
  if (input_shape.rank() != 4 || input_shape[3] < 0)
    fail("layer '", layer.name(), "' (", type,
         ") needs NHWC inputs of rank 4 with a known channel count, got shape ", input_shape);
}

void check_multiplier(const char* type, int64_t depth_multiplier) {
  if (depth_multiplier <= 0)
    fail(type, ": argument 'depth_multiplier' must be positive, got ", depth_multiplier);
}

}  // namespace

// ---- Conv2DTranspose ----

Conv2DTranspose::Conv2DTranspose(int64_t filters, Window kernel_size, Conv2DTransposeOptions options)
    : Layer(options.name),
      filters_(filters),
      kernel_size_(two("Conv2DTranspose", "kernel_size", std::move(kernel_size))),
      options_(std::move(options)),
      padding_(op_padding("Conv2DTranspose", options_.padding)) {
  if (filters <= 0) fail("Conv2DTranspose: argument 'filters' must be positive, got ", filters);
  options_.strides = two("Conv2DTranspose", "strides", options_.strides);
  options_.dilation_rate = two("Conv2DTranspose", "dilation_rate", options_.dilation_rate);
  if (options_.output_padding) {
    Window& pad = *options_.output_padding;
    if (pad.size() == 1) pad.push_back(pad[0]);
    // Keras' rule: more padding than a stride would be a row no input reaches.
    if (pad.size() != 2 || pad[0] < 0 || pad[1] < 0 || pad[0] >= options_.strides[0] ||
        pad[1] >= options_.strides[1])
      fail("Conv2DTranspose: argument 'output_padding' must be one or two values in [0, stride), got ",
           Shape(Dims(pad.begin(), pad.end())), " with strides ",
           Shape(Dims(options_.strides.begin(), options_.strides.end())));
  }
}

Variable Conv2DTranspose::kernel() const { return built_variable(kernel_, "kernel"); }
Variable Conv2DTranspose::bias() const { return built_variable(bias_, "bias"); }

// Keras' deconv_output_length for spatial dimension `dim` (0: height, 1: width).
int64_t Conv2DTranspose::output_length(int dim, int64_t input_length) const {
  const int64_t stride = options_.strides[dim];
  const int64_t k = (kernel_size_[dim] - 1) * options_.dilation_rate[dim] + 1;
  const bool same = padding_ == "SAME";
  int64_t length;
  if (!options_.output_padding)
    length = same ? input_length * stride : input_length * stride + std::max<int64_t>(k - stride, 0);
  else
    length = (input_length - 1) * stride + (same ? k % 2 : k) + (*options_.output_padding)[dim];
  // conv2d over the output must give back the input's size, or the op has no transpose
  // to compute (an even window with "same" padding and output_padding 0, say).
  const int64_t back = same ? (length + stride - 1) / stride : (length >= k ? (length - k) / stride + 1 : 0);
  if (length < 0 || back != input_length)
    fail("layer '", name(), "' (Conv2DTranspose): an output of size ", length, " along ",
         dim == 0 ? "height" : "width", " (kernel_size ", kernel_size_[dim], ", strides ", stride,
         ", padding \"", options_.padding, "\", output_padding ",
         options_.output_padding ? std::to_string((*options_.output_padding)[dim]) : std::string("none"),
         ") does not convolve back to the input size ", input_length);
  return length;
}

void Conv2DTranspose::build(const Shape& input_shape) {
  check_build_shape(*this, "Conv2DTranspose", input_shape);
  kernel_ = add_weight("kernel", {kernel_size_[0], kernel_size_[1], filters_, input_shape[3]},
                       options_.kernel_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", {filters_}, options_.bias_initializer);
}

Tensor Conv2DTranspose::call(const Tensor& inputs, bool) {
  check_images(*this, "Conv2DTranspose", inputs, kernel_->shape()[3]);
  const Shape& s = inputs.shape();
  const Shape output_shape{s[0], output_length(0, s[1]), output_length(1, s[2]), filters_};
  Tensor y =
      conv2d_transpose(inputs, *kernel_, output_shape, options_.strides, padding_, options_.dilation_rate);
  if (bias_) y = y + *bias_;
  return options_.activation(y);
}

// ---- DepthwiseConv2D ----

DepthwiseConv2D::DepthwiseConv2D(Window kernel_size, DepthwiseConv2DOptions options)
    : Layer(options.name),
      kernel_size_(two("DepthwiseConv2D", "kernel_size", std::move(kernel_size))),
      options_(std::move(options)),
      padding_(op_padding("DepthwiseConv2D", options_.padding)) {
  check_multiplier("DepthwiseConv2D", options_.depth_multiplier);
  options_.strides = two("DepthwiseConv2D", "strides", options_.strides);
  options_.dilation_rate = two("DepthwiseConv2D", "dilation_rate", options_.dilation_rate);
}

Variable DepthwiseConv2D::kernel() const { return built_variable(kernel_, "kernel"); }
Variable DepthwiseConv2D::bias() const { return built_variable(bias_, "bias"); }

void DepthwiseConv2D::build(const Shape& input_shape) {
  check_build_shape(*this, "DepthwiseConv2D", input_shape);
  const int64_t channels = input_shape[3], m = options_.depth_multiplier;
  kernel_ =
      add_weight("kernel", {kernel_size_[0], kernel_size_[1], channels, m}, options_.depthwise_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", {channels * m}, options_.bias_initializer);
}

Tensor DepthwiseConv2D::call(const Tensor& inputs, bool) {
  check_images(*this, "DepthwiseConv2D", inputs, kernel_->shape()[2]);
  Tensor y = depthwise_conv2d(inputs, *kernel_, options_.strides, padding_, options_.dilation_rate);
  if (bias_) y = y + *bias_;
  return options_.activation(y);
}

// ---- SeparableConv2D ----

SeparableConv2D::SeparableConv2D(int64_t filters, Window kernel_size, SeparableConv2DOptions options)
    : Layer(options.name),
      filters_(filters),
      kernel_size_(two("SeparableConv2D", "kernel_size", std::move(kernel_size))),
      options_(std::move(options)),
      padding_(op_padding("SeparableConv2D", options_.padding)) {
  if (filters <= 0) fail("SeparableConv2D: argument 'filters' must be positive, got ", filters);
  check_multiplier("SeparableConv2D", options_.depth_multiplier);
  options_.strides = two("SeparableConv2D", "strides", options_.strides);
  options_.dilation_rate = two("SeparableConv2D", "dilation_rate", options_.dilation_rate);
}

Variable SeparableConv2D::depthwise_kernel() const {
  return built_variable(depthwise_kernel_, "depthwise_kernel");
}
Variable SeparableConv2D::pointwise_kernel() const {
  return built_variable(pointwise_kernel_, "pointwise_kernel");
}
Variable SeparableConv2D::bias() const { return built_variable(bias_, "bias"); }

void SeparableConv2D::build(const Shape& input_shape) {
  check_build_shape(*this, "SeparableConv2D", input_shape);
  const int64_t channels = input_shape[3], m = options_.depth_multiplier;
  depthwise_kernel_ = add_weight("depthwise_kernel", {kernel_size_[0], kernel_size_[1], channels, m},
                                 options_.depthwise_initializer);
  pointwise_kernel_ =
      add_weight("pointwise_kernel", {1, 1, channels * m, filters_}, options_.pointwise_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", {filters_}, options_.bias_initializer);
}

Tensor SeparableConv2D::call(const Tensor& inputs, bool) {
  check_images(*this, "SeparableConv2D", inputs, depthwise_kernel_->shape()[2]);
  Tensor y = depthwise_conv2d(inputs, *depthwise_kernel_, options_.strides, padding_, options_.dilation_rate);
  y = conv2d(y, *pointwise_kernel_, {1, 1}, "VALID");
  if (bias_) y = y + *bias_;
  return options_.activation(y);
}

}  // namespace ef::nn
