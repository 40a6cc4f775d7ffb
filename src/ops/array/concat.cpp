// concat (a copying kernel), unstack and split (views, one output per part) and the
// composite stack.
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// The most outputs unstack and split give: a program needs far fewer tensors than this.
constexpr int64_t kMaxOutputs = int64_t{1} << 20;

// ---- concat(values, axis) ----
enum ConcatAttr { kAxis };

int concat_axis(const OpCall& call) {
  if (call.inputs.empty()) fail(call.op.name, ": argument 'values' is empty; at least one tensor is needed");
  const Tensor& first = call.inputs[0];
  if (first.rank() == 0) fail(call.op.name, ": cannot concatenate scalars (input 0 has shape [])");
  return normalize_axis(call.attrs.get_int(kAxis), first.rank(), call.op.name);
}

void infer_concat(const OpCall& call, OutputMetas& out) {
  int axis = concat_axis(call);
  const Tensor& first = call.inputs[0];
  Shape shape = first.shape();
  for (size_t i = 1; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    if (t.dtype() != first.dtype())
      fail(call.op.name, ": input ", i, " has dtype ", t.dtype(), " but input 0 has dtype ", first.dtype());
    if (t.rank() != first.rank())
      fail(call.op.name, ": input ", i, " has shape ", t.shape(), " but input 0 has shape ", first.shape(),
           "; all inputs need the same rank");
    for (int d = 0; d < shape.rank(); ++d) {
      int64_t a = shape[d], b = t.shape()[d];
      if (d == axis) {
        shape[d] = (a == kUnknownDim || b == kUnknownDim) ? kUnknownDim : detail::checked_add(a, b, call.op.name);
      } else if (a == kUnknownDim) {
        shape[d] = b;
      } else if (b != kUnknownDim && a != b) {
        fail(call.op.name, ": input ", i, " has shape ", t.shape(), " but input 0 has shape ", first.shape(),
             "; they must match on every axis except axis ", axis);
      }
    }
  }
  validate_shape(shape, call.op.name, "output", size_of(first.dtype()), /*allow_unknown=*/true);
  out.add(first.dtype(), shape);
}

// Runs on any device: copy_elements copies on the tensors' device.
void concat_kernel(const OpCall& call, std::span<Tensor> outputs) {
  int axis = concat_axis(call);
  Tensor& out = outputs[0];
  const Dims& strides = out.strides();
  int64_t position = 0;
  for (const Tensor& t : call.inputs) {
    int64_t size = t.shape()[axis];
    if (t.num_elements() > 0) {
      // Copy t into the part of the output it occupies, seen as a strided view.
      Tensor part = detail::make_view(out, t.shape(), strides, out.impl()->offset + position * strides[axis]);
      detail::copy_elements(*t.impl(), *part.impl());
    }
    position += size;
  }
}

// Gradient: the output gradient split back into the inputs' sizes along the axis.
std::vector<Tensor> concat_grad(const GradCall& call) {
  int axis = concat_axis(call.forward);
  std::vector<int64_t> sizes;
  for (const Tensor& t : call.forward.inputs) sizes.push_back(t.shape()[axis]);
  if (sizes.size() == 1) return {call.output_grads[0]};
  return ef::split(call.output_grads[0], sizes, axis);
}

const OpDef& kConcat = define_op({
    .name = "concat",
    .attr_names = {"axis"},
    .infer = infer_concat,
    .kernels = {concat_kernel, concat_kernel},
    .gradient = concat_grad,
    .jvp = detail::jvp_linear<>,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, 0); },
    .traits = {.complex = true},
});

// ---- unstack(x, axis) ----
enum UnstackAttr { kUnstackAxis };

int unstack_axis(const OpCall& call) {
  const Tensor& x = call.inputs[0];
  if (x.rank() == 0) fail(call.op.name, ": cannot unstack a scalar");
  int axis = normalize_axis(call.attrs.get_int(kUnstackAxis), x.rank(), call.op.name);
  if (x.shape()[axis] == kUnknownDim)
    fail(call.op.name, ": the size of axis ", axis, " of shape ", x.shape(),
         " is unknown, so the number of outputs is not known");
  return axis;
}

void infer_unstack(const OpCall& call, OutputMetas& out) {
  int axis = unstack_axis(call);
  Shape shape = call.inputs[0].shape();
  int64_t n = shape[axis];
  // An empty tensor can have a huge axis; one output per entry would exhaust memory.
  if (n > kMaxOutputs)
    fail(call.op.name, ": axis ", axis, " of shape ", shape, " would give ", n, " outputs, more than ",
         kMaxOutputs);
  shape.dims().erase(axis);
  for (int64_t i = 0; i < n; ++i) out.add(call.inputs[0].dtype(), shape);
}

void unstack_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  int axis = unstack_axis(call);
  Shape shape = x.shape();
  Dims strides = x.strides();
  int64_t step = strides[axis];
  shape.dims().erase(axis);
  strides.erase(axis);
  for (size_t i = 0; i < outputs.size(); ++i)
    outputs[i] = detail::make_view(x, shape, strides, x.impl()->offset + static_cast<int64_t>(i) * step);
}

// Gradient: the outputs' gradients stacked back along the axis.
std::vector<Tensor> unstack_grad(const GradCall& call) {
  int axis = unstack_axis(call.forward);
  std::vector<Tensor> grads(call.output_grads.begin(), call.output_grads.end());
  if (grads.empty()) return {ef::zeros_like(call.forward.inputs[0])};
  return {ef::stack(grads, axis)};
}

const OpDef& kUnstack = define_op({
    .name = "unstack",
    .attr_names = {"axis"},
    .infer = infer_unstack,
    .kernels = {unstack_cpu},
    .gradient = unstack_grad,
    .jvp = detail::jvp_linear<>,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, 0); },
    .traits = {.view = true, .complex = true},
});

// ---- split(x, num_or_size_splits, axis) ----
enum SplitAttr { kNumSplits, kSizeSplits, kSplitAxis };

// The size of every part (kUnknownDim where the axis size is unknown).
Dims split_sizes(const OpCall& call) {
  const Tensor& x = call.inputs[0];
  const std::string_view op = call.op.name;
  if (x.rank() == 0) fail(op, ": cannot split a scalar");
  int axis = normalize_axis(call.attrs.get_int(kSplitAxis), x.rank(), op);
  int64_t dim = x.shape()[axis];
  int64_t num = call.attrs.get_int(kNumSplits);
  Dims sizes = call.attrs.get_ints(kSizeSplits);
  if (num > 0) {
    if (dim != kUnknownDim && dim % num != 0)
      fail(op, ": axis ", axis, " of shape ", x.shape(), " (size ", dim, ") cannot be split into ", num,
           " equal parts");
    if (num > kMaxOutputs)
      fail(op, ": argument 'num_or_size_splits' = ", num, " is too large (at most ", kMaxOutputs,
           " outputs)");
    return Dims(static_cast<size_t>(num), dim == kUnknownDim ? kUnknownDim : dim / num);
  }
  if (sizes.empty()) fail(op, ": argument 'num_or_size_splits' must be a positive count or a non-empty list, got ",
                          num);
  int inferred = -1;
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (inferred >= 0) fail(op, ": argument 'size_splits' may contain -1 only once");
      inferred = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      fail(op, ": argument 'size_splits' has a negative size ", sizes[i]);
    } else {
      total = detail::checked_add(total, sizes[i], op);
    }
  }
  if (dim == kUnknownDim) {
    if (inferred >= 0) sizes[inferred] = kUnknownDim;
    return sizes;
  }
  if (inferred >= 0) {
    if (total > dim)
      fail(op, ": argument 'size_splits' adds up to ", total, ", more than the size ", dim, " of axis ", axis,
           " of shape ", x.shape());
    sizes[inferred] = dim - total;
  } else if (total != dim) {
    fail(op, ": argument 'size_splits' adds up to ", total, " but axis ", axis, " of shape ", x.shape(),
         " has size ", dim);
  }
  return sizes;
}

void infer_split(const OpCall& call, OutputMetas& out) {
  int axis = normalize_axis(call.attrs.get_int(kSplitAxis), std::max(call.inputs[0].rank(), 1), call.op.name);
  for (int64_t size : split_sizes(call)) {
    Shape shape = call.inputs[0].shape();
    shape[axis] = size;
    out.add(call.inputs[0].dtype(), shape);
  }
}

void split_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  int axis = normalize_axis(call.attrs.get_int(kSplitAxis), x.rank(), call.op.name);
  Dims sizes = split_sizes(call);
  int64_t position = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape shape = x.shape();
    shape[axis] = sizes[i];
    int64_t offset = x.impl()->offset + (shape.num_elements() > 0 ? position * x.strides()[axis] : 0);
    outputs[i] = detail::make_view(x, shape, x.strides(), offset);
    position += sizes[i];
  }
}

// Gradient: the parts' gradients joined back along the axis.
std::vector<Tensor> split_grad(const GradCall& call) {
  int axis = normalize_axis(call.forward.attrs.get_int(kSplitAxis), call.forward.inputs[0].rank(), call.forward.op.name);
  std::vector<Tensor> grads(call.output_grads.begin(), call.output_grads.end());
  if (grads.size() == 1) return {grads[0]};
  return {ef::concat(grads, axis)};
}

const OpDef& kSplit = define_op({
    .name = "split",
    .attr_names = {"num_split", "size_splits", "axis"},
    .infer = infer_split,
    .kernels = {split_cpu},
    .gradient = split_grad,
    .jvp = detail::jvp_linear<>,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, 2); },
    .traits = {.view = true, .complex = true},
});

}  // namespace

Tensor concat(const std::vector<Tensor>& values, int64_t axis, CallSite where) {
  return run_op(kConcat, std::span<const Tensor>(values), {axis}, where);
}

Tensor stack(const std::vector<Tensor>& values, int64_t axis, CallSite where) {
  try {
    if (values.empty()) fail("stack: argument 'values' is empty; at least one tensor is needed");
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].defined()) fail("stack: input ", i, " is an undefined tensor");
      const Shape& a = values[0].shape();
      const Shape& b = values[i].shape();
      bool same = a.rank() == b.rank();
      for (int d = 0; same && d < a.rank(); ++d)
        same = a[d] == b[d] || a[d] == kUnknownDim || b[d] == kUnknownDim;
      if (!same) fail("stack: input ", i, " has shape ", b, " but input 0 has shape ", a, "; all must match");
    }
    int rank = values[0].rank();
    if (axis < -rank - 1 || axis > rank)
      fail("stack: argument 'axis' = ", axis, " is out of range for inputs of shape ", values[0].shape(),
           " (expected ", -rank - 1, " <= axis <= ", rank, ")");
    if (axis < 0) axis += rank + 1;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  std::vector<Tensor> expanded;
  expanded.reserve(values.size());
  for (const Tensor& v : values) expanded.push_back(expand_dims(v, axis, where));
  return concat(expanded, axis, where);
}

std::vector<Tensor> unstack(const Tensor& x, int64_t axis, CallSite where) {
  return run_op_multi(kUnstack, {x}, {axis}, where);
}

std::vector<Tensor> split(const Tensor& x, int64_t num_splits, int64_t axis, CallSite where) {
  try {
    if (num_splits <= 0) fail("split: argument 'num_or_size_splits' must be positive, got ", num_splits);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  return run_op_multi(kSplit, {x}, {num_splits, Dims{}, axis}, where);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& size_splits, int64_t axis,
                          CallSite where) {
  return run_op_multi(kSplit, {x}, {int64_t{0}, Dims(size_splits.begin(), size_splits.end()), axis}, where);
}

std::vector<Tensor> split(const Tensor& x, std::initializer_list<int64_t> size_splits, int64_t axis,
                          CallSite where) {
  return split(x, std::vector<int64_t>(size_splits), axis, where);
}

}  // namespace ef
