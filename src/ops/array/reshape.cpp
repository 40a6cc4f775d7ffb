// reshape, expand_dims, squeeze and identity: views that change only the shape
// (Note [views]). reshape copies when the input's strides cannot express the new shape.
#include <string>

#include "eagerflow/ops/array.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// ---- reshape(x, shape) ----
enum ReshapeAttr { kShape };

// The requested shape as written, "[4, -1]" (Shape prints -1 as "?", an unknown size).
std::string requested(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

void infer_reshape(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  Shape target(call.attrs.get_ints(kShape));
  const std::string wanted = requested(target.dims());
  if (target.rank() > kMaxRank)
    fail(call.op.name, ": argument 'shape' ", wanted, " has more than ", kMaxRank, " dimensions");
  int inferred = -1;
  int64_t known = 1;  // product of the given dimensions (overflow-checked)
  for (int i = 0; i < target.rank(); ++i) {
    if (target[i] == -1) {
      if (inferred >= 0)
        fail(call.op.name, ": argument 'shape' ", wanted, " may contain -1 only once (input shape ", x.shape(),
             ")");
      inferred = i;
    } else if (target[i] < 0) {
      fail(call.op.name, ": argument 'shape' ", wanted, " has a negative dimension (input shape ", x.shape(), ")");
    } else {
      known = checked_mul(known, target[i], call.op.name);
    }
  }
  int64_t n = x.num_elements();  // kUnknownDim when x's shape is partial
  if (inferred >= 0) {
    if (n != kUnknownDim) {
      if (known == 0)
        fail(call.op.name, ": cannot infer the -1 dimension of shape ", wanted, " for input shape ", x.shape(),
             " because the other dimensions multiply to 0");
      if (n % known != 0)
        fail(call.op.name, ": cannot reshape a tensor of shape ", x.shape(), " (", n, " elements) to shape ",
             wanted);
      target[inferred] = n / known;
    }
  } else if (n != kUnknownDim && n != known) {
    fail(call.op.name, ": cannot reshape a tensor of shape ", x.shape(), " (", n, " elements) to shape ", wanted,
         " (", known, " elements)");
  }
  validate_shape(target, call.op.name, "shape", size_of(x.dtype()), /*allow_unknown=*/true);
  out.add(x.dtype(), target);
}

// Strides that give `x`'s elements in row-major order under `shape` without copying,
// if there are any (NumPy's _attempt_nocopy_reshape): each group of old axes that
// maps onto a group of new axes must itself be contiguous.
bool view_strides(const TensorImpl& x, const Shape& shape, Dims& strides) {
  strides = contiguous_strides(shape);
  if (x.is_contiguous() || shape.num_elements() == 0) return true;
  Dims old_dims, old_strides;
  for (int i = 0; i < x.shape.rank(); ++i)
    if (x.shape[i] != 1) {
      old_dims.push_back(x.shape[i]);
      old_strides.push_back(x.strides[i]);
    }
  const int old_rank = static_cast<int>(old_dims.size()), new_rank = shape.rank();
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < new_rank && oi < old_rank) {
    int64_t np = shape[ni], op = old_dims[oi];
    while (np != op) {
      if (np < op) np *= shape[nj++];
      else op *= old_dims[oj++];
    }
    for (int ok = oi; ok < oj - 1; ++ok)
      if (old_strides[ok] != old_dims[ok + 1] * old_strides[ok + 1]) return false;
    strides[nj - 1] = old_strides[oj - 1];
    for (int nk = nj - 1; nk > ni; --nk) strides[nk - 1] = strides[nk] * shape[nk];
    ni = nj++;
    oi = oj++;
  }
  int64_t last = ni >= 1 ? strides[ni - 1] : 1;
  for (int nk = ni; nk < new_rank; ++nk) strides[nk] = last;
  return true;
}

void reshape_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Shape shape(call.attrs.get_ints(kShape));
  if (int64_t n = x.num_elements(); n > 0) {
    int64_t known = 1;
    for (int64_t d : shape) known *= d == -1 ? 1 : d;
    for (int64_t& d : shape.dims())
      if (d == -1) d = n / known;
  } else {
    for (int64_t& d : shape.dims())
      if (d == -1) d = 0;
  }
  Dims strides;
  if (view_strides(*x.impl(), shape, strides)) {
    outputs[0] = detail::make_view(x, shape, strides, x.impl()->offset);
    return;
  }
  Tensor dense = detail::materialize(x);  // the strides cannot express the new shape
  outputs[0] = detail::make_view(dense, shape, contiguous_strides(shape), dense.impl()->offset);
}

// Gradient: the output gradient reshaped back to the input's shape.
std::vector<Tensor> reshape_grad(const GradCall& call) {
  return {reshape(call.output_grads[0], call.forward.inputs[0].shape())};
}

// A view op whose output aliases its input whenever the strides allow; otherwise the
// kernel hands back a fresh contiguous copy (never a write into an existing buffer).
// Batched: the element's shape (its -1 resolved) behind the batch.
std::vector<Tensor> batch_reshape(const BatchCall& call) {
  const Tensor& x = detail::batched_input(call, 0);
  Dims target = call.attrs().get_ints(kShape);
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1)
      inferred = static_cast<int64_t>(i);
    else
      known *= target[i];
  }
  if (inferred >= 0) {
    int64_t n = 1;
    for (int d = 1; d < x.rank(); ++d)
      n = x.shape()[d] == kUnknownDim || n == kUnknownDim ? kUnknownDim : n * x.shape()[d];
    if (n == kUnknownDim || known == 0) return {};  // left to the per-element loop, which reports it
    target[static_cast<size_t>(inferred)] = n / known;
  }
  target.insert(0, call.batch_size == kUnknownDim ? -1 : call.batch_size);
  return {reshape(x, Shape(target))};
}

const OpDef& kReshape = define_op({
    .name = "reshape",
    .attr_names = {"shape"},
    .infer = infer_reshape,
    .kernels = {reshape_cpu},
    .gradient = reshape_grad,
    .gradient_uses = kGradientReadsNoValues,  // shapes only (Note [gradient uses])
    .jvp = detail::jvp_linear<>,
    .batch = batch_reshape,
    .traits = {.view = true, .complex = true},
});

// ---- expand_dims(x, axis) ----
enum ExpandDimsAttr { kAxis };

int expand_axis(const OpCall& call) {
  int rank = call.inputs[0].rank();
  int64_t axis = call.attrs.get_int(kAxis);
  if (axis < -rank - 1 || axis > rank)
    fail(call.op.name, ": argument 'axis' = ", axis, " is out of range for a tensor of shape ",
         call.inputs[0].shape(), " (expected ", -rank - 1, " <= axis <= ", rank, ")");
  if (rank + 1 > kMaxRank)
    fail(call.op.name, ": the result would have more than ", kMaxRank, " dimensions (input shape ",
         call.inputs[0].shape(), ")");
  return static_cast<int>(axis < 0 ? axis + rank + 1 : axis);
}

void infer_expand_dims(const OpCall& call, OutputMetas& out) {
  Shape shape = call.inputs[0].shape();
  shape.dims().insert(expand_axis(call), 1);
  out.add(call.inputs[0].dtype(), shape);
}

void expand_dims_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  int axis = expand_axis(call);
  Shape shape = x.shape();
  Dims strides = x.strides();
  // The stride of a size-1 axis never matters; use the one that keeps it contiguous.
  int64_t stride = axis < x.rank() ? strides[axis] * std::max<int64_t>(shape[axis], 1) : 1;
  shape.dims().insert(axis, 1);
  strides.insert(axis, stride);
  outputs[0] = detail::make_view(x, shape, strides, x.impl()->offset);
}

// Gradient: the inserted axis removed again.
std::vector<Tensor> expand_dims_grad(const GradCall& call) {
  return {squeeze(call.output_grads[0], Axes(int64_t{expand_axis(call.forward)}))};
}

std::vector<Tensor> batch_expand_dims(const BatchCall& call) {
  const int rank = detail::element_rank(call, 0);
  return {expand_dims(call.input(0),
                      detail::batched_axis(call.attrs().get_int(kAxis), rank + 1, call.call.op.name))};
}

const OpDef& kExpandDims = define_op({
    .name = "expand_dims",
    .attr_names = {"axis"},
    .infer = infer_expand_dims,
    .kernels = {expand_dims_cpu},
    .gradient = expand_dims_grad,
    .gradient_uses = kGradientReadsNoValues,  // shapes only (Note [gradient uses])
    .jvp = detail::jvp_linear<>,
    .batch = batch_expand_dims,
    .traits = {.view = true, .complex = true},
});

// ---- squeeze(x, axis) ----
enum SqueezeAttr { kSqueezeAxes, kSqueezeAll };

// Which axes go. With no axes given, every axis of size 1 (unknown sizes stay, as
// they may not be 1 when the graph runs).
std::vector<bool> squeezed_axes(const OpCall& call) {
  const Shape& shape = call.inputs[0].shape();
  std::vector<bool> drop(shape.rank(), false);
  if (call.attrs.get_bool(kSqueezeAll)) {
    for (int i = 0; i < shape.rank(); ++i) drop[i] = shape[i] == 1;
    return drop;
  }
  const Dims& axes = call.attrs.get_ints(kSqueezeAxes);
  for (int a : normalize_axes(std::span<const int64_t>(axes.begin(), axes.size()), shape.rank(), call.op.name,
                              false)) {
    if (shape[a] != 1 && shape[a] != kUnknownDim)
      fail(call.op.name, ": cannot squeeze axis ", a, " of shape ", shape, ": its size is ", shape[a], ", not 1");
    drop[a] = true;
  }
  return drop;
}

void infer_squeeze(const OpCall& call, OutputMetas& out) {
  std::vector<bool> drop = squeezed_axes(call);
  Dims dims;
  for (int i = 0; i < call.inputs[0].rank(); ++i)
    if (!drop[i]) dims.push_back(call.inputs[0].shape()[i]);
  out.add(call.inputs[0].dtype(), Shape(dims));
}

void squeeze_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  std::vector<bool> drop = squeezed_axes(call);
  Dims dims, strides;
  for (int i = 0; i < x.rank(); ++i)
    if (!drop[i]) {
      dims.push_back(x.shape()[i]);
      strides.push_back(x.strides()[i]);
    }
  outputs[0] = detail::make_view(x, Shape(dims), strides, x.impl()->offset);
}

// Gradient: the squeezed size-1 axes inserted again (in increasing order, so that each
// lands at its input position).
std::vector<Tensor> squeeze_grad(const GradCall& call) {
  std::vector<bool> drop = squeezed_axes(call.forward);
  Tensor g = call.output_grads[0];
  for (size_t i = 0; i < drop.size(); ++i)
    if (drop[i]) g = expand_dims(g, static_cast<int64_t>(i));
  return {g};
}

std::vector<Tensor> batch_squeeze(const BatchCall& call) {
  const Tensor& x = call.input(0);
  Attrs attrs = call.attrs();
  Dims axes;
  if (attrs.get_bool(kSqueezeAll)) {
    for (int i = 1; i < x.rank(); ++i) {
      if (x.shape()[i] == kUnknownDim) return {};  // whether it is 1 shows only when it runs: per element
      if (x.shape()[i] == 1) axes.push_back(i);
    }
  } else {
    for (int64_t a : attrs.get_ints(kSqueezeAxes))
      axes.push_back(detail::batched_axis(a, detail::element_rank(call, 0), call.call.op.name));
  }
  attrs.set(kSqueezeAxes, std::move(axes));
  attrs.set(kSqueezeAll, false);
  return detail::run_batched(call, {x}, attrs);
}

const OpDef& kSqueeze = define_op({
    .name = "squeeze",
    .attr_names = {"axis", "all"},
    .infer = infer_squeeze,
    .kernels = {squeeze_cpu},
    .gradient = squeeze_grad,
    .gradient_uses = kGradientReadsNoValues,  // shapes only (Note [gradient uses])
    .jvp = detail::jvp_linear<>,
    .batch = batch_squeeze,
    .traits = {.view = true, .complex = true},
});

// ---- identity(x) ----
void infer_identity(const OpCall& call, OutputMetas& out) {
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}

void identity_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  outputs[0] = detail::make_view(x, x.shape(), x.strides(), x.impl()->offset);
}

// Gradient: passed through unchanged.
std::vector<Tensor> identity_grad(const GradCall& call) { return {call.output_grads[0]}; }

const OpDef& kIdentity = define_op({
    .name = "identity",
    .infer = infer_identity,
    .kernels = {identity_cpu},
    .gradient = identity_grad,
    .gradient_uses = kGradientReadsNoValues,  // shapes only (Note [gradient uses])
    .jvp = detail::jvp_linear<>,
    .traits = {.elementwise = true, .view = true, .complex = true},
});

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape, CallSite where) {
  return run_op(kReshape, {x}, {shape.dims()}, where);
}

Tensor expand_dims(const Tensor& x, int64_t axis, CallSite where) {
  return run_op(kExpandDims, {x}, {axis}, where);
}

Tensor squeeze(const Tensor& x, const Axes& axis, CallSite where) {
  return run_op(kSqueeze, {x}, {axis.values(), axis.all()}, where);
}

Tensor identity(const Tensor& x, CallSite where) { return run_op(kIdentity, {x}, {}, where); }

}  // namespace ef
