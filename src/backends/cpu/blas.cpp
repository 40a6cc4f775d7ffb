#include "backends/cpu/blas.h"

#include <cblas.h>

#include <climits>
#include <cstring>
#include <mutex>


extern "C" void openblas_set_num_threads(int);

namespace ef::cpu {

// Note [one thread pool]: done lazily, before the first BLAS or LAPACK call.
void init_blas_threads() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

namespace {

int to_blas_int(int64_t v) { return static_cast<int>(v); }

}  // namespace

bool blas_layout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, BlasMatrix& out) {
  // The stride of a size-1 dimension never matters.
  const bool one_row = rows <= 1, one_col = cols <= 1;
  // Row-major: unit column stride, rows at least `cols` apart.
  if ((one_col || col_stride == 1) && (one_row || row_stride >= std::max<int64_t>(cols, 1))) {
    out.trans = false;
    out.ld = one_row ? std::max<int64_t>(cols, 1) : row_stride;
    if (out.ld <= INT_MAX) return true;
  }
  // Column-major, i.e. the row-major transpose: unit row stride, columns at least `rows` apart.
  if ((one_row || row_stride == 1) && (one_col || col_stride >= std::max<int64_t>(rows, 1))) {
    out.trans = true;
    out.ld = one_col ? std::max<int64_t>(rows, 1) : col_stride;
    if (out.ld <= INT_MAX) return true;
  }
  return false;
}

void gemm(const BlasMatrix& a, const BlasMatrix& b, int64_t m, int64_t n, int64_t k, const float* pa,
          const float* pb, float* pc, int64_t ldc) {
  init_blas_threads();
  cblas_sgemm(CblasRowMajor, a.trans ? CblasTrans : CblasNoTrans, b.trans ? CblasTrans : CblasNoTrans,
              to_blas_int(m), to_blas_int(n), to_blas_int(k), 1.0f, pa, to_blas_int(a.ld), pb, to_blas_int(b.ld),
              0.0f, pc, to_blas_int(ldc));
}

void gemm(const BlasMatrix& a, const BlasMatrix& b, int64_t m, int64_t n, int64_t k, const double* pa,
          const double* pb, double* pc, int64_t ldc) {
  init_blas_threads();
  cblas_dgemm(CblasRowMajor, a.trans ? CblasTrans : CblasNoTrans, b.trans ? CblasTrans : CblasNoTrans,
              to_blas_int(m), to_blas_int(n), to_blas_int(k), 1.0, pa, to_blas_int(a.ld), pb, to_blas_int(b.ld),
              0.0, pc, to_blas_int(ldc));
}

// A logical rows x cols matrix stored row-major is BLAS's NoTrans rows x cols; stored
// transposed it is Trans of a cols x rows matrix.
void gemv(const BlasMatrix& l, int64_t rows, int64_t cols, const float* pl, const float* x, int64_t incx, float* y,
          int64_t incy) {
  init_blas_threads();
  cblas_sgemv(CblasRowMajor, l.trans ? CblasTrans : CblasNoTrans, to_blas_int(l.trans ? cols : rows),
              to_blas_int(l.trans ? rows : cols), 1.0f, pl, to_blas_int(l.ld), x, to_blas_int(incx), 0.0f, y,
              to_blas_int(incy));
}

void gemv(const BlasMatrix& l, int64_t rows, int64_t cols, const double* pl, const double* x, int64_t incx,
          double* y, int64_t incy) {
  init_blas_threads();
  cblas_dgemv(CblasRowMajor, l.trans ? CblasTrans : CblasNoTrans, to_blas_int(l.trans ? cols : rows),
              to_blas_int(l.trans ? rows : cols), 1.0, pl, to_blas_int(l.ld), x, to_blas_int(incx), 0.0, y,
              to_blas_int(incy));
}

}  // namespace ef::cpu
