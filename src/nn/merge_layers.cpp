// Merge layers (eagerflow/nn/merge_layers.h).
#include "eagerflow/nn/merge_layers.h"

#include <cctype>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"

namespace ef::nn {
namespace {

const char* keras_name(Merge::Kind kind) {
  switch (kind) {
    case Merge::Kind::kAdd:
      return "Add";
    case Merge::Kind::kSubtract:
      return "Subtract";
    case Merge::Kind::kMultiply:
      return "Multiply";
    case Merge::Kind::kAverage:
      return "Average";
    case Merge::Kind::kMaximum:
      return "Maximum";
    case Merge::Kind::kMinimum:
      return "Minimum";
  }
  return "Merge";
}

std::string default_name(Merge::Kind kind) {
  std::string name = keras_name(kind);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::string shapes_of(const std::vector<Tensor>& tensors) {
  std::string out;
  for (const Tensor& t : tensors) out += (out.empty() ? "" : ", ") + t.shape().to_string();
  return out;
}

}  // namespace

Merge::Merge(Kind kind, std::string name)
    : Layer(name.empty() ? default_name(kind) : std::move(name)), kind_(kind) {}

std::string Merge::class_name() const { return keras_name(kind_); }

std::shared_ptr<Merge> Merge::from_config(Kind kind, const Config& config) {
  const std::string who = std::string(keras_name(kind)) + " config";
  return std::make_shared<Merge>(kind, config.get<std::string>("name", who, default_name(kind)));
}

Tensor Merge::call(const Tensor& inputs, bool) {
  fail("layer '", name(), "' (", keras_name(kind_), ") merges a list of tensors, got one tensor of shape ",
       inputs.shape());
}

std::vector<Tensor> Merge::call_inputs(const std::vector<Tensor>& inputs, bool) {
  if (kind_ == Kind::kSubtract ? inputs.size() != 2 : inputs.size() < 2)
    fail("layer '", name(), "' (", keras_name(kind_), ") takes ",
         kind_ == Kind::kSubtract ? "exactly" : "at least", " two input tensors, got ", inputs.size(), " (",
         shapes_of(inputs), ")");
  Tensor out = inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) {
    switch (kind_) {
      case Kind::kAdd:
      case Kind::kAverage:
        out = out + inputs[i];
        break;
      case Kind::kSubtract:
        out = out - inputs[i];
        break;
      case Kind::kMultiply:
        out = out * inputs[i];
        break;
      case Kind::kMaximum:
        out = maximum(out, inputs[i]);
        break;
      case Kind::kMinimum:
        out = minimum(out, inputs[i]);
        break;
    }
  }
  if (kind_ == Kind::kAverage) out = out / static_cast<double>(inputs.size());
  return {out};
}

Concatenate::Concatenate(int64_t axis, std::string name) : Layer(std::move(name)), axis_(axis) {}

Config Concatenate::get_config() const { return Layer::get_config().set("axis", axis_); }

std::shared_ptr<Concatenate> Concatenate::from_config(const Config& config) {
  const std::string who = "Concatenate config";
  return std::make_shared<Concatenate>(config.get<int64_t>("axis", who, int64_t{-1}),
                                       config.get<std::string>("name", who, std::string("concatenate")));
}

Tensor Concatenate::call(const Tensor& inputs, bool) {
  fail("layer '", name(), "' (Concatenate) joins a list of tensors, got one tensor of shape ",
       inputs.shape());
}

std::vector<Tensor> Concatenate::call_inputs(const std::vector<Tensor>& inputs, bool) {
  if (inputs.size() < 2)
    fail("layer '", name(), "' (Concatenate) takes at least two input tensors, got ", inputs.size());
  return {concat(inputs, axis_)};
}

}  // namespace ef::nn
