// Whole-model files (eagerflow/io/model_file.h).
#include "eagerflow/io/model_file.h"

#include "eagerflow/io/checkpoint.h"
#include "eagerflow/io/safetensors.h"
#include "eagerflow/nn/functional.h"
#include "eagerflow/nn/losses.h"
#include "eagerflow/nn/metrics.h"
#include "eagerflow/nn/sequential.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/optim/optimizers.h"

namespace ef::io {
namespace {

// Metadata entries: what the file is, and the architecture as JSON.
constexpr const char* kFormat = "eagerflow.io.Model";
constexpr const char* kArchitectureKey = "architecture";
constexpr const char* kCompileKey = "compile_config";

// The architecture as one config: {"class_name": "Sequential", "name": ..., "dtype": ...,
// "build_input_shape": [-1, 28, 28] (-1: unknown), "layers": n, "layer_0": {"class_name":
// ..., "config": {...}}, ...}. Layers are numbered rather than listed so that the whole
// architecture is one Config (eagerflow/nn/config.h).
nn::Config architecture(const nn::Sequential& model) {
  nn::Config out;
  out.set("class_name", "Sequential")
      .set("name", model.name())
      .set("dtype", std::string(name(model.dtype())));
  if (const std::optional<Shape>& shape = model.built_input_shape())
    out.set("build_input_shape", std::vector<int64_t>(shape->dims().begin(), shape->dims().end()));
  nn::set_layer_entries(out, model.layers(), "save_model");
  return out;
}

DType dtype_called(const std::string& text, const std::string& who) {
  if (std::optional<DType> dtype = dtype_named(text)) return *dtype;
  fail(who, ": unknown dtype \"", text, "\"");
}

std::shared_ptr<nn::Model> from_architecture(const nn::Config& arch, const std::string& source) {
  const std::string who = source + ": architecture";
  const std::string class_name = arch.get<std::string>("class_name", who);
  if (class_name == "Functional") {
    const std::shared_ptr<nn::Config> config = arch.nested("config", who);
    if (!config) fail(who, ": the Functional model has no \"config\"");
    return nn::Functional::from_config(*config);
  }
  if (class_name != "Sequential")
    fail(who, ": class \"", class_name, "\" is not a model this version can load");
  auto model =
      std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Layer>>{},
                                       arch.get<std::string>("name", who, std::string("sequential")));
  for (const nn::LayerEntry& entry : nn::read_layer_entries(arch, who))
    model->add(nn::layer_from_config(entry.class_name, entry.config));
  if (arch.has("build_input_shape")) {
    std::vector<int64_t> dims = arch.get<std::vector<int64_t>>("build_input_shape", who);
    for (int64_t& d : dims)
      if (d < 0) d = 1;  // the batch size: any will do to build
    const DType dtype = dtype_called(arch.get<std::string>("dtype", who, std::string("float32")), who);
    (*model)(zeros(Shape(dims), dtype));
  }
  return model;
}

// ---- compile settings ----
// {"optimizer": entry, "loss": entry or null, "output_losses": list of entries,
// "loss_weights": list of numbers, "metrics" and "weighted_metrics": lists of entries,
// "output_metrics" and "output_weighted_metrics": lists of lists of entries, "run_eagerly",
// "jit_compile"}: class entries and numbered lists of eagerflow/nn/config.h. Files from
// before weighted metrics lack their keys.

// The entries of `items`, or nothing when one cannot be made again.
template <class T>
std::optional<nn::Config> entries_of(const std::vector<std::shared_ptr<T>>& items) {
  std::vector<nn::ConfigValue> entries;
  for (const auto& item : items) {
    if (item->class_name().empty()) return std::nullopt;
    entries.emplace_back(
        std::make_shared<nn::Config>(nn::class_entry(item->class_name(), item->get_config())));
  }
  return nn::numbered_list(entries);
}

// A list of such lists (metrics per output), or nothing likewise.
std::optional<nn::Config> lists_of_entries(
    const std::vector<std::vector<std::shared_ptr<nn::metrics::Metric>>>& lists) {
  std::vector<nn::ConfigValue> out;
  for (const auto& list : lists) {
    std::optional<nn::Config> entries = entries_of(list);
    if (!entries) return std::nullopt;
    out.emplace_back(std::make_shared<nn::Config>(*entries));
  }
  return nn::numbered_list(out);
}

// The settings, or nothing when one of them cannot be made again.
std::optional<nn::Config> compile_config(const nn::CompileOptions& o) {
  nn::Config optimizer = o.optimizer->get_config();
  if (!optimizer.has("learning_rate")) return std::nullopt;  // a schedule
  nn::Config c;
  c.set("optimizer", nn::class_entry(o.optimizer->name(), std::move(optimizer)));
  if (o.loss) {
    if (o.loss->class_name().empty()) return std::nullopt;
    c.set("loss", nn::class_entry(o.loss->class_name(), o.loss->get_config()));
  }
  std::optional<nn::Config> losses = entries_of(o.output_losses), metrics = entries_of(o.metrics),
                            weighted_metrics = entries_of(o.weighted_metrics),
                            metric_lists = lists_of_entries(o.output_metrics),
                            weighted_metric_lists = lists_of_entries(o.output_weighted_metrics);
  if (!losses || !metrics || !weighted_metrics || !metric_lists || !weighted_metric_lists)
    return std::nullopt;
  return c.set("output_losses", *losses)
      .set("metrics", *metrics)
      .set("weighted_metrics", *weighted_metrics)
      .set("loss_weights",
           nn::numbered_list(std::vector<nn::ConfigValue>(o.loss_weights.begin(), o.loss_weights.end())))
      .set("output_metrics", *metric_lists)
      .set("output_weighted_metrics", *weighted_metric_lists)
      .set("run_eagerly", o.run_eagerly)
      .set("jit_compile", o.jit_compile);
}

// The items of the list under `key` (none when absent), each read by `read` from the
// list and its index.
template <class T>
std::vector<T> read_list(
    const nn::Config& c, const std::string& key, const std::string& who,
    const std::function<T(const nn::Config&, const std::string&, const std::string&)>& read) {
  std::vector<T> out;
  const std::shared_ptr<nn::Config> list = c.nested(key, who);
  if (!list) return out;
  const std::string what = who + " " + key;
  for (int64_t i = 0, n = nn::numbered_count(*list, what); i < n; ++i)
    out.push_back(read(*list, std::to_string(i), what + "[" + std::to_string(i) + "]"));
  return out;
}

nn::CompileOptions compile_options_from(const nn::Config& c, const std::string& who) {
  using LossPtr = std::shared_ptr<nn::losses::Loss>;
  using MetricPtr = std::shared_ptr<nn::metrics::Metric>;
  auto loss_at = [](const nn::Config& parent, const std::string& key, const std::string& what) {
    const nn::LayerEntry e = nn::read_layer_entry(parent, key, what);
    return nn::losses::loss_from_config(e.class_name, e.config);
  };
  auto metric_at = [](const nn::Config& parent, const std::string& key, const std::string& what) {
    const nn::LayerEntry e = nn::read_layer_entry(parent, key, what);
    return nn::metrics::metric_from_config(e.class_name, e.config);
  };
  nn::CompileOptions o;
  const nn::LayerEntry optimizer = nn::read_layer_entry(c, "optimizer", who);
  o.optimizer = optim::optimizer_from_config(optimizer.class_name, optimizer.config);
  if (c.nested("loss", who)) o.loss = loss_at(c, "loss", who);
  o.output_losses = read_list<LossPtr>(c, "output_losses", who, loss_at);
  o.metrics = read_list<MetricPtr>(c, "metrics", who, metric_at);
  o.loss_weights = read_list<double>(
      c, "loss_weights", who, [](const nn::Config& list, const std::string& key, const std::string& what) {
        return list.get<double>(key, what);
      });
  o.weighted_metrics = read_list<MetricPtr>(c, "weighted_metrics", who, metric_at);
  auto metric_list_at = [&](const nn::Config& lists, const std::string& key, const std::string& what) {
    return read_list<MetricPtr>(lists, key, what, metric_at);
  };
  o.output_metrics = read_list<std::vector<MetricPtr>>(c, "output_metrics", who, metric_list_at);
  o.output_weighted_metrics =
      read_list<std::vector<MetricPtr>>(c, "output_weighted_metrics", who, metric_list_at);
  o.run_eagerly = c.get<bool>("run_eagerly", who, false);
  o.jit_compile = c.get<bool>("jit_compile", who, false);
  return o;
}

// Only the keys under "model/" (a file loaded without its compile settings).
std::map<std::string, Tensor> model_tensors(const std::map<std::string, Tensor>& tensors) {
  std::map<std::string, Tensor> out;
  for (const auto& [key, value] : tensors)
    if (key.rfind("model/", 0) == 0) out.emplace(key, value);
  return out;
}

}  // namespace

void save_model(const nn::Model& model, const std::string& path, CallSite where) {
  try {
    nn::Config arch;
    if (const auto* sequential = dynamic_cast<const nn::Sequential*>(&model))
      arch = architecture(*sequential);
    else if (const auto* functional = dynamic_cast<const nn::Functional*>(&model))
      arch.set("class_name", "Functional").set("config", functional->get_config());
    else
      fail("save_model: model '", model.name(),
           "' is a subclassed model, whose architecture is its code; save Sequential and functional models "
           "with their architecture, and a subclassed model's weights with a Checkpoint (Python: "
           "save_weights)");
    std::map<std::string, std::string> metadata{{"format", kFormat}, {kArchitectureKey, nn::to_json(arch)}};
    std::optional<nn::Config> compiled;
    if (model.compiled()) compiled = compile_config(model.compile_options());
    if (!compiled) {
      Checkpoint checkpoint{{"model", model}};
      save_safetensors(path, checkpoint.state(), metadata, where);
      return;
    }
    metadata[kCompileKey] = nn::to_json(*compiled);
    Checkpoint checkpoint{{"model", model}, {"optimizer", *model.compile_options().optimizer}};
    save_safetensors(path, checkpoint.state(), metadata, where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::shared_ptr<nn::Model> load_model(const std::string& path, bool compile, CallSite where) {
  try {
    TensorFile file = load_safetensors(path, where);
    const std::string source = "load_model: file '" + path + "'";
    auto format = file.metadata.find("format");
    auto arch = file.metadata.find(kArchitectureKey);
    if (format == file.metadata.end() || format->second != kFormat || arch == file.metadata.end())
      fail(source,
           " is not a model file (a checkpoint or another tool's file has weights only; build the model "
           "and restore them into it)");
    std::shared_ptr<nn::Model> model =
        from_architecture(nn::config_from_json(arch->second, source + "'s architecture"), source);
    auto settings = file.metadata.find(kCompileKey);
    if (!compile || settings == file.metadata.end()) {
      Checkpoint checkpoint{{"model", *model}};
      checkpoint.restore_state(model_tensors(file.tensors), source, where);
      return model;
    }
    // Compiled with the file's settings, then the weights and the optimizer's state
    // restored together (checked before anything is assigned).
    const std::string who = source + ": compile settings";
    model->compile(compile_options_from(nn::config_from_json(settings->second, who), who));
    Checkpoint checkpoint{{"model", *model}, {"optimizer", *model->compile_options().optimizer}};
    checkpoint.restore_state(file.tensors, source, where);
    return model;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::io
