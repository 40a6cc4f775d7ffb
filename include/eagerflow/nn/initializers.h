// Initializers: how a layer fills a new variable (Keras' names and formulas).
//
//   ef::nn::Dense dense(10, {.kernel_initializer = ef::nn::initializers::he_normal(/*seed=*/1)});
//   ef::nn::Dense other(10, {.kernel_initializer = "zeros"});   // by name
//
// Fan-in and fan-out follow Keras: for a 2-D shape [in, out]; for a convolution
// kernel [h, w, in, out], the receptive field h*w multiplies both. Seeded
// initializers give the same values on every call (stateless draws, as in Keras);
// unseeded ones follow the global seed (Note [random seeds] in eagerflow/ops/random.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "eagerflow/core/tensor.h"
#include "eagerflow/nn/config.h"

namespace ef::nn {

class Initializer {
 public:
  using Fn = std::function<Tensor(const Shape& shape, DType dtype)>;
  Initializer(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  // By Keras name: "glorot_uniform", "glorot_normal", "he_normal", "he_uniform",
  // "lecun_normal", "orthogonal", "zeros", "ones", "random_normal", "random_uniform",
  // "truncated_normal". An unknown name throws InvalidArgumentError listing them.
  Initializer(const std::string& name);  // NOLINT: a name converts implicitly
  Initializer(const char* name) : Initializer(std::string(name)) {}  // NOLINT

  // A new tensor of `shape` and floating `dtype`.
  Tensor operator()(const Shape& shape, DType dtype = DType::Float32) const;
  const std::string& name() const { return name_; }

  // {"class_name": "random_normal", "config": {"mean": 0, "stddev": 0.05, "seed": null}}
  // for the initializers above; UnimplementedError for one made from a C++ function.
  Config get_config() const;
  static Initializer from_config(const Config& config);
  // The initializer a layer config holds under `key`: a nested config, a name, or
  // `fallback` when absent.
  static Initializer from_layer_config(const Config& config, const std::string& key, const std::string& who,
                                       const std::string& fallback);
  // The initializer with its arguments recorded, for get_config (the factories use it).
  Initializer with_arguments(Config arguments) &&;

 private:
  std::string name_;
  Fn fn_;
  std::optional<Config> arguments_;  // set for the initializers of this file
};

namespace initializers {
Initializer zeros();
Initializer ones();
Initializer constant(double value);
Initializer random_normal(double mean = 0.0, double stddev = 0.05, std::optional<int64_t> seed = std::nullopt);
Initializer random_uniform(double minval = -0.05, double maxval = 0.05, std::optional<int64_t> seed = std::nullopt);
Initializer truncated_normal(double mean = 0.0, double stddev = 0.05, std::optional<int64_t> seed = std::nullopt);
// uniform in ±sqrt(6 / (fan_in + fan_out)): Keras' default kernel initializer.
Initializer glorot_uniform(std::optional<int64_t> seed = std::nullopt);
// truncated normal, stddev sqrt(2 / (fan_in + fan_out)) / .87962566 (Keras' correction
// for truncation at two standard deviations).
Initializer glorot_normal(std::optional<int64_t> seed = std::nullopt);
// truncated normal, stddev sqrt(2 / fan_in) / .87962566.
Initializer he_normal(std::optional<int64_t> seed = std::nullopt);
// uniform in ±sqrt(6 / fan_in).
Initializer he_uniform(std::optional<int64_t> seed = std::nullopt);
// gain times an orthogonal matrix (Keras' recurrent kernels): the shape flattened to
// [rows, cols] has orthonormal columns (rows >= cols) or rows.
Initializer orthogonal(double gain = 1.0, std::optional<int64_t> seed = std::nullopt);
// truncated normal, stddev sqrt(1 / fan_in) / .87962566.
Initializer lecun_normal(std::optional<int64_t> seed = std::nullopt);
}  // namespace initializers

}  // namespace ef::nn
