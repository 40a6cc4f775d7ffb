// SumR: the reducer reduce_sum runs (src/ops/reduction/reduce.cpp), shared with
// fused_reduce_sum (src/ops/math/fused_reduce_sum.cpp), which must sum in exactly the
// same order to give the same bits. The driver is src/backends/cpu/reduce.h.
#pragma once

#include <cstdint>
#include <type_traits>

namespace ef::detail {

// Float sums and products accumulate in float64 (a float32 sum of 1e7 ones is exact);
// integers accumulate in the unsigned type, so overflow wraps instead of being UB.
// A 32-byte GCC vector of A (one AVX register), for accumulators held in registers.
template <class A> struct Vector32;
template <> struct Vector32<double> { typedef double type __attribute__((vector_size(32))); };
template <> struct Vector32<uint32_t> { typedef uint32_t type __attribute__((vector_size(32))); };
template <> struct Vector32<uint64_t> { typedef uint64_t type __attribute__((vector_size(32))); };

// Sum of n contiguous floats, accurate like a float64 sum but at nearly the speed of a
// float32 one: runs of 256 elements are summed in four float32 vectors (each lane adds
// just 8 values, so its rounding error stays near float32's epsilon), and every run's
// total is added in float64. Converting every element to float64 instead ran ~20%
// slower out of cache here.
inline double sum_floats(const float* p, int64_t n) {
  typedef float F8 __attribute__((vector_size(32)));
  constexpr int64_t kRun = 256;
  double acc = 0;
  int64_t i = 0;
  for (; i + kRun <= n; i += kRun) {
    F8 a0 = {}, a1 = {}, a2 = {}, a3 = {};
    for (int64_t k = i; k < i + kRun; k += 32) {
      F8 x0, x1, x2, x3;
      __builtin_memcpy(&x0, p + k, sizeof x0);  // unaligned vector loads
      __builtin_memcpy(&x1, p + k + 8, sizeof x1);
      __builtin_memcpy(&x2, p + k + 16, sizeof x2);
      __builtin_memcpy(&x3, p + k + 24, sizeof x3);
      a0 += x0;
      a1 += x1;
      a2 += x2;
      a3 += x3;
    }
    F8 t = (a0 + a1) + (a2 + a3);
    double run = 0;
    for (int j = 0; j < 8; ++j) run += static_cast<double>(t[j]);
    acc += run;
  }
  for (; i < n; ++i) acc += static_cast<double>(p[i]);
  return acc;
}

template <class T, bool = std::is_floating_point_v<T>>
struct WideOf { using type = double; };
template <class T>
struct WideOf<T, false> { using type = std::make_unsigned_t<T>; };
template <class T>
using Wide = typename WideOf<T>::type;

template <class T>
struct SumR {
  using Acc = Wide<T>;
  static Acc identity() { return 0; }
  static Acc row(const T* p, int64_t n, int64_t s) {
    Acc acc = 0;
    if constexpr (std::is_same_v<T, float>) {
      if (s == 1) return sum_floats(p, n);
    }
    if (s == 1) {
      // Four independent vector accumulators: one accumulator would make every
      // addition wait for the previous one, and the loop would run at the adder's
      // latency instead of at memory speed. GCC vector types keep them in registers.
      using V = typename Vector32<Acc>::type;
      constexpr int kWidth = static_cast<int>(sizeof(V) / sizeof(Acc));
      V v0 = {}, v1 = {}, v2 = {}, v3 = {};
      int64_t i = 0;
      for (; i + 4 * kWidth <= n; i += 4 * kWidth) {
        V x0, x1, x2, x3;
        for (int j = 0; j < kWidth; ++j) {
          x0[j] = static_cast<Acc>(p[i + j]);
          x1[j] = static_cast<Acc>(p[i + kWidth + j]);
          x2[j] = static_cast<Acc>(p[i + 2 * kWidth + j]);
          x3[j] = static_cast<Acc>(p[i + 3 * kWidth + j]);
        }
        v0 += x0;
        v1 += x1;
        v2 += x2;
        v3 += x3;
      }
      V total = (v0 + v1) + (v2 + v3);
      for (int j = 0; j < kWidth; ++j) acc += total[j];
      for (; i < n; ++i) acc += static_cast<Acc>(p[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) acc += static_cast<Acc>(p[i * s]);
    }
    return acc;
  }
  static Acc merge(Acc a, Acc b) { return a + b; }
  static void columns(Acc* __restrict acc, const T* __restrict p, int64_t n) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<Acc>(p[j]);
  }
  static T finish(Acc a) { return static_cast<T>(a); }
};

}  // namespace ef::detail
