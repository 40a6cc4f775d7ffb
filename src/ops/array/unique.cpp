// unique / unique_with_counts (tf.unique): the distinct elements of a 1-D tensor in the
// order they first appear, the index of each element's value among them, and (with
// counts) how often each occurs. The number of distinct values is known only from the
// values: eagerly inference counts them, in a graph the size is unknown until it runs.
// As TensorFlow's hash-based kernel: 0 and -0 are one value, and each NaN is its own.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "eagerflow/ops/array.h"
#include "ops/array/copy.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum UniqueAttr { kOutIdx };

// For each element of 1-D `x`, the position of its value among the distinct values
// (numbered in order of first appearance); returns the number of distinct values.
int64_t unique_positions(const Tensor& x, std::vector<int64_t>& position, std::vector<int64_t>& first) {
  Tensor dense = detail::host_values(x);
  const int64_t n = dense.num_elements();
  position.assign(static_cast<size_t>(n), 0);
  first.clear();
  cpu::dispatch_in<cpu::kAllTypes>(dense.dtype(), "unique", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = cpu::typed_data<T>(dense);
    std::unordered_map<T, int64_t> seen;
    for (int64_t i = 0; i < n; ++i) {
      T v = p[i];
      if constexpr (std::is_floating_point_v<T>) {
        if (v == T(0)) v = T(0);  // -0 is 0
        if (std::isnan(v)) {      // NaN != NaN: a value of its own
          position[static_cast<size_t>(i)] = static_cast<int64_t>(first.size());
          first.push_back(i);
          continue;
        }
      }
      auto [it, fresh] = seen.emplace(v, static_cast<int64_t>(first.size()));
      if (fresh) first.push_back(i);
      position[static_cast<size_t>(i)] = it->second;
    }
  });
  return static_cast<int64_t>(first.size());
}

template <bool WithCounts>
void infer_unique(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  const Tensor& x = call.inputs[0];
  if (x.rank() != 1) fail(call.op.name, ": argument 'x' must be 1-D, got shape ", x.shape());
  const DType out_idx = call.attrs.get_dtype(kOutIdx);
  if (out_idx != DType::Int32 && out_idx != DType::Int64)
    fail(call.op.name, ": argument 'out_idx' must be int32 or int64, got ", name(out_idx));
  if (out_idx == DType::Int32 && x.shape()[0] > std::numeric_limits<int32_t>::max())
    fail(call.op.name, ": x has ", x.shape()[0], " elements, too many for out_idx int32");
  int64_t distinct = kUnknownDim;
  if (!x.is_symbolic()) {
    std::vector<int64_t> position, first;
    distinct = unique_positions(x, position, first);
  }
  out.add(x.dtype(), Shape{distinct});
  out.add(out_idx, x.shape());
  if (WithCounts) out.add(out_idx, Shape{distinct});
}

template <bool WithCounts>
void unique_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor x = detail::materialize(call.inputs[0]);
  std::vector<int64_t> position, first;
  unique_positions(x, position, first);
  const size_t esize = size_of(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* y = static_cast<char*>(outputs[0].impl()->storage->data());
  for (size_t j = 0; j < first.size(); ++j) std::memcpy(y + j * esize, src + first[j] * esize, esize);
  cpu::dispatch_in<cpu::kIntTypes>(outputs[1].dtype(), call.op.name, [&](auto tag) {
    using I = typename decltype(tag)::type;
    I* idx = cpu::typed_output<I>(outputs[1]);
    for (size_t i = 0; i < position.size(); ++i) idx[i] = static_cast<I>(position[i]);
    if constexpr (WithCounts) {
      I* count = cpu::typed_output<I>(outputs[2]);
      std::fill(count, count + first.size(), I(0));
      for (int64_t p : position) ++count[p];
    }
  });
}

constexpr std::string_view kNoGradient =
    "its outputs are picked by comparing values (TensorFlow's is not differentiable either)";

const OpDef& kUnique = define_op({
    .name = "unique",
    .attr_names = {"out_idx"},
    .infer = infer_unique<false>,
    .kernels = {unique_cpu<false>},
    .not_differentiable = kNoGradient,
});

const OpDef& kUniqueWithCounts = define_op({
    .name = "unique_with_counts",
    .attr_names = {"out_idx"},
    .infer = infer_unique<true>,
    .kernels = {unique_cpu<true>},
    .not_differentiable = kNoGradient,
});

}  // namespace

UniqueResult unique(const Tensor& x, DType out_idx, CallSite where) {
  std::vector<Tensor> r = run_op_multi(kUnique, {x}, {out_idx}, where);
  return {r[0], r[1], Tensor()};
}

UniqueResult unique_with_counts(const Tensor& x, DType out_idx, CallSite where) {
  std::vector<Tensor> r = run_op_multi(kUniqueWithCounts, {x}, {out_idx}, where);
  return {r[0], r[1], r[2]};
}

}  // namespace ef
