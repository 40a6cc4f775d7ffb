// Sequential: layers applied one after another (Keras' Sequential).
//
//   ef::nn::Sequential model;
//   model.add(ef::nn::Flatten());
//   model.add(ef::nn::Dense(256, {.activation = "relu"}));
//   model.add(ef::nn::Dense(10));
//   ef::Tensor logits = model(images, /*training=*/true);
//
// Each layer is tracked under its own name, made unique with a suffix ("dense",
// "dense_1"), so checkpoint paths read "dense_1/kernel".
#pragma once

#include <concepts>
#include <memory>
#include <vector>

#include "eagerflow/nn/model.h"

namespace ef::nn {

class Sequential : public Model {
 public:
  explicit Sequential(std::vector<std::shared_ptr<Layer>> layers = {}, std::string name = "sequential");

  // Appends a layer; returns it. Adding after the model was built throws
  // FailedPreconditionError (the new layer would miss the build).
  Layer& add(std::shared_ptr<Layer> layer);
  template <class L>
    requires std::derived_from<std::remove_cvref_t<L>, Layer>
  std::remove_cvref_t<L>& add(L&& layer) {
    auto owned = std::make_shared<std::remove_cvref_t<L>>(std::move(layer));
    add(std::shared_ptr<Layer>(owned));
    return *owned;
  }

  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::vector<std::shared_ptr<Layer>> layers_;
};

}  // namespace ef::nn
