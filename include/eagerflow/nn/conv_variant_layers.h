// Convolution variants on NHWC images (Keras' names, arguments, defaults and weight
// layouts): transposed, depthwise and depthwise-separable convolutions. Padding is
// "valid" or "same" in either case; windows take one value (both dimensions) or two.
//
//   ef::nn::Sequential decoder;
//   decoder.add(std::make_shared<ef::nn::Conv2DTranspose>(32, ef::nn::Window{3},
//                                                         ef::nn::Conv2DTransposeOptions{.strides = {2}}));
//   decoder.add(std::make_shared<ef::nn::SeparableConv2D>(16, ef::nn::Window{3}));
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "eagerflow/nn/conv_layers.h"

namespace ef::nn {

struct Conv2DTransposeOptions {
  Window strides = {1, 1};
  std::string padding = "valid";
  // Extra rows and columns at the bottom and right (each < its stride); none: Keras'
  // default output size, in * stride ("same") or in * stride + max(k - stride, 0).
  std::optional<Window> output_padding;
  Window dilation_rate = {1, 1};
  Activation activation = {};
  bool use_bias = true;
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::string name = "conv2d_transpose";
};

// activation(conv2d_transpose(inputs, kernel) + bias): inputs [N, H, W, C], kernel
// [KH, KW, filters, C] (Keras' layout), output [N, H', W', filters] with H' as Keras'
// deconv_output_length. Throws InvalidArgumentError naming the layer for another
// channel count than it was built for, or an output_padding the output cannot take.
class Conv2DTranspose : public Layer {
 public:
  Conv2DTranspose(int64_t filters, Window kernel_size, Conv2DTransposeOptions options = {});
  std::string class_name() const override { return "Conv2DTranspose"; }
  Config get_config() const override;
  static std::shared_ptr<Conv2DTranspose> from_config(const Config& config);
  Variable kernel() const;
  Variable bias() const;

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t output_length(int dim, int64_t input_length) const;
  int64_t filters_;
  Window kernel_size_;
  Conv2DTransposeOptions options_;
  std::string padding_;  // "SAME" or "VALID", as the op takes it
  std::optional<Variable> kernel_, bias_;
};

struct DepthwiseConv2DOptions {
  Window strides = {1, 1};
  std::string padding = "valid";
  int64_t depth_multiplier = 1;
  Window dilation_rate = {1, 1};
  Activation activation = {};
  bool use_bias = true;
  Initializer depthwise_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::string name = "depthwise_conv2d";
};

// activation(depthwise_conv2d(inputs, kernel) + bias): each input channel convolved
// with its own depth_multiplier filters; kernel [KH, KW, C, depth_multiplier], output
// channels C * depth_multiplier (channel c's filters together). The weight is named
// "kernel", as in Keras 3.
class DepthwiseConv2D : public Layer {
 public:
  explicit DepthwiseConv2D(Window kernel_size, DepthwiseConv2DOptions options = {});
  std::string class_name() const override { return "DepthwiseConv2D"; }
  Config get_config() const override;
  static std::shared_ptr<DepthwiseConv2D> from_config(const Config& config);
  Variable kernel() const;
  Variable bias() const;

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  Window kernel_size_;
  DepthwiseConv2DOptions options_;
  std::string padding_;
  std::optional<Variable> kernel_, bias_;
};

struct SeparableConv2DOptions {
  Window strides = {1, 1};
  std::string padding = "valid";
  int64_t depth_multiplier = 1;
  Window dilation_rate = {1, 1};
  Activation activation = {};
  bool use_bias = true;
  Initializer depthwise_initializer = "glorot_uniform";
  Initializer pointwise_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::string name = "separable_conv2d";
};

// A depthwise convolution (strides, padding and dilation apply to it) followed by a 1x1
// convolution mixing the channels: weights depthwise_kernel [KH, KW, C, multiplier],
// pointwise_kernel [1, 1, C * multiplier, filters] and bias [filters], as Keras.
class SeparableConv2D : public Layer {
 public:
  SeparableConv2D(int64_t filters, Window kernel_size, SeparableConv2DOptions options = {});
  std::string class_name() const override { return "SeparableConv2D"; }
  Config get_config() const override;
  static std::shared_ptr<SeparableConv2D> from_config(const Config& config);
  Variable depthwise_kernel() const;
  Variable pointwise_kernel() const;
  Variable bias() const;

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t filters_;
  Window kernel_size_;
  SeparableConv2DOptions options_;
  std::string padding_;
  std::optional<Variable> depthwise_kernel_, pointwise_kernel_, bias_;
};

}  // namespace ef::nn
