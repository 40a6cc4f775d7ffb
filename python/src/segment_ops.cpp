// roll, repeat, boolean_mask, searchsorted, meshgrid, unique, dynamic_partition and the
// segment reductions, with TensorFlow's argument names (bound from indexing_ops.cpp).
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

// An int or a sequence of ints (a 1-D integer tensor included), as a list.
std::vector<int64_t> int_list(py::handle obj, const char* what) {
  if (py::isinstance<py::int_>(obj) || py::hasattr(obj, "__index__")) return {int64_of(obj, what)};
  if (py::isinstance<ef::Tensor>(obj) && py::cast<ef::Tensor>(obj).rank() == 0)
    return {py::cast<ef::Tensor>(obj).item<int64_t>()};
  return to_ints(obj, what);
}

ef::DType int_dtype(const DTypeArg& d, const char* what) {
  const ef::DType t = d.value.value_or(ef::DType::Int32);
  if (t != ef::DType::Int32 && t != ef::DType::Int64)
    throw ef::InvalidArgumentError(std::string(what) + " must be int32 or int64, got " +
                                   std::string(ef::name(t)));
  return t;
}

// TensorFlow's named tuples: Unique(y, idx) and UniqueWithCounts(y, idx, count).
py::object unique_tuple(const ef::UniqueResult& r, bool counts) {
  if (counts) return named_tuple("UniqueWithCounts", "y idx count", py::make_tuple(r.y, r.idx, r.count));
  return named_tuple("Unique", "y idx", py::make_tuple(r.y, r.idx));
}

constexpr const char* kSegmentArgs = R"doc(
Args:
  data: A numeric tensor-like (float for the means).
  segment_ids: An int32 or int64 tensor-like: 1-D, sorted, non-negative, of
    length data.shape[0].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of data's dtype and of shape [segment_ids[-1] + 1] + data.shape[1:].

Raises:
  InvalidArgumentError: the ids are not sorted, negative or of the wrong shape.
)doc";

constexpr const char* kUnsortedSegmentArgs = R"doc(
Args:
  data: A numeric tensor-like (float for the mean).
  segment_ids: An int32 or int64 tensor-like shaped like data's leading axes;
    rows with a negative id are dropped.
  num_segments: An int, the number of output rows.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of data's dtype and of shape
  [num_segments] + data.shape[segment_ids.ndim:].

Raises:
  InvalidArgumentError: an id is >= num_segments, or the shapes do not fit.
)doc";

}  // namespace

void bind_segment_ops(py::module_& m) {
  m.def(
      "roll",
      [](TensorArg input, py::handle shift, py::handle axis, py::handle) {
        return ef::roll(input, int_list(shift, "roll: shift"), int_list(axis, "roll: axis"), kPython);
      },
      R"doc(Rolls the elements of `input` along axes.

Elements shifted past the last position come back at the first. Several axes
roll at once; shifts of an axis named twice add up.

>>> ef.roll([0, 1, 2, 3, 4], shift=2, axis=0).numpy()
array([3, 4, 0, 1, 2], dtype=int32)
>>> ef.roll([[0, 1, 2], [3, 4, 5]], shift=[1, -1], axis=[0, 1]).numpy()
array([[4, 5, 3],
       [1, 2, 0]], dtype=int32)

Args:
  input: A tensor-like of any dtype.
  shift: An int or a list of ints (negative: towards the start).
  axis: An int or a list of ints, as many as shifts.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype and shape.

Raises:
  InvalidArgumentError: shift and axis differ in length, or an axis is out of
    range.
)doc",
      "input"_a, "shift"_a, "axis"_a, "name"_a = py::none());
  m.def(
      "repeat",
      [](TensorArg input, py::handle repeats, std::optional<int64_t> axis, py::handle) {
        return ef::repeat(input, int_list(repeats, "repeat: repeats"), axis, kPython);
      },
      R"doc(Repeats each slice of `input` along `axis`.

>>> ef.repeat([1, 2, 3], 2).numpy()
array([1, 1, 2, 2, 3, 3], dtype=int32)
>>> ef.repeat([[1, 2], [3, 4]], [1, 2], axis=0).numpy()
array([[1, 2],
       [3, 4],
       [3, 4]], dtype=int32)

Args:
  input: A tensor-like of any dtype.
  repeats: An int, or one int per slice along axis (non-negative).
  axis: An int, or None to repeat the flattened input.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype.

Raises:
  InvalidArgumentError: a negative count, or as many counts as neither 1 nor
    the axis' size.
)doc",
      "input"_a, "repeats"_a, "axis"_a = py::none(), "name"_a = py::none());
  m.def(
      "boolean_mask",
      [](TensorArg tensor, TensorArg mask, int64_t axis, py::handle) {
        return ef::boolean_mask(tensor, mask, axis, kPython);
      },
      R"doc(Keeps the slices of `tensor` where `mask` is True.

mask covers axes [axis, axis + mask.ndim) of tensor, which become one axis of
as many entries as mask has True values.

>>> ef.boolean_mask([1, 2, 3, 4], [True, False, True, False]).numpy()
array([1, 3], dtype=int32)
>>> ef.boolean_mask([[1, 2], [3, 4]], [False, True], axis=1).numpy()
array([[2],
       [4]], dtype=int32)

Args:
  tensor: A tensor-like of any dtype.
  mask: A bool tensor-like matching tensor's shape on the masked axes.
  axis: An int, the first masked axis (default 0).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of tensor's dtype.

Raises:
  InvalidArgumentError: mask is not bool or does not match tensor's shape.
)doc",
      "tensor"_a, "mask"_a, "axis"_a = 0, "name"_a = py::none());
  m.def(
      "searchsorted",
      [](TensorArg sorted_sequence, TensorArg values, const std::string& side, DTypeArg out_type,
         py::handle) {
        return ef::searchsorted(sorted_sequence, values, side, int_dtype(out_type, "searchsorted: out_type"),
                                kPython);
      },
      R"doc(Finds where `values` would be inserted into sorted rows.

Each row (the last axis) of sorted_sequence is searched for the values of the
matching row of values. NaN sorts after every number.

>>> ef.searchsorted([1., 2., 2., 3.], [2., 2.5, 0.]).numpy()
array([1, 3, 0], dtype=int32)
>>> ef.searchsorted([1., 2., 2., 3.], [2.], side="right").numpy()
array([3], dtype=int32)

Args:
  sorted_sequence: A numeric tensor-like, sorted ascending along its last axis.
  values: A tensor-like of its dtype with the same leading axes.
  side: "left" (before equal elements, the default) or "right" (after them).
  out_type: int32 (default) or int64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of out_type and of values' shape.

Raises:
  InvalidArgumentError: a bad side or out_type, or shapes that do not match.
)doc",
      "sorted_sequence"_a, "values"_a, "side"_a = "left", "out_type"_a = py::none(), "name"_a = py::none());
  m.def(
      "meshgrid",
      [](py::args args, const std::string& indexing, py::handle) {
        std::vector<ef::Tensor> tensors;
        for (py::handle a : args) tensors.push_back(to_tensor(a));
        return ef::meshgrid(tensors, indexing, kPython);
      },
      R"doc(Makes coordinate grids from 1-D tensors.

>>> x, y = ef.meshgrid([1, 2, 3], [4, 5])
>>> x.numpy()
array([[1, 2, 3],
       [1, 2, 3]], dtype=int32)
>>> y.numpy()
array([[4, 4, 4],
       [5, 5, 5]], dtype=int32)

Args:
  *args: Tensor-likes (flattened to 1-D).
  indexing: "xy" (Cartesian, the default: the first two outputs' axes swapped)
    or "ij" (matrix: output i varies along axis i).
  name: Ignored (TensorFlow compatibility).

Returns:
  A list of Tensors, each of the inputs' combined shape.

Raises:
  InvalidArgumentError: a bad indexing.
)doc",
      "indexing"_a = "xy", "name"_a = py::none());
  m.def(
      "unique",
      [](TensorArg x, DTypeArg out_idx, py::handle) {
        return unique_tuple(ef::unique(x, int_dtype(out_idx, "unique: out_idx"), kPython), false);
      },
      R"doc(Finds the distinct elements of a 1-D tensor.

Returns (y, idx): y the distinct values in order of first appearance, and
idx the position in y of each element of x (x == gather(y, idx)). 0 and -0
are one value; each NaN is a value of its own.

>>> y, idx = ef.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
>>> y.numpy(), idx.numpy()
(array([1, 2, 4, 7, 8], dtype=int32), array([0, 0, 1, 2, 2, 2, 3, 4, 4], dtype=int32))

Args:
  x: A 1-D tensor-like.
  out_idx: int32 (default) or int64.
  name: Ignored (TensorFlow compatibility).

Returns:
  A named tuple Unique(y, idx).

Raises:
  InvalidArgumentError: x is not 1-D, or a bad out_idx.
)doc",
      "x"_a, "out_idx"_a = py::none(), "name"_a = py::none());
  m.def(
      "unique_with_counts",
      [](TensorArg x, DTypeArg out_idx, py::handle) {
        return unique_tuple(
            ef::unique_with_counts(x, int_dtype(out_idx, "unique_with_counts: out_idx"), kPython), true);
      },
      R"doc(Finds the distinct elements of a 1-D tensor and counts them.

As unique, also returning count: how often each value of y occurs in x.

>>> y, idx, count = ef.unique_with_counts([1, 1, 2, 4, 4, 4])
>>> count.numpy()
array([2, 1, 3], dtype=int32)

Args:
  x: A 1-D tensor-like.
  out_idx: int32 (default) or int64, the dtype of idx and count.
  name: Ignored (TensorFlow compatibility).

Returns:
  A named tuple UniqueWithCounts(y, idx, count).

Raises:
  InvalidArgumentError: x is not 1-D, or a bad out_idx.
)doc",
      "x"_a, "out_idx"_a = py::none(), "name"_a = py::none());
  m.def(
      "dynamic_partition",
      [](TensorArg data, TensorArg partitions, int64_t num_partitions, py::handle) {
        return ef::dynamic_partition(data, partitions, num_partitions, kPython);
      },
      R"doc(Splits `data` into num_partitions tensors by `partitions`.

Output p holds, in order, the slices of data whose partition is p.

>>> parts = ef.dynamic_partition([10, 20, 30, 40], [1, 0, 1, 1], 2)
>>> [p.numpy().tolist() for p in parts]
[[20], [10, 30, 40]]

Args:
  data: A tensor-like of any dtype.
  partitions: An int32 or int64 tensor-like shaped like data's leading axes,
    each in [0, num_partitions).
  num_partitions: An int.
  name: Ignored (TensorFlow compatibility).

Returns:
  A list of num_partitions Tensors of data's dtype.

Raises:
  InvalidArgumentError: a partition out of range, or shapes that do not fit.
)doc",
      "data"_a, "partitions"_a, "num_partitions"_a, "name"_a = py::none());

  m.def(
      "dynamic_stitch",
      [](TensorListArg indices, TensorListArg data, py::handle) {
        return ef::dynamic_stitch(indices, data, kPython);
      },
      R"doc(Interleaves the values of `data` into one tensor by `indices`.

merged[indices[m][i]] = data[m][i]; the result has the largest index + 1 rows.
Where an index repeats, the later one wins. The inverse of dynamic_partition.

>>> ef.dynamic_stitch([[0, 2], [1]], [[10., 30.], [20.]]).numpy()
array([10., 20., 30.], dtype=float32)

Args:
  indices: A list of int32 or int64 tensor-likes of non-negative indices.
  data: A list of tensor-likes of one dtype, data[m] of shape
    indices[m].shape + the same trailing shape for every m.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of data's dtype and of shape [max index + 1] + the trailing shape.

Raises:
  InvalidArgumentError: a negative index, lists of different lengths, or
    shapes that do not fit.
)doc",
      "indices"_a, "data"_a, "name"_a = py::none());
  m.def(
      "histogram_fixed_width",
      [](TensorArg values, py::handle value_range, int64_t nbins, DTypeArg dtype, py::handle) {
        const ef::Tensor& v = values;
        return ef::histogram_fixed_width(v, to_tensor(value_range, v.dtype()), nbins,
                                         dtype.value.value_or(ef::DType::Int32), kPython);
      },
      R"doc(Counts values in nbins equal-width bins over value_range = [lo, hi].

A value below lo counts in the first bin, one at or above hi in the last; NaNs
count nowhere (tf.histogram_fixed_width).

>>> ef.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0], [0.0, 5.0], nbins=5).numpy()
array([2, 1, 1, 0, 2], dtype=int32)

Args:
  values: A number tensor-like.
  value_range: [lo, hi] with lo < hi, converted to values' dtype.
  nbins: The number of bins (positive).
  dtype: ef.int32 (default) or ef.int64, the counts' dtype.
  name: Ignored (TensorFlow compatibility).
)doc",
      "values"_a, "value_range"_a, "nbins"_a = 100, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "bincount",
      [](TensorArg arr, py::handle weights, std::optional<int64_t> minlength,
         std::optional<int64_t> maxlength, DTypeArg dtype, py::handle) {
        return ef::bincount(arr, optional_tensor(weights), minlength.value_or(0), maxlength,
                            dtype.value.value_or(ef::DType::Int32), kPython);
      },
      R"doc(Counts the occurrences of each value of a non-negative integer array.

output[v] is the number of elements equal to v, or the sum of their weights.
The length is max(arr) + 1, at least minlength and at most maxlength (larger
values are dropped).

>>> ef.math.bincount([1, 1, 3]).numpy()
array([0, 2, 0, 1], dtype=int32)
>>> ef.math.bincount([1, 1, 3], weights=[0.5, 1., 2.], minlength=5).numpy()
array([0. , 1.5, 0. , 2. , 0. ], dtype=float32)

Args:
  arr: An int32 or int64 tensor-like of non-negative values.
  weights: None, or a numeric tensor-like of arr's shape (its dtype is the
    output's).
  minlength: None or an int, the least output length.
  maxlength: None or an int, the greatest output length.
  dtype: The output dtype without weights (default int32).
  name: Ignored (TensorFlow compatibility).

Returns:
  A 1-D Tensor.

Raises:
  InvalidArgumentError: a negative value, or weights of another shape.
)doc",
      "arr"_a, "weights"_a = py::none(), "minlength"_a = py::none(), "maxlength"_a = py::none(),
      "dtype"_a = py::none(), "name"_a = py::none());
  struct Scatter {
    const char* name;
    ef::Tensor (*fn)(const ef::Tensor&, const ef::Tensor&, const ef::Tensor&, ef::CallSite);
    const char* what;
    const char* example;
  };
  for (const Scatter& s :
       {Scatter{"tensor_scatter_nd_update", &ef::tensor_scatter_nd_update,
                "with `updates` written at `indices` (for duplicate indices the last one wins)",
                "array([9., 1., 6.], dtype=float32)"},
        Scatter{"tensor_scatter_nd_min", &ef::tensor_scatter_nd_min,
                "with the minimum of its elements and `updates` at `indices`",
                "array([1., 1., 1.], dtype=float32)"},
        Scatter{"tensor_scatter_nd_max", &ef::tensor_scatter_nd_max,
                "with the maximum of its elements and `updates` at `indices`",
                "array([9., 1., 6.], dtype=float32)"},
        Scatter{"tensor_scatter_nd_sub", &ef::tensor_scatter_nd_sub, "with `updates` subtracted at `indices`",
                "array([-8.,  1., -5.], dtype=float32)"}}) {
    std::string doc = std::string("Returns `tensor` ") + s.what + ".\n\n>>> ef." + s.name +
                      "([1., 1., 1.], [[0], [2]], [9., 6.]).numpy()\n" + s.example +
                      R"doc(

Args:
  tensor: A tensor-like (numeric for min and max).
  indices: An int32 or int64 tensor-like, [..., k] with k <= tensor.ndim.
  updates: A tensor-like of tensor's dtype and of shape
    indices.shape[:-1] + tensor.shape[k:].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of tensor's dtype and shape.

Raises:
  InvalidArgumentError: an index is out of range, or updates has the wrong
    shape or dtype.
)doc";
    auto fn = s.fn;
    m.def(
        s.name,
        [fn](TensorArg tensor, TensorArg indices, py::handle updates, py::handle) {
          return fn(tensor, indices, to_tensor_like(updates, tensor.value.dtype()), kPython);
        },
        doc.c_str(), "tensor"_a, "indices"_a, "updates"_a, "name"_a = py::none());
  }
  struct Sorted {
    const char* name;
    ef::Tensor (*fn)(const ef::Tensor&, const ef::Tensor&, ef::CallSite);
    const char* what;
  };
  for (const Sorted& s : {Sorted{"segment_sum", &ef::segment_sum, "sum"},
                          Sorted{"segment_mean", &ef::segment_mean, "mean (0 for an empty segment)"},
                          Sorted{"segment_max", &ef::segment_max, "maximum (0 for an empty segment)"},
                          Sorted{"segment_min", &ef::segment_min, "minimum (0 for an empty segment)"}}) {
    std::string doc =
        std::string("Computes the ") + s.what +
        " of the rows of data in each segment.\n\nRow i of the result combines the rows of data whose "
        "segment id is i.\n\n>>> ef.math." +
        s.name + "([1., 2., 3., 4.], [0, 0, 1, 3]).numpy().shape\n(4,)\n" + kSegmentArgs;
    auto fn = s.fn;
    m.def(
        s.name, [fn](TensorArg data, TensorArg ids, py::handle) { return fn(data, ids, kPython); },
        doc.c_str(), "data"_a, "segment_ids"_a, "name"_a = py::none());
  }
  struct Unsorted {
    const char* name;
    ef::Tensor (*fn)(const ef::Tensor&, const ef::Tensor&, int64_t, ef::CallSite);
    const char* what;
  };
  for (const Unsorted& s :
       {Unsorted{"unsorted_segment_sum", &ef::unsorted_segment_sum, "sum (0 for an empty segment)"},
        Unsorted{"unsorted_segment_mean", &ef::unsorted_segment_mean, "mean (0 for an empty segment)"},
        Unsorted{"unsorted_segment_max", &ef::unsorted_segment_max,
                 "maximum (the lowest number of the dtype for an empty segment)"},
        Unsorted{"unsorted_segment_min", &ef::unsorted_segment_min,
                 "minimum (the highest number of the dtype for an empty segment)"}}) {
    std::string doc =
        std::string("Computes the ") + s.what +
        " of the rows of data in each segment, ids in any order.\n\nRow i of the result combines the "
        "rows of data whose segment id is i.\n\n>>> ef.math." +
        s.name + "([1., 2., 3.], [1, 0, 1], num_segments=2).numpy().shape\n(2,)\n" + kUnsortedSegmentArgs;
    auto fn = s.fn;
    m.def(
        s.name,
        [fn](TensorArg data, TensorArg ids, int64_t num_segments, py::handle) {
          return fn(data, ids, num_segments, kPython);
        },
        doc.c_str(), "data"_a, "segment_ids"_a, "num_segments"_a, "name"_a = py::none());
  }
}

}  // namespace efpy
