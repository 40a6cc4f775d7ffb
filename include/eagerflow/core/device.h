// Device: where a tensor's memory lives. Every tensor carries one (CPU only for now;
// CUDA is next). Kernels are looked up per device type.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

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

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.to_string(); }

}  // namespace ef
