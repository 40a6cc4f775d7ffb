// Image ops (NHWC): tf.image's resizing, flips, rotations, dtype conversion and
// adjustments. Images are [height, width, channels] or [batch, height, width,
// channels]; each op raises InvalidArgumentError naming itself for another rank.
#pragma once

#include <string>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef {

// TensorFlow 2's tf.image.resize of [batch, height, width, channels] images to
// size = {height, width}, with method "bilinear" (float images) or "nearest" (any
// numeric dtype): half-pixel centers, no antialiasing (PyTorch's interpolate with
// align_corners=False, mode "bilinear" or "nearest-exact"). Throws
// InvalidArgumentError for another rank or a non-positive size, UnimplementedError
// for another method.
Tensor resize_images(const Tensor& images, const std::vector<int64_t>& size,
                     const std::string& method = "bilinear", CallSite where = CallSite::current());
// Its gradient op: the adjoint of resize_images from images of shape input_sizes.
Tensor resize_images_grad(const Shape& input_sizes, const Tensor& grad, const std::string& method,
                          CallSite where = CallSite::current());

// The image mirrored left to right (the width axis reversed), and top to bottom.
Tensor flip_left_right(const Tensor& image, CallSite where = CallSite::current());
Tensor flip_up_down(const Tensor& image, CallSite where = CallSite::current());
// The image turned k quarter turns counter-clockwise (k may be negative), as
// np.rot90 over the height and width axes.
Tensor rot90(const Tensor& image, int64_t k = 1, CallSite where = CallSite::current());

// tf.image.convert_image_dtype: integer images span [0, dtype max], float images [0, 1].
// Integer to integer shifts the range (uint8 255 → uint16 65280, uint16 → uint8 keeps
// the high byte); integer to float multiplies by 1 / max; float to integer multiplies
// by max + 0.5 and casts, saturating (so `saturate` changes nothing here: eagerflow's
// casts always saturate); float to float casts.
Tensor convert_image_dtype(const Tensor& image, DType dtype, bool saturate = false,
                           CallSite where = CallSite::current());
// image + delta, computed in float32 for other dtypes than float16 and float32 (integer
// images on their [0, 1] scale) and converted back, saturating.
Tensor adjust_brightness(const Tensor& image, double delta, CallSite where = CallSite::current());
// (x - mean) * factor + mean, the mean of each channel over each image's pixels;
// computed and converted as adjust_brightness.
Tensor adjust_contrast(const Tensor& images, double factor, CallSite where = CallSite::current());
// Each image scaled to mean 0 and variance 1: (x - mean) / max(stddev, 1 / sqrt(N))
// over its N = height * width * channels values, in float32 (the result's dtype).
Tensor per_image_standardization(const Tensor& image, CallSite where = CallSite::current());
// RGB images (3 channels) to one grey channel, 0.2989 R + 0.5870 G + 0.1140 B, computed in
// float32 and converted back to the images' dtype.
Tensor rgb_to_grayscale(const Tensor& images, CallSite where = CallSite::current());

}  // namespace ef
