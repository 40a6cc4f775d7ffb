// eagerflow._onnx: the binding of ef::onnx (include/eagerflow/onnx/onnx_export.h), an
// extension of its own so that `import eagerflow` does not load libonnx; the package's
// eagerflow/onnx.py loads it on the first export. It takes the ConcreteFunction class
// that eagerflow._core registers.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "eagerflow/onnx/onnx_export.h"

namespace py = pybind11;

PYBIND11_MODULE(_onnx, m) {
  py::module_::import("eagerflow._core");  // registers ConcreteFunction and the error types
  m.def(
      "_export",
      [](const ef::ConcreteFunction& function, std::vector<std::string> input_names,
         std::vector<std::string> output_names, int opset, std::optional<std::string> path) -> py::object {
        ef::onnx::ExportOptions options{.opset = opset,
                                        .input_names = std::move(input_names),
                                        .output_names = std::move(output_names),
                                        .graph_name = {}};
        if (path) {
          py::gil_scoped_release release;
          ef::onnx::export_function(function, *path, options);
          return py::none();
        }
        std::string bytes;
        {
          py::gil_scoped_release release;
          bytes = ef::onnx::export_to_bytes(function, options);
        }
        return py::bytes(bytes);
      },
      py::arg("function"), py::arg("input_names"), py::arg("output_names"), py::arg("opset"),
      py::arg("path"));
}
