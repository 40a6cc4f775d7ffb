// Gathering, scattering, selecting and sorting ops, with TensorFlow's argument names.
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

}  // namespace

void bind_segment_ops(py::module_& m);  // roll, repeat, boolean_mask, unique, segments... (segment_ops.cpp)

void bind_indexing_ops(py::module_& m) {
  bind_segment_ops(m);
  m.def(
      "gather",
      [](TensorArg params, TensorArg indices, py::handle, std::optional<int64_t> axis, int64_t batch_dims,
         py::handle) { return ef::gather(params, indices, axis.value_or(batch_dims), batch_dims, kPython); },
      R"doc(Gathers slices of `params` along `axis` at `indices`.

The result has shape params.shape[:axis] + indices.shape[batch_dims:] +
params.shape[axis + 1:]. With batch_dims, the first batch_dims axes of params and
indices are matched (one lookup per batch entry).

>>> ef.gather([10, 20, 30], [2, 0]).numpy()
array([30, 10], dtype=int32)
>>> ef.gather([[1, 2, 3], [4, 5, 6]], [2], axis=1).numpy()
array([[3],
       [6]], dtype=int32)

Args:
  params: A tensor-like of any dtype, rank >= axis + 1.
  indices: An int32 or int64 tensor-like; each entry in [0, params.shape[axis]).
  validate_indices: Ignored (indices are always checked).
  axis: An int (negative counts from the end); None means batch_dims.
  batch_dims: An int, the number of leading batch axes (default 0).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of params' dtype.

Raises:
  InvalidArgumentError: an index is out of range (negative included), indices
    is not an integer tensor, or axis / batch_dims are inconsistent.
)doc",
      "params"_a, "indices"_a, "validate_indices"_a = py::none(), "axis"_a = py::none(), "batch_dims"_a = 0,
      "name"_a = py::none());
  m.def(
      "gather_nd",
      [](TensorArg params, TensorArg indices, int64_t batch_dims, py::handle) {
        return ef::gather_nd(params, indices, batch_dims, kPython);
      },
      R"doc(Gathers slices of `params` addressed by the last axis of `indices`.

Each row indices[..., :] is a (partial) index into params; the result has shape
indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:].

>>> ef.gather_nd([[1, 2], [3, 4]], [[0, 1], [1, 0]]).numpy()
array([2, 3], dtype=int32)
>>> ef.gather_nd([[1, 2], [3, 4]], [[1]]).numpy()
array([[3, 4]], dtype=int32)

Args:
  params: A tensor-like of any dtype.
  indices: An int32 or int64 tensor-like of rank >= 1.
  batch_dims: An int, the number of leading batch axes shared by params and
    indices (default 0).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of params' dtype.

Raises:
  InvalidArgumentError: an index is out of range, or the shapes do not fit.
)doc",
      "params"_a, "indices"_a, "batch_dims"_a = 0, "name"_a = py::none());
  m.def(
      "scatter_nd",
      [](TensorArg indices, TensorArg updates, ShapeArg shape, py::handle) {
        return ef::scatter_nd(indices, updates, shape, kPython);
      },
      R"doc(Scatters `updates` into a zero tensor of `shape` at `indices`.

The inverse of gather_nd: updates[i...] is added at index indices[i..., :].
Duplicate indices add up (for bool they combine with OR).

>>> ef.scatter_nd([[1], [3], [1]], [5., 6., 1.], [5]).numpy()
array([0., 6., 0., 6., 0.], dtype=float32)

Args:
  indices: An int32 or int64 tensor-like, [..., k] with k <= len(shape).
  updates: A tensor-like of shape indices.shape[:-1] + shape[k:].
  shape: A list of ints (or 1-D integer tensor), the output shape.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of updates' dtype and of shape `shape`.

Raises:
  InvalidArgumentError: an index is out of range, or the shapes do not fit.
)doc",
      "indices"_a, "updates"_a, "shape"_a, "name"_a = py::none());
  m.def(
      "tensor_scatter_nd_add",
      [](TensorArg tensor, TensorArg indices, py::handle updates, py::handle) {
        return ef::tensor_scatter_nd_add(tensor, indices, to_tensor_like(updates, tensor.value.dtype()),
                                         kPython);
      },
      R"doc(Returns `tensor` with `updates` added at `indices` (duplicates add up).

Like scatter_nd, but into a copy of `tensor` instead of zeros.

>>> ef.tensor_scatter_nd_add([1., 1., 1.], [[0], [2]], [5., 6.]).numpy()
array([6., 1., 7.], dtype=float32)

Args:
  tensor: A tensor-like of any dtype.
  indices: An int32 or int64 tensor-like, [..., k] with k <= tensor.ndim.
  updates: A tensor-like of tensor's dtype and of shape
    indices.shape[:-1] + tensor.shape[k:].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of tensor's dtype and shape.

Raises:
  InvalidArgumentError: an index is out of range, or updates has the wrong
    shape or dtype.
)doc",
      "tensor"_a, "indices"_a, "updates"_a, "name"_a = py::none());
  m.def(
      "where",
      [](TensorArg condition, py::handle x, py::handle y, py::handle) {
        if (x.is_none() != y.is_none())
          throw ef::InvalidArgumentError("where: give both x and y, or neither");
        if (x.is_none()) return ef::where(condition.value, kPython);
        // As TensorFlow: x converts first and y takes its dtype (two Python floats: float32).
        auto [a, b] = to_operands(x, y);
        return ef::where(condition.value, a, b, kPython);
      },
      R"doc(Selects elements from x or y by `condition`, or finds the true elements.

With x and y: condition ? x : y elementwise, the three broadcast together. With
neither: the coordinates of the true (non-zero) elements of condition.

>>> ef.where([True, False], [1, 2], [3, 4]).numpy()
array([1, 4], dtype=int32)
>>> ef.where([True, False], 1., 0.).numpy()
array([1., 0.], dtype=float32)
>>> ef.where([[True, False], [False, True]]).numpy()
array([[0, 0],
       [1, 1]])

Args:
  condition: A bool tensor-like (any dtype when x and y are None).
  x: None, or a tensor-like; a Python number takes the other operand's dtype
    (two Python numbers: x's default dtype, float32 for a float, as TensorFlow).
  y: None, or a tensor-like of x's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  With x and y: a Tensor of their dtype and of the broadcast shape. Without:
  an int64 Tensor of shape [number of true elements, condition.ndim], row-major.

Raises:
  InvalidArgumentError: only one of x and y is given, condition is not bool (with
    x and y), x and y differ in dtype, or the shapes do not broadcast.
)doc",
      "condition"_a, "x"_a = py::none(), "y"_a = py::none(), "name"_a = py::none());
  m.def(
      "one_hot",
      [](TensorArg indices, int64_t depth, py::handle on_value, py::handle off_value,
         std::optional<int64_t> axis, DTypeArg dtype, py::handle) {
        // TensorFlow: a Python number converts to `dtype` when given, else to its own dtype
        // (int → int32, float → float32); a tensor keeps its dtype, which must match.
        auto value_of = [&](py::handle value, const char* what) -> std::optional<ef::Tensor> {
          if (value.is_none()) return std::nullopt;
          ef::TensorOrScalar v = to_operand(value);
          ef::Tensor t = v.is_tensor() ? v.tensor() : to_tensor(value, dtype.value);
          if (dtype.value && t.dtype() != *dtype.value)
            throw py::type_error("one_hot: " + std::string(what) + " is " + std::string(ef::name(t.dtype())) +
                                 " but dtype is " + std::string(ef::name(*dtype.value)));
          return t;
        };
        std::optional<ef::Tensor> on = value_of(on_value, "on_value"), off = value_of(off_value, "off_value");
        if (on && off && on->dtype() != off->dtype())
          throw py::type_error("one_hot: on_value is " + std::string(ef::name(on->dtype())) +
                               " but off_value is " + std::string(ef::name(off->dtype())) +
                               "; give them one dtype");
        // The dtype: given, else on_value's, else off_value's, else float32.
        const ef::DType d = dtype.value ? *dtype.value
                            : on        ? on->dtype()
                            : off       ? off->dtype()
                                        : ef::DType::Float32;
        return ef::one_hot(indices, depth, on ? ef::TensorOrScalar(*on) : ef::TensorOrScalar(1),
                           off ? ef::TensorOrScalar(*off) : ef::TensorOrScalar(0), axis.value_or(-1), d,
                           kPython);
      },
      R"doc(Returns a one-hot encoding of `indices` along a new axis of size `depth`.

Positions equal to the index hold on_value, the others off_value; an index
outside [0, depth) gives a row of off_value.

>>> ef.one_hot([0, 2, 5], 3).numpy()
array([[1., 0., 0.],
       [0., 0., 1.],
       [0., 0., 0.]], dtype=float32)
>>> ef.one_hot([1, 0], 2, on_value=5).numpy()
array([[0, 5],
       [5, 0]], dtype=int32)

Args:
  indices: An int32 or int64 tensor-like.
  depth: An int, the number of classes.
  on_value: A scalar (default 1).
  off_value: A scalar (default 0).
  axis: An int, where the new axis goes (default -1, last).
  dtype: The output dtype. By default (as TensorFlow) on_value's dtype when
    given, else off_value's, else float32; a Python int is int32 there and a
    Python float float32. Python numbers convert to a given dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and of rank indices.ndim + 1.

Raises:
  InvalidArgumentError: indices is not an integer tensor, or axis is out of
    range.
  TypeError: on_value and off_value differ in dtype, a tensor on_value or
    off_value is not of `dtype`, or a Python float is given an integer dtype.
)doc",
      "indices"_a, "depth"_a, "on_value"_a = py::none(), "off_value"_a = py::none(), "axis"_a = py::none(),
      "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "top_k",
      [](TensorArg x, int64_t k, bool sorted, py::handle) {
        ef::TopKResult r =
            maybe_without_gil(x.value.num_elements(), [&] { return ef::top_k(x, k, sorted, kPython); });
        return named_tuple("TopKV2", "values indices", py::make_tuple(r.values, r.indices));
      },
      R"doc(Finds the k largest entries along the last axis of `input`, largest first.

Ties keep the lower index first; NaN counts as the largest value. The result is
always sorted.

>>> values, indices = ef.math.top_k([1., 3., 2.], k=2)
>>> values.numpy(), indices.numpy()
(array([3., 2.], dtype=float32), array([1, 2], dtype=int32))

Args:
  input: A numeric (not bool) tensor-like of rank >= 1.
  k: An int in [0, input.shape[-1]] (default 1).
  sorted: Accepted for TensorFlow compatibility; the values always come sorted.
  name: Ignored (TensorFlow compatibility).

Returns:
  A named tuple TopKV2(values, indices): values of input's dtype and indices
  int32, both of shape input.shape[:-1] + [k].

Raises:
  InvalidArgumentError: k < 0 or k larger than the last axis.
)doc",
      "input"_a, "k"_a = 1, "sorted"_a = true, "name"_a = py::none());
  m.def(
      "sort",
      [](TensorArg x, int64_t axis, const std::string& direction, py::handle) {
        return maybe_without_gil(x.value.num_elements(),
                                 [&] { return ef::sort(x, axis, direction, kPython); });
      },
      R"doc(Sorts `values` along `axis` (NaN sorts as the largest value).

>>> ef.sort([3, 1, 2], direction="DESCENDING").numpy()
array([3, 2, 1], dtype=int32)

Args:
  values: A tensor-like of any dtype, rank >= 1.
  axis: An int; negative values count from the end (default -1).
  direction: "ASCENDING" (default) or "DESCENDING".
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of values' dtype and shape.

Raises:
  InvalidArgumentError: a bad direction, or axis out of range.
)doc",
      "values"_a, "axis"_a = -1, "direction"_a = "ASCENDING", "name"_a = py::none());
  m.def(
      "argsort",
      [](TensorArg x, int64_t axis, const std::string& direction, bool, py::handle) {
        return maybe_without_gil(x.value.num_elements(),
                                 [&] { return ef::argsort(x, axis, direction, kPython); });
      },
      R"doc(Returns the int32 indices that sort `values` along `axis`.

The sort is always stable (equal values keep their order), also in DESCENDING
order; NaN sorts as the largest value.

>>> ef.argsort([3., 1., 2.]).numpy()
array([1, 2, 0], dtype=int32)

Args:
  values: A tensor-like of any dtype, rank >= 1.
  axis: An int; negative values count from the end (default -1).
  direction: "ASCENDING" (default) or "DESCENDING".
  stable: Ignored: the sort is always stable.
  name: Ignored (TensorFlow compatibility).

Returns:
  An int32 Tensor of values' shape.

Raises:
  InvalidArgumentError: a bad direction, or axis out of range.
)doc",
      "values"_a, "axis"_a = -1, "direction"_a = "ASCENDING", "stable"_a = false, "name"_a = py::none());
}

}  // namespace efpy
