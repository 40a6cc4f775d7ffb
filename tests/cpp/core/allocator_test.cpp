// The caching CPU allocator (Note [buffer reuse]): freed buffers are reused, the cache
// can be emptied and bounded, and a live buffer is never handed out twice.
#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <thread>

#include "eagerflow/core/cuda.h"
#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_values;

constexpr size_t kMiB = size_t{1} << 20;

// A buffer whose every 4 KiB page holds a tag naming the buffer and the page: a
// buffer handed out twice, or overlapping another, shows as a wrong tag.
struct Tagged {
  Ref<Storage> storage;
  uint64_t id;
  Tagged(size_t nbytes, uint64_t id) : storage(Storage::allocate(nbytes)), id(id) {
    for (size_t page = 0; page * 4096 + 8 <= nbytes; ++page) {
      uint64_t tag = id << 32 | page;
      std::memcpy(static_cast<char*>(storage->data()) + page * 4096, &tag, 8);
    }
  }
  bool intact() const {
    for (size_t page = 0; page * 4096 + 8 <= storage->nbytes(); ++page) {
      uint64_t tag;
      std::memcpy(&tag, static_cast<const char*>(storage->data()) + page * 4096, 8);
      if (tag != (id << 32 | page)) return false;
    }
    return true;
  }
};

// Restores the default limit and an empty cache around each test, so counts start clean.
class Allocator : public ::testing::Test {
 protected:
  void SetUp() override { release_cached_memory(); }
  void TearDown() override {
    set_cache_limit(size_t{1} << 30);
    release_cached_memory();
  }
};

TEST_F(Allocator, FreedBufferIsReused) {
  AllocatorStats before = cpu_allocator_stats();
  void* first;
  {
    Ref<Storage> s = Storage::allocate(40000);
    first = s->data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);  // 64-byte aligned
  }
  EXPECT_GE(cpu_allocator_stats().bytes_cached, 40000u);
  Ref<Storage> again = Storage::allocate(40000);
  AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(after.allocations - before.allocations, 2u);
  EXPECT_EQ(after.cache_hits - before.cache_hits, 1u);
  EXPECT_GE(after.bytes_in_use, 40000u);
  EXPECT_GE(after.peak_bytes_in_use, after.bytes_in_use);
}

TEST_F(Allocator, TensorsReuseBuffersOfTheSameSize) {
  (void)ef::zeros({1000});  // allocated and freed at once
  uint64_t hits = cpu_allocator_stats().cache_hits;
  Tensor t = ef::zeros({1000});
  EXPECT_GT(cpu_allocator_stats().cache_hits, hits);  // at least the 4000-byte output
  expect_values(ef::add(t, 1.f), std::vector<double>(1000, 1.0));
}

TEST_F(Allocator, ReleaseCachedMemoryEmptiesTheCache) {
  { Ref<Storage> a = Storage::allocate(1 << 16), b = Storage::allocate(1 << 12); }
  EXPECT_GE(cpu_allocator_stats().bytes_cached, (1u << 16) + (1u << 12));
  release_cached_memory();
  EXPECT_EQ(cpu_allocator_stats().bytes_cached, 0u);
  uint64_t hits = cpu_allocator_stats().cache_hits;
  Ref<Storage> c = Storage::allocate(1 << 16);
  EXPECT_EQ(cpu_allocator_stats().cache_hits, hits);  // nothing left to reuse
}

TEST_F(Allocator, CacheLimitBoundsCachedBytes) {
  set_cache_limit(10000);
  {
    std::vector<Ref<Storage>> live;
    for (int i = 0; i < 8; ++i) live.push_back(Storage::allocate(4096));
  }
  EXPECT_LE(cpu_allocator_stats().bytes_cached, 10000u);
  EXPECT_GT(cpu_allocator_stats().bytes_cached, 0u);
  set_cache_limit(0);  // disables caching and drops what is cached
  EXPECT_EQ(cpu_allocator_stats().bytes_cached, 0u);
  { Ref<Storage> s = Storage::allocate(4096); }
  EXPECT_EQ(cpu_allocator_stats().bytes_cached, 0u);
}

TEST_F(Allocator, LiveBuffersAreNeverHandedOutTwice) {
  std::vector<Ref<Storage>> live;
  std::set<void*> seen;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 16; ++i) {
      live.push_back(Storage::allocate(static_cast<size_t>(1000 + 24 * (i % 4))));  // same size class
      EXPECT_TRUE(seen.insert(live.back()->data()).second) << "buffer handed out while still live";
    }
    // Free every other buffer; the survivors must not be returned by later requests.
    std::vector<Ref<Storage>> keep;
    for (size_t i = 0; i < live.size(); ++i) {
      if (i % 2) keep.push_back(live[i]);
      else seen.erase(live[i]->data());
    }
    live = std::move(keep);
  }
}

TEST_F(Allocator, FreedLargeBufferServesSmallerRequestsAndMergesBack) {
  void* big;
  { big = Storage::allocate(64 * kMiB)->data(); }  // freed at once
  AllocatorStats before = cpu_allocator_stats();
  Ref<Storage> a = Storage::allocate(16 * kMiB);
  Ref<Storage> b = Storage::allocate(30 * kMiB);
  EXPECT_EQ(a->data(), big);  // carved from the free 64 MiB
  EXPECT_EQ(b->data(), static_cast<char*>(big) + 16 * kMiB);
  AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.cache_hits - before.cache_hits, 2u);
  EXPECT_EQ(after.bytes_in_use - before.bytes_in_use, 46 * kMiB);
  EXPECT_EQ(before.bytes_cached - after.bytes_cached, 46 * kMiB);
  a = b = Ref<Storage>();  // the pieces merge with the free rest: 64 MiB in one piece again
  Ref<Storage> again = Storage::allocate(64 * kMiB);
  EXPECT_EQ(again->data(), big);
  EXPECT_EQ(cpu_allocator_stats().cache_hits - after.cache_hits, 1u);
}

TEST_F(Allocator, FootprintStaysAtThePeakOfBytesInUse) {
  // The autoencoder's pattern: buffers of two sizes, a quarter apart, that never fit
  // each other's free space whole. The cache must not grow past the peak of live bytes.
  const size_t small = 47 * kMiB, large = 4 * small;
  auto footprint = [] { return cpu_allocator_stats().bytes_in_use + cpu_allocator_stats().bytes_cached; };
  size_t peak = cpu_allocator_stats().bytes_in_use;
  auto check = [&] {
    peak = std::max(peak, cpu_allocator_stats().bytes_in_use);
    EXPECT_LE(footprint(), peak);
  };
  for (int iteration = 0; iteration < 3; ++iteration) {
    Tagged a(small, 1), b(small, 2);
    check();
    a.storage = Ref<Storage>();
    std::vector<Tagged> live;
    for (uint64_t i = 0; i < 3; ++i) {
      live.emplace_back(large, 10 + i);
      check();
    }
    for (const Tagged& t : live) EXPECT_TRUE(t.intact());
    EXPECT_TRUE(b.intact());
    live.clear();
    Tagged c(small, 3), d(small, 4);
    check();
    EXPECT_TRUE(c.intact() && d.intact() && b.intact());
  }
  EXPECT_GE(peak, 3 * large + small);
}

TEST_F(Allocator, LiveBuffersOfRandomSizesNeverOverlap) {
  std::mt19937 rng(7);
  std::vector<Tagged> live;
  uint64_t next_id = 1;
  for (int step = 0; step < 300; ++step) {
    if (live.size() < 12 && rng() % 3 != 0) {
      size_t nbytes = rng() % 2 ? 1 + rng() % (2 * kMiB) : 4 * kMiB + rng() % (24 * kMiB);
      live.emplace_back(nbytes, next_id++);
    } else if (!live.empty()) {
      size_t i = rng() % live.size();
      ASSERT_TRUE(live[i].intact()) << "buffer " << live[i].id << " was overwritten";
      std::swap(live[i], live.back());
      live.pop_back();
    }
    if (step % 25 == 0) {
      for (const Tagged& t : live) ASSERT_TRUE(t.intact()) << "buffer " << t.id << " was overwritten";
      EXPECT_LE(cpu_allocator_stats().bytes_cached, size_t{1} << 30);
    }
  }
  for (const Tagged& t : live) EXPECT_TRUE(t.intact());
}

TEST_F(Allocator, StatsAddUp) {
  const AllocatorStats start = cpu_allocator_stats();
  {
    Ref<Storage> large = Storage::allocate(9 * kMiB), small = Storage::allocate(3000);
    const AllocatorStats during = cpu_allocator_stats();
    EXPECT_EQ(during.allocations - start.allocations, 2u);
    EXPECT_GE(during.bytes_in_use - start.bytes_in_use, 9 * kMiB + 3000);
    EXPECT_LE(during.bytes_in_use - start.bytes_in_use, 10 * kMiB + 4096);  // 2 MiB units, 25% classes
    EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  }
  const AllocatorStats end = cpu_allocator_stats();
  EXPECT_EQ(end.bytes_in_use, start.bytes_in_use);
  EXPECT_EQ(end.bytes_cached - start.bytes_cached, 10 * kMiB + 3072);
  reset_peak_bytes_in_use();
  EXPECT_EQ(cpu_allocator_stats().peak_bytes_in_use, end.bytes_in_use);
}

TEST_F(Allocator, LimitsAndReleaseReturnLargeBuffers) {
  {
    std::vector<Ref<Storage>> live;
    for (int i = 0; i < 3; ++i) live.push_back(Storage::allocate(8 * kMiB));
  }
  EXPECT_GE(cpu_allocator_stats().bytes_cached, 24 * kMiB);
  release_cached_memory();
  EXPECT_EQ(cpu_allocator_stats().bytes_cached, 0u);

  set_cache_limit(20 * kMiB);
  { Ref<Storage> a = Storage::allocate(8 * kMiB); }
  EXPECT_EQ(cpu_allocator_stats().bytes_cached, 8 * kMiB);  // within the limit: kept
  {
    std::vector<Ref<Storage>> live;
    for (int i = 0; i < 3; ++i) live.push_back(Storage::allocate(8 * kMiB));
  }
  EXPECT_LE(cpu_allocator_stats().bytes_cached, 20 * kMiB);

  set_cache_limit(0);  // no caching: every freed large buffer goes back at once
  {
    Ref<Storage> a = Storage::allocate(8 * kMiB), b = Storage::allocate(12 * kMiB);
    a = Ref<Storage>();
    EXPECT_EQ(cpu_allocator_stats().bytes_cached, 0u);
  }
  EXPECT_EQ(cpu_allocator_stats().bytes_cached, 0u);
}

TEST_F(Allocator, ThreadsAllocatingAndFreeingAtOnce) {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      std::mt19937 rng(t);
      std::vector<Tagged> live;
      for (int step = 0; step < 400; ++step) {
        if (live.size() < 6 && rng() % 2) {
          size_t nbytes = rng() % 4 ? 1 + rng() % 20000 : 4 * kMiB + rng() % (8 * kMiB);
          live.emplace_back(nbytes, uint64_t(t) << 16 | uint64_t(step));
        } else if (!live.empty()) {
          size_t i = rng() % live.size();
          failures[t] += !live[i].intact();
          std::swap(live[i], live.back());
          live.pop_back();
        }
      }
      for (const Tagged& b : live) failures[t] += !b.intact();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST_F(Allocator, ViewsKeepTheirStorageAlive) {
  Ref<Storage> s = Storage::allocate(256);
  Ref<Storage> shared = s;  // a second reference, as a view holds
  void* p = s->data();
  s = Ref<Storage>();
  Ref<Storage> other = Storage::allocate(256);
  EXPECT_NE(other->data(), p);
  EXPECT_EQ(shared->data(), p);
}

TEST_F(Allocator, ZeroBytesAndNonCpuDevices) {
  Ref<Storage> empty = Storage::allocate(0);
  EXPECT_NE(empty->data(), nullptr);
  EXPECT_EQ(empty->nbytes(), 0u);
  if (!cuda::is_available())
    EXPECT_ERROR(Storage::allocate(16, Device{DeviceType::CUDA, 0}), UnimplementedError, "CUDA:0",
                 cuda::unavailable_reason());
}

TEST_F(Allocator, ImpossibleRequestsAreResourceExhausted) {
  const AllocatorStats before = cpu_allocator_stats();
  EXPECT_ERROR(Storage::allocate(SIZE_MAX), ResourceExhaustedError, "allocator", std::to_string(SIZE_MAX));
  EXPECT_ERROR(Storage::allocate(size_t{1} << 60), ResourceExhaustedError, "allocator");  // no such memory
  EXPECT_EQ(cpu_allocator_stats().bytes_in_use, before.bytes_in_use);
}

TEST(Storage, WrappedMemoryIsReleasedByItsOwnerWhenTheLastTensorGoes) {
  std::vector<float> owned = {1, 2, 3, 4};
  int releases = 0;
  {
    Ref<Storage> storage = Storage::wrap(owned.data(), owned.size() * sizeof(float), kCPU, [&] { ++releases; });
    Ref<TensorImpl> impl(new TensorImpl());
    impl->shape = Shape{2, 2};
    impl->strides = {2, 1};
    impl->storage = storage;
    Tensor t(impl);
    storage = Ref<Storage>();
    Tensor view = transpose(t);  // shares the storage
    t = Tensor();
    expect_values(view, {1, 3, 2, 4});
    EXPECT_EQ(releases, 0);
  }
  EXPECT_EQ(releases, 1);
}

}  // namespace
}  // namespace ef
