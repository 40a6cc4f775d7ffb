// Devices from Python: `with ef.device("/gpu:0"):`, ef.config.list_physical_devices,
// and the CUDA devices' memory (ef.config.experimental.get_memory_info).
#include "bindings.h"

#include "eagerflow/core/cuda.h"
#include "eagerflow/runtime/context.h"

namespace efpy {
namespace {

// The context manager behind ef.device: ops without tensor inputs place their outputs
// on the device while it is entered (Context::device, as ef::DeviceScope in C++).
class PyDeviceScope {
 public:
  explicit PyDeviceScope(const std::string& name) : device_(ef::parse_device(name)) {}
  void enter() {
    saved_.push_back(ef::Context::current().device);
    ef::Context::current().device = device_;
  }
  void exit() {
    ef::Context::current().device = saved_.back();
    saved_.pop_back();
  }
  ef::Device device() const { return device_; }

 private:
  ef::Device device_;
  std::vector<ef::Device> saved_;
};

int cuda_index(const std::string& name) {
  const ef::Device d = ef::parse_device(name);
  if (d.type != ef::DeviceType::CUDA)
    throw ef::InvalidArgumentError("memory statistics are kept for GPUs only, not for '" + name + "'");
  return d.index;
}

}  // namespace

void bind_devices(py::module_& m) {
  py::class_<PyDeviceScope>(m, "DeviceScope")
      .def(py::init<const std::string&>(), py::arg("device_name"))
      .def("__enter__",
           [](PyDeviceScope& s) {
             s.enter();
             return &s;
           })
      .def("__exit__", [](PyDeviceScope& s, py::args) { s.exit(); })
      .def_property_readonly("name", [](const PyDeviceScope& s) { return ef::full_device_name(s.device()); });
  m.def("parse_device", [](const std::string& name) { return ef::full_device_name(ef::parse_device(name)); });
  m.def("cuda_is_available", &ef::cuda::is_available);
  m.def("cuda_device_count", &ef::cuda::device_count);
  m.def("cuda_unavailable_reason", &ef::cuda::unavailable_reason);
  m.def("cuda_device_name", &ef::cuda::device_name, py::arg("index") = 0);
  m.def("cuda_compute_capability", &ef::cuda::compute_capability, py::arg("index") = 0);
  m.def("cuda_synchronize", &ef::cuda::synchronize, py::arg("index") = 0);
  m.def("get_memory_info", [](const std::string& device) {
    const ef::cuda::MemoryInfo info = ef::cuda::memory_info(cuda_index(device));
    py::dict d;
    d["current"] = info.current;
    d["peak"] = info.peak;
    return d;
  });
  m.def("reset_memory_stats",
        [](const std::string& device) { ef::cuda::reset_memory_stats(cuda_index(device)); });
  m.def("empty_cache", [](const std::string& device) { ef::cuda::empty_cache(cuda_index(device)); });
}

}  // namespace efpy
