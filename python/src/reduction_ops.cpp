// Reductions, arg-reductions and scans, with TensorFlow's argument names.
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

constexpr const char* kArgmaxDoc = R"doc(Returns the index of the largest value along `axis`.

Ties give the first index; the first NaN counts as the largest (as NumPy).

>>> ef.argmax([[1., 5.], [3., 2.]]).numpy()
array([1, 0])
>>> ef.argmax([[1., 5.], [3., 2.]], axis=1, output_type=ef.int32).numpy()
array([1, 0], dtype=int32)

Args:
  input: A tensor-like of any dtype, rank >= 1.
  axis: An int (negative counts from the end); None means 0, as TensorFlow.
  output_type: int64 (default) or int32.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of output_type, input's shape without `axis`.

Raises:
  InvalidArgumentError: input is a scalar, the axis is out of range or empty,
    or it is too long for int32 output.
)doc";
constexpr const char* kArgminDoc = R"doc(Returns the index of the smallest value along `axis`.

Ties give the first index; the first NaN counts as the smallest (as NumPy).

>>> ef.argmin([3, 1, 2]).numpy()
array(1)

Args:
  input: A tensor-like of any dtype, rank >= 1.
  axis: An int (negative counts from the end); None means 0, as TensorFlow.
  output_type: int64 (default) or int32.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of output_type, input's shape without `axis`.

Raises:
  InvalidArgumentError: input is a scalar, the axis is out of range or empty,
    or it is too long for int32 output.
)doc";
constexpr const char* kCumsumDoc = R"doc(Returns the cumulative sum of x along `axis`.

>>> ef.cumsum([1, 2, 3]).numpy()
array([1, 3, 6], dtype=int32)
>>> ef.cumsum([1, 2, 3], exclusive=True, reverse=True).numpy()
array([5, 3, 0], dtype=int32)

Args:
  x: A tensor-like of rank >= 1 and a numeric dtype (not bool).
  axis: An int; negative values count from the end (default 0).
  exclusive: If True, each output leaves out its own element (the first is 0).
  reverse: If True, accumulate from the end of the axis.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x is a scalar or bool, or axis is out of range.
)doc";
constexpr const char* kCumprodDoc = R"doc(Returns the cumulative product of x along `axis`.

>>> ef.cumprod([1., 2., 3.]).numpy()
array([1., 2., 6.], dtype=float32)
>>> ef.cumprod([1, 2, 3], exclusive=True).numpy()
array([1, 1, 2], dtype=int32)

Args:
  x: A tensor-like of rank >= 1 and a numeric dtype (not bool).
  axis: An int; negative values count from the end (default 0).
  exclusive: If True, each output leaves out its own element (the first is 1).
  reverse: If True, accumulate from the end of the axis.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x is a scalar or bool, or axis is out of range.
)doc";
constexpr const char* kCumulativeLogsumexpDoc =
    R"doc(Returns log(cumsum(exp(x))) along `axis`, without overflow or underflow.

>>> ef.math.cumulative_logsumexp([0., 0.]).numpy()
array([0.       , 0.6931472], dtype=float32)

Args:
  x: A tensor-like of rank >= 1 and dtype float16, bfloat16, float32 or float64.
  axis: An int; negative values count from the end (default 0).
  exclusive: If True, each output leaves out its own element (the first is -inf).
  reverse: If True, accumulate from the end of the axis.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x is a scalar or not a float dtype, or axis is out of range.
)doc";

using ReduceOp = ef::Tensor (*)(const ef::Tensor&, const ef::Axes&, bool, ef::CallSite);

template <ReduceOp op>
void reduction(py::module_& m, const char* name, const char* doc) {
  m.def(
      name,
      [](TensorArg x, AxesArg axis, bool keepdims, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return op(x, axis, keepdims, kPython); });
      },
      doc, "input_tensor"_a, "axis"_a = py::none(), "keepdims"_a = false, "name"_a = py::none());
}

}  // namespace

void bind_reduction_ops(py::module_& m) {
  // ---- reductions and scans ----
  reduction<ef::reduce_sum>(m, "reduce_sum", R"doc(Computes the sum of elements across axes of a tensor.

float32 sums accumulate in float64; integer sums wrap on overflow; an empty
reduction gives 0. Results do not depend on the thread count.

>>> x = [[1., 2.], [3., 4.]]
>>> ef.reduce_sum(x).numpy()
array(10., dtype=float32)
>>> ef.reduce_sum(x, axis=1, keepdims=True).numpy()
array([[3.],
       [7.]], dtype=float32)

Args:
  input_tensor: A tensor-like of a numeric dtype (not bool).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is bool, or an axis is out of range or
    repeated (any axis of a scalar included).
)doc");
  reduction<ef::reduce_prod>(m, "reduce_prod", R"doc(Computes the product of elements across axes of a tensor.

Integer products wrap on overflow; an empty reduction gives 1.

>>> ef.reduce_prod([[1., 2.], [3., 4.]], axis=0).numpy()
array([3., 8.], dtype=float32)

Args:
  input_tensor: A tensor-like of a numeric dtype (not bool).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is bool, or an axis is out of range or
    repeated.
)doc");
  reduction<ef::reduce_max>(m, "reduce_max", R"doc(Computes the maximum of elements across axes of a tensor.

NaN propagates. An empty float reduction gives -inf (as TensorFlow).

>>> ef.reduce_max([[1., 5.], [3., 2.]], axis=1).numpy()
array([5., 3.], dtype=float32)

Args:
  input_tensor: A tensor-like of a numeric dtype (not bool).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is bool, an axis is out of range or
    repeated, or an integer reduction is empty (it has no identity value).
)doc");
  reduction<ef::reduce_min>(m, "reduce_min", R"doc(Computes the minimum of elements across axes of a tensor.

NaN propagates. An empty float reduction gives +inf (as TensorFlow).

>>> ef.reduce_min([3, 1, 2]).numpy()
array(1, dtype=int32)

Args:
  input_tensor: A tensor-like of a numeric dtype (not bool).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is bool, an axis is out of range or
    repeated, or an integer reduction is empty (it has no identity value).
)doc");
  reduction<ef::reduce_any>(m, "reduce_any",
                            R"doc(Computes the logical OR of elements across axes of a bool tensor.

An empty reduction gives False.

>>> ef.reduce_any([[True, False], [False, False]], axis=1).numpy()
array([ True, False])

Args:
  input_tensor: A bool tensor-like.
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is not bool, or an axis is out of range or
    repeated.
)doc");
  reduction<ef::reduce_all>(m, "reduce_all",
                            R"doc(Computes the logical AND of elements across axes of a bool tensor.

An empty reduction gives True.

>>> ef.reduce_all([[True, False], [True, True]], axis=1).numpy()
array([False,  True])

Args:
  input_tensor: A bool tensor-like.
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is not bool, or an axis is out of range or
    repeated.
)doc");
  reduction<ef::reduce_mean>(m, "reduce_mean", R"doc(Computes the mean of elements across axes of a tensor.

Integer inputs give an integer mean, truncated (as TensorFlow); the mean of an
empty float reduction is NaN.

>>> ef.reduce_mean([[1., 2.], [3., 4.]], axis=0).numpy()
array([2., 3.], dtype=float32)
>>> ef.reduce_mean([1, 2]).numpy()
array(1, dtype=int32)

Args:
  input_tensor: A tensor-like of a numeric dtype (not bool).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is bool, an axis is out of range or
    repeated, or an integer reduction is empty.
)doc");
  reduction<ef::reduce_logsumexp>(
      m, "reduce_logsumexp", R"doc(Computes log(sum(exp(x))) across axes, stably (shifted by the maximum).

-inf inputs and empty reductions give -inf.

>>> ef.reduce_logsumexp([[0., 0.], [1., 1.]], axis=1).numpy()
array([0.6931472, 1.6931472], dtype=float32)

Args:
  input_tensor: A tensor-like of a float dtype (float16, bfloat16, float32,
    float64).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is not float, or an axis is out of range or
    repeated.
)doc");
  reduction<ef::reduce_variance>(
      m, "reduce_variance", R"doc(Computes the (population) variance of elements across axes: divides by N.

>>> ef.reduce_variance([1., 2., 3., 4.]).numpy()
array(1.25, dtype=float32)

Args:
  input_tensor: A tensor-like of a float dtype (float16, bfloat16, float32,
    float64).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is not float, or an axis is out of range or
    repeated.
)doc");
  reduction<ef::reduce_std>(
      m, "reduce_std", R"doc(Computes the (population) standard deviation, sqrt(reduce_variance), across axes.

>>> ef.reduce_std([1., 3.]).numpy()
array(1., dtype=float32)

Args:
  input_tensor: A tensor-like of a float dtype (float16, bfloat16, float32,
    float64).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is not float, or an axis is out of range or
    repeated.
)doc");
  using ArgReduce = ef::Tensor (*)(const ef::Tensor&, int64_t, ef::DType, ef::CallSite);
  struct ArgReduceDef {
    const char* name;
    ArgReduce op;
    const char* doc;
  };
  for (auto [name, op, doc] :
       {ArgReduceDef{"argmax", &ef::argmax, kArgmaxDoc}, ArgReduceDef{"argmin", &ef::argmin, kArgminDoc}}) {
    auto f = op;
    m.def(
        name,
        [f](TensorArg x, std::optional<int64_t> axis, DTypeArg output_type, py::handle) {
          return f(x, axis.value_or(0), output_type.value.value_or(ef::DType::Int64), kPython);
        },
        doc, "input"_a, "axis"_a = py::none(), "output_type"_a = py::none(), "name"_a = py::none());
  }
  using Scan = ef::Tensor (*)(const ef::Tensor&, int64_t, bool, bool, ef::CallSite);
  struct ScanDef {
    const char* name;
    Scan op;
    const char* doc;
  };
  for (auto [name, op, doc] :
       {ScanDef{"cumsum", &ef::cumsum, kCumsumDoc}, ScanDef{"cumprod", &ef::cumprod, kCumprodDoc},
        ScanDef{"cumulative_logsumexp", &ef::cumulative_logsumexp, kCumulativeLogsumexpDoc}}) {
    auto f = op;
    m.def(
        name,
        [f](TensorArg x, int64_t axis, bool exclusive, bool reverse, py::handle) {
          return maybe_without_gil(x.value.num_elements(),
                                   [&] { return f(x, axis, exclusive, reverse, kPython); });
        },
        doc, "x"_a, "axis"_a = 0, "exclusive"_a = false, "reverse"_a = false, "name"_a = py::none());
  }
}

}  // namespace efpy
