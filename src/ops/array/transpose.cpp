// transpose, broadcast_to and reverse: views that only permute, repeat (stride 0) or
// negate strides (Note [views]).
#include "eagerflow/ops/array.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// ---- transpose(x, perm) ----
enum TransposeAttr { kPerm };

Dims checked_perm(const OpCall& call) {
  const Dims& perm = call.attrs.get_ints(kPerm);
  int rank = call.inputs[0].rank();
  if (static_cast<int>(perm.size()) != rank)
    fail(call.op.name, ": argument 'perm' has ", perm.size(), " entries but the input of shape ",
         call.inputs[0].shape(), " has rank ", rank);
  Dims out;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    int a = normalize_axis(p, rank, call.op.name, "perm");
    if (seen[a])
      fail(call.op.name, ": argument 'perm' repeats axis ", p, "; it must be a permutation of 0..", rank - 1);
    seen[a] = true;
    out.push_back(a);
  }
  return out;
}

void infer_transpose(const OpCall& call, OutputMetas& out) {
  Dims perm = checked_perm(call);
  Dims dims;
  for (int64_t p : perm) dims.push_back(call.inputs[0].shape()[static_cast<int>(p)]);
  out.add(call.inputs[0].dtype(), Shape(dims));
}

void transpose_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Dims dims, strides;
  for (int64_t p : checked_perm(call)) {
    dims.push_back(x.shape()[static_cast<int>(p)]);
    strides.push_back(x.strides()[p]);
  }
  outputs[0] = detail::make_view(x, Shape(dims), strides, x.impl()->offset);
}

// Gradient: transposed by the inverse permutation.
std::vector<Tensor> transpose_grad(const GradCall& call) {
  Dims perm = checked_perm(call.forward);
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return {transpose(call.output_grads[0], inverse)};
}

std::vector<Tensor> batch_transpose(const BatchCall& call) {
  std::vector<int64_t> perm{0};
  const int rank = detail::element_rank(call, 0);
  for (int64_t p : call.attrs().get_ints(kPerm))
    perm.push_back(normalize_axis(p, rank, call.call.op.name, "perm") + 1);
  return {transpose(call.input(0), perm)};
}

const OpDef& kTranspose = define_op({
    .name = "transpose",
    .attr_names = {"perm"},
    .infer = infer_transpose,
    .kernels = {transpose_cpu},
    .gradient = transpose_grad,
    .jvp = detail::jvp_linear<>,
    .batch = batch_transpose,
    .traits = {.view = true, .complex = true},
});

// ---- broadcast_to(x, shape) ----
enum BroadcastAttr { kShape };

void infer_broadcast_to(const OpCall& call, OutputMetas& out) {
  const Shape& in = call.inputs[0].shape();
  Shape target(call.attrs.get_ints(kShape));
  validate_shape(target, call.op.name, "shape", size_of(call.inputs[0].dtype()));
  if (in.rank() > target.rank())
    fail(call.op.name, ": cannot broadcast a tensor of shape ", in, " to shape ", target,
         ": the input has more dimensions");
  int offset = target.rank() - in.rank();
  for (int i = 0; i < in.rank(); ++i) {
    int64_t d = in[i], t = target[i + offset];
    if (d != t && d != 1 && d != kUnknownDim)
      fail(call.op.name, ": cannot broadcast a tensor of shape ", in, " to shape ", target, " (dimension ", i,
           " is ", d, ", expected 1 or ", t, ")");
  }
  out.add(call.inputs[0].dtype(), target);
}

void broadcast_to_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Shape target(call.attrs.get_ints(kShape));
  int offset = target.rank() - x.rank();
  Dims strides(target.rank(), 0);
  for (int i = 0; i < x.rank(); ++i)
    strides[i + offset] = x.shape()[i] == target[i + offset] ? x.strides()[i] : 0;
  outputs[0] = detail::make_view(x, target, strides, x.impl()->offset);
}

// Gradient: the output gradient as it is; the tape sums it down to the input's shape.
std::vector<Tensor> broadcast_to_grad(const GradCall& call) { return {call.output_grads[0]}; }

// The element's target shape behind the batch; x gets size-1 axes after its batch axis
// so that it lines up.
std::vector<Tensor> batch_broadcast_to(const BatchCall& call) {
  if (call.batch_size == kUnknownDim) return {};
  const Tensor& x = call.input(0);
  const Dims& shape = call.attrs().get_ints(kShape);
  Dims aligned{x.shape()[0]};
  for (size_t i = static_cast<size_t>(x.rank() - 1); i < shape.size(); ++i) aligned.push_back(1);
  for (int d = 1; d < x.rank(); ++d) aligned.push_back(x.shape()[d]);
  Dims target{call.batch_size};
  for (int64_t d : shape) target.push_back(d);
  return {broadcast_to(reshape(x, Shape(aligned)), Shape(target))};
}

const OpDef& kBroadcastTo = define_op({
    .name = "broadcast_to",
    .attr_names = {"shape"},
    .infer = infer_broadcast_to,
    .kernels = {broadcast_to_cpu},
    .gradient = broadcast_to_grad,
    .jvp = detail::jvp_linear<>,
    .batch = batch_broadcast_to,
    .traits = {.view = true, .complex = true},
});

// ---- reverse(x, axis) ----
enum ReverseAttr { kAxes, kAll };

Dims reverse_axes(const OpCall& call) {
  const Dims& axes = call.attrs.get_ints(kAxes);
  return normalize_axes(std::span<const int64_t>(axes.begin(), axes.size()), call.inputs[0].rank(),
                        call.op.name, call.attrs.get_bool(kAll));
}

void infer_reverse(const OpCall& call, OutputMetas& out) {
  if (call.inputs[0].rank() == 0 && !call.attrs.get_ints(kAxes).empty())
    fail(call.op.name, ": argument 'axis' names axes of a scalar");
  reverse_axes(call);
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}

void reverse_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Dims strides = x.strides();
  int64_t offset = x.impl()->offset;
  if (x.num_elements() > 0)
    for (int64_t a : reverse_axes(call)) {
      offset += (x.shape()[static_cast<int>(a)] - 1) * strides[a];
      strides[a] = -strides[a];
    }
  outputs[0] = detail::make_view(x, x.shape(), strides, offset);
}

// Gradient: reversed along the same axes.
std::vector<Tensor> reverse_grad(const GradCall& call) {
  Dims axes = reverse_axes(call.forward);
  return {reverse(call.output_grads[0], Axes(axes))};
}

// "Every axis" (no axes given) means every axis of the element, not the batch.
std::vector<Tensor> batch_reverse(const BatchCall& call) {
  Attrs attrs = call.attrs();
  Dims axes;
  if (attrs.get_ints(kAxes).empty() && attrs.get_bool(kAll)) {
    for (int i = 1; i < call.input(0).rank(); ++i) axes.push_back(i);
  } else {
    for (int64_t a : attrs.get_ints(kAxes))
      axes.push_back(detail::batched_axis(a, detail::element_rank(call, 0), call.call.op.name));
  }
  attrs.set(kAxes, std::move(axes));
  attrs.set(kAll, false);
  return detail::run_batched(call, {call.input(0)}, attrs);
}

const OpDef& kReverse = define_op({
    .name = "reverse",
    .attr_names = {"axis", "all"},
    .infer = infer_reverse,
    .kernels = {reverse_cpu},
    .gradient = reverse_grad,
    .jvp = detail::jvp_linear<>,
    .batch = batch_reverse,
    .traits = {.view = true, .complex = true},
});

}  // namespace

Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm, CallSite where) {
  return run_op(kTranspose, {x}, {Dims(perm.begin(), perm.end())}, where);
}

Tensor transpose(const Tensor& x, CallSite where) {
  Dims perm;
  if (x.defined())
    for (int i = x.rank() - 1; i >= 0; --i) perm.push_back(i);
  return run_op(kTranspose, {x}, {perm}, where);
}

Tensor broadcast_to(const Tensor& x, const Shape& shape, CallSite where) {
  return run_op(kBroadcastTo, {x}, {shape.dims()}, where);
}

Tensor reverse(const Tensor& x, const Axes& axis, CallSite where) {
  return run_op(kReverse, {x}, {axis.values(), axis.all()}, where);
}

}  // namespace ef
