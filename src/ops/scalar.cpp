#include "eagerflow/ops/scalar.h"

#include <cmath>
#include <limits>

namespace ef {
namespace {

// The number converted to T, or a thrown error when T cannot hold it exactly.
template <class T>
T exact_value(const TensorOrScalar& n, DType dtype, std::string_view op) {
  auto reject = [&] {
    if (n.is_integral()) fail(op, ": the number ", n.int_value(), " cannot be represented exactly in dtype ", dtype);
    fail(op, ": the number ", n.value(), " cannot be represented exactly in dtype ", dtype);
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (n.value_dtype() != DType::Bool && n.value() != 0 && n.value() != 1) reject();
    return n.value() != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (n.is_integral()) {
      int64_t v = n.int_value();
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) reject();
      return static_cast<T>(v);
    }
    double v = n.value();
    // max + 1 is a power of two, exact as a double (max itself may round up to it).
    if (!(v == std::trunc(v)) || v < static_cast<double>(std::numeric_limits<T>::min()) ||
        v >= std::ldexp(1.0, std::numeric_limits<T>::digits))
      reject();
    return static_cast<T>(v);
  } else if constexpr (is_half_storage<T>) {
    const float v = n.is_integral() ? static_cast<float>(n.int_value()) : static_cast<float>(n.value());
    if constexpr (std::is_same_v<T, float16_t>)
      return to_float16(v);
    else
      return to_bfloat16(v);
  } else {
    // Floats take any number; like TensorFlow, 0.1 becomes the nearest float32.
    return n.is_integral() ? static_cast<T>(n.int_value()) : static_cast<T>(n.value());
  }
}

}  // namespace

Tensor scalar_tensor(const TensorOrScalar& number, DType dtype, std::string_view op) {
  if (number.is_tensor()) return number.tensor();
  Tensor t = detail::empty_tensor(dtype, Shape{}, kCPU, op);
  if (is_complex(dtype)) {  // a real number next to a complex tensor: its real part
    const double v = number.is_integral() ? static_cast<double>(number.int_value()) : number.value();
    if (dtype == DType::Complex64)
      *static_cast<std::complex<float>*>(t.impl()->storage->data()) = {static_cast<float>(v), 0.0f};
    else
      *static_cast<std::complex<double>*>(t.impl()->storage->data()) = {v, 0.0};
    return t;
  }
  dispatch_storage_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *static_cast<T*>(t.impl()->storage->data()) = exact_value<T>(number, dtype, op);
  });
  return t;
}

std::pair<Tensor, Tensor> resolve_operands(const TensorOrScalar& x, const TensorOrScalar& y,
                                           std::string_view op) {
  // An undefined tensor next to a number has no dtype to give it: report it here.
  if (x.is_tensor() && !x.tensor().defined()) fail(op, ": input 0 is an undefined tensor");
  if (y.is_tensor() && !y.tensor().defined()) fail(op, ": input 1 is an undefined tensor");
  if (x.is_tensor() && y.is_tensor()) return {x.tensor(), y.tensor()};
  if (x.is_tensor()) return {x.tensor(), scalar_tensor(y, x.tensor().dtype(), op)};
  if (y.is_tensor()) return {scalar_tensor(x, y.tensor().dtype(), op), y.tensor()};
  return {scalar_tensor(x, x.value_dtype(), op), scalar_tensor(y, y.value_dtype(), op)};
}

}  // namespace ef
