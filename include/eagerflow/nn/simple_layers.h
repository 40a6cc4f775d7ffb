// Layers without weights (Keras' names and arguments): activations, reshaping, global
// pooling, padding and cropping, upsampling, noise and dropout. Each is a few ops; their gradients
// are those ops'.
//
//   model.add(ef::nn::Reshape({7, 7, 16}));
//   model.add(ef::nn::GlobalAveragePooling2D());
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eagerflow/nn/activations.h"
#include "eagerflow/nn/layer.h"

namespace ef::nn {

// Declares the config members every layer here has.
#define EF_LAYER_CONFIG(Class, keras_name)                       \
  std::string class_name() const override { return keras_name; } \
  Config get_config() const override;                            \
  static std::shared_ptr<Class> from_config(const Config& config);

// An activation by name ("relu", "softmax", ...), as a layer.
class ActivationLayer : public Layer {
 public:
  bool supports_masking() const override { return true; }  // step by step
  explicit ActivationLayer(Activation activation, std::string name = "activation");
  EF_LAYER_CONFIG(ActivationLayer, "Activation")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  Activation activation_;
};

// min(max(x, 0), max_value) for x >= threshold, negative_slope * (x - threshold) below.
class ReLU : public Layer {
 public:
  bool supports_masking() const override { return true; }  // step by step
  explicit ReLU(std::optional<double> max_value = std::nullopt, double negative_slope = 0,
                double threshold = 0, std::string name = "re_lu");
  EF_LAYER_CONFIG(ReLU, "ReLU")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::optional<double> max_value_;
  double negative_slope_, threshold_;
};

// x for x >= 0, negative_slope * x below (Keras 3's default slope 0.3).
class LeakyReLU : public Layer {
 public:
  bool supports_masking() const override { return true; }  // step by step
  explicit LeakyReLU(double negative_slope = 0.3, std::string name = "leaky_re_lu");
  EF_LAYER_CONFIG(LeakyReLU, "LeakyReLU")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  double negative_slope_;
};

// x for x > 0, alpha * (exp(x) - 1) below.
class ELU : public Layer {
 public:
  bool supports_masking() const override { return true; }  // step by step
  explicit ELU(double alpha = 1.0, std::string name = "elu");
  EF_LAYER_CONFIG(ELU, "ELU")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  double alpha_;
};

// softmax over `axis`.
class Softmax : public Layer {
 public:
  bool supports_masking() const override { return true; }  // step by step
  explicit Softmax(int64_t axis = -1, std::string name = "softmax");
  EF_LAYER_CONFIG(Softmax, "Softmax")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;
  // Keras' Softmax(inputs, mask): a mask of the inputs' rank (broadcasting to them) adds a
  // large negative where it is false, so masked entries get ~0 probability. A [batch,
  // steps] mask carried by lower-rank inputs' steps (Note [masks]) leaves them as they are.
  std::vector<Tensor> call_masked(const std::vector<Tensor>& inputs, const Tensor& mask,
                                  bool training) override;

 private:
  int64_t axis_;
};

// Each example reshaped to target_shape (one dimension may be -1).
class Reshape : public Layer {
 public:
  explicit Reshape(std::vector<int64_t> target_shape, std::string name = "reshape");
  EF_LAYER_CONFIG(Reshape, "Reshape")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::vector<int64_t> target_shape_;
};

// Each example's axes permuted; dims count from 1 (the batch axis stays first), as Keras'.
class Permute : public Layer {
 public:
  explicit Permute(std::vector<int64_t> dims, std::string name = "permute");
  EF_LAYER_CONFIG(Permute, "Permute")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::vector<int64_t> dims_;
};

// [batch, features] -> [batch, n, features].
class RepeatVector : public Layer {
 public:
  explicit RepeatVector(int64_t n, std::string name = "repeat_vector");
  EF_LAYER_CONFIG(RepeatVector, "RepeatVector")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t n_;
};

// Mean or maximum over the spatial axes of [batch, steps, channels] (1D) or
// [batch, height, width, channels] (2D); `keepdims` keeps them as size 1.
class GlobalPooling : public Layer {
 public:
  enum class Kind { kAverage1D, kAverage2D, kMax1D, kMax2D };
  explicit GlobalPooling(Kind kind, bool keepdims = false, std::string name = "");
  std::string class_name() const override;
  Config get_config() const override;
  static std::shared_ptr<GlobalPooling> from_config(Kind kind, const Config& config);

 protected:
  Tensor call(const Tensor& inputs, bool training) override;
  // GlobalAveragePooling1D averages the real steps only (Note [masks]).
  std::vector<Tensor> call_masked(const std::vector<Tensor>& inputs, const Tensor& mask,
                                  bool training) override;

 private:
  Kind kind_;
  bool keepdims_;
};

// Zeros around the height and width of [batch, height, width, channels]:
// padding = {top, bottom, left, right}.
class ZeroPadding2D : public Layer {
 public:
  explicit ZeroPadding2D(std::vector<int64_t> padding = {1, 1, 1, 1}, std::string name = "zero_padding2d");
  EF_LAYER_CONFIG(ZeroPadding2D, "ZeroPadding2D")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::vector<int64_t> padding_;
};

// Rows and columns removed from the edges: cropping = {top, bottom, left, right}.
class Cropping2D : public Layer {
 public:
  explicit Cropping2D(std::vector<int64_t> cropping = {0, 0, 0, 0}, std::string name = "cropping2d");
  EF_LAYER_CONFIG(Cropping2D, "Cropping2D")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::vector<int64_t> cropping_;
};

// Each pixel repeated size = {rows, cols} times (nearest neighbour).
class UpSampling2D : public Layer {
 public:
  explicit UpSampling2D(std::vector<int64_t> size = {2, 2}, std::string name = "up_sampling2d");
  EF_LAYER_CONFIG(UpSampling2D, "UpSampling2D")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::vector<int64_t> size_;
};

// While training, adds normal noise of `stddev`; the identity otherwise.
class GaussianNoise : public Layer {
 public:
  bool supports_masking() const override { return true; }  // step by step
  explicit GaussianNoise(double stddev, std::optional<int64_t> seed = std::nullopt,
                         std::string name = "gaussian_noise");
  EF_LAYER_CONFIG(GaussianNoise, "GaussianNoise")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  double stddev_;
  std::optional<int64_t> seed_;
};

// While training, zeroes whole channels of [batch, height, width, channels] images
// (each channel of each example with probability `rate`) and scales the others by
// 1 / (1 - rate); the identity otherwise. rate must be in [0, 1).
class SpatialDropout2D : public Layer {
 public:
  explicit SpatialDropout2D(double rate, std::optional<int64_t> seed = std::nullopt,
                            std::string name = "spatial_dropout2d");
  EF_LAYER_CONFIG(SpatialDropout2D, "SpatialDropout2D")

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  double rate_;
  std::optional<int64_t> seed_;
};

// Masks the steps of [batch, steps, ...] inputs whose features all equal mask_value
// (Note [masks] in layer.h): zeroes them and gives the mask [batch, steps] to the
// layers after it, as Keras' Masking.
class Masking : public Layer {
 public:
  explicit Masking(double mask_value = 0.0, std::string name = "masking");
  EF_LAYER_CONFIG(Masking, "Masking")
  bool supports_masking() const override { return true; }
  std::optional<Tensor> compute_mask(const std::vector<Tensor>& inputs,
                                     const std::optional<Tensor>& mask) const override;

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  double mask_value_;
};

#undef EF_LAYER_CONFIG

}  // namespace ef::nn
