// GEMM through OpenBLAS, and the layout question around it: can a strided matrix be
// handed to BLAS as is, with a transpose flag and leading dimension? (When it cannot,
// callers copy it with Tensor::contiguous().)
//
// Note [one thread pool]: OpenBLAS is told once to run single-threaded; callers split
// large products across ef::parallel_for themselves (over batch entries and row
// blocks), so BLAS threads never compete with ours.
#pragma once

#include <cstdint>

#include "eagerflow/core/tensor.h"

namespace ef::cpu {

// Tells OpenBLAS, once, to run single-threaded (Note [one thread pool]); every caller
// of BLAS or LAPACK routines calls it first.
void init_blas_threads();

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


// y[rows] (stride incy) = L x, where L is the logical rows x cols matrix `l` at pl and x
// has `cols` elements at stride incx > 0 (GEMV: a matrix times a vector).
void gemv(const BlasMatrix& l, int64_t rows, int64_t cols, const float* pl, const float* x, int64_t incx, float* y,
          int64_t incy);
void gemv(const BlasMatrix& l, int64_t rows, int64_t cols, const double* pl, const double* x, int64_t incx,
          double* y, int64_t incy);

}  // namespace ef::cpu
