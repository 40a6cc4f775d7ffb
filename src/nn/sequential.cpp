// Sequential (eagerflow/nn/sequential.h).
#include "eagerflow/nn/sequential.h"

#include <algorithm>

namespace ef::nn {

Sequential::Sequential(std::vector<std::shared_ptr<Layer>> layers, std::string name)
    : Model(std::move(name)) {
  for (auto& layer : layers) add(std::move(layer));
}

Layer& Sequential::add(std::shared_ptr<Layer> layer) {
  if (!layer) fail("Sequential '", name(), "': cannot add a null layer");
  if (built())
    fail<FailedPreconditionError>("Sequential '", name(), "': cannot add layer '", layer->name(),
                                  "' after the model was built by its first call");
  // The layer's name, or name_1, name_2, ... when taken (Keras' unique naming).
  auto taken = [&](const std::string& candidate) {
    const auto& children = named_children();
    return std::any_of(children.begin(), children.end(), [&](const auto& c) { return c.first == candidate; });
  };
  std::string tracked_name = layer->name();
  for (int suffix = 1; taken(tracked_name); ++suffix) tracked_name = layer->name() + "_" + std::to_string(suffix);
  track_module(tracked_name, layer);
  layers_.push_back(std::move(layer));
  return *layers_.back();
}

Tensor Sequential::call(const Tensor& inputs, bool training) {
  if (layers_.empty()) fail("Sequential '", name(), "' has no layers");
  Tensor x = inputs;
  std::optional<Tensor> mask;  // Note [masks]
  for (auto& layer : layers_) {
    const Tensor layer_input = x;
    x = mask ? only_output(layer->call_all({x}, mask, training)) : (*layer)(x, training);
    mask = layer->compute_mask({layer_input}, mask);
  }
  set_output_masks({mask});
  return x;
}

}  // namespace ef::nn
