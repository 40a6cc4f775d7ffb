// Devices from Python: `with ef.device("/gpu:0"):`, ef.config.list_physical_devices,
// and the CUDA devices' memory (ef.config.experimental.get_memory_info).
#include "bindings.h"

#include <optional>

#include "eagerflow/core/allocator.h"
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

// The CUDA index of `name`, or none for the CPU (whose statistics are the caching
// allocator's, eagerflow/core/allocator.h).
std::optional<int> cuda_index(const std::string& name) {
  const ef::Device d = ef::parse_device(name);
  if (d.type == ef::DeviceType::CPU) return std::nullopt;
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
    py::dict d;
    if (const std::optional<int> gpu = cuda_index(device)) {
      const ef::cuda::MemoryInfo info = ef::cuda::memory_info(*gpu);
      d["current"] = info.current;
      d["peak"] = info.peak;
    } else {
      const ef::AllocatorStats stats = ef::cpu_allocator_stats();
      d["current"] = stats.bytes_in_use;
      d["peak"] = stats.peak_bytes_in_use;
    }
    return d;
  });
  m.def("reset_memory_stats", [](const std::string& device) {
    if (const std::optional<int> gpu = cuda_index(device))
      ef::cuda::reset_memory_stats(*gpu);
    else
      ef::reset_peak_bytes_in_use();
  });
  m.def("empty_cache", [](const std::string& device) {
    if (const std::optional<int> gpu = cuda_index(device))
      ef::cuda::empty_cache(*gpu);
    else
      ef::release_cached_memory();
  });
}

}  // namespace efpy
