// The functional API (eagerflow/nn/functional.h): symbolic layer calls, Input, and the
// Functional model that runs the recorded calls.
#include "eagerflow/nn/functional.h"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <unordered_map>

#include "eagerflow/graph/function.h"

namespace ef::nn {

// ---- KerasTensor ----

KerasTensor::KerasTensor(std::shared_ptr<const LayerCall> call, size_t output_index)
    : call_(std::move(call)), output_index_(output_index) {
  if (!call_ || output_index_ >= call_->outputs.size())
    fail<InternalError>("KerasTensor: output ", output_index_, " of a call that has none such");
}

DType KerasTensor::dtype() const { return call_->outputs[output_index_].dtype; }
const Shape& KerasTensor::shape() const { return call_->outputs[output_index_].shape; }

std::string KerasTensor::name() const {
  const std::string& layer = call_->layer->name();
  return call_->outputs.size() == 1 ? layer : layer + ":" + std::to_string(output_index_);
}

// ---- InputLayer and Input ----

namespace {

// The shape of a batch of `shape`.
Shape batched(const Shape& shape) {
  std::vector<int64_t> dims{kUnknownDim};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return Shape(dims);
}

// "input_layer", then "input_layer_1", ...: unique in the process, as Keras' names.
std::string unique_input_name() {
  static std::mutex mutex;
  static int64_t count = 0;
  std::lock_guard<std::mutex> lock(mutex);
  const int64_t n = count++;
  return n == 0 ? "input_layer" : "input_layer_" + std::to_string(n);
}

// The symbolic tensor an InputLayer gives: a call without inputs.
KerasTensor input_tensor(std::shared_ptr<InputLayer> layer) {
  auto call = std::make_shared<LayerCall>();
  call->outputs.push_back(TensorSpec{layer->input_dtype(), batched(layer->input_shape()), layer->name()});
  call->layer = std::move(layer);
  return KerasTensor(std::move(call), 0);
}

bool is_input_call(const LayerCall& call) {
  return call.inputs.empty() && dynamic_cast<const InputLayer*>(call.layer.get()) != nullptr;
}

}  // namespace

InputLayer::InputLayer(Shape shape, DType dtype, std::string name)
    : Layer(std::move(name)), shape_(std::move(shape)), input_dtype_(dtype) {
  validate_shape(shape_, "Input", "shape", size_of(dtype), /*allow_unknown=*/true);
}

Config InputLayer::get_config() const {
  return Layer::get_config()
      .set("shape", std::vector<int64_t>(shape_.dims().begin(), shape_.dims().end()))
      .set("dtype", std::string(ef::name(input_dtype_)));
}

std::shared_ptr<InputLayer> InputLayer::from_config(const Config& c) {
  const std::string who = "InputLayer config";
  const std::string dtype_text = c.get<std::string>("dtype", who, std::string("float32"));
  const std::optional<DType> dtype = dtype_named(dtype_text);
  if (!dtype) fail(who, ": unknown dtype \"", dtype_text, "\"");
  return std::make_shared<InputLayer>(Shape(c.get<std::vector<int64_t>>("shape", who)), *dtype,
                                      c.get<std::string>("name", who, std::string("input_layer")));
}

Tensor InputLayer::call(const Tensor& inputs, bool /*training*/) { return check(inputs); }

const Tensor& InputLayer::check(const Tensor& inputs) const {
  const Shape expected = batched(shape_);
  bool compatible = inputs.shape().rank() == expected.rank();
  for (int64_t i = 0; compatible && i < expected.rank(); ++i)
    compatible =
        expected[i] == kUnknownDim || inputs.shape()[i] == kUnknownDim || expected[i] == inputs.shape()[i];
  if (!compatible)
    fail("input '", name(), "': expected a batch of shape ", expected, ", got ", inputs.shape());
  if (inputs.dtype() != input_dtype_)
    fail("input '", name(), "': expected ", input_dtype_, ", got ", inputs.dtype(),
         " (cast it first: eagerflow does not convert dtypes silently)");
  return inputs;
}

KerasTensor Input(const Shape& shape, DType dtype, const std::string& name, CallSite where) {
  try {
    return input_tensor(
        std::make_shared<InputLayer>(shape, dtype, name.empty() ? unique_input_name() : name));
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

// ---- Symbolic layer calls (Note [symbolic layer calls]) ----

namespace {

// The output specs of `layer` traced over inputs of `specs`.
std::vector<TensorSpec> traced_outputs(const std::shared_ptr<Layer>& layer,
                                       const std::vector<TensorSpec>& specs) {
  Function trace(
      [layer](const std::vector<Tensor>& args) { return layer->call_all(args, /*training=*/false); },
      layer->name());
  return trace.get_concrete_function(specs).output_signature();
}

// Note [probing unknown sizes]: a layer that needs sizes its inputs leave unknown (the
// steps of a recurrent layer, which unrolls them; a reshape into heads) is traced twice
// with every unknown size made known, once as kFirstProbe and once as kSecondProbe; an
// output dimension that differs between the two depends on the unknown sizes and is
// unknown, one that agrees is the layer's own. A layer whose variables would depend on
// them (Dense after a Flatten of unknown steps) fails the second trace, and the first
// error is reported.
constexpr int64_t kFirstProbe = 37, kSecondProbe = 64;

std::vector<TensorSpec> probed_outputs(const std::shared_ptr<Layer>& layer,
                                       const std::vector<TensorSpec>& specs) {
  auto with_sizes = [&](int64_t size) {
    std::vector<TensorSpec> known = specs;
    for (TensorSpec& spec : known)
      for (int64_t& d : spec.shape.dims())
        if (d == kUnknownDim) d = size;
    return traced_outputs(layer, known);
  };
  std::vector<TensorSpec> first = with_sizes(kFirstProbe);
  const std::vector<TensorSpec> second = with_sizes(kSecondProbe);
  if (first.size() != second.size()) fail("layer '", layer->name(), "' gives a different number of outputs");
  for (size_t i = 0; i < first.size(); ++i) {
    if (first[i].shape.rank() != second[i].shape.rank() || first[i].dtype != second[i].dtype)
      fail("layer '", layer->name(), "': output ", i, "'s rank or dtype depends on its inputs' sizes");
    for (int d = 0; d < first[i].shape.rank(); ++d)
      if (first[i].shape[d] != second[i].shape[d])
        first[i].shape.dims()[static_cast<size_t>(d)] = kUnknownDim;
  }
  return first;
}

bool has_unknown_size(const std::vector<TensorSpec>& specs) {
  for (const TensorSpec& spec : specs)
    for (int d = 1; d < spec.shape.rank(); ++d)
      if (spec.shape[d] == kUnknownDim) return true;
  return false;
}

}  // namespace

std::vector<KerasTensor> Layer::call_all(const std::vector<KerasTensor>& inputs, CallSite where) {
  try {
    if (inputs.empty()) fail("layer '", name(), "': called with an empty list of inputs");
    std::shared_ptr<Layer> self = std::dynamic_pointer_cast<Layer>(weak_from_this().lock());
    if (!self)
      fail("layer '", name(),
           "': called on symbolic inputs (the functional API) but not held by a std::shared_ptr; make it "
           "with std::make_shared so that the model can hold it");
    std::vector<TensorSpec> specs;
    for (const KerasTensor& input : inputs)
      specs.push_back(TensorSpec{input.dtype(), input.shape(), input.name()});
    auto call = std::make_shared<LayerCall>();
    call->layer = self;
    call->inputs = inputs;
    try {
      call->outputs = traced_outputs(self, specs);
    } catch (const Error&) {
      if (!has_unknown_size(specs)) throw;
      const std::exception_ptr first = std::current_exception();
      try {
        call->outputs = probed_outputs(self, specs);  // Note [probing unknown sizes]
      } catch (const Error&) {
        std::rethrow_exception(first);  // what the layer said about the unknown sizes
      }
    }
    std::vector<KerasTensor> outputs;
    for (size_t i = 0; i < call->outputs.size(); ++i) outputs.emplace_back(call, i);
    return outputs;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

KerasTensor Layer::operator()(const std::vector<KerasTensor>& inputs, CallSite where) {
  return only_output(call_all(inputs, where), where);
}

KerasTensor Layer::operator()(const KerasTensor& input, CallSite where) {
  return (*this)(std::vector<KerasTensor>{input}, where);
}

// ---- Functional ----

Functional::Functional(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs, std::string name,
                       CallSite where)
    : Model(std::move(name)), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
  try {
    if (inputs_.empty() || outputs_.empty())
      fail("Functional '", this->name(), "': a model needs at least one input and one output");
    // Positions of the calls in run order; the inputs come first, in the order given.
    std::unordered_map<const LayerCall*, size_t> position;
    for (const KerasTensor& input : inputs_) {
      if (!is_input_call(*input.call()))
        fail(
            "Functional '", this->name(), "': input '", input.name(),
            "' is not an Input (keras.Input); a model's inputs are the Inputs its outputs are computed from");
      if (!position.emplace(input.call().get(), calls_.size()).second)
        fail("Functional '", this->name(), "': input '", input.name(), "' is listed twice");
      calls_.push_back(input.call());
    }
    // Depth first from the outputs; post-order puts every call after what it takes.
    std::vector<std::pair<std::shared_ptr<const LayerCall>, size_t>> stack;
    for (const KerasTensor& output : outputs_) stack.emplace_back(output.call(), 0);
    std::unordered_map<const LayerCall*, bool> on_stack;
    while (!stack.empty()) {
      auto& [call, next] = stack.back();
      if (position.count(call.get())) {
        stack.pop_back();
        continue;
      }
      if (is_input_call(*call))
        fail("Functional '", this->name(), "': the outputs depend on input '", call->layer->name(),
             "', which is not among the model's inputs");
      on_stack[call.get()] = true;
      if (next < call->inputs.size()) {
        std::shared_ptr<const LayerCall> input = call->inputs[next++].call();
        if (on_stack[input.get()])
          fail<InternalError>("Functional '", this->name(), "': a cycle of layer calls");
        stack.emplace_back(std::move(input), 0);
        continue;
      }
      on_stack[call.get()] = false;
      position.emplace(call.get(), calls_.size());
      calls_.push_back(call);
      stack.pop_back();
    }
    for (const auto& call : calls_) {
      std::vector<std::pair<size_t, size_t>> args;
      for (const KerasTensor& t : call->inputs)
        args.emplace_back(position.at(t.call().get()), t.output_index());
      arguments_.push_back(std::move(args));
    }
    for (const KerasTensor& t : outputs_)
      results_.emplace_back(position.at(t.call().get()), t.output_index());
    // Each layer once, tracked under its name made unique (Keras' rule for Sequential).
    for (const auto& call : calls_) {
      if (std::find(layers_.begin(), layers_.end(), call->layer) != layers_.end()) continue;
      if (call->layer.get() == this) fail("Functional '", this->name(), "': a model cannot contain itself");
      std::string tracked = call->layer->name();
      auto taken = [&](const std::string& candidate) {
        const auto& children = named_children();
        return std::any_of(children.begin(), children.end(),
                           [&](const auto& c) { return c.first == candidate; });
      };
      for (int suffix = 1; taken(tracked); ++suffix)
        tracked = call->layer->name() + "_" + std::to_string(suffix);
      track_module(tracked, call->layer);
      layers_.push_back(call->layer);
    }
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::vector<Tensor> Functional::call_inputs(const std::vector<Tensor>& inputs, bool training) {
  if (inputs.size() != inputs_.size())
    fail("Functional '", name(), "' takes ", inputs_.size(), " input(s), got ", inputs.size());
  std::vector<std::vector<Tensor>> values(calls_.size());
  std::vector<std::optional<Tensor>> masks(calls_.size());  // of each call's first output (Note [masks])
  for (size_t i = 0; i < calls_.size(); ++i) {
    const LayerCall& call = *calls_[i];
    if (i < inputs.size()) {  // an Input: checked, not cast by a dtype policy
      values[i] = {static_cast<const InputLayer&>(*call.layer).check(inputs[i])};
      continue;
    }
    std::vector<Tensor> args;
    args.reserve(arguments_[i].size());
    for (auto [from, index] : arguments_[i]) args.push_back(values[from][index]);
    std::vector<std::optional<Tensor>> arg_masks;  // a call's mask is its first output's
    for (auto [from, index] : arguments_[i]) arg_masks.push_back(index == 0 ? masks[from] : std::nullopt);
    values[i] = call.layer->call_all_masked(args, arg_masks, training);
    masks[i] = call.layer->compute_mask(args, arg_masks.at(0));
    if (values[i].size() != call.outputs.size())
      fail("Functional '", name(), "': layer '", call.layer->name(), "' gave ", values[i].size(),
           " outputs where its symbolic call gave ", call.outputs.size());
  }
  std::vector<Tensor> outputs;
  std::vector<std::optional<Tensor>> output_masks;
  for (auto [from, index] : results_) {
    outputs.push_back(values[from][index]);
    output_masks.push_back(index == 0 ? masks[from] : std::nullopt);
  }
  set_output_masks(std::move(output_masks));
  return outputs;
}

std::vector<std::string> Functional::output_names() const {
  std::vector<std::string> names;
  for (auto [from, index] : results_) {
    std::string name = calls_[from]->layer->name();
    if (calls_[from]->outputs.size() > 1) name += "_" + std::to_string(index);
    for (int suffix = 1; std::find(names.begin(), names.end(), name) != names.end(); ++suffix)
      name = calls_[from]->layer->name() + "_" + std::to_string(suffix);
    names.push_back(name);
  }
  return names;
}

Tensor Functional::call(const Tensor& inputs, bool training) {
  if (inputs_.size() != 1)
    fail("Functional '", name(), "' takes ", inputs_.size(), " inputs; call it with a list of tensors");
  return only_output(call_inputs({inputs}, training));
}

std::optional<Shape> Functional::output_shape_of(const Layer& layer) const {
  for (const auto& call : calls_)
    if (call->layer.get() == &layer && call->outputs.size() == 1) return call->outputs[0].shape;
  return std::nullopt;
}

// Note [functional configs]: a Functional's config lists its layers and its calls by
// number, as the rest of the Config format does (eagerflow/nn/config.h):
//   {"name": "model", "layers": 3, "layer_0": {"class_name": "InputLayer", "config":
//    {...}}, ..., "calls": 3, "call_0": {"layer": 0, "inputs": []}, "call_2": {"layer":
//    2, "inputs": [1, 0]}, "inputs": [0], "outputs": [2, 0]}
// "inputs" of a call and the model's "outputs" are (call, output index) pairs, flattened;
// a call refers only to calls before it, so the file is replayed in order.
Config Functional::get_config() const {
  Config config = Layer::get_config();
  set_layer_entries(config, layers_, "Functional '" + name() + "'");
  auto layer_index = [&](const std::shared_ptr<Layer>& layer) {
    return static_cast<int64_t>(std::find(layers_.begin(), layers_.end(), layer) - layers_.begin());
  };
  auto flat = [](const std::vector<std::pair<size_t, size_t>>& pairs) {
    std::vector<int64_t> out;
    for (auto [a, b] : pairs) out.insert(out.end(), {static_cast<int64_t>(a), static_cast<int64_t>(b)});
    return out;
  };
  config.set("calls", static_cast<int64_t>(calls_.size()));
  for (size_t i = 0; i < calls_.size(); ++i)
    config.set("call_" + std::to_string(i),
               Config().set("layer", layer_index(calls_[i]->layer)).set("inputs", flat(arguments_[i])));
  std::vector<int64_t> inputs;
  for (size_t i = 0; i < inputs_.size(); ++i) inputs.push_back(static_cast<int64_t>(i));
  config.set("inputs", inputs).set("outputs", flat(results_));
  return config;
}

std::shared_ptr<Functional> Functional::from_config(const Config& config) {
  const std::string who = "Functional config";
  const int64_t call_count = config.get<int64_t>("calls", who);
  if (call_count < 1 || call_count > 1000000) fail(who, ": \"calls\" is ", call_count);
  std::vector<std::shared_ptr<Layer>> layers;
  for (const LayerEntry& entry : read_layer_entries(config, who))
    layers.push_back(entry.class_name == "InputLayer" ? InputLayer::from_config(entry.config)
                                                      : layer_from_config(entry.class_name, entry.config));
  const auto layer_count = static_cast<int64_t>(layers.size());
  if (layer_count < 1) fail(who, ": the model has no layers");
  // Replays the calls in order; each refers to earlier ones.
  std::vector<std::vector<KerasTensor>> outputs_of;
  auto pairs_of = [&](const std::vector<int64_t>& flat, const std::string& what) {
    if (flat.size() % 2 != 0) fail(who, ": ", what, " has an odd number of entries");
    std::vector<KerasTensor> tensors;
    for (size_t k = 0; k < flat.size(); k += 2) {
      const int64_t from = flat[k], index = flat[k + 1];
      if (from < 0 || from >= static_cast<int64_t>(outputs_of.size()) || index < 0 ||
          index >= static_cast<int64_t>(outputs_of[static_cast<size_t>(from)].size()))
        fail(who, ": ", what, " refers to output ", index, " of call ", from,
             ", which is not an earlier call's");
      tensors.push_back(outputs_of[static_cast<size_t>(from)][static_cast<size_t>(index)]);
    }
    return tensors;
  };
  for (int64_t i = 0; i < call_count; ++i) {
    const std::string key = "call_" + std::to_string(i);
    const std::shared_ptr<Config> entry = config.nested(key, who);
    if (!entry) fail(who, ": \"", key, "\" is missing");
    const int64_t layer = entry->get<int64_t>("layer", who + " " + key);
    if (layer < 0 || layer >= layer_count) fail(who, ": ", key, " calls layer ", layer, " of ", layer_count);
    const std::shared_ptr<Layer>& callee = layers[static_cast<size_t>(layer)];
    std::vector<KerasTensor> args =
        pairs_of(entry->get<std::vector<int64_t>>("inputs", who + " " + key, std::vector<int64_t>{}), key);
    if (auto input = std::dynamic_pointer_cast<InputLayer>(callee)) {
      if (!args.empty()) fail(who, ": ", key, " gives inputs to InputLayer '", input->name(), "'");
      outputs_of.push_back({input_tensor(input)});
    } else {
      if (args.empty()) fail(who, ": ", key, " calls layer '", callee->name(), "' with no inputs");
      outputs_of.push_back(callee->call_all(args));
    }
  }
  std::vector<KerasTensor> inputs;
  for (int64_t i : config.get<std::vector<int64_t>>("inputs", who)) {
    if (i < 0 || i >= call_count || !is_input_call(*outputs_of[static_cast<size_t>(i)][0].call()))
      fail(who, ": \"inputs\" lists call ", i, ", which is not an Input");
    inputs.push_back(outputs_of[static_cast<size_t>(i)][0]);
  }
  return std::make_shared<Functional>(inputs,
                                      pairs_of(config.get<std::vector<int64_t>>("outputs", who), "outputs"),
                                      config.get<std::string>("name", who, std::string("model")));
}

}  // namespace ef::nn
