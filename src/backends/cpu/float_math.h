// Our own float32 exp and tanh (Note [vector math] in vector_math.h says why), and
// vm::exp / vm::exp_nonpositive / vm::tanh, which pick them for float and keep libm for
// double:
//   struct TanhFn { template <class T> T operator()(T a) const { return cpu::vm::tanh(a); } };
// Every function here is straight-line code (selects, no branches, no calls), so GCC
// vectorizes the `#pragma omp simd` row loops that call them (backends/cpu/elementwise.h),
// 8 floats per AVX2 instruction. Accuracy, measured against the double-precision libm
// result by tests/cpp/ops/float_math_test.cpp: within 2 ulp over the whole float range.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "backends/cpu/vector_math.h"

namespace ef::cpu::vm {

namespace detail {

// a * b + c with one rounding where the target has FMA (more accurate, and as cheap as
// a multiply); a multiply and an add otherwise.
[[gnu::always_inline]] inline float mul_add(float a, float b, float c) {
#ifdef __FMA__
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// c ? a : b, computed with bit masks: GCC would otherwise move the computation of a or
// b into a branch (each is used only there), and then, since float operations may trap
// (-ftrapping-math), refuse to turn the branch back into a select: no vectorization.
[[gnu::always_inline]] inline float select(bool c, float a, float b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);  // all ones when c
  return std::bit_cast<float>((std::bit_cast<uint32_t>(a) & mask) | (std::bit_cast<uint32_t>(b) & ~mask));
}

// 2^k for an integer k in [-126, 127], built from its exponent bits.
[[gnu::always_inline]] inline float pow2i(int32_t k) {
  return std::bit_cast<float>((static_cast<uint32_t>(k) + 127u) << 23);
}

// Range reduction for e^x = 2^n e^r: t = x / ln 2 + 1.5 * 2^23. The sum has no fraction
// bits left, so it holds n = round(x / ln 2) (to nearest even, for |x / ln 2| < 2^22):
// n = t - 1.5 * 2^23 as a float, and as an integer in the low bits of t's pattern
// (shift_n), which needs no float -> int conversion (undefined for NaN).
inline constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23
[[gnu::always_inline]] inline float shift_by_log2e(float x) {
  return mul_add(x, 1.44269504088896341f, kShifter);
}
[[gnu::always_inline]] inline int32_t shift_n(float t) {
  return static_cast<int32_t>(std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(kShifter));
}

// e^r - 1 for r = x - n ln 2 in [-ln2/2, ln2/2]. Cody-Waite reduction with Cephes
// expf's split of ln 2 (ln2_hi has 9 significant bits, so n * ln2_hi is exact for
// |n| < 2^15 and x - n * ln2_hi loses nothing), then r + r^2 P(r) with P of degree 4:
// minimax coefficients for the relative error of e^r on that interval (fitted by
// Lawson's reweighted least squares; 3.1e-9 = 0.05 ulp). Cephes' degree-5 P is one
// multiply-add more than float needs. Callers add the 1 within their scaling.
[[gnu::always_inline]] inline float expm1_reduced(float x, float n) {
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  float r = mul_add(n, -kLn2Hi, x);
  r = mul_add(n, -kLn2Lo, r);
  float p = 1.3814612757e-3f;
  p = mul_add(p, r, 8.3687100559e-3f);
  p = mul_add(p, r, 4.1668388993e-2f);
  p = mul_add(p, r, 1.6666521132e-1f);
  p = mul_add(p, r, 4.9999994040e-1f);
  return mul_add(p, r * r, r);
}

// (1 + q) 2^n = e^x for t = shift_by_log2e(x), where the callers' clamps keep n within
// [-150, 150]. 2^n is not a float for n outside [-126, 127], so it is applied in two
// steps of about 2^(n/2) (normal floats): the first is exact, the second rounds once,
// so results round correctly into the subnormal range and overflow to +inf.
[[gnu::always_inline]] inline float exp_scaled(float x, float t) {
  const float q = expm1_reduced(x, t - kShifter);
  const int32_t n = shift_n(t);
  const int32_t n1 = n >> 1;  // floor(n / 2) (C++20 shifts are arithmetic)
  const float s1 = pow2i(n1);
  return mul_add(q, s1, s1) * pow2i(n - n1);
}

}  // namespace detail

// e^x for float32, within 2 ulp; +inf above ~88.72, 0 below ~-103.97 (through the
// subnormal results), NaN for NaN.
[[gnu::always_inline]] inline float exp(float x) {
  using namespace detail;
  // e^-104 rounds to 0, so clamping x there changes no result (NaN fails the comparison
  // and flows through to the result). Above, n is clamped to 150 instead, by an integer
  // min on t's bit pattern (cheaper than a float compare and select; positive floats
  // order like their patterns): e^x overflows for n >= 129 anyway, and r = x - 150 ln 2
  // is then >= 0, so 1 + q >= 1 and (1 + q) 2^150 is +inf, also for x = +inf.
  const float xc = select(x < -104.0f, -104.0f, x);
  constexpr int32_t kMaxT = std::bit_cast<int32_t>(kShifter + 150.0f);
  const float t = std::bit_cast<float>(std::min(std::bit_cast<int32_t>(shift_by_log2e(xc)), kMaxT));
  return exp_scaled(xc, t);
}

// e^x for x <= 0 (or NaN), as exp but without its upper clamp, which would lengthen the
// chain of dependent operations: sigmoid's e^-|x| measured 10% faster with it.
[[gnu::always_inline]] inline float exp_nonpositive(float x) {
  using namespace detail;
  const float xc = select(x < -104.0f, -104.0f, x);  // as in exp
  return exp_scaled(xc, shift_by_log2e(xc));
}

// tanh(x) for float32, within 2 ulp; odd (tanh(-0) = -0), +-1 for large |x|, NaN for NaN.
// tanh|x| = -u / (u + 2) for u = e^-2|x| - 1 in (-1, 0]: one formula for all x (no
// branch to select, and one exp), with no cancellation near 0, where expm1_reduced
// gives u to full relative precision. u and u + 2 are both rounded once from the same
// (1 + q) 2^n (u + 2 computed from u would round twice: 2.5 ulp instead of 1.9).
[[gnu::always_inline]] inline float tanh(float x) {
  using namespace detail;
  const float a = std::fabs(x);
  // tanh(20) rounds to 1, so 2|x| is clamped to 40 (e^-40 > 2^-58: one 2^n scaling
  // suffices). The clamp compares bit patterns as integers, which order like the
  // floats for a >= 0: cheaper than a float compare and select. (NaN becomes 40 here.)
  const int32_t a2_bits = std::min(std::bit_cast<int32_t>(a + a), std::bit_cast<int32_t>(40.0f));
  const float m = -std::bit_cast<float>(a2_bits);  // -2|x|
  const float t = shift_by_log2e(m);
  const float q = expm1_reduced(m, t - kShifter);
  const float s = pow2i(shift_n(t));            // e^-2|x| = (1 + q) s, s = 2^n <= 1
  const float u = mul_add(q, s, s - 1.0f);      // s - 1 and s + 1 are exact for n >= -24;
  const float th = u / mul_add(q, s, s + 1.0f);  // below, u rounds to -1 and th to -1 anyway
  // copysign takes th's magnitude and x's sign (-0 included); NaN is put back.
  return select(x != x, x, std::copysign(th, x));
}

// Double precision keeps libm (libmvec's vector versions inside simd loops).
inline double exp(double x) { return std::exp(x); }
inline double exp_nonpositive(double x) { return std::exp(x); }
inline double tanh(double x) { return std::tanh(x); }

}  // namespace ef::cpu::vm
