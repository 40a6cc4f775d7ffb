// TensorOrScalar: the argument type of binary elementwise ops, so a C++ number can
// stand where a tensor is expected — `ef::maximum(x, 0)`, `2 * x` — and takes the
// other operand's dtype, as in TensorFlow. A number that the dtype cannot hold
// exactly (2.5 for an int32 tensor) is an InvalidArgumentError.
#pragma once

#include <type_traits>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/variable.h"

namespace ef {

class TensorOrScalar {
 public:
  TensorOrScalar(const Tensor& t) : tensor_(t), is_tensor_(true) {}  // NOLINT: implicit by design
  TensorOrScalar(Tensor&& t) : tensor_(std::move(t)), is_tensor_(true) {}  // NOLINT
  TensorOrScalar(const Variable& v) : tensor_(v.value()), is_tensor_(true) {}  // NOLINT: reads the variable
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
  TensorOrScalar(S value)  // NOLINT: implicit by design
      : value_(static_cast<double>(value)),
        int_value_(std::is_integral_v<S> ? static_cast<int64_t>(value) : 0),
        is_integral_(std::is_integral_v<S>),
        value_dtype_(dtype_of<canonical<S>>) {}

  // True when a Tensor was given, even an undefined one (which ops then reject).
  bool is_tensor() const { return is_tensor_; }
  const Tensor& tensor() const { return tensor_; }
  double value() const { return value_; }
  // The exact value of an integral number (value() may round beyond 2^53).
  int64_t int_value() const { return int_value_; }
  bool is_integral() const { return is_integral_; }
  // The dtype the number has on its own (double → float64, int → int32, ...).
  DType value_dtype() const { return value_dtype_; }

 private:
  template <class S>
  using canonical = std::conditional_t<
      std::is_same_v<S, bool>, bool,
      std::conditional_t<std::is_floating_point_v<S>, std::conditional_t<sizeof(S) <= 4, float, double>,
                         std::conditional_t<sizeof(S) <= 4, int32_t, int64_t>>>;
  Tensor tensor_;
  bool is_tensor_ = false;
  double value_ = 0;
  int64_t int_value_ = 0;
  bool is_integral_ = false;
  DType value_dtype_ = DType::Float32;
};

// The two operands as tensors: a number takes the dtype of the tensor beside it
// (both numbers: their own dtypes). Throws naming `op` if a number does not fit.
std::pair<Tensor, Tensor> resolve_operands(const TensorOrScalar& x, const TensorOrScalar& y,
                                           std::string_view op);
// A number as a scalar tensor of `dtype` (its own dtype if `dtype` is not given);
// throws naming `op` if it does not fit exactly.
Tensor scalar_tensor(const TensorOrScalar& number, DType dtype, std::string_view op = "scalar");

}  // namespace ef
