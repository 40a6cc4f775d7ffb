// linalg::eigh: the eigenvalues (ascending) and orthonormal eigenvectors of each
// symmetric matrix of a batch (tf.linalg.eigh; only A's lower triangle is read), by
// LAPACK's divide and conquer syevd. Eigenvector signs are LAPACK's.
//
// Its gradient is TensorFlow's SelfAdjointEigV2Grad (Seeger et al. 2017): with
// F_ij = 1 / (e_j - e_i) off the diagonal, G = V (diag(de) + F * (V^T dV)) V^T, and
// since only the lower triangle is read, dA = tril(G + G^T) with the diagonal halved.
// Degenerate (repeated) eigenvalues make F infinite, so the gradient through the
// eigenvectors is inf/nan there, as in TensorFlow and PyTorch (the eigenvectors of a
// repeated eigenvalue are only defined up to a rotation). eigvalsh is the same op
// without the vectors (TensorFlow's compute_v = false): its gradient V diag(de) V^T
// has no such term and stays finite.
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

enum EighAttr { kComputeV };

void infer_eigh(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  check_matrices(call.op.name, call.inputs[0], "tensor", true);
  const Shape& s = call.inputs[0].shape();
  const int64_t n = std::max(s.dim(-2), s.dim(-1));
  Dims e = batch_shape(s).dims();
  e.push_back(n);
  Dims v = e;
  v.push_back(n);
  out.add(call.inputs[0].dtype(), Shape(std::move(e)));
  if (call.attrs.get_bool(kComputeV)) out.add(call.inputs[0].dtype(), Shape(std::move(v)));
}

template <class T>
void eigh_typed(const OpCall& call, std::span<Tensor> outputs) {
  const bool vectors = call.attrs.get_bool(kComputeV);
  const char jobz = vectors ? 'V' : 'N';
  const int64_t n = outputs[0].shape().dim(-1);
  const Shape batch = batch_shape(call.inputs[0].shape());
  const int64_t batches = batch.num_elements();
  if (batches == 0 || n == 0) return;
  check_lapack_size(call, n);
  const BatchOffsets at(call.inputs[0], batch);
  const T* src = input_data<T>(call, 0);
  T *e_data = cpu::typed_output<T>(outputs[0]),
    *v_data = vectors ? cpu::typed_output<T>(outputs[1]) : nullptr;
  const int ni = static_cast<int>(n);
  cpu::init_blas_threads();
  const double nd = static_cast<double>(n);
  parallel_for(batches, 4 * nd * nd * nd + 50, [&](int64_t begin, int64_t end) {
    std::vector<T> a(static_cast<size_t>(n * n));
    T work_size = 0;
    int iwork_size = 0;
    syevd(jobz, 'U', ni, a.data(), ni, e_data, &work_size, -1, &iwork_size, -1);
    std::vector<T> work(static_cast<size_t>(std::max<T>(work_size, 1)));
    std::vector<int> iwork(static_cast<size_t>(std::max(iwork_size, 1)));
    for (int64_t b = begin; b < end; ++b) {
      // Note [row-major LAPACK]: the buffer of A is column-major A^T, whose upper
      // triangle is A's lower one.
      copy_matrix(src + at(b), at.row_stride(), at.col_stride(), n, n, a.data(), n);
      const int info = syevd(jobz, 'U', ni, a.data(), ni, e_data + b * n, work.data(),
                             static_cast<int>(work.size()), iwork.data(), static_cast<int>(iwork.size()));
      if (info > 0)
        fail(call.op.name, ": the eigenvalue algorithm did not converge for matrix ", b,
             " of the batch of shape ", call.inputs[0].shape());
      if (!vectors) continue;
      // The eigenvectors are the columns of the column-major result.
      T* v = v_data + b * n * n;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) v[i * n + j] = a[static_cast<size_t>(i + j * n)];
    }
  });
}

void eigh_cpu(const OpCall& call, std::span<Tensor> outputs) {
  cpu::dispatch_in<kLapackTypes>(outputs[0].dtype(), call.op.name,
                                 [&](auto tag) { eigh_typed<typename decltype(tag)::type>(call, outputs); });
}

// The gradient for A's lower triangle of G = V inner V^T: tril(G + G^T), diagonal halved.
Tensor lower_triangle_grad(const Tensor& v, const Tensor& inner) {
  Tensor g = matmul(v, matmul(inner, v, false, true));
  Tensor lower = linalg::band_part(add(g, linalg::matrix_transpose(g)), -1, 0);
  return subtract(lower, multiply(linalg::band_part(lower, 0, 0), 0.5));
}

std::vector<Tensor> eigh_grad(const GradCall& call) {
  const Tensor& de = call.output_grads[0];
  if (!call.forward.attrs.get_bool(kComputeV)) {
    // The vectors again, from the decomposition that has them (as TensorFlow).
    Tensor v = linalg::eigh(call.forward.inputs[0]).second;
    return {lower_triangle_grad(v, linalg::diag(de))};
  }
  const Tensor &e = call.outputs[0], &v = call.outputs[1], &dv = call.output_grads[1];
  Tensor inner;  // diag(de) + F * (V^T dV)
  if (de.defined()) inner = linalg::diag(de);
  if (dv.defined()) {
    // F_ij = 1 / (e_j - e_i), 0 on the diagonal: the identity keeps the diagonal's
    // division finite, and the mask then zeroes it.
    Tensor diff = subtract(expand_dims(e, -2), expand_dims(e, -1));
    Tensor eye = linalg::band_part(ones_like(diff), 0, 0);
    Tensor f = divide(subtract(1.0, eye), add(diff, eye));
    Tensor term = multiply(f, matmul(v, dv, true, false));
    inner = inner.defined() ? add(inner, term) : term;
  }
  if (!inner.defined()) return {Tensor()};
  return {lower_triangle_grad(v, inner)};
}

// With S the symmetric matrix the kernel reads (the lower triangle mirrored, as the
// gradient's lower_triangle_grad transposes) and M = V^T S V: de = diag(M) and
// dV = V (F * M), F as in eigh_grad.
std::vector<Tensor> eigh_jvp(const JvpCall& call) {
  const Tensor& t = call.input_tangents[0];
  const bool compute_v = call.forward.attrs.get_bool(kComputeV);
  const Tensor& e = call.outputs[0];
  const Tensor v = compute_v ? call.outputs[1] : linalg::eigh(call.forward.inputs[0]).second;
  Tensor lower = linalg::band_part(t, -1, 0);
  Tensor s = subtract(add(lower, linalg::matrix_transpose(lower)), linalg::band_part(t, 0, 0));
  Tensor m = matmul(v, matmul(s, v), true, false);
  Tensor de = linalg::diag_part(m);
  if (!compute_v) return {de};
  Tensor diff = subtract(expand_dims(e, -2), expand_dims(e, -1));
  Tensor eye = linalg::band_part(ones_like(diff), 0, 0);
  Tensor f = divide(subtract(1.0, eye), add(diff, eye));
  return {de, matmul(v, multiply(f, m))};
}

const OpDef& kEigh = define_op({
    .name = "eigh",
    .attr_names = {"compute_v"},
    .infer = infer_eigh,
    .kernels = {eigh_cpu},
    .gradient = eigh_grad,
    // gradient_uses: the default (every value): compute_v = false reads the input, true the outputs.
    .jvp = eigh_jvp,
    .batch = detail::batch_leading_dims,
});

}  // namespace

namespace linalg {

std::pair<Tensor, Tensor> eigh(const Tensor& tensor, CallSite where) {
  std::vector<Tensor> out = run_op_multi(kEigh, {tensor}, {true}, where);
  return {out[0], out[1]};
}

Tensor eigvalsh(const Tensor& tensor, CallSite where) {
  return detail::with_call_site(where, [&] {
    check_matrices("eigvalsh", tensor, "tensor", true);
    return run_op(kEigh, {tensor}, {false}, where);
  });
}

}  // namespace linalg
}  // namespace ef
