// Core layers (Keras' names, arguments and defaults). Each builds its variables on
// its first call from the input's shape (eagerflow/nn/layer.h).
//
//   ef::nn::Dense dense(10, {.activation = "relu"});
//   ef::Tensor y = dense(x);                 // x: [batch, features] -> [batch, 10]
//
// Convolution and pooling layers are in eagerflow/nn/conv_layers.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "eagerflow/nn/activations.h"
#include "eagerflow/nn/layer.h"

namespace ef::nn {

struct DenseOptions {
  Activation activation = {};
  bool use_bias = true;
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::string name = "dense";
};

// activation(inputs · kernel + bias) over the last axis of inputs (rank >= 2). The
// kernel is [input features, units]. A different number of input features than the
// layer was built for throws InvalidArgumentError naming both.
class Dense : public Layer {
 public:
  bool supports_masking() const override { return true; }  // step by step (Note [masks])
  std::string class_name() const override { return "Dense"; }
  Config get_config() const override;
  static std::shared_ptr<Dense> from_config(const Config& config);
  explicit Dense(int64_t units, DenseOptions options = {});
  int64_t units() const { return units_; }
  // The variables; throw FailedPreconditionError before the first call.
  Variable kernel() const;
  Variable bias() const;

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t units_;
  DenseOptions options_;
  std::optional<Variable> kernel_, bias_;
};

// [batch, d1, d2, ...] -> [batch, d1 * d2 * ...].
class Flatten : public Layer {
 public:
  std::string class_name() const override { return "Flatten"; }
  Config get_config() const override;
  static std::shared_ptr<Flatten> from_config(const Config& config);
  explicit Flatten(std::string name = "flatten") : Layer(std::move(name)) {}

 protected:
  Tensor call(const Tensor& inputs, bool training) override;
};

// While training, zeroes each element with probability `rate` and scales the rest by
// 1 / (1 - rate) (ef::dropout); the identity otherwise.
class Dropout : public Layer {
 public:
  bool supports_masking() const override { return true; }  // step by step (Note [masks])
  std::string class_name() const override { return "Dropout"; }
  Config get_config() const override;
  static std::shared_ptr<Dropout> from_config(const Config& config);
  explicit Dropout(double rate, std::optional<int64_t> seed = std::nullopt, std::string name = "dropout");

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  double rate_;
  std::optional<int64_t> seed_;
};

struct LayerNormalizationOptions {
  int64_t axis = -1;
  double epsilon = 1e-3;
  bool center = true;  // learn an offset beta
  bool scale = true;   // learn a factor gamma
  Initializer beta_initializer = "zeros";
  Initializer gamma_initializer = "ones";
  std::string name = "layer_normalization";
};

// (x - mean) / sqrt(variance + epsilon) * gamma + beta, with mean and variance over
// `axis` of each example; gamma and beta have the size of that axis.
class LayerNormalization : public Layer {
 public:
  bool supports_masking() const override { return true; }  // step by step (Note [masks])
  std::string class_name() const override { return "LayerNormalization"; }
  Config get_config() const override;
  static std::shared_ptr<LayerNormalization> from_config(const Config& config);
  explicit LayerNormalization(LayerNormalizationOptions options = {});

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  LayerNormalizationOptions options_;
  int axis_ = -1;  // resolved against the input's rank at build time
  std::optional<Variable> gamma_, beta_;
};

struct EmbeddingOptions {
  Initializer embeddings_initializer = initializers::random_uniform(-0.05, 0.05);
  // Id 0 is padding: the layer gives the mask ids != 0 to the layers after it (Note
  // [masks] in layer.h).
  bool mask_zero = false;
  std::string name = "embedding";
};

// Rows of an [input_dim, output_dim] table for int32/int64 ids: [..] -> [.., output_dim].
// An id outside [0, input_dim) throws.
class Embedding : public Layer {
 public:
  std::string class_name() const override { return "Embedding"; }
  Config get_config() const override;
  static std::shared_ptr<Embedding> from_config(const Config& config);
  Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options = {});
  Variable embeddings() const;
  std::optional<Tensor> compute_mask(const std::vector<Tensor>& inputs,
                                     const std::optional<Tensor>& mask) const override;

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t input_dim_, output_dim_;
  EmbeddingOptions options_;
  std::optional<Variable> embeddings_;
};

}  // namespace ef::nn
