// The caching CPU allocator: see Note [buffer reuse] in allocator.h.
#include "eagerflow/core/allocator.h"

#include <bit>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backends/cuda/runtime.h"
#include "core/block_pool.h"
#include "eagerflow/core/error.h"

namespace ef {
namespace {

constexpr size_t kAlignment = 64;
// Requests above this go to the block pool, smaller ones to the size classes. Pool
// blocks are whole 2 MiB units, so a request just above this wastes at most a third.
constexpr size_t kLargeRequest = size_t{4} << 20;

size_t round_up(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Rounds a small request up to its size class: multiples of 64 bytes up to 1 KiB, then
// four classes per power of two, so a reused buffer wastes at most 25%.
size_t size_class(size_t nbytes) {
  if (nbytes <= 1024) return std::max<size_t>(kAlignment, round_up(nbytes, kAlignment));
  return round_up(nbytes, std::bit_floor(nbytes - 1) / 4);
}

size_t default_cache_limit() {
  if (const char* env = std::getenv("EF_ALLOCATOR_CACHE_MB")) return std::strtoull(env, nullptr, 10) << 20;
  return size_t{1} << 30;
}

class CachingAllocator {
 public:
  void* allocate(size_t nbytes) {
    // Beyond any machine's memory, and rounding it up to a size class would overflow.
    if (nbytes > (SIZE_MAX >> 2)) fail<ResourceExhaustedError>("allocator: cannot allocate ", nbytes, " bytes");
    return nbytes > kLargeRequest ? allocate_large(nbytes) : allocate_small(nbytes);
  }

  // `nbytes` is the size the buffer was allocated with.
  void deallocate(void* p, size_t nbytes) {
    if (nbytes > kLargeRequest) deallocate_large(p);
    else deallocate_small(p, nbytes);
  }

  void release_all() {
    std::unordered_map<size_t, std::vector<void*>> small;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      small.swap(small_free_);
      small_cached_ = 0;
      large_.unmap_free(SIZE_MAX);
      live_peak_ = stats_.bytes_in_use;  // the footprint's target starts again from here
    }
    for (auto& [size, list] : small)
      for (void* p : list) std::free(p);
  }

  void set_limit(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      limit_ = bytes;
    }
    release_all();
  }

  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.peak_bytes_in_use = stats_.bytes_in_use;
  }

  AllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    AllocatorStats stats = stats_;
    stats.bytes_cached = cached_bytes();
    return stats;
  }

 private:
  size_t cached_bytes() const { return small_cached_ + large_.free_bytes(); }

  void note_in_use(size_t bytes) {
    stats_.bytes_in_use += bytes;
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
    live_peak_ = std::max(live_peak_, stats_.bytes_in_use);
  }

  void* allocate_small(size_t nbytes) {
    size_t bytes = size_class(nbytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.allocations;
      note_in_use(bytes);
      auto it = small_free_.find(bytes);
      if (it != small_free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        small_cached_ -= bytes;
        ++stats_.cache_hits;
        return p;
      }
    }
    void* p = std::aligned_alloc(kAlignment, bytes);
    if (!p) {
      release_all();  // the cache may be what stands in the way
      p = std::aligned_alloc(kAlignment, bytes);
    }
    if (!p) {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.bytes_in_use -= bytes;
      fail<ResourceExhaustedError>("allocator: out of memory allocating ", nbytes, " bytes");
    }
    return p;
  }

  void deallocate_small(void* p, size_t nbytes) {
    size_t bytes = size_class(nbytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.bytes_in_use -= bytes;
      if (cached_bytes() + bytes <= limit_) {
        small_free_[bytes].push_back(p);
        small_cached_ += bytes;
        return;
      }
    }
    std::free(p);
  }

  void* allocate_large(size_t nbytes) {
    const size_t bytes = round_up(nbytes, detail::BlockPool::kUnit);
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.allocations;
    void* p = large_.take(bytes);
    if (p) {
      ++stats_.cache_hits;
      note_in_use(large_.block_size(p));
      return p;
    }
    // Nothing fits. Keep the footprint (in use + cached) at the peak of bytes in use:
    // the part of the new block that would lift it higher is made of free blocks' pages.
    const size_t target = std::max(live_peak_, stats_.bytes_in_use + bytes);
    const size_t footprint = stats_.bytes_in_use + cached_bytes() + bytes;
    size_t recycled = 0;
    p = large_.map(bytes, footprint > target ? footprint - target : 0, &recycled);
    if (!p) {  // the cache may be what stands in the way
      large_.unmap_free(SIZE_MAX);
      p = large_.map(bytes, 0, &recycled);
    }
    if (!p) fail<ResourceExhaustedError>("allocator: out of memory allocating ", nbytes, " bytes");
    if (recycled == bytes) ++stats_.cache_hits;
    note_in_use(bytes);
    if (size_t after = stats_.bytes_in_use + cached_bytes(); after > target) large_.unmap_free(after - target);
    return p;
  }

  void deallocate_large(void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.bytes_in_use -= large_.give_back(p);
    if (cached_bytes() > limit_) large_.unmap_free(cached_bytes() - limit_);
  }

  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> small_free_;  // by size class
  size_t small_cached_ = 0;
  detail::BlockPool large_;
  AllocatorStats stats_;  // bytes_cached is computed when asked
  size_t live_peak_ = 0;  // the most bytes in use since release_all: the footprint's target
  size_t limit_ = default_cache_limit();
};

CachingAllocator& cpu_allocator() {
  // Never destroyed: storages freed during static destruction must still find it.
  static auto* allocator = new CachingAllocator();
  return *allocator;
}

}  // namespace

Ref<Storage> Storage::allocate(size_t nbytes, Device device) {
  if (device.type == DeviceType::CUDA)
    return Ref<Storage>(new Storage(cuda::allocate(device.index, nbytes), nbytes, device));
  return Ref<Storage>(new Storage(cpu_allocator().allocate(nbytes), nbytes, device));
}

Ref<Storage> Storage::wrap(void* data, size_t nbytes, Device device, std::function<void()> release) {
  Ref<Storage> storage(new Storage(data, nbytes, device));
  storage->release_ = std::move(release);
  return storage;
}

Storage::~Storage() {
  if (release_) release_();
  else if (device_.type == DeviceType::CUDA)
    cuda::deallocate(device_.index, data_);
  else cpu_allocator().deallocate(data_, nbytes_);
}

AllocatorStats cpu_allocator_stats() { return cpu_allocator().stats(); }
void reset_peak_bytes_in_use() { cpu_allocator().reset_peak(); }
void release_cached_memory() { cpu_allocator().release_all(); }
void set_cache_limit(size_t bytes) { cpu_allocator().set_limit(bytes); }

}  // namespace ef
