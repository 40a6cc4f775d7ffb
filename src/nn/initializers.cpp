// Keras' initializers over ef::random and ef::fill.
#include "eagerflow/nn/initializers.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/random.h"

namespace ef::nn {

namespace {

struct Fans {
  double in, out;
};

// Keras' _compute_fans: [in, out] for matrices; a convolution kernel's receptive
// field (all leading dimensions) multiplies both.
Fans compute_fans(const Shape& shape) {
  const int rank = shape.rank();
  if (rank == 0) return {1, 1};
  if (rank == 1) return {double(shape[0]), double(shape[0])};
  if (rank == 2) return {double(shape[0]), double(shape[1])};
  double receptive = 1;
  for (int d = 0; d < rank - 2; ++d) receptive *= double(shape[d]);
  return {receptive * double(shape[rank - 2]), receptive * double(shape[rank - 1])};
}

void check_floating(const std::string& name, DType dtype) {
  if (!is_floating(dtype))
    fail("initializer '", name, "': only floating dtypes can be initialized this way, got ", dtype);
}

// Seeded initializers give the same values on every call (as Keras'), so they draw
// statelessly; unseeded ones follow the global seed's stream.
Tensor draw_uniform(const Shape& shape, double lo, double hi, DType dtype, std::optional<int64_t> seed) {
  return seed ? random::stateless_uniform(shape, {*seed, 0}, lo, hi, dtype) : random::uniform(shape, lo, hi, dtype);
}
Tensor draw_normal(const Shape& shape, double mean, double stddev, DType dtype, std::optional<int64_t> seed) {
  return seed ? random::stateless_normal(shape, {*seed, 0}, mean, stddev, dtype)
              : random::normal(shape, mean, stddev, dtype);
}
Tensor draw_truncated_normal(const Shape& shape, double mean, double stddev, DType dtype,
                             std::optional<int64_t> seed) {
  return seed ? random::stateless_truncated_normal(shape, {*seed, 0}, mean, stddev, dtype)
              : random::truncated_normal(shape, mean, stddev, dtype);
}

// stddev of a normal truncated at ±2 stddev, relative to the untruncated one.
constexpr double kTruncatedStddev = .87962566103423978;

ConfigValue seed_value(std::optional<int64_t> seed) {
  return seed ? ConfigValue(*seed) : ConfigValue(nullptr);
}

Initializer variance_scaling(const std::string& name, double scale, bool fan_in_only, bool uniform,
                             std::optional<int64_t> seed) {
  return Initializer(name,
                     [=](const Shape& shape, DType dtype) {
                       check_floating(name, dtype);
                       Fans fans = compute_fans(shape);
                       const double n = std::max(1.0, fan_in_only ? fans.in : (fans.in + fans.out) / 2);
                       const double variance = scale / n;
                       if (uniform) {
                         const double limit = std::sqrt(3 * variance);
                         return draw_uniform(shape, -limit, limit, dtype, seed);
                       }
                       return draw_truncated_normal(shape, 0.0, std::sqrt(variance) / kTruncatedStddev, dtype,
                                                    seed);
                     })
      .with_arguments(Config().set("seed", seed_value(seed)));
}

}  // namespace

Initializer::Initializer(const std::string& name) : name_(name) {
  static const std::map<std::string, Initializer (*)()> by_name = {
      {"zeros", [] { return initializers::zeros(); }},
      {"ones", [] { return initializers::ones(); }},
      {"random_normal", [] { return initializers::random_normal(); }},
      {"random_uniform", [] { return initializers::random_uniform(); }},
      {"truncated_normal", [] { return initializers::truncated_normal(); }},
      {"glorot_uniform", [] { return initializers::glorot_uniform(); }},
      {"glorot_normal", [] { return initializers::glorot_normal(); }},
      {"he_normal", [] { return initializers::he_normal(); }},
      {"he_uniform", [] { return initializers::he_uniform(); }},
      {"lecun_normal", [] { return initializers::lecun_normal(); }},
      {"orthogonal", [] { return initializers::orthogonal(); }},
  };
  auto it = by_name.find(name);
  if (it == by_name.end()) {
    std::string known;
    for (auto& entry : by_name) known += (known.empty() ? "" : ", ") + entry.first;
    fail("unknown initializer \"", name, "\"; known: ", known);
  }
  Initializer made = it->second();
  fn_ = made.fn_;
  arguments_ = made.arguments_;
}

Initializer Initializer::with_arguments(Config arguments) && {
  arguments_ = std::move(arguments);
  return std::move(*this);
}

Config Initializer::get_config() const {
  if (!arguments_)
    fail<UnimplementedError>("initializer '", name_,
                             "' is a C++ function: it has no config to save; use a named initializer");
  return Config().set("class_name", name_).set("config", *arguments_);
}

Initializer Initializer::from_layer_config(const Config& config, const std::string& key,
                                           const std::string& who, const std::string& fallback) {
  if (const std::shared_ptr<Config> nested = config.nested(key, who)) return from_config(*nested);
  return Initializer(config.get<std::string>(key, who, fallback));
}

Initializer Initializer::from_config(const Config& config) {
  const std::string who = "initializer config";
  const auto name = config.get<std::string>("class_name", who);
  const std::shared_ptr<Config> arguments = config.nested("config", who);
  const Config args = arguments ? *arguments : Config();
  auto seed = [&]() -> std::optional<int64_t> {
    if (!args.has("seed") || std::holds_alternative<std::nullptr_t>(args.values.at("seed")))
      return std::nullopt;
    return args.get<int64_t>("seed", name);
  };
  auto number = [&](const char* key, double fallback) { return args.get<double>(key, name, fallback); };
  if (name == "zeros") return initializers::zeros();
  if (name == "ones") return initializers::ones();
  if (name == "constant") return initializers::constant(number("value", 0.0));
  if (name == "random_normal")
    return initializers::random_normal(number("mean", 0.0), number("stddev", 0.05), seed());
  if (name == "truncated_normal")
    return initializers::truncated_normal(number("mean", 0.0), number("stddev", 0.05), seed());
  if (name == "random_uniform")
    return initializers::random_uniform(number("minval", -0.05), number("maxval", 0.05), seed());
  if (name == "glorot_uniform") return initializers::glorot_uniform(seed());
  if (name == "glorot_normal") return initializers::glorot_normal(seed());
  if (name == "he_normal") return initializers::he_normal(seed());
  if (name == "he_uniform") return initializers::he_uniform(seed());
  if (name == "lecun_normal") return initializers::lecun_normal(seed());
  if (name == "orthogonal") return initializers::orthogonal(number("gain", 1.0), seed());
  fail("initializer config: unknown class_name \"", name, "\"");
}

Tensor Initializer::operator()(const Shape& shape, DType dtype) const { return fn_(shape, dtype); }

namespace initializers {

Initializer zeros() {
  return Initializer("zeros", [](const Shape& shape, DType dtype) { return ef::zeros(shape, dtype); })
      .with_arguments({});
}
Initializer ones() {
  return Initializer("ones", [](const Shape& shape, DType dtype) { return ef::ones(shape, dtype); })
      .with_arguments({});
}
Initializer constant(double value) {
  return Initializer("constant", [=](const Shape& shape, DType dtype) { return fill(shape, value, dtype); })
      .with_arguments(Config().set("value", value));
}
Initializer random_normal(double mean, double stddev, std::optional<int64_t> seed) {
  return Initializer("random_normal",
                     [=](const Shape& shape, DType dtype) {
                       check_floating("random_normal", dtype);
                       return draw_normal(shape, mean, stddev, dtype, seed);
                     })
      .with_arguments(Config().set("mean", mean).set("stddev", stddev).set("seed", seed_value(seed)));
}
Initializer random_uniform(double minval, double maxval, std::optional<int64_t> seed) {
  return Initializer("random_uniform",
                     [=](const Shape& shape, DType dtype) {
                       check_floating("random_uniform", dtype);
                       return draw_uniform(shape, minval, maxval, dtype, seed);
                     })
      .with_arguments(Config().set("minval", minval).set("maxval", maxval).set("seed", seed_value(seed)));
}
Initializer truncated_normal(double mean, double stddev, std::optional<int64_t> seed) {
  return Initializer("truncated_normal",
                     [=](const Shape& shape, DType dtype) {
                       check_floating("truncated_normal", dtype);
                       return draw_truncated_normal(shape, mean, stddev, dtype, seed);
                     })
      .with_arguments(Config().set("mean", mean).set("stddev", stddev).set("seed", seed_value(seed)));
}
Initializer orthogonal(double gain, std::optional<int64_t> seed) {
  return Initializer("orthogonal",
                     [=](const Shape& shape, DType dtype) {
                       check_floating("orthogonal", dtype);
                       if (shape.rank() < 2)
                         fail("initializer 'orthogonal': needs a shape of rank >= 2, got ", shape);
                       // Keras: the shape flattened to [rows, cols], a normal matrix's Q factor (signs from
                       // R's diagonal), transposed when rows < cols so that the longer side is orthonormal.
                       const int64_t cols = shape[shape.rank() - 1],
                                     rows = shape.num_elements() / std::max<int64_t>(cols, 1);
                       const int64_t n = std::max(rows, cols), k = std::min(rows, cols);
                       std::vector<double> a =
                           draw_normal({n, k}, 0.0, 1.0, DType::Float64, seed).to_vector<double>();
                       // Modified Gram-Schmidt on the k columns of the n x k matrix a (row-major).
                       for (int64_t j = 0; j < k; ++j) {
                         for (int64_t p = 0; p < j; ++p) {
                           double dot = 0;
                           for (int64_t i = 0; i < n; ++i) dot += a[i * k + p] * a[i * k + j];
                           for (int64_t i = 0; i < n; ++i) a[i * k + j] -= dot * a[i * k + p];
                         }
                         double norm = 0;
                         for (int64_t i = 0; i < n; ++i) norm += a[i * k + j] * a[i * k + j];
                         norm = std::sqrt(norm);  // > 0 with probability 1; R's diagonal is positive here
                         for (int64_t i = 0; i < n; ++i) a[i * k + j] /= norm;
                       }
                       std::vector<double> q(static_cast<size_t>(rows * cols));
                       for (int64_t i = 0; i < rows; ++i)
                         for (int64_t j = 0; j < cols; ++j)
                           q[i * cols + j] = gain * (rows >= cols ? a[i * k + j] : a[j * k + i]);
                       return reshape(cast(constant(q, Shape{rows, cols}), dtype), shape);
                     })
      .with_arguments(Config().set("gain", gain).set("seed", seed_value(seed)));
}

Initializer glorot_uniform(std::optional<int64_t> seed) {
  return variance_scaling("glorot_uniform", 1.0, false, true, seed);
}
Initializer glorot_normal(std::optional<int64_t> seed) {
  return variance_scaling("glorot_normal", 1.0, false, false, seed);
}
Initializer he_normal(std::optional<int64_t> seed) { return variance_scaling("he_normal", 2.0, true, false, seed); }
Initializer he_uniform(std::optional<int64_t> seed) { return variance_scaling("he_uniform", 2.0, true, true, seed); }
Initializer lecun_normal(std::optional<int64_t> seed) {
  return variance_scaling("lecun_normal", 1.0, true, false, seed);
}

}  // namespace initializers
}  // namespace ef::nn
