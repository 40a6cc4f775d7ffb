// linalg::band_part: keeps a band around the diagonal of each matrix and zeroes the rest
// (tf.linalg.band_part). Lower and upper triangles, the diagonal and the masks the
// matrix gradients need are all bands. Its gradient is the same band of the gradient.
#include "backends/cpu/elementwise.h"
#include "eagerflow/ops/linalg.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;

enum BandPartAttr { kNumLower, kNumUpper };

void infer_band_part(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), kAllTypes, "input");
  if (x.rank() < 2)
    fail(call.op.name, ": argument 'input' must have rank >= 2 (a matrix, or a batch of them), got shape ",
         x.shape());
  out.add(x.dtype(), x.shape());
}

template <class T>
void band_part_typed(const OpCall& call, Tensor& out) {
  const int64_t lower = call.attrs.get_int(kNumLower), upper = call.attrs.get_int(kNumUpper);
  const Tensor x = call.inputs[0].contiguous();
  const int64_t m = out.shape().dim(-2), n = out.shape().dim(-1);
  const T* src = typed_data<T>(x);
  T* dst = typed_output<T>(out);
  const int64_t rows = m == 0 ? 0 : out.num_elements() / n;
  parallel_for(rows, static_cast<double>(n) * 0.5, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % m;
      // Row i keeps columns [i - lower, i + upper] (all of one side when negative).
      const int64_t j0 = lower < 0 ? 0 : std::clamp<int64_t>(i - lower, 0, n);
      const int64_t j1 = upper < 0 ? n : std::clamp<int64_t>(i + upper + 1, j0, n);
      const T* s = src + r * n;
      T* d = dst + r * n;
      std::fill(d, d + j0, T(0));
      std::copy(s + j0, s + j1, d + j0);
      std::fill(d + j1, d + n, T(0));
    }
  });
}

void band_part_cpu(const OpCall& call, std::span<Tensor> outputs) {
  dispatch_in<kAllTypes>(outputs[0].dtype(), call.op.name,
                         [&](auto tag) { band_part_typed<typename decltype(tag)::type>(call, outputs[0]); });
}

std::vector<Tensor> band_part_grad(const GradCall& call) {
  return {linalg::band_part(call.output_grads[0], call.forward.attrs.get_int(kNumLower),
                            call.forward.attrs.get_int(kNumUpper))};
}

const OpDef& kBandPart = define_op({
    .name = "band_part",
    .attr_names = {"num_lower", "num_upper"},
    .infer = infer_band_part,
    .kernels = {band_part_cpu},
    .gradient = band_part_grad,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = detail::jvp_linear<>,
    .batch = detail::batch_leading_dims,
});

}  // namespace

namespace linalg {

Tensor band_part(const Tensor& input, int64_t num_lower, int64_t num_upper, CallSite where) {
  return run_op(kBandPart, {input}, {num_lower, num_upper}, where);
}

}  // namespace linalg
}  // namespace ef
