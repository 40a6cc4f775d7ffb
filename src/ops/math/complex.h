// The complex forms of real ops, composed from complex/real/imag (Note [complex dtypes]
// in eagerflow/core/dtype.h). The ops' public functions call these when an operand is
// complex. Internal to src/ops.
#pragma once

#include <optional>
#include <string_view>

#include "eagerflow/ops/axes.h"
#include "eagerflow/ops/scalar.h"

namespace ef::detail {

// Whether either operand is a complex tensor.
bool involves_complex(const TensorOrScalar& x, const TensorOrScalar& y);
// add, subtract, multiply, divide, equal and not_equal of complex operands (a number
// becomes a complex of the tensor's dtype); nothing for other ops, which then refuse
// complex inputs themselves.
std::optional<Tensor> complex_binary(std::string_view op, const TensorOrScalar& x, const TensorOrScalar& y);
// negative, abs, square, exp and log of a complex tensor; nothing for other ops.
std::optional<Tensor> complex_unary(std::string_view op, const Tensor& x);
// reduce_sum and reduce_mean of a complex tensor.
Tensor complex_reduce(std::string_view op, const Tensor& x, const Axes& axis, bool keepdims);
Tensor complex_matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b);
// cast to or from a complex dtype: a complex to a real dtype keeps the real part.
Tensor complex_cast(const Tensor& x, DType dtype);

}  // namespace ef::detail
