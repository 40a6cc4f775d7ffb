// searchsorted: where values would be inserted into sorted rows to keep them sorted
// (tf.searchsorted). A binary search per value; NaN sorts after every number, as NumPy's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "eagerflow/ops/array.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum SearchAttr { kSide, kOutType };

void infer_searchsorted(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 2);
  const Tensor &seq = call.inputs[0], &values = call.inputs[1];
  detail::check_dtype(call, seq.dtype(), cpu::kNumericTypes, "sorted_sequence");
  detail::check_same_dtype(call, 0, 1, "sorted_sequence", "values");
  const std::string& side = call.attrs.get<std::string>(kSide);
  if (side != "left" && side != "right")
    fail(call.op.name, ": argument 'side' = \"", side, "\" must be \"left\" or \"right\"");
  const DType out_type = call.attrs.get_dtype(kOutType);
  if (out_type != DType::Int32 && out_type != DType::Int64)
    fail(call.op.name, ": argument 'out_type' must be int32 or int64, got ", name(out_type));
  const Shape &s = seq.shape(), &v = values.shape();
  if (s.rank() == 0 || v.rank() == 0)
    fail(call.op.name, ": arguments 'sorted_sequence' (shape ", s, ") and 'values' (shape ", v,
         ") must have at least one axis");
  bool match = s.rank() == v.rank();
  for (int i = 0; match && i + 1 < s.rank(); ++i)
    match = s[i] == v[i] || s[i] == kUnknownDim || v[i] == kUnknownDim;
  if (!match)
    fail(call.op.name, ": arguments 'sorted_sequence' (shape ", s, ") and 'values' (shape ", v,
         ") must have the same leading axes (all but the last)");
  if (out_type == DType::Int32 && s[s.rank() - 1] > std::numeric_limits<int32_t>::max())
    fail(call.op.name, ": sorted_sequence's last axis (", s[s.rank() - 1],
         ") is too long for out_type int32");
  Shape shape = v;
  for (int i = 0; i + 1 < s.rank(); ++i)
    if (shape[i] == kUnknownDim) shape.dims()[i] = s[i];
  out.add(out_type, shape);
}

// a < b with NaN after every number (and equal to NaN).
template <class T>
bool before(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

void searchsorted_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  const Tensor seq = detail::materialize(call.inputs[0]), values = detail::materialize(call.inputs[1]);
  const bool right = call.attrs.get<std::string>(kSide) == "right";
  const int64_t n = seq.shape()[seq.rank() - 1], m = values.shape()[values.rank() - 1];
  const int64_t rows = out.num_elements() / m;
  cpu::dispatch_in<cpu::kNumericTypes>(seq.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = cpu::typed_data<T>(seq);
    const T* v = cpu::typed_data<T>(values);
    auto search = [&](auto* dst) {
      parallel_for(rows * m, 30.0 + 2.0 * std::log2(double(n) + 1), [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          const T* row = s + (k / m) * n;
          const T x = v[k];
          // left: the first position whose element is not before x; right: the first
          // position whose element comes after x.
          const T* at = right ? std::upper_bound(row, row + n, x, [](T a, T b) { return before(a, b); })
                              : std::lower_bound(row, row + n, x, [](T a, T b) { return before(a, b); });
          dst[k] = static_cast<std::remove_pointer_t<decltype(dst)>>(at - row);
        }
      });
    };
    if (out.dtype() == DType::Int32)
      search(cpu::typed_output<int32_t>(out));
    else
      search(cpu::typed_output<int64_t>(out));
  });
}

const OpDef& kSearchSorted = define_op({
    .name = "searchsorted",
    .attr_names = {"side", "out_type"},
    .infer = infer_searchsorted,
    .kernels = {searchsorted_cpu},
    .not_differentiable = "its output holds integer positions",
    .batch = detail::batch_leading_dims,  // the sequences' and values' leading axes match
});

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, const std::string& side,
                    DType out_type, CallSite where) {
  return run_op(kSearchSorted, {sorted_sequence, values}, {side, out_type}, where);
}

}  // namespace ef
