// linalg::set_diag: each matrix of `input` with its main diagonal replaced by
// `diagonal` (tf.linalg.set_diag with k = 0). Its gradient is the incoming gradient with
// a zero diagonal for `input`, and that gradient's diagonal for `diagonal`.
#include <algorithm>

#include "backends/cpu/elementwise.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/linalg/lapack.h"

namespace ef {
namespace {

using namespace cpu;

void infer_set_diag(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 2);
  const Tensor &x = call.inputs[0], &d = call.inputs[1];
  linalg_detail::check_matrices(call.op.name, x, "input", false, kAllTypes);
  detail::check_same_dtype(call, 0, 1, "input", "diagonal");
  const Shape &xs = x.shape(), &ds = d.shape();
  const int64_t m = xs.dim(-2), n = xs.dim(-1);
  const int64_t k = (m == kUnknownDim || n == kUnknownDim) ? kUnknownDim : std::min(m, n);
  bool ok = ds.rank() == xs.rank() - 1;
  for (int i = 0; ok && i < ds.rank(); ++i) {
    const int64_t want = i == ds.rank() - 1 ? k : xs[i];
    ok = want == kUnknownDim || ds[i] == kUnknownDim || ds[i] == want;
  }
  if (!ok)
    fail(call.op.name, ": argument 'diagonal' of shape ", ds, " does not fit 'input' of shape ", xs,
         ": it must have input's batch dimensions and min(rows, columns) entries");
  out.add(x.dtype(), xs);
}

template <class T>
void set_diag_typed(const OpCall& call, Tensor& out) {
  const Tensor x = call.inputs[0].contiguous(), d = call.inputs[1].contiguous();
  const int64_t m = out.shape().dim(-2), n = out.shape().dim(-1), k = std::min(m, n);
  const T *src = typed_data<T>(x), *diag = typed_data<T>(d);
  T* dst = typed_output<T>(out);
  const int64_t total = out.num_elements();
  std::copy(src, src + total, dst);
  if (total == 0) return;
  const int64_t batches = total / (m * n);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < k; ++i) dst[b * m * n + i * n + i] = diag[b * k + i];
}

void set_diag_cpu(const OpCall& call, std::span<Tensor> outputs) {
  dispatch_in<kAllTypes>(outputs[0].dtype(), call.op.name,
                         [&](auto tag) { set_diag_typed<typename decltype(tag)::type>(call, outputs[0]); });
}

std::vector<Tensor> set_diag_grad(const GradCall& call) {
  const Tensor& g = call.output_grads[0];
  return {call.needs(0) ? subtract(g, linalg::band_part(g, 0, 0)) : Tensor(),
          call.needs(1) ? linalg::diag_part(g) : Tensor()};
}

const OpDef& kSetDiag = define_op({
    .name = "set_diag",
    .infer = infer_set_diag,
    .kernels = {set_diag_cpu},
    .gradient = set_diag_grad,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = detail::jvp_linear<>,
    .batch = detail::batch_leading_dims,
});

}  // namespace

namespace linalg {

Tensor set_diag(const Tensor& input, const Tensor& diagonal, CallSite where) {
  return run_op(kSetDiag, {input, diagonal}, {}, where);
}

}  // namespace linalg
}  // namespace ef
