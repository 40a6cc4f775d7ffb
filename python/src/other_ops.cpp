// Creation and linear-algebra ops, with TensorFlow's argument names (reductions:
// reduction_ops.cpp; neural-network ops: nn_ops.cpp; random ops: random_ops.cpp).
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

// TensorFlow refuses to change a tensor's dtype by conversion (ef.cast does that): a
// silent cast would truncate floats given to an integer dtype.
void check_no_tensor_cast(const char* op, py::handle value, const std::optional<ef::DType>& dtype) {
  if (!dtype || !(py::isinstance<ef::Tensor>(value) || py::isinstance<ef::Variable>(value))) return;
  const ef::DType have = py::isinstance<ef::Tensor>(value) ? value.cast<const ef::Tensor&>().dtype()
                                                           : value.cast<const ef::Variable&>().dtype();
  if (have != *dtype)
    throw ef::InvalidArgumentError(std::string(op) + ": value is a tensor of dtype " +
                                   std::string(ef::name(have)) + ", not the requested " +
                                   std::string(ef::name(*dtype)) + "; use ef.cast to convert it");
}

ef::Tensor constant(py::handle value, DTypeArg dtype, py::handle shape, py::handle /*name*/) {
  check_no_tensor_cast("constant", value, dtype.value);
  ef::Tensor t = to_tensor(value, dtype.value);
  if (shape.is_none()) return t;
  ef::Shape s = to_shape(shape);
  if (t.num_elements() == 1 && s.num_elements() != 1)
    return ef::broadcast_to(ef::reshape(t, ef::Shape{}, kPython), s, kPython).contiguous();
  return ef::reshape(t, s, kPython);
}

}  // namespace

void bind_other_ops(py::module_& m) {
  // ---- printing (ef.print builds the format in Python) ----
  m.def(
      "_print_format",
      [](std::string format, TensorListArg inputs, int stream) {
        ef::print_format(std::move(format), inputs, static_cast<ef::PrintStream>(stream), kPython);
      },
      "format"_a, "inputs"_a, "stream"_a);
  // ---- creation ----
  m.def(
      "as_dtype", [](py::handle d) { return to_dtype(d); },
      R"doc(Converts a dtype specification to an ef.DType.

>>> ef.as_dtype("float16")
ef.float16
>>> ef.as_dtype(np.int64)
ef.int64

Args:
  type_value: An ef.DType, a name ("float32", "half", "bfloat16", ...), a NumPy
    dtype or scalar type (int8/int16/uint8/uint16 are refused), or one of
    Python's float (float32), int (int32) and bool.

Returns:
  The ef.DType.

Raises:
  TypeError: the value names no dtype eagerflow has.
)doc",
      "type_value"_a);
  m.def("constant", &constant,
        R"doc(Creates a tensor from a value: a Python scalar, (nested) list, NumPy array or tensor.

Python floats become float32, ints int32 (int64 when a value needs it), bools
bool; NumPy arrays keep their dtype (int8/16 and uint8/16 widen to int32). A list
that holds tensors is their ef.stack, so gradients flow through it.

>>> ef.constant([[1, 2], [3, 4]]).numpy()
array([[1, 2],
       [3, 4]], dtype=int32)
>>> ef.constant(0.5, shape=[2]).numpy()
array([0.5, 0.5], dtype=float32)

Args:
  value: The value: a number, a (nested, not ragged) list or tuple, a NumPy
    array, a Tensor or a Variable.
  dtype: None (inferred), or the dtype to convert to. Lists of floats are not
    truncated to an integer dtype; a tensor must already have it (ef.cast
    converts tensors), as in TensorFlow.
  shape: None, or the result's shape: a single value fills it, otherwise the
    value is reshaped to it (the element counts must agree).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor.

Raises:
  TypeError: the value cannot be converted (strings, objects), or a float value
    would lose its fraction in an integer dtype.
  ValueError: an integer does not fit in 64 bits (or in int32 when asked for),
    or the list is ragged.
  InvalidArgumentError: the value does not reshape to `shape`, or is a tensor of
    another dtype than `dtype`.
)doc",
        "value"_a, "dtype"_a = py::none(), "shape"_a = py::none(), "name"_a = py::none());
  m.def(
      "convert_to_tensor",
      [](py::handle value, DTypeArg dtype, py::handle, py::handle) {
        check_no_tensor_cast("convert_to_tensor", value, dtype.value);
        return to_tensor(value, dtype.value);
      },
      R"doc(Converts a tensor-like value to a Tensor.

"Tensor-like", across eagerflow's docs, means anything this accepts: a Tensor, a
Variable (read, so tapes see it), a NumPy array or scalar (keeps its dtype;
int8/16 and uint8/16 widen to int32), a Python number or a (nested) list or tuple
(float32, int32 or int64 when needed, bool). A list that holds tensors is their
ef.stack.

>>> ef.convert_to_tensor([1., 2.]).numpy()
array([1., 2.], dtype=float32)
>>> ef.convert_to_tensor(np.arange(3)).dtype
ef.int64

Args:
  value: A tensor-like.
  dtype: None, or the dtype to convert to. A tensor or variable must already
    have it (as in TensorFlow; ef.cast changes a tensor's dtype).
  dtype_hint: Ignored (TensorFlow compatibility).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor (value itself when it already is one of `dtype`).

Raises:
  TypeError: the value has no tensor form, or a float would lose its fraction.
  ValueError: an integer does not fit in 64 bits, or a list is ragged.
  InvalidArgumentError: value is a tensor of another dtype than `dtype`.
)doc",
      "value"_a, "dtype"_a = py::none(), "dtype_hint"_a = py::none(), "name"_a = py::none());
  m.def(
      "zeros",
      [](ShapeArg shape, DTypeArg dtype, py::handle) {
        return ef::zeros(shape, dtype.value.value_or(ef::DType::Float32), kPython);
      },
      R"doc(Creates a tensor of `shape` filled with zeros.

>>> ef.zeros([2, 3]).shape
TensorShape([2, 3])
>>> ef.zeros([2], ef.int64).numpy()
array([0, 0])

Args:
  shape: A list or tuple of non-negative ints, an int, or a 1-D integer tensor.
  dtype: Any dtype (default float32).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and `shape`, on the device of the enclosing ef.device.

Raises:
  InvalidArgumentError: a negative or too large dimension.
)doc",
      "shape"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "ones",
      [](ShapeArg shape, DTypeArg dtype, py::handle) {
        return ef::ones(shape, dtype.value.value_or(ef::DType::Float32), kPython);
      },
      R"doc(Creates a tensor of `shape` filled with ones.

>>> ef.ones([2], ef.int32).numpy()
array([1, 1], dtype=int32)

Args:
  shape: A list or tuple of non-negative ints, an int, or a 1-D integer tensor.
  dtype: Any dtype (default float32; bool gives True).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and `shape`, on the device of the enclosing ef.device.

Raises:
  InvalidArgumentError: a negative or too large dimension.
)doc",
      "shape"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "zeros_like",
      [](TensorArg x, DTypeArg dtype, py::handle) {
        ef::Tensor z = ef::zeros_like(x, kPython);
        return dtype.value ? ef::cast(z, *dtype.value, kPython) : z;
      },
      R"doc(Creates a tensor of zeros with the shape (and by default the dtype) of `input`.

Works on symbolic tensors with unknown dimensions too.

>>> ef.zeros_like([[1, 2]]).numpy()
array([[0, 0]], dtype=int32)

Args:
  input: A tensor-like.
  dtype: None (input's dtype), or the dtype of the result.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's shape.
)doc",
      "input"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "ones_like",
      [](TensorArg x, DTypeArg dtype, py::handle) {
        ef::Tensor o = ef::ones_like(x, kPython);
        return dtype.value ? ef::cast(o, *dtype.value, kPython) : o;
      },
      R"doc(Creates a tensor of ones with the shape (and by default the dtype) of `input`.

Works on symbolic tensors with unknown dimensions too.

>>> ef.ones_like([1, 2], dtype=ef.float32).numpy()
array([1., 1.], dtype=float32)

Args:
  input: A tensor-like.
  dtype: None (input's dtype), or the dtype of the result.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's shape.
)doc",
      "input"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "fill",
      [](ShapeArg dims, py::handle value, py::handle) {
        ef::TensorOrScalar v = to_operand(value);
        if (v.is_tensor()) {
          if (v.tensor().rank() != 0)
            throw ef::InvalidArgumentError("fill: value must be a scalar, got shape " + v.tensor().shape().to_string());
          return ef::broadcast_to(v.tensor(), dims, kPython).contiguous();
        }
        // A Python number has TensorFlow's default dtype (float32, int32, bool).
        return ef::fill(dims, v, to_tensor(value).dtype(), kPython);
      },
      R"doc(Creates a tensor of shape `dims` with every element equal to `value`.

>>> ef.fill([2, 2], 7).numpy()
array([[7, 7],
       [7, 7]], dtype=int32)

Args:
  dims: A list or tuple of non-negative ints (or a 1-D integer tensor).
  value: A scalar: a Python number (float32, int32 or bool, as TensorFlow) or a
    0-d tensor (its dtype).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of value's dtype and of shape dims.

Raises:
  InvalidArgumentError: value is not a scalar, or a dimension is negative.
)doc",
      "dims"_a, "value"_a, "name"_a = py::none());
  m.def(
      "range",
      [](py::handle start, py::handle limit, py::handle delta, DTypeArg dtype, py::handle) {
        if (limit.is_none()) std::swap(start, limit), start = py::int_(0);  // range(n)
        // As TensorFlow: each argument converted on its own (a Python float is float32, an
        // int int32) or to `dtype`, which casts tensors; ef::range infers the widest dtype.
        ef::Tensor a = to_tensor(start, dtype.value), b = to_tensor(limit, dtype.value),
                   d = to_tensor(delta, dtype.value);
        if (dtype.value) return ef::range(a, b, d, *dtype.value, kPython);
        return ef::range(a, b, d, kPython);
      },
      R"doc(Creates the sequence start, start + delta, ... up to but excluding `limit`.

As Python's range: ef.range(n) counts from 0. Without `dtype` the result has
the widest of the arguments' dtypes in int32 < int64 < float16 < bfloat16 <
float32 < float64, a Python int counting as int32 and a Python float as float32
(TensorFlow's rule); with `dtype`, tensor arguments are cast to it.

>>> ef.range(5).numpy()
array([0, 1, 2, 3, 4], dtype=int32)
>>> ef.range(5, 0, -2).numpy()
array([5, 3, 1], dtype=int32)
>>> ef.range(0., 1., 0.25).numpy()
array([0.  , 0.25, 0.5 , 0.75], dtype=float32)
>>> ef.range(ef.constant(3, ef.int64)).numpy()
array([0, 1, 2])

Args:
  start: A number or 0-d eager tensor; the limit when `limit` is None (start
    is then 0).
  limit: A number or 0-d eager tensor, the (excluded) end, or None.
  delta: A non-zero number or 0-d eager tensor, the step (default 1).
  dtype: None, or the dtype of the result.
  name: Ignored (TensorFlow compatibility).

Returns:
  A 1-D Tensor.

Raises:
  InvalidArgumentError: delta is 0, an argument is not a scalar, or (without
    dtype) a tensor argument is bool.
  UnimplementedError: an argument is a symbolic tensor (inside a function or
    graph): range needs the values.
  TypeError: a Python float given an integer dtype (use ef.cast to truncate).
)doc",
      "start"_a, "limit"_a = py::none(), "delta"_a = 1, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "linspace",
      [](double start, double stop, int64_t num, DTypeArg dtype, py::handle) {
        return ef::linspace(start, stop, num, dtype.value.value_or(ef::DType::Float32), kPython);
      },
      R"doc(Creates `num` evenly spaced values from start to stop, both included.

>>> ef.linspace(0., 1., 5).numpy()
array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)

Args:
  start: A Python number, the first value.
  stop: A Python number, the last value (when num > 1).
  num: A non-negative int, the number of values.
  dtype: A float dtype (default float32).
  name: Ignored (TensorFlow compatibility).

Returns:
  A 1-D Tensor of `dtype` with num values.

Raises:
  InvalidArgumentError: dtype is not a float dtype, or num is negative.
)doc",
      "start"_a, "stop"_a, "num"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "eye",
      [](int64_t rows, std::optional<int64_t> columns, DTypeArg dtype, py::handle) {
        return ef::eye(rows, columns.value_or(-1), dtype.value.value_or(ef::DType::Float32), kPython);
      },
      R"doc(Creates an identity matrix (ones on the diagonal, zeros elsewhere).

>>> ef.eye(2, 3).numpy()
array([[1., 0., 0.],
       [0., 1., 0.]], dtype=float32)

Args:
  num_rows: An int, the number of rows.
  num_columns: An int, the number of columns; None means num_rows.
  dtype: Any dtype (default float32).
  name: Ignored (TensorFlow compatibility).

Returns:
  A [num_rows, num_columns] Tensor of `dtype`.

Raises:
  InvalidArgumentError: a negative size.
)doc",
      "num_rows"_a, "num_columns"_a = py::none(), "dtype"_a = py::none(), "name"_a = py::none());

  // ---- linear algebra ----
  m.def(
      "matmul",
      [](TensorArg a, TensorArg b, bool transpose_a, bool transpose_b, py::handle) {
        const int64_t work = a.value.num_elements() * std::max<int64_t>(1, b.value.shape().rank() ? b.value.shape()[-1] : 1);
        return maybe_without_gil(work, [&] { return ef::matmul(a, b, transpose_a, transpose_b, kPython); });
      },
      R"doc(Multiplies matrix a by matrix b: the product of their last two axes.

Leading (batch) axes broadcast as in NumPy: [..., m, k] x [..., k, n] gives
[..., m, n]. transpose_a / transpose_b transpose the last two axes first, without
a copy. Floats use BLAS (half dtypes accumulate in float32); integers wrap.

>>> ef.matmul([[1., 2.]], [[3.], [4.]]).numpy()
array([[11.]], dtype=float32)
>>> ef.matmul(ef.ones([5, 2, 3]), ef.ones([3, 4])).shape
TensorShape([5, 2, 4])

Args:
  a: A tensor-like of rank >= 2 and a numeric dtype (not bool).
  b: A tensor-like of rank >= 2 and a's dtype.
  transpose_a: If True, use the transpose of a's last two axes.
  transpose_b: If True, use the transpose of b's last two axes.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of a's dtype. An inner dimension of 0 gives zeros.

Raises:
  InvalidArgumentError: a rank below 2, inner or batch dimensions that do not
    match, different dtypes, or bool inputs.
)doc",
      "a"_a, "b"_a, "transpose_a"_a = false, "transpose_b"_a = false, "name"_a = py::none());
  m.def(
      "tensordot",
      [](TensorArg a, TensorArg b, py::handle axes, py::handle) {
        if (PyLong_Check(axes.ptr())) return ef::tensordot(a, b, int64_of(axes, "tensordot: axes"), kPython);
        py::list pair = owned_items(axes);
        if (pair.size() != 2)
          throw ef::InvalidArgumentError("tensordot: axes must be an int or a pair of axis lists");
        return ef::tensordot(a, b, ef::TensordotAxes(to_ints(pair[0], "tensordot: axes"), to_ints(pair[1], "tensordot: axes")),
                             kPython);
      },
      R"doc(Sums the products of a and b over the given axes (tf.tensordot).

The result has a's free axes, then b's.

>>> ef.tensordot(ef.ones([2, 3]), ef.ones([3, 4]), 1).shape
TensorShape([2, 4])
>>> ef.tensordot(ef.ones([2, 3]), ef.ones([4, 3]), [[1], [1]]).shape
TensorShape([2, 4])

Args:
  a: A tensor-like of a numeric dtype.
  b: A tensor-like of a's dtype.
  axes: An int N (a's last N axes against b's first N, in order; 0 is the outer
    product), or a pair of equally long lists [a_axes, b_axes].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of a's dtype.

Raises:
  InvalidArgumentError: contracted sizes differ, a bad count, repeated or
    out-of-range axes, or different dtypes.
)doc",
      "a"_a, "b"_a, "axes"_a, "name"_a = py::none());
  m.def(
      "einsum",
      [](const std::string& equation, py::args args, py::kwargs) {
        std::vector<ef::Tensor> operands;
        int64_t work = 0;
        for (py::handle arg : args) {
          operands.push_back(to_tensor(arg));
          work += operands.back().num_elements();
        }
        return maybe_without_gil(work, [&] { return ef::einsum(equation, operands, kPython); });
      },
      R"doc(Einstein summation of the operands over the equation's subscripts (tf.einsum).

Letters label dimensions; labels shared by operands and absent from the output
are summed. Without '->' the output has the labels that appear once, sorted.
'...' stands for broadcast dimensions, a repeated label in one operand takes its
diagonal, and a size-1 dimension broadcasts. Several operands are contracted
pairwise in a greedy order, each pair as one batched matrix product.

>>> ef.einsum('ij,jk->ik', ef.ones([2, 3]), ef.ones([3, 4])).shape
TensorShape([2, 4])
>>> ef.einsum('ii->i', [[1., 2.], [3., 4.]]).numpy()
array([1., 4.], dtype=float32)

Args:
  equation: A str such as 'bhqd,bhkd->bhqk'; spaces are ignored.
  *operands: Tensor-likes of one numeric dtype, one per term of the equation.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the operands' dtype.

Raises:
  InvalidArgumentError: a malformed equation, a term that does not match its
    operand's rank, inconsistent sizes of a label, or mixed or bool dtypes.
)doc",
      "equation"_a);
  m.def(
      "norm",
      [](TensorArg x, py::handle ord, AxesArg axis, bool keepdims, py::handle) {
        ef::linalg::NormOrd o = py::isinstance<py::str>(ord) ? ef::linalg::NormOrd(ord.cast<std::string>())
                                                             : ef::linalg::NormOrd(ord.cast<double>());
        return ef::linalg::norm(x, o, axis, keepdims, kPython);
      },
      R"doc(Computes a vector or matrix norm of a float tensor (tf.norm).

With axis None or one axis: a vector norm ("euclidean", any p > 0, or
np.inf = max |x|). With two axes: a matrix norm ("euclidean"/"fro" =
Frobenius, 1 = largest column sum, np.inf = largest row sum, 2 = largest
singular value, "nuc" = sum of singular values).

>>> ef.norm([3., 4.]).numpy()
array(5., dtype=float32)
>>> ef.norm([[3., 4.], [6., 8.]], ord=1, axis=1).numpy()
array([ 7., 14.], dtype=float32)

Args:
  tensor: A tensor-like of a float dtype.
  ord: "euclidean" (default), "fro", "nuc", or a number p > 0 (np.inf included).
  axis: None (every axis, flattened), an int, or a list of two ints.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of tensor's dtype.

Raises:
  InvalidArgumentError: an integer input, a bad ord, or more than two axes.
)doc",
      "tensor"_a, "ord"_a = "euclidean", "axis"_a = py::none(), "keepdims"_a = false, "name"_a = py::none());
}

}  // namespace efpy
