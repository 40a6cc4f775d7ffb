// C++ operators on tensors: + - * / and unary -, comparisons (elementwise, giving bool
// tensors), and && || ! on bool tensors. A C++ number on either side takes the
// tensor's dtype: `x * 2`, `1.f - x`, `x > 0`.
//
// Note: == and != compare elementwise and return a Tensor, as in TensorFlow 2; test
// whether two tensors are the same object with a.impl() == b.impl().
// && and || evaluate both sides (they are elementwise logical ops, not short-circuits).
#pragma once

#include <type_traits>

#include "eagerflow/ops/math.h"

namespace ef {

template <class S>
concept Number = std::is_arithmetic_v<S>;

#define EF_BINARY_OPERATOR(op, function)                                                   \
  inline Tensor operator op(const Tensor& a, const Tensor& b) { return function(a, b); } \
  template <Number S>                                                                      \
  Tensor operator op(const Tensor& a, S b) {                                              \
    return function(a, b);                                                                 \
  }                                                                                        \
  template <Number S>                                                                      \
  Tensor operator op(S a, const Tensor& b) {                                              \
    return function(a, b);                                                                 \
  }
EF_BINARY_OPERATOR(+, add)
EF_BINARY_OPERATOR(-, subtract)
EF_BINARY_OPERATOR(*, multiply)
EF_BINARY_OPERATOR(/, divide)
EF_BINARY_OPERATOR(==, equal)
EF_BINARY_OPERATOR(!=, not_equal)
EF_BINARY_OPERATOR(<, less)
EF_BINARY_OPERATOR(<=, less_equal)
EF_BINARY_OPERATOR(>, greater)
EF_BINARY_OPERATOR(>=, greater_equal)
EF_BINARY_OPERATOR(&&, logical_and)
EF_BINARY_OPERATOR(||, logical_or)
#undef EF_BINARY_OPERATOR

inline Tensor operator-(const Tensor& x) { return negative(x); }
inline Tensor operator!(const Tensor& x) { return logical_not(x); }

// Compound assignment rebinds the handle to a new tensor (tensors are immutable).
inline Tensor& operator+=(Tensor& a, const TensorOrScalar& b) { return a = add(a, b); }
inline Tensor& operator-=(Tensor& a, const TensorOrScalar& b) { return a = subtract(a, b); }
inline Tensor& operator*=(Tensor& a, const TensorOrScalar& b) { return a = multiply(a, b); }
inline Tensor& operator/=(Tensor& a, const TensorOrScalar& b) { return a = divide(a, b); }

}  // namespace ef
