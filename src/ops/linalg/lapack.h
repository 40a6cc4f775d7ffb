// The LAPACK routines the matrix-decomposition ops call (OpenBLAS ships them with the
// Fortran interface, declared here rather than through another dependency), and what
// those ops share: inference of batched square matrices, per-batch-entry input offsets
// under broadcasting, and copying a strided matrix into a workspace.
//
// Note [row-major LAPACK]: LAPACK reads column-major matrices, so a row-major buffer of
// A is LAPACK's A^T. The kernels use that instead of transposing: potrf('U') of the
// buffer of a symmetric A reads A's lower triangle and leaves L row-major; getrf of the
// buffer of A factors A^T = P L U, which has A's determinant and solves A X = B as
// U^T L^T P^T X = B with row-major triangular solves (see solve.cpp).
#pragma once

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "backends/cpu/blas.h"
#include "backends/cpu/elementwise.h"
#include "eagerflow/runtime/op_def.h"
#include "ops/op_helpers.h"

extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork,
             int* info);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork,
             int* info);
}

namespace ef::linalg_detail {

using cpu::DTypeSet;

// The dtypes every LAPACK-backed op takes.
inline constexpr DTypeSet kLapackTypes = cpu::dtype_bit(DType::Float32) | cpu::dtype_bit(DType::Float64);

// Cholesky factor of the n x n column-major matrix at a (in place); LAPACK's info.
inline int potrf(char uplo, int n, float* a, int lda) {
  int info = 0;
  spotrf_(&uplo, &n, a, &lda, &info);
  return info;
}
inline int potrf(char uplo, int n, double* a, int lda) {
  int info = 0;
  dpotrf_(&uplo, &n, a, &lda, &info);
  return info;
}

// LU factorization with partial pivoting of the n x n column-major matrix at a (in
// place, 1-based pivots); LAPACK's info (> 0: a zero pivot, U(info, info) = 0).
inline int getrf(int n, float* a, int* ipiv) {
  int info = 0;
  sgetrf_(&n, &n, a, &n, ipiv, &info);
  return info;
}
inline int getrf(int n, double* a, int* ipiv) {
  int info = 0;
  dgetrf_(&n, &n, a, &n, ipiv, &info);
  return info;
}

// QR factorization of the m x n column-major matrix at a (in place: R above the
// diagonal, the Householder reflectors below it and in tau); LAPACK's info. Workspace
// queries (lwork = -1) write the optimal size to work[0].
inline int geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork) {
  int info = 0;
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
  return info;
}
inline int geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork) {
  int info = 0;
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
  return info;
}

// The first n columns of the m x m orthogonal Q whose k reflectors geqrf left in a and
// tau (in place); LAPACK's info.
inline int orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork) {
  int info = 0;
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return info;
}
inline int orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork) {
  int info = 0;
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return info;
}

// Eigenvalues (ascending, in w) and, when jobz = 'V', eigenvectors (the columns of a, in
// place) of the symmetric n x n column-major matrix at a, of which the `uplo` triangle
// is read (divide and conquer); LAPACK's info (> 0: no convergence).
inline int syevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork, int* iwork,
                 int liwork) {
  int info = 0;
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info);
  return info;
}
inline int syevd(char jobz, char uplo, int n, double* a, int lda, double* w, double* work, int lwork,
                 int* iwork, int liwork) {
  int info = 0;
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info);
  return info;
}

// Singular values (descending, in s) and, for jobz 'A' (all) or 'S' (the first
// min(m, n)), the singular vectors U and V^T of the m x n column-major matrix at a
// (destroyed; divide and conquer); iwork holds 8 min(m, n) ints. LAPACK's info (> 0:
// no convergence).
inline int gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt,
                 float* work, int lwork, int* iwork) {
  int info = 0;
  sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info);
  return info;
}
inline int gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt,
                 int ldvt, double* work, int lwork, int* iwork) {
  int info = 0;
  dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info);
  return info;
}

// B (rows x cols, row-major, leading dimension ldb) = op(A)^-1 B for the triangular
// n x n row-major matrix A (BLAS trsm, from the left).
inline void trsm(bool lower, bool transpose, bool unit, int rows, int cols, const float* a, int lda, float* b,
                 int ldb) {
  cblas_strsm(CblasRowMajor, CblasLeft, lower ? CblasLower : CblasUpper,
              transpose ? CblasTrans : CblasNoTrans, unit ? CblasUnit : CblasNonUnit, rows, cols, 1.0f, a,
              lda, b, ldb);
}
inline void trsm(bool lower, bool transpose, bool unit, int rows, int cols, const double* a, int lda,
                 double* b, int ldb) {
  cblas_dtrsm(CblasRowMajor, CblasLeft, lower ? CblasLower : CblasUpper,
              transpose ? CblasTrans : CblasNoTrans, unit ? CblasUnit : CblasNonUnit, rows, cols, 1.0, a, lda,
              b, ldb);
}

// Checks that `x` (argument `arg` of `op`) is a batch of matrices [..., m, n] (square
// when `square`) of a dtype in `dtypes`, throwing InvalidArgumentError naming op,
// argument and shape. Unknown dimensions pass. Composites call it too, so that their
// errors name them rather than the op they run.
void check_matrices(std::string_view op, const Tensor& x, std::string_view arg, bool square,
                    DTypeSet dtypes = kLapackTypes);

// The batch dimensions (all but the last two) of `shape`.
Shape batch_shape(const Shape& shape);

// The broadcast of the batch dimensions of inputs i and j (named arg_i, arg_j);
// throws InvalidArgumentError naming both shapes when they cannot broadcast.
Shape broadcast_batch(const OpCall& call, size_t i, size_t j, std::string_view arg_i, std::string_view arg_j);

// Inference of the solvers (inputs 'matrix' [..., n, n] and 'rhs' [..., n, k], batch
// dimensions broadcast): the output is [batch..., n, k].
void infer_solve_like(const OpCall& call, OutputMetas& out);

// The thread pool's share of a batch of `batches` solves with `cols` right-hand sides:
// how many columns each work item takes, so that a single large system still splits.
int64_t columns_per_item(int64_t batches, int64_t cols);

// Throws ResourceExhaustedError naming the op when a matrix dimension exceeds LAPACK's int.
void check_lapack_size(const OpCall& call, int64_t dim);

// Element offsets of one input's matrices, by batch entry of an output whose batch
// shape the input's batch shape broadcasts to.
class BatchOffsets {
 public:
  BatchOffsets(const Tensor& input, const Shape& out_batch);
  int64_t operator()(int64_t entry) const { return walk(entry, strides_); }
  // The input's own batch entry (row-major over its batch dimensions) that output
  // batch entry `entry` reads.
  int64_t index(int64_t entry) const { return walk(entry, index_strides_); }
  int64_t row_stride() const { return row_stride_; }
  int64_t col_stride() const { return col_stride_; }

 private:
  int64_t walk(int64_t entry, const Dims& strides) const;

  // Aligned with out_batch_, 0 where the input is broadcast: element strides, and
  // strides in batch entries.
  Dims out_batch_, strides_, index_strides_;
  int64_t row_stride_ = 0, col_stride_ = 0;
};

// Copies the rows x cols matrix at src (element strides rs, cs) into dst, row-major
// with leading dimension ld.
template <class T>
void copy_matrix(const T* src, int64_t rs, int64_t cs, int64_t rows, int64_t cols, T* dst, int64_t ld) {
  for (int64_t i = 0; i < rows; ++i) {
    const T* s = src + i * rs;
    T* d = dst + i * ld;
    if (cs == 1)
      std::copy(s, s + cols, d);
    else
      for (int64_t j = 0; j < cols; ++j) d[j] = s[j * cs];
  }
}

// Copies matrix `entry` of a batch (at src, offsets `at`) into lu and factors it there
// (Note [row-major LAPACK]: lu then holds the LU factors of its transpose); getrf's info.
template <class T>
int lu_factor(const T* src, const BatchOffsets& at, int64_t entry, int64_t n, T* lu, int* ipiv) {
  copy_matrix(src + at(entry), at.row_stride(), at.col_stride(), n, n, lu, n);
  return getrf(static_cast<int>(n), lu, ipiv);
}

// Input `i` of the call as typed data (its offset applied).
template <class T>
const T* input_data(const OpCall& call, size_t i) {
  return cpu::typed_data<T>(call.inputs[i]);
}

}  // namespace ef::linalg_detail
