// TimeDistributed and Bidirectional (eagerflow/nn/wrapper_layers.h).
#include "eagerflow/nn/wrapper_layers.h"

#include "eagerflow/nn/recurrent.h"

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"

namespace ef::nn {
namespace {

std::shared_ptr<Layer> wrapped_layer(const Config& config, const std::string& who) {
  LayerEntry entry = read_layer_entry(config, "layer", who);
  return layer_from_config(entry.class_name, entry.config);
}

}  // namespace

// ---- TimeDistributed ----

TimeDistributed::TimeDistributed(std::shared_ptr<Layer> layer, std::string name)
    : Layer(name.empty() ? "time_distributed" : std::move(name)), layer_(std::move(layer)) {
  if (!layer_) fail("TimeDistributed: the wrapped layer is null");
  track_module("layer", layer_);
}

Tensor TimeDistributed::call(const Tensor& inputs, bool training) {
  const Shape& shape = inputs.shape();
  if (shape.rank() < 3)
    fail("layer '", name(), "' (TimeDistributed) takes [batch, steps, ...] inputs, got ", shape);
  const int64_t batch = shape[0], steps = shape[1];
  if (batch == kUnknownDim && steps == kUnknownDim)
    fail("layer '", name(), "': the batch size or the number of steps must be known, got ", shape);
  std::vector<int64_t> folded{batch == kUnknownDim || steps == kUnknownDim ? -1 : batch * steps};
  for (int64_t i = 2; i < shape.rank(); ++i) folded.push_back(shape[i]);
  const Tensor out = (*layer_)(reshape(inputs, Shape(folded)), training);
  std::vector<int64_t> unfolded{batch == kUnknownDim ? -1 : batch, steps == kUnknownDim ? -1 : steps};
  for (int64_t i = 1; i < out.shape().rank(); ++i) unfolded.push_back(out.shape()[i]);
  return reshape(out, Shape(unfolded));
}

Config TimeDistributed::get_config() const {
  return Layer::get_config().set("layer", layer_entry(*layer_, "TimeDistributed '" + name() + "'"));
}

std::shared_ptr<TimeDistributed> TimeDistributed::from_config(const Config& c) {
  const std::string who = "TimeDistributed config";
  return std::make_shared<TimeDistributed>(wrapped_layer(c, who),
                                           c.get<std::string>("name", who, std::string("time_distributed")));
}

// ---- Bidirectional ----

Bidirectional::Bidirectional(std::shared_ptr<Layer> layer, std::string merge_mode, std::string name)
    : Layer(name.empty() ? "bidirectional" : std::move(name)),
      forward_(std::move(layer)),
      merge_mode_(std::move(merge_mode)) {
  if (!forward_) fail("Bidirectional: the wrapped layer is null");
  if (merge_mode_ != "concat" && merge_mode_ != "sum" && merge_mode_ != "mul" && merge_mode_ != "ave" &&
      !merge_mode_.empty())
    fail("Bidirectional: merge_mode must be \"concat\", \"sum\", \"mul\", \"ave\" or none, got \"",
         merge_mode_, "\"");
  Config config = forward_->get_config();
  if (!config.has("go_backwards") || !config.has("return_sequences"))
    fail("Bidirectional: layer '", forward_->name(),
         "' is not a recurrent layer (its config has no go_backwards)");
  return_sequences_ = config.get<bool>("return_sequences", "Bidirectional");
  if (auto* recurrent = dynamic_cast<Recurrent*>(forward_.get())) {
    recurrent->set_zero_output_for_mask(return_sequences_);
    config.set("zero_output_for_mask", return_sequences_);
  }
  config.set("go_backwards", !config.get<bool>("go_backwards", "Bidirectional"));
  config.set("name", "backward_" + forward_->name());
  backward_ = layer_from_config(forward_->class_name(), config);
  track_module("forward_layer", forward_);
  track_module("backward_layer", backward_);
}

std::vector<Tensor> Bidirectional::call_inputs(const std::vector<Tensor>& inputs, bool training) {
  return run(inputs, std::nullopt, training);
}

std::vector<Tensor> Bidirectional::call_masked(const std::vector<Tensor>& inputs, const Tensor& mask,
                                               bool training) {
  return run(inputs, mask, training);
}

std::optional<Tensor> Bidirectional::compute_mask(const std::vector<Tensor>&,
                                                  const std::optional<Tensor>& mask) const {
  return return_sequences_ ? mask : std::nullopt;
}

std::vector<Tensor> Bidirectional::run(const std::vector<Tensor>& inputs, const std::optional<Tensor>& mask,
                                       bool training) {
  // [inputs, forward states..., backward states...]: the states split evenly.
  if (inputs.size() % 2 == 0)
    fail("layer '", name(),
         "' (Bidirectional) takes the inputs and as many initial states for each direction, got ",
         inputs.size(), " tensors");
  const size_t half = inputs.size() / 2;
  std::vector<Tensor> forward_args{inputs[0]}, backward_args{inputs[0]};
  forward_args.insert(forward_args.end(), inputs.begin() + 1, inputs.begin() + 1 + half);
  backward_args.insert(backward_args.end(), inputs.begin() + 1 + half, inputs.end());
  std::vector<Tensor> forward = forward_->call_all(forward_args, mask, training);
  std::vector<Tensor> backward = backward_->call_all(backward_args, mask, training);
  Tensor f = forward[0], b = backward[0];
  if (return_sequences_) b = reverse(b, Axes{1});  // back into step order
  std::vector<Tensor> results;
  if (merge_mode_.empty()) {
    results = {f, b};
  } else if (merge_mode_ == "concat") {
    results = {concat({f, b}, -1)};
  } else if (merge_mode_ == "sum") {
    results = {f + b};
  } else if (merge_mode_ == "mul") {
    results = {f * b};
  } else {
    results = {(f + b) * 0.5};
  }
  results.insert(results.end(), forward.begin() + 1, forward.end());  // return_state
  results.insert(results.end(), backward.begin() + 1, backward.end());
  return results;
}

Tensor Bidirectional::call(const Tensor& inputs, bool training) {
  return only_output(call_inputs({inputs}, training));  // merge_mode none gives two
}

Config Bidirectional::get_config() const {
  return Layer::get_config()
      .set("layer", layer_entry(*forward_, "Bidirectional '" + name() + "'"))
      .set("merge_mode", merge_mode_.empty() ? ConfigValue(nullptr) : ConfigValue(merge_mode_));
}

std::shared_ptr<Bidirectional> Bidirectional::from_config(const Config& c) {
  const std::string who = "Bidirectional config";
  return std::make_shared<Bidirectional>(wrapped_layer(c, who),
                                         c.get_optional<std::string>("merge_mode", who).value_or(""),
                                         c.get<std::string>("name", who, std::string("bidirectional")));
}

}  // namespace ef::nn
