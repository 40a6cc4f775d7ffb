// linalg::slogdet: the sign and the log of the absolute value of the determinant of each
// square matrix of a batch (tf.linalg.slogdet), from its LU factorization (LAPACK
// getrf): the product of U's diagonal and the parity of the row interchanges. A
// singular matrix gives sign 0 and log|det| = -inf; a 0 x 0 matrix sign 1 and 0.
#include <cmath>
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/linalg/lapack.h"

namespace ef {
namespace {

using namespace linalg_detail;

void infer_slogdet(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  check_matrices(call.op.name, call.inputs[0], "input", true);
  const Shape batch = batch_shape(call.inputs[0].shape());
  out.add(call.inputs[0].dtype(), batch);
  out.add(call.inputs[0].dtype(), batch);
}

template <class T>
void slogdet_typed(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& a = call.inputs[0];
  const int64_t n = a.shape().dim(-1), batches = outputs[0].num_elements();
  check_lapack_size(call, n);
  const BatchOffsets at(a, outputs[0].shape());
  const T* src = input_data<T>(call, 0);
  T *sign = cpu::typed_output<T>(outputs[0]), *logabs = cpu::typed_output<T>(outputs[1]);
  cpu::init_blas_threads();
  const double nd = static_cast<double>(n);
  parallel_for(batches, nd * nd * nd * 0.2 + 50, [&](int64_t begin, int64_t end) {
    std::vector<T> lu(static_cast<size_t>(n * n));
    std::vector<int> ipiv(static_cast<size_t>(n));
    for (int64_t b = begin; b < end; ++b) {
      // A zero pivot leaves a zero on U's diagonal: sign 0, log 0 = -inf.
      if (n > 0) lu_factor(src, at, b, n, lu.data(), ipiv.data());
      T s = 1, l = 0;
      for (int64_t i = 0; i < n; ++i) {
        const T u = lu[static_cast<size_t>(i * n + i)];
        if (ipiv[static_cast<size_t>(i)] != i + 1) s = -s;
        if (u < 0) s = -s;
        if (u == 0) s = 0;
        l += std::log(std::abs(u));
      }
      sign[b] = s;
      logabs[b] = l;
    }
  });
}

void slogdet_cpu(const OpCall& call, std::span<Tensor> outputs) {
  cpu::dispatch_in<kLapackTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    slogdet_typed<typename decltype(tag)::type>(call, outputs);
  });
}

// d log|det A| = tr(A^-1 dA): the gradient is A^-T times the incoming gradient of
// log|det A| (the sign is piecewise constant). A^-T through inv (solve), so it has gradients.
std::vector<Tensor> slogdet_grad(const GradCall& call) {
  const Tensor &a = call.forward.inputs[0], &g = call.output_grads[1];
  if (!g.defined()) return {Tensor()};
  return {multiply(linalg::inv(a, true), expand_dims(expand_dims(g, -1), -1))};
}

// d log|det A| = trace(A^-1 t_A) = sum(A^-T * t_A); the sign is piecewise constant.
std::vector<Tensor> slogdet_jvp(const JvpCall& call) {
  const Tensor& a = call.forward.inputs[0];
  return {Tensor(), reduce_sum(multiply(linalg::inv(a, true), call.input_tangents[0]), Axes({-2, -1}))};
}

const OpDef& kSlogdet = define_op({
    .name = "slogdet",
    .infer = infer_slogdet,
    .kernels = {slogdet_cpu},
    .gradient = slogdet_grad,
    .gradient_uses = kGradientReadsInputs,
    .jvp = slogdet_jvp,
    .batch = detail::batch_leading_dims,
});

}  // namespace

namespace linalg {

std::pair<Tensor, Tensor> slogdet(const Tensor& input, CallSite where) {
  std::vector<Tensor> out = run_op_multi(kSlogdet, {input}, {}, where);
  return {out[0], out[1]};
}

}  // namespace linalg
}  // namespace ef
