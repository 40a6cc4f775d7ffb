// PReLU: the leaky ReLU whose negative slope is learned (Keras' PReLU).
//
//   model.add(ef::nn::PReLU({.shared_axes = {1, 2}}));   // one slope per channel of NHWC images
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eagerflow/nn/layer.h"

namespace ef::nn {

struct PReLUOptions {
  Initializer alpha_initializer = "zeros";
  // Axes (counted with the batch axis as 0, so from 1) along which one slope is shared.
  std::vector<int64_t> shared_axes;
  std::string name = "p_re_lu";
};

// max(x, 0) + alpha * min(x, 0), as Keras computes it: relu(x) - alpha * relu(-x).
// alpha has the shape of one example (input_shape[1:]) with the shared axes set to 1.
// Throws InvalidArgumentError naming the layer for a shared axis outside [1, rank), and
// at call time for inputs whose example shape alpha does not fit.
class PReLU : public Layer {
 public:
  explicit PReLU(PReLUOptions options = {});
  std::string class_name() const override { return "PReLU"; }
  Config get_config() const override;
  static std::shared_ptr<PReLU> from_config(const Config& config);
  Variable alpha() const;

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  PReLUOptions options_;
  std::optional<Variable> alpha_;
};

}  // namespace ef::nn
