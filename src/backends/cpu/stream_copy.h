// stream_copy: copies bytes to memory that will not be read again soon with
// non-temporal stores, which skip the cache and the read-for-ownership a normal store
// of a cache line costs: a large write-once output moves 2 bytes over the memory bus
// per byte instead of 3 (what glibc's memcpy does for large copies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace ef::cpu {

// Outputs larger than this (in bytes, all together) are written with stream_copy: they
// cannot stay in the last-level cache anyway.
inline constexpr int64_t kStreamingStoreBytes = int64_t{16} << 20;

// Copies `bytes` from src to dst; dst should be 32-byte aligned (the head that is not
// is copied normally). Call stream_fence() before other threads read dst.
inline void stream_copy(std::byte* dst, const std::byte* src, size_t bytes) {
#if defined(__AVX__)
  size_t head = (32 - reinterpret_cast<uintptr_t>(dst) % 32) % 32;
  if (head > bytes) head = bytes;
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 32 <= bytes; i += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
  std::memcpy(dst + i, src + i, bytes - i);
#else
  std::memcpy(dst, src, bytes);
#endif
}

// Orders earlier stream_copy stores before later stores (end of a parallel chunk).
inline void stream_fence() {
#if defined(__AVX__)
  _mm_sfence();
#endif
}

}  // namespace ef::cpu
