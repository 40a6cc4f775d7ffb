#include "ops/batch_helpers.h"

#include <string>

#include "eagerflow/ops/array.h"
#include "eagerflow/runtime/dispatch.h"

namespace ef::detail {
namespace {

bool in_mask(uint64_t mask, size_t i) { return (mask >> std::min<size_t>(i, 63)) & 1; }

// The first axis of `t` (batch · rows) split into [batch, rows].
Tensor split_rows(const Tensor& t, int64_t batch, int64_t rows) {
  Dims dims{batch == kUnknownDim ? -1 : batch, rows == kUnknownDim ? -1 : rows};
  for (int i = 1; i < t.rank(); ++i) dims.push_back(t.shape()[i]);
  return reshape(t, Shape(dims));
}

}  // namespace

Tensor with_element_rank(const Tensor& t, int rank) {
  if (t.rank() >= rank + 1) return t;
  Dims dims{t.shape()[0]};
  for (int i = t.rank(); i < rank + 1; ++i) dims.push_back(1);
  for (int i = 1; i < t.rank(); ++i) dims.push_back(t.shape()[i]);
  return reshape(t, Shape(dims));
}

int element_rank(const BatchCall& call, size_t input) {
  return call.input(input).rank() - (call.is_batched(input) ? 1 : 0);
}

int64_t batched_axis(int64_t axis, int rank, std::string_view op) {
  return normalize_axis(axis, rank, op) + 1;
}

Tensor repeated_along_batch(const Tensor& t, int64_t batch, std::string_view what) {
  if (batch == kUnknownDim || !t.shape().is_fully_defined())
    fail<UnimplementedError>(
        "vectorized_map: ", what, " is the same for every element and must be repeated along ",
        "the batch, but the batch size or its shape (", t.shape(), ") is unknown while tracing");
  Dims dims{batch};
  for (int64_t d : t.shape().dims()) dims.push_back(d);
  return broadcast_to(expand_dims(t, 0), Shape(dims));
}

Tensor batched_input(const BatchCall& call, size_t input) {
  const Tensor& x = call.input(input);
  if (call.is_batched(input)) return x;
  return repeated_along_batch(x, call.batch_size,
                              std::string(call.call.op.name) + ": input " + std::to_string(input));
}

std::vector<Tensor> run_batched(const BatchCall& call, const std::vector<Tensor>& inputs,
                                const Attrs& attrs) {
  return run_op_multi(call.call.op, inputs, attrs, CallSite::current());
}

std::vector<Tensor> batch_broadcasting(const BatchCall& call) {
  int rank = 0;
  for (size_t i = 0; i < call.call.inputs.size(); ++i) rank = std::max(rank, element_rank(call, i));
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < call.call.inputs.size(); ++i)
    inputs.push_back(call.is_batched(i) ? with_element_rank(call.input(i), rank) : call.input(i));
  return run_batched(call, inputs, call.attrs());
}

std::vector<Tensor> batch_leading_dims(const BatchCall& call) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < call.call.inputs.size(); ++i) inputs.push_back(batched_input(call, i));
  return run_batched(call, inputs, call.attrs());
}

std::vector<Tensor> batch_shifting_axis(const BatchCall& call, size_t axis_attr) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < call.call.inputs.size(); ++i) inputs.push_back(batched_input(call, i));
  Attrs attrs = call.attrs();
  attrs.set(axis_attr, batched_axis(attrs.get_int(axis_attr), element_rank(call, 0), call.call.op.name));
  return run_batched(call, inputs, attrs);
}

std::vector<Tensor> batch_shifting_axes(const BatchCall& call, size_t axes_attr) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < call.call.inputs.size(); ++i) inputs.push_back(batched_input(call, i));
  Attrs attrs = call.attrs();
  Dims axes;
  for (int64_t a : attrs.get_ints(axes_attr))
    axes.push_back(batched_axis(a, std::max(element_rank(call, 0), 1), call.call.op.name));
  attrs.set(axes_attr, std::move(axes));
  return run_batched(call, inputs, attrs);
}

std::vector<Tensor> batch_merging_rows(const BatchCall& call, uint64_t rows, int sizes_attr) {
  std::vector<Tensor> inputs;
  int64_t per_element = kUnknownDim;
  for (size_t i = 0; i < call.call.inputs.size(); ++i) {
    if (!in_mask(rows, i)) {
      if (call.is_batched(i)) return {};
      inputs.push_back(call.input(i));
      continue;
    }
    const Tensor x = batched_input(call, i);
    if (x.rank() < 2) return {};
    per_element = x.shape()[1];
    // The merged size written out where known (a -1 cannot be inferred from a zero-size axis).
    const bool known = x.shape()[0] != kUnknownDim && x.shape()[1] != kUnknownDim;
    Dims dims{known ? x.shape()[0] * x.shape()[1] : -1};
    for (int d = 2; d < x.rank(); ++d) dims.push_back(x.shape()[d]);
    inputs.push_back(reshape(x, Shape(dims)));
  }
  if (per_element == kUnknownDim && call.batch_size == kUnknownDim) return {};
  Attrs attrs = call.attrs();
  if (sizes_attr >= 0) {
    Dims sizes = attrs.get_ints(static_cast<size_t>(sizes_attr));
    if (sizes.empty() || call.batch_size == kUnknownDim) return {};
    if (sizes[0] != kUnknownDim) sizes[0] *= call.batch_size;
    attrs.set(static_cast<size_t>(sizes_attr), std::move(sizes));
  }
  std::vector<Tensor> outputs = run_batched(call, inputs, attrs);
  for (Tensor& out : outputs) out = split_rows(out, call.batch_size, per_element);
  return outputs;
}

std::vector<Tensor> batch_random(const BatchCall& call) {
  if (call.batch_size == kUnknownDim || !call.call.inputs.empty()) return {};
  Attrs attrs = call.attrs();
  Dims shape = attrs.get_ints(0);
  shape.insert(0, call.batch_size);
  attrs.set(0, std::move(shape));
  return run_batched(call, {}, attrs);
}

}  // namespace ef::detail
