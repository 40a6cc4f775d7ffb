// The CPU driver shared by random kernels: fills an output from Philox blocks so that
// element i depends only on (key, stream, i) — never on the thread count, because
// blocks, not threads, are the unit of work (Note [random seeds]).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/philox.h"
#include "eagerflow/core/threading.h"

namespace ef::detail {

// Rough cost of one Philox block plus its transform, for parallel_for.
inline constexpr double kPhiloxBlockNs = 25.0;

// out[PerBlock * j + l] = values produced by gen(words_of_block_j, j, values[PerBlock])
// for every block j, where block j is Philox at counter index j of `stream`.
template <int PerBlock, class T, class Gen>
void fill_philox_blocks(T* out, int64_t n, uint64_t key, uint64_t stream, const Gen& gen) {
  const int64_t blocks = n / PerBlock + (n % PerBlock != 0);
  parallel_for(blocks, kPhiloxBlockNs, [&](int64_t begin, int64_t end) {
    T values[PerBlock];
    for (int64_t j = begin; j < end; ++j) {
      gen(philox::block(key, static_cast<uint64_t>(j), stream), j, values);
      const int64_t first = j * PerBlock;
      const int64_t count = std::min<int64_t>(PerBlock, n - first);
      for (int64_t l = 0; l < count; ++l) out[first + l] = values[l];
    }
  });
}

}  // namespace ef::detail
