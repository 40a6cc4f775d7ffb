// ef.math: binary elementwise ops, comparisons and logical ops, with TensorFlow's
// argument names (unary ops and activations: unary_ops.cpp).
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;

constexpr ef::CallSite kPython{};  // errors name no C++ location for Python callers

using BinaryOp = ef::Tensor (*)(const ef::TensorOrScalar&, const ef::TensorOrScalar&, ef::CallSite);

// Two Python numbers become tensors with TensorFlow's defaults (ef.add(1., 2.) is
// float32); otherwise a number takes the tensor's dtype.
template <BinaryOp op>
void binary(py::module_& m, const char* name, const char* doc) {
  m.def(
      name,
      [](py::handle x, py::handle y, py::handle) {
        auto [a, b] = to_operands(x, y);
        return op(a, b, kPython);
      },
      doc, "x"_a, "y"_a, "name"_a = py::none());
}

}  // namespace

void bind_math_ops(py::module_& m) {
  // ---- binary arithmetic ----
  binary<ef::add>(m, "add", R"doc(Returns x + y elementwise, with NumPy broadcasting.

>>> ef.add([1, 2], 10).numpy()
array([11, 12], dtype=int32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype
    (two Python numbers: float32 or int32).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the operands' dtype and of their broadcast shape.

Raises:
  InvalidArgumentError: the dtypes differ or are not supported (bool), a Python
    number does not fit the dtype exactly, or the shapes do not broadcast.
)doc");
  binary<ef::subtract>(m, "subtract", R"doc(Returns x - y elementwise, with NumPy broadcasting.

>>> ef.subtract([5., 6.], 1.).numpy()
array([4., 5.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the operands' dtype and of their broadcast shape (integers wrap on
  overflow).

Raises:
  InvalidArgumentError: the dtypes differ or are not supported (bool), a Python
    number does not fit the dtype exactly, or the shapes do not broadcast.
)doc");
  binary<ef::multiply>(m, "multiply", R"doc(Returns x * y elementwise, with NumPy broadcasting.

>>> ef.multiply([[1.], [2.]], [10., 20.]).numpy()
array([[10., 20.],
       [20., 40.]], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the operands' dtype and of their broadcast shape.

Raises:
  InvalidArgumentError: the dtypes differ or are not supported (bool), a Python
    number does not fit the dtype exactly, or the shapes do not broadcast.
)doc");
  binary<true_divide>(m, "divide", R"doc(Returns x / y elementwise (true division), with NumPy broadcasting.

As TensorFlow's tf.divide and Python's `/`: int32 and int64 operands are cast to
float64 first, so 7 / 2 is 3.5. Float division by zero gives inf or nan.
`ef.math.truediv` is the same function.

>>> ef.divide([7, 8], 2).numpy()
array([3.5, 4. ])

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the broadcast shape: float64 for integer operands, else their dtype.

Raises:
  InvalidArgumentError: the dtypes differ or are not supported (bool), or the
    shapes do not broadcast.
)doc");
  binary<ef::floordiv>(m, "floordiv",
                       R"doc(Returns floor(x / y) elementwise (Python's `//`), with NumPy broadcasting.

Integers divide exactly, rounding toward negative infinity. Not differentiable
(its gradient is None).

>>> ef.math.floordiv([7, -7], 2).numpy()
array([ 3, -4], dtype=int32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the operands' dtype and of their broadcast shape.

Raises:
  InvalidArgumentError: an integer y holds a zero, the dtypes differ or are not
    supported, or the shapes do not broadcast.
)doc");
  binary<ef::floormod>(m, "floormod", R"doc(Returns x - floordiv(x, y) * y elementwise (Python's `%`).

The result has the sign of y. NumPy broadcasting. `ef.math.mod` is the same
function.

>>> ef.math.floormod([7, -7], 3).numpy()
array([1, 2], dtype=int32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the operands' dtype and of their broadcast shape.

Raises:
  InvalidArgumentError: an integer y holds a zero, the dtypes differ or are not
    supported, or the shapes do not broadcast.
)doc");
  binary<ef::pow>(m, "pow", R"doc(Returns x ** y elementwise, with NumPy broadcasting.

>>> ef.pow([2, 3], 2).numpy()
array([4, 9], dtype=int32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the operands' dtype and of their broadcast shape. The gradient
  with respect to y is taken as 0 where x <= 0, as in TensorFlow.

Raises:
  InvalidArgumentError: an integer y holds a negative value, the dtypes differ
    or are not supported, or the shapes do not broadcast.
)doc");
  binary<ef::maximum>(m, "maximum", R"doc(Returns max(x, y) elementwise, with NumPy broadcasting.

A NaN in either operand gives NaN. On ties the whole gradient goes to x.

>>> ef.maximum([1, 5], 3).numpy()
array([3, 5], dtype=int32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the operands' dtype and of their broadcast shape.

Raises:
  InvalidArgumentError: the dtypes differ or are not supported (bool), a Python
    number does not fit the dtype exactly, or the shapes do not broadcast.
)doc");
  binary<ef::minimum>(m, "minimum", R"doc(Returns min(x, y) elementwise, with NumPy broadcasting.

A NaN in either operand gives NaN. On ties the whole gradient goes to x.

>>> ef.minimum([1., 5.], [3., 2.]).numpy()
array([1., 2.], dtype=float32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the operands' dtype and of their broadcast shape.

Raises:
  InvalidArgumentError: the dtypes differ or are not supported (bool), a Python
    number does not fit the dtype exactly, or the shapes do not broadcast.
)doc");
  binary<ef::squared_difference>(m, "squared_difference",
                                 R"doc(Returns (x - y) * (x - y) elementwise, with NumPy broadcasting.

>>> ef.squared_difference([1, 2], 4).numpy()
array([9, 4], dtype=int32)

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the operands' dtype and of their broadcast shape.

Raises:
  InvalidArgumentError: the dtypes differ or are not supported (bool), a Python
    number does not fit the dtype exactly, or the shapes do not broadcast.
)doc");

  // ---- comparisons ----
  binary<ef::equal>(m, "equal", R"doc(Returns the truth value of x == y elementwise, with NumPy broadcasting.

>>> ef.equal([1, 2], 2).numpy()
array([False,  True])

Args:
  x: A tensor-like of any dtype (bool included).
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of the broadcast shape. Not differentiable.

Raises:
  InvalidArgumentError: the dtypes differ, a Python number does not fit the
    dtype exactly, or the shapes do not broadcast.
)doc");
  binary<ef::not_equal>(m, "not_equal",
                        R"doc(Returns the truth value of x != y elementwise, with NumPy broadcasting.

>>> ef.not_equal([1, 2], 2).numpy()
array([ True, False])

Args:
  x: A tensor-like of any dtype (bool included).
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of the broadcast shape. Not differentiable.

Raises:
  InvalidArgumentError: the dtypes differ, a Python number does not fit the
    dtype exactly, or the shapes do not broadcast.
)doc");
  binary<ef::less>(m, "less", R"doc(Returns the truth value of x < y elementwise, with NumPy broadcasting.

>>> ef.less([1, 3], 2).numpy()
array([ True, False])

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of the broadcast shape. Not differentiable.

Raises:
  InvalidArgumentError: the dtypes differ or are bool, a Python number does not
    fit the dtype exactly, or the shapes do not broadcast.
)doc");
  binary<ef::less_equal>(m, "less_equal",
                         R"doc(Returns the truth value of x <= y elementwise, with NumPy broadcasting.

>>> ef.less_equal([1., 2.], 1.).numpy()
array([ True, False])

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of the broadcast shape. Not differentiable.

Raises:
  InvalidArgumentError: the dtypes differ or are bool, a Python number does not
    fit the dtype exactly, or the shapes do not broadcast.
)doc");
  binary<ef::greater>(m, "greater",
                      R"doc(Returns the truth value of x > y elementwise, with NumPy broadcasting.

>>> ef.greater([1, 3], [2, 2]).numpy()
array([False,  True])

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of the broadcast shape. Not differentiable.

Raises:
  InvalidArgumentError: the dtypes differ or are bool, a Python number does not
    fit the dtype exactly, or the shapes do not broadcast.
)doc");
  binary<ef::greater_equal>(m, "greater_equal",
                            R"doc(Returns the truth value of x >= y elementwise, with NumPy broadcasting.

>>> ef.greater_equal([1, 3], 3).numpy()
array([False,  True])

Args:
  x: A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64.
  y: A tensor-like of x's dtype; a Python number takes the other operand's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of the broadcast shape. Not differentiable.

Raises:
  InvalidArgumentError: the dtypes differ or are bool, a Python number does not
    fit the dtype exactly, or the shapes do not broadcast.
)doc");

  // ---- logical ----
  binary<ef::logical_and>(m, "logical_and",
                          R"doc(Returns x AND y elementwise for bool tensors, with NumPy broadcasting.

>>> ef.logical_and([True, True], [True, False]).numpy()
array([ True, False])

Args:
  x: A bool tensor-like.
  y: A bool tensor-like (a Python bool is accepted).
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of the broadcast shape.

Raises:
  InvalidArgumentError: an operand is not bool, or the shapes do not broadcast.
)doc");
  binary<ef::logical_or>(m, "logical_or",
                         R"doc(Returns x OR y elementwise for bool tensors, with NumPy broadcasting.

>>> ef.logical_or([True, False], [False, False]).numpy()
array([ True, False])

Args:
  x: A bool tensor-like.
  y: A bool tensor-like (a Python bool is accepted).
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of the broadcast shape.

Raises:
  InvalidArgumentError: an operand is not bool, or the shapes do not broadcast.
)doc");
  binary<ef::logical_xor>(
      m, "logical_xor", R"doc(Returns x XOR y (x != y) elementwise for bool tensors, with NumPy broadcasting.

>>> ef.math.logical_xor([True, False], True).numpy()
array([False,  True])

Args:
  x: A bool tensor-like.
  y: A bool tensor-like (a Python bool is accepted).
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor of the broadcast shape.

Raises:
  InvalidArgumentError: an operand is not bool, or the shapes do not broadcast.
)doc");
}

}  // namespace efpy
