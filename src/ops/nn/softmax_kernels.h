// Row kernels shared by softmax, log_softmax and the softmax cross-entropy losses.
// A tensor is viewed as [outer, n, inner] around the reduced axis; rows (inner == 1)
// are contiguous and vectorize directly, other axes process `inner` columns side by
// side so the inner loops still run over contiguous memory. Every kernel subtracts
// the row maximum before exp (no overflow for logits of 1000 or more).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "backends/cpu/vector_math.h"
#include "eagerflow/core/shape.h"

namespace ef::detail {

struct AxisGeometry {
  int64_t outer = 1, n = 1, inner = 1;
};

inline AxisGeometry axis_geometry(const Shape& shape, int axis) {
  AxisGeometry g;
  for (int d = 0; d < shape.rank(); ++d) {
    if (d < axis) g.outer *= shape[d];
    else if (d == axis) g.n = shape[d];
    else g.inner *= shape[d];
  }
  return g;
}

// Maximum of a contiguous row (-inf for an empty row). NaNs reach the result through
// the exp that follows, so the max itself may skip them.
template <class T>
T row_max(const T* x, int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

// sum(exp(x - m)) of a contiguous row.
template <class T>
T row_sum_exp(const T* x, int64_t n, T m) {
  T s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - m);
  return s;
}

// A row's maximum m and log(sum(exp(x - m))). Results are formed as (x - m) - log_sum:
// x - m is exact, so the error stays relative to the result instead of to the size of
// the logits (x - (m + log_sum) loses ~1 ulp of m, 3e-5 for float32 logits near 500).
template <class T>
struct MaxLogSum {
  T max;
  T log_sum;
};

template <class T>
MaxLogSum<T> row_max_log_sum(const T* x, int64_t n) {
  const T m = row_max(x, n);
  return {m, std::log(row_sum_exp(x, n, m))};
}

// softmax (or log_softmax when Log) of one contiguous row.
template <class T, bool Log>
void softmax_row(const T* __restrict x, T* __restrict y, int64_t n) {
  const T m = row_max(x, n);
  if constexpr (Log) {
    const T log_sum = std::log(row_sum_exp(x, n, m));
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
  } else {
    T s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) {
      const T e = std::exp(x[i] - m);
      y[i] = e;
      s += e;
    }
    const T inv = T(1) / s;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

// Columns handled together when the axis is not the last one.
inline constexpr int64_t kColumnBlock = 64;

// The maximum and log(sum(exp(x - max))) of `cols` (<= kColumnBlock) columns of an
// [n, inner] slab starting at x (see MaxLogSum).
template <class T>
void columns_max_log_sum(const T* x, int64_t n, int64_t inner, int64_t cols, T* m, T* log_sum) {
  T s[kColumnBlock];
  for (int64_t c = 0; c < cols; ++c) m[c] = -std::numeric_limits<T>::infinity(), s[c] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) m[c] = std::max(m[c], r[c]);
  }
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) s[c] += std::exp(r[c] - m[c]);
  }
  for (int64_t c = 0; c < cols; ++c) log_sum[c] = std::log(s[c]);
}

// softmax (or log_softmax) of `cols` columns of an [n, inner] slab.
template <class T, bool Log>
void softmax_columns(const T* __restrict x, T* __restrict y, int64_t n, int64_t inner, int64_t cols) {
  T m[kColumnBlock], log_sum[kColumnBlock];
  columns_max_log_sum(x, n, inner, cols, m, log_sum);
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
    T* o = y + i * inner;
    if constexpr (Log) {
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) o[c] = (r[c] - m[c]) - log_sum[c];
    } else {
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) o[c] = std::exp((r[c] - m[c]) - log_sum[c]);
    }
  }
}

}  // namespace ef::detail
