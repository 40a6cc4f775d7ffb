#include "backends/cuda/runtime.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "eagerflow/core/cuda.h"
#include "eagerflow/core/error.h"

namespace ef::cuda {
namespace {

using namespace api;

// Note [device allocator]: blocks are rounded up (to 512 bytes below 1 MiB, else to
// 2 MiB) and kept when freed, by size; a request takes the smallest cached block that
// fits if it wastes at most half of it. Out of memory empties the cache and tries once
// more before raising ResourceExhaustedError.
struct Allocator {
  std::multimap<size_t, void*> cached;       // size -> block
  std::unordered_map<void*, size_t> in_use;  // block -> size
  size_t bytes_in_use = 0, bytes_cached = 0, peak = 0;
};

struct Devices {
  std::mutex mutex;  // guards creation and every allocator
  int count = -1;
  std::vector<std::unique_ptr<DeviceState>> states;
  std::vector<Allocator> allocators;
};

Devices& devices() {
  static auto* d = new Devices();  // never destroyed: tensors may be freed during exit
  return *d;
}

int count_devices(Devices& ds) {
  if (ds.count < 0) {
    ds.count = 0;
    if (!driver_unavailable_reason().empty()) return 0;
    int n = 0;
    if (driver().cuDeviceGetCount(&n) == CUDA_SUCCESS) ds.count = n;
    ds.states.resize(static_cast<size_t>(ds.count));
    ds.allocators.resize(static_cast<size_t>(ds.count));
  }
  return ds.count;
}

size_t rounded_size(size_t bytes) {
  constexpr size_t kSmall = 512, kLarge = size_t{2} << 20;
  return bytes < (size_t{1} << 20) ? (bytes + kSmall - 1) / kSmall * kSmall
                                   : (bytes + kLarge - 1) / kLarge * kLarge;
}

void release_cached(Allocator& a) {
  for (auto& [size, ptr] : a.cached) driver().cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
  a.cached.clear();
  a.bytes_cached = 0;
}

thread_local CUcontext current_context = nullptr;

}  // namespace

DeviceState& device(int index) {
  if (std::string why = driver_unavailable_reason(); !why.empty())
    fail<UnimplementedError>("CUDA:", index, " is not available: ", why);
  Devices& ds = devices();
  std::lock_guard<std::mutex> lock(ds.mutex);
  const Driver& drv = driver();
  int count = count_devices(ds);
  if (index < 0) fail("a CUDA device index must be >= 0, got ", index);
  if (index >= count) fail("there is no CUDA device ", index, ": this machine has ", count);
  std::unique_ptr<DeviceState>& slot = ds.states[static_cast<size_t>(index)];
  if (!slot) {
    auto s = std::make_unique<DeviceState>();
    s->index = index;
    check(drv.cuDeviceGet(&s->device, index), "cuDeviceGet", *s);
    check(drv.cuDevicePrimaryCtxRetain(&s->context, s->device), "cuDevicePrimaryCtxRetain", *s);
    check(drv.cuCtxSetCurrent(s->context), "cuCtxSetCurrent", *s);
    current_context = s->context;
    check(drv.cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", *s);
    char name[256] = {};
    check(drv.cuDeviceGetName(name, sizeof name, s->device), "cuDeviceGetName", *s);
    s->name = name;
    check(
        drv.cuDeviceGetAttribute(&s->compute_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s->device),
        "cuDeviceGetAttribute", *s);
    check(
        drv.cuDeviceGetAttribute(&s->compute_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, s->device),
        "cuDeviceGetAttribute", *s);
    check(drv.cuDeviceGetAttribute(&s->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, s->device),
          "cuDeviceGetAttribute", *s);
    slot = std::move(s);
  }
  if (current_context != slot->context) {
    check(drv.cuCtxSetCurrent(slot->context), "cuCtxSetCurrent", *slot);
    current_context = slot->context;
  }
  return *slot;
}

void check(CUresult r, std::string_view what, const DeviceState& d) {
  if (r == CUDA_SUCCESS) [[likely]]
    return;
  std::string where = what.empty() ? std::string() : std::string(what) + ": ";
  if (!d.last_op.empty())
    fail<InternalError>(where, error_text(r), " on CUDA:", d.index, " (the last op queued there was '",
                        d.last_op, "'; an error in an earlier kernel surfaces at the next call that waits)");
  fail<InternalError>(where, error_text(r), " on CUDA:", d.index);
}

void synchronize_device(DeviceState& d) { check(driver().cuStreamSynchronize(d.stream), "synchronize", d); }

void* allocate(int index, size_t bytes) {
  if (bytes == 0) return nullptr;
  DeviceState& d = device(index);
  Devices& ds = devices();
  std::lock_guard<std::mutex> lock(ds.mutex);
  Allocator& a = ds.allocators[static_cast<size_t>(index)];
  const size_t size = rounded_size(bytes);
  void* ptr = nullptr;
  auto it = a.cached.lower_bound(size);
  if (it != a.cached.end() && it->first <= 2 * size) {
    ptr = it->second;
    a.bytes_cached -= it->first;
    a.in_use.emplace(ptr, it->first);
    a.bytes_in_use += it->first;
    a.cached.erase(it);
  } else {
    CUdeviceptr raw = 0;
    CUresult r = driver().cuMemAlloc(&raw, size);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      release_cached(a);
      r = driver().cuMemAlloc(&raw, size);
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      size_t free = 0, total = 0;
      driver().cuMemGetInfo(&free, &total);
      fail<ResourceExhaustedError>("out of memory on CUDA:", index, ": tried to allocate ", bytes,
                                   " bytes with ", free, " of ", total, " bytes free (", a.bytes_in_use,
                                   " held by tensors); the cache was emptied and the allocation retried");
    }
    check(r, "cuMemAlloc", d);
    ptr = reinterpret_cast<void*>(raw);
    a.in_use.emplace(ptr, size);
    a.bytes_in_use += size;
  }
  a.peak = std::max(a.peak, a.bytes_in_use);
  return ptr;
}

void deallocate(int index, void* ptr) {
  if (!ptr) return;
  Devices& ds = devices();
  std::lock_guard<std::mutex> lock(ds.mutex);
  Allocator& a = ds.allocators[static_cast<size_t>(index)];
  auto it = a.in_use.find(ptr);
  if (it == a.in_use.end()) return;  // not ours (cannot happen for Storage-owned blocks)
  a.bytes_in_use -= it->second;
  a.bytes_cached += it->second;
  a.cached.emplace(it->second, ptr);
  a.in_use.erase(it);
}

void copy_to_device(DeviceState& d, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  check(driver().cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes, d.stream),
        "copy to device", d);
}

void copy_to_host(DeviceState& d, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  check(driver().cuMemcpyDtoHAsync(dst, reinterpret_cast<CUdeviceptr>(src), bytes, d.stream), "copy to host",
        d);
  synchronize_device(d);
}

void copy_on_device(DeviceState& d, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  check(driver().cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src),
                                   bytes, d.stream),
        "copy on device", d);
}

void launch_blocks(DeviceState& d, CUfunction fn, int64_t blocks, int block, void** params,
                   std::string_view op) {
  if (blocks <= 0) return;
  d.last_op = op;
  check(driver().cuLaunchKernel(fn, static_cast<unsigned>(blocks), 1, 1, static_cast<unsigned>(block), 1, 1,
                                0, d.stream, params, nullptr),
        op, d);
  // EF_CUDA_LAUNCH_BLOCKING=1 waits after every kernel, so a fault names its own op
  // (CUDA_LAUNCH_BLOCKING's role for the runtime API).
  static const bool blocking = [] {
    const char* v = std::getenv("EF_CUDA_LAUNCH_BLOCKING");
    return v && std::string_view(v) == "1";
  }();
  if (blocking) synchronize_device(d);
}

void launch(DeviceState& d, CUfunction fn, int64_t n, void** params, std::string_view op, int block) {
  if (n <= 0) return;
  // Enough blocks to fill every multiprocessor several times; the kernels' grid-stride
  // loops cover the rest.
  const int64_t max_blocks = int64_t{d.multiprocessors} * 32;
  launch_blocks(d, fn, std::min<int64_t>((n + block - 1) / block, max_blocks), block, params, op);
}

cublasHandle_t cublas_handle(DeviceState& d) {
  if (!d.cublas) {
    const Cublas& b = api::cublas();
    cublasHandle_t h = nullptr;
    if (b.cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
      fail<InternalError>("cuBLAS failed to initialize on CUDA:", d.index);
    b.cublasSetStream(h, d.stream);
    d.cublas = h;
  }
  return d.cublas;
}

// ---- public API (eagerflow/core/cuda.h) ----

bool is_available() { return device_count() > 0; }

int device_count() {
  Devices& ds = devices();
  std::lock_guard<std::mutex> lock(ds.mutex);
  return count_devices(ds);
}

std::string unavailable_reason() {
  std::string why = driver_unavailable_reason();
  if (why.empty() && device_count() == 0) why = "the CUDA driver sees no device";
  return why;
}

std::string device_name(int index) { return device(index).name; }

std::string compute_capability(int index) {
  DeviceState& d = device(index);
  return std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor);
}

void synchronize(int index) { synchronize_device(device(index)); }

MemoryInfo memory_info(int index) {
  device(index);  // validates the index
  Devices& ds = devices();
  std::lock_guard<std::mutex> lock(ds.mutex);
  const Allocator& a = ds.allocators[static_cast<size_t>(index)];
  return {a.bytes_in_use, a.peak, a.bytes_cached};
}

void reset_memory_stats(int index) {
  device(index);
  Devices& ds = devices();
  std::lock_guard<std::mutex> lock(ds.mutex);
  Allocator& a = ds.allocators[static_cast<size_t>(index)];
  a.peak = a.bytes_in_use;
}

void empty_cache(int index) {
  DeviceState& d = device(index);
  synchronize_device(d);
  Devices& ds = devices();
  std::lock_guard<std::mutex> lock(ds.mutex);
  release_cached(ds.allocators[static_cast<size_t>(index)]);
}

}  // namespace ef::cuda
