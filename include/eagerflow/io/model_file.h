// Whole-model files (Keras' model.save / load_model): one safetensors file holding the
// architecture (each layer's class name and config, in the metadata, covered by the
// checksums) and the weights (checksummed as a checkpoint's are).
//
//   ef::io::save_model(model, "model.safetensors");
//   std::shared_ptr<ef::nn::Model> again = ef::io::load_model("model.safetensors");
//
// Sequential models of registered layers only, for now (the built-in layers, and
// custom ones registered with ef::nn::register_layer). The optimizer's state is not in
// the file: to resume training, save a Checkpoint of the model and its optimizer.
#pragma once

#include <memory>
#include <string>

#include "eagerflow/nn/model.h"

namespace ef::io {

// Writes the model atomically (as a checkpoint). InvalidArgumentError for a model that
// is not a Sequential, or has a layer without a registered class name; UnimplementedError
// for a layer whose config cannot be saved (a C++ activation function, say).
void save_model(const nn::Model& model, const std::string& path, CallSite where = CallSite::current());

// The model a file describes, built and holding the file's weights (not compiled).
// Everything is checked before a model is returned: the checksums, the architecture
// (unknown classes are NotFoundError listing the known ones) and every weight's name,
// dtype and shape.
std::shared_ptr<nn::Model> load_model(const std::string& path, CallSite where = CallSite::current());

}  // namespace ef::io
