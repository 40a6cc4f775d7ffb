// The CPU driver shared by random kernels: fills an output from Philox blocks so that
// element i depends only on (key, stream, i) — never on the thread count, because
// blocks, not threads, are the unit of work (Note [random seeds]).
//
// Blocks are generated kBatch at a time in structure-of-arrays form so that the
// Philox rounds and the transforms (log, sin, cos, scaling) vectorize across blocks.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backends/cpu/vector_math.h"
#include "core/philox.h"
#include "eagerflow/core/threading.h"

namespace ef::detail {

inline constexpr int kPhiloxBatch = 64;

// Words of kPhiloxBatch consecutive blocks: word[l][b] is word l of block b.
struct PhiloxWords {
  alignas(64) uint32_t word[4][kPhiloxBatch];
};

// Blocks index0 .. index0 + kPhiloxBatch - 1 of (key, stream); lane by lane equal to
// philox::block(key, index, stream), which is checked against the published vectors.
inline void philox_batch(uint64_t key, uint64_t index0, uint64_t stream, PhiloxWords& out) {
  uint32_t* __restrict c0 = out.word[0];
  uint32_t* __restrict c1 = out.word[1];
  uint32_t* __restrict c2 = out.word[2];
  uint32_t* __restrict c3 = out.word[3];
  for (int b = 0; b < kPhiloxBatch; ++b) {
    const uint64_t index = index0 + static_cast<uint64_t>(b);
    c0[b] = static_cast<uint32_t>(index);
    c1[b] = static_cast<uint32_t>(index >> 32);
    c2[b] = static_cast<uint32_t>(stream);
    c3[b] = static_cast<uint32_t>(stream >> 32);
  }
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int r = 0; r < 10; ++r) {
    if (r > 0) k0 += philox::kWeyl0, k1 += philox::kWeyl1;
    // (No simd pragma: -O3 vectorizes this loop anyway, and tests include this header
    // without -fopenmp-simd.)
    for (int b = 0; b < kPhiloxBatch; ++b) {
      const uint64_t p0 = static_cast<uint64_t>(philox::kMul0) * c0[b];
      const uint64_t p1 = static_cast<uint64_t>(philox::kMul1) * c2[b];
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[b] ^ k0;
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[b] ^ k1;
      c1[b] = static_cast<uint32_t>(p1);
      c3[b] = static_cast<uint32_t>(p0);
      c0[b] = n0;
      c2[b] = n2;
    }
  }
}

// Rough cost of one Philox block plus its transform, for parallel_for.
inline constexpr double kPhiloxBlockNs = 10.0;

// Fills out[0, n): PerBlock values per block. transform(words, first_block, values)
// turns a batch of blocks into values[PerBlock * b + l] (value l of block b).
template <int PerBlock, class T, class Transform>
void fill_philox_blocks(T* out, int64_t n, uint64_t key, uint64_t stream, const Transform& transform) {
  constexpr int64_t kValuesPerBatch = int64_t{PerBlock} * kPhiloxBatch;
  const int64_t batches = n / kValuesPerBatch + (n % kValuesPerBatch != 0);
  parallel_for(batches, kPhiloxBlockNs * kPhiloxBatch, [&](int64_t begin, int64_t end) {
    PhiloxWords words;
    alignas(64) T values[kValuesPerBatch];
    for (int64_t batch = begin; batch < end; ++batch) {
      const uint64_t first_block = static_cast<uint64_t>(batch) * kPhiloxBatch;
      philox_batch(key, first_block, stream, words);
      transform(words, first_block, values);
      const int64_t first = batch * kValuesPerBatch;
      std::copy_n(values, std::min(kValuesPerBatch, n - first), out + first);
    }
  });
}

}  // namespace ef::detail
