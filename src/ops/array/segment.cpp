// Segment reductions (tf.math.segment_* and unsorted_segment_*): rows of data that share
// a segment id are summed, or their maximum or minimum taken, into row `id` of the
// output. The sorted forms take 1-D non-decreasing ids and make as many rows as the last
// id + 1, a size known only from the values (unknown while building a graph); the
// unsorted forms take ids shaped like data's leading axes and num_segments rows, and
// drop rows whose id is negative. The means are composites (sum / count).
#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "eagerflow/core/dtype_range.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum SegmentAttr { kNumSegments };

enum class Reducer { Sum, Max, Min };

// The ids of a CPU copy of `ids`, as int64.
std::vector<int64_t> id_values(const Tensor& ids) {
  Tensor dense = detail::host_values(ids);
  std::vector<int64_t> out(static_cast<size_t>(dense.num_elements()));
  cpu::dispatch_in<cpu::kIntTypes>(dense.dtype(), "segment_ids", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = cpu::typed_data<T>(dense);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(p[i]);
  });
  return out;
}

// "[1, 2]": the position of flat element `flat` of a tensor of `shape`.
std::string position(const Shape& shape, int64_t flat) {
  Dims index(shape.rank(), 0);
  for (int i = shape.rank() - 1; i >= 0; --i) {
    index[i] = shape[i] > 0 ? flat % shape[i] : 0;
    flat = shape[i] > 0 ? flat / shape[i] : 0;
  }
  return Shape(index).to_string();
}

// The number of rows of a sorted segment reduction: the last id + 1, after checking the
// ids are non-negative and non-decreasing (as TensorFlow's CPU kernels do).
int64_t sorted_segment_count(std::string_view op, const std::vector<int64_t>& ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0) fail(op, ": segment_ids[", i, "] = ", ids[i], " is negative");
    if (i > 0 && ids[i] < ids[i - 1])
      fail(op, ": segment_ids must be sorted (non-decreasing), but segment_ids[", i - 1, "] = ", ids[i - 1],
           " > segment_ids[", i, "] = ", ids[i]);
  }
  return ids.empty() ? 0 : ids.back() + 1;
}

template <bool Sorted>
void infer_segment(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 2);
  const Tensor &data = call.inputs[0], &ids = call.inputs[1];
  detail::check_dtype(call, data.dtype(), cpu::kNumericTypes, "data");
  detail::check_dtype(call, ids.dtype(), cpu::kIntTypes, "segment_ids");
  const Shape &ds = data.shape(), &is = ids.shape();
  if (Sorted && is.rank() != 1) fail(call.op.name, ": argument 'segment_ids' must be 1-D, got shape ", is);
  bool match = is.rank() <= ds.rank();
  for (int i = 0; match && i < is.rank(); ++i)
    match = is[i] == ds[i] || is[i] == kUnknownDim || ds[i] == kUnknownDim;
  if (!match)
    fail(call.op.name, ": argument 'segment_ids' (shape ", is,
         ") must have the shape of data's leading axes (data shape ", ds, ")");
  int64_t rows = kUnknownDim;
  if (Sorted) {
    if (!ids.is_symbolic()) rows = sorted_segment_count(call.op.name, id_values(ids));
  } else {
    rows = call.attrs.get_int(kNumSegments);
    if (rows < 0) fail(call.op.name, ": argument 'num_segments' must be non-negative, got ", rows);
  }
  Dims dims;
  dims.push_back(rows);
  for (int i = is.rank(); i < ds.rank(); ++i) dims.push_back(ds[i]);
  Shape shape(dims);
  validate_shape(shape, call.op.name, "output", size_of(data.dtype()), /*allow_unknown=*/true);
  out.add(data.dtype(), shape);
}

// The value of an empty segment, as TensorFlow's: 0 for sums and for the sorted max/min,
// the lowest (max) or highest (min) finite number for the unsorted forms.
template <class T>
T empty_value(Reducer r, bool sorted) {
  if (r == Reducer::Sum || sorted) return T(0);
  return r == Reducer::Max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
}

template <Reducer R, bool Sorted>
void segment_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  const Tensor data = detail::materialize(call.inputs[0]);
  const std::vector<int64_t> ids = id_values(call.inputs[1]);
  const int64_t rows = out.shape()[0];
  if (Sorted) sorted_segment_count(call.op.name, ids);  // checked again: a graph may feed any ids
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= rows)
      fail(call.op.name, ": segment_ids", position(call.inputs[1].shape(), static_cast<int64_t>(i)), " = ",
           ids[i], " is not in [0, num_segments = ", rows, ")");
  if (out.num_elements() == 0) return;
  const int64_t inner = rows == 0 ? 0 : out.num_elements() / rows;
  cpu::dispatch_in<cpu::kNumericTypes>(data.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = cpu::typed_data<T>(data);
    T* dst = cpu::typed_output<T>(out);
    // Columns split across threads; each walks all the rows of its columns.
    parallel_for(inner, static_cast<double>(ids.size()) + 1, [&](int64_t c0, int64_t c1) {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = c0; c < c1; ++c) dst[r * inner + c] = empty_value<T>(R, Sorted);
      std::vector<char> started(static_cast<size_t>(rows), 0);
      for (size_t i = 0; i < ids.size(); ++i) {
        const int64_t r = ids[i];
        if (r < 0) continue;  // dropped (unsorted forms)
        const T* s = src + static_cast<int64_t>(i) * inner;
        T* d = dst + r * inner;
        const bool first = !started[static_cast<size_t>(r)];
        started[static_cast<size_t>(r)] = 1;
        for (int64_t c = c0; c < c1; ++c) {
          if constexpr (R == Reducer::Sum) {
            d[c] += s[c];
          } else if (first) {
            d[c] = s[c];
          } else if constexpr (std::is_floating_point_v<T>) {
            // NaN wins, as in reduce_max/reduce_min.
            if (std::isnan(s[c]) || (R == Reducer::Max ? s[c] > d[c] : s[c] < d[c])) d[c] = s[c];
          } else {
            if (R == Reducer::Max ? s[c] > d[c] : s[c] < d[c]) d[c] = s[c];
          }
        }
      }
    });
  });
}

// gather(t, ids) with the rows of negative ids zero (TensorFlow's _GatherDropNegatives):
// shaped like data.
Tensor gather_drop_negatives(const Tensor& t, const Tensor& ids) {
  Tensor safe = maximum(ids, 0);
  Tensor gathered = gather(t, safe);
  Tensor keep = greater_equal(ids, 0);
  for (int i = ids.rank(); i < gathered.rank(); ++i) keep = expand_dims(keep, -1);
  return where(keep, gathered, zeros_like(gathered));
}

// Sum: each data row gets its segment's gradient.
std::vector<Tensor> segment_sum_grad(const GradCall& call) {
  return {gather_drop_negatives(call.output_grads[0], call.forward.inputs[1]), Tensor()};
}

// Max/min: the gradient goes to the rows equal to their segment's extreme, split evenly
// among ties (as reduce_max and TensorFlow's _UnsortedSegmentMinOrMaxGrad). The count is
// at least 1 wherever a row is selected; it is clamped to 1 elsewhere, so the branch that
// `where` drops never divides by zero (whose NaN a second derivative would see).
template <bool Sorted>
std::vector<Tensor> segment_extreme_grad(const GradCall& call) {
  const Tensor &data = call.forward.inputs[0], &ids = call.forward.inputs[1];
  const Tensor &y = call.outputs[0], &g = call.output_grads[0];
  Tensor selected = logical_and(equal(data, gather_drop_negatives(y, ids)), [&] {
    Tensor keep = greater_equal(ids, 0);
    for (int i = ids.rank(); i < data.rank(); ++i) keep = expand_dims(keep, -1);
    return keep;
  }());
  Tensor ones = cast(selected, data.dtype());
  Tensor count = Sorted ? segment_sum(ones, ids) : unsorted_segment_sum(ones, ids, y.shape()[0]);
  Tensor share = divide(g, maximum(count, 1));
  return {where(selected, gather_drop_negatives(share, ids), zeros_like(data)), Tensor()};
}

// Each data row reaches one segment: the jvp sums the gradient's partial derivatives
// times the tangent per segment (detail::jvp_grouped).
template <bool Sorted>
std::vector<Tensor> segment_extreme_jvp(const JvpCall& call) {
  return detail::jvp_grouped(call, [](const JvpCall& c, const Tensor& terms) {
    const Tensor& ids = c.forward.inputs[1];
    return Sorted ? segment_sum(terms, ids)
                  : unsorted_segment_sum(terms, ids, c.forward.attrs.get_int(kNumSegments));
  });
}

// Shared ids, batched data: the batch moves behind the axes the ids cover, the op runs
// once, and the batch comes back to the front.
std::vector<Tensor> batch_shared_ids(const BatchCall& call) {
  const Tensor& data = call.input(0);
  const int covered = call.input(1).rank();
  std::vector<int64_t> perm;
  for (int i = 1; i <= covered; ++i) perm.push_back(i);
  perm.push_back(0);
  for (int i = covered + 1; i < data.rank(); ++i) perm.push_back(i);
  const Tensor out = detail::run_batched(call, {transpose(data, perm), call.input(1)},
                                         call.attrs())[0];  // [segments, batch, ...]
  std::vector<int64_t> back{1, 0};
  for (int i = 2; i < out.rank(); ++i) back.push_back(i);
  return {transpose(out, back)};
}

// Batched ids of an unsorted reduction: element b's segment s becomes segment
// b * num_segments + s of one reduction over the whole batch, split again afterwards.
// Negative ids stay negative (dropped, as per element); an id past num_segments is
// sent past the batch's segments while tracing, so the op raises when the graph runs.
std::vector<Tensor> batch_unsorted_ids(const BatchCall& call) {
  const int64_t batch = call.batch_size, segments = call.attrs().get_int(kNumSegments);
  if (batch == kUnknownDim || segments <= 0) return {};
  const Tensor ids = call.input(1);
  const int64_t total = batch * segments;
  if (ids.dtype() == DType::Int32 && total > INT32_MAX) return {};
  // Eagerly, ids past num_segments leave the error to the element's own call (its
  // message names that element's id and num_segments).
  if (!ids.is_symbolic())
    for (int64_t id : id_values(ids))
      if (id >= segments) return {};
  Dims offset_shape(static_cast<size_t>(ids.rank()), 1);
  offset_shape[0] = batch;
  const Tensor offsets = reshape(range(0, total, segments, ids.dtype()), Shape(offset_shape));
  const Tensor valid = logical_and(greater_equal(ids, 0), less(ids, segments));
  const Tensor shifted =
      where(valid, add(ids, offsets), where(less(ids, 0), ids, cast(constant(total), ids.dtype())));
  Attrs attrs = call.attrs();
  attrs.set(kNumSegments, total);
  const Tensor out = detail::run_batched(call, {detail::batched_input(call, 0), shifted}, attrs)[0];
  Dims split{batch, segments};
  for (int i = 1; i < out.rank(); ++i) split.push_back(out.shape()[i]);  // kUnknownDim is reshape's -1
  return {reshape(out, Shape(split))};
}

// Batched ids of a sorted reduction run per element: each element's output has its own
// length (its last id + 1), which no single reduction gives.
template <bool Sorted>
std::vector<Tensor> batch_segment(const BatchCall& call) {
  if (!call.is_batched(1)) return call.is_batched(0) ? batch_shared_ids(call) : std::vector<Tensor>{};
  if constexpr (Sorted)
    return {};
  else
    return batch_unsorted_ids(call);
}

template <Reducer R, bool Sorted>
OpDef segment_op(std::string_view name) {
  OpDef def{
      .name = name,
      .attr_names = Sorted ? std::vector<std::string_view>{} : std::vector<std::string_view>{"num_segments"},
      .infer = infer_segment<Sorted>,
      .kernels = {segment_cpu<R, Sorted>},
      .gradient = R == Reducer::Sum ? segment_sum_grad : segment_extreme_grad<Sorted>,
      .jvp = R == Reducer::Sum ? detail::jvp_linear<value_bit(0)> : segment_extreme_jvp<Sorted>,
      .batch = batch_segment<Sorted>,
  };
  if (R == Reducer::Sum) def.gradient_uses = {.inputs = value_bit(1), .outputs = kNoValues};  // the ids only
  return def;
}

const OpDef& kSegmentSum = define_op(segment_op<Reducer::Sum, true>("segment_sum"));
const OpDef& kSegmentMax = define_op(segment_op<Reducer::Max, true>("segment_max"));
const OpDef& kSegmentMin = define_op(segment_op<Reducer::Min, true>("segment_min"));
const OpDef& kUnsortedSum = define_op(segment_op<Reducer::Sum, false>("unsorted_segment_sum"));
const OpDef& kUnsortedMax = define_op(segment_op<Reducer::Max, false>("unsorted_segment_max"));
const OpDef& kUnsortedMin = define_op(segment_op<Reducer::Min, false>("unsorted_segment_min"));

// sum / count, with empty segments 0; count reshaped to broadcast over data's trailing axes.
// The segment mean, summed by `sum_of` (segment_sum or unsorted_segment_sum with its
// ids). Half dtypes sum in float32 and integers in int64, whose quotient truncates as
// TensorFlow's integer mean does: a sum kept in the data's dtype would overflow (a
// float16 sum past 65504 is inf) or wrap before the division.
// With `true_division` (unsorted_segment_mean, which TensorFlow writes as sum / count
// in Python) integers give float32 for 8 and 16 bits and float64 for wider ones, as
// TensorFlow's truediv; otherwise the integer quotient of its kernel.
Tensor segment_mean_of(std::string_view op, const Tensor& data, const Tensor& ids, bool true_division,
                       const std::function<Tensor(const Tensor&)>& sum_of) {
  if (!data.defined()) fail(op, ": argument 'data' is an undefined tensor");
  const DType dtype = data.dtype();
  if (!is_floating(dtype) && !is_integer(dtype)) fail(op, ": argument 'data' must be numeric, got ", dtype);
  const DType wide = is_half(dtype) ? DType::Float32 : is_integer(dtype) ? DType::Int64 : dtype;
  Tensor sum = sum_of(cast(data, wide));
  Tensor count = maximum(sum_of(cast(ones_like(ids), wide)), 1);
  for (int i = 1; i < sum.rank(); ++i) count = expand_dims(count, -1);
  if (true_division && is_integer(dtype)) {
    const DType quotient = size_of(dtype) <= 2 ? DType::Float32 : DType::Float64;
    return divide(cast(sum, quotient), cast(count, quotient));
  }
  return cast(divide(sum, count), dtype);
}

// unsorted_segment_max / min. An empty segment holds the dtype's lowest or largest value
// (TensorFlow's); a storage-only dtype computes in a wider one (Notes [half-precision
// dtypes], [small integer dtypes]), whose extremes would wrap (int8) or round to
// infinity (float16) when narrowed, so the wide result is clamped to the dtype first.
Tensor unsorted_extreme(const OpDef& op, const Tensor& data, const Tensor& ids, int64_t num_segments,
                        CallSite where) {
  if (!data.defined() || !is_storage_only(data.dtype()))
    return run_op(op, {data, ids}, {num_segments}, where);
  return detail::with_call_site(where, [&] {
    const DType dtype = data.dtype();
    const Tensor wide = run_op(op, {cast(data, compute_dtype(dtype)), ids}, {num_segments}, where);
    const auto [lowest, largest] = finite_range(dtype);
    return cast(clip_by_value(wide, lowest, largest, where), dtype, where);
  });
}

}  // namespace

Tensor segment_sum(const Tensor& data, const Tensor& segment_ids, CallSite where) {
  return run_op(kSegmentSum, {data, segment_ids}, {}, where);
}
Tensor segment_max(const Tensor& data, const Tensor& segment_ids, CallSite where) {
  return run_op(kSegmentMax, {data, segment_ids}, {}, where);
}
Tensor segment_min(const Tensor& data, const Tensor& segment_ids, CallSite where) {
  return run_op(kSegmentMin, {data, segment_ids}, {}, where);
}
Tensor segment_mean(const Tensor& data, const Tensor& segment_ids, CallSite where) {
  return detail::with_call_site(where, [&] {
    return segment_mean_of("segment_mean", data, segment_ids, false,
                           [&](const Tensor& values) { return segment_sum(values, segment_ids); });
  });
}
Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            CallSite where) {
  return run_op(kUnsortedSum, {data, segment_ids}, {num_segments}, where);
}
Tensor unsorted_segment_max(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            CallSite where) {
  return unsorted_extreme(kUnsortedMax, data, segment_ids, num_segments, where);
}
Tensor unsorted_segment_min(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            CallSite where) {
  return unsorted_extreme(kUnsortedMin, data, segment_ids, num_segments, where);
}
Tensor unsorted_segment_mean(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                             CallSite where) {
  return detail::with_call_site(where, [&] {
    return segment_mean_of("unsorted_segment_mean", data, segment_ids, true, [&](const Tensor& values) {
      return unsorted_segment_sum(values, segment_ids, num_segments);
    });
  });
}

}  // namespace ef
