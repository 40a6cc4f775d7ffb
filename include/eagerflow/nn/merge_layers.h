// Layers that merge several tensors into one (Keras' merge layers), for the functional
// API and for direct calls on a list:
//
//   ef::nn::KerasTensor both = (*std::make_shared<ef::nn::Concatenate>())({left, right});
//   ef::Tensor sum = ef::nn::Add()({a, b});
//
// The elementwise ones broadcast as their ops do; their gradients are those ops'.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "eagerflow/nn/layer.h"

namespace ef::nn {

// The elementwise merges: sum, difference (two inputs), product, mean, maximum, minimum.
class Merge : public Layer {
 public:
  enum class Kind { kAdd, kSubtract, kMultiply, kAverage, kMaximum, kMinimum };
  explicit Merge(Kind kind, std::string name = "");
  std::string class_name() const override;
  static std::shared_ptr<Merge> from_config(Kind kind, const Config& config);

 protected:
  Tensor call(const Tensor& inputs, bool training) override;  // refuses one tensor
  std::vector<Tensor> call_inputs(const std::vector<Tensor>& inputs, bool training) override;

 private:
  Kind kind_;
};

struct Add : Merge {
  explicit Add(std::string name = "add") : Merge(Kind::kAdd, std::move(name)) {}
};
struct Subtract : Merge {
  explicit Subtract(std::string name = "subtract") : Merge(Kind::kSubtract, std::move(name)) {}
};
struct Multiply : Merge {
  explicit Multiply(std::string name = "multiply") : Merge(Kind::kMultiply, std::move(name)) {}
};
struct Average : Merge {
  explicit Average(std::string name = "average") : Merge(Kind::kAverage, std::move(name)) {}
};
struct Maximum : Merge {
  explicit Maximum(std::string name = "maximum") : Merge(Kind::kMaximum, std::move(name)) {}
};
struct Minimum : Merge {
  explicit Minimum(std::string name = "minimum") : Merge(Kind::kMinimum, std::move(name)) {}
};

// Joins the inputs along `axis` (the last by default); the other dimensions must match.
class Concatenate : public Layer {
 public:
  explicit Concatenate(int64_t axis = -1, std::string name = "concatenate");
  int64_t axis() const { return axis_; }
  std::string class_name() const override { return "Concatenate"; }
  Config get_config() const override;
  static std::shared_ptr<Concatenate> from_config(const Config& config);

 protected:
  Tensor call(const Tensor& inputs, bool training) override;  // refuses one tensor
  std::vector<Tensor> call_inputs(const std::vector<Tensor>& inputs, bool training) override;

 private:
  int64_t axis_;
};

}  // namespace ef::nn
