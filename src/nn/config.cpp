// Layer configs, their JSON form, and the layer registry (eagerflow/nn/config.h).
#include "eagerflow/nn/config.h"

#include <algorithm>
#include <mutex>

#include <nlohmann/json.hpp>

#include "eagerflow/core/error.h"
#include "eagerflow/nn/attention_layers.h"
#include "eagerflow/nn/conv_layers.h"
#include "eagerflow/nn/conv_variant_layers.h"
#include "eagerflow/nn/functional.h"
#include "eagerflow/nn/layers.h"
#include "eagerflow/nn/merge_layers.h"
#include "eagerflow/nn/normalization_layers.h"
#include "eagerflow/nn/prelu.h"
#include "eagerflow/nn/recurrent.h"
#include "eagerflow/nn/simple_layers.h"
#include "eagerflow/nn/wrapper_layers.h"

namespace ef::nn {
namespace {

using nlohmann::json;

const char* type_name(const ConfigValue& v) {
  static const char* names[] = {"null", "bool", "int", "float", "string", "list of ints", "object"};
  return names[v.index()];
}

}  // namespace

template <class T>
T Config::get(const std::string& key, const std::string& who, std::optional<T> fallback) const {
  auto it = values.find(key);
  if (it == values.end()) {
    if (fallback) return *fallback;
    fail(who, ": the config has no \"", key, "\"");
  }
  if constexpr (std::is_same_v<T, double>)
    if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  fail(who, ": config \"", key, "\" is a ", type_name(it->second), ", not the expected type");
}

template bool Config::get<bool>(const std::string&, const std::string&, std::optional<bool>) const;
template int64_t Config::get<int64_t>(const std::string&, const std::string&, std::optional<int64_t>) const;
template double Config::get<double>(const std::string&, const std::string&, std::optional<double>) const;
template std::string Config::get<std::string>(const std::string&, const std::string&,
                                              std::optional<std::string>) const;
template std::vector<int64_t> Config::get<std::vector<int64_t>>(const std::string&, const std::string&,
                                                                std::optional<std::vector<int64_t>>) const;

std::shared_ptr<Config> Config::nested(const std::string& key, const std::string& who) const {
  auto it = values.find(key);
  if (it == values.end() || std::holds_alternative<std::nullptr_t>(it->second)) return nullptr;
  if (auto* c = std::get_if<std::shared_ptr<Config>>(&it->second)) return *c;
  fail(who, ": config \"", key, "\" is a ", type_name(it->second), ", not an object");
}

// ---- JSON ----

namespace {

json to_json_value(const Config& config) {
  json out = json::object();
  for (const auto& entry : config.values) {
    // Not a structured binding: C++20 lets lambdas capture those, clang 14 does not.
    json& slot = out[entry.first];
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::shared_ptr<Config>>)
            slot = v ? to_json_value(*v) : json(nullptr);
          else
            slot = v;
        },
        entry.second);
  }
  return out;
}

Config from_json_value(const json& object, const std::string& what) {
  if (!object.is_object()) fail(what, ": expected a JSON object, got ", object.type_name());
  Config config;
  for (const auto& [key, v] : object.items()) {
    if (v.is_null())
      config.set(key, ConfigValue(nullptr));
    else if (v.is_boolean())
      config.set(key, v.get<bool>());
    else if (v.is_number_integer())
      config.set(key, v.get<int64_t>());
    else if (v.is_number_float())
      config.set(key, v.get<double>());
    else if (v.is_string())
      config.set(key, v.get<std::string>());
    else if (v.is_object())
      config.set(key, from_json_value(v, what + " \"" + key + "\""));
    else if (v.is_array()) {
      std::vector<int64_t> ints;
      for (const json& e : v) {
        if (!e.is_number_integer()) fail(what, ": \"", key, "\" must be a list of ints");
        ints.push_back(e.get<int64_t>());
      }
      config.set(key, std::move(ints));
    } else {
      fail(what, ": \"", key, "\" has a value of unsupported type ", v.type_name());
    }
  }
  return config;
}

}  // namespace

std::string to_json(const Config& config) { return to_json_value(config).dump(); }

Config config_from_json(const std::string& text, const std::string& what) {
  // Repeated keys are refused (nlohmann keeps the last one silently).
  std::vector<std::vector<std::string>> seen;
  std::string repeated;
  auto refuse_repeats = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start)
      seen.emplace_back();
    else if (event == json::parse_event_t::object_end)
      seen.pop_back();
    else if (event == json::parse_event_t::key) {
      const std::string key = parsed.get<std::string>();
      if (std::find(seen.back().begin(), seen.back().end(), key) != seen.back().end()) repeated = key;
      seen.back().push_back(key);
    }
    return true;
  };
  json parsed;
  try {
    parsed = json::parse(text, refuse_repeats);
  } catch (const json::exception& e) {
    fail(what, " is not valid JSON: ", e.what());
  }
  if (!repeated.empty()) fail(what, ": the key \"", repeated, "\" appears twice");
  return from_json_value(parsed, what);
}

// ---- Registry ----

namespace {

template <class L>
LayerFactory factory() {
  return [](const Config& c) -> std::shared_ptr<Layer> { return L::from_config(c); };
}

std::map<std::string, LayerFactory> builtin_layers() {
  std::map<std::string, LayerFactory> layers = {
      {"Dense", factory<Dense>()},
      {"Flatten", factory<Flatten>()},
      {"Dropout", factory<Dropout>()},
      {"LayerNormalization", factory<LayerNormalization>()},
      {"Embedding", factory<Embedding>()},
      {"Conv2D", factory<Conv2D>()},
      {"MaxPooling2D", factory<MaxPool2D>()},
      {"AveragePooling2D", factory<AveragePool2D>()},
      {"BatchNormalization", factory<BatchNormalization>()},
      {"Activation", factory<ActivationLayer>()},
      {"ReLU", factory<ReLU>()},
      {"LeakyReLU", factory<LeakyReLU>()},
      {"ELU", factory<ELU>()},
      {"Softmax", factory<Softmax>()},
      {"Reshape", factory<Reshape>()},
      {"Permute", factory<Permute>()},
      {"RepeatVector", factory<RepeatVector>()},
      {"ZeroPadding2D", factory<ZeroPadding2D>()},
      {"Cropping2D", factory<Cropping2D>()},
      {"UpSampling2D", factory<UpSampling2D>()},
      {"GaussianNoise", factory<GaussianNoise>()},
      {"SpatialDropout2D", factory<SpatialDropout2D>()},
      {"Conv2DTranspose", factory<Conv2DTranspose>()},
      {"DepthwiseConv2D", factory<DepthwiseConv2D>()},
      {"SeparableConv2D", factory<SeparableConv2D>()},
      {"GroupNormalization", factory<GroupNormalization>()},
      {"PReLU", factory<PReLU>()},
      {"Masking", factory<Masking>()},
  };
  layers["Conv1D"] = factory<Conv1D>();
  layers["Concatenate"] = factory<Concatenate>();
  layers["MultiHeadAttention"] = factory<MultiHeadAttention>();
  layers["Attention"] = factory<Attention>();
  layers["CausalMask"] = factory<CausalMask>();
  layers["TimeDistributed"] = factory<TimeDistributed>();
  layers["Bidirectional"] = factory<Bidirectional>();
  layers["Functional"] = factory<Functional>();
  using Merging = Merge::Kind;
  for (Merging kind : {Merging::kAdd, Merging::kSubtract, Merging::kMultiply, Merging::kAverage,
                       Merging::kMaximum, Merging::kMinimum})
    layers[Merge(kind).class_name()] = [kind](const Config& c) -> std::shared_ptr<Layer> {
      return Merge::from_config(kind, c);
    };
  for (bool max : {true, false})
    layers[max ? "MaxPooling1D" : "AveragePooling1D"] = [max](const Config& c) -> std::shared_ptr<Layer> {
      return Pool1D::from_config(max, c);
    };
  using Cell = Recurrent::Cell;
  for (Cell cell : {Cell::kSimpleRNN, Cell::kLSTM, Cell::kGRU})
    layers[Recurrent(cell, 1).class_name()] = [cell](const Config& c) -> std::shared_ptr<Layer> {
      return Recurrent::from_config(cell, c);
    };
  using Kind = GlobalPooling::Kind;
  for (Kind kind : {Kind::kAverage1D, Kind::kAverage2D, Kind::kMax1D, Kind::kMax2D})
    layers[GlobalPooling(kind).class_name()] = [kind](const Config& c) -> std::shared_ptr<Layer> {
      return GlobalPooling::from_config(kind, c);
    };
  return layers;
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, LayerFactory> factories = builtin_layers();
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_layer(const std::string& class_name, LayerFactory factory) {
  if (class_name.empty() || !factory) fail("register_layer: a class name and a factory are needed");
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().factories[class_name] = std::move(factory);
}

void unregister_layer(const std::string& class_name) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().factories.erase(class_name);
}

std::shared_ptr<Layer> layer_from_config(const std::string& class_name, const Config& config) {
  LayerFactory factory;
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    auto it = registry().factories.find(class_name);
    if (it == registry().factories.end()) {
      std::string known;
      for (const auto& [name, f] : registry().factories) known += (known.empty() ? "" : ", ") + name;
      fail<NotFoundError>("layer_from_config: unknown layer class \"", class_name, "\" (known: ", known,
                          "); register custom layers (Python: custom_objects)");
    }
    factory = it->second;
  }
  std::shared_ptr<Layer> layer = factory(config);
  if (auto dtype = config.values.find("dtype"); dtype != config.values.end())
    if (auto* policy = std::get_if<std::string>(&dtype->second)) layer->set_dtype_policy(Policy(*policy));
  return layer;
}

// ---- Layers inside configs ----

Config layer_entry(const Layer& layer, const std::string& who) {
  const std::string class_name = layer.class_name();
  if (class_name.empty())
    fail(who, ": layer '", layer.name(),
         "' has no registered class name, so it could not be made again; register it (C++: override "
         "class_name() and get_config() and call ef::nn::register_layer; Python: define get_config)");
  return class_entry(class_name, layer.get_config());
}

Config class_entry(const std::string& class_name, Config config) {
  return Config().set("class_name", class_name).set("config", std::move(config));
}

Config numbered_list(const std::vector<ConfigValue>& items) {
  Config list;
  list.set("count", static_cast<int64_t>(items.size()));
  for (size_t i = 0; i < items.size(); ++i) list.set(std::to_string(i), items[i]);
  return list;
}

int64_t numbered_count(const Config& list, const std::string& who) {
  const int64_t count = list.get<int64_t>("count", who);
  if (count < 0 || count > 100000) fail(who, ": a list of ", count, " items");
  return count;
}

LayerEntry read_layer_entry(const Config& parent, const std::string& key, const std::string& who) {
  const std::shared_ptr<Config> entry = parent.nested(key, who);
  if (!entry) fail(who, ": \"", key, "\" is missing");
  const std::shared_ptr<Config> config = entry->nested("config", who + " " + key);
  return {entry->get<std::string>("class_name", who + " " + key), config ? *config : Config()};
}

void set_layer_entries(Config& config, const std::vector<std::shared_ptr<Layer>>& layers,
                       const std::string& who) {
  config.set("layers", static_cast<int64_t>(layers.size()));
  for (size_t i = 0; i < layers.size(); ++i)
    config.set("layer_" + std::to_string(i), layer_entry(*layers[i], who));
}

std::vector<LayerEntry> read_layer_entries(const Config& config, const std::string& who) {
  const int64_t count = config.get<int64_t>("layers", who);
  if (count < 0 || count > 100000) fail(who, ": \"layers\" is ", count);
  std::vector<LayerEntry> entries;
  for (int64_t i = 0; i < count; ++i)
    entries.push_back(read_layer_entry(config, "layer_" + std::to_string(i), who));
  return entries;
}

}  // namespace ef::nn
