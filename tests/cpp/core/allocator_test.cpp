// The caching CPU allocator (Note [buffer reuse]): freed buffers are reused, the cache
// can be emptied and bounded, and a live buffer is never handed out twice.
#include <set>

#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_values;

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
  EXPECT_ERROR(Storage::allocate(16, Device{DeviceType::CUDA, 0}), UnimplementedError, "CUDA:0");
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
