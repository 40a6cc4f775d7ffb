// Whole-model files (eagerflow/io/model_file.h).
#include "eagerflow/io/model_file.h"

#include "eagerflow/io/checkpoint.h"
#include "eagerflow/io/safetensors.h"
#include "eagerflow/nn/functional.h"
#include "eagerflow/nn/sequential.h"
#include "eagerflow/ops/creation.h"

namespace ef::io {
namespace {

// Metadata entries: what the file is, and the architecture as JSON.
constexpr const char* kFormat = "eagerflow.io.Model";
constexpr const char* kArchitectureKey = "architecture";

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
    Checkpoint checkpoint{{"model", model}};
    save_safetensors(path, checkpoint.state(), {{"format", kFormat}, {kArchitectureKey, nn::to_json(arch)}},
                     where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::shared_ptr<nn::Model> load_model(const std::string& path, CallSite where) {
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
    Checkpoint checkpoint{{"model", *model}};
    checkpoint.restore_state(file.tensors, source, where);
    return model;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::io
