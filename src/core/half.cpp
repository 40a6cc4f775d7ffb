#include "eagerflow/core/half.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ef {

float float16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f)  // inf, or NaN made quiet (as F16C and PyTorch do)
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa ? 0x400000u | (mantissa << 13) : 0u));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal: shift the leading one into the implicit bit.
  int e = 113;
  while (!(mantissa & 0x400u)) {
    mantissa <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (static_cast<uint32_t>(e) << 23) | ((mantissa & 0x3ffu) << 13));
}

uint16_t float_to_float16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;   // NaN: the canonical quiet NaN, as PyTorch gives
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;  // ≥ 65520 rounds past 65504 to inf
  if (magnitude >= 0x38800000u) {                       // normal half (≥ 2^-14)
    const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
    return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
  }
  if (magnitude < 0x33000000u) return sign;  // ≤ 2^-25 (half the smallest subnormal) rounds to zero
  // Subnormal half: the value in units of 2^-24, rounded to nearest even.
  const uint32_t exponent = magnitude >> 23;  // 102 ... 112
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - exponent;  // 14 ... 24
  uint32_t result = significand >> shift;
  const uint32_t remainder = significand & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (result & 1u))) ++result;
  return sign | static_cast<uint16_t>(result);
}

uint16_t float_to_bfloat16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7fc0u);       // canonical NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);  // overflow carries into inf
}

void float16_to_float(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
#endif
  for (; i < n; ++i) out[i] = float16_to_float(in[i]);
}

void float_to_float16(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  // F16C keeps a NaN's payload; PyTorch gives the canonical quiet NaN, so NaN lanes are
  // replaced with it (sign kept).
  const __m256i canonical_nan = _mm256_set1_epi32(0x7e00);
  const __m256i sign_mask = _mm256_set1_epi32(static_cast<int>(0x80000000u));
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    if (_mm256_movemask_ps(is_nan) == 0) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
      continue;
    }
    const __m256i signs = _mm256_srli_epi32(_mm256_and_si256(_mm256_castps_si256(v), sign_mask), 16);
    const __m256i nan_bits = _mm256_or_si256(signs, canonical_nan);
    const __m256i widened = _mm256_cvtepu16_epi32(h);
    const __m256i fixed = _mm256_blendv_epi8(widened, nan_bits, _mm256_castps_si256(is_nan));
    const __m128i packed =
        _mm_packus_epi32(_mm256_castsi256_si128(fixed), _mm256_extracti128_si256(fixed, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), packed);
  }
#endif
  for (; i < n; ++i) out[i] = float_to_float16(in[i]);
}

void bfloat16_to_float(const uint16_t* in, float* out, size_t n) {
  uint32_t* bits = reinterpret_cast<uint32_t*>(out);
#pragma omp simd
  for (size_t i = 0; i < n; ++i) bits[i] = static_cast<uint32_t>(in[i]) << 16;
}

void float_to_bfloat16(const float* in, uint16_t* out, size_t n) {
  const uint32_t* bits = reinterpret_cast<const uint32_t*>(in);
  // float_to_bfloat16 without branches, so that it vectorizes.
#pragma omp simd
  for (size_t i = 0; i < n; ++i) {
    const uint32_t x = bits[i];
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    const uint32_t nan = ((x >> 16) & 0x8000u) | 0x7fc0u;
    out[i] = static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

}  // namespace ef
