// roll: elements shifted along axes, those pushed past the end coming back at the start
// (tf.roll). A copying kernel: the shifts fold into one source offset per row, and each
// row of the last axis is copied in at most two pieces.
#include <cstring>

#include "eagerflow/ops/array.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum RollAttr { kShift, kAxis };

// The net shift of each axis of x, in [0, size) (zero for axes not rolled), checking
// the attrs: as many shifts as axes (one shift and one axis when scalars), axes in range.
// Shifts of an axis named twice add up, as TensorFlow's. An axis of unknown size
// (graph mode) keeps its shift unreduced.
Dims net_shifts(const OpCall& call) {
  const Tensor& x = call.inputs[0];
  const Dims& shift = call.attrs.get_ints(kShift);
  const Dims& axis = call.attrs.get_ints(kAxis);
  if (shift.size() != axis.size())
    fail(call.op.name, ": arguments 'shift' and 'axis' must have the same length, got ", shift.size(),
         " shifts and ", axis.size(), " axes");
  if (x.rank() == 0 && !axis.empty())
    fail(call.op.name, ": argument 'input' is a scalar; it has no axis to roll");
  Dims net(static_cast<size_t>(x.rank()), 0);
  for (size_t i = 0; i < axis.size(); ++i) {
    const int a = normalize_axis(axis[i], x.rank(), call.op.name);
    const int64_t n = x.shape()[a];
    if (n == kUnknownDim) {
      net[a] += shift[i];
    } else if (n > 0) {
      net[a] = ((net[a] + shift[i] % n) % n + n) % n;
    }
  }
  return net;
}

void infer_roll(const OpCall& call, OutputMetas& out) {
  net_shifts(call);
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}

// Output element j along axis a comes from input element (j - shift) mod size.
void roll_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  const Tensor x = detail::materialize(call.inputs[0]);
  const Dims shift = net_shifts(call);
  const Shape& shape = x.shape();
  const int rank = shape.rank();
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out.impl()->storage->data());
  const size_t esize = size_of(x.dtype());
  if (rank == 0) {
    std::memcpy(dst, src, esize);
    return;
  }
  const int64_t last = shape[rank - 1], s = shift[static_cast<size_t>(rank - 1)];
  const int64_t rows = x.num_elements() / last;
  Dims strides(static_cast<size_t>(rank), 1);  // contiguous strides, in elements
  for (int i = rank - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  parallel_for(rows, static_cast<double>(last) * detail::kCopyElementNs + 5, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      // The source row: each leading index j comes from (j - shift) mod size.
      int64_t rest = r, from = 0;
      for (int i = rank - 2; i >= 0; --i) {
        const int64_t j = rest % shape[i];
        rest /= shape[i];
        from += ((j - shift[i] + shape[i]) % shape[i]) * strides[i];
      }
      // Along the last axis: [0, s) takes the source's tail, [s, last) its head.
      char* d = dst + r * last * static_cast<int64_t>(esize);
      const char* sr = src + from * static_cast<int64_t>(esize);
      std::memcpy(d, sr + (last - s) * esize, static_cast<size_t>(s) * esize);
      std::memcpy(d + s * esize, sr, static_cast<size_t>(last - s) * esize);
    }
  });
}

// Gradient: rolled back.
std::vector<Tensor> roll_grad(const GradCall& call) {
  Dims shift = call.forward.attrs.get_ints(kShift);
  for (int64_t& s : shift) s = -s;
  const Dims& axis = call.forward.attrs.get_ints(kAxis);
  return {roll(call.output_grads[0], std::vector<int64_t>(shift.begin(), shift.end()),
               std::vector<int64_t>(axis.begin(), axis.end()))};
}

const OpDef& kRoll = define_op({
    .name = "roll",
    .attr_names = {"shift", "axis"},
    .infer = infer_roll,
    .kernels = {roll_cpu},
    .gradient = roll_grad,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = detail::jvp_linear<>,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axes(call, 1); },
});

}  // namespace

Tensor roll(const Tensor& input, const std::vector<int64_t>& shift, const std::vector<int64_t>& axis,
            CallSite where) {
  return run_op(kRoll, {input}, {Dims(shift.begin(), shift.end()), Dims(axis.begin(), axis.end())}, where);
}

}  // namespace ef
