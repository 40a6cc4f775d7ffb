#include "eagerflow/core/device.h"

#include <cctype>
#include <charconv>

#include "eagerflow/core/error.h"

namespace ef {

Device parse_device(std::string_view name) {
  std::string s;
  for (char c : name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto bad = [&]() -> Device {
    fail("device: '", name,
         "' is not a device name (expected e.g. \"CPU:0\", \"/gpu:0\", \"GPU:1\", \"cuda:0\" or ",
         "\"/job:localhost/replica:0/task:0/device:GPU:0\")");
  };
  // Keep what follows the last "device:" (TensorFlow's full names), then the last '/'.
  if (size_t at = s.rfind("device:"); at != std::string::npos) s = s.substr(at + 7);
  if (size_t at = s.rfind('/'); at != std::string::npos) s = s.substr(at + 1);
  std::string_view kind = s, index;
  if (size_t colon = s.find(':'); colon != std::string::npos) {
    kind = std::string_view(s).substr(0, colon);
    index = std::string_view(s).substr(colon + 1);
  }
  Device d;
  if (kind == "cpu")
    d.type = DeviceType::CPU;
  else if (kind == "gpu" || kind == "cuda")
    d.type = DeviceType::CUDA;
  else
    return bad();
  if (!index.empty()) {
    auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), d.index);
    if (ec != std::errc() || end != index.data() + index.size() || d.index < 0) return bad();
  }
  return d;
}

std::string full_device_name(const Device& device) {
  return std::string("/job:localhost/replica:0/task:0/device:") +
         (device.type == DeviceType::CPU ? "CPU:" : "GPU:") + std::to_string(device.index);
}

}  // namespace ef
