// MultiHeadAttention and Attention (eagerflow/nn/attention_layers.h).
#include "eagerflow/nn/attention_layers.h"

#include <cmath>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/runtime/context.h"

namespace ef::nn {
namespace {

std::string shapes_text(const std::vector<Shape>& shapes) {
  std::string out;
  for (const Shape& s : shapes) out += (out.empty() ? "" : ", ") + s.to_string();
  return out;
}

// Rank-3 inputs [batch, steps, features]; query and value (and key) batch sizes agree.
void check_sequences(const std::string& layer, const std::vector<Shape>& shapes, size_t most) {
  if (shapes.size() < 2 || shapes.size() > most)
    fail("layer '", layer, "' takes [query, value", most > 3 ? ", key, attention_mask]" : ", key]",
         " (two to ", most, " tensors), got ", shapes.size(), ": ", shapes_text(shapes));
  for (size_t i = 0; i < std::min<size_t>(shapes.size(), 3); ++i)
    if (shapes[i].rank() != 3)
      fail("layer '", layer, "': ",
           i == 0   ? "query"
           : i == 1 ? "value"
                    : "key",
           " must be [batch, steps, features], got ", shapes[i]);
  if (shapes.size() > 2 && shapes[2][1] != shapes[1][1] && shapes[2][1] != kUnknownDim &&
      shapes[1][1] != kUnknownDim)
    fail("layer '", layer, "': key ", shapes[2], " and value ", shapes[1],
         " must have the same number of steps");
}

// Keras' additive mask: a large negative score where the mask is false (-3e4 in
// float16, whose range ends at 65504).
Tensor masked_scores(const Tensor& scores, const Tensor& mask) {
  const double large_negative = scores.dtype() == DType::Float16 ? -3e4 : -1e9;
  const Tensor keep = mask.dtype() == DType::Bool ? mask : not_equal(mask, 0);
  return where(keep, scores, scores + large_negative);
}

}  // namespace

// ---- MultiHeadAttention ----

MultiHeadAttention::MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions options)
    : Layer(options.name),
      num_heads_(num_heads),
      key_dim_(key_dim),
      value_dim_(options.value_dim.value_or(key_dim)),
      options_(std::move(options)) {
  if (num_heads_ < 1 || key_dim_ < 1 || value_dim_ < 1)
    fail("MultiHeadAttention: num_heads (", num_heads_, "), key_dim (", key_dim_, ") and value_dim (",
         value_dim_, ") must be positive");
  if (!(options_.dropout >= 0 && options_.dropout < 1))
    fail("MultiHeadAttention: dropout must be in [0, 1), got ", options_.dropout);
  if (options_.output_shape && *options_.output_shape < 1)
    fail("MultiHeadAttention: output_shape must be positive, got ", *options_.output_shape);
}

void MultiHeadAttention::build_inputs(const std::vector<Shape>& shapes) {
  check_sequences(name(), shapes, 4);
  const int64_t query_features = shapes[0][2], value_features = shapes[1][2];
  const int64_t key_features = shapes.size() > 2 ? shapes[2][2] : value_features;
  if (query_features < 1 || value_features < 1 || key_features < 1)
    fail("layer '", name(), "': the features (last dimension) of query, value and key must be known, got ",
         shapes_text(shapes));
  const int64_t out = options_.output_shape.value_or(query_features);
  const Initializer& k = options_.kernel_initializer;
  const Initializer& b = options_.bias_initializer;
  query_kernel_ = add_weight("query_kernel", {query_features, num_heads_, key_dim_}, k);
  key_kernel_ = add_weight("key_kernel", {key_features, num_heads_, key_dim_}, k);
  value_kernel_ = add_weight("value_kernel", {value_features, num_heads_, value_dim_}, k);
  output_kernel_ = add_weight("output_kernel", {num_heads_, value_dim_, out}, k);
  if (options_.use_bias) {
    query_bias_ = add_weight("query_bias", {num_heads_, key_dim_}, b);
    key_bias_ = add_weight("key_bias", {num_heads_, key_dim_}, b);
    value_bias_ = add_weight("value_bias", {num_heads_, value_dim_}, b);
    output_bias_ = add_weight("output_bias", {out}, b);
  }
}

Tensor MultiHeadAttention::project(const Tensor& x, const Variable& kernel,
                                   const std::optional<Variable>& bias) const {
  const Shape& w = kernel.shape();  // [features, heads, dim]
  const int64_t steps = x.shape()[1];
  if (steps == kUnknownDim && x.shape()[0] == kUnknownDim)
    fail("layer '", name(), "': the number of steps must be known (keras.Input(shape=(steps, features)))");
  Tensor y = matmul(x, reshape(kernel.value(), {w[0], w[1] * w[2]}));
  if (bias) y = y + reshape(bias->value(), {w[1] * w[2]});
  y = steps == kUnknownDim ? reshape(y, {x.shape()[0], -1, w[1], w[2]}) : reshape(y, {-1, steps, w[1], w[2]});
  return transpose(y, {0, 2, 1, 3});
}

std::pair<Tensor, Tensor> MultiHeadAttention::attend(const std::vector<Tensor>& inputs, bool training) {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  check_sequences(name(), shapes, 4);
  const Tensor& query = inputs[0];
  const Tensor& value = inputs[1];
  const Tensor& key = inputs.size() > 2 ? inputs[2] : inputs[1];
  const std::optional<Tensor> mask = inputs.size() > 3 ? std::optional(inputs[3]) : std::nullopt;
  const Variable qk = built_variable(query_kernel_, "query kernel");
  const Tensor q = project(query, qk, query_bias_) * (1.0 / std::sqrt(static_cast<double>(key_dim_)));
  const Tensor k = project(key, *key_kernel_, key_bias_);
  const Tensor v = project(value, *value_kernel_, value_bias_);
  Tensor scores = matmul(q, k, false, true);  // [batch, heads, query steps, value steps]
  if (mask) {
    if (mask->shape().rank() != 3)
      fail("layer '", name(), "': attention_mask must be [batch, query steps, value steps], got ",
           mask->shape());
    scores = masked_scores(scores, expand_dims(*mask, 1));
  }
  const Tensor probabilities = softmax(scores, -1);
  const Tensor attended = training && options_.dropout > 0
                              ? dropout(probabilities, options_.dropout, options_.seed)
                              : probabilities;
  Tensor heads = transpose(matmul(attended, v), {0, 2, 1, 3});  // [batch, query steps, heads, value_dim]
  const Shape& w = output_kernel_->shape();
  const int64_t steps = query.shape()[1];
  heads = steps == kUnknownDim ? reshape(heads, {query.shape()[0], -1, w[0] * w[1]})
                               : reshape(heads, {-1, steps, w[0] * w[1]});
  Tensor out = matmul(heads, reshape(output_kernel_->value(), {w[0] * w[1], w[2]}));
  if (output_bias_) out = out + output_bias_->value();
  return {out, probabilities};
}

std::vector<Tensor> MultiHeadAttention::call_with_masks(const std::vector<Tensor>& inputs,
                                                        const std::vector<std::optional<Tensor>>& masks,
                                                        bool training) {
  auto mask_of = [&](size_t i) { return i < masks.size() && i < inputs.size() ? masks[i] : std::nullopt; };
  std::optional<Tensor> automatic;
  auto and_with = [&](const Tensor& m) { automatic = automatic ? logical_and(*automatic, m) : m; };
  if (const auto query = mask_of(0)) and_with(expand_dims(*query, -1));  // [batch, query steps, 1]
  for (size_t i : {size_t{1}, size_t{2}})
    if (const auto positions = mask_of(i)) and_with(expand_dims(*positions, 1));  // [batch, 1, value steps]
  if (!automatic) return call_inputs(inputs, training);
  std::vector<Tensor> with_mask = inputs;
  if (with_mask.size() == 2) with_mask.push_back(inputs[1]);  // the key is the value
  if (with_mask.size() == 4)
    with_mask[3] = logical_and(
        *automatic, with_mask[3].dtype() == DType::Bool ? with_mask[3] : not_equal(with_mask[3], 0));
  else
    with_mask.push_back(*automatic);
  return call_inputs(with_mask, training);
}

Tensor MultiHeadAttention::call(const Tensor& inputs, bool) {
  fail("layer '", name(),
       "' (MultiHeadAttention) takes [query, value] (and key, attention_mask), got one tensor ",
       inputs.shape());
}

std::vector<Tensor> MultiHeadAttention::call_inputs(const std::vector<Tensor>& inputs, bool training) {
  return {attend(inputs, training).first};
}

Config MultiHeadAttention::get_config() const {
  return Layer::get_config()
      .set("num_heads", num_heads_)
      .set("key_dim", key_dim_)
      .set("value_dim", value_dim_)
      .set("dropout", options_.dropout)
      .set("use_bias", options_.use_bias)
      .set("output_shape", options_.output_shape ? ConfigValue(*options_.output_shape) : ConfigValue(nullptr))
      .set("kernel_initializer", options_.kernel_initializer.get_config())
      .set("bias_initializer", options_.bias_initializer.get_config())
      .set("seed", options_.seed ? ConfigValue(*options_.seed) : ConfigValue(nullptr));
}

std::shared_ptr<MultiHeadAttention> MultiHeadAttention::from_config(const Config& c) {
  const std::string who = "MultiHeadAttention config";
  MultiHeadAttentionOptions o;
  o.value_dim = c.get_optional<int64_t>("value_dim", who);
  o.dropout = c.get<double>("dropout", who, 0.0);
  o.use_bias = c.get<bool>("use_bias", who, true);
  o.output_shape = c.get_optional<int64_t>("output_shape", who);
  o.kernel_initializer = Initializer::from_layer_config(c, "kernel_initializer", who, "glorot_uniform");
  o.bias_initializer = Initializer::from_layer_config(c, "bias_initializer", who, "zeros");
  o.seed = c.get_optional<int64_t>("seed", who);
  o.name = c.get<std::string>("name", who, std::string("multi_head_attention"));
  return std::make_shared<MultiHeadAttention>(c.get<int64_t>("num_heads", who),
                                              c.get<int64_t>("key_dim", who), std::move(o));
}

// ---- Attention ----

Attention::Attention(bool use_scale, std::string score_mode, double dropout, std::optional<int64_t> seed,
                     std::string name)
    : Layer(std::move(name)),
      use_scale_(use_scale),
      score_mode_(std::move(score_mode)),
      dropout_(dropout),
      seed_(seed) {
  if (score_mode_ != "dot" && score_mode_ != "concat")
    fail("Attention: score_mode must be \"dot\" or \"concat\", got \"", score_mode_, "\"");
  if (!(dropout_ >= 0 && dropout_ < 1)) fail("Attention: dropout must be in [0, 1), got ", dropout_);
}

void Attention::build_inputs(const std::vector<Shape>& shapes) {
  check_sequences(name(), shapes, 3);
  const int64_t key_features = (shapes.size() > 2 ? shapes[2] : shapes[1])[2];
  if (shapes[0][2] != key_features && shapes[0][2] != kUnknownDim && key_features != kUnknownDim)
    fail("layer '", name(), "': query ", shapes[0], " and key ", shapes.size() > 2 ? shapes[2] : shapes[1],
         " must have the same features");
  if (use_scale_) scale_ = add_weight("scale", {}, "ones");
  if (score_mode_ == "concat") concat_score_weight_ = add_weight("concat_score_weight", {}, "ones");
}

Tensor Attention::call(const Tensor& inputs, bool) {
  fail("layer '", name(), "' (Attention) takes [query, value] (and key), got one tensor ", inputs.shape());
}

std::vector<Tensor> Attention::call_inputs(const std::vector<Tensor>& inputs, bool training) {
  return {attend(inputs, std::nullopt, std::nullopt, training)};
}

std::vector<Tensor> Attention::call_with_masks(const std::vector<Tensor>& inputs,
                                               const std::vector<std::optional<Tensor>>& masks,
                                               bool training) {
  auto mask_of = [&](size_t i) { return i < masks.size() ? masks[i] : std::nullopt; };
  return {attend(inputs, mask_of(0), mask_of(1), training)};
}

Tensor Attention::attend(const std::vector<Tensor>& inputs, const std::optional<Tensor>& query_mask,
                         const std::optional<Tensor>& value_mask, bool training) {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  check_sequences(name(), shapes, 3);
  const Tensor& query = inputs[0];
  const Tensor& value = inputs[1];
  const Tensor& key = inputs.size() > 2 ? inputs[2] : inputs[1];
  Tensor scores;
  if (score_mode_ == "dot") {
    scores = matmul(query, key, false, true);
    if (scale_) scores = scores * scale_->value();
  } else {  // [batch, query steps, 1, features] + [batch, 1, value steps, features]
    Tensor sum = tanh(expand_dims(query, 2) + expand_dims(key, 1));
    if (scale_) sum = sum * scale_->value();
    scores = concat_score_weight_->value() * reduce_sum(sum, {-1});
  }
  if (value_mask) scores = masked_scores(scores, expand_dims(*value_mask, 1));  // [batch, 1, value steps]
  Tensor probabilities = softmax(scores, -1);
  if (training && dropout_ > 0) probabilities = dropout(probabilities, dropout_, seed_);
  Tensor out = matmul(probabilities, value);
  if (query_mask) out = out * cast(expand_dims(*query_mask, -1), out.dtype());  // [batch, query steps, 1]
  return out;
}

Config Attention::get_config() const {
  return Layer::get_config()
      .set("use_scale", use_scale_)
      .set("score_mode", score_mode_)
      .set("dropout", dropout_)
      .set("seed", seed_ ? ConfigValue(*seed_) : ConfigValue(nullptr));
}

std::shared_ptr<Attention> Attention::from_config(const Config& c) {
  const std::string who = "Attention config";
  return std::make_shared<Attention>(c.get<bool>("use_scale", who, false),
                                     c.get<std::string>("score_mode", who, std::string("dot")),
                                     c.get<double>("dropout", who, 0.0), c.get_optional<int64_t>("seed", who),
                                     c.get<std::string>("name", who, std::string("attention")));
}

// ---- CausalMask ----

std::shared_ptr<CausalMask> CausalMask::from_config(const Config& c) {
  return std::make_shared<CausalMask>(
      c.get<std::string>("name", "CausalMask config", std::string("causal_mask")));
}

Tensor CausalMask::call(const Tensor& inputs, bool) {
  fail("layer '", name(), "' (CausalMask) takes [query, value], got one tensor ", inputs.shape());
}

std::vector<Tensor> CausalMask::call_inputs(const std::vector<Tensor>& inputs, bool) {
  if ((inputs.size() != 2 && inputs.size() != 3) || inputs[0].shape().rank() < 2 ||
      inputs[1].shape().rank() < 2)
    fail("layer '", name(),
         "' (CausalMask) takes [query, value] or [query, value, mask] of [batch, steps, ...], got ",
         inputs.size(), " tensors");
  const int64_t query_steps = inputs[0].shape()[1], value_steps = inputs[1].shape()[1];
  if (query_steps == kUnknownDim || value_steps == kUnknownDim)
    fail("layer '", name(), "': a causal mask needs known numbers of steps, got ", inputs[0].shape(), " and ",
         inputs[1].shape());
  const DeviceScope on_inputs(inputs[0].device());  // the mask is made where the scores are
  const Tensor rows = expand_dims(range(0, query_steps, 1, DType::Int64), 1);
  const Tensor columns = expand_dims(range(0, value_steps, 1, DType::Int64), 0);
  Tensor mask = expand_dims(greater_equal(rows, columns), 0);
  if (inputs.size() == 3)
    mask = logical_and(mask, inputs[2].dtype() == DType::Bool ? inputs[2] : not_equal(inputs[2], 0));
  return {mask};
}

}  // namespace ef::nn
