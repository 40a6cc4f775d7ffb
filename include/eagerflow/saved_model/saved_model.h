// Saved models: traced functions and the variables they use, written to a directory
// that a program without the code that traced them (a C++ server, eagerflow-run, another
// Python process) loads and runs, as TensorFlow's SavedModel.
//
//   auto f = ef::function([&](ef::Tensor x) { return ef::matmul(x, w) + b; }, "predict",
//                         std::vector<ef::TensorSpec>{{ef::DType::Float32, {ef::kUnknownDim, 4}, "x"}});
//   ef::ConcreteFunction traced = f.untyped().get_concrete_function(std::vector<ef::Tensor>{});
//   ef::saved_model::save("model_dir", {{.name = "serving_default", .function = traced, .signature = true}});
//   ef::saved_model::LoadedModel m = ef::saved_model::load("model_dir");
//   ef::Tensor y = m.call_signature("serving_default", {{"x", x}}).at("output_0");
//
// Note [saved model directories]: `dir/saved_model.pb` holds the graphs (the messages of
// src/saved_model/saved_model.proto) and `dir/variables/variables.safetensors` the
// variables' values with their checksums (Note [checkpoint integrity]). Each function is
// saved as traced (before optimization); a loaded one is optimized on its first call, as
// the original was. docs/saved_model_format.md documents both files.
//
// Note [loading validates everything]: load reads both files completely and checks
// every field before it creates anything: the format version, every op against the
// registry (its attributes and its inputs' dtypes and shapes, through the op's own
// inference, which must give the dtypes and shapes the file declares), that each node
// uses only nodes before it (so no graph has a cycle), every variable reference,
// constant and sub-graph. A damaged or edited directory is refused with DataLossError
// (NotFoundError for a missing file, UnimplementedError for a newer format or an op this
// build lacks) naming the file and the field; nothing is half loaded.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "eagerflow/graph/function.h"

namespace ef::saved_model {

// The version written; load refuses newer ones.
inline constexpr int kFormatVersion = 1;

// A name a saved model exposes. A signature is called with named inputs and gives
// named outputs (TensorFlow's signatures["serving_default"]); any export can also be
// called with positional inputs.
struct Export {
  std::string name;
  ConcreteFunction function;
  bool signature = false;
  // Empty: the input specs' names, else "input_<i>"; and "output_<i>".
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  // How a front end nests the outputs (opaque here; the Python package's JSON).
  std::string structure;
};

// Writes `exports` and the variables their functions use to `dir` (created, or replaced
// when it holds a saved model). `variables` are saved as well, first and in this order
// (e.g. every variable of a model, so that a loaded model lists them all). The
// directory appears complete or not at all: it is written beside `dir` and renamed.
// Throws InvalidArgumentError for no exports, a repeated export name, or wrong counts of
// names; UnimplementedError for a function that holds something a file cannot (a
// constant on a device without a host copy is copied first).
void save(const std::string& dir, const std::vector<Export>& exports,
          const std::vector<Variable>& variables = {}, CallSite where = CallSite::current());

// What load gives back: the exports, runnable without retracing, and the variables as
// real Variables (training a loaded model with a tape and an optimizer works).
class LoadedModel {
 public:
  const std::vector<Export>& exports() const { return exports_; }
  // The export called `name`; NotFoundError listing the names otherwise.
  const Export& get(const std::string& name) const;
  // The names of the signatures, in the order saved.
  std::vector<std::string> signature_keys() const;
  // Runs export `name` on named inputs (every input, no other); returns its named outputs.
  std::map<std::string, Tensor> call_signature(const std::string& name,
                                               const std::map<std::string, Tensor>& inputs,
                                               CallSite where = CallSite::current()) const;
  // Runs export `name` on positional inputs.
  std::vector<Tensor> call(const std::string& name, const std::vector<Tensor>& inputs,
                           CallSite where = CallSite::current()) const;
  const std::vector<Variable>& variables() const { return variables_; }
  std::vector<Variable> trainable_variables() const;
  int format_version() const { return format_version_; }

 private:
  friend LoadedModel load(const std::string&, CallSite);
  friend LoadedModel load_from_bytes(const std::string&, const std::string&, const std::string&);
  std::vector<Export> exports_;
  std::vector<Variable> variables_;
  int format_version_ = 0;
};

// Reads a saved model (Note [loading validates everything]).
LoadedModel load(const std::string& dir, CallSite where = CallSite::current());

// As load, from the two files' contents in memory (`source` names them in errors): for
// fuzzing and for tools that keep models elsewhere.
LoadedModel load_from_bytes(const std::string& graph_bytes, const std::string& variables_bytes,
                            const std::string& source = "<memory>");

}  // namespace ef::saved_model
