// CUDA devices: whether there are any, how many, and their memory. Tensors move to a
// GPU with t.gpu() / t.to(Device{DeviceType::CUDA, i}) and back with t.cpu(); ops run
// where their inputs are. eagerflow finds the CUDA driver, NVRTC and cuBLAS at run time,
// so the same build runs with and without GPUs (Note [CUDA without the toolkit] in
// src/backends/cuda/api.h).
#pragma once

#include <cstddef>
#include <string>

#include "eagerflow/core/device.h"

namespace ef::cuda {

// True when the CUDA driver loads and sees at least one device.
bool is_available();
// Number of CUDA devices (0 without a driver).
int device_count();
// Why is_available() is false ("no CUDA driver: ..."), or empty.
std::string unavailable_reason();
// The device's name ("NVIDIA H100 80GB HBM3") and compute capability ("9.0").
std::string device_name(int device = 0);
std::string compute_capability(int device = 0);

// Waits until every kernel and copy queued on the device has finished; raises the
// error of one that failed.
void synchronize(int device = 0);

// Bytes of the device's memory held by tensors (current, and the peak since the last
// reset_memory_stats) and kept by the caching allocator for reuse.
struct MemoryInfo {
  size_t current = 0;
  size_t peak = 0;
  size_t cached = 0;
};
MemoryInfo memory_info(int device = 0);
void reset_memory_stats(int device = 0);
// Gives every cached (unused) block back to the driver.
void empty_cache(int device = 0);

}  // namespace ef::cuda
