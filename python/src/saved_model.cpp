// Bindings of ef::saved_model (include/eagerflow/saved_model/saved_model.h). The
// package's eagerflow/saved_model.py chooses what to export from Python objects and
// rebuilds output structures; this layer moves exports and variables across.
#include <pybind11/stl.h>

#include "bindings.h"

namespace efpy {

namespace {
constexpr ef::CallSite kPython{};  // Python frames name the call site
}  // namespace

void bind_saved_model(py::module_& m) {
  using ef::saved_model::Export;
  using ef::saved_model::LoadedModel;
  py::class_<Export>(m, "_SavedModelExport")
      .def(py::init([](std::string name, ef::ConcreteFunction function, bool signature,
                       std::vector<std::string> input_names, std::vector<std::string> output_names,
                       std::string structure) {
             return Export{std::move(name),        std::move(function),     signature,
                           std::move(input_names), std::move(output_names), std::move(structure)};
           }),
           py::arg("name"), py::arg("function"), py::arg("signature"), py::arg("input_names"),
           py::arg("output_names"), py::arg("structure"))
      .def_readonly("name", &Export::name)
      .def_readonly("function", &Export::function)
      .def_readonly("signature", &Export::signature)
      .def_readonly("input_names", &Export::input_names)
      .def_readonly("output_names", &Export::output_names)
      .def_readonly("structure", &Export::structure);
  py::class_<LoadedModel>(m, "_LoadedModel")
      .def_property_readonly("exports", &LoadedModel::exports)
      .def_property_readonly("variables", &LoadedModel::variables)
      .def_property_readonly("format_version", &LoadedModel::format_version);
  m.def(
      "_saved_model_save",
      [](const std::string& dir, const std::vector<Export>& exports,
         const std::vector<ef::Variable>& variables) {
        ef::saved_model::save(dir, exports, variables, kPython);
      },
      py::arg("export_dir"), py::arg("exports"), py::arg("variables"));
  m.def(
      "_saved_model_load", [](const std::string& dir) { return ef::saved_model::load(dir, kPython); },
      py::arg("export_dir"));
}

}  // namespace efpy
