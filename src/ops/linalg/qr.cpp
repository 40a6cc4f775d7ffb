// linalg::qr: Q with orthonormal columns and upper-triangular R with A = Q R for each
// m x n matrix A of a batch (tf.linalg.qr): reduced (Q [m, k], R [k, n], k = min(m, n))
// or, with `full_matrices`, complete (Q [m, m], R [m, n]). Householder QR (LAPACK geqrf,
// then orgqr for Q), so the signs are LAPACK's, as in NumPy and PyTorch. Its gradient is
// TensorFlow's QrGrad, written with triangular_solve.
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/linalg/lapack.h"

namespace ef {
namespace {

using namespace linalg_detail;

enum QrAttr { kFullMatrices };

void infer_qr(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  check_matrices(call.op.name, call.inputs[0], "input", false);
  const Shape& s = call.inputs[0].shape();
  const int64_t m = s.dim(-2), n = s.dim(-1);
  const int64_t k = call.attrs.get_bool(kFullMatrices)       ? m
                    : (m == kUnknownDim || n == kUnknownDim) ? kUnknownDim
                                                             : std::min(m, n);
  Dims q = batch_shape(s).dims(), r = q;
  q.push_back(m);
  q.push_back(k);
  r.push_back(k);
  r.push_back(n);
  out.add(call.inputs[0].dtype(), Shape(std::move(q)));
  out.add(call.inputs[0].dtype(), Shape(std::move(r)));
}

template <class T>
void qr_typed(const OpCall& call, std::span<Tensor> outputs) {
  Tensor &q_out = outputs[0], &r_out = outputs[1];
  const int64_t m = q_out.shape().dim(-2), k = q_out.shape().dim(-1), n = r_out.shape().dim(-1);
  const Shape batch = batch_shape(q_out.shape());
  const int64_t batches = batch.num_elements();
  if (batches == 0 || m == 0) return;
  check_lapack_size(call, std::max(m, n));
  const BatchOffsets at(call.inputs[0], batch);
  const T* src = input_data<T>(call, 0);
  T *q_data = cpu::typed_output<T>(q_out), *r_data = cpu::typed_output<T>(r_out);
  const int64_t reflectors = std::min(m, n), cols = std::max(n, k);  // the workspace is m x cols
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k),
            ri = static_cast<int>(reflectors);
  cpu::init_blas_threads();
  const double md = static_cast<double>(m), nd = static_cast<double>(std::max<int64_t>(n, 1));
  parallel_for(batches, 2 * md * nd * nd + 50, [&](int64_t begin, int64_t end) {
    std::vector<T> a(static_cast<size_t>(m * cols)),
        tau(static_cast<size_t>(std::max<int64_t>(reflectors, 1)));
    T query[2] = {T(0), T(0)};
    geqrf(mi, ni, a.data(), mi, tau.data(), &query[0], -1);
    orgqr(mi, ki, ri, a.data(), mi, tau.data(), &query[1], -1);
    std::vector<T> work(static_cast<size_t>(std::max<T>({query[0], query[1], T(1)})));
    const int lwork = static_cast<int>(work.size());
    for (int64_t b = begin; b < end; ++b) {
      // Column-major A: row j of the workspace is column j of A.
      copy_matrix(src + at(b), at.col_stride(), at.row_stride(), n, m, a.data(), m);
      geqrf(mi, ni, a.data(), mi, tau.data(), work.data(), lwork);
      T* r = r_data + b * k * n;
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j) r[i * n + j] = j >= i ? a[static_cast<size_t>(i + j * m)] : T(0);
      orgqr(mi, ki, ri, a.data(), mi, tau.data(), work.data(), lwork);
      T* q = q_data + b * m * k;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) q[i * k + j] = a[static_cast<size_t>(i + j * m)];
    }
  });
}

void qr_cpu(const OpCall& call, std::span<Tensor> outputs) {
  cpu::dispatch_in<kLapackTypes>(outputs[0].dtype(), call.op.name,
                                 [&](auto tag) { qr_typed<typename decltype(tag)::type>(call, outputs); });
}

// x R^-T for the upper-triangular R (TensorFlow's _TriangularSolve).
Tensor times_inverse_transpose(const Tensor& x, const Tensor& r) {
  return linalg::matrix_transpose(linalg::triangular_solve(r, linalg::matrix_transpose(x), false, false));
}

// The gradient for m >= n (reduced): with M = Q^T dQ and N = R dR^T,
// dA = Q (dR + tril(M - M^T + N - N^T) R^-T) + (dQ - Q M) R^-T.
Tensor qr_grad_deep(const Tensor& q, const Tensor& r, const Tensor& dq, const Tensor& dr) {
  Tensor qdq = matmul(q, dq, true, false), rdr = matmul(r, dr, false, true);
  Tensor tril = linalg::band_part(
      add(subtract(qdq, linalg::matrix_transpose(qdq)), subtract(rdr, linalg::matrix_transpose(rdr))), -1, 0);
  Tensor grad_a = matmul(q, add(dr, times_inverse_transpose(tril, r)));
  return add(grad_a, times_inverse_transpose(subtract(dq, matmul(q, qdq)), r));
}

// The last axis of x from `begin` to `end` (kUnknownDim: to the end).
Tensor columns(const Tensor& x, int64_t begin, int64_t end) {
  StridedSliceMasks masks{.begin_mask = 0, .end_mask = end == kUnknownDim ? 2 : 0, .ellipsis_mask = 1};
  return strided_slice(x, {0, begin}, {0, end == kUnknownDim ? 0 : end}, {}, masks);
}

std::vector<Tensor> qr_grad(const GradCall& call) {
  const Tensor &q = call.outputs[0], &r = call.outputs[1], &a = call.forward.inputs[0];
  const int64_t m = q.shape().dim(-2), n = r.shape().dim(-1);
  if (m == kUnknownDim || n == kUnknownDim)
    fail<UnimplementedError>("qr: the gradient needs the matrix dimensions, which are unknown (input shape ",
                             a.shape(), ")");
  if (call.forward.attrs.get_bool(kFullMatrices) && m > n)
    fail<UnimplementedError>(
        "qr: the gradient is not defined for full_matrices=True when the input has more rows "
        "than columns (input shape ",
        a.shape(), "): the extra columns of Q are not determined by the input");
  const Tensor dq = call.output_grads[0].defined() ? call.output_grads[0] : zeros_like(q);
  const Tensor dr = call.output_grads[1].defined() ? call.output_grads[1] : zeros_like(r);
  if (m >= n) return {qr_grad_deep(q, r, dq, dr)};
  // m < n: with A = [X, Y] and R = [U, V] (X, U square), X = Q U is the square case
  // with dQ + Y dV^T for dQ, and dY = Q dV (TensorFlow's reduction).
  const Tensor y = columns(a, m, kUnknownDim), u = columns(r, 0, m);
  const Tensor du = columns(dr, 0, m), dv = columns(dr, m, kUnknownDim);
  Tensor dx = qr_grad_deep(q, u, add(dq, matmul(y, dv, false, true)), du);
  return {concat({dx, matmul(q, dv)}, -1)};
}

// x R^-1 for the upper-triangular R.
Tensor times_inverse(const Tensor& x, const Tensor& r) {
  return linalg::matrix_transpose(linalg::triangular_solve(r, linalg::matrix_transpose(x), false, true));
}

// For m >= n: Q^T dA R^-1 = Q^T dQ + dR R^-1 is a skew part W (Q^T Q = I) plus an upper
// triangular one U; W's strictly lower triangle is X's. So dR = U R, dQ = dA R^-1 - Q U.
std::pair<Tensor, Tensor> qr_jvp_deep(const Tensor& q, const Tensor& r, const Tensor& da) {
  Tensor da_rinv = times_inverse(da, r);
  Tensor x = matmul(q, da_rinv, true, false);
  Tensor below = linalg::band_part(x, -1, 0);
  below = subtract(below, linalg::band_part(x, 0, 0));
  Tensor u = subtract(x, subtract(below, linalg::matrix_transpose(below)));
  return {subtract(da_rinv, matmul(q, u)), matmul(u, r)};
}

std::vector<Tensor> qr_jvp(const JvpCall& call) {
  const Tensor &q = call.outputs[0], &r = call.outputs[1], &a = call.forward.inputs[0];
  const Tensor& da = call.input_tangents[0];
  const int64_t m = q.shape().dim(-2), n = r.shape().dim(-1);
  if (m == kUnknownDim || n == kUnknownDim)
    fail<UnimplementedError>("qr: forward mode needs the matrix dimensions, which are unknown (input shape ",
                             a.shape(), ")");
  if (call.forward.attrs.get_bool(kFullMatrices) && m > n)
    fail<UnimplementedError>(
        "qr: forward mode is not defined for full_matrices=True when the input has more "
        "rows than columns (input shape ",
        a.shape(), "), as the gradient is not");
  if (m >= n) {
    auto [dq, dr] = qr_jvp_deep(q, r, da);
    return {dq, dr};
  }
  // m < n: A = [X, Y], R = [U, V] with X = Q U square; then dV = Q^T (dY - dQ V).
  auto [dq, du] = qr_jvp_deep(q, columns(r, 0, m), columns(da, 0, m));
  Tensor dv =
      matmul(q, subtract(columns(da, m, kUnknownDim), matmul(dq, columns(r, m, kUnknownDim))), true, false);
  return {dq, concat({du, dv}, -1)};
}

const OpDef& kQr = define_op({
    .name = "qr",
    .attr_names = {"full_matrices"},
    .infer = infer_qr,
    .kernels = {qr_cpu},
    .gradient = qr_grad,
    .gradient_uses = {.inputs = kAllValues, .outputs = kAllValues},
    .jvp = qr_jvp,
    .batch = detail::batch_leading_dims,
});

}  // namespace

namespace linalg {

std::pair<Tensor, Tensor> qr(const Tensor& input, bool full_matrices, CallSite where) {
  std::vector<Tensor> out = run_op_multi(kQr, {input}, {full_matrices}, where);
  return {out[0], out[1]};
}

}  // namespace linalg
}  // namespace ef
