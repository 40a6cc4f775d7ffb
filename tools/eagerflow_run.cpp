// eagerflow-run: runs a saved model from the command line, without Python.
//
//   eagerflow-run DIR --list
//   eagerflow-run DIR [--signature NAME] --input x=x.npy [--input y=y.npy] [--output out.npz]
//
// --list prints each export with its inputs and outputs. Otherwise the export NAME (by
// default "serving_default", or the model's only export) runs on the .npy inputs, named
// as the export names them; the outputs go to an .npz (np.load(out.npz)["output_0"]) or,
// without --output, are printed. Exit status 0 on success, 1 with a message on stderr
// for any error (a damaged model, a wrong input), 2 for bad usage.
#include <eagerflow/eagerflow.h>
#include <eagerflow/io/npy.h>
#include <eagerflow/saved_model/saved_model.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <string>

namespace {

int usage(const std::string& why) {
  std::cerr << "eagerflow-run: " << why << "\n"
            << "usage: eagerflow-run DIR --list\n"
            << "       eagerflow-run DIR [--signature NAME] --input NAME=FILE.npy ... [--output OUT.npz]\n";
  return 2;
}

std::string spec_text(const ef::TensorSpec& s) {
  return std::string(ef::name(s.dtype)) + s.shape.to_string();
}

void list(const ef::saved_model::LoadedModel& model) {
  for (const ef::saved_model::Export& e : model.exports()) {
    std::cout << (e.signature ? "signature " : "function ") << e.name << "\n";
    const auto& inputs = e.function.input_signature();
    for (size_t i = 0; i < inputs.size(); ++i)
      std::cout << "  input  " << e.input_names[i] << ": " << spec_text(inputs[i]) << "\n";
    const auto outputs = e.function.output_signature();
    for (size_t k = 0; k < outputs.size(); ++k)
      std::cout << "  output " << e.output_names[k] << ": " << spec_text(outputs[k]) << "\n";
  }
  std::cout << model.variables().size() << " variables\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("no model directory");
  const std::string dir = argv[1];
  std::string signature, output;
  std::map<std::string, std::string> input_files;
  bool list_exports = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--list") {
      list_exports = true;
    } else if (arg == "--signature" && has_value) {
      signature = argv[++i];
    } else if (arg == "--output" && has_value) {
      output = argv[++i];
    } else if (arg == "--input" && has_value) {
      const std::string spec = argv[++i];
      const size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0) return usage("--input takes NAME=FILE.npy, got '" + spec + "'");
      input_files[spec.substr(0, eq)] = spec.substr(eq + 1);
    } else {
      return usage("unknown or incomplete argument '" + arg + "'");
    }
  }
  try {
    const ef::saved_model::LoadedModel model = ef::saved_model::load(dir);
    if (list_exports) {
      list(model);
      return 0;
    }
    if (signature.empty()) {
      bool has_default = false;
      for (const auto& e : model.exports()) has_default = has_default || e.name == "serving_default";
      if (has_default)
        signature = "serving_default";
      else if (model.exports().size() == 1)
        signature = model.exports()[0].name;
      else
        return usage(
            "the model has several exports and none is serving_default; pass --signature (see --list)");
    }
    const ef::saved_model::Export& e = model.get(signature);
    std::vector<ef::Tensor> inputs;
    for (const std::string& name : e.input_names) {
      auto it = input_files.find(name);
      if (it == input_files.end())
        return usage("export '" + signature + "' needs --input " + name + "=FILE.npy");
      inputs.push_back(ef::io::load_npy(it->second));
      input_files.erase(it);
    }
    if (!input_files.empty())
      return usage("export '" + signature + "' has no input '" + input_files.begin()->first + "'");
    const std::vector<ef::Tensor> results = e.function(inputs);
    std::map<std::string, ef::Tensor> named;
    for (size_t k = 0; k < results.size(); ++k) named.emplace(e.output_names[k], results[k]);
    if (!output.empty()) {
      ef::io::save_npz(output, named);
    } else {
      for (const auto& [name, value] : named) std::cout << name << ": " << value << "\n";
    }
    return 0;
  } catch (const ef::Error& err) {
    std::cerr << "eagerflow-run: " << err.what() << "\n";
    return 1;
  }
}
