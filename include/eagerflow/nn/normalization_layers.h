// Normalization layers beyond BatchNormalization and LayerNormalization (Keras' names,
// arguments and defaults).
//
//   model.add(ef::nn::GroupNormalization(8));   // NHWC images with a multiple of 8 channels
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "eagerflow/nn/layer.h"

namespace ef::nn {

struct GroupNormalizationOptions {
  int64_t axis = -1;  // the channel axis
  double epsilon = 1e-3;
  bool center = true;  // learn an offset beta per channel
  bool scale = true;   // learn a factor gamma per channel
  Initializer beta_initializer = "zeros";
  Initializer gamma_initializer = "ones";
  std::string name = "group_normalization";
};

// Splits the channels on `axis` into `groups` groups of consecutive channels and
// normalizes each example's group by its mean and (population) variance over the group's
// channels and every other non-batch axis, then applies gamma and beta per channel.
// groups = -1 means one group per channel (instance normalization); groups = 1 gives
// layer normalization over all non-batch axes. Throws InvalidArgumentError naming the
// layer when the channel count is not a multiple of groups, and the same at call time
// for inputs of another channel count than the layer was built for.
class GroupNormalization : public Layer {
 public:
  explicit GroupNormalization(int64_t groups = 32, GroupNormalizationOptions options = {});
  std::string class_name() const override { return "GroupNormalization"; }
  Config get_config() const override;
  static std::shared_ptr<GroupNormalization> from_config(const Config& config);
  Variable gamma() const;
  Variable beta() const;

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t groups_;
  GroupNormalizationOptions options_;
  int axis_ = -1;
  int64_t channels_ = 0;
  std::optional<Variable> gamma_, beta_;
};

}  // namespace ef::nn
