// Tensor: a cheap, reference-counted handle to an n-dimensional array.
//
//   ef::Tensor x = ef::constant({{1.f, 2.f}, {3.f, 4.f}});
//   std::cout << x[0] << "\n";        // Tensor([1. 2.], shape=(2,), dtype=float32)
//   float first = x[0][0].item<float>();
//   if (x[1][1] > x[0][0]) { ... }    // one-element bool tensors convert to bool
//
// An eager tensor owns (a view of) a Storage: dtype, shape, strides and an offset into
// the storage describe its elements. A symbolic tensor (graph mode) has dtype and a
// possibly partial shape but no storage; it stands for an output of a graph node.
// Tensors are immutable through this API: ops always produce new tensors, which may
// share storage with their inputs (views) — see Note [views].
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "eagerflow/core/allocator.h"
#include "eagerflow/core/device.h"
#include "eagerflow/core/dtype.h"
#include "eagerflow/core/error.h"
#include "eagerflow/core/ref.h"
#include "eagerflow/core/shape.h"

namespace ef {

// Whatever graph mode attaches to a symbolic tensor (the node and output index).
// Core only knows that it exists; the graph layer subclasses it.
class SymbolicValue : public RefCounted {
 public:
  // True for the stand-ins a gradient tape records in place of values it does not
  // keep (Note [gradient uses] in op_def.h): they never get a value.
  virtual bool released_by_tape() const { return false; }
};

// Note [views]: some ops (reshape of a contiguous tensor, t[i], slices, transpose,
// expand_dims, squeeze, broadcast_to) return tensors that share their input's Storage
// with other strides or offset. This is safe because no public op writes into an
// existing tensor; state that changes (Variables) swaps in a new Storage instead.
class TensorImpl : public RefCounted {
 public:
  DType dtype = DType::Float32;
  Shape shape;
  Dims strides;        // in elements; 0 for a broadcast dimension
  int64_t offset = 0;  // in elements, into storage
  Device device = kCPU;
  Ref<Storage> storage;           // null for symbolic tensors
  Ref<SymbolicValue> symbolic;    // set for symbolic tensors
  int64_t id = 0;                 // assigned lazily by autodiff to identify tensors on a tape

  bool is_contiguous() const;
};

class Tensor {
 public:
  // An undefined tensor (no value); most operations on it throw.
  Tensor() = default;
  explicit Tensor(Ref<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  DType dtype() const { return checked().dtype; }
  const Shape& shape() const { return checked().shape; }
  int rank() const { return shape().rank(); }
  // Number of elements; kUnknownDim for a symbolic tensor whose shape is partial.
  int64_t num_elements() const { return shape().num_elements(); }
  // Size of dimension `axis` (negative counts from the end).
  int64_t dim(int axis) const;
  Device device() const { return checked().device; }
  const Dims& strides() const { return checked().strides; }
  bool is_symbolic() const { return defined() && impl_->symbolic; }
  bool is_contiguous() const { return checked().is_contiguous(); }

  // The single element converted to T. Throws InvalidArgumentError unless the tensor
  // has exactly one element, FailedPreconditionError for a symbolic tensor.
  template <class T> T item() const;
  // All elements in row-major order, converted to T.
  template <class T> std::vector<T> to_vector() const;
  // Raw pointer to the first element of a contiguous CPU tensor of dtype T.
  template <class T> const T* data() const;
  // Untyped pointer to the first element (CPU, any layout: use strides()).
  const void* raw_data() const;

  // The sub-tensor at `index` along the first axis (negative counts from the end),
  // one rank less. Throws OutOfRangeError for a bad index, InvalidArgumentError on a scalar.
  Tensor operator[](int64_t index) const;
  // A contiguous tensor with the same values (this tensor itself when already contiguous).
  Tensor contiguous() const;
  // The tensor on `device`: itself when it is already there, else a copy (include
  // eagerflow/core/cuda.h for GPUs). A copy to the host waits for the device's queued
  // work; without a CUDA device, moving to one throws UnimplementedError saying why.
  Tensor to(Device device) const;
  Tensor cpu() const { return to(kCPU); }
  Tensor gpu(int index = 0) const { return to(Device{DeviceType::CUDA, index}); }

  // A one-element tensor is true when its value is non-zero, so
  // `if (a[0] > b[0]) break;` works. Any other shape throws InvalidArgumentError
  // naming the shape; a symbolic tensor throws (use cond / while_loop).
  explicit operator bool() const;

  // "Tensor([[4.]], shape=(1, 1), dtype=float32)", summarized like NumPy when large.
  std::string to_string() const;

  TensorImpl* impl() const { return impl_.get(); }
  const Ref<TensorImpl>& impl_ref() const { return impl_; }

 private:
  const TensorImpl& checked() const;

  Ref<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

namespace detail {
// A new eager tensor with fresh, uninitialized contiguous storage. Validates the shape
// (negative sizes, overflow) naming `op`.
Tensor empty_tensor(DType dtype, const Shape& shape, Device device = kCPU,
                    std::string_view op = "empty");
// A view of `base`'s storage with another shape, strides and offset (Note [views]).
Tensor make_view(const Tensor& base, Shape shape, Dims strides, int64_t offset);
// Reads element `flat_index` (row-major over the logical shape) as T.
template <class T> T read_element(const TensorImpl& impl, int64_t flat_index);
// The stored element v as an arithmetic value (float for the half storage types).
template <class S>
auto arithmetic_value(S v) {
  if constexpr (is_half_storage<S>)
    return static_cast<float>(v);
  else
    return v;
}
// v as T. A float that T cannot hold (NaN, inf, out of range) converting to an integer
// type is undefined behaviour in C++, and an integer T cannot hold would silently wrap,
// so both throw InvalidArgumentError naming `what`.
template <class T, class S>
T convert_element(S v, const char* what) {
  if constexpr (is_half_storage<S>) {
    return convert_element<T>(static_cast<float>(v), what);
  } else {
    if constexpr (std::is_floating_point_v<S> && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const S lo = static_cast<S>(std::numeric_limits<T>::min());
      const S hi = std::ldexp(S(1), std::numeric_limits<T>::digits);  // max + 1, exact
      if (!(std::trunc(v) >= lo && v < hi))
        fail(what, ": the value ", v, " cannot be converted to a ", sizeof(T) * 8, "-bit integer");
    }
    if constexpr (std::is_integral_v<S> && std::is_integral_v<T> && !std::is_same_v<S, bool> &&
                  !std::is_same_v<T, bool>) {
      if (!std::in_range<T>(v))
        fail(what, ": the value ", +v, " does not fit in ",
             std::is_signed_v<T> ? "a signed " : "an unsigned ", sizeof(T) * 8, "-bit integer");
    }
    return static_cast<T>(v);
  }
}
// Offset, in elements, of row-major element `flat_index` of a strided tensor.
int64_t strided_offset(const TensorImpl& impl, int64_t flat_index);
}  // namespace detail

// ----------------------------------------------------------------------------------
// Template definitions.

template <class T>
T Tensor::item() const {
  static_assert(std::is_arithmetic_v<T>, "item<T>() needs an arithmetic T");
  const TensorImpl& t = checked();
  if (t.symbolic)
    fail<FailedPreconditionError>("item: the tensor is symbolic (graph mode) and has no value yet");
  if (t.shape.num_elements() != 1)
    fail("item: expected a tensor with exactly one element, got shape ", t.shape);
  if (t.device.type != DeviceType::CPU) return cpu().item<T>();  // waits for the device
  return dispatch_storage_dtype(t.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    return detail::convert_element<T>(detail::read_element<S>(t, 0), "item");
  });
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  static_assert(std::is_arithmetic_v<T>, "to_vector<T>() needs an arithmetic T");
  const TensorImpl& t = checked();
  if (t.symbolic)
    fail<FailedPreconditionError>("to_vector: the tensor is symbolic (graph mode) and has no value yet");
  if (t.device.type != DeviceType::CPU) return cpu().to_vector<T>();  // waits for the device
  std::vector<T> out(static_cast<size_t>(t.shape.num_elements()));
  dispatch_storage_dtype(t.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if (t.is_contiguous()) {
      const S* p = static_cast<const S*>(t.storage->data()) + t.offset;
      for (size_t i = 0; i < out.size(); ++i) out[i] = detail::convert_element<T>(p[i], "to_vector");
    } else {
      for (size_t i = 0; i < out.size(); ++i)
        out[i] = detail::convert_element<T>(detail::read_element<S>(t, static_cast<int64_t>(i)), "to_vector");
    }
  });
  return out;
}

template <class T>
const T* Tensor::data() const {
  const TensorImpl& t = checked();
  if (t.symbolic) fail<FailedPreconditionError>("data: the tensor is symbolic and has no memory");
  if (t.dtype != dtype_of<T>)
    fail("data: requested element type ", dtype_of<T>, " but the tensor has dtype ", t.dtype);
  if (t.device.type != DeviceType::CPU) fail("data: the tensor is on ", t.device, ", not the CPU");
  if (!t.is_contiguous()) fail("data: the tensor is not contiguous; call contiguous() first");
  return static_cast<const T*>(t.storage->data()) + t.offset;
}

template <class T>
T detail::read_element(const TensorImpl& impl, int64_t flat_index) {
  return static_cast<const T*>(impl.storage->data())[strided_offset(impl, flat_index)];
}

}  // namespace ef
