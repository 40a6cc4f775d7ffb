// linalg::solve: X with op(A) X = B for square A (tf.linalg.solve; op(A) = A^T when
// `adjoint`), by LU factorization with partial pivoting (LAPACK getrf) and two
// triangular solves per block of right-hand sides. Batch dimensions broadcast; each
// distinct A is factored once. A singular A (a zero pivot) is an error, never infs.
#include <utility>
#include <vector>

#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/linalg/lapack.h"

namespace ef {
namespace {

using namespace linalg_detail;

enum SolveAttr { kAdjoint };

// Solves with the factors of one matrix (Note [row-major LAPACK]: lu holds the LU
// factors of M = A^T = P L U, row-major, so its lower triangle is U^T and its strict
// upper triangle L^T) for the rows x cols block x (leading dimension ldx), in place.
template <class T>
void lu_solve(const T* lu, const int* ipiv, bool adjoint, int n, int cols, T* x, int ldx) {
  auto swap_row = [&](int i) {
    if (ipiv[i] - 1 != i) std::swap_ranges(x + i * ldx, x + i * ldx + cols, x + (ipiv[i] - 1) * ldx);
  };
  if (!adjoint) {  // A = U^T L^T P^T: X = P L^-T U^-T B
    trsm(true, false, false, n, cols, lu, n, x, ldx);
    trsm(false, false, true, n, cols, lu, n, x, ldx);
    for (int i = n - 1; i >= 0; --i) swap_row(i);
  } else {  // A^T = P L U: X = U^-1 L^-1 P^T B
    for (int i = 0; i < n; ++i) swap_row(i);
    trsm(false, true, true, n, cols, lu, n, x, ldx);
    trsm(true, true, false, n, cols, lu, n, x, ldx);
  }
}

template <class T>
void solve_typed(const OpCall& call, Tensor& out) {
  const bool adjoint = call.attrs.get_bool(kAdjoint);
  const int64_t n = out.shape().dim(-2), k = out.shape().dim(-1);
  if (out.num_elements() == 0) return;
  check_lapack_size(call, n);
  check_lapack_size(call, k);
  const Tensor& a_in = call.inputs[0];
  const Shape batch = batch_shape(out.shape()), a_batch = batch_shape(a_in.shape());
  const int64_t batches = out.num_elements() / (n * k), factors = a_batch.num_elements();
  const BatchOffsets a_own(a_in, a_batch), a_at(a_in, batch), b_at(call.inputs[1], batch);
  const T *a_data = input_data<T>(call, 0), *b_data = input_data<T>(call, 1);
  cpu::init_blas_threads();
  // Factor each matrix of A's own batch once.
  std::vector<T> lu(static_cast<size_t>(factors * n * n));
  std::vector<int> ipiv(static_cast<size_t>(factors * n));
  const double nd = static_cast<double>(n);
  parallel_for(factors, nd * nd * nd * 0.2 + 50, [&](int64_t begin, int64_t end) {
    for (int64_t f = begin; f < end; ++f)
      if (lu_factor(a_data, a_own, f, n, lu.data() + f * n * n, ipiv.data() + f * n) > 0)
        fail(call.op.name, ": input matrix is not invertible (matrix ", f, " of the batch of shape ",
             a_in.shape(), " is singular)");
  });
  T* x_data = cpu::typed_output<T>(out);
  const int64_t cols = columns_per_item(batches, k), chunks = (k + cols - 1) / cols;
  parallel_for(batches * chunks, nd * nd * static_cast<double>(cols) * 0.3 + 50,
               [&](int64_t begin, int64_t end) {
                 for (int64_t item = begin; item < end; ++item) {
                   const int64_t b = item / chunks, c0 = (item % chunks) * cols, c1 = std::min(k, c0 + cols),
                                 f = a_at.index(b);
                   T* x = x_data + b * n * k + c0;
                   copy_matrix(b_data + b_at(b) + c0 * b_at.col_stride(), b_at.row_stride(),
                               b_at.col_stride(), n, c1 - c0, x, k);
                   lu_solve(lu.data() + f * n * n, ipiv.data() + f * n, adjoint, static_cast<int>(n),
                            static_cast<int>(c1 - c0), x, static_cast<int>(k));
                 }
               });
}

void solve_cpu(const OpCall& call, std::span<Tensor> outputs) {
  cpu::dispatch_in<kLapackTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    solve_typed<typename decltype(tag)::type>(call, outputs[0]);
  });
}

// X = op(A)^-1 B: dB = op(A)^-T dX, and dA = -dB X^T (or -X dB^T when adjoint) (Giles
// 2008). Broadcast batch dimensions are summed by the tape.
std::vector<Tensor> solve_grad(const GradCall& call) {
  const Tensor &a = call.forward.inputs[0], &x = call.outputs[0], &g = call.output_grads[0];
  const bool adjoint = call.forward.attrs.get_bool(kAdjoint);
  Tensor grad_b = linalg::solve(a, g, !adjoint);
  Tensor grad_a;
  if (call.needs(0))
    grad_a = negative(adjoint ? matmul(x, grad_b, false, true) : matmul(grad_b, x, false, true));
  return {grad_a, call.needs(1) ? grad_b : Tensor()};
}

// dx = op(A)^-1 (t_b - op(t_A) x), op the adjoint or not.
std::vector<Tensor> solve_jvp(const JvpCall& call) {
  const Tensor &a = call.forward.inputs[0], &x = call.outputs[0];
  const bool adjoint = call.forward.attrs.get_bool(kAdjoint);
  Tensor rhs = detail::tangent_or_zeros(call, 1);
  if (call.has_tangent(0)) rhs = subtract(rhs, matmul(call.input_tangents[0], x, adjoint, false));
  return {linalg::solve(a, rhs, adjoint)};
}

const OpDef& kSolve = define_op({
    .name = "solve",
    .attr_names = {"adjoint"},
    .infer = infer_solve_like,
    .kernels = {solve_cpu},
    .gradient = solve_grad,
    .gradient_uses = {.inputs = value_bit(0), .outputs = kAllValues},
    .jvp = solve_jvp,
    .batch = detail::batch_broadcasting,
});

}  // namespace

namespace linalg {

Tensor solve(const Tensor& matrix, const Tensor& rhs, bool adjoint, CallSite where) {
  return run_op(kSolve, {matrix, rhs}, {adjoint}, where);
}

}  // namespace linalg
}  // namespace ef
