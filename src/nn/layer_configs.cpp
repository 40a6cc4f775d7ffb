// get_config / from_config of the built-in layers (Keras' argument names), registered by
// class name in config.cpp.
#include <algorithm>
#include <cctype>

#include "eagerflow/nn/conv_layers.h"
#include "eagerflow/nn/conv_variant_layers.h"
#include "eagerflow/nn/layers.h"
#include "eagerflow/nn/normalization_layers.h"

namespace ef::nn {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return s;
}

// The arguments Dense, Conv1D and Conv2D share: activation, use_bias, the initializers.
template <class Options>
Config& with_kernel_arguments(Config& c, const Options& o, const std::string& layer) {
  return c.set("activation", o.activation.config_name(layer))
      .set("use_bias", o.use_bias)
      .set("kernel_initializer", o.kernel_initializer.get_config())
      .set("bias_initializer", o.bias_initializer.get_config());
}

template <class Options>
void read_kernel_arguments(const Config& c, const std::string& who, Options& o) {
  o.activation = Activation(c.get<std::string>("activation", who, std::string("linear")));
  o.use_bias = c.get<bool>("use_bias", who, true);
  o.kernel_initializer = Initializer::from_layer_config(c, "kernel_initializer", who, "glorot_uniform");
  o.bias_initializer = Initializer::from_layer_config(c, "bias_initializer", who, "zeros");
}

// The window arguments of the 2-D convolutions: strides, padding, dilation_rate.
template <class Options>
Config& with_window_arguments(Config& c, const Options& o) {
  return c.set("strides", o.strides).set("padding", lower(o.padding)).set("dilation_rate", o.dilation_rate);
}

template <class Options>
void read_window_arguments(const Config& c, const std::string& who, Options& o) {
  o.strides = c.get<std::vector<int64_t>>("strides", who, Window{1, 1});
  o.padding = c.get<std::string>("padding", who, std::string("valid"));
  o.dilation_rate = c.get<std::vector<int64_t>>("dilation_rate", who, Window{1, 1});
}

// What DepthwiseConv2D and SeparableConv2D share beyond the window.
template <class Options>
Config& with_depthwise_arguments(Config& c, const Options& o, const std::string& layer) {
  return c.set("depth_multiplier", o.depth_multiplier)
      .set("activation", o.activation.config_name(layer))
      .set("use_bias", o.use_bias)
      .set("depthwise_initializer", o.depthwise_initializer.get_config())
      .set("bias_initializer", o.bias_initializer.get_config());
}

template <class Options>
void read_depthwise_arguments(const Config& c, const std::string& who, Options& o) {
  o.depth_multiplier = c.get<int64_t>("depth_multiplier", who, int64_t{1});
  o.activation = Activation(c.get<std::string>("activation", who, std::string("linear")));
  o.use_bias = c.get<bool>("use_bias", who, true);
  o.depthwise_initializer = Initializer::from_layer_config(c, "depthwise_initializer", who, "glorot_uniform");
  o.bias_initializer = Initializer::from_layer_config(c, "bias_initializer", who, "zeros");
}

// The arguments LayerNormalization and BatchNormalization share.
template <class Options>
Config& with_normalization_arguments(Config& c, const Options& o) {
  return c.set("axis", o.axis)
      .set("epsilon", o.epsilon)
      .set("center", o.center)
      .set("scale", o.scale)
      .set("beta_initializer", o.beta_initializer.get_config())
      .set("gamma_initializer", o.gamma_initializer.get_config());
}

template <class Options>
void read_normalization_arguments(const Config& c, const std::string& who, Options& o) {
  o.axis = c.get<int64_t>("axis", who, int64_t{-1});
  o.epsilon = c.get<double>("epsilon", who, 1e-3);
  o.center = c.get<bool>("center", who, true);
  o.scale = c.get<bool>("scale", who, true);
  o.beta_initializer = Initializer::from_layer_config(c, "beta_initializer", who, "zeros");
  o.gamma_initializer = Initializer::from_layer_config(c, "gamma_initializer", who, "ones");
}

}  // namespace

// ---- core layers ----

Config Dense::get_config() const {
  Config c = Layer::get_config().set("units", units_);
  return with_kernel_arguments(c, options_, name());
}

std::shared_ptr<Dense> Dense::from_config(const Config& c) {
  const std::string who = "Dense config";
  DenseOptions o;
  read_kernel_arguments(c, who, o);
  o.name = c.get<std::string>("name", who, std::string("dense"));
  return std::make_shared<Dense>(c.get<int64_t>("units", who), std::move(o));
}

Config Flatten::get_config() const { return Layer::get_config(); }

std::shared_ptr<Flatten> Flatten::from_config(const Config& c) {
  return std::make_shared<Flatten>(c.get<std::string>("name", "Flatten config", std::string("flatten")));
}

Config Dropout::get_config() const {
  return Layer::get_config()
      .set("rate", rate_)
      .set("seed", seed_ ? ConfigValue(*seed_) : ConfigValue(nullptr));
}

std::shared_ptr<Dropout> Dropout::from_config(const Config& c) {
  const std::string who = "Dropout config";
  return std::make_shared<Dropout>(c.get<double>("rate", who), c.get_optional<int64_t>("seed", who),
                                   c.get<std::string>("name", who, std::string("dropout")));
}

Config LayerNormalization::get_config() const {
  Config c = Layer::get_config();
  return with_normalization_arguments(c, options_);
}

std::shared_ptr<LayerNormalization> LayerNormalization::from_config(const Config& c) {
  const std::string who = "LayerNormalization config";
  LayerNormalizationOptions o;
  read_normalization_arguments(c, who, o);
  o.name = c.get<std::string>("name", who, std::string("layer_normalization"));
  return std::make_shared<LayerNormalization>(std::move(o));
}

Config Embedding::get_config() const {
  return Layer::get_config()
      .set("input_dim", input_dim_)
      .set("output_dim", output_dim_)
      .set("embeddings_initializer", options_.embeddings_initializer.get_config())
      .set("mask_zero", options_.mask_zero);
}

std::shared_ptr<Embedding> Embedding::from_config(const Config& c) {
  const std::string who = "Embedding config";
  EmbeddingOptions o;
  if (c.has("embeddings_initializer"))
    o.embeddings_initializer = Initializer::from_layer_config(c, "embeddings_initializer", who, "");
  o.mask_zero = c.get<bool>("mask_zero", who, false);
  o.name = c.get<std::string>("name", who, std::string("embedding"));
  return std::make_shared<Embedding>(c.get<int64_t>("input_dim", who), c.get<int64_t>("output_dim", who),
                                     std::move(o));
}

// ---- convolution, pooling, batch normalization ----

Config Conv2D::get_config() const {
  Config c = Layer::get_config()
                 .set("filters", filters_)
                 .set("kernel_size", kernel_size_)
                 .set("strides", options_.strides)
                 .set("padding", lower(options_.padding))
                 .set("dilation_rate", options_.dilation_rate);
  return with_kernel_arguments(c, options_, name());
}

std::shared_ptr<Conv2D> Conv2D::from_config(const Config& c) {
  const std::string who = "Conv2D config";
  Conv2DOptions o;
  o.strides = c.get<std::vector<int64_t>>("strides", who, Window{1, 1});
  o.padding = c.get<std::string>("padding", who, std::string("valid"));
  o.dilation_rate = c.get<std::vector<int64_t>>("dilation_rate", who, Window{1, 1});
  read_kernel_arguments(c, who, o);
  o.name = c.get<std::string>("name", who, std::string("conv2d"));
  return std::make_shared<Conv2D>(c.get<int64_t>("filters", who),
                                  c.get<std::vector<int64_t>>("kernel_size", who), std::move(o));
}

Config Conv1D::get_config() const {
  Config c = Layer::get_config()
                 .set("filters", filters_)
                 .set("kernel_size", kernel_size_)
                 .set("strides", options_.strides)
                 .set("padding", options_.padding)
                 .set("dilation_rate", options_.dilation_rate);
  return with_kernel_arguments(c, options_, name());
}

std::shared_ptr<Conv1D> Conv1D::from_config(const Config& c) {
  const std::string who = "Conv1D config";
  Conv1DOptions o;
  o.strides = c.get<int64_t>("strides", who, int64_t{1});
  o.padding = c.get<std::string>("padding", who, std::string("valid"));
  o.dilation_rate = c.get<int64_t>("dilation_rate", who, int64_t{1});
  read_kernel_arguments(c, who, o);
  o.name = c.get<std::string>("name", who, std::string("conv1d"));
  return std::make_shared<Conv1D>(c.get<int64_t>("filters", who), c.get<int64_t>("kernel_size", who),
                                  std::move(o));
}

Config Conv2DTranspose::get_config() const {
  Config c = Layer::get_config().set("filters", filters_).set("kernel_size", kernel_size_);
  with_window_arguments(c, options_)
      .set("output_padding",
           options_.output_padding ? ConfigValue(*options_.output_padding) : ConfigValue(nullptr));
  return with_kernel_arguments(c, options_, name());
}

std::shared_ptr<Conv2DTranspose> Conv2DTranspose::from_config(const Config& c) {
  const std::string who = "Conv2DTranspose config";
  Conv2DTransposeOptions o;
  read_window_arguments(c, who, o);
  o.output_padding = c.get_optional<std::vector<int64_t>>("output_padding", who);
  read_kernel_arguments(c, who, o);
  o.name = c.get<std::string>("name", who, std::string("conv2d_transpose"));
  return std::make_shared<Conv2DTranspose>(c.get<int64_t>("filters", who),
                                           c.get<std::vector<int64_t>>("kernel_size", who), std::move(o));
}

Config DepthwiseConv2D::get_config() const {
  Config c = Layer::get_config().set("kernel_size", kernel_size_);
  with_window_arguments(c, options_);
  return with_depthwise_arguments(c, options_, name());
}

std::shared_ptr<DepthwiseConv2D> DepthwiseConv2D::from_config(const Config& c) {
  const std::string who = "DepthwiseConv2D config";
  DepthwiseConv2DOptions o;
  read_window_arguments(c, who, o);
  read_depthwise_arguments(c, who, o);
  o.name = c.get<std::string>("name", who, std::string("depthwise_conv2d"));
  return std::make_shared<DepthwiseConv2D>(c.get<std::vector<int64_t>>("kernel_size", who), std::move(o));
}

Config SeparableConv2D::get_config() const {
  Config c = Layer::get_config().set("filters", filters_).set("kernel_size", kernel_size_);
  with_window_arguments(c, options_);
  return with_depthwise_arguments(c, options_, name())
      .set("pointwise_initializer", options_.pointwise_initializer.get_config());
}

std::shared_ptr<SeparableConv2D> SeparableConv2D::from_config(const Config& c) {
  const std::string who = "SeparableConv2D config";
  SeparableConv2DOptions o;
  read_window_arguments(c, who, o);
  read_depthwise_arguments(c, who, o);
  o.pointwise_initializer = Initializer::from_layer_config(c, "pointwise_initializer", who, "glorot_uniform");
  o.name = c.get<std::string>("name", who, std::string("separable_conv2d"));
  return std::make_shared<SeparableConv2D>(c.get<int64_t>("filters", who),
                                           c.get<std::vector<int64_t>>("kernel_size", who), std::move(o));
}

namespace {
Config pool_config(Config base, const Window& pool_size, const Window& strides, const std::string& padding) {
  return base.set("pool_size", pool_size).set("strides", strides).set("padding", lower(padding));
}

template <class Pool>
std::shared_ptr<Pool> pool_from_config(const Config& c, const std::string& who, const char* default_name) {
  Pool2DOptions o;
  o.strides = c.get_optional<std::vector<int64_t>>("strides", who);
  o.padding = c.get<std::string>("padding", who, std::string("valid"));
  o.name = c.get<std::string>("name", who, std::string(default_name));
  return std::make_shared<Pool>(c.get<std::vector<int64_t>>("pool_size", who, Window{2, 2}), std::move(o));
}
}  // namespace

Config MaxPool2D::get_config() const {
  return pool_config(Layer::get_config(), pool_size_, strides_, padding_);
}

std::shared_ptr<MaxPool2D> MaxPool2D::from_config(const Config& c) {
  return pool_from_config<MaxPool2D>(c, "MaxPooling2D config", "max_pooling2d");
}

Config AveragePool2D::get_config() const {
  return pool_config(Layer::get_config(), pool_size_, strides_, padding_);
}

std::shared_ptr<AveragePool2D> AveragePool2D::from_config(const Config& c) {
  return pool_from_config<AveragePool2D>(c, "AveragePooling2D config", "average_pooling2d");
}

Config BatchNormalization::get_config() const {
  Config c = Layer::get_config().set("momentum", options_.momentum);
  return with_normalization_arguments(c, options_)
      .set("moving_mean_initializer", options_.moving_mean_initializer.get_config())
      .set("moving_variance_initializer", options_.moving_variance_initializer.get_config());
}

std::shared_ptr<BatchNormalization> BatchNormalization::from_config(const Config& c) {
  const std::string who = "BatchNormalization config";
  BatchNormalizationOptions o;
  read_normalization_arguments(c, who, o);
  o.momentum = c.get<double>("momentum", who, 0.99);
  o.moving_mean_initializer = Initializer::from_layer_config(c, "moving_mean_initializer", who, "zeros");
  o.moving_variance_initializer =
      Initializer::from_layer_config(c, "moving_variance_initializer", who, "ones");
  o.name = c.get<std::string>("name", who, std::string("batch_normalization"));
  return std::make_shared<BatchNormalization>(std::move(o));
}

Config GroupNormalization::get_config() const {
  Config c = Layer::get_config().set("groups", groups_);
  return with_normalization_arguments(c, options_);
}

std::shared_ptr<GroupNormalization> GroupNormalization::from_config(const Config& c) {
  const std::string who = "GroupNormalization config";
  GroupNormalizationOptions o;
  read_normalization_arguments(c, who, o);
  o.name = c.get<std::string>("name", who, std::string("group_normalization"));
  return std::make_shared<GroupNormalization>(c.get<int64_t>("groups", who, int64_t{32}), std::move(o));
}

}  // namespace ef::nn
