// ef.math's unary elementwise ops, with TensorFlow's argument names; the activations
// are in activation_ops.cpp.
#include "unary_binding.h"

namespace efpy {

void bind_unary_ops(py::module_& m) {
  bind_unary<ef::logical_not>(m, "logical_not", R"doc(Returns NOT x elementwise for a bool tensor.

>>> ef.logical_not([True, False]).numpy()
array([False,  True])

Args:
  x: A bool tensor-like.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of x's shape.

Raises:
  InvalidArgumentError: x is not bool.
)doc");
  // ---- unary, any numeric dtype ----
  bind_unary<ef::negative>(m, "negative", R"doc(Returns -x elementwise.

>>> ef.negative([3, -1]).numpy()
array([-3,  1], dtype=int32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x is bool.
)doc");
  bind_unary<ef::abs>(m, "abs", R"doc(Returns |x| elementwise.

The gradient at x = 0 is 0, as in TensorFlow.

>>> ef.abs([-1.5, 2.]).numpy()
array([1.5, 2. ], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x is bool.
)doc");
  bind_unary<ef::sign>(m, "sign", R"doc(Returns -1, 0 or 1 elementwise by the sign of x (NaN stays NaN).

Not differentiable (its gradient is None).

>>> ef.sign([-2., 0., 3.]).numpy()
array([-1.,  0.,  1.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x is bool.
)doc");
  bind_unary<ef::square>(m, "square", R"doc(Returns x * x elementwise.

>>> ef.square([3, -2]).numpy()
array([9, 4], dtype=int32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape (integers wrap on overflow).

Raises:
  InvalidArgumentError: x is bool.
)doc");

  // ---- unary, float dtypes only ----
  bind_unary<ef::reciprocal>(m, "reciprocal", R"doc(Returns 1 / x elementwise.

>>> ef.math.reciprocal([2., 4.]).numpy()
array([0.5 , 0.25], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape (inf where x is 0).

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::exp>(m, "exp", R"doc(Returns e ** x elementwise.

>>> ef.exp([0.]).numpy()
array([1.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype (use ef.cast first).
)doc");
  bind_unary<ef::expm1>(m, "expm1", R"doc(Returns exp(x) - 1 elementwise, accurate for x near 0.

>>> ef.math.expm1([0.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::log>(m, "log", R"doc(Returns the natural logarithm of x elementwise.

log(0) is -inf and the log of a negative number is NaN.

>>> ef.math.log([1.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype (use ef.cast first).
)doc");
  bind_unary<ef::log1p>(m, "log1p", R"doc(Returns log(1 + x) elementwise, accurate for x near 0.

>>> ef.math.log1p([0.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::sqrt>(m, "sqrt", R"doc(Returns the square root of x elementwise (NaN for negative x).

>>> ef.sqrt([4., 9.]).numpy()
array([2., 3.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype (use ef.cast first).
)doc");
  bind_unary<ef::rsqrt>(m, "rsqrt", R"doc(Returns 1 / sqrt(x) elementwise.

>>> ef.math.rsqrt([4., 16.]).numpy()
array([0.5 , 0.25], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::sin>(m, "sin", R"doc(Returns the sine of x (radians) elementwise.

>>> ef.sin([0.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::cos>(m, "cos", R"doc(Returns the cosine of x (radians) elementwise.

>>> ef.cos([0.]).numpy()
array([1.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::tan>(m, "tan", R"doc(Returns the tangent of x (radians) elementwise.

>>> ef.math.tan([0.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::asin>(m, "asin",
                       R"doc(Returns the arcsine of x elementwise, in [-pi/2, pi/2] (NaN outside [-1, 1]).

>>> ef.math.asin([0.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::acos>(m, "acos",
                       R"doc(Returns the arccosine of x elementwise, in [0, pi] (NaN outside [-1, 1]).

>>> ef.math.acos([1.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::atan>(m, "atan", R"doc(Returns the arctangent of x elementwise, in (-pi/2, pi/2).

>>> ef.math.atan([0.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::sinh>(m, "sinh", R"doc(Returns the hyperbolic sine of x elementwise.

>>> ef.math.sinh([0.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::cosh>(m, "cosh", R"doc(Returns the hyperbolic cosine of x elementwise.

>>> ef.math.cosh([0.]).numpy()
array([1.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::tanh>(m, "tanh", R"doc(Returns the hyperbolic tangent of x elementwise, in [-1, 1].

Also ef.nn.tanh.

>>> ef.tanh([0.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::erf>(m, "erf", R"doc(Returns the Gauss error function of x elementwise.

>>> ef.math.erf([0.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape, in [-1, 1].

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::floor>(m, "floor", R"doc(Returns the largest integer not greater than x, elementwise.

Not differentiable (its gradient is None).

>>> ef.floor([1.5, -1.5]).numpy()
array([ 1., -2.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype (still floating) and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::ceil>(m, "ceil", R"doc(Returns the smallest integer not less than x, elementwise.

Not differentiable (its gradient is None).

>>> ef.math.ceil([1.5, -1.5]).numpy()
array([ 2., -1.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype (still floating) and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::round>(
      m, "round", R"doc(Rounds x to the nearest integer elementwise, halves to even (as TensorFlow and NumPy).

Not differentiable (its gradient is None).

>>> ef.round([0.5, 1.5, 2.5, -0.7]).numpy()
array([ 0.,  2.,  2., -1.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype (still floating) and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::isnan>(m, "is_nan", R"doc(Returns which elements of x are NaN.

>>> ef.math.is_nan([1., float("nan")]).numpy()
array([False,  True])

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of x's shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::isinf>(m, "is_inf", R"doc(Returns which elements of x are +inf or -inf.

>>> ef.math.is_inf([1., float("-inf")]).numpy()
array([False,  True])

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of x's shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  bind_unary<ef::isfinite>(m, "is_finite", R"doc(Returns which elements of x are finite (neither inf nor NaN).

>>> ef.math.is_finite([1., float("inf"), float("nan")]).numpy()
array([ True, False, False])

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of x's shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
}

}  // namespace efpy
