// Shape, slicing, joining and padding ops, with TensorFlow's argument names; gathering,
// scattering, selecting and sorting are in indexing_ops.cpp.
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
