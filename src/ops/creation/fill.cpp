// fill / zeros / ones and their *_like forms, plus tensors copied from host memory.
#include <cstring>

#include "eagerflow/ops/creation.h"
#include "ops/batch_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum FillAttr { kShape, kValue, kDType };

// The fill value is kept as int64 for integer dtypes (exact beyond 2^53), else double.
AttrValue fill_value_attr(const TensorOrScalar& value, DType dtype, std::string_view op) {
  Tensor t = scalar_tensor(value, dtype, op);  // validates that the number fits the dtype
  if (is_complex(dtype)) return value.is_integral() ? static_cast<double>(value.int_value()) : value.value();
  if (is_floating(dtype)) return t.item<double>();
  return t.item<int64_t>();
}

template <class T>
T attr_value_as(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<T>(*i);
  return static_cast<T>(std::get<double>(v));
}

template <class T>
void fill_with(Tensor& out, T v) {
  T* p = cpu::typed_output<T>(out);
  parallel_for(out.num_elements(), cpu::kCheapElementNs,
               [&](int64_t b, int64_t e) { std::fill(p + b, p + e, v); });
}

void fill_buffer(Tensor& out, const AttrValue& value) {
  if (out.dtype() == DType::Complex64)
    return fill_with(out, std::complex<float>(attr_value_as<float>(value)));
  if (out.dtype() == DType::Complex128)
    return fill_with(out, std::complex<double>(attr_value_as<double>(value)));
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_with(out, attr_value_as<T>(value));
  });
}

void infer_fill(const OpCall& call, OutputMetas& out) {
  Shape shape(call.attrs.get_ints(kShape));
  validate_shape(shape, call.op.name, "shape", size_of(call.attrs.get_dtype(kDType)));
  out.add(call.attrs.get_dtype(kDType), shape);
}
void fill_cpu(const OpCall& call, std::span<Tensor> outputs) { fill_buffer(outputs[0], call.attrs[kValue]); }
void fill_cuda(const OpCall& call, std::span<Tensor> outputs) { cuda::fill(outputs[0], call.attrs[kValue]); }

const OpDef& kFill = define_op({
    .name = "fill",
    .attr_names = {"shape", "value", "dtype"},
    .infer = infer_fill,
    .kernels = {fill_cpu, fill_cuda},
    .not_differentiable = "creates a tensor from attributes; it has no tensor inputs",
    .traits = {.complex = true},
});

// fill_like(x): same shape and dtype as x, every element `value`. Works on symbolic
// inputs whose shape is only partly known.
enum FillLikeAttr { kLikeValue };
void infer_fill_like(const OpCall& call, OutputMetas& out) {
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}
void fill_like_cpu(const OpCall& call, std::span<Tensor> outputs) {
  fill_buffer(outputs[0], call.attrs[kLikeValue]);
}
void fill_like_cuda(const OpCall& call, std::span<Tensor> outputs) {
  cuda::fill(outputs[0], call.attrs[kLikeValue]);
}

const OpDef& kFillLike = define_op({
    .name = "fill_like",
    .attr_names = {"value"},
    .infer = infer_fill_like,
    .kernels = {fill_like_cpu, fill_like_cuda},
    .not_differentiable = "its output does not depend on the values of its input",
    .batch = detail::batch_leading_dims,
    .traits = {.complex = true},
});

}  // namespace

Tensor detail::tensor_from_host(DType dtype, const Shape& shape, const void* data, std::string_view op) {
  Tensor t = detail::empty_tensor(dtype, shape, kCPU, op);
  size_t nbytes = static_cast<size_t>(shape.num_elements()) * size_of(dtype);
  // An empty std::vector's data() may be null, and memcpy from null is UB even for 0 bytes.
  if (nbytes) std::memcpy(t.impl()->storage->data(), data, nbytes);
  return t;
}

Tensor fill(const Shape& shape, const TensorOrScalar& value, DType dtype, CallSite where) {
  try {
    if (value.is_tensor())
      fail("fill: argument 'value' must be a number; to repeat a tensor use ef::broadcast_to or ef::tile");
    return run_op(kFill, {}, {shape.dims(), fill_value_attr(value, dtype, "fill"), dtype}, where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor fill(const Shape& shape, const TensorOrScalar& value, CallSite where) {
  return fill(shape, value, value.is_tensor() ? value.tensor().dtype() : value.value_dtype(), where);
}

Tensor zeros(const Shape& shape, DType dtype, CallSite where) { return fill(shape, 0, dtype, where); }
Tensor ones(const Shape& shape, DType dtype, CallSite where) { return fill(shape, 1, dtype, where); }

Tensor zeros_like(const Tensor& x, CallSite where) {
  return run_op(kFillLike, {x}, {AttrValue(int64_t{0})}, where);
}
Tensor ones_like(const Tensor& x, CallSite where) {
  return run_op(kFillLike, {x}, {AttrValue(int64_t{1})}, where);
}

}  // namespace ef
