// Model::summary (eagerflow/nn/model.h): Keras' table of layers, output shapes and
// parameter counts.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <sstream>

#include "eagerflow/nn/functional.h"
#include "eagerflow/nn/model.h"
#include "eagerflow/runtime/context.h"

namespace ef::nn {
namespace {

// A layer's C++ class name without its namespaces ("Dense").
std::string demangled(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status),
                                              std::free);
  std::string full = status == 0 && name ? name.get() : type.name();
  const size_t colon = full.rfind("::");
  return colon == std::string::npos ? full : full.substr(colon + 2);
}

}  // namespace

std::string Model::summary(int line_length,
                           const std::function<std::string(const Module&)>& type_name) const {
  const int name_width = line_length * 45 / 100, shape_width = line_length * 33 / 100;
  std::ostringstream out;
  auto row = [&](const std::string& a, const std::string& b, const std::string& c) {
    std::string line = a.substr(0, static_cast<size_t>(name_width - 1));
    line.resize(static_cast<size_t>(name_width), ' ');
    line += b.substr(0, static_cast<size_t>(shape_width - 1));
    line.resize(static_cast<size_t>(name_width + shape_width), ' ');
    out << line << c << "\n";
  };
  const std::string rule(static_cast<size_t>(line_length), '_'),
      double_rule(static_cast<size_t>(line_length), '=');
  out << "Model: \"" << name() << "\"\n" << rule << "\n";
  row("Layer (type)", "Output Shape", "Param #");
  out << double_rule << "\n";
  for (const auto& [child_name, child] : named_children()) {
    int64_t params = 0;
    for (const Variable& v : child->variables()) params += v.shape().num_elements();
    std::string shape = "?";
    auto* layer = dynamic_cast<Layer*>(child.get());
    const auto* functional = dynamic_cast<const Functional*>(this);
    if (std::optional<Shape> known =
            layer && functional ? functional->output_shape_of(*layer) : std::nullopt) {
      shape = known->to_string();
    } else if (layer && layer->built_input_shape()) {
      // Shape inference only: the layer's output for a batch of unknown size.
      Shape input = *layer->built_input_shape();
      if (input.rank() > 0) input.dims()[0] = kUnknownDim;
      try {
        InferenceOnlyBuilder shapes_only;
        BuildScope scope(&shapes_only);
        RecordingPaused paused;
        shape = (*layer)(symbolic_tensor(layer->dtype(), input), false).shape().to_string();
      } catch (const Error&) {
        shape = "?";  // a layer whose output depends on values, not only shapes
      }
    }
    const std::string type = type_name ? type_name(*child) : demangled(typeid(*child));
    row(child_name + " (" + type + ")", shape, std::to_string(params));
  }
  int64_t trainable = 0, frozen = 0;
  for (const Variable& v : variables()) (v.trainable() ? trainable : frozen) += v.shape().num_elements();
  out << double_rule << "\n";
  out << "Total params: " << trainable + frozen << "\n";
  out << "Trainable params: " << trainable << "\n";
  out << "Non-trainable params: " << frozen << "\n";
  out << rule << "\n";
  return out.str();
}

}  // namespace ef::nn
