// Config: what it takes to make a layer again (Keras' get_config / from_config), and
// the registry that maps class names to the layers that config describes.
//
//   ef::nn::Config c = dense.get_config();       // {"name": "dense", "units": 10, ...}
//   std::shared_ptr<ef::nn::Layer> again = ef::nn::layer_from_config("Dense", c);
//
// Values are JSON's: null, bool, int, float, string, a list of ints, or a nested
// Config (an initializer's). to_json / config_from_json write and read them; reading
// refuses repeated keys and values of the wrong type with an InvalidArgumentError
// naming the key.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ef::nn {

class Layer;
struct Config;
using ConfigValue = std::variant<std::nullptr_t, bool, int64_t, double, std::string, std::vector<int64_t>,
                                 std::shared_ptr<Config>>;

struct Config {
  std::map<std::string, ConfigValue> values;

  Config& set(const std::string& key, ConfigValue value) {
    values[key] = std::move(value);
    return *this;
  }
  Config& set(const std::string& key, const char* value) { return set(key, ConfigValue(std::string(value))); }
  Config& set(const std::string& key, int value) { return set(key, ConfigValue(int64_t{value})); }
  Config& set(const std::string& key, int64_t value) { return set(key, ConfigValue(value)); }
  Config& set(const std::string& key, bool value) { return set(key, ConfigValue(value)); }
  Config& set(const std::string& key, double value) { return set(key, ConfigValue(value)); }
  Config& set(const std::string& key, Config nested) {
    return set(key, std::make_shared<Config>(std::move(nested)));
  }
  bool has(const std::string& key) const { return values.count(key) > 0; }

  // The value under `key` as T (an int is accepted for a double); `fallback` when the
  // key is absent. InvalidArgumentError naming `who` and the key for a wrong type, or a
  // missing key without a fallback.
  template <class T>
  T get(const std::string& key, const std::string& who, std::optional<T> fallback = std::nullopt) const;
  // The value under `key` as T, or nothing when the key is absent or null.
  template <class T>
  std::optional<T> get_optional(const std::string& key, const std::string& who) const {
    auto it = values.find(key);
    if (it == values.end() || std::holds_alternative<std::nullptr_t>(it->second)) return std::nullopt;
    return get<T>(key, who);
  }
  // A nested config (an initializer's), or nullptr when absent or null.
  std::shared_ptr<Config> nested(const std::string& key, const std::string& who) const;
};

std::string to_json(const Config& config);
// `what` names the text in errors ("the model file's architecture").
Config config_from_json(const std::string& text, const std::string& what);

// ---- The registry: class name -> factory ----
using LayerFactory = std::function<std::shared_ptr<Layer>(const Config& config)>;
// Registers (or replaces) the factory for `class_name`.
void register_layer(const std::string& class_name, LayerFactory factory);
// Removes a registration (Python's custom_objects are registered for one load only).
void unregister_layer(const std::string& class_name);
// A new layer of `class_name` from `config`. NotFoundError for an unknown class, listing
// the known ones.
std::shared_ptr<Layer> layer_from_config(const std::string& class_name, const Config& config);

// ---- Layers inside the config of a model or wrapper ----
// A layer is saved as an entry {"class_name": ..., "config": {...}}; a list of layers as
// entries under "layer_0", "layer_1", ... with their count under "layers" (a Config
// holds no lists of configs).
struct LayerEntry {
  std::string class_name;
  Config config;
};
// An object saved by class name (a layer, an optimizer, a loss, a metric):
// {"class_name": ..., "config": {...}}.
Config class_entry(const std::string& class_name, Config config);
// `layer`'s entry; InvalidArgumentError naming `who` for a layer without a registered
// class name (it could not be made again).
Config layer_entry(const Layer& layer, const std::string& who);
// The entry under `key` of `parent` (any class_entry); InvalidArgumentError naming `who`
// when missing.
LayerEntry read_layer_entry(const Config& parent, const std::string& key, const std::string& who);
// Writes `layers` into `config` as numbered entries.
void set_layer_entries(Config& config, const std::vector<std::shared_ptr<Layer>>& layers,
                       const std::string& who);
// Reads the numbered entries (at most 100,000) of `config`.
std::vector<LayerEntry> read_layer_entries(const Config& config, const std::string& who);

// Any other list: {"count": n, "0": item, "1": ...}; numbered_count gives n (at most
// 100,000; InvalidArgumentError naming `who` otherwise), the items are read by index.
Config numbered_list(const std::vector<ConfigValue>& items);
int64_t numbered_count(const Config& list, const std::string& who);

}  // namespace ef::nn
