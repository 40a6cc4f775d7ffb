// Shape, slicing, joining, gathering and sorting ops, with TensorFlow's argument names.
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

}  // namespace

void bind_array_ops(py::module_& m) {
  m.def(
      "reshape", [](TensorArg t, ShapeArg shape, py::handle) { return ef::reshape(t, shape, kPython); },
      R"doc(Returns `tensor` with the same elements in row-major order, in shape `shape`.

A view sharing tensor's memory when its strides allow, else a contiguous copy.

>>> ef.reshape(ef.range(6), [2, -1]).numpy()
array([[0, 1, 2],
       [3, 4, 5]], dtype=int32)

Args:
  tensor: A tensor-like of any dtype.
  shape: A list or tuple of ints (or a 1-D integer tensor); one entry may be -1,
    inferred from the element count.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of tensor's dtype and of shape `shape`.

Raises:
  InvalidArgumentError: the element counts differ, or -1 appears more than once.
)doc",
      "tensor"_a, "shape"_a, "name"_a = py::none());
  m.def(
      "transpose",
      [](TensorArg a, py::handle perm, bool, py::handle) {
        if (perm.is_none()) return ef::transpose(a, kPython);
        return ef::transpose(a, to_ints(perm, "transpose: perm"), kPython);
      },
      R"doc(Permutes the axes of `a`: axis i of the result is axis perm[i] of a.

A view (no copy). Without perm the axes are reversed (a matrix transpose for
rank 2).

>>> ef.transpose([[1, 2, 3]]).numpy()
array([[1],
       [2],
       [3]], dtype=int32)

Args:
  a: A tensor-like of any dtype.
  perm: A permutation of 0..rank-1 (a list of ints), or None to reverse the axes.
  conjugate: Ignored (eagerflow has no complex dtypes).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of a's dtype with shape [a.shape[p] for p in perm].

Raises:
  InvalidArgumentError: perm is not a permutation of the axes.
)doc",
      "a"_a, "perm"_a = py::none(), "conjugate"_a = false, "name"_a = py::none());
  m.def(
      "expand_dims", [](TensorArg x, int64_t axis, py::handle) { return ef::expand_dims(x, axis, kPython); },
      R"doc(Inserts a size-1 axis into `input` at position `axis` (a view).

>>> ef.expand_dims([1, 2], 0).shape
TensorShape([1, 2])
>>> ef.expand_dims([1, 2], -1).shape
TensorShape([2, 1])

Args:
  input: A tensor-like of any dtype.
  axis: An int in [-rank - 1, rank]; negative values count from the end.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype and of rank input.ndim + 1.

Raises:
  InvalidArgumentError: axis is out of range.
)doc",
      "input"_a, "axis"_a, "name"_a = py::none());
  m.def(
      "squeeze", [](TensorArg x, AxesArg axis, py::handle) { return ef::squeeze(x, axis, kPython); },
      R"doc(Removes size-1 axes from `input` (a view).

>>> ef.squeeze(ef.zeros([1, 2, 1])).shape
TensorShape([2])
>>> ef.squeeze(ef.zeros([1, 2, 1]), axis=-1).shape
TensorShape([1, 2])

Args:
  input: A tensor-like of any dtype.
  axis: None (every size-1 axis), an int, or a list of ints; negative values
    count from the end.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype without the squeezed axes.

Raises:
  InvalidArgumentError: an axis is out of range or its size is not 1.
)doc",
      "input"_a, "axis"_a = py::none(), "name"_a = py::none());
  m.def(
      "strided_slice",
      [](TensorArg x, py::handle begin, py::handle end, py::handle strides, int64_t begin_mask,
         int64_t end_mask, int64_t ellipsis_mask, int64_t new_axis_mask, int64_t shrink_axis_mask,
         py::handle) {
        std::vector<int64_t> s = strides.is_none() ? std::vector<int64_t>{} : to_ints(strides, "strided_slice: strides");
        return ef::strided_slice(x, to_ints(begin, "strided_slice: begin"), to_ints(end, "strided_slice: end"), s,
                                 {begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask}, kPython);
      },
      R"doc(Extracts a strided slice of `input_`, as Python's `x[b0:e0:s0, ...]` (a view).

Bit i of each mask refers to entry i of begin, end and strides. Negative indices
count from the end and out-of-range bounds are clamped, as in Python slicing.
Tensor indexing (`x[1:, ::2, None]`) is built on this op.

>>> ef.strided_slice(ef.range(10), [8], [2], [-2]).numpy()
array([8, 6, 4], dtype=int32)

Args:
  input_: A tensor-like of any dtype.
  begin: A list of ints (or 1-D integer tensor), the first index on each axis.
  end: A list of ints of begin's length, the (exclusive) stop on each axis.
  strides: A list of non-zero ints of begin's length; None means all 1.
  begin_mask: Bit i set: ignore begin[i] and start at the first (or, for a
    negative stride, last) element.
  end_mask: Bit i set: ignore end[i] and run to the end (or the beginning).
  ellipsis_mask: Bit i set: entry i is `...`, as many full axes as needed.
  new_axis_mask: Bit i set: entry i inserts a new size-1 axis (`None`).
  shrink_axis_mask: Bit i set: take the single index begin[i] and drop the axis.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_'s dtype.

Raises:
  InvalidArgumentError: a stride is 0, the lists differ in length, or the masks
    conflict.
  OutOfRangeError: a shrink_axis_mask index is outside its axis.
)doc",
      "input_"_a, "begin"_a, "end"_a, "strides"_a = py::none(), "begin_mask"_a = 0, "end_mask"_a = 0,
      "ellipsis_mask"_a = 0, "new_axis_mask"_a = 0, "shrink_axis_mask"_a = 0, "name"_a = py::none());
  m.def(
      "slice",
      [](TensorArg x, py::handle begin, py::handle size, py::handle) {
        return ef::slice(x, to_ints(begin, "slice: begin"), to_ints(size, "slice: size"), kPython);
      },
      R"doc(Extracts input_[begin[i] : begin[i] + size[i]] on every axis i (a view).

>>> ef.slice(ef.reshape(ef.range(6), [2, 3]), [0, 1], [2, -1]).numpy()
array([[1, 2],
       [4, 5]], dtype=int32)

Args:
  input_: A tensor-like of any dtype.
  begin: A list of ints (or 1-D integer tensor), one start per axis.
  size: A list of ints, one length per axis; -1 means to the end of the axis.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_'s dtype and of shape `size` (with -1 entries resolved).

Raises:
  InvalidArgumentError: the lists do not have one entry per axis, or the slice
    does not fit inside input_.
)doc",
      "input_"_a, "begin"_a, "size"_a, "name"_a = py::none());
  m.def(
      "broadcast_to",
      [](TensorArg x, ShapeArg shape, py::handle) { return ef::broadcast_to(x, shape, kPython); },
      R"doc(Broadcasts `input` to `shape` with NumPy's rules (a view with stride 0).

>>> ef.broadcast_to([1, 2, 3], [2, 3]).numpy()
array([[1, 2, 3],
       [1, 2, 3]], dtype=int32)

Args:
  input: A tensor-like of any dtype.
  shape: A list or tuple of ints (or a 1-D integer tensor), the target shape.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype and of shape `shape`.

Raises:
  InvalidArgumentError: input's shape does not broadcast to `shape`.
)doc",
      "input"_a, "shape"_a, "name"_a = py::none());
  m.def(
      "identity", [](TensorArg x, py::handle) { return ef::identity(x, kPython); },
      R"doc(Returns a new tensor handle with the contents of `input` (a view, no copy).

A Variable given as input is read, so tapes see the read.

>>> ef.identity([1., 2.]).numpy()
array([1., 2.], dtype=float32)

Args:
  input: A tensor-like of any dtype, or a Variable.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype and shape.
)doc",
      "input"_a, "name"_a = py::none());
  m.def(
      "reverse", [](TensorArg x, AxesArg axis, py::handle) { return ef::reverse(x, axis, kPython); },
      R"doc(Reverses `tensor` along each axis in `axis` (a view with negative strides).

>>> ef.reverse([[1, 2, 3]], [1]).numpy()
array([[3, 2, 1]], dtype=int32)

Args:
  tensor: A tensor-like of any dtype.
  axis: An int or a list of ints, the axes to reverse; negative values count
    from the end.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of tensor's dtype and shape.

Raises:
  InvalidArgumentError: an axis is out of range or repeated.
)doc",
      "tensor"_a, "axis"_a, "name"_a = py::none());
  m.def(
      "concat",
      [](TensorListArg values, int64_t axis, py::handle) { return ef::concat(values, axis, kPython); },
      R"doc(Joins a list of tensors along an existing axis.

>>> ef.concat([[[1, 2]], [[3, 4]]], 0).numpy()
array([[1, 2],
       [3, 4]], dtype=int32)

Args:
  values: A list or tuple of tensor-likes of one dtype and rank, with equal
    sizes on every axis but `axis`.
  axis: An int; negative values count from the end.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor whose size along `axis` is the sum of the inputs' sizes.

Raises:
  InvalidArgumentError: dtypes, ranks or other sizes differ, or axis is out of
    range (the message names the first mismatching input).
)doc",
      "values"_a, "axis"_a, "name"_a = py::none());
  m.def(
      "stack",
      [](TensorListArg values, int64_t axis, py::handle) { return ef::stack(values, axis, kPython); },
      R"doc(Stacks a list of rank-R tensors into one rank-(R+1) tensor along a new axis.

>>> ef.stack([[1, 2], [3, 4]], axis=1).numpy()
array([[1, 3],
       [2, 4]], dtype=int32)

Args:
  values: A list or tuple of tensor-likes, all of one shape and dtype.
  axis: An int in [-(R+1), R], where the new axis goes (default 0).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of the inputs' dtype with a new axis of size len(values).

Raises:
  InvalidArgumentError: shapes or dtypes differ, or axis is out of range.
)doc",
      "values"_a, "axis"_a = 0, "name"_a = py::none());
  m.def(
      "unstack",
      [](TensorArg x, std::optional<int64_t> num, int64_t axis, py::handle) {
        std::vector<ef::Tensor> parts = ef::unstack(x, axis, kPython);
        if (num && *num != static_cast<int64_t>(parts.size()))
          throw ef::InvalidArgumentError("unstack: num is " + std::to_string(*num) + " but axis " +
                                         std::to_string(axis) + " has size " + std::to_string(parts.size()));
        return parts;
      },
      R"doc(Splits `value` along `axis` into a list of tensors of rank R-1 (views).

>>> [t.numpy() for t in ef.unstack([[1, 2], [3, 4]], axis=1)]
[array([1, 3], dtype=int32), array([2, 4], dtype=int32)]

Args:
  value: A tensor-like of rank >= 1 whose size along `axis` is known.
  num: None, or the expected number of pieces (checked).
  axis: An int; negative values count from the end (default 0).
  name: Ignored (TensorFlow compatibility).

Returns:
  A list of value.shape[axis] Tensors of value's dtype.

Raises:
  InvalidArgumentError: num differs from the axis size, or axis is out of range.
)doc",
      "value"_a, "num"_a = py::none(), "axis"_a = 0, "name"_a = py::none());
  m.def(
      "split",
      [](TensorArg x, py::handle splits, int64_t axis, py::handle, py::handle) {
        if (PyLong_Check(splits.ptr())) return ef::split(x, int64_of(splits, "split"), axis, kPython);
        return ef::split(x, to_ints(splits, "split: num_or_size_splits"), axis, kPython);
      },
      R"doc(Splits `value` along `axis` into several tensors (views).

>>> [t.shape for t in ef.split(ef.zeros([2, 6]), [1, -1, 2], axis=1)]
[TensorShape([2, 1]), TensorShape([2, 3]), TensorShape([2, 2])]

Args:
  value: A tensor-like of any dtype.
  num_or_size_splits: An int n (n equal parts; n must divide the axis size), or
    a list of sizes adding up to the axis size, one of which may be -1 (the rest).
  axis: An int; negative values count from the end (default 0).
  num: Ignored (TensorFlow compatibility).
  name: Ignored (TensorFlow compatibility).

Returns:
  A list of Tensors of value's dtype.

Raises:
  InvalidArgumentError: the axis does not divide evenly, the sizes do not add
    up, or axis is out of range.
)doc",
      "value"_a, "num_or_size_splits"_a, "axis"_a = 0, "num"_a = py::none(), "name"_a = py::none());
  m.def(
      "tile",
      [](TensorArg x, py::handle multiples, py::handle) {
        return ef::tile(x, to_ints(multiples, "tile: multiples"), kPython);
      },
      R"doc(Repeats `input` multiples[i] times along each axis i.

>>> ef.tile([[1, 2]], [2, 2]).numpy()
array([[1, 2, 1, 2],
       [1, 2, 1, 2]], dtype=int32)

Args:
  input: A tensor-like of any dtype.
  multiples: A list of non-negative ints (or 1-D integer tensor), one per axis.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype with shape input.shape[i] * multiples[i].

Raises:
  InvalidArgumentError: multiples has a negative entry or not one entry per axis.
)doc",
      "input"_a, "multiples"_a, "name"_a = py::none());
  m.def(
      "pad",
      [](TensorArg x, py::handle paddings, const std::string& mode, OperandArg constant_values, py::handle) {
        std::vector<std::pair<int64_t, int64_t>> pairs;
        py::object rows = py::reinterpret_borrow<py::object>(paddings);
        if (py::isinstance<ef::Tensor>(paddings))
          rows = to_numpy(paddings.cast<ef::Tensor>()).attr("tolist")();
        for (py::handle row : owned_items(rows)) {
          std::vector<int64_t> p = to_ints(row, "pad: paddings");
          if (p.size() != 2)
            throw ef::InvalidArgumentError("pad: each row of paddings needs two values (before, after)");
          pairs.emplace_back(p[0], p[1]);
        }
        return ef::pad(x, pairs, mode, constant_values, kPython);
      },
      R"doc(Pads `tensor` with paddings[i] = [before, after] elements on each axis i.

mode "CONSTANT" fills with constant_values; "REFLECT" mirrors the tensor without
repeating the edge (each padding at most size - 1); "SYMMETRIC" mirrors it with
the edge (each padding at most size). Modes are case-insensitive.

>>> ef.pad([1, 2, 3], [[1, 2]]).numpy()
array([0, 1, 2, 3, 0, 0], dtype=int32)
>>> ef.pad([1, 2, 3], [[2, 2]], mode="REFLECT").numpy()
array([3, 2, 1, 2, 3, 2, 1], dtype=int32)

Args:
  tensor: A tensor-like of any dtype.
  paddings: A [rank, 2] nested list of non-negative ints, or an integer tensor.
  mode: "CONSTANT" (default), "REFLECT" or "SYMMETRIC".
  constant_values: A scalar of tensor's dtype (a Python number takes it); 0 by default.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of tensor's dtype, each axis grown by before + after.

Raises:
  InvalidArgumentError: a bad mode, a negative or too large padding, or a row
    without exactly two values.
)doc",
      "tensor"_a, "paddings"_a, "mode"_a = "CONSTANT", "constant_values"_a = 0, "name"_a = py::none());
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
      [](TensorArg tensor, TensorArg indices, TensorArg updates, py::handle) {
        return ef::tensor_scatter_nd_add(tensor, indices, updates, kPython);
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
        ef::TopKResult r = maybe_without_gil(x.value.num_elements(), [&] { return ef::top_k(x, k, sorted, kPython); });
        return std::make_pair(r.values, r.indices);
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
  A tuple (values, indices): values of input's dtype and indices int32, both
  of shape input.shape[:-1] + [k].

Raises:
  InvalidArgumentError: k < 0 or k larger than the last axis.
)doc",
      "input"_a, "k"_a = 1, "sorted"_a = true, "name"_a = py::none());
  m.def(
      "sort",
      [](TensorArg x, int64_t axis, const std::string& direction, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return ef::sort(x, axis, direction, kPython); });
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
        return maybe_without_gil(x.value.num_elements(), [&] { return ef::argsort(x, axis, direction, kPython); });
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
  m.def(
      "shape",
      [](TensorArg x, DTypeArg out_type, py::handle) {
        return ef::shape(x, out_type.value.value_or(ef::DType::Int32), kPython);
      },
      R"doc(Returns the shape of `input` as a 1-D integer tensor (tf.shape).

Inside a graph or ef.function it is computed when the graph runs, so unknown
(None) dimensions get the fed value's sizes; `input.shape` gives the static
shape instead.

>>> ef.shape(ef.zeros([2, 3])).numpy()
array([2, 3], dtype=int32)

Args:
  input: A tensor-like.
  out_type: int32 (default) or int64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of out_type and of shape [input.ndim].

Raises:
  InvalidArgumentError: out_type is not int32 or int64.
)doc",
      "input"_a, "out_type"_a = py::none(), "name"_a = py::none());
  m.def(
      "rank", [](TensorArg x, py::handle) { return ef::constant(static_cast<int32_t>(x.value.rank())); },
      R"doc(Returns the number of axes of `input` as a 0-d int32 tensor.

>>> ef.rank(ef.zeros([2, 3])).numpy()
array(2, dtype=int32)

Args:
  input: A tensor-like.
  name: Ignored (TensorFlow compatibility).

Returns:
  A scalar int32 Tensor.
)doc",
      "input"_a, "name"_a = py::none());
  m.def(
      "size",
      [](TensorArg x, DTypeArg out_type, py::handle) {
        return ef::size(x, out_type.value.value_or(ef::DType::Int32), kPython);
      },
      R"doc(Returns the number of elements of `input` as a 0-d integer tensor.

>>> ef.size(ef.zeros([2, 3])).numpy()
array(6, dtype=int32)

Args:
  input: A tensor-like.
  out_type: int32 (default) or int64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A scalar Tensor of out_type.

Raises:
  InvalidArgumentError: out_type is not int32 or int64.
)doc",
      "input"_a, "out_type"_a = py::none(), "name"_a = py::none());
}

}  // namespace efpy
