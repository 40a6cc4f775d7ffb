// Batching rules of the conv2d family.
//
// Note [convolution batching rules]: vectorized_map meets the convolutions with the
// batch on any of their two tensor inputs. Each case becomes one convolution or one
// batched GEMM, never a loop:
//
// - Only the images (or only out_backprop, for the input gradient) are batched: the
//   batch is merged into the images' own batch axis (batch_merging_rows).
// - Only the filter is batched (an ensemble of models on shared data), or only one
//   input of the filter gradient: the batch is merged into a channel axis, which the
//   convolution treats independently, and split off the result again. For conv2d that
//   is the output channels: [B, KH, KW, C, O] becomes [KH, KW, C, B * O].
// - Both are batched (per-example gradients, whose filter gradient reads the example
//   and its out_backprop): each element has a filter of its own, which no single
//   convolution expresses, so the images are unrolled into their im2col matrix
//   [B, N * OH * OW, KH * KW * C] (one strided view per window tap, concatenated) and
//   the three ops become batched matmuls with it; the input gradient folds the columns
//   back onto the images (the adjoint of the unrolling: each tap's columns put back
//   where that tap read, summed).
//
// All of it is written with public ops, so gradients and jvps of the rules are those
// ops' own. A rule declines (vectorized_map then loops) where a spatial or channel size
// is unknown while tracing, or the batch size where it must be merged or folded back
// (the im2col GEMMs infer it from the images when their count per element is known).
// An unknown size is kUnknownDim, -1, which reshape reads as the axis it infers.
#include "ops/nn/conv2d_batching.h"

#include <algorithm>
#include <array>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/operators.h"
#include "ops/batch_helpers.h"
#include "ops/nn/window_geometry.h"

namespace ef::detail {
namespace {

// The element's shape of input i (the batch, if any, dropped).
Shape element_shape(const BatchCall& call, size_t i) {
  const Shape& s = call.input(i).shape();
  if (!call.is_batched(i)) return s;
  return Shape(Dims(s.dims().begin() + 1, s.dims().end()));
}

// Every axis but the images' count (axis 0) known.
bool known_but_count(const Shape& s) {
  for (int i = 1; i < s.rank(); ++i)
    if (s[i] == kUnknownDim) return false;
  return true;
}

Window2d window(const BatchCall& call, const Shape& images, const Shape& filter) {
  return make_window(images[1], images[2], filter[0], filter[1], call.attrs().get_ints(kStridesAttr),
                     call.attrs().get<std::string>(kPaddingAttr),
                     call.attrs().get_ints(kDilationsOrKsizeAttr), call.call.op.name);
}

// Batched `t` [B, d0, d1, ...] with its batch merged into element axis `axis` (as the
// outer part): [d0, ..., B * d_axis, ...]. That axis must be known.
Tensor merge_batch_into(const Tensor& t, int axis) {
  const int rank = t.rank() - 1;
  std::vector<int64_t> perm;
  Dims dims;
  for (int i = 0; i < rank; ++i) {
    if (i == axis) perm.push_back(0);
    perm.push_back(i + 1);
    dims.push_back(i == axis ? t.shape()[0] * t.shape()[i + 1] : t.shape()[i + 1]);
  }
  return reshape(transpose(t, perm), Shape(dims));
}

// The inverse of merge_batch_into: axis `axis` of `t` split into [batch, rest], the batch
// moved in front.
Tensor split_batch_from(const Tensor& t, int axis, int64_t batch) {
  Dims dims;
  for (int i = 0; i < t.rank(); ++i) {
    if (i == axis) dims.push_back(batch);
    dims.push_back(i == axis ? t.shape()[i] / batch : t.shape()[i]);
  }
  std::vector<int64_t> perm{axis};
  for (int i = 0; i <= t.rank(); ++i)
    if (i != axis) perm.push_back(i);
  return transpose(reshape(t, Shape(dims)), perm);
}

// The padded extent of the images that the window reads: [top, bottom, left, right].
std::array<int64_t, 4> paddings(const Window2d& g) {
  const int64_t extent_h = (g.out_h - 1) * g.stride_h + (g.k_h - 1) * g.dilation_h + 1;
  const int64_t extent_w = (g.out_w - 1) * g.stride_w + (g.k_w - 1) * g.dilation_w + 1;
  return {g.pad_top, std::max<int64_t>(extent_h - g.in_h - g.pad_top, 0), g.pad_left,
          std::max<int64_t>(extent_w - g.in_w - g.pad_left, 0)};
}

// The view of padded images [B, N, H', W', C] that window tap (i, j) reads for every
// output pixel: [B, N, OH, OW, C].
struct TapSlice {
  std::vector<int64_t> begin, end, strides;
  StridedSliceMasks masks;
};
TapSlice tap_slice(const Window2d& g, int64_t i, int64_t j) {
  const int64_t top = i * g.dilation_h, left = j * g.dilation_w;
  TapSlice s{{0, 0, top, left, 0},
             {0, 0, top + (g.out_h - 1) * g.stride_h + 1, left + (g.out_w - 1) * g.stride_w + 1, 0},
             {1, 1, g.stride_h, g.stride_w, 1},
             {}};
  s.masks.begin_mask = s.masks.end_mask = 0b10011;  // batch, images and channels whole
  return s;
}

// The rows of the im2col matrix of each element: images [B, N, H, W, C] give
// [B, N * OH * OW, KH * KW * C], one row per output pixel, its columns in the filter's
// (kh, kw, c) order.
Tensor patches(const Tensor& images, const Window2d& g, int64_t rows) {
  const auto [top, bottom, left, right] = paddings(g);
  const Tensor padded = top || bottom || left || right
                            ? pad(images, {{0, 0}, {0, 0}, {top, bottom}, {left, right}, {0, 0}})
                            : images;
  std::vector<Tensor> taps;
  for (int64_t i = 0; i < g.k_h; ++i)
    for (int64_t j = 0; j < g.k_w; ++j) {
      const TapSlice s = tap_slice(g, i, j);
      taps.push_back(strided_slice(padded, s.begin, s.end, s.strides, s.masks));
    }
  const Tensor columns = taps.size() == 1 ? taps[0] : concat(taps, 4);
  return reshape(columns, {images.shape()[0], rows, g.k_h * g.k_w * images.shape()[4]});
}

// The adjoint of patches(): columns [B, N * OH * OW, KH * KW * C] summed back onto
// images of element shape `images` [N, H, W, C] (each tap's columns put where that tap
// read them).
Tensor fold_patches(const Tensor& columns, const Window2d& g, const Shape& images, int64_t batch) {
  const auto [top, bottom, left, right] = paddings(g);
  const int64_t channels = images[3];
  const Tensor by_pixel = reshape(columns, {batch, images[0], g.out_h, g.out_w, g.k_h * g.k_w * channels});
  // strided_slice_grad reads only its first argument's shape: a broadcast zero carries it.
  const Tensor padded_shape =
      broadcast_to(zeros(Shape{}, columns.dtype()).to(columns.device()),
                   Shape{batch, images[0], top + images[1] + bottom, left + images[2] + right, channels});
  Tensor sum;
  for (int64_t i = 0; i < g.k_h; ++i)
    for (int64_t j = 0; j < g.k_w; ++j) {
      const TapSlice s = tap_slice(g, i, j);
      const Tensor tap =
          slice(by_pixel, {0, 0, 0, 0, (i * g.k_w + j) * channels}, {-1, -1, -1, -1, channels});
      const Tensor placed = strided_slice_grad(padded_shape, tap, s.begin, s.end, s.strides, s.masks);
      sum = sum.defined() ? sum + placed : placed;
    }
  return slice(sum, {0, 0, top, left, 0}, {-1, -1, images[1], images[2], -1});
}

// `sizes` with entry `axis` multiplied by `factor`.
Dims scaled(const Shape& sizes, int axis, int64_t factor) {
  Dims out;
  for (int i = 0; i < sizes.rank(); ++i) out.push_back(i == axis ? sizes[i] * factor : sizes[i]);
  return out;
}

// N * OH * OW, or -1 where N is unknown (then the other sizes must not be zero, or the
// reshape could not infer it).
int64_t pixel_rows(int64_t count, const Window2d& g) {
  return count == kUnknownDim ? -1 : count * g.out_h * g.out_w;
}
bool rows_inferable(int64_t count, const Window2d& g, int64_t columns) {
  return count != kUnknownDim || (g.out_h > 0 && g.out_w > 0 && columns > 0);
}

}  // namespace

// Inputs: input [N, H, W, C], filters [KH, KW, C, O].
std::vector<Tensor> batch_conv2d(const BatchCall& call) {
  if (!call.is_batched(1)) return batch_merging_rows(call, value_bit(0));
  const int64_t batch = call.batch_size;
  const Shape x = element_shape(call, 0), f = element_shape(call, 1);
  if (x.rank() != 4 || !f.is_fully_defined() || !known_but_count(x)) return {};
  if (!call.is_batched(0)) {  // one filter per element: B * O output channels
    if (batch == kUnknownDim) return {};
    const Tensor y = run_batched(call, {call.input(0), merge_batch_into(call.input(1), 3)}, call.attrs())[0];
    return {split_batch_from(y, 3, batch)};
  }
  const Window2d g = window(call, x, f);
  const int64_t columns = f[0] * f[1] * f[2];
  // An unknown batch (tracing) is inferred from the images when their count is known.
  if (!rows_inferable(x[0], g, columns) || f.num_elements() == 0 ||
      (batch == kUnknownDim && x[0] == kUnknownDim))
    return {};
  const Tensor y =
      matmul(patches(call.input(0), g, pixel_rows(x[0], g)), reshape(call.input(1), {batch, columns, f[3]}));
  return {reshape(y, {batch, x[0], g.out_h, g.out_w, f[3]})};
}

// Inputs: filters [KH, KW, C, O], out_backprop [N, OH, OW, O]; attribute input_sizes.
std::vector<Tensor> batch_conv2d_backprop_input(const BatchCall& call) {
  if (!call.is_batched(0)) return batch_merging_rows(call, value_bit(1), kSizesAttr);
  const int64_t batch = call.batch_size;
  const Shape f = element_shape(call, 0);
  const Shape sizes(call.attrs().get_ints(kSizesAttr));
  if (batch == kUnknownDim || !f.is_fully_defined() || sizes.rank() != 4) return {};
  if (!call.is_batched(1)) {  // one filter per element: B * C input channels
    Attrs attrs = call.attrs();
    attrs.set(kSizesAttr, scaled(sizes, 3, batch));
    const Tensor dx = run_batched(call, {merge_batch_into(call.input(0), 2), call.input(1)}, attrs)[0];
    return {split_batch_from(dx, 3, batch)};
  }
  const Window2d g = window(call, sizes, f);
  const int64_t columns = f[0] * f[1] * f[2];
  if (f.num_elements() == 0) return {};
  const Tensor dy = reshape(call.input(1), {batch, sizes[0] * g.out_h * g.out_w, f[3]});
  const Tensor dcolumns = matmul(dy, reshape(call.input(0), {batch, columns, f[3]}), false, true);
  return {fold_patches(dcolumns, g, sizes, batch)};
}

// Inputs: input [N, H, W, C], out_backprop [N, OH, OW, O]; attribute filter_sizes.
std::vector<Tensor> batch_conv2d_backprop_filter(const BatchCall& call) {
  const int64_t batch = call.batch_size;
  const Shape x = element_shape(call, 0);
  const Shape sizes(call.attrs().get_ints(kSizesAttr));
  if (x.rank() != 4 || !known_but_count(x) || sizes.rank() != 4) return {};
  if (call.is_batched(0) != call.is_batched(1)) {
    if (batch == kUnknownDim) return {};
    // Only one side per element: its batch merged into its channels (C of the images, O
    // of out_backprop), which the filter gradient keeps apart as its axis 2 or 3.
    const int axis = call.is_batched(0) ? 2 : 3;
    Attrs attrs = call.attrs();
    attrs.set(kSizesAttr, scaled(sizes, axis, batch));
    const Tensor images = call.is_batched(0) ? merge_batch_into(call.input(0), 3) : call.input(0);
    const Tensor dy = call.is_batched(1) ? merge_batch_into(call.input(1), 3) : call.input(1);
    return {split_batch_from(run_batched(call, {images, dy}, attrs)[0], axis, batch)};
  }
  const Window2d g = window(call, x, sizes);
  const int64_t columns = sizes[0] * sizes[1] * sizes[2];
  if (!rows_inferable(x[0], g, columns) || sizes.num_elements() == 0 ||
      (batch == kUnknownDim && x[0] == kUnknownDim))
    return {};
  const int64_t rows = pixel_rows(x[0], g);
  const Tensor dw =
      matmul(patches(call.input(0), g, rows), reshape(call.input(1), {batch, rows, sizes[3]}), true);
  return {reshape(dw, {batch, sizes[0], sizes[1], sizes[2], sizes[3]})};
}

}  // namespace ef::detail
