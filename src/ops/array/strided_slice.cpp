// strided_slice (TensorFlow's full semantics: masks, ellipsis, new and shrunk axes,
// negative strides) and slice: views whose offset and strides select the elements; and
// strided_slice_grad, their gradient.
#include <cstring>

#include "eagerflow/ops/array.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
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

// ---- strided_slice_grad(x, dy, <strided_slice's attrs>) ----
// The gradient of strided_slice: dy put back at the positions the slice of x read, zeros
// elsewhere (TensorFlow's StridedSliceGrad). x lends only its shape, and the positions
// are resolved when the op runs, so the gradient is right in graphs whose input sizes
// are unknown while building (x[1:] of an x of shape [?, ?]).
void infer_strided_slice_grad(const OpCall& call, OutputMetas& out) {
  SliceSpec spec = resolve(call);
  const Tensor& dy = call.inputs[1];
  Dims dims;
  for (const auto& a : spec.out_axes) dims.push_back(a.size);
  bool ok = dy.rank() == static_cast<int>(dims.size());
  for (int i = 0; ok && i < dy.rank(); ++i)
    ok = dims[i] == kUnknownDim || dy.shape()[i] == kUnknownDim || dims[i] == dy.shape()[i];
  if (!ok)
    fail(call.op.name, ": argument 'dy' has shape ", dy.shape(), ", but the slice of an input of shape ",
         call.inputs[0].shape(), " has shape ", Shape(dims));
  out.add(dy.dtype(), call.inputs[0].shape());
}

// Runs on any device: zeros, then dy copied into the view of them that the slice reads
// (copy_elements copies on the tensors' device).
void strided_slice_grad_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& dy = call.inputs[1];
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  if (out.device().type == DeviceType::CUDA) {
    cuda::fill(out, is_floating(out.dtype()) ? AttrValue(0.0) : AttrValue(int64_t{0}));
  } else {
    std::memset(static_cast<char*>(out.impl()->storage->data()) + out.impl()->offset * size_of(out.dtype()),
                0, static_cast<size_t>(out.num_elements()) * size_of(out.dtype()));
  }
  if (dy.num_elements() == 0) return;
  SliceSpec spec = resolve(call);
  Dims strides;
  for (const auto& a : spec.out_axes) {
    const int64_t stride = a.input_axis < 0 ? 1 : out.strides()[a.input_axis];
    strides.push_back(a.size > 1 ? stride * a.step : stride);
  }
  int64_t offset = out.impl()->offset;
  for (int i = 0; i < out.rank(); ++i) offset += spec.starts[i] * out.strides()[i];
  Tensor read = detail::make_view(out, dy.shape(), strides, offset);
  detail::copy_elements(*dy.impl(), *read.impl());
}

// Each op's gradient runs the other (defined below).
const OpDef& strided_slice_op();
const OpDef& strided_slice_grad_op();

// Gradient: dy's gradient is the same slice of the incoming gradient; x lends only its
// shape.
std::vector<Tensor> strided_slice_grad_grad(const GradCall& call) {
  return {Tensor(),
          run_op(strided_slice_op(), {call.output_grads[0]}, call.forward.attrs, CallSite::current())};
}

// Gradient: the output gradient put back where the slice read (strided_slice_grad), at
// the positions the input's shape gives when the gradient runs.
std::vector<Tensor> strided_slice_gradient(const GradCall& call) {
  return {run_op(strided_slice_grad_op(), {call.forward.inputs[0], call.output_grads[0]}, call.forward.attrs,
                 CallSite::current())};
}

// A whole-axis entry for the batch in front of the element's slice spec; every mask
// moves up one bit.
Attrs batched_slice_spec(const Attrs& attrs) {
  Attrs out = attrs;
  for (StridedSliceAttr a : {kBegin, kEnd, kStrides}) {
    Dims v = attrs.get_ints(a);
    v.insert(0, a == kStrides ? 1 : 0);
    out.set(a, std::move(v));
  }
  for (StridedSliceAttr a : {kBeginMask, kEndMask, kEllipsisMask, kNewAxisMask, kShrinkMask})
    out.set(a, attrs.get_int(a) << 1);
  out.set(kBeginMask, out.get_int(kBeginMask) | 1);
  out.set(kEndMask, out.get_int(kEndMask) | 1);
  return out;
}

std::vector<Tensor> batch_strided_slice(const BatchCall& call) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < call.call.inputs.size(); ++i) inputs.push_back(detail::batched_input(call, i));
  return detail::run_batched(call, inputs, batched_slice_spec(call.attrs()));
}

const OpDef& kStridedSlice = define_op({
    .name = "strided_slice",
    .attr_names = {"begin", "end", "strides", "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                   "shrink_axis_mask"},
    .infer = infer_strided_slice,
    .kernels = {strided_slice_cpu},
    .gradient = strided_slice_gradient,
    .jvp = detail::jvp_linear<>,
    .batch = batch_strided_slice,
    .traits = {.view = true, .complex = true},
});

const OpDef& kStridedSliceGrad = define_op({
    .name = "strided_slice_grad",
    .attr_names = {"begin", "end", "strides", "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                   "shrink_axis_mask"},
    .infer = infer_strided_slice_grad,
    .kernels = {strided_slice_grad_kernel, strided_slice_grad_kernel},
    .gradient = strided_slice_grad_grad,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = detail::jvp_linear<value_bit(1)>,
    .batch = batch_strided_slice,
    .traits = {.complex = true},
});

const OpDef& strided_slice_op() { return kStridedSlice; }
const OpDef& strided_slice_grad_op() { return kStridedSliceGrad; }

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

// Gradient: the output gradient put back where the slice read, zeros elsewhere: the
// strided_slice_grad of the same slice (x[begin : begin + size], to the end for -1).
std::vector<Tensor> slice_grad(const GradCall& call) {
  const Dims& begin = call.forward.attrs.get_ints(kSliceBegin);
  const Dims& size = call.forward.attrs.get_ints(kSliceSize);
  Dims end, strides;
  int64_t end_mask = 0;
  for (size_t i = 0; i < begin.size(); ++i) {
    if (size[i] == -1) end_mask |= int64_t{1} << i;
    end.push_back(size[i] == -1 ? 0 : begin[i] + size[i]);
    strides.push_back(1);
  }
  return {run_op(kStridedSliceGrad, {call.forward.inputs[0], call.output_grads[0]},
                 {begin, end, strides, int64_t{0}, end_mask, int64_t{0}, int64_t{0}, int64_t{0}},
                 CallSite::current())};
}

std::vector<Tensor> batch_slice(const BatchCall& call) {
  Attrs attrs = call.attrs();
  Dims begin = attrs.get_ints(kSliceBegin), size = attrs.get_ints(kSliceSize);
  begin.insert(0, 0);
  size.insert(0, -1);
  attrs.set(kSliceBegin, std::move(begin));
  attrs.set(kSliceSize, std::move(size));
  return detail::run_batched(call, {call.input(0)}, attrs);
}

const OpDef& kSlice = define_op({
    .name = "slice",
    .attr_names = {"begin", "size"},
    .infer = infer_slice,
    .kernels = {slice_cpu},
    .gradient = slice_grad,
    .jvp = detail::jvp_linear<>,
    .batch = batch_slice,
    .traits = {.view = true, .complex = true},
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

Tensor strided_slice_grad(const Tensor& x, const Tensor& dy, const std::vector<int64_t>& begin,
                          const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                          const StridedSliceMasks& masks, CallSite where) {
  Dims s = strides.empty() ? Dims(begin.size(), 1) : Dims(strides.begin(), strides.end());
  return run_op(kStridedSliceGrad, {x, dy},
                {Dims(begin.begin(), begin.end()), Dims(end.begin(), end.end()), s, masks.begin_mask,
                 masks.end_mask, masks.ellipsis_mask, masks.new_axis_mask, masks.shrink_axis_mask},
                where);
}

Tensor slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size,
             CallSite where) {
  return run_op(kSlice, {x}, {Dims(begin.begin(), begin.end()), Dims(size.begin(), size.end())}, where);
}

}  // namespace ef
