// BlockPool: the large buffers of the CPU caching allocator (Note [buffer reuse] in
// include/eagerflow/core/allocator.h). Internal to the library; not thread safe (the
// allocator calls it under its mutex).
//
// Memory comes from anonymous mappings of the system in units of 2 MiB (aligned, with
// transparent huge pages) and is carved into blocks. A request takes the smallest free
// block that fits (best fit) and leaves the rest free; a block given back merges with
// the free blocks next to it in the address space. When nothing fits, `map` makes a new
// block and can fill it with the pages of free blocks elsewhere: mremap moves them
// (page tables only: no copy, no page fault, no zeroing), so scattered free memory
// serves a large request without the process growing.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <utility>

namespace ef::detail {

class BlockPool {
 public:
  static constexpr size_t kUnit = size_t{2} << 20;  // every block is a multiple of this

  BlockPool() = default;
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A free block of `bytes` (a multiple of kUnit), now in use; nullptr when none fits.
  void* take(size_t bytes);
  // A new block of `bytes` (a multiple of kUnit) in use, whose first pages come from
  // free blocks (smallest first) up to `recycle` bytes: those leave the pool. Returns
  // nullptr when the system has no memory; `*recycled` gets the bytes moved.
  void* map(size_t bytes, size_t recycle, size_t* recycled);
  // Frees the in-use block at `p` and merges it with free neighbours; returns its size.
  size_t give_back(void* p);
  // Bytes of the in-use block at `p`.
  size_t block_size(void* p) const;
  // Returns free blocks to the system, smallest first (the large ones serve the most
  // requests), until `at_least` bytes are returned or none is left; returns the bytes
  // returned.
  size_t unmap_free(size_t at_least);

  size_t free_bytes() const { return free_bytes_; }
  size_t mapped_bytes() const { return mapped_bytes_; }

 private:
  struct Block {
    size_t size;
    bool free;
  };
  using BlockIt = std::map<char*, Block>::iterator;
  void mark_free(BlockIt it);
  void unmark_free(BlockIt it);
  // Moves the pages at [from, from + n) to [to, to + n), which replaces them.
  static void move_pages(char* from, char* to, size_t n);

  std::map<char*, Block> blocks_;            // every mapped block, by address
  std::set<std::pair<size_t, char*>> free_;  // free blocks by (size, address)
  size_t free_bytes_ = 0;
  size_t mapped_bytes_ = 0;
};

}  // namespace ef::detail
