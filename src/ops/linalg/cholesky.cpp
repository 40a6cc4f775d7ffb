// linalg::cholesky: the lower-triangular L with L L^T = A for each symmetric positive
// definite matrix A of a batch (LAPACK potrf; only A's lower triangle is read, as in
// TensorFlow). Its gradient is Murray's (2016), written with triangular_solve.
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/linalg/lapack.h"

namespace ef {
namespace {

using namespace linalg_detail;

void infer_cholesky(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  check_matrices(call.op.name, call.inputs[0], "input", true);
  const Shape& s = call.inputs[0].shape();
  // A square result even when only one of the two dimensions is known.
  Dims dims = s.dims();
  const int64_t n = std::max(s.dim(-2), s.dim(-1));
  dims[s.rank() - 2] = dims[s.rank() - 1] = n;
  out.add(call.inputs[0].dtype(), Shape(std::move(dims)));
}

template <class T>
void cholesky_typed(const OpCall& call, Tensor& out) {
  const int64_t n = out.shape().dim(-1);
  if (out.num_elements() == 0) return;
  check_lapack_size(call, n);
  const int64_t batches = out.num_elements() / (n * n);
  const BatchOffsets offsets(call.inputs[0], batch_shape(out.shape()));
  const T* src = input_data<T>(call, 0);
  T* dst = cpu::typed_output<T>(out);
  cpu::init_blas_threads();
  const double ns = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) * 0.1 + 50;
  parallel_for(batches, ns, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      T* l = dst + b * n * n;
      copy_matrix(src + offsets(b), offsets.row_stride(), offsets.col_stride(), n, n, l, n);
      // Note [row-major LAPACK]: 'U' of the row-major buffer is A's lower triangle.
      const int info = potrf('U', static_cast<int>(n), l, static_cast<int>(n));
      if (info > 0)
        fail(call.op.name, ": the input is not positive definite (the leading minor of order ", info,
             " of matrix ", b,
             " of the batch is not positive); the Cholesky decomposition was not successful");
      for (int64_t i = 0; i < n; ++i) std::fill(l + i * n + i + 1, l + (i + 1) * n, T(0));
    }
  });
}

void cholesky_cpu(const OpCall& call, std::span<Tensor> outputs) {
  cpu::dispatch_in<kLapackTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    cholesky_typed<typename decltype(tag)::type>(call, outputs[0]);
  });
}

// dA = sym(L^-T Phi(L^T dL) L^-1), Phi taking the lower triangle with the diagonal
// halved, and sym(X) = (X + X^T) / 2 (Murray 2016, eq. 10; as TensorFlow and PyTorch).
// The gradient is symmetric: perturbations of A are taken to keep it symmetric.
std::vector<Tensor> cholesky_grad(const GradCall& call) {
  const Tensor &l = call.outputs[0], &g = call.output_grads[0];
  Tensor p = linalg::band_part(matmul(l, g, true, false), -1, 0);
  p = subtract(p, multiply(linalg::band_part(p, 0, 0), 0.5));
  // L^-T P L^-1 = (L^-T (L^-T P)^T)^T: two solves against L^T.
  Tensor left = linalg::triangular_solve(l, p, true, true);
  Tensor both =
      linalg::matrix_transpose(linalg::triangular_solve(l, linalg::matrix_transpose(left), true, true));
  return {multiply(add(both, linalg::matrix_transpose(both)), 0.5)};
}

// dL = L Phi(L^-1 S L^-T), Phi the lower triangle with half the diagonal, for S the
// symmetric part of t_A (the gradient is symmetric, so only that part moves L).
std::vector<Tensor> cholesky_jvp(const JvpCall& call) {
  const Tensor& l = call.outputs[0];
  const Tensor& t = call.input_tangents[0];
  Tensor s = multiply(add(t, linalg::matrix_transpose(t)), 0.5);
  Tensor left = linalg::triangular_solve(l, s, true, false);  // L^-1 S
  Tensor m =
      linalg::matrix_transpose(linalg::triangular_solve(l, linalg::matrix_transpose(left), true, false));
  Tensor phi = subtract(linalg::band_part(m, -1, 0), multiply(linalg::band_part(m, 0, 0), 0.5));
  return {matmul(l, phi)};
}

const OpDef& kCholesky = define_op({
    .name = "cholesky",
    .infer = infer_cholesky,
    .kernels = {cholesky_cpu},
    .gradient = cholesky_grad,
    .gradient_uses = kGradientReadsOutputs,
    .jvp = cholesky_jvp,
    .batch = detail::batch_leading_dims,
});

}  // namespace

namespace linalg {

Tensor cholesky(const Tensor& input, CallSite where) { return run_op(kCholesky, {input}, {}, where); }

}  // namespace linalg
}  // namespace ef
