// Elementwise math: binary ops with NumPy broadcasting, and unary ops.
//
//   ef::Tensor y = ef::exp(x) * 2 + ef::maximum(x, 0);
//
// Binary ops require both operands to have the same dtype (TensorFlow's rule: mixing
// float32 with float64 is an InvalidArgumentError naming both; use ef::cast). A C++
// number takes the dtype of the tensor beside it. Shapes broadcast as in NumPy;
// incompatible shapes throw InvalidArgumentError naming both.
#pragma once

#include <optional>

#include "eagerflow/core/tensor.h"
#include "eagerflow/ops/scalar.h"

namespace ef {

// ---- Binary arithmetic (float32, float64, int32, int64) ----
Tensor add(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor subtract(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor multiply(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
// x / y. For integers this is truncating division; division by zero throws.
Tensor divide(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
// floor(x / y) (Python's //). Integer division by zero throws InvalidArgumentError.
Tensor floordiv(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
// x - floordiv(x, y) * y: the result has the sign of y (Python's %). Integer modulo by zero throws.
Tensor floormod(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
// x / y rounded toward zero (C's /). Integer division by zero throws InvalidArgumentError.
Tensor truncatediv(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
// x - truncatediv(x, y) * y: the result has the sign of x (C's fmod). Integer modulo by zero throws.
Tensor truncatemod(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
// x ** y. For integers a negative exponent throws InvalidArgumentError.
Tensor pow(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor maximum(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor minimum(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
// (x - y)^2.
Tensor squared_difference(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());

// ---- Binary, float dtypes only (integer inputs throw InvalidArgumentError) ----
// The angle of the point (x, y) in [-pi, pi], with C's quadrants and signed zeros.
Tensor atan2(const TensorOrScalar& y, const TensorOrScalar& x, CallSite where = CallSite::current());
// The polygamma function psi^(a)(x), the a-th derivative of digamma; NaN unless a is a
// non-negative integer. Differentiable in x only (a gradient for a throws UnimplementedError).
Tensor polygamma(const TensorOrScalar& a, const TensorOrScalar& x, CallSite where = CallSite::current());
// x * log(y), x / y and x * log1p(y), but 0 wherever x == 0 (whatever y is), and so is
// the gradient there. Composite; the dtypes must be the same float dtype.
Tensor xlogy(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor xdivy(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor xlog1py(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());

// ---- Comparisons (any dtype; equality also for bool) → bool ----
Tensor equal(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor not_equal(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor less(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor less_equal(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor greater(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor greater_equal(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());

// ---- Logical (bool only) ----
Tensor logical_and(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor logical_or(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor logical_xor(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where = CallSite::current());
Tensor logical_not(const Tensor& x, CallSite where = CallSite::current());

// ---- Unary, any numeric dtype ----
Tensor negative(const Tensor& x, CallSite where = CallSite::current());
Tensor abs(const Tensor& x, CallSite where = CallSite::current());
// -1, 0 or 1 (0 for NaN stays NaN).
Tensor sign(const Tensor& x, CallSite where = CallSite::current());
Tensor square(const Tensor& x, CallSite where = CallSite::current());

// ---- Unary, float32/float64 only (integer inputs throw InvalidArgumentError) ----
Tensor reciprocal(const Tensor& x, CallSite where = CallSite::current());
Tensor exp(const Tensor& x, CallSite where = CallSite::current());
// exp(x) - 1, accurate near 0.
Tensor expm1(const Tensor& x, CallSite where = CallSite::current());
Tensor log(const Tensor& x, CallSite where = CallSite::current());
// log(1 + x), accurate near 0.
Tensor log1p(const Tensor& x, CallSite where = CallSite::current());
Tensor sqrt(const Tensor& x, CallSite where = CallSite::current());
// 1 / sqrt(x).
Tensor rsqrt(const Tensor& x, CallSite where = CallSite::current());
Tensor sin(const Tensor& x, CallSite where = CallSite::current());
Tensor cos(const Tensor& x, CallSite where = CallSite::current());
Tensor tan(const Tensor& x, CallSite where = CallSite::current());
Tensor asin(const Tensor& x, CallSite where = CallSite::current());
Tensor acos(const Tensor& x, CallSite where = CallSite::current());
Tensor atan(const Tensor& x, CallSite where = CallSite::current());
Tensor sinh(const Tensor& x, CallSite where = CallSite::current());
Tensor cosh(const Tensor& x, CallSite where = CallSite::current());
Tensor tanh(const Tensor& x, CallSite where = CallSite::current());
Tensor erf(const Tensor& x, CallSite where = CallSite::current());
// 1 - erf(x), accurate where erf(x) is near 1.
Tensor erfc(const Tensor& x, CallSite where = CallSite::current());
// The inverse of erf on (-1, 1): +-inf at +-1, NaN outside [-1, 1].
Tensor erfinv(const Tensor& x, CallSite where = CallSite::current());
Tensor asinh(const Tensor& x, CallSite where = CallSite::current());
// NaN for x < 1.
Tensor acosh(const Tensor& x, CallSite where = CallSite::current());
// +-inf at +-1, NaN for |x| > 1.
Tensor atanh(const Tensor& x, CallSite where = CallSite::current());
// log |Gamma(x)|: +inf at 0 and the negative integers, finite between them.
Tensor lgamma(const Tensor& x, CallSite where = CallSite::current());
// d/dx lgamma(x): -inf at +0, +inf at -0, NaN at the negative integers.
Tensor digamma(const Tensor& x, CallSite where = CallSite::current());
// exp(-|x|) I0(x) and exp(-|x|) I1(x), the exponentially scaled modified Bessel
// functions of the first kind (finite for every finite x).
Tensor bessel_i0e(const Tensor& x, CallSite where = CallSite::current());
Tensor bessel_i1e(const Tensor& x, CallSite where = CallSite::current());
// log(sigmoid(x)) = -softplus(-x), without overflow. Composite.
Tensor log_sigmoid(const Tensor& x, CallSite where = CallSite::current());
Tensor floor(const Tensor& x, CallSite where = CallSite::current());
Tensor ceil(const Tensor& x, CallSite where = CallSite::current());
// Rounds half to even, as TensorFlow and NumPy do.
Tensor round(const Tensor& x, CallSite where = CallSite::current());

// ---- Predicates (float → bool) ----
Tensor isnan(const Tensor& x, CallSite where = CallSite::current());
Tensor isinf(const Tensor& x, CallSite where = CallSite::current());
Tensor isfinite(const Tensor& x, CallSite where = CallSite::current());

// min(max(x, clip_min), clip_max), clip bounds broadcasting against x.
Tensor clip_by_value(const Tensor& x, const TensorOrScalar& clip_min, const TensorOrScalar& clip_max,
                     CallSite where = CallSite::current());

// x with NaN replaced by `nan`, +inf by `posinf` and -inf by `neginf` (by default the
// largest and lowest finite values of x's dtype). Integer and bool tensors come back as
// they are. The gradient passes where x is finite and is 0 elsewhere. Composite.
Tensor nan_to_num(const Tensor& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt, CallSite where = CallSite::current());

// ---- Complex numbers (complex64, complex128; Note [complex dtypes] in core/dtype.h) ----
// real + i imag, from two float32 (complex64) or float64 (complex128) tensors, broadcast.
Tensor complex(const Tensor& real, const Tensor& imag, CallSite where = CallSite::current());
// The real and imaginary parts (float32 or float64). A real x is its own real part and
// has imaginary part 0.
Tensor real(const Tensor& x, CallSite where = CallSite::current());
Tensor imag(const Tensor& x, CallSite where = CallSite::current());
// The complex conjugate re - i im; a real x unchanged. Composite.
Tensor conj(const Tensor& x, CallSite where = CallSite::current());
// The argument atan2(imag, real) in [-pi, pi]; for a real x, pi where x < 0, else 0. Composite.
Tensor angle(const Tensor& x, CallSite where = CallSite::current());

// Converts to `dtype`: floats to integers truncate toward zero; to bool is x != 0; a
// complex number to a real dtype keeps its real part.
Tensor cast(const Tensor& x, DType dtype, CallSite where = CallSite::current());

}  // namespace ef
