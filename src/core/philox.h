// Philox4x32-10: the counter-based generator of Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3" (SC'11), as used by TensorFlow, JAX and cuRAND.
//
// A counter-based generator is a pure function (key, counter) -> 4 random words, so
// any element of a random tensor can be computed independently of every other: the
// output does not depend on how work is split across threads (or, later, GPU
// blocks). Verified against the Random123 known-answer vectors in
// tests/cpp/ops/random_test.cpp.
//
// Header-only and free of eagerflow dependencies so kernels and tests can use it.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace ef::philox {

using Counter = std::array<uint32_t, 4>;
using Key = std::array<uint32_t, 2>;

inline constexpr uint32_t kMul0 = 0xD2511F53u;
inline constexpr uint32_t kMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
inline constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

// One Philox round: two 32x32→64 multiplies mix the counter words with the key.
inline Counter round(const Counter& c, const Key& k) {
  const uint64_t p0 = static_cast<uint64_t>(kMul0) * c[0];
  const uint64_t p1 = static_cast<uint64_t>(kMul1) * c[2];
  const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
  const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

// The 10-round bijection of `counter` under `key`.
inline Counter philox4x32_10(Counter c, Key k) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {  // the key schedule bumps the key between rounds
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    c = round(c, k);
  }
  return c;
}

// The block of 4 words at 64-bit position `index` of the stream (key, `stream`):
// counter = (index lo, index hi, stream lo, stream hi).
inline Counter block(uint64_t key, uint64_t index, uint64_t stream = 0) {
  return philox4x32_10({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
                        static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)},
                       {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)});
}

// A uniform float in [0, 1) from the low 23 bits of `x` (exactly representable
// values, the method of TensorFlow's Uint32ToFloat).
inline float uint32_to_float(uint32_t x) {
  return static_cast<float>(x & 0x7FFFFFu) * (1.0f / 8388608.0f);
}
// A uniform double in [0, 1) from 52 bits of two words: the mantissa of a double in
// [1, 2), minus 1 (exact; and, unlike a uint64 → double conversion, it vectorizes).
inline double uint64_to_double(uint32_t lo, uint32_t hi) {
  const uint64_t bits = (static_cast<uint64_t>(hi) << 32 | lo) & ((uint64_t{1} << 52) - 1);
  return std::bit_cast<double>(bits | 0x3FF0000000000000ull) - 1.0;
}

}  // namespace ef::philox
