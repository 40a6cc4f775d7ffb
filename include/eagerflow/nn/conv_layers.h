// Convolution, pooling and batch-normalization layers on NHWC images (Keras' names,
// arguments and defaults; padding "valid" or "same" in either case).
//
//   ef::nn::Sequential cnn;
//   cnn.add(ef::nn::Conv2D(32, 3, {.padding = "same", .activation = "relu"}));
//   cnn.add(ef::nn::MaxPool2D());
//   cnn.add(ef::nn::BatchNormalization());
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eagerflow/nn/activations.h"
#include "eagerflow/nn/layer.h"

namespace ef::nn {

// A window size, stride or dilation: one value for both spatial dimensions, or two.
using Window = std::vector<int64_t>;

struct Conv2DOptions {
  Window strides = {1, 1};
  std::string padding = "valid";
  Window dilation_rate = {1, 1};
  Activation activation = {};
  bool use_bias = true;
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::string name = "conv2d";
};

// activation(conv2d(inputs, kernel) + bias): inputs [N, H, W, C], kernel
// [KH, KW, C, filters] (ef::conv2d). A different channel count than the layer was
// built for throws InvalidArgumentError naming both.
class Conv2D : public Layer {
 public:
  std::string class_name() const override { return "Conv2D"; }
  Config get_config() const override;
  static std::shared_ptr<Conv2D> from_config(const Config& config);
  Conv2D(int64_t filters, Window kernel_size, Conv2DOptions options = {});
  Variable kernel() const;
  Variable bias() const;

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t filters_;
  Window kernel_size_;
  Conv2DOptions options_;
  std::string padding_;  // "SAME" or "VALID", as the op takes it
  std::optional<Variable> kernel_, bias_;
};

struct Pool2DOptions {
  std::optional<Window> strides;  // default: the pool size
  std::string padding = "valid";
  std::string name;  // default: "max_pooling2d" / "average_pooling2d"
};

// Maximum over pool_size windows of [N, H, W, C] (ef::max_pool2d).
class MaxPool2D : public Layer {
 public:
  std::string class_name() const override { return "MaxPooling2D"; }
  Config get_config() const override;
  static std::shared_ptr<MaxPool2D> from_config(const Config& config);
  explicit MaxPool2D(Window pool_size = {2, 2}, Pool2DOptions options = {});

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  Window pool_size_, strides_;
  std::string padding_;
};

// Mean over pool_size windows of [N, H, W, C] (ef::avg_pool2d).
class AveragePool2D : public Layer {
 public:
  std::string class_name() const override { return "AveragePooling2D"; }
  Config get_config() const override;
  static std::shared_ptr<AveragePool2D> from_config(const Config& config);
  explicit AveragePool2D(Window pool_size = {2, 2}, Pool2DOptions options = {});

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  Window pool_size_, strides_;
  std::string padding_;
};

struct Conv1DOptions {
  int64_t strides = 1;
  std::string padding = "valid";  // "valid", "same" or "causal" (zeros before the sequence only)
  int64_t dilation_rate = 1;
  Activation activation = {};
  bool use_bias = true;
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::string name = "conv1d";
};

// activation(conv1d(inputs, kernel) + bias) over [batch, steps, channels], kernel
// [kernel_size, channels, filters] (Keras' layout); computed as a Conv2D of height 1.
class Conv1D : public Layer {
 public:
  Conv1D(int64_t filters, int64_t kernel_size, Conv1DOptions options = {});
  std::string class_name() const override { return "Conv1D"; }
  Config get_config() const override;
  static std::shared_ptr<Conv1D> from_config(const Config& config);

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t filters_, kernel_size_;
  Conv1DOptions options_;
  std::optional<Variable> kernel_, bias_;
};

// Maximum or mean over pool_size windows of [batch, steps, channels] (strides default to
// pool_size; padding "valid" or "same").
class Pool1D : public Layer {
 public:
  Pool1D(bool max, int64_t pool_size = 2, std::optional<int64_t> strides = std::nullopt,
         std::string padding = "valid", std::string name = "");
  std::string class_name() const override { return max_ ? "MaxPooling1D" : "AveragePooling1D"; }
  Config get_config() const override;
  static std::shared_ptr<Pool1D> from_config(bool max, const Config& config);

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  bool max_;
  int64_t pool_size_, strides_;
  std::string padding_;
};

struct BatchNormalizationOptions {
  int64_t axis = -1;  // the feature axis; statistics are over all others
  double momentum = 0.99;
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
  Initializer beta_initializer = "zeros";
  Initializer gamma_initializer = "ones";
  Initializer moving_mean_initializer = "zeros";
  Initializer moving_variance_initializer = "ones";
  std::string name = "batch_normalization";
};

// Training: normalizes with the batch's mean and (population) variance over every
// axis but `axis`, and moves the moving statistics toward them:
// moving = moving * momentum + batch * (1 - momentum), as Keras. Inference: normalizes
// with the moving statistics. gamma and beta are trainable; the moving statistics are
// not, and their updates are never recorded by tapes.
class BatchNormalization : public Layer {
 public:
  std::string class_name() const override { return "BatchNormalization"; }
  Config get_config() const override;
  static std::shared_ptr<BatchNormalization> from_config(const Config& config);
  explicit BatchNormalization(BatchNormalizationOptions options = {});
  Variable moving_mean() const;
  Variable moving_variance() const;
  const BatchNormalizationOptions& options() const { return options_; }

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;
  // The training batch's mean and population variance over `axes` (kept as size-1
  // axes); ef::distribute::SyncBatchNormalization computes them over every rank's batch.
  virtual std::pair<Tensor, Tensor> batch_moments(const Tensor& inputs, const std::vector<int64_t>& axes);

 private:
  BatchNormalizationOptions options_;
  int axis_ = -1;
  std::optional<Variable> gamma_, beta_, moving_mean_, moving_variance_;
};

}  // namespace ef::nn
