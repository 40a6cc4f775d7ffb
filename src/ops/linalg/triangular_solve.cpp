// linalg::triangular_solve: X with op(A) X = B for triangular A (tf.linalg.triangular_solve;
// op(A) = A^T when `adjoint`). Only the triangle named by `lower` is read. Batch
// dimensions broadcast. BLAS trsm on each batch entry and block of right-hand sides.
#include <vector>

#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/linalg/lapack.h"

namespace ef {
namespace {

using namespace linalg_detail;

enum TriangularSolveAttr { kLower, kAdjoint };

template <class T>
void triangular_solve_typed(const OpCall& call, Tensor& out) {
  const bool lower = call.attrs.get_bool(kLower), adjoint = call.attrs.get_bool(kAdjoint);
  const int64_t n = out.shape().dim(-2), k = out.shape().dim(-1);
  if (out.num_elements() == 0) return;
  check_lapack_size(call, n);
  check_lapack_size(call, k);
  const int64_t batches = out.num_elements() / (n * k);
  const Shape batch = batch_shape(out.shape());
  const BatchOffsets a_at(call.inputs[0], batch), b_at(call.inputs[1], batch);
  const T *a_data = input_data<T>(call, 0), *b_data = input_data<T>(call, 1);
  T* x_data = cpu::typed_output<T>(out);
  // A zero on the diagonal: not invertible (checked before any work, as TensorFlow does).
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < n; ++i)
      if (a_data[a_at(b) + i * (a_at.row_stride() + a_at.col_stride())] == T(0))
        fail(call.op.name, ": input matrix is not invertible (matrix ", b, " of the batch has a zero at (", i,
             ", ", i, ") of its diagonal)");
  cpu::init_blas_threads();
  const int64_t cols = columns_per_item(batches, k), chunks = (k + cols - 1) / cols;
  const double ns = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(cols) * 0.3 + 50;
  parallel_for(batches * chunks, ns, [&](int64_t begin, int64_t end) {
    std::vector<T> work;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / chunks, c0 = (item % chunks) * cols, c1 = std::min(k, c0 + cols);
      // Unit column stride: BLAS reads A in place; else a row-major copy.
      const T* a = a_data + a_at(b);
      int64_t lda = a_at.row_stride();
      if (a_at.col_stride() != 1 || lda < n) {
        work.resize(static_cast<size_t>(n * n));
        copy_matrix(a, a_at.row_stride(), a_at.col_stride(), n, n, work.data(), n);
        a = work.data();
        lda = n;
      }
      T* x = x_data + b * n * k + c0;
      copy_matrix(b_data + b_at(b) + c0 * b_at.col_stride(), b_at.row_stride(), b_at.col_stride(), n, c1 - c0,
                  x, k);
      trsm(lower, adjoint, false, static_cast<int>(n), static_cast<int>(c1 - c0), a, static_cast<int>(lda), x,
           static_cast<int>(k));
    }
  });
}

void triangular_solve_cpu(const OpCall& call, std::span<Tensor> outputs) {
  cpu::dispatch_in<kLapackTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    triangular_solve_typed<typename decltype(tag)::type>(call, outputs[0]);
  });
}

// X = op(A)^-1 B: dB = op(A)^-T dX, and dA = -dB X^T (or -X dB^T when adjoint), kept
// to A's triangle. Broadcast batch dimensions are summed by the tape.
std::vector<Tensor> triangular_solve_grad(const GradCall& call) {
  const Tensor &a = call.forward.inputs[0], &x = call.outputs[0], &g = call.output_grads[0];
  const bool lower = call.forward.attrs.get_bool(kLower), adjoint = call.forward.attrs.get_bool(kAdjoint);
  Tensor grad_b = linalg::triangular_solve(a, g, lower, !adjoint);
  Tensor grad_a;
  if (call.needs(0)) {
    grad_a = negative(adjoint ? matmul(x, grad_b, false, true) : matmul(grad_b, x, false, true));
    grad_a = lower ? linalg::band_part(grad_a, -1, 0) : linalg::band_part(grad_a, 0, -1);
  }
  return {grad_a, call.needs(1) ? grad_b : Tensor()};
}

// As solve's, with only the triangle the solve reads of t_A (the gradient's band_part).
std::vector<Tensor> triangular_solve_jvp(const JvpCall& call) {
  const Tensor &a = call.forward.inputs[0], &x = call.outputs[0];
  const bool lower = call.forward.attrs.get_bool(kLower), adjoint = call.forward.attrs.get_bool(kAdjoint);
  Tensor rhs = detail::tangent_or_zeros(call, 1);
  if (call.has_tangent(0)) {
    const Tensor& t = call.input_tangents[0];
    Tensor triangle = lower ? linalg::band_part(t, -1, 0) : linalg::band_part(t, 0, -1);
    rhs = subtract(rhs, matmul(triangle, x, adjoint, false));
  }
  return {linalg::triangular_solve(a, rhs, lower, adjoint)};
}

const OpDef& kTriangularSolve = define_op({
    .name = "triangular_solve",
    .attr_names = {"lower", "adjoint"},
    .infer = infer_solve_like,
    .kernels = {triangular_solve_cpu},
    .gradient = triangular_solve_grad,
    .gradient_uses = {.inputs = value_bit(0), .outputs = kAllValues},
    .jvp = triangular_solve_jvp,
    .batch = detail::batch_broadcasting,
});

}  // namespace

namespace linalg {

Tensor triangular_solve(const Tensor& matrix, const Tensor& rhs, bool lower, bool adjoint, CallSite where) {
  return run_op(kTriangularSolve, {matrix, rhs}, {lower, adjoint}, where);
}

}  // namespace linalg
}  // namespace ef
