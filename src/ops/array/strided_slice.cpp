// strided_slice (TensorFlow's full semantics: masks, ellipsis, new and shrunk axes,
// negative strides) and slice: views whose offset and strides select the elements.
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "ops/array/copy.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum StridedSliceAttr { kBegin, kEnd, kStrides, kBeginMask, kEndMask, kEllipsisMask, kNewAxisMask, kShrinkMask };

// The slice resolved against the input's shape: for each output axis, where it comes
// from (an input axis or a new axis), its size, start and step.
struct SliceSpec {
  struct Axis {
    int input_axis = -1;  // -1: a new size-1 axis
    int64_t size = 0;     // kUnknownDim when the input size is unknown
    int64_t start = 0;
    int64_t step = 1;
  };
  std::vector<Axis> out_axes;
  // Start index on every input axis (including shrunk ones).
  std::vector<int64_t> starts;
  // Size, start and step on every input axis (a shrunk axis: size 1 at its index).
  std::vector<Axis> in_axes;
};

// Follows TensorFlow's ValidateStridedSliceOp: the sparse spec (one entry per begin[i],
// with ellipsis and new axes) is expanded to a dense one (one entry per input axis),
// then each axis is canonicalized.
SliceSpec resolve(const OpCall& call) {
  const Shape& shape = call.inputs[0].shape();
  const Dims& begin = call.attrs.get_ints(kBegin);
  const Dims& end = call.attrs.get_ints(kEnd);
  const Dims& strides = call.attrs.get_ints(kStrides);
  int64_t begin_mask = call.attrs.get_int(kBeginMask), end_mask = call.attrs.get_int(kEndMask);
  int64_t ellipsis_mask = call.attrs.get_int(kEllipsisMask), new_axis_mask = call.attrs.get_int(kNewAxisMask);
  int64_t shrink_mask = call.attrs.get_int(kShrinkMask);
  const std::string_view op = call.op.name;
  if (begin.size() != end.size() || begin.size() != strides.size())
    fail(op, ": arguments 'begin', 'end' and 'strides' must have the same length (got ", begin.size(), ", ",
         end.size(), " and ", strides.size(), ") for input shape ", shape);
  const int sparse = static_cast<int>(begin.size());
  if (sparse > 64) fail(op, ": at most 64 slice entries are supported, got ", sparse);
  if (ellipsis_mask != 0 && (ellipsis_mask & (ellipsis_mask - 1)) != 0)
    fail(op, ": argument 'ellipsis_mask' = ", ellipsis_mask,
         " has more than one bit set; only one ellipsis is allowed");

  // Entries after the ellipsis that add axes shift where the ellipsis ends.
  int ellipsis_at = -1, new_after_ellipsis = 0;
  for (int i = 0; i < sparse; ++i) {
    if (detail::bit(ellipsis_mask, i)) ellipsis_at = i;
    else if (ellipsis_at >= 0 && detail::bit(new_axis_mask, i)) ++new_after_ellipsis;
  }
  // Without an ellipsis, unmentioned trailing axes are kept whole (an implicit one at the end).
  const bool implicit_ellipsis = ellipsis_at < 0;
  const int entries = sparse + (implicit_ellipsis ? 1 : 0);
  const int rank = shape.rank();

  struct Dense {
    int64_t begin = 0, end = 0, stride = 1;
    bool begin_masked = false, end_masked = false, shrink = false;
  };
  std::vector<Dense> dense(rank);
  std::vector<int> gather;  // per output axis of the processing: input axis, or -1 for a new axis
  int full = 0;
  for (int i = 0; i < entries; ++i) {
    bool is_ellipsis = (implicit_ellipsis && i == sparse) || (!implicit_ellipsis && detail::bit(ellipsis_mask, i));
    if (is_ellipsis) {
      int next = std::min(rank - (sparse - i) + 1 + new_after_ellipsis, rank);
      if (implicit_ellipsis) next = rank;
      for (; full < next; ++full) {
        dense[full] = {0, 0, 1, true, true, false};
        gather.push_back(full);
      }
    } else if (detail::bit(new_axis_mask, i)) {
      gather.push_back(-1);
    } else {
      if (full >= rank)
        fail(op, ": too many indices for a tensor of shape ", shape, " (entry ", i, " has no axis to index)");
      dense[full] = {begin[i], end[i], strides[i], detail::bit(begin_mask, i), detail::bit(end_mask, i),
                     detail::bit(shrink_mask, i)};
      gather.push_back(full);
      ++full;
    }
  }

  SliceSpec spec;
  spec.starts.assign(rank, 0);
  std::vector<SliceSpec::Axis> axes(rank);
  for (int i = 0; i < rank; ++i) {
    const Dense& d = dense[i];
    const int64_t dim = shape[i];
    if (d.stride == 0) fail(op, ": argument 'strides' has a 0 for axis ", i, " (input shape ", shape, ")");
    if (d.shrink) {
      if (d.stride < 0)
        fail(op, ": a shrunk axis (index ", d.begin, " on axis ", i, ") needs a positive stride, got ", d.stride);
      int64_t index = d.begin < 0 && dim != kUnknownDim ? dim + d.begin : d.begin;
      if (dim != kUnknownDim && (index < 0 || index >= dim))
        fail<OutOfRangeError>(op, ": index ", d.begin, " is out of range for axis ", i, " of size ", dim,
                              " (input shape ", shape, ")");
      spec.starts[i] = index;
      axes[i] = {i, 1, index, 1};
      continue;
    }
    if (dim == kUnknownDim) {
      axes[i] = {i, kUnknownDim, 0, d.stride};
      continue;
    }
    // Valid start/end positions: [0, dim] stepping forward, [-1, dim - 1] backward.
    const int64_t lo = d.stride > 0 ? 0 : -1, hi = d.stride > 0 ? dim : dim - 1;
    auto canonical = [&](int64_t x, bool masked, bool is_end) {
      if (masked) return (d.stride > 0) == is_end ? hi : lo;
      int64_t fwd = x < 0 ? dim + x : x;
      return std::clamp(fwd, lo, hi);
    };
    int64_t b = canonical(d.begin, d.begin_masked, false);
    int64_t e = canonical(d.end, d.end_masked, true);
    // Interval lengths stay within [-(dim + 1), dim + 1]: no overflow below.
    int64_t length = e - b, size = 0;
    if (length != 0 && (length < 0) == (d.stride < 0))
      size = length / d.stride + (length % d.stride != 0 ? 1 : 0);
    spec.starts[i] = b;
    axes[i] = {i, size, b, d.stride};
  }
  spec.in_axes = axes;
  for (int g : gather) {
    if (g < 0) spec.out_axes.push_back({-1, 1, 0, 1});
    else if (!dense[g].shrink) spec.out_axes.push_back(axes[g]);
  }
  if (static_cast<int>(spec.out_axes.size()) > kMaxRank)
    fail(op, ": the result would have ", spec.out_axes.size(), " dimensions, more than ", kMaxRank);
  return spec;
}

void infer_strided_slice(const OpCall& call, OutputMetas& out) {
  SliceSpec spec = resolve(call);
  Dims dims;
  for (const auto& a : spec.out_axes) dims.push_back(a.size);
  out.add(call.inputs[0].dtype(), Shape(dims));
}

void strided_slice_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  SliceSpec spec = resolve(call);
  Dims dims, strides;
  bool empty = false;
  for (const auto& a : spec.out_axes) {
    dims.push_back(a.size);
    // With two or more elements |step| < size of the axis, so the product cannot
    // overflow; a huge step on a size-0/1 axis must not be multiplied at all.
    int64_t stride = a.input_axis < 0 ? 1 : x.strides()[a.input_axis];
    strides.push_back(a.size > 1 ? stride * a.step : stride);
    empty |= a.size == 0;
  }
  int64_t offset = x.impl()->offset;
  // An empty result is never read; keep the offset in bounds rather than at a start
  // that may lie past the end (or before the beginning) of the storage.
  if (!empty)
    for (int i = 0; i < x.rank(); ++i) offset += spec.starts[i] * x.strides()[i];
  outputs[0] = detail::make_view(x, Shape(dims), strides, offset);
}

// Gradient: the output gradient put back at the positions the slice read, zeros
// elsewhere, built from public ops: reshape to one axis per input axis (dropping new
// axes, restoring shrunk ones), reverse the axes read backwards, spread axes with a
// step s > 1 by interleaving s - 1 zeros, then pad with zeros to the input's shape.
std::vector<Tensor> strided_slice_grad(const GradCall& call) {
  const Tensor& x = call.forward.inputs[0];
  const Shape& shape = x.shape();
  SliceSpec spec = resolve(call.forward);
  Dims dims;
  for (const auto& a : spec.in_axes) {
    if (a.size == 0) return {ef::zeros(shape, call.output_grads[0].dtype())};
    dims.push_back(a.size);
  }
  Tensor g = ef::reshape(call.output_grads[0], Shape(dims));
  const int rank = shape.rank();
  std::vector<int64_t> reversed;
  std::vector<int64_t> starts(rank), steps(rank);
  for (int i = 0; i < rank; ++i) {
    const auto& a = spec.in_axes[i];
    starts[i] = a.start;
    steps[i] = a.size > 1 ? a.step : 1;
    if (steps[i] < 0) {  // read backwards from start: forwards from the last element read
      reversed.push_back(i);
      starts[i] = a.start + (a.size - 1) * steps[i];
      steps[i] = -steps[i];
    }
  }
  if (!reversed.empty()) g = ef::reverse(g, Axes(reversed));
  std::vector<std::pair<int64_t, int64_t>> pads(rank, {0, 0});
  for (int i = 0; i < rank; ++i) {
    const int64_t size = dims[i], step = steps[i];
    int64_t length = size;
    if (step > 1) {
      // [.., size, ..] -> [.., size, step, ..] (step - 1 zeros after each element) ->
      // [.., size * step, ..], cut after the last element read.
      Dims split_shape = g.shape().dims();
      split_shape.insert(i + 1, 1);
      std::vector<std::pair<int64_t, int64_t>> spread(rank + 1, {0, 0});
      spread[i + 1] = {0, step - 1};
      Tensor t = ef::pad(ef::reshape(g, Shape(split_shape)), spread);
      Dims merged = g.shape().dims();
      merged[i] = size * step;
      length = (size - 1) * step + 1;
      std::vector<int64_t> begin(rank, 0), sizes(rank, -1);
      sizes[i] = length;
      g = ef::slice(ef::reshape(t, Shape(merged)), begin, sizes);
    }
    pads[i] = {starts[i], shape[i] - starts[i] - length};
  }
  return {ef::pad(g, pads)};
}

const OpDef& kStridedSlice = define_op({
    .name = "strided_slice",
    .attr_names = {"begin", "end", "strides", "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                   "shrink_axis_mask"},
    .infer = infer_strided_slice,
    .kernels = {strided_slice_cpu},
    .gradient = strided_slice_grad,
    .traits = {.view = true},
});

// ---- slice(x, begin, size) ----
enum SliceAttr { kSliceBegin, kSliceSize };

// The size on every axis (size -1 resolved), checking that the slice fits.
Dims slice_sizes(const OpCall& call) {
  const Shape& shape = call.inputs[0].shape();
  const Dims& begin = call.attrs.get_ints(kSliceBegin);
  const Dims& size = call.attrs.get_ints(kSliceSize);
  const std::string_view op = call.op.name;
  if (static_cast<int>(begin.size()) != shape.rank() || static_cast<int>(size.size()) != shape.rank())
    fail(op, ": arguments 'begin' and 'size' need one entry per axis of the input of shape ", shape, " (got ",
         begin.size(), " and ", size.size(), ")");
  Dims out;
  for (int i = 0; i < shape.rank(); ++i) {
    int64_t dim = shape[i], b = begin[i], s = size[i];
    if (b < 0) fail(op, ": argument 'begin' has a negative entry ", b, " for axis ", i, " (input shape ", shape, ")");
    if (s < -1) fail(op, ": argument 'size' has an entry ", s, " for axis ", i, "; sizes must be >= 0 or -1");
    if (dim == kUnknownDim) {
      out.push_back(s == -1 ? kUnknownDim : s);
      continue;
    }
    if (b > dim)
      fail(op, ": begin ", b, " is out of range for axis ", i, " of size ", dim, " (input shape ", shape, ")");
    if (s == -1) s = dim - b;
    if (s > dim - b)
      fail(op, ": the slice [", b, ", ", b, " + ", s, ") does not fit in axis ", i, " of size ", dim,
           " (input shape ", shape, ")");
    out.push_back(s);
  }
  return out;
}

void infer_slice(const OpCall& call, OutputMetas& out) {
  out.add(call.inputs[0].dtype(), Shape(slice_sizes(call)));
}

void slice_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Dims sizes = slice_sizes(call);
  const Dims& begin = call.attrs.get_ints(kSliceBegin);
  int64_t offset = x.impl()->offset;
  if (Shape(sizes).num_elements() > 0)
    for (int i = 0; i < x.rank(); ++i) offset += begin[i] * x.strides()[i];
  outputs[0] = detail::make_view(x, Shape(sizes), x.strides(), offset);
}

// Gradient: the output gradient padded with zeros back to the input's shape.
std::vector<Tensor> slice_grad(const GradCall& call) {
  const Shape& shape = call.forward.inputs[0].shape();
  Dims sizes = slice_sizes(call.forward);
  const Dims& begin = call.forward.attrs.get_ints(kSliceBegin);
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (int i = 0; i < shape.rank(); ++i) pads.push_back({begin[i], shape[i] - begin[i] - sizes[i]});
  return {ef::pad(call.output_grads[0], pads)};
}

const OpDef& kSlice = define_op({
    .name = "slice",
    .attr_names = {"begin", "size"},
    .infer = infer_slice,
    .kernels = {slice_cpu},
    .gradient = slice_grad,
    .traits = {.view = true},
});

}  // namespace

Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                     const std::vector<int64_t>& strides, const StridedSliceMasks& masks, CallSite where) {
  Dims s = strides.empty() ? Dims(begin.size(), 1) : Dims(strides.begin(), strides.end());
  return run_op(kStridedSlice, {x},
                {Dims(begin.begin(), begin.end()), Dims(end.begin(), end.end()), s, masks.begin_mask,
                 masks.end_mask, masks.ellipsis_mask, masks.new_axis_mask, masks.shrink_axis_mask},
                where);
}

Tensor slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size,
             CallSite where) {
  return run_op(kSlice, {x}, {Dims(begin.begin(), begin.end()), Dims(size.begin(), size.end())}, where);
}

}  // namespace ef
