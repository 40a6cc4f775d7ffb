// tf.image's flips, rotations, dtype conversion and colour adjustments, as compositions
// of array and math ops (so gradients and graph mode come from those).
#include <cstdint>
#include <limits>

#include "eagerflow/core/dtype_range.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/image.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// `image` must be one image [h, w, c] or a batch [n, h, w, c].
void check_image(const Tensor& image, std::string_view op) {
  if (!image.defined()) fail(op, ": argument 'image' is an undefined tensor");
  if (image.rank() != 3 && image.rank() != 4)
    fail(op,
         ": argument 'image' must be [height, width, channels] or [batch, height, width, channels], got "
         "shape ",
         image.shape());
}

// The largest value of an integer dtype, which an integer image's full intensity is.
uint64_t integer_max(DType dtype) { return static_cast<uint64_t>(integer_range(dtype).second); }

// An integer image of `dtype` as a scalar of the same dtype (scale factors).
Tensor integer_scalar(uint64_t v, DType dtype) {
  return scalar_tensor(static_cast<int64_t>(v), dtype, "convert_image_dtype");
}

// TensorFlow computes the adjustments in float32 for other dtypes than float16 and
// float32, and converts the result back, saturating.
template <class Adjust>
Tensor in_float(const Tensor& image, Adjust adjust) {
  const DType dtype = image.dtype();
  const bool as_is = dtype == DType::Float16 || dtype == DType::Float32;
  const Tensor adjusted = adjust(as_is ? image : convert_image_dtype(image, DType::Float32));
  return as_is ? adjusted : convert_image_dtype(adjusted, dtype, true);
}

}  // namespace

Tensor flip_left_right(const Tensor& image, CallSite where) {
  return detail::with_call_site(where, [&] {
    check_image(image, "flip_left_right");
    return reverse(image, Axes(-2), where);
  });
}

Tensor flip_up_down(const Tensor& image, CallSite where) {
  return detail::with_call_site(where, [&] {
    check_image(image, "flip_up_down");
    return reverse(image, Axes(-3), where);
  });
}

Tensor rot90(const Tensor& image, int64_t k, CallSite where) {
  return detail::with_call_site(where, [&] {
    check_image(image, "rot90");
    // Swapping the height and width axes.
    const std::vector<int64_t> swap =
        image.rank() == 3 ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 2, 1, 3};
    switch (((k % 4) + 4) % 4) {
      case 1:
        return transpose(flip_left_right(image, where), swap, where);
      case 2:
        return flip_up_down(flip_left_right(image, where), where);
      case 3:
        return flip_left_right(transpose(image, swap, where), where);
      default:
        return image;
    }
  });
}

Tensor convert_image_dtype(const Tensor& image, DType dtype, bool /*saturate*/, CallSite where) {
  return detail::with_call_site(where, [&] {
    constexpr std::string_view op = "convert_image_dtype";
    if (!image.defined()) fail(op, ": argument 'image' is an undefined tensor");
    const DType from = image.dtype();
    if (!is_numeric(from)) fail(op, ": argument 'image' must be a number type, got ", from);
    if (!is_numeric(dtype)) fail(op, ": argument 'dtype' must be a number type, got ", dtype);
    if (from == dtype) return image;
    if (is_integer(from) && is_integer(dtype)) {
      // Full intensity is max + 1 = 2^bits: shift by the ratio (in 64 bits without sign:
      // int64's max + 1 is 2^63).
      const uint64_t in = integer_max(from) + 1, out = integer_max(dtype) + 1;
      if (in > out) return cast(floordiv(image, integer_scalar(in / out, from), where), dtype, where);
      return multiply(cast(image, dtype, where), integer_scalar(out / in, dtype), where);
    }
    if (is_floating(from) && is_floating(dtype)) return cast(image, dtype, where);
    if (is_integer(from))
      return multiply(cast(image, dtype, where), 1.0 / static_cast<double>(integer_max(from)), where);
    // Float to integer: [0, 1] onto [0, max], rounding down at max + 0.5 (TensorFlow's).
    return cast(multiply(image, static_cast<double>(integer_max(dtype)) + 0.5, where), dtype, where);
  });
}

Tensor adjust_brightness(const Tensor& image, double delta, CallSite where) {
  return detail::with_call_site(where, [&] {
    check_image(image, "adjust_brightness");
    return in_float(image, [&](const Tensor& x) { return add(x, delta, where); });
  });
}

Tensor adjust_contrast(const Tensor& images, double factor, CallSite where) {
  return detail::with_call_site(where, [&] {
    check_image(images, "adjust_contrast");
    return in_float(images, [&](const Tensor& x) {
      const Tensor mean = reduce_mean(x, Axes({-3, -2}), true, where);
      return add(multiply(subtract(x, mean, where), factor, where), mean, where);
    });
  });
}

Tensor per_image_standardization(const Tensor& image, CallSite where) {
  return detail::with_call_site(where, [&] {
    check_image(image, "per_image_standardization");
    const Tensor x = cast(image, DType::Float32, where);
    const Axes pixels({-3, -2, -1});
    // The count as a tensor, so that images of unknown size (graph mode) work too.
    const Tensor count = reduce_sum(ones_like(x, where), pixels, true, where);
    const Tensor mean = reduce_mean(x, pixels, true, where);
    const Tensor stddev =
        maximum(reduce_std(x, pixels, true, where), divide(1.0, sqrt(count, where), where), where);
    return divide(subtract(x, mean, where), stddev, where);
  });
}

Tensor rgb_to_grayscale(const Tensor& images, CallSite where) {
  return detail::with_call_site(where, [&] {
    if (!images.defined()) fail("rgb_to_grayscale: argument 'images' is an undefined tensor");
    if (images.rank() < 1 || images.shape()[images.rank() - 1] != 3)
      fail("rgb_to_grayscale: argument 'images' must end in 3 channels (RGB), got shape ", images.shape());
    const Tensor x = convert_image_dtype(images, DType::Float32, false, where);
    const Tensor weights = constant({0.2989f, 0.5870f, 0.1140f}).to(x.device());
    const Tensor gray = reduce_sum(multiply(x, weights, where), Axes(-1), true, where);
    return convert_image_dtype(gray, images.dtype(), false, where);
  });
}

}  // namespace ef
