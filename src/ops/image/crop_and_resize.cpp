// crop_and_resize (tf.image.crop_and_resize): crops of an image batch, each resized to
// one size, with gradients for the images and the boxes. A composite of public ops: the
// sample points are computed from the boxes, the pixels around them gathered and
// interpolated, so both gradients follow (the image's is a scatter-add of the weights,
// the boxes' comes from the interpolation weights, as TensorFlow's CropAndResizeGradBoxes).
//
// Box b = [y1, x1, y2, x2] in normalized coordinates (0 and 1 are the first and the last
// pixel's centers) over image box_indices[b]. Crop row y samples the image at
//   in_y = y1 * (H - 1) + y * (y2 - y1) * (H - 1) / (crop_height - 1)
// (or (y1 + y2) / 2 * (H - 1) for a crop one row high), and columns likewise. A sample
// outside [0, H - 1] x [0, W - 1] is extrapolation_value. Where a sample falls exactly on
// a pixel row or column, the boxes' gradient along it is zero (floor and ceil agree
// there), as TensorFlow's is.
#include <cmath>
#include <string>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/image.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "ops/image/resampling.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

constexpr std::string_view kOp = "crop_and_resize";

// The sample coordinates of crop_size points along one axis of `extent` pixels, for
// every box: [num_boxes, crop_size], from the boxes' columns lo and hi ([num_boxes]).
Tensor sample_points(const Tensor& lo, const Tensor& hi, int64_t extent, int64_t crop_size, DType dtype,
                     CallSite where) {
  const double last = static_cast<double>(extent - 1);
  if (crop_size == 1) return expand_dims((lo + hi) * (0.5 * last), 1, where);
  Tensor steps = expand_dims(range(0, crop_size, 1, dtype, where), 0, where);
  Tensor step = expand_dims((hi - lo) * (last / static_cast<double>(crop_size - 1)), 1, where);
  return expand_dims(lo * last, 1, where) + steps * step;
}

// Whether each sample lies inside [0, extent - 1].
Tensor inside(const Tensor& points, int64_t extent, CallSite where) {
  return logical_and(greater_equal(points, 0.0, where),
                     less_equal(points, static_cast<double>(extent - 1), where), where);
}

// Pixel indices clamped into the image, as int32 (gathering outside samples is harmless:
// they are replaced by extrapolation_value).
Tensor clamped_index(const Tensor& points, int64_t extent, CallSite where) {
  return cast(clip_by_value(points, 0.0, static_cast<double>(extent - 1), where), DType::Int32, where);
}

// image[box_indices[b], rows[b, y], cols[b, x], :] for every box, crop row and column.
// The [boxes, height, width] index grids are built by broadcasting against a zero grid,
// so the number of boxes may be unknown while a graph is built.
Tensor gather_pixels(const Tensor& image, const Tensor& box_indices, const Tensor& rows, const Tensor& cols,
                     CallSite where) {
  const Tensor y = expand_dims(rows, 2, where), x = expand_dims(cols, 1, where);
  const Tensor zero = y * 0 + x * 0;
  const Tensor b = reshape(box_indices, {-1, 1, 1}, where) + zero;
  return gather_nd(image, stack({b, y + zero, x + zero}, 3, where), 0, where);
}

}  // namespace

Tensor crop_and_resize(const Tensor& image, const Tensor& boxes, const Tensor& box_indices,
                       const std::vector<int64_t>& crop_size, const std::string& method,
                       double extrapolation_value, CallSite where) {
  if (image.rank() != 4)
    fail(kOp, ": argument 'image' must have rank 4 [batch, height, width, channels], got shape ",
         image.shape());
  const int64_t batch = image.shape()[0], height = image.shape()[1], width = image.shape()[2];
  if (height == kUnknownDim || width == kUnknownDim)
    fail(kOp, ": argument 'image' needs a known height and width, got shape ", image.shape());
  if (height == 0 || width == 0) fail(kOp, ": argument 'image' of shape ", image.shape(), " has no pixels");
  if (image.dtype() == DType::Bool) fail(kOp, ": argument 'image' must be numeric, got ", image.dtype());
  if (boxes.rank() != 2 || (boxes.shape()[1] != 4 && boxes.shape()[1] != kUnknownDim))
    fail(kOp, ": argument 'boxes' must have shape [num_boxes, 4], got ", boxes.shape());
  if (!is_floating(boxes.dtype()))
    fail(kOp, ": argument 'boxes' must be a float tensor, got ", boxes.dtype());
  if (box_indices.rank() != 1 || !is_integer(box_indices.dtype()))
    fail(kOp, ": argument 'box_indices' must be a 1-D integer tensor, got ", box_indices.dtype(),
         " of shape ", box_indices.shape());
  if (boxes.shape()[0] != box_indices.shape()[0] && boxes.shape()[0] != kUnknownDim &&
      box_indices.shape()[0] != kUnknownDim)
    fail(kOp, ": arguments 'boxes' of shape ", boxes.shape(), " and 'box_indices' of shape ",
         box_indices.shape(), " name different numbers of boxes");
  if (crop_size.size() != 2 || crop_size[0] <= 0 || crop_size[1] <= 0)
    fail(kOp, ": argument 'crop_size' must be two positive integers [height, width], got ", Shape(crop_size));
  if (method != "bilinear" && method != "nearest")
    fail(kOp, ": argument 'method' = \"", method, "\" is not one of bilinear, nearest");
  // Box indices are checked where their values are known (eagerly); gather_nd checks
  // them again in graphs.
  if (!box_indices.is_symbolic() && batch != kUnknownDim)
    for (int64_t index : box_indices.to_vector<int64_t>())
      if (index < 0 || index >= batch)
        fail(kOp, ": argument 'box_indices' holds ", index, ", outside [0, ", batch, ")");

  // float64 images compute in float64; every other dtype in float32, the result's dtype.
  const DType dtype = image::resized_dtype(image.dtype());
  const Tensor pixels = cast(image, dtype, where);
  const Tensor b = cast(boxes, dtype, where);
  auto column = [&](int64_t k) { return reshape(slice(b, {0, k}, {-1, 1}, where), {-1}, where); };
  const Tensor ys = sample_points(column(0), column(2), height, crop_size[0], dtype, where);
  const Tensor xs = sample_points(column(1), column(3), width, crop_size[1], dtype, where);
  const Tensor valid =
      logical_and(expand_dims(expand_dims(inside(ys, height, where), 2, where), 3, where),
                  expand_dims(expand_dims(inside(xs, width, where), 1, where), 3, where), where);

  const Tensor indices = cast(box_indices, DType::Int32, where);  // checked against the batch above
  Tensor crops;
  if (method == "nearest") {
    // Samples inside are >= 0, so floor(s + 0.5) rounds half away from zero, as TensorFlow.
    crops = gather_pixels(pixels, indices, clamped_index(floor(ys + 0.5, where), height, where),
                          clamped_index(floor(xs + 0.5, where), width, where), where);
  } else {
    const Tensor top = floor(ys, where), left = floor(xs, where);
    // The interpolation weights carry the boxes' gradient; floor and ceil have none.
    const Tensor y_lerp = expand_dims(expand_dims(ys - top, 2, where), 3, where);
    const Tensor x_lerp = expand_dims(expand_dims(xs - left, 1, where), 3, where);
    const Tensor t = clamped_index(top, height, where), bt = clamped_index(ceil(ys, where), height, where);
    const Tensor l = clamped_index(left, width, where), r = clamped_index(ceil(xs, where), width, where);
    const Tensor top_left = gather_pixels(pixels, indices, t, l, where);
    const Tensor top_right = gather_pixels(pixels, indices, t, r, where);
    const Tensor bottom_left = gather_pixels(pixels, indices, bt, l, where);
    const Tensor bottom_right = gather_pixels(pixels, indices, bt, r, where);
    const Tensor upper = top_left + (top_right - top_left) * x_lerp;
    const Tensor lower = bottom_left + (bottom_right - bottom_left) * x_lerp;
    crops = upper + (lower - upper) * y_lerp;
  }
  return ef::where(valid, crops, fill({}, extrapolation_value, dtype, where), where);
}

}  // namespace ef
