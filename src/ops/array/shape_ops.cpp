// shape and size: a tensor's dimensions and element count as tensors. They are ops, not
// constants, so that in a graph they give the fed value's dimensions where the static
// shape has unknown ones (tf.shape versus x.shape).
#include "eagerflow/ops/array.h"
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

const OpDef& kShape = define_op({
    .name = "shape",
    .attr_names = {"out_type"},
    .infer = infer_shape,
    .kernels = {shape_cpu, detail::computed_on_host<shape_cpu>},
    .not_differentiable = "its output holds integer sizes",
});

const OpDef& kSize = define_op({
    .name = "size",
    .attr_names = {"out_type"},
    .infer = infer_size,
    .kernels = {size_cpu, detail::computed_on_host<size_cpu>},
    .not_differentiable = "its output holds an integer count",
});

}  // namespace

Tensor shape(const Tensor& x, DType out_type, CallSite where) { return run_op(kShape, {x}, {out_type}, where); }
Tensor size(const Tensor& x, DType out_type, CallSite where) { return run_op(kSize, {x}, {out_type}, where); }

}  // namespace ef
