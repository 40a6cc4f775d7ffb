#include "eagerflow/core/tensor.h"

#include "backends/cuda/copy.h"
#include "eagerflow/core/cuda.h"

namespace ef {

bool TensorImpl::is_contiguous() const {
  int64_t expected = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;  // the stride of a size-1 dimension never matters
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

const TensorImpl& Tensor::checked() const {
  if (!impl_) fail("the tensor is undefined (default-constructed or moved from)");
  return *impl_;
}

int64_t Tensor::dim(int axis) const {
  const Shape& s = shape();
  int a = normalize_axis(axis, s.rank(), "dim");
  if (s.rank() == 0) fail("dim: a scalar has no dimensions");
  return s[a];
}

const void* Tensor::raw_data() const {
  const TensorImpl& t = checked();
  if (t.symbolic) fail<FailedPreconditionError>("raw_data: the tensor is symbolic and has no memory");
  if (t.device.type != DeviceType::CPU)
    fail("raw_data: the tensor is on ", t.device, ", not the CPU; copy it with cpu() first");
  return static_cast<const char*>(t.storage->data()) + t.offset * static_cast<int64_t>(size_of(t.dtype));
}

Tensor::operator bool() const {
  const TensorImpl& t = checked();
  if (t.symbolic)
    fail<FailedPreconditionError>(
        "converting a symbolic tensor to bool: its value is not known while a graph is built; "
        "use ef::cond or ef::while_loop for control flow that depends on tensor values");
  if (t.shape.num_elements() != 1)
    fail("the truth value of a tensor with shape ", t.shape,
         " is ambiguous: only a tensor with exactly one element converts to bool");
  if (t.device.type != DeviceType::CPU) return static_cast<bool>(cpu());  // waits for the device
  return dispatch_storage_dtype(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return detail::arithmetic_value(detail::read_element<T>(t, 0)) != 0;
  });
}

Tensor Tensor::to(Device device) const {
  const TensorImpl& t = checked();
  if (t.device == device) return *this;
  if (t.symbolic)
    fail<FailedPreconditionError>("to: the tensor is symbolic (graph mode) and has no value yet");
  if (device.type == DeviceType::CUDA && !cuda::is_available())
    fail<UnimplementedError>("to: cannot copy a tensor to ", device, ": ", cuda::unavailable_reason());
  return cuda::copy_to(*this, device);
}

namespace detail {

void fail_storage_only_in_kernel(DType t) {
  fail<InternalError>("a kernel was reached with dtype ", t,
                      ", which kernels do not compute in: the dispatcher widens it to ", compute_dtype(t),
                      " first (Notes [half-precision dtypes] and [small integer dtypes] in eagerflow/core)");
}

void fail_complex_in_kernel(DType t) {
  fail<UnimplementedError>(
      "this computation has no ", t, " version: complex tensors support the ops of Note ",
      "[complex dtypes] (eagerflow/core/dtype.h); take real() and imag() for the others");
}

Tensor empty_tensor(DType dtype, const Shape& shape, Device device, std::string_view op) {
  validate_shape(shape, op, "shape", size_of(dtype));
  auto impl = make_ref<TensorImpl>();
  impl->dtype = dtype;
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->device = device;
  impl->storage = Storage::allocate(static_cast<size_t>(shape.num_elements()) * size_of(dtype), device);
  return Tensor(std::move(impl));
}

Tensor make_view(const Tensor& base, Shape shape, Dims strides, int64_t offset) {
  auto impl = make_ref<TensorImpl>();
  impl->dtype = base.dtype();
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->device = base.device();
  impl->storage = base.impl()->storage;
  return Tensor(std::move(impl));
}

int64_t strided_offset(const TensorImpl& impl, int64_t flat_index) {
  int64_t offset = impl.offset;
  for (int i = impl.shape.rank() - 1; i >= 0; --i) {
    int64_t d = impl.shape[i];
    offset += (flat_index % d) * impl.strides[i];
    flat_index /= d;
  }
  return offset;
}

}  // namespace detail
}  // namespace ef
