// ef.math's unary elementwise ops and the activations, with TensorFlow's argument
// names.
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;

constexpr ef::CallSite kPython{};  // errors name no C++ location for Python callers

using UnaryOp = ef::Tensor (*)(const ef::Tensor&, ef::CallSite);

template <UnaryOp op>
void unary(py::module_& m, const char* name, const char* doc) {
  m.def(
      name,
      [](TensorArg x, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return op(x, kPython); });
      },
      doc, "x"_a, "name"_a = py::none());
}

}  // namespace

void bind_unary_ops(py::module_& m) {
  unary<ef::logical_not>(m, "logical_not", R"doc(Returns NOT x elementwise for a bool tensor.

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
  unary<ef::negative>(m, "negative", R"doc(Returns -x elementwise.

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
  unary<ef::abs>(m, "abs", R"doc(Returns |x| elementwise.

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
  unary<ef::sign>(m, "sign", R"doc(Returns -1, 0 or 1 elementwise by the sign of x (NaN stays NaN).

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
  unary<ef::square>(m, "square", R"doc(Returns x * x elementwise.

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
  unary<ef::reciprocal>(m, "reciprocal", R"doc(Returns 1 / x elementwise.

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
  unary<ef::exp>(m, "exp", R"doc(Returns e ** x elementwise.

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
  unary<ef::expm1>(m, "expm1", R"doc(Returns exp(x) - 1 elementwise, accurate for x near 0.

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
  unary<ef::log>(m, "log", R"doc(Returns the natural logarithm of x elementwise.

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
  unary<ef::log1p>(m, "log1p", R"doc(Returns log(1 + x) elementwise, accurate for x near 0.

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
  unary<ef::sqrt>(m, "sqrt", R"doc(Returns the square root of x elementwise (NaN for negative x).

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
  unary<ef::rsqrt>(m, "rsqrt", R"doc(Returns 1 / sqrt(x) elementwise.

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
  unary<ef::sin>(m, "sin", R"doc(Returns the sine of x (radians) elementwise.

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
  unary<ef::cos>(m, "cos", R"doc(Returns the cosine of x (radians) elementwise.

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
  unary<ef::tan>(m, "tan", R"doc(Returns the tangent of x (radians) elementwise.

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
  unary<ef::asin>(m, "asin",
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
  unary<ef::acos>(m, "acos", R"doc(Returns the arccosine of x elementwise, in [0, pi] (NaN outside [-1, 1]).

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
  unary<ef::atan>(m, "atan", R"doc(Returns the arctangent of x elementwise, in (-pi/2, pi/2).

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
  unary<ef::sinh>(m, "sinh", R"doc(Returns the hyperbolic sine of x elementwise.

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
  unary<ef::cosh>(m, "cosh", R"doc(Returns the hyperbolic cosine of x elementwise.

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
  unary<ef::tanh>(m, "tanh", R"doc(Returns the hyperbolic tangent of x elementwise, in [-1, 1].

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
  unary<ef::erf>(m, "erf", R"doc(Returns the Gauss error function of x elementwise.

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
  unary<ef::floor>(m, "floor", R"doc(Returns the largest integer not greater than x, elementwise.

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
  unary<ef::ceil>(m, "ceil", R"doc(Returns the smallest integer not less than x, elementwise.

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
  unary<ef::round>(
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
  unary<ef::isnan>(m, "is_nan", R"doc(Returns which elements of x are NaN.

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
  unary<ef::isinf>(m, "is_inf", R"doc(Returns which elements of x are +inf or -inf.

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
  unary<ef::isfinite>(m, "is_finite", R"doc(Returns which elements of x are finite (neither inf nor NaN).

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

  // ---- activations ----
  unary<ef::sigmoid>(m, "sigmoid",
                     R"doc(Returns 1 / (1 + exp(-x)) elementwise, without overflow for large |x|.

Also ef.math.sigmoid and ef.nn.sigmoid.

>>> ef.sigmoid([0.]).numpy()
array([0.5], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape, in [0, 1].

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  m.def(
      "sigmoid_grad", [](TensorArg y, TensorArg dy, py::handle) { return ef::sigmoid_grad(y, dy, kPython); },
      R"doc(Returns dy * y * (1 - y): the gradient of sigmoid from its output y.

TensorFlow's raw SigmoidGrad, in one pass; y is sigmoid's output (not its input)
and dy the gradient flowing into it.

>>> ef.math.sigmoid_grad([0.5], [1.]).numpy()
array([0.25], dtype=float32)

Args:
  y: A tensor-like of a float dtype (float16, bfloat16, float32, float64), the
    output of ef.sigmoid.
  dy: A tensor-like of y's dtype; the shapes broadcast.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of y's dtype and of the broadcast shape.

Raises:
  InvalidArgumentError: the dtypes differ or are not float, or the
    shapes do not broadcast.
)doc",
      "y"_a, "dy"_a, "name"_a = py::none());
  unary<ef::relu>(m, "relu", R"doc(Returns max(x, 0) elementwise (NaN stays NaN).

>>> ef.nn.relu([-1., 2.]).numpy()
array([0., 2.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  unary<ef::relu6>(m, "relu6", R"doc(Returns min(max(x, 0), 6) elementwise.

>>> ef.nn.relu6([-1., 3., 7.]).numpy()
array([0., 3., 6.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  unary<ef::elu>(m, "elu", R"doc(Returns x where x > 0, exp(x) - 1 elsewhere (exponential linear unit).

>>> ef.nn.elu([0., 2.]).numpy()
array([0., 2.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  unary<ef::selu>(m, "selu", R"doc(Returns scale * elu(x) with alpha: scaled exponential linear unit.

scale = 1.05070098 and alpha = 1.67326324 (Klambauer et al., as TensorFlow):
scale * x where x > 0, scale * alpha * (exp(x) - 1) elsewhere.

>>> ef.nn.selu([0.]).numpy()
array([0.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  unary<ef::softplus>(m, "softplus", R"doc(Returns log(1 + exp(x)) elementwise, without overflow.

Computed as max(x, 0) + log1p(exp(-|x|)). Also ef.nn.softplus.

>>> ef.math.softplus([-200., 100.]).numpy()
array([  0., 100.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");
  unary<ef::softsign>(m, "softsign", R"doc(Returns x / (1 + |x|) elementwise.

>>> ef.nn.softsign([1., -3.]).numpy()
array([ 0.5 , -0.75], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32 or float64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape, in (-1, 1).

Raises:
  InvalidArgumentError: x has an integer or bool dtype.
)doc");

  m.def(
      "clip_by_value",
      [](TensorArg t, OperandArg lo, OperandArg hi, py::handle) {
        return ef::clip_by_value(t, lo, hi, kPython);
      },
      R"doc(Clips t to [clip_value_min, clip_value_max]: min(max(t, clip_value_min), clip_value_max).

The bounds broadcast against t with NumPy's rules.

>>> ef.clip_by_value([1, 5, 9], 2, 8).numpy()
array([2, 5, 8], dtype=int32)

Args:
  t: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  clip_value_min: A tensor-like or Python number (which takes t's dtype).
  clip_value_max: A tensor-like or Python number (which takes t's dtype).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of t's dtype and of the broadcast shape of t and the bounds.

Raises:
  InvalidArgumentError: a bound has another dtype, does not fit t's dtype
    exactly, or does not broadcast.
)doc",
      "t"_a, "clip_value_min"_a, "clip_value_max"_a, "name"_a = py::none());
  m.def(
      "cast",
      [](TensorArg x, DTypeArg dtype, py::handle) {
        if (!dtype.value) throw py::type_error("cast: dtype is required");
        return ef::cast(x, *dtype.value, kPython);
      },
      R"doc(Converts x to dtype.

Floats become integers by truncation toward zero; anything becomes bool as
x != 0; bool becomes 1 or 0.

>>> ef.cast([1.7, -1.7], ef.int32).numpy()
array([ 1, -1], dtype=int32)

Args:
  x: A tensor-like of any dtype.
  dtype: The target dtype: an ef.DType (ef.float32, ...), its name ("float16"),
    a NumPy dtype, or float, int, bool.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's shape and of dtype `dtype`.

Raises:
  TypeError: dtype is None or not a dtype eagerflow has.
)doc",
      "x"_a, "dtype"_a, "name"_a = py::none());
  m.def(
      "leaky_relu", [](TensorArg x, double alpha, py::handle) { return ef::leaky_relu(x, alpha, kPython); },
      R"doc(Returns x where x > 0, alpha * x elsewhere (leaky rectified linear unit).

>>> ef.nn.leaky_relu([-1., 2.]).numpy()
array([-0.2,  2. ], dtype=float32)

Args:
  features: A tensor-like of dtype float16, bfloat16, float32 or float64.
  alpha: The slope for x <= 0, a Python float (default 0.2, as TensorFlow).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the dtype and shape of features.

Raises:
  InvalidArgumentError: features has an integer or bool dtype.
)doc",
      "features"_a, "alpha"_a = 0.2, "name"_a = py::none());
  m.def(
      "gelu", [](TensorArg x, bool approximate, py::handle) { return ef::gelu(x, approximate, kPython); },
      R"doc(Returns x * Phi(x), the Gaussian error linear unit.

Phi is the standard normal CDF, 0.5 * (1 + erf(x / sqrt(2))); with `approximate`
it is TensorFlow's tanh approximation,
0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x ** 3))).

>>> ef.nn.gelu([0.]).numpy()
array([0.], dtype=float32)

Args:
  features: A tensor-like of dtype float16, bfloat16, float32 or float64.
  approximate: Whether to use the tanh approximation (default False).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the dtype and shape of features.

Raises:
  InvalidArgumentError: features has an integer or bool dtype.
)doc",
      "features"_a, "approximate"_a = false, "name"_a = py::none());
}

}  // namespace efpy
