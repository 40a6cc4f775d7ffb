// Shape, indexing and array ops, with TensorFlow's names and semantics.
//
//   ef::Tensor x = ef::reshape(ef::range(0, 6), {2, 3});
//   ef::Tensor t = ef::transpose(x);                 // a view: no copy (Note [views])
//   ef::Tensor c = ef::concat({x, x}, 0);            // shape (4, 3)
//   auto [values, indices] = ef::top_k(x, 2);
//
// View ops (reshape when strides allow, transpose, expand_dims, squeeze, strided_slice,
// slice, broadcast_to, reverse, split, unstack, identity) return tensors sharing the
// input's storage. Every error is a typed ef::Error naming the op, the argument and
// the shapes involved; axes may be negative (counting from the end).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/ops/axes.h"
#include "eagerflow/ops/scalar.h"

namespace ef {

// ---- Views ----

// x with the same elements in `shape`; one dimension may be -1 (inferred). A view when
// the strides allow, else a contiguous copy. Throws InvalidArgumentError when the
// element counts differ or more than one -1 is given.
Tensor reshape(const Tensor& x, const Shape& shape, CallSite where = CallSite::current());
// x with its axes reversed (a view).
Tensor transpose(const Tensor& x, CallSite where = CallSite::current());
// x with axis i of the result taken from axis perm[i] of x (a view). Throws
// InvalidArgumentError unless perm is a permutation of the axes.
Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm, CallSite where = CallSite::current());
// x with a size-1 axis inserted at `axis` (in [-rank-1, rank]).
Tensor expand_dims(const Tensor& x, int64_t axis, CallSite where = CallSite::current());
// x without the size-1 axes in `axis` (default: every size-1 axis). Squeezing an axis
// whose size is not 1 throws InvalidArgumentError.
Tensor squeeze(const Tensor& x, const Axes& axis = Axes(), CallSite where = CallSite::current());

// Options of strided_slice, as TensorFlow's bit masks (bit i refers to begin[i]).
struct StridedSliceMasks {
  int64_t begin_mask = 0;       // ignore begin[i]: start at the first (or last, stride < 0) element
  int64_t end_mask = 0;         // ignore end[i]: run to the end (or the beginning)
  int64_t ellipsis_mask = 0;    // entry i is `...`: as many full axes as needed
  int64_t new_axis_mask = 0;    // entry i inserts a new size-1 axis
  int64_t shrink_axis_mask = 0; // entry i indexes (begin[i]) and removes the axis
};
// TensorFlow's strided_slice (x[b0:e0:s0, ...] in Python): a view. Empty `strides`
// means all 1. Negative indices count from the end, out-of-range bounds clamp; stride
// 0 or a bad mask combination is an InvalidArgumentError, a shrink index out of range
// an OutOfRangeError.
Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                     const std::vector<int64_t>& strides = {}, const StridedSliceMasks& masks = {},
                     CallSite where = CallSite::current());
// The gradient of strided_slice(x, begin, end, strides, masks): dy (of the slice's
// shape) put back at the positions the slice reads, zeros elsewhere, in an output of x's
// shape and dy's dtype (TensorFlow's StridedSliceGrad). Reads only x's shape, when the op
// runs: in a graph x's sizes may be unknown while building.
Tensor strided_slice_grad(const Tensor& x, const Tensor& dy, const std::vector<int64_t>& begin,
                          const std::vector<int64_t>& end, const std::vector<int64_t>& strides = {},
                          const StridedSliceMasks& masks = {}, CallSite where = CallSite::current());
// x[begin[i] : begin[i] + size[i]] on every axis; size -1 means to the end (a view).
// Throws InvalidArgumentError when the slice does not fit in x.
Tensor slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size,
             CallSite where = CallSite::current());
// x broadcast to `shape` with NumPy's rules (a view with stride 0 on broadcast axes).
// Throws InvalidArgumentError when x's shape is not compatible.
Tensor broadcast_to(const Tensor& x, const Shape& shape, CallSite where = CallSite::current());
// x itself, as a new tensor handle (a view).
Tensor identity(const Tensor& x, CallSite where = CallSite::current());
// x with the elements along each axis in `axis` reversed (a view with negative strides).
Tensor reverse(const Tensor& x, const Axes& axis, CallSite where = CallSite::current());

// ---- Joining and splitting ----

// The tensors joined along `axis`; they need the same dtype and rank and equal sizes on
// every other axis (InvalidArgumentError naming the first mismatch).
Tensor concat(const std::vector<Tensor>& values, int64_t axis, CallSite where = CallSite::current());
// The tensors (all of one shape and dtype) stacked along a new axis `axis`.
Tensor stack(const std::vector<Tensor>& values, int64_t axis = 0, CallSite where = CallSite::current());
// The slices of x along `axis`, each one rank less (views). The axis size must be known.
std::vector<Tensor> unstack(const Tensor& x, int64_t axis = 0, CallSite where = CallSite::current());
// x split into `num_splits` equal parts along `axis` (views); the size must divide evenly.
std::vector<Tensor> split(const Tensor& x, int64_t num_splits, int64_t axis = 0,
                          CallSite where = CallSite::current());
// x split into parts of the given sizes along `axis` (views); one size may be -1
// (the rest). Sizes must add up to the axis size.
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& size_splits, int64_t axis = 0,
                          CallSite where = CallSite::current());
std::vector<Tensor> split(const Tensor& x, std::initializer_list<int64_t> size_splits, int64_t axis = 0,
                          CallSite where = CallSite::current());
// x repeated multiples[i] times along axis i.
Tensor tile(const Tensor& x, const std::vector<int64_t>& multiples, CallSite where = CallSite::current());
// x padded with paddings[i] = {before, after} elements on axis i. mode "CONSTANT" fills
// with constant_values, "REFLECT" mirrors without the edge (pad < size), "SYMMETRIC"
// with it (pad <= size). Bad modes or paddings throw InvalidArgumentError.
Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings,
           const std::string& mode = "CONSTANT", const TensorOrScalar& constant_values = 0,
           CallSite where = CallSite::current());

// ---- Indexing ----

// Slices of params along `axis` picked by `indices` (int32/int64): the result has shape
// params[:axis] + indices[batch_dims:] + params[axis+1:]. The first batch_dims axes of
// params and indices are matched. An out-of-range index throws InvalidArgumentError naming it.
Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis = 0, int64_t batch_dims = 0,
              CallSite where = CallSite::current());
// Slices of params addressed by the last axis of `indices` (TensorFlow's gather_nd):
// shape indices[:-1] + params[batch_dims + indices[-1]:].
Tensor gather_nd(const Tensor& params, const Tensor& indices, int64_t batch_dims = 0,
                 CallSite where = CallSite::current());
// A zero tensor of `shape` with `updates` added at `indices` (duplicates add up; for
// bool they combine with or). Out-of-range indices throw InvalidArgumentError.
Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const Shape& shape,
                  CallSite where = CallSite::current());
// `tensor` with `updates` added at `indices` as scatter_nd adds them into zeros (its
// shape may have unknown dimensions in a graph). Out-of-range indices and updates of
// the wrong shape or dtype throw InvalidArgumentError.
Tensor tensor_scatter_nd_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             CallSite where = CallSite::current());
// `tensor` with the rows at `indices` replaced by `updates` (duplicates apply in order:
// the last wins), or combined with them by min or max (NaN wins; numeric dtypes), or
// with the updates subtracted; the checks of tensor_scatter_nd_add. The gradient of
// update's updates needs indices of known shape (UnimplementedError in a graph otherwise).
Tensor tensor_scatter_nd_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                                CallSite where = CallSite::current());
Tensor tensor_scatter_nd_min(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             CallSite where = CallSite::current());
Tensor tensor_scatter_nd_max(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             CallSite where = CallSite::current());
Tensor tensor_scatter_nd_sub(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             CallSite where = CallSite::current());
// Elementwise condition ? x : y with three-way NumPy broadcasting; condition is bool,
// x and y share a dtype (a number takes the other operand's dtype).
Tensor where(const Tensor& condition, const TensorOrScalar& x, const TensorOrScalar& y,
             CallSite where = CallSite::current());
// The coordinates (int64, shape [n, rank]) of the true (non-zero) elements, row-major.
Tensor where(const Tensor& condition, CallSite where = CallSite::current());
// One-hot encoding of int32/int64 `indices`: a new axis `axis` of size `depth` holds
// on_value at the index and off_value elsewhere (out-of-range indices: all off_value).
Tensor one_hot(const Tensor& indices, int64_t depth, const TensorOrScalar& on_value = 1,
               const TensorOrScalar& off_value = 0, int64_t axis = -1, DType dtype = DType::Float32,
               CallSite where = CallSite::current());

// ---- Rolling, repeating, masking, searching ----

// input with its elements shifted by shift[i] along axis[i] (as many shifts as axes;
// an axis named twice adds its shifts); elements pushed past the end come back at the
// start (tf.roll). An axis out of range throws InvalidArgumentError.
Tensor roll(const Tensor& input, const std::vector<int64_t>& shift, const std::vector<int64_t>& axis,
            CallSite where = CallSite::current());
// Each slice of input along `axis` repeated repeats[i] times (one count for all, or one
// per slice); with no axis, the flattened input (tf.repeat). Negative counts throw.
Tensor repeat(const Tensor& input, const std::vector<int64_t>& repeats,
              std::optional<int64_t> axis = std::nullopt, CallSite where = CallSite::current());
// The slices of tensor where the bool `mask` (shaped like tensor's axes [axis, axis +
// mask.rank)) is true, those axes merged into one (tf.boolean_mask). Its size is known
// only from the mask's values (unknown while building a graph).
Tensor boolean_mask(const Tensor& tensor, const Tensor& mask, int64_t axis = 0,
                    CallSite where = CallSite::current());
// For each value, its insertion position into the matching row (last axis) of
// sorted_sequence: before equal elements (side "left") or after them ("right"). The
// leading axes of both must match. NaN sorts after every number. Output int32 or int64.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, const std::string& side = "left",
                    DType out_type = DType::Int32, CallSite where = CallSite::current());
// Coordinate grids of the 1-D inputs (others are flattened): output i varies along axis i
// with indexing "ij", and with "xy" (the default, as NumPy's) the first two axes swapped.
std::vector<Tensor> meshgrid(const std::vector<Tensor>& args, const std::string& indexing = "xy",
                             CallSite where = CallSite::current());
// data split by the int `partitions` (shaped like data's leading axes): output p holds
// the slices whose partition is p, in order. Known partitions outside [0, num_partitions) throw.
std::vector<Tensor> dynamic_partition(const Tensor& data, const Tensor& partitions, int64_t num_partitions,
                                      CallSite where = CallSite::current());

// The inverse of dynamic_partition: merged[indices[m][i...]] = data[m][i...], of length the
// largest index + 1; for a repeated index the later pair wins (tf.dynamic_stitch). Each
// data[m] has shape indices[m].shape + the same known trailing sizes; negative indices throw.
Tensor dynamic_stitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data,
                      CallSite where = CallSite::current());

struct UniqueResult {
  Tensor y;      // the distinct values, in order of first appearance
  Tensor idx;    // for each element of x, the position of its value in y
  Tensor count;  // (unique_with_counts) how often each value of y occurs
};
// The distinct values of 1-D x and where each element's value is among them (tf.unique;
// 0 and -0 are one value, each NaN its own). idx (and count) are int32 or int64.
UniqueResult unique(const Tensor& x, DType out_idx = DType::Int32, CallSite where = CallSite::current());
// unique, with the number of occurrences of each distinct value.
UniqueResult unique_with_counts(const Tensor& x, DType out_idx = DType::Int32,
                                CallSite where = CallSite::current());

// output[v] = the sum of the weights (default: ones of `dtype`) of the elements of the
// non-negative int `arr` equal to v; length max(arr) + 1, at least minlength, at most
// maxlength (larger values are dropped). Negative values throw InvalidArgumentError.
Tensor bincount(const Tensor& arr, const std::optional<Tensor>& weights = std::nullopt, int64_t minlength = 0,
                std::optional<int64_t> maxlength = std::nullopt, DType dtype = DType::Int32,
                CallSite where = CallSite::current());

// The counts of `values` in `nbins` equal-width bins over value_range = [lo, hi]
// (tf.histogram_fixed_width): a value below lo counts in bin 0, one at or above hi in
// the last; NaNs count nowhere. value_range is a 2-element tensor of values' dtype.
Tensor histogram_fixed_width(const Tensor& values, const Tensor& value_range, int64_t nbins = 100,
                             DType dtype = DType::Int32, CallSite where = CallSite::current());

// ---- Segment reductions ----
// Rows of data with the same id combined into output row `id`. The sorted forms take 1-D
// non-negative, non-decreasing segment_ids (InvalidArgumentError otherwise) and give last
// id + 1 rows; empty segments are 0. The unsorted forms take ids shaped like data's
// leading axes and give num_segments rows; negative ids are dropped, ids >= num_segments
// throw; empty segments are 0 (sum, mean), the lowest number (max) or the highest (min).
// Integer means: segment_mean's quotient truncates, unsorted_segment_mean's is float.
Tensor segment_sum(const Tensor& data, const Tensor& segment_ids, CallSite where = CallSite::current());
Tensor segment_mean(const Tensor& data, const Tensor& segment_ids, CallSite where = CallSite::current());
Tensor segment_max(const Tensor& data, const Tensor& segment_ids, CallSite where = CallSite::current());
Tensor segment_min(const Tensor& data, const Tensor& segment_ids, CallSite where = CallSite::current());
Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            CallSite where = CallSite::current());
Tensor unsorted_segment_mean(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                             CallSite where = CallSite::current());
Tensor unsorted_segment_max(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            CallSite where = CallSite::current());
Tensor unsorted_segment_min(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            CallSite where = CallSite::current());

// ---- Sizes ----
// x's dimensions as a 1-D tensor of out_type (int32 or int64; tf.shape). In a graph
// this is computed when it runs, so unknown dimensions get the fed value's sizes.
Tensor shape(const Tensor& x, DType out_type = DType::Int32, CallSite where = CallSite::current());
// x's number of elements as a scalar of out_type (tf.size).
Tensor size(const Tensor& x, DType out_type = DType::Int32, CallSite where = CallSite::current());

// x itself (a view) once its shape is checked to equal like's; in a graph the check also
// runs with the shapes the graph is fed (Note [runtime shape checks]). A mismatch throws
// InvalidArgumentError "<message>, got <x's shape> and <like's shape>". Reads like's shape only.
Tensor ensure_same_shape(const Tensor& x, const Tensor& like, const std::string& message = "",
                         CallSite where = CallSite::current());
// As ensure_same_shape, checking instead that x's shape broadcasts to like's (NumPy's
// rules, like's shape unchanged).
Tensor ensure_broadcastable_to(const Tensor& x, const Tensor& like, const std::string& message = "",
                               CallSite where = CallSite::current());

// ---- Sorting ----

struct TopKResult {
  Tensor values;
  Tensor indices;  // int32
};
// The k largest entries along the last axis, largest first (ties: lower index first;
// NaN counts as largest). Throws InvalidArgumentError for k < 0 or k > the axis size.
TopKResult top_k(const Tensor& x, int64_t k = 1, bool sorted = true, CallSite where = CallSite::current());
// x sorted along `axis`; direction "ASCENDING" or "DESCENDING" (NaN sorts as largest).
Tensor sort(const Tensor& x, int64_t axis = -1, const std::string& direction = "ASCENDING",
            CallSite where = CallSite::current());
// The int32 indices that sort x along `axis` (a stable sort).
Tensor argsort(const Tensor& x, int64_t axis = -1, const std::string& direction = "ASCENDING",
               CallSite where = CallSite::current());

}  // namespace ef
