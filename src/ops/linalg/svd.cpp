// linalg::svd: the singular values (descending) s and, when `compute_uv`, the singular
// vectors U and V of each m x n matrix A = U diag(s) V^T of a batch, as tf.linalg.svd
// (V itself, not V^T): reduced (U [m, k], V [n, k], k = min(m, n)) or with
// `full_matrices` complete (U [m, m], V [n, n]). LAPACK's divide and conquer gesdd;
// vector signs are LAPACK's.
//
// The gradient is Townsend's (2016) for the reduced decomposition, as TensorFlow's
// SvdGrad and PyTorch: with F_ij = 1 / (s_j^2 - s_i^2) off the diagonal,
//   dA = U [(F * (U^T dU - dU^T U)) S + diag(ds) + S (F * (V^T dV - dV^T V))] V^T
//        + (I - U U^T) dU S^-1 V^T + U S^-1 dV^T (I - V V^T).
// Repeated singular values make F infinite and zero ones S^-1, so the gradient through
// U or V is inf/nan there (the vectors are not determined by A); through s alone it is
// U diag(ds) V^T, finite everywhere (the op with compute_uv = false). With full_matrices
// and m != n the extra columns are not determined by A: the gradient throws
// UnimplementedError (as TensorFlow for |m - n| > 1).
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

enum SvdAttr { kFullMatrices, kComputeUv };

void infer_svd(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  check_matrices(call.op.name, call.inputs[0], "tensor", false);
  const Shape& shape = call.inputs[0].shape();
  const int64_t m = shape.dim(-2), n = shape.dim(-1);
  const int64_t k = (m == kUnknownDim || n == kUnknownDim) ? kUnknownDim : std::min(m, n);
  const bool full = call.attrs.get_bool(kFullMatrices);
  const Dims batch = batch_shape(shape).dims();
  auto with = [&](std::initializer_list<int64_t> last) {
    Dims d = batch;
    for (int64_t x : last) d.push_back(x);
    return Shape(std::move(d));
  };
  const DType dtype = call.inputs[0].dtype();
  out.add(dtype, with({k}));
  if (!call.attrs.get_bool(kComputeUv)) return;
  out.add(dtype, with({m, full ? m : k}));
  out.add(dtype, with({n, full ? n : k}));
}

template <class T>
void identity_matrices(T* data, int64_t batches, int64_t n) {
  std::fill(data, data + batches * n * n, T(0));
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < n; ++i) data[b * n * n + i * n + i] = T(1);
}

template <class T>
void svd_typed(const OpCall& call, std::span<Tensor> outputs) {
  const bool full = call.attrs.get_bool(kFullMatrices), uv = call.attrs.get_bool(kComputeUv);
  const Tensor& a_in = call.inputs[0];
  const int64_t m = a_in.shape().dim(-2), n = a_in.shape().dim(-1), k = std::min(m, n);
  const Shape batch = batch_shape(a_in.shape());
  const int64_t batches = batch.num_elements();
  if (batches == 0) return;
  const int64_t p = full ? m : k, q = full ? n : k;  // the columns of U and V
  T* s_data = cpu::typed_output<T>(outputs[0]);
  T* u_data = uv ? cpu::typed_output<T>(outputs[1]) : nullptr;
  T* v_data = uv ? cpu::typed_output<T>(outputs[2]) : nullptr;
  if (k == 0) {  // no singular values; full U and V are identities
    if (uv && full) {
      identity_matrices(u_data, batches, m);
      identity_matrices(v_data, batches, n);
    }
    return;
  }
  check_lapack_size(call, std::max(m, n));
  const BatchOffsets at(a_in, batch);
  const T* src = input_data<T>(call, 0);
  // Note [row-major LAPACK]: the row-major buffer of A is column-major A^T = U' S V'^T
  // (n x m), so A's U is V' and its V is U'; V'^T, column-major, is U row-major.
  const char jobz = !uv ? 'N' : full ? 'A' : 'S';
  const int mi = static_cast<int>(n), ni = static_cast<int>(m);  // A^T's dimensions
  const int ldu = mi, ldvt = uv ? static_cast<int>(p) : 1;
  cpu::init_blas_threads();
  const double big = static_cast<double>(std::max(m, n)), small = static_cast<double>(k);
  parallel_for(batches, 10 * big * small * small + 50, [&](int64_t begin, int64_t end) {
    std::vector<T> a(static_cast<size_t>(m * n)), u(uv ? static_cast<size_t>(n * q) : 1);
    std::vector<int> iwork(static_cast<size_t>(8 * k));
    T work_size = 0, dummy = 0;
    gesdd(jobz, mi, ni, a.data(), mi, s_data, u.data(), ldu, &dummy, ldvt, &work_size, -1, iwork.data());
    std::vector<T> work(static_cast<size_t>(std::max<T>(work_size, 1)));
    for (int64_t b = begin; b < end; ++b) {
      copy_matrix(src + at(b), at.row_stride(), at.col_stride(), m, n, a.data(), n);
      T* vt = uv ? u_data + b * m * p : &dummy;
      const int info = gesdd(jobz, mi, ni, a.data(), mi, s_data + b * k, u.data(), ldu, vt, ldvt, work.data(),
                             static_cast<int>(work.size()), iwork.data());
      if (info > 0)
        fail(call.op.name, ": the SVD algorithm did not converge for matrix ", b, " of the batch of shape ",
             a_in.shape());
      if (!uv) continue;
      T* v = v_data + b * n * q;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < q; ++j) v[i * q + j] = u[static_cast<size_t>(i + j * n)];
    }
  });
}

void svd_cpu(const OpCall& call, std::span<Tensor> outputs) {
  cpu::dispatch_in<kLapackTypes>(outputs[0].dtype(), call.op.name,
                                 [&](auto tag) { svd_typed<typename decltype(tag)::type>(call, outputs); });
}

// X - Y (Y^T X): the part of X outside the column space of Y (orthonormal columns).
Tensor complement(const Tensor& x, const Tensor& y) {
  return subtract(x, matmul(y, matmul(y, x, true, false)));
}

// Townsend's gradient of the reduced SVD (see the top of the file); du, dv may be undefined.
Tensor reduced_svd_grad(const Tensor& s, const Tensor& u, const Tensor& v, const Tensor& ds, const Tensor& du,
                        const Tensor& dv, int64_t m, int64_t n) {
  Tensor inner = ds.defined() ? linalg::diag(ds) : Tensor();
  auto accumulate = [&](const Tensor& t) { inner = inner.defined() ? add(inner, t) : t; };
  Tensor f;
  if (du.defined() || dv.defined()) {
    // F_ij = 1 / (s_j^2 - s_i^2), 0 on the diagonal (the identity keeps the diagonal's
    // division finite, and the mask then zeroes it).
    Tensor s2 = square(s);
    Tensor diff = subtract(expand_dims(s2, -2), expand_dims(s2, -1));
    Tensor eye = linalg::band_part(ones_like(diff), 0, 0);
    f = divide(subtract(1.0, eye), add(diff, eye));
  }
  auto skew = [&](const Tensor& x, const Tensor& dx) {
    Tensor xdx = matmul(x, dx, true, false);
    return multiply(f, subtract(xdx, linalg::matrix_transpose(xdx)));
  };
  if (du.defined()) accumulate(multiply(skew(u, du), expand_dims(s, -2)));  // J S
  if (dv.defined()) accumulate(multiply(expand_dims(s, -1), skew(v, dv)));  // S K
  Tensor grad = inner.defined() ? matmul(u, matmul(inner, v, false, true)) : Tensor();
  auto add_term = [&](const Tensor& t) { grad = grad.defined() ? add(grad, t) : t; };
  const Tensor s_inv = reciprocal(s);
  // The terms outside U's and V's column spaces vanish for the square side.
  if (du.defined() && (m == kUnknownDim || n == kUnknownDim || m > n))
    add_term(matmul(multiply(complement(du, u), expand_dims(s_inv, -2)), v, false, true));
  if (dv.defined() && (m == kUnknownDim || n == kUnknownDim || n > m))
    add_term(matmul(u, multiply(expand_dims(s_inv, -1), linalg::matrix_transpose(complement(dv, v)))));
  return grad;
}

std::vector<Tensor> svd_grad(const GradCall& call) {
  const Tensor& a = call.forward.inputs[0];
  const Tensor& ds = call.output_grads[0];
  const int64_t m = a.shape().dim(-2), n = a.shape().dim(-1);
  if (!call.forward.attrs.get_bool(kComputeUv)) {
    if (!ds.defined()) return {Tensor()};
    // d s = diag(U^T dA V): the vectors again, from a decomposition that has them.
    auto uv = linalg::svd(a, false, true);
    return {matmul(multiply(uv[1], expand_dims(ds, -2)), uv[2], false, true)};
  }
  Tensor s = call.outputs[0], u = call.outputs[1], v = call.outputs[2];
  Tensor du = call.output_grads[1], dv = call.output_grads[2];
  // The tape passes zeros for outputs that got no gradient, so a full decomposition
  // cannot tell a loss of s alone from one of the undetermined extra columns.
  if (call.forward.attrs.get_bool(kFullMatrices) && !(m == n && m != kUnknownDim))
    fail<UnimplementedError>(
        "svd: the gradient is not defined for full_matrices=True when the input is not square "
        "(input shape ",
        a.shape(),
        "): the extra singular vectors are not determined by the input; use "
        "full_matrices=False, or compute_uv=False for the singular values alone");
  return {reduced_svd_grad(s, u, v, ds, du, dv, m, n)};
}

// With P = U^T dA V and F as in the gradient: ds = diag(P),
// dU = U (F * (P S + S P^T)) + (I - U U^T) dA V S^-1 and
// dV = V (F * (S P + P^T S)) + (I - V V^T) dA^T U S^-1 (the outside terms vanish for the
// square side, as in the gradient).
std::vector<Tensor> svd_jvp(const JvpCall& call) {
  const Tensor &a = call.forward.inputs[0], &da = call.input_tangents[0];
  const int64_t m = a.shape().dim(-2), n = a.shape().dim(-1);
  if (!call.forward.attrs.get_bool(kComputeUv)) {
    auto uv = linalg::svd(a, false, true);
    return {linalg::diag_part(matmul(uv[1], matmul(da, uv[2]), true, false))};
  }
  if (call.forward.attrs.get_bool(kFullMatrices) && !(m == n && m != kUnknownDim))
    fail<UnimplementedError>(
        "svd: forward mode is not defined for full_matrices=True when the input is not "
        "square (input shape ",
        a.shape(), "), as the gradient is not");
  const Tensor &s = call.outputs[0], &u = call.outputs[1], &v = call.outputs[2];
  Tensor da_v = matmul(da, v), dat_u = matmul(da, u, true, false);
  Tensor p = matmul(u, da_v, true, false);
  Tensor s2 = square(s);
  Tensor diff = subtract(expand_dims(s2, -2), expand_dims(s2, -1));
  Tensor eye = linalg::band_part(ones_like(diff), 0, 0);
  Tensor f = divide(subtract(1.0, eye), add(diff, eye));
  Tensor pt = linalg::matrix_transpose(p);
  Tensor row_s = expand_dims(s, -2), col_s = expand_dims(s, -1);
  Tensor du = matmul(u, multiply(f, add(multiply(p, row_s), multiply(col_s, pt))));
  Tensor dv = matmul(v, multiply(f, add(multiply(col_s, p), multiply(pt, row_s))));
  const Tensor s_inv = expand_dims(reciprocal(s), -2);
  if (m == kUnknownDim || n == kUnknownDim || m > n)
    du = add(du, multiply(subtract(da_v, matmul(u, matmul(u, da_v, true, false))), s_inv));
  if (m == kUnknownDim || n == kUnknownDim || n > m)
    dv = add(dv, multiply(subtract(dat_u, matmul(v, matmul(v, dat_u, true, false))), s_inv));
  return {linalg::diag_part(p), du, dv};
}

const OpDef& kSvd = define_op({
    .name = "svd",
    .attr_names = {"full_matrices", "compute_uv"},
    .infer = infer_svd,
    .kernels = {svd_cpu},
    .gradient = svd_grad,
    .jvp = svd_jvp,
    .batch = detail::batch_leading_dims,
});

}  // namespace

namespace linalg {

std::vector<Tensor> svd(const Tensor& tensor, bool full_matrices, bool compute_uv, CallSite where) {
  return run_op_multi(kSvd, {tensor}, {full_matrices, compute_uv}, where);
}

}  // namespace linalg
}  // namespace ef
