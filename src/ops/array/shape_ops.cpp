// shape and size: a tensor's dimensions and element count as tensors; ensure_shape_match:
// a check of one tensor's shape against another's. They are ops, not constants or checks
// made while building, so that in a graph they see the fed values' dimensions where the
// static shapes have unknown ones (tf.shape versus x.shape).
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

void check_out_type(const OpCall& call, DType dtype) {
  if (dtype != DType::Int32 && dtype != DType::Int64)
    fail(call.op.name, ": argument 'out_type' must be int32 or int64, got ", dtype);
}

void infer_shape(const OpCall& call, OutputMetas& out) {
  const DType dtype = call.attrs.get_dtype(0);
  check_out_type(call, dtype);
  out.add(dtype, Shape{call.inputs[0].rank()});
}

void infer_size(const OpCall& call, OutputMetas& out) {
  const DType dtype = call.attrs.get_dtype(0);
  check_out_type(call, dtype);
  out.add(dtype, Shape{});
}

// Writes `values` into the int32 or int64 output, failing where int32 cannot hold one.
void write_index_values(const OpCall& call, std::span<const int64_t> values, Tensor& out) {
  if (out.dtype() == DType::Int64) {
    int64_t* o = cpu::typed_output<int64_t>(out);
    for (size_t i = 0; i < values.size(); ++i) o[i] = values[i];
    return;
  }
  int32_t* o = cpu::typed_output<int32_t>(out);
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] > INT32_MAX)
      fail(call.op.name, ": the value ", values[i], " does not fit in int32; use out_type int64");
    o[i] = static_cast<int32_t>(values[i]);
  }
}

void shape_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Dims& dims = call.inputs[0].shape().dims();
  write_index_values(call, std::span<const int64_t>(dims.data(), dims.size()), outputs[0]);
}

void size_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const int64_t n = call.inputs[0].num_elements();
  write_index_values(call, std::span<const int64_t>(&n, 1), outputs[0]);
}

// An element's shape (or size) is the same for every element: computed from the batched
// input, then repeated along the batch.
std::vector<Tensor> batch_shape_op(const BatchCall& call) {
  const Tensor& x = call.input(0);
  if (call.batch_size == kUnknownDim || !x.shape().is_fully_defined()) return {};
  Dims element(x.shape().dims().begin() + 1, x.shape().dims().end());
  int64_t n = 1;
  for (int64_t d : element) n *= d;
  const DType dtype = call.attrs().get_dtype(0);
  Tensor value = call.call.op.name == "shape"
                     ? cast(constant(std::vector<int64_t>(element.begin(), element.end()),
                                     Shape{static_cast<int64_t>(element.size())}),
                            dtype)
                     : cast(constant(n), dtype);
  return {detail::repeated_along_batch(value, call.batch_size, call.call.op.name)};
}

const OpDef& kShape = define_op({
    .name = "shape",
    .attr_names = {"out_type"},
    .infer = infer_shape,
    .kernels = {shape_cpu, detail::computed_on_host<shape_cpu>},
    .not_differentiable = "its output holds integer sizes",
    .batch = batch_shape_op,
    .traits = {.complex = true},
});

const OpDef& kSize = define_op({
    .name = "size",
    .attr_names = {"out_type"},
    .infer = infer_size,
    .kernels = {size_cpu, detail::computed_on_host<size_cpu>},
    .not_differentiable = "its output holds an integer count",
    .batch = batch_shape_op,
    .traits = {.complex = true},
});

// ---- ensure_shape_match(x, like): x, once its shape is checked against like's ----
// Note [runtime shape checks]: a check written as `if (a.shape() != b.shape()) fail(...)`
// passes in a graph whose static shapes are unknown ([?, ?] equals [?, ?]), and the
// ops after it may then broadcast the mismatched values silently: a loss of y_true
// [4, 1] and y_pred [1, 4] became a mean over [4, 4]. Passing x through this op instead
// makes the check part of the graph: inference runs on the static shapes while building
// (only definite mismatches fail) and again on the actual ones when the graph runs
// (dispatch infers every op it executes), with the same message as eagerly.
enum EnsureShapeAttr { kMessage, kBroadcast };

void infer_ensure_shape_match(const OpCall& call, OutputMetas& out) {
  const Shape& x = call.inputs[0].shape();
  const Shape& like = call.inputs[1].shape();
  const bool broadcast = call.attrs.get_bool(kBroadcast);
  const int extra = like.rank() - x.rank();
  bool ok = broadcast ? extra >= 0 : extra == 0;
  Shape merged = x;
  for (int i = 0; ok && i < x.rank(); ++i) {
    const int64_t d = x[i], l = like[i + extra];
    if (broadcast) {
      ok = d == kUnknownDim || l == kUnknownDim || d == 1 || d == l;
    } else {
      ok = d == kUnknownDim || l == kUnknownDim || d == l;
      if (d == kUnknownDim) merged[i] = l;
    }
  }
  if (!ok) {
    const std::string& message = call.attrs.get<std::string>(kMessage);
    if (!message.empty()) fail(message, ", got ", x, " and ", like);
    fail(call.op.name, ": x ",
         broadcast ? "must broadcast to the shape of like" : "and like must have the same shape", ", got ", x,
         " and ", like);
  }
  out.add(call.inputs[0].dtype(), merged);
}

void ensure_shape_match_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  outputs[0] = detail::make_view(x, x.shape(), x.strides(), x.impl()->offset);
}

// Gradient: passed through to x; like lends only its shape.
std::vector<Tensor> ensure_shape_match_grad(const GradCall& call) { return {call.output_grads[0], Tensor()}; }

// like batched; x batched too, or, where it may broadcast (attribute 1), lined up
// against like's elements for the check and given back in its own shape (repeated
// along the batch when it is the same for every element).
std::vector<Tensor> batch_ensure_shape_match(const BatchCall& call) {
  if (!call.attrs().get_bool(1)) return detail::batch_leading_dims(call);
  const Tensor& x = call.input(0);
  const Tensor aligned = call.is_batched(0) ? detail::with_element_rank(x, detail::element_rank(call, 1)) : x;
  const Tensor checked =
      detail::run_batched(call, {aligned, detail::batched_input(call, 1)}, call.attrs())[0];
  if (call.is_batched(0)) return {reshape(checked, x.shape())};
  return {detail::repeated_along_batch(checked, call.batch_size, "ensure_shape_match: x")};
}

const OpDef& kEnsureShapeMatch = define_op({
    .name = "ensure_shape_match",
    .attr_names = {"message", "broadcast"},
    .infer = infer_ensure_shape_match,
    .kernels = {ensure_shape_match_kernel},
    .gradient = ensure_shape_match_grad,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = detail::jvp_linear<value_bit(0)>,
    .batch = batch_ensure_shape_match,
    .traits = {.view = true, .complex = true},
});

}  // namespace

Tensor ensure_same_shape(const Tensor& x, const Tensor& like, const std::string& message, CallSite where) {
  return run_op(kEnsureShapeMatch, {x, like}, {message, false}, where);
}
Tensor ensure_broadcastable_to(const Tensor& x, const Tensor& like, const std::string& message,
                               CallSite where) {
  return run_op(kEnsureShapeMatch, {x, like}, {message, true}, where);
}

Tensor shape(const Tensor& x, DType out_type, CallSite where) { return run_op(kShape, {x}, {out_type}, where); }
Tensor size(const Tensor& x, DType out_type, CallSite where) { return run_op(kSize, {x}, {out_type}, where); }

}  // namespace ef
