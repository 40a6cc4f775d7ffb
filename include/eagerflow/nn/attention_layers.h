// Attention layers (Keras' MultiHeadAttention and Attention). Both take a list of
// inputs: [query, value], [query, value, key], or, for MultiHeadAttention, also an
// attention mask ([query, value, key, mask]):
//
//   auto mha = std::make_shared<ef::nn::MultiHeadAttention>(4, 16);
//   ef::Tensor y = (*mha)({x, x});                        // self-attention
//
// Inputs are [batch, steps, features]. A mask is [batch, query steps, value steps],
// true (or 1) where a query step may attend to a value step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eagerflow/nn/layer.h"

namespace ef::nn {

struct MultiHeadAttentionOptions {
  std::optional<int64_t> value_dim;  // per head; default key_dim
  double dropout = 0;                // on the attention probabilities, in training
  bool use_bias = true;
  std::optional<int64_t> output_shape;  // the output's features; default the query's
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::optional<int64_t> seed;  // of the dropout
  std::string name = "multi_head_attention";
};

// Scaled dot-product attention over num_heads heads (Vaswani et al. 2017), with Keras'
// weight shapes: query_kernel, key_kernel, value_kernel [features, heads, key_dim or
// value_dim] and their biases [heads, dim]; output_kernel [heads, value_dim, output
// features] and output_bias.
class MultiHeadAttention : public Layer {
 public:
  bool supports_masking() const override { return true; }  // the output keeps the query's mask
  MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions options = {});
  std::string class_name() const override { return "MultiHeadAttention"; }
  Config get_config() const override;
  static std::shared_ptr<MultiHeadAttention> from_config(const Config& config);
  int64_t num_heads() const { return num_heads_; }
  int64_t key_dim() const { return key_dim_; }

  // The output [batch, query steps, output features] and the attention probabilities
  // [batch, heads, query steps, value steps] for the inputs [query, value, (key,
  // (mask))] of a built layer (build_for, or a first call).
  std::pair<Tensor, Tensor> attend(const std::vector<Tensor>& inputs, bool training);

 protected:
  void build_inputs(const std::vector<Shape>& input_shapes) override;
  Tensor call(const Tensor& inputs, bool training) override;  // refuses one tensor
  std::vector<Tensor> call_inputs(const std::vector<Tensor>& inputs, bool training) override;
  // Keras' automatic attention mask: the query's positions [batch, query steps, 1] and
  // the value's (and key's) [batch, 1, value steps], and-ed with any attention_mask.
  std::vector<Tensor> call_with_masks(const std::vector<Tensor>& inputs,
                                      const std::vector<std::optional<Tensor>>& masks,
                                      bool training) override;

 private:
  // A projection [batch, steps, features] -> [batch, heads, steps, dim].
  Tensor project(const Tensor& x, const Variable& kernel, const std::optional<Variable>& bias) const;

  int64_t num_heads_, key_dim_, value_dim_;
  MultiHeadAttentionOptions options_;
  std::optional<Variable> query_kernel_, key_kernel_, value_kernel_, output_kernel_;
  std::optional<Variable> query_bias_, key_bias_, value_bias_, output_bias_;
};

// Luong-style attention (Keras' Attention): scores query · key (score_mode "dot") or
// the sum of tanh(query + key) ("concat"), times a learned scale when use_scale;
// softmax over the value steps; the probabilities times value.
class Attention : public Layer {
 public:
  bool supports_masking() const override { return true; }  // the output keeps the query's mask
  explicit Attention(bool use_scale = false, std::string score_mode = "dot", double dropout = 0,
                     std::optional<int64_t> seed = std::nullopt, std::string name = "attention");
  std::string class_name() const override { return "Attention"; }
  Config get_config() const override;
  static std::shared_ptr<Attention> from_config(const Config& config);

 protected:
  void build_inputs(const std::vector<Shape>& input_shapes) override;
  Tensor call(const Tensor& inputs, bool training) override;  // refuses one tensor
  std::vector<Tensor> call_inputs(const std::vector<Tensor>& inputs, bool training) override;
  // Keras' masks [query mask, value mask]: value steps masked out get no attention, and
  // the outputs of masked query steps are zeros.
  std::vector<Tensor> call_with_masks(const std::vector<Tensor>& inputs,
                                      const std::vector<std::optional<Tensor>>& masks,
                                      bool training) override;

 private:
  Tensor attend(const std::vector<Tensor>& inputs, const std::optional<Tensor>& query_mask,
                const std::optional<Tensor>& value_mask, bool training);

  bool use_scale_;
  std::string score_mode_;
  double dropout_;
  std::optional<int64_t> seed_;
  std::optional<Variable> scale_, concat_score_weight_;
};

// The mask of causal attention (MultiHeadAttention's use_causal_mask) as a layer, so a
// functional model can hold it: [query, value] give a bool [1, query steps, value
// steps] mask, true where the value step is not after the query step;
// [query, value, mask] give that and `mask`.
class CausalMask : public Layer {
 public:
  explicit CausalMask(std::string name = "causal_mask") : Layer(std::move(name)) {}
  std::string class_name() const override { return "CausalMask"; }
  static std::shared_ptr<CausalMask> from_config(const Config& config);

 protected:
  Tensor call(const Tensor& inputs, bool training) override;  // refuses one tensor
  std::vector<Tensor> call_inputs(const std::vector<Tensor>& inputs, bool training) override;
};

}  // namespace ef::nn
