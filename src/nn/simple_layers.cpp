// Layers without weights (eagerflow/nn/simple_layers.h): their calls and configs.
#include "eagerflow/nn/simple_layers.h"

#include <algorithm>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/random.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/runtime/context.h"

namespace ef::nn {
namespace {

void check_rank(const std::string& layer, const Tensor& x, int64_t rank, const char* layout) {
  if (x.rank() != rank)
    fail("layer '", layer, "': expects inputs of rank ", rank, " (", layout, "), got shape ", x.shape());
}

// Four non-negative sizes {top, bottom, left, right}; one value or two ({rows, cols}) are expanded.
std::vector<int64_t> four_sides(const char* layer, const char* what, std::vector<int64_t> v) {
  if (v.size() == 1)
    v = {v[0], v[0], v[0], v[0]};
  else if (v.size() == 2)
    v = {v[0], v[0], v[1], v[1]};
  if (v.size() != 4) fail(layer, ": '", what, "' needs 1, 2 or 4 values, got ", v.size());
  for (int64_t s : v)
    if (s < 0) fail(layer, ": '", what, "' values must be >= 0, got ", s);
  return v;
}

std::string name_in(const Config& c, const std::string& who, const char* fallback) {
  return c.get<std::string>("name", who, std::string(fallback));
}

}  // namespace

// ---- activations ----

ActivationLayer::ActivationLayer(Activation activation, std::string name)
    : Layer(std::move(name)), activation_(std::move(activation)) {}
Tensor ActivationLayer::call(const Tensor& inputs, bool) { return activation_(inputs); }
Config ActivationLayer::get_config() const {
  return Layer::get_config().set("activation", activation_.config_name(name()));
}
std::shared_ptr<ActivationLayer> ActivationLayer::from_config(const Config& c) {
  const std::string who = "Activation config";
  return std::make_shared<ActivationLayer>(Activation(c.get<std::string>("activation", who)),
                                           name_in(c, who, "activation"));
}

ReLU::ReLU(std::optional<double> max_value, double negative_slope, double threshold, std::string name)
    : Layer(std::move(name)), max_value_(max_value), negative_slope_(negative_slope), threshold_(threshold) {
  if (max_value && !(*max_value >= 0)) fail("ReLU: max_value must be >= 0, got ", *max_value);
  if (!(negative_slope >= 0)) fail("ReLU: negative_slope must be >= 0, got ", negative_slope);
}
Tensor ReLU::call(const Tensor& x, bool) {
  Tensor y = threshold_ == 0 && negative_slope_ == 0
                 ? relu(x)
                 : where(x >= threshold_, x, (x - threshold_) * negative_slope_);
  if (max_value_) y = minimum(y, *max_value_);
  return y;
}
Config ReLU::get_config() const {
  return Layer::get_config()
      .set("max_value", max_value_ ? ConfigValue(*max_value_) : ConfigValue(nullptr))
      .set("negative_slope", negative_slope_)
      .set("threshold", threshold_);
}
std::shared_ptr<ReLU> ReLU::from_config(const Config& c) {
  const std::string who = "ReLU config";
  return std::make_shared<ReLU>(c.get_optional<double>("max_value", who),
                                c.get<double>("negative_slope", who, 0.0),
                                c.get<double>("threshold", who, 0.0), name_in(c, who, "re_lu"));
}

LeakyReLU::LeakyReLU(double negative_slope, std::string name)
    : Layer(std::move(name)), negative_slope_(negative_slope) {
  if (!(negative_slope >= 0)) fail("LeakyReLU: negative_slope must be >= 0, got ", negative_slope);
}
Tensor LeakyReLU::call(const Tensor& x, bool) { return leaky_relu(x, negative_slope_); }
Config LeakyReLU::get_config() const { return Layer::get_config().set("negative_slope", negative_slope_); }
std::shared_ptr<LeakyReLU> LeakyReLU::from_config(const Config& c) {
  const std::string who = "LeakyReLU config";
  return std::make_shared<LeakyReLU>(c.get<double>("negative_slope", who, 0.3),
                                     name_in(c, who, "leaky_re_lu"));
}

ELU::ELU(double alpha, std::string name) : Layer(std::move(name)), alpha_(alpha) {}
Tensor ELU::call(const Tensor& x, bool) {
  return alpha_ == 1.0 ? elu(x) : where(x > 0, x, expm1(x) * alpha_);
}
Config ELU::get_config() const { return Layer::get_config().set("alpha", alpha_); }
std::shared_ptr<ELU> ELU::from_config(const Config& c) {
  const std::string who = "ELU config";
  return std::make_shared<ELU>(c.get<double>("alpha", who, 1.0), name_in(c, who, "elu"));
}

Softmax::Softmax(int64_t axis, std::string name) : Layer(std::move(name)), axis_(axis) {}
Tensor Softmax::call(const Tensor& x, bool) { return softmax(x, axis_); }
std::vector<Tensor> Softmax::call_masked(const std::vector<Tensor>& inputs, const Tensor& mask,
                                         bool training) {
  const Tensor& x = inputs.at(0);
  if (mask.rank() != x.rank()) return call_inputs(inputs, training);
  Shape common;
  try {
    common = broadcast_shapes(mask.shape(), x.shape(), name());
  } catch (const InvalidArgumentError&) {
  }
  if (common != x.shape())
    fail("layer '", name(), "': the mask of shape ", mask.shape(),
         " does not broadcast to the inputs of shape ", x.shape());
  // Keras' additive mask: -1e9 where the mask is false (-3e4 in float16, whose range ends
  // at 65504); a row masked everywhere stays uniform, as in Keras.
  const double large_negative = x.dtype() == DType::Float16 ? -3e4 : -1e9;
  const Tensor keep = mask.dtype() == DType::Bool ? mask : not_equal(mask, 0);
  return {softmax(where(keep, x, x + large_negative), axis_)};
}
Config Softmax::get_config() const { return Layer::get_config().set("axis", axis_); }
std::shared_ptr<Softmax> Softmax::from_config(const Config& c) {
  const std::string who = "Softmax config";
  return std::make_shared<Softmax>(c.get<int64_t>("axis", who, int64_t{-1}), name_in(c, who, "softmax"));
}

// ---- reshaping ----

Reshape::Reshape(std::vector<int64_t> target_shape, std::string name)
    : Layer(std::move(name)), target_shape_(std::move(target_shape)) {
  if (std::count(target_shape_.begin(), target_shape_.end(), -1) > 1)
    fail("Reshape: at most one dimension of target_shape may be -1");
  for (int64_t d : target_shape_)
    if (d < -1 || d == 0) fail("Reshape: target_shape dimensions must be positive (or one -1), got ", d);
}
Tensor Reshape::call(const Tensor& x, bool) {
  if (x.rank() == 0) fail("layer '", name(), "': expects a batch of examples, got a scalar");
  std::vector<int64_t> shape = {x.shape()[0]};
  shape.insert(shape.end(), target_shape_.begin(), target_shape_.end());
  return reshape(x, Shape(shape));
}
Config Reshape::get_config() const { return Layer::get_config().set("target_shape", target_shape_); }
std::shared_ptr<Reshape> Reshape::from_config(const Config& c) {
  const std::string who = "Reshape config";
  return std::make_shared<Reshape>(c.get<std::vector<int64_t>>("target_shape", who),
                                   name_in(c, who, "reshape"));
}

Permute::Permute(std::vector<int64_t> dims, std::string name)
    : Layer(std::move(name)), dims_(std::move(dims)) {
  std::vector<int64_t> sorted = dims_;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) + 1)
      fail("Permute: dims must be a permutation of 1..", dims_.size(), " (the batch axis 0 stays first)");
}
Tensor Permute::call(const Tensor& x, bool) {
  check_rank(name(), x, static_cast<int64_t>(dims_.size()) + 1, "a batch, then the permuted axes");
  std::vector<int64_t> perm = {0};
  perm.insert(perm.end(), dims_.begin(), dims_.end());
  return transpose(x, perm);
}
Config Permute::get_config() const { return Layer::get_config().set("dims", dims_); }
std::shared_ptr<Permute> Permute::from_config(const Config& c) {
  const std::string who = "Permute config";
  return std::make_shared<Permute>(c.get<std::vector<int64_t>>("dims", who), name_in(c, who, "permute"));
}

RepeatVector::RepeatVector(int64_t n, std::string name) : Layer(std::move(name)), n_(n) {
  if (n <= 0) fail("RepeatVector: n must be positive, got ", n);
}
Tensor RepeatVector::call(const Tensor& x, bool) {
  check_rank(name(), x, 2, "batch, features");
  return tile(expand_dims(x, 1), {1, n_, 1});
}
Config RepeatVector::get_config() const { return Layer::get_config().set("n", n_); }
std::shared_ptr<RepeatVector> RepeatVector::from_config(const Config& c) {
  const std::string who = "RepeatVector config";
  return std::make_shared<RepeatVector>(c.get<int64_t>("n", who), name_in(c, who, "repeat_vector"));
}

// ---- global pooling ----

namespace {
const char* pooling_name(GlobalPooling::Kind kind, bool keras) {
  switch (kind) {
    case GlobalPooling::Kind::kAverage1D:
      return keras ? "GlobalAveragePooling1D" : "global_average_pooling1d";
    case GlobalPooling::Kind::kAverage2D:
      return keras ? "GlobalAveragePooling2D" : "global_average_pooling2d";
    case GlobalPooling::Kind::kMax1D:
      return keras ? "GlobalMaxPooling1D" : "global_max_pooling1d";
    case GlobalPooling::Kind::kMax2D:
      return keras ? "GlobalMaxPooling2D" : "global_max_pooling2d";
  }
  return "";
}
bool is_2d(GlobalPooling::Kind kind) {
  return kind == GlobalPooling::Kind::kAverage2D || kind == GlobalPooling::Kind::kMax2D;
}
}  // namespace

GlobalPooling::GlobalPooling(Kind kind, bool keepdims, std::string name)
    : Layer(name.empty() ? pooling_name(kind, false) : std::move(name)), kind_(kind), keepdims_(keepdims) {}
std::string GlobalPooling::class_name() const { return pooling_name(kind_, true); }
Tensor GlobalPooling::call(const Tensor& x, bool) {
  const bool two = is_2d(kind_);
  check_rank(name(), x, two ? 4 : 3, two ? "batch, height, width, channels" : "batch, steps, channels");
  const Axes axes = two ? Axes{1, 2} : Axes{1};
  const bool average = kind_ == Kind::kAverage1D || kind_ == Kind::kAverage2D;
  return average ? reduce_mean(x, axes, keepdims_) : reduce_max(x, axes, keepdims_);
}
std::vector<Tensor> GlobalPooling::call_masked(const std::vector<Tensor>& inputs, const Tensor& mask,
                                               bool training) {
  if (kind_ != Kind::kAverage1D) return call_inputs(inputs, training);
  const Tensor& x = inputs.at(0);
  check_rank(name(), x, 3, "batch, steps, channels");
  if (mask.rank() != 2)
    fail("layer '", name(), "': the mask must be [batch, steps], got shape ", mask.shape());
  const Tensor weights = expand_dims(cast(mask, x.dtype()), -1);  // [batch, steps, 1]
  return {reduce_sum(x * weights, Axes{1}, keepdims_) / reduce_sum(weights, Axes{1}, keepdims_)};
}

Config GlobalPooling::get_config() const { return Layer::get_config().set("keepdims", keepdims_); }
std::shared_ptr<GlobalPooling> GlobalPooling::from_config(Kind kind, const Config& c) {
  const std::string who = std::string(pooling_name(kind, true)) + " config";
  return std::make_shared<GlobalPooling>(kind, c.get<bool>("keepdims", who, false),
                                         name_in(c, who, pooling_name(kind, false)));
}

// ---- padding, cropping, upsampling ----

ZeroPadding2D::ZeroPadding2D(std::vector<int64_t> padding, std::string name)
    : Layer(std::move(name)), padding_(four_sides("ZeroPadding2D", "padding", std::move(padding))) {}
Tensor ZeroPadding2D::call(const Tensor& x, bool) {
  check_rank(name(), x, 4, "batch, height, width, channels");
  return pad(x, {{0, 0}, {padding_[0], padding_[1]}, {padding_[2], padding_[3]}, {0, 0}});
}
Config ZeroPadding2D::get_config() const { return Layer::get_config().set("padding", padding_); }
std::shared_ptr<ZeroPadding2D> ZeroPadding2D::from_config(const Config& c) {
  const std::string who = "ZeroPadding2D config";
  return std::make_shared<ZeroPadding2D>(c.get<std::vector<int64_t>>("padding", who, std::vector<int64_t>{1}),
                                         name_in(c, who, "zero_padding2d"));
}

Cropping2D::Cropping2D(std::vector<int64_t> cropping, std::string name)
    : Layer(std::move(name)), cropping_(four_sides("Cropping2D", "cropping", std::move(cropping))) {}
Tensor Cropping2D::call(const Tensor& x, bool) {
  check_rank(name(), x, 4, "batch, height, width, channels");
  const int64_t h = x.shape()[1] - cropping_[0] - cropping_[1],
                w = x.shape()[2] - cropping_[2] - cropping_[3];
  if (h <= 0 || w <= 0)
    fail("layer '", name(), "': cropping {", cropping_[0], ", ", cropping_[1], ", ", cropping_[2], ", ",
         cropping_[3], "} leaves nothing of inputs of shape ", x.shape());
  return slice(x, {0, cropping_[0], cropping_[2], 0}, {-1, h, w, -1});
}
Config Cropping2D::get_config() const { return Layer::get_config().set("cropping", cropping_); }
std::shared_ptr<Cropping2D> Cropping2D::from_config(const Config& c) {
  const std::string who = "Cropping2D config";
  return std::make_shared<Cropping2D>(c.get<std::vector<int64_t>>("cropping", who, std::vector<int64_t>{0}),
                                      name_in(c, who, "cropping2d"));
}

UpSampling2D::UpSampling2D(std::vector<int64_t> size, std::string name)
    : Layer(std::move(name)), size_(std::move(size)) {
  if (size_.size() == 1) size_ = {size_[0], size_[0]};
  if (size_.size() != 2 || size_[0] <= 0 || size_[1] <= 0)
    fail("UpSampling2D: size must be one or two positive values");
}
Tensor UpSampling2D::call(const Tensor& x, bool) {
  check_rank(name(), x, 4, "batch, height, width, channels");
  const Shape& s = x.shape();
  // [n, h, 1, w, 1, c] broadcast to [n, h, a, w, b, c], then merged: nearest neighbour.
  Tensor spread = reshape(x, {s[0], s[1], 1, s[2], 1, s[3]});
  spread = broadcast_to(spread, {s[0], s[1], size_[0], s[2], size_[1], s[3]});
  return reshape(spread, {s[0], s[1] * size_[0], s[2] * size_[1], s[3]});
}
Config UpSampling2D::get_config() const { return Layer::get_config().set("size", size_); }
std::shared_ptr<UpSampling2D> UpSampling2D::from_config(const Config& c) {
  const std::string who = "UpSampling2D config";
  return std::make_shared<UpSampling2D>(c.get<std::vector<int64_t>>("size", who, std::vector<int64_t>{2, 2}),
                                        name_in(c, who, "up_sampling2d"));
}

// ---- noise ----

GaussianNoise::GaussianNoise(double stddev, std::optional<int64_t> seed, std::string name)
    : Layer(std::move(name)), stddev_(stddev), seed_(seed) {
  if (!(stddev >= 0)) fail("GaussianNoise: stddev must be >= 0, got ", stddev);
}
Tensor GaussianNoise::call(const Tensor& x, bool training) {
  if (!training || stddev_ == 0) return x;
  if (!is_floating(x.dtype())) fail("layer '", name(), "': needs float inputs, got ", x.dtype());
  const DeviceScope on_input(x.device());  // the noise is made where x is
  return x + ef::random::normal(x.shape(), 0.0, stddev_, x.dtype(), seed_);
}
Config GaussianNoise::get_config() const {
  return Layer::get_config()
      .set("stddev", stddev_)
      .set("seed", seed_ ? ConfigValue(*seed_) : ConfigValue(nullptr));
}
std::shared_ptr<GaussianNoise> GaussianNoise::from_config(const Config& c) {
  const std::string who = "GaussianNoise config";
  return std::make_shared<GaussianNoise>(c.get<double>("stddev", who), c.get_optional<int64_t>("seed", who),
                                         name_in(c, who, "gaussian_noise"));
}

// ---- dropout ----

SpatialDropout2D::SpatialDropout2D(double rate, std::optional<int64_t> seed, std::string name)
    : Layer(std::move(name)), rate_(rate), seed_(seed) {
  if (!(rate >= 0 && rate < 1)) fail("SpatialDropout2D: argument 'rate' must be in [0, 1), got ", rate);
}
Tensor SpatialDropout2D::call(const Tensor& x, bool training) {
  check_rank(name(), x, 4, "batch, height, width, channels");
  if (!training) return x;
  // One keep-or-drop decision per (example, channel), shared over the pixels.
  const Shape& s = x.shape();
  return dropout(x, rate_, seed_, Shape{s[0], 1, 1, s[3]});
}
Config SpatialDropout2D::get_config() const {
  return Layer::get_config()
      .set("rate", rate_)
      .set("seed", seed_ ? ConfigValue(*seed_) : ConfigValue(nullptr));
}
std::shared_ptr<SpatialDropout2D> SpatialDropout2D::from_config(const Config& c) {
  const std::string who = "SpatialDropout2D config";
  return std::make_shared<SpatialDropout2D>(c.get<double>("rate", who), c.get_optional<int64_t>("seed", who),
                                            name_in(c, who, "spatial_dropout2d"));
}

// ---- Masking ----

Masking::Masking(double mask_value, std::string name) : Layer(std::move(name)), mask_value_(mask_value) {}

std::optional<Tensor> Masking::compute_mask(const std::vector<Tensor>& inputs,
                                            const std::optional<Tensor>&) const {
  return reduce_any(not_equal(inputs.at(0), mask_value_), Axes{-1});
}

Tensor Masking::call(const Tensor& x, bool) {
  if (x.rank() < 3)
    fail("layer '", name(), "' (Masking) takes [batch, steps, features...] inputs, got ", x.shape());
  const Tensor real = reduce_any(not_equal(x, mask_value_), Axes{-1}, /*keepdims=*/true);
  return x * cast(real, x.dtype());
}

Config Masking::get_config() const { return Layer::get_config().set("mask_value", mask_value_); }

std::shared_ptr<Masking> Masking::from_config(const Config& c) {
  const std::string who = "Masking config";
  return std::make_shared<Masking>(c.get<double>("mask_value", who, 0.0), name_in(c, who, "masking"));
}

}  // namespace ef::nn
