// ef.io (safetensors files) and ef.train (Checkpoint, CheckpointManager).
#include <pybind11/stl.h>

#include <eagerflow/io/checkpoint.h>
#include <eagerflow/io/safetensors.h>
#include <eagerflow/nn/module.h>
#include <eagerflow/optim/lbfgs.h>

#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace io = ef::io;
constexpr ef::CallSite kPython{};
using NamedVariables = std::vector<std::pair<std::string, ef::Variable>>;

// A Checkpoint over Python objects, which it keeps alive: Variables, Optimizers, modules
// (ef.Module, Keras models), and anything else with a named_variables() method
// returning (path, Variable) pairs.
struct PyCheckpoint {
  std::vector<py::object> objects;
  std::unique_ptr<io::Checkpoint> checkpoint;

  explicit PyCheckpoint(const std::vector<std::pair<std::string, py::object>>& named) {
    std::vector<std::pair<std::string, io::Checkpoint::Object>> tracked;
    for (const auto& [name, obj] : named) {
      objects.push_back(obj);
      if (py::isinstance<ef::Variable>(obj)) {
        tracked.emplace_back(name, obj.cast<ef::Variable>());
      } else if (py::isinstance<ef::optim::Optimizer>(obj)) {
        tracked.emplace_back(name, obj.cast<ef::optim::Optimizer&>());
      } else if (py::isinstance<ef::optim::LBFGS>(obj)) {
        tracked.emplace_back(name, obj.cast<ef::optim::LBFGS&>());
      } else if (py::isinstance<ef::nn::Module>(obj)) {
        tracked.emplace_back(name, obj.cast<const ef::nn::Module&>());
      } else if (py::hasattr(obj, "named_variables")) {
        py::object method = obj.attr("named_variables");
        tracked.emplace_back(name, io::Checkpoint::Object(std::function<NamedVariables()>([method] {
                               py::gil_scoped_acquire gil;
                               return method().cast<NamedVariables>();
                             })));
      } else {
        throw py::type_error("Checkpoint: '" + name + "' must be a Variable, an optimizer (L-BFGS too), or a model with "
                             "named_variables(); got " + std::string(py::str(py::type::of(obj))));
      }
    }
    checkpoint = std::make_unique<io::Checkpoint>(std::move(tracked));
  }
};

}  // namespace

void bind_io(py::module_& m) {
  m.def(
      "_save_safetensors",
      [](const std::string& path, const py::dict& tensors, const std::map<std::string, std::string>& metadata) {
        std::map<std::string, ef::Tensor> converted;
        for (auto [name, value] : tensors) converted.emplace(py::str(name), to_tensor(value));
        io::save_safetensors(path, converted, metadata, kPython);
      },
      "path"_a, "tensors"_a, "metadata"_a);
  m.def(
      "_load_safetensors",
      [](const std::string& path) {
        io::TensorFile f = io::load_safetensors(path, kPython);
        return std::make_pair(f.tensors, f.metadata);
      },
      "path"_a);

  py::class_<PyCheckpoint>(m, "_Checkpoint")
      .def(py::init<const std::vector<std::pair<std::string, py::object>>&>(), "objects"_a)
      .def("save", [](const PyCheckpoint& c, const std::string& path) { c.checkpoint->save(path, kPython); })
      .def(
          "restore",
          [](PyCheckpoint& c, const std::string& path, bool convert_dtypes) {
            c.checkpoint->restore(path, {.convert_dtypes = convert_dtypes}, kPython);
          },
          "path"_a, "convert_dtypes"_a = false)
      .def("state", [](const PyCheckpoint& c) { return c.checkpoint->state(); });

  py::class_<io::CheckpointManager>(m, "_CheckpointManager")
      .def(py::init([](PyCheckpoint& c, const std::string& directory, int max_to_keep) {
             return std::make_unique<io::CheckpointManager>(*c.checkpoint, directory, max_to_keep, kPython);
           }),
           "checkpoint"_a, "directory"_a, "max_to_keep"_a, py::keep_alive<1, 2>())
      .def("save", [](io::CheckpointManager& m) { return m.save(kPython); })
      .def_property_readonly("latest_checkpoint", &io::CheckpointManager::latest_checkpoint)
      .def_property_readonly("checkpoints", &io::CheckpointManager::checkpoints)
      .def_property_readonly("directory", &io::CheckpointManager::directory);
}

}  // namespace efpy
