// BlockPool, the large-buffer half of the CPU allocator (src/core/block_pool.h): best
// fit with splitting, merging of free neighbours, pages of free blocks recycled into a
// new block, and memory given back to the system.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/block_pool.h"

namespace ef::detail {
namespace {

constexpr size_t kUnit = BlockPool::kUnit;

// Writes `tag` at the start of every unit of [p, p + bytes).
void tag_units(void* p, size_t bytes, uint64_t tag) {
  for (size_t offset = 0; offset < bytes; offset += kUnit) std::memcpy(static_cast<char*>(p) + offset, &tag, 8);
}

std::vector<uint64_t> unit_tags(void* p, size_t bytes) {
  std::vector<uint64_t> tags(bytes / kUnit);
  for (size_t i = 0; i < tags.size(); ++i) std::memcpy(&tags[i], static_cast<char*>(p) + i * kUnit, 8);
  return tags;
}

// Returns everything to the system at the end of a test.
struct Pool : BlockPool {
  ~Pool() { unmap_free(SIZE_MAX); }
};

TEST(BlockPool, FreedBlockServesSmallerRequestsAndMergesBack) {
  Pool pool;
  size_t recycled;
  char* big = static_cast<char*>(pool.map(8 * kUnit, 0, &recycled));
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big) % kUnit, 0u);  // huge-page aligned
  EXPECT_EQ(pool.take(kUnit), nullptr);                      // nothing free yet
  EXPECT_EQ(pool.give_back(big), 8 * kUnit);
  EXPECT_EQ(pool.free_bytes(), 8 * kUnit);

  // Best fit splits the free block: the pieces come from its start, in order.
  void* a = pool.take(2 * kUnit);
  void* b = pool.take(3 * kUnit);
  EXPECT_EQ(a, big);
  EXPECT_EQ(b, big + 2 * kUnit);
  EXPECT_EQ(pool.block_size(b), 3 * kUnit);
  EXPECT_EQ(pool.free_bytes(), 3 * kUnit);
  EXPECT_EQ(pool.take(4 * kUnit), nullptr);  // 3 units left: too small

  // Given back in either order, the pieces merge into the whole block again.
  pool.give_back(a);
  EXPECT_EQ(pool.take(4 * kUnit), nullptr);  // 2 free units, 3 in use, 3 free: not adjacent
  pool.give_back(b);
  EXPECT_EQ(pool.take(8 * kUnit), big);
  EXPECT_EQ(pool.free_bytes(), 0u);
  EXPECT_EQ(pool.mapped_bytes(), 8 * kUnit);
  pool.give_back(big);
}

TEST(BlockPool, BestFitPicksTheSmallestFreeBlockThatFits) {
  Pool pool;
  size_t recycled;
  std::vector<void*> blocks, keep;
  for (size_t units : {6, 2, 4}) {
    blocks.push_back(pool.map(units * kUnit, 0, &recycled));
    keep.push_back(pool.map(kUnit, 0, &recycled));  // in use between them: no merging
  }
  for (void* p : blocks) pool.give_back(p);
  void* p = pool.take(3 * kUnit);
  EXPECT_EQ(p, blocks[2]);  // the 4-unit block, not the 6-unit one
  EXPECT_EQ(pool.take(5 * kUnit), blocks[0]);
  EXPECT_EQ(pool.take(2 * kUnit), blocks[1]);
  EXPECT_EQ(pool.free_bytes(), 2 * kUnit);  // one unit left of each split block
  for (void* q : {p, blocks[0], blocks[1]}) pool.give_back(q);
  for (void* q : keep) pool.give_back(q);
  pool.unmap_free(SIZE_MAX);
  EXPECT_EQ(pool.mapped_bytes(), 0u);
}

TEST(BlockPool, NewBlockIsBuiltFromThePagesOfFreeBlocks) {
  Pool pool;
  size_t recycled;
  // Three free blocks that cannot serve a 6-unit request, however they lie.
  std::vector<char*> blocks, keep;
  for (int i = 0; i < 3; ++i) {
    blocks.push_back(static_cast<char*>(pool.map(2 * kUnit, 0, &recycled)));
    keep.push_back(static_cast<char*>(pool.map(kUnit, 0, &recycled)));  // separates them
  }
  std::vector<uint64_t> tags;
  for (int i = 0; i < 3; ++i) {
    tag_units(blocks[i], kUnit, 100 + 2 * i);
    tag_units(blocks[i] + kUnit, kUnit, 101 + 2 * i);
    tags.insert(tags.end(), {uint64_t(100 + 2 * i), uint64_t(101 + 2 * i)});
    pool.give_back(blocks[i]);
  }
  ASSERT_EQ(pool.take(6 * kUnit), nullptr);
  ASSERT_EQ(pool.free_bytes(), 6 * kUnit);

  // Recycling 4 units: 4 of the new block's units are old pages, 2 are fresh.
  char* fresh = static_cast<char*>(pool.map(6 * kUnit, 4 * kUnit, &recycled));
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(recycled, 4 * kUnit);
  EXPECT_EQ(pool.free_bytes(), 2 * kUnit);
  EXPECT_EQ(pool.mapped_bytes(), 3 * kUnit + 6 * kUnit + 2 * kUnit);
  std::vector<uint64_t> got = unit_tags(fresh, 6 * kUnit);
#ifdef __linux__
  // The pages moved with their contents (mremap): no copy and no fresh zero pages.
  std::vector<uint64_t> moved(got.begin(), got.begin() + 4);
  for (uint64_t tag : moved) EXPECT_NE(std::find(tags.begin(), tags.end(), tag), tags.end()) << tag;
  std::sort(moved.begin(), moved.end());
  EXPECT_EQ(std::unique(moved.begin(), moved.end()), moved.end());
#endif
  EXPECT_EQ(got[4], 0u);  // fresh memory
  EXPECT_EQ(got[5], 0u);

  // The remaining free unit-pairs still serve requests, and the new block is usable.
  std::memset(fresh, 7, 6 * kUnit);
  pool.give_back(fresh);
  for (char* p : keep) pool.give_back(p);
  EXPECT_EQ(pool.free_bytes(), pool.mapped_bytes());
  void* again = pool.take(6 * kUnit);
  EXPECT_NE(again, nullptr);
  pool.give_back(again);
}

TEST(BlockPool, UnmapFreeReturnsSmallestBlocksFirst) {
  Pool pool;
  size_t recycled;
  std::vector<void*> blocks, keep;
  for (size_t units : {4, 1, 2}) {
    blocks.push_back(pool.map(units * kUnit, 0, &recycled));
    keep.push_back(pool.map(kUnit, 0, &recycled));  // in use between them: no merging
  }
  for (void* p : blocks) pool.give_back(p);
  EXPECT_EQ(pool.free_bytes(), 7 * kUnit);
  EXPECT_EQ(pool.unmap_free(kUnit + 1), 3 * kUnit);  // the 1-unit block, then the 2-unit one
  EXPECT_EQ(pool.free_bytes(), 4 * kUnit);
  EXPECT_EQ(pool.mapped_bytes(), 7 * kUnit);
  EXPECT_EQ(pool.take(4 * kUnit), blocks[0]);  // the largest stayed
  EXPECT_EQ(pool.block_size(keep[1]), kUnit);
  pool.give_back(blocks[0]);
  for (void* p : keep) pool.give_back(p);
  EXPECT_EQ(pool.unmap_free(SIZE_MAX), 7 * kUnit);
  EXPECT_EQ(pool.mapped_bytes(), 0u);
  EXPECT_EQ(pool.free_bytes(), 0u);
}

}  // namespace
}  // namespace ef::detail
