// Device: where a tensor's memory lives. Every tensor carries one; kernels are looked
// up per device type (include/eagerflow/core/cuda.h for GPUs).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace ef {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1 };
inline constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  friend bool operator==(const Device&, const Device&) = default;
  std::string to_string() const {
    return std::string(type == DeviceType::CPU ? "CPU:" : "CUDA:") + std::to_string(index);
  }
};

inline constexpr Device kCPU{DeviceType::CPU, 0};

// The device a name means, in TensorFlow's and PyTorch's spellings: "CPU:0", "/cpu:0",
// "GPU:1", "/gpu:1", "/device:GPU:0", "/job:localhost/replica:0/task:0/device:GPU:0",
// "cuda", "cuda:1", "cpu" (case-insensitive; the index defaults to 0). Throws
// InvalidArgumentError naming the string otherwise.
Device parse_device(std::string_view name);
// TensorFlow's full name: "/job:localhost/replica:0/task:0/device:GPU:0".
std::string full_device_name(const Device& device);

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.to_string(); }

}  // namespace ef
