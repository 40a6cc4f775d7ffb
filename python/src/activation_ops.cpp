// The activations (ef.sigmoid, ef.nn.relu, ...), with TensorFlow's argument names.
#include "unary_binding.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};  // errors name no C++ location for Python callers

}  // namespace

void bind_activation_ops(py::module_& m) {
  bind_unary<ef::sigmoid>(m, "sigmoid",
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
  bind_unary<ef::relu>(m, "relu", R"doc(Returns max(x, 0) elementwise (NaN stays NaN).

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
  bind_unary<ef::relu6>(m, "relu6", R"doc(Returns min(max(x, 0), 6) elementwise.

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
  bind_unary<ef::elu>(m, "elu", R"doc(Returns x where x > 0, exp(x) - 1 elsewhere (exponential linear unit).

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
  bind_unary<ef::selu>(m, "selu", R"doc(Returns scale * elu(x) with alpha: scaled exponential linear unit.

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
  bind_unary<ef::softplus>(m, "softplus", R"doc(Returns log(1 + exp(x)) elementwise, without overflow.

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
  bind_unary<ef::softsign>(m, "softsign", R"doc(Returns x / (1 + |x|) elementwise.

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
