// Storage and the caching CPU allocator.
//
// Note [buffer reuse]: freshly allocated large buffers cost a page fault and a zeroing
// per 4 KiB page the first time they are touched; an allocating elementwise op on
// 1e7 floats runs ~4x slower than one that writes into warm memory. The caching
// allocator therefore keeps freed buffers and hands them out again:
// - small requests (up to 4 MiB) in size classes, reused by requests of the same class;
// - large ones in a pool of 2 MiB-aligned huge-page blocks (src/core/block_pool.h): a
//   request takes the smallest free block that fits and splits off the rest; a freed
//   block merges with its free neighbours. When nothing fits, the new block is built
//   from the pages of free blocks (mremap moves them: no copy, no page fault) as far as
//   fresh memory would lift the footprint (bytes in use + cached) past the peak of
//   bytes in use, so a program's resident memory stays at its peak of live tensors
//   even when its large buffers come in sizes that do not fit each other's holes.
// A buffer returns to the cache only when the last Storage referring to it is destroyed,
// so a buffer that is still referenced is never handed out. The cache is bounded
// (set_cache_limit) and can be emptied (release_cached_memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "eagerflow/core/device.h"
#include "eagerflow/core/ref.h"

namespace ef {

// A block of device memory, shared by every tensor (and view) that refers to it.
class Storage : public RefCounted {
 public:
  // Allocates `nbytes` (64-byte aligned) on `device` through its allocator.
  static Ref<Storage> allocate(size_t nbytes, Device device = kCPU);
  // Memory owned by someone else (DLPack, NumPy): `release` runs when the last
  // tensor using it goes.
  static Ref<Storage> wrap(void* data, size_t nbytes, Device device, std::function<void()> release);
  ~Storage() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // True for memory owned by someone else (wrap): others may see it.
  bool wraps_foreign_memory() const { return static_cast<bool>(release_); }

 private:
  Storage(void* data, size_t nbytes, Device device) : data_(data), nbytes_(nbytes), device_(device) {}
  void* data_;
  size_t nbytes_;
  Device device_;
  std::function<void()> release_;  // set for wrapped memory
};

// Statistics of the CPU caching allocator.
struct AllocatorStats {
  size_t bytes_in_use = 0;     // held by live storages
  size_t bytes_cached = 0;     // freed, kept for reuse
  size_t peak_bytes_in_use = 0;
  uint64_t allocations = 0;    // requests served
  uint64_t cache_hits = 0;     // requests served from the cache
};

AllocatorStats cpu_allocator_stats();
// Restarts peak_bytes_in_use from the bytes in use now, to measure the peak of one step.
void reset_peak_bytes_in_use();
// Gives every cached (unused) CPU buffer back to the system; the footprint's target
// (Note [buffer reuse]) starts again from the bytes in use now.
void release_cached_memory();
// Caps the bytes kept in the cache (default 1 GiB, or EF_ALLOCATOR_CACHE_MB); freeing
// beyond the cap returns memory to the system. 0 disables caching.
void set_cache_limit(size_t bytes);

}  // namespace ef
