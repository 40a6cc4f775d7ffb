// Layers that wrap another layer (Keras' wrappers):
//
//   auto per_step = std::make_shared<ef::nn::TimeDistributed>(std::make_shared<ef::nn::Dense>(8));
//   auto both_ways = std::make_shared<ef::nn::Bidirectional>(ef::nn::LSTM(16, {.return_sequences = true}));
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "eagerflow/nn/layer.h"

namespace ef::nn {

// Applies `layer` to every step of [batch, steps, ...] inputs (the same weights at each
// step): the steps are folded into the batch, and unfolded from the layer's output.
class TimeDistributed : public Layer {
 public:
  bool supports_masking() const override { return true; }  // step by step (Note [masks])
  explicit TimeDistributed(std::shared_ptr<Layer> layer, std::string name = "");
  const std::shared_ptr<Layer>& layer() const { return layer_; }
  std::string class_name() const override { return "TimeDistributed"; }
  Config get_config() const override;
  static std::shared_ptr<TimeDistributed> from_config(const Config& config);

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::shared_ptr<Layer> layer_;
};

// Runs a recurrent layer forwards and a copy of it backwards over the steps, and
// merges their outputs: "concat" (default), "sum", "mul", "ave", or "" for both
// outputs (call_all). The backward copy is made from the layer's config with
// go_backwards flipped; with return_sequences its outputs are reversed back into step
// order, as Keras does. With return_state the outputs are [merged, forward states...,
// backward states...], and initial states come the same way: [inputs, forward states...,
// backward states...]. A mask reaches both directions; with return_sequences their
// masked steps output zeros (Keras forces zero_output_for_mask so).
class Bidirectional : public Layer {
 public:
  explicit Bidirectional(std::shared_ptr<Layer> layer, std::string merge_mode = "concat",
                         std::string name = "");
  const std::shared_ptr<Layer>& forward_layer() const { return forward_; }
  const std::shared_ptr<Layer>& backward_layer() const { return backward_; }
  std::string class_name() const override { return "Bidirectional"; }
  Config get_config() const override;
  static std::shared_ptr<Bidirectional> from_config(const Config& config);

 protected:
  Tensor call(const Tensor& inputs, bool training) override;
  std::vector<Tensor> call_inputs(const std::vector<Tensor>& inputs, bool training) override;
  std::vector<Tensor> call_masked(const std::vector<Tensor>& inputs, const Tensor& mask,
                                  bool training) override;

 public:
  bool supports_masking() const override { return true; }
  std::optional<Tensor> compute_mask(const std::vector<Tensor>& inputs,
                                     const std::optional<Tensor>& mask) const override;

 private:
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const std::optional<Tensor>& mask,
                          bool training);
  std::shared_ptr<Layer> forward_, backward_;
  std::string merge_mode_;
  bool return_sequences_;
};

}  // namespace ef::nn
