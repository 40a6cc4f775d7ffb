// float16 (IEEE 754 binary16) and bfloat16 (the top half of a float32): storage types
// and their conversions to and from float32.
//
// Note [half-precision dtypes]: eagerflow stores Float16 and BFloat16 tensors in two
// bytes per element and computes on them in float32, as PyTorch's CPU kernels do: the
// dispatcher widens half inputs to float32, runs the op's float32 kernel, and rounds
// the float32 outputs to the half dtype (run_kernel in src/runtime/dispatch.cpp). So
// every op accepts both dtypes, reductions and matmuls accumulate in float32, and each
// op rounds once, to nearest even. No kernel is instantiated for these types:
// dispatch_dtype refuses them, so a kernel reached with a half tensor fails loudly
// instead of reading two-byte elements as four-byte ones.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace ef {

// Two-byte storage types. They convert explicitly to and from float; arithmetic on
// them is done in float32 by the caller.
struct float16_t {
  uint16_t bits = 0;
  static constexpr float16_t from_bits(uint16_t b) { return float16_t{b}; }
  explicit operator float() const;
};
struct bfloat16_t {
  uint16_t bits = 0;
  static constexpr bfloat16_t from_bits(uint16_t b) { return bfloat16_t{b}; }
  explicit operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
};

// Exact: every float16 and bfloat16 value is a float32 value (a float16 NaN comes back
// quiet, its payload kept, as F16C and PyTorch give it).
float float16_to_float(uint16_t bits);
inline float bfloat16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

// Round to nearest, ties to even (IEEE 754's default): values beyond the largest finite
// half round to ±inf, tiny ones to subnormals or ±0; a NaN becomes
// the canonical quiet NaN of its sign (payloads are not kept, as in PyTorch).
uint16_t float_to_float16(float value);
uint16_t float_to_bfloat16(float value);

inline float16_t::operator float() const { return float16_to_float(bits); }
inline float16_t to_float16(float v) { return float16_t{float_to_float16(v)}; }
inline bfloat16_t to_bfloat16(float v) { return bfloat16_t{float_to_bfloat16(v)}; }

// Bulk conversions of n contiguous elements (vectorized where the CPU has F16C).
void float16_to_float(const uint16_t* in, float* out, size_t n);
void float_to_float16(const float* in, uint16_t* out, size_t n);
void bfloat16_to_float(const uint16_t* in, float* out, size_t n);
void float_to_bfloat16(const float* in, uint16_t* out, size_t n);

}  // namespace ef
