// GEMM through OpenBLAS, plus the layout questions around it: can a strided matrix be
// handed to BLAS as is (with a transpose flag and leading dimension), and a plain copy
// for when it cannot.
//
// Note [one thread pool]: OpenBLAS is told once to run single-threaded; callers split
// large products across ef::parallel_for themselves (over batch entries and row
// blocks), so BLAS threads never compete with ours.
#pragma once

#include <cstdint>

#include "eagerflow/core/tensor.h"

namespace ef::cpu {

// How BLAS reads a logical rows x cols matrix with element strides (row_stride,
// col_stride): row-major with leading dimension `ld`, transposed when `trans`.
struct BlasMatrix {
  bool trans = false;
  int64_t ld = 1;
};

// The BLAS view of a strided matrix, or false when none exists (a broadcast, negative
// or overlapping stride, or a leading dimension too large for BLAS's int).
bool blas_layout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, BlasMatrix& out);

// C[m x n] (row-major, leading dimension ldc) = op(A)[m x k] * op(B)[k x n], beta = 0.
// Runs on the calling thread (Note [one thread pool]); m, n, k must fit in int and k > 0.
void gemm(const BlasMatrix& a, const BlasMatrix& b, int64_t m, int64_t n, int64_t k, const float* pa,
          const float* pb, float* pc, int64_t ldc);
void gemm(const BlasMatrix& a, const BlasMatrix& b, int64_t m, int64_t n, int64_t k, const double* pa,
          const double* pb, double* pc, int64_t ldc);

// A contiguous copy of an eager CPU tensor with any strides (the tensor itself when it
// is already contiguous).
Tensor contiguous_copy(const Tensor& t);

}  // namespace ef::cpu
