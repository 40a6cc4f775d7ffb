// Whole-model files (Keras' model.save / load_model): one safetensors file holding the
// architecture (each layer's class name and config, in the metadata, covered by the
// checksums) and the weights (checksummed as a checkpoint's are).
//
//   ef::io::save_model(model, "model.safetensors");
//   std::shared_ptr<ef::nn::Model> again = ef::io::load_model("model.safetensors");
//
// Sequential and functional models of registered layers (the built-in layers, and
// custom ones registered with ef::nn::register_layer). A compiled model's file also
// keeps what compile was given (optimizer, losses, metrics, loss weights) and the
// optimizer's state (its slots and step counts), so a loaded model continues training
// where the saved one stopped, as Keras' load_model does. Compile settings that cannot be
// made again (a learning-rate schedule, a loss written as a function) leave them out:
// the model then loads uncompiled.
#pragma once

#include <memory>
#include <string>

#include "eagerflow/nn/model.h"

namespace ef::io {

// Writes the model atomically (as a checkpoint). InvalidArgumentError for a model that
// is not a Sequential, or has a layer without a registered class name; UnimplementedError
// for a layer whose config cannot be saved (a C++ activation function, say).
void save_model(const nn::Model& model, const std::string& path, CallSite where = CallSite::current());

// The model a file describes, built and holding the file's weights, and compiled with
// the file's compile settings and optimizer state when it has them and `compile` is set.
// Everything is checked before a model is returned: the checksums, the architecture
// (unknown classes are NotFoundError listing the known ones), the compile settings, and
// every weight's and optimizer slot's name, dtype and shape.
std::shared_ptr<nn::Model> load_model(const std::string& path, bool compile = true,
                                      CallSite where = CallSite::current());

}  // namespace ef::io
