// bincount (tf.math.bincount): output[v] sums the weights (or counts the occurrences) of
// the values v of an integer array. Its length, max(arr) + 1 (at least minlength, at most
// maxlength), is known only from the values: unknown while building a graph.
#include <algorithm>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "ops/array/copy.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum BincountAttr { kMinLength, kMaxLength };

std::vector<int64_t> values_of(const Tensor& arr) {
  Tensor dense = detail::host_values(arr);
  std::vector<int64_t> out(static_cast<size_t>(dense.num_elements()));
  cpu::dispatch_in<cpu::kIntTypes>(dense.dtype(), "bincount", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = cpu::typed_data<T>(dense);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(p[i]);
  });
  return out;
}

// The output length for these values, checking that none is negative (TensorFlow's rule).
int64_t bincount_length(const OpCall& call, const std::vector<int64_t>& values) {
  int64_t top = -1;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0)
      fail(call.op.name, ": arr[", i, "] = ", values[i], " is negative; values must be >= 0");
    top = std::max(top, values[i]);
  }
  int64_t length = std::max(top + 1, call.attrs.get_int(kMinLength));
  const int64_t maxlength = call.attrs.get_int(kMaxLength);
  if (maxlength >= 0) length = std::min(length, maxlength);
  return length;
}

void infer_bincount(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 2);
  const Tensor &arr = call.inputs[0], &weights = call.inputs[1];
  detail::check_dtype(call, arr.dtype(), cpu::kIntTypes, "arr");
  detail::check_dtype(call, weights.dtype(), cpu::kNumericTypes, "weights");
  const Shape &a = arr.shape(), &w = weights.shape();
  bool match = a.rank() == w.rank();
  for (int i = 0; match && i < a.rank(); ++i)
    match = a[i] == w[i] || a[i] == kUnknownDim || w[i] == kUnknownDim;
  if (!match) fail(call.op.name, ": argument 'weights' (shape ", w, ") must have the shape of arr (", a, ")");
  if (call.attrs.get_int(kMinLength) < 0)
    fail(call.op.name, ": argument 'minlength' must be non-negative, got ", call.attrs.get_int(kMinLength));
  out.add(weights.dtype(), Shape{arr.is_symbolic() ? kUnknownDim : bincount_length(call, values_of(arr))});
}

void bincount_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  const std::vector<int64_t> values = values_of(call.inputs[0]);
  const int64_t length = bincount_length(call, values);  // checked again: a graph may feed any values
  if (length != out.shape()[0])
    fail<InternalError>(call.op.name, ": output of length ", out.shape()[0], " for ", length, " bins");
  const Tensor weights = detail::materialize(call.inputs[1]);
  cpu::dispatch_in<cpu::kNumericTypes>(out.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = cpu::typed_output<T>(out);
    std::fill(dst, dst + length, T(0));
    const T* w = values.empty() ? nullptr : cpu::typed_data<T>(weights);
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i] < length) dst[values[i]] += w[i];  // values >= maxlength are dropped
  });
}

// Each weight gets the gradient of its bin; weights whose value was dropped (>= maxlength) get 0.
std::vector<Tensor> bincount_grad(const GradCall& call) {
  const Tensor &arr = call.forward.inputs[0], &g = call.output_grads[0];
  const int64_t maxlength = call.forward.attrs.get_int(kMaxLength);
  if (maxlength < 0) return {Tensor(), gather(g, arr)};
  if (maxlength == 0) return {Tensor(), zeros_like(call.forward.inputs[1])};
  // Some value reached maxlength when one was dropped, so bins [0, maxlength) all exist then.
  Tensor kept = less(arr, cast(constant(maxlength), arr.dtype()));
  Tensor picked = gather(g, where(kept, arr, zeros_like(arr)));
  return {Tensor(), where(kept, picked, zeros_like(picked))};
}

const OpDef& kBincount = define_op({
    .name = "bincount",
    .attr_names = {"minlength", "maxlength"},
    .infer = infer_bincount,
    .kernels = {bincount_cpu},
    .gradient = bincount_grad,
    .gradient_uses = {.inputs = value_bit(0), .outputs = kNoValues},
    .jvp = detail::jvp_linear<value_bit(1)>,
});

}  // namespace

Tensor bincount(const Tensor& arr, const std::optional<Tensor>& weights, int64_t minlength,
                std::optional<int64_t> maxlength, DType dtype, CallSite where) {
  const Tensor w = weights ? *weights : cast(ones_like(arr, where), dtype, where);
  return run_op(kBincount, {arr, w}, {minlength, maxlength.value_or(-1)}, where);
}

}  // namespace ef
