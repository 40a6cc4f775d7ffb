// The CUDA backend's run time: one context and one stream per device, the caching
// device allocator, copies, kernel launches and error checks. Internal to the library;
// users see include/eagerflow/core/cuda.h.
//
// Note [one stream per device]: every kernel and copy of a device is queued on that
// device's one stream, so work runs in the order the program issued it and the host
// waits only when it reads a value (a copy to the host, item(), printing). Freed memory
// can therefore be handed out again at once: any kernel that still reads it was queued
// before any kernel that will write it (PyTorch's stream-ordered caching allocator
// relies on the same fact).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "backends/cuda/api.h"

namespace ef::cuda {

struct DeviceState {
  int index = 0;
  api::CUdevice device = 0;
  api::CUcontext context = nullptr;
  api::CUstream stream = nullptr;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  api::cublasHandle_t cublas = nullptr;  // created on first use
  // The op whose kernel was queued last: an asynchronous fault surfaces at a later
  // synchronization, and the error names the op that most likely caused it.
  std::string_view last_op = "";
};

// The device's state with its context current on the calling thread. Throws
// UnimplementedError without a driver, InvalidArgumentError for a bad index.
DeviceState& device(int index);

// Throws InternalError naming `what` and the driver's error text unless `r` succeeded.
void check(api::CUresult r, std::string_view what, const DeviceState& d);

// Waits for the device's stream; an error there names the last op queued.
void synchronize_device(DeviceState& d);

// The caching allocator (Note [one stream per device]). 0 bytes gives nullptr.
void* allocate(int device, size_t bytes);
void deallocate(int device, void* ptr);

// Copies between host and device memory, queued on the device's stream. To the host
// waits for the copy (the host reads the bytes next).
void copy_to_device(DeviceState& d, void* dst, const void* src, size_t bytes);
void copy_to_host(DeviceState& d, void* dst, const void* src, size_t bytes);
void copy_on_device(DeviceState& d, void* dst, const void* src, size_t bytes);

// Launches `fn` over `n` elements with `block` threads per block (a grid-stride loop in
// the kernel covers what the grid does not), for op `op`.
void launch(DeviceState& d, api::CUfunction fn, int64_t n, void** params, std::string_view op,
            int block = 256);
// Launches exactly `blocks` blocks of `block` threads.
void launch_blocks(DeviceState& d, api::CUfunction fn, int64_t blocks, int block, void** params,
                   std::string_view op);

// The device's cuBLAS handle, bound to its stream.
api::cublasHandle_t cublas_handle(DeviceState& d);

}  // namespace ef::cuda
