// Image ops (NHWC): tf.image's resizing, flips, rotations, dtype conversion and
// adjustments. Images are [height, width, channels] or [batch, height, width,
// channels]; each op raises InvalidArgumentError naming itself for another rank.
#pragma once

#include <string>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef {

// TensorFlow 2's tf.image.resize of images [batch, height, width, channels] or
// [height, width, channels] to size = {height, width}. Methods:
//  - "bilinear", "nearest", "bicubic": half-pixel centers (output pixel o samples the
//    input at (o + 0.5) * in / out - 0.5); bilinear and nearest are PyTorch's
//    interpolate with align_corners=False ("bilinear", "nearest-exact"); bicubic is
//    Keys' cubic with a = -0.5, taps outside the image dropped and the rest renormalized.
//  - "area": each output pixel averages the input area it covers.
//  - "lanczos3", "lanczos5", "gaussian", "mitchellcubic": windowed kernels.
// antialias widens the kernel when downscaling so that every input pixel counts (for
// bilinear, bicubic and the windowed kernels; PyTorch's antialias=True). With
// preserve_aspect_ratio the images are scaled by one factor to fit inside size.
// The result keeps the images' dtype for "nearest", float64 stays float64, and every
// other dtype becomes float32. Throws InvalidArgumentError for another rank, a
// non-positive size or an unknown method.
Tensor resize_images(const Tensor& images, const std::vector<int64_t>& size,
                     const std::string& method = "bilinear", bool antialias = false,
                     bool preserve_aspect_ratio = false, CallSite where = CallSite::current());
// Its gradient op: the adjoint of resize_images from images of shape input_sizes.
Tensor resize_images_grad(const Shape& input_sizes, const Tensor& grad, const std::string& method,
                          CallSite where = CallSite::current());
// TensorFlow's ScaleAndTranslate: output pixel (y, x) of images [N, H, W, C] samples the
// input at ((y + 0.5 - translate[0]) / scale[0], (x + 0.5 - translate[1]) / scale[1]) with
// kernel_type "lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle",
// "keyscubic" or "mitchellcubic"; the taps inside the image are renormalized to sum to 1,
// and samples outside it give 0. antialias widens a downscaling kernel by 1 / scale.
Tensor scale_and_translate(const Tensor& images, const std::vector<int64_t>& size,
                           const std::vector<double>& scale, const std::vector<double>& translate,
                           const std::string& kernel_type = "lanczos3", bool antialias = true,
                           CallSite where = CallSite::current());
// Its gradient op: the adjoint of scale_and_translate from images of shape input_sizes.
Tensor scale_and_translate_grad(const Shape& input_sizes, const Tensor& grad,
                                const std::vector<double>& scale, const std::vector<double>& translate,
                                const std::string& kernel_type = "lanczos3", bool antialias = true,
                                CallSite where = CallSite::current());

// tf.image.crop_and_resize: for each box b, the crop of image [batch, H, W, C] number
// box_indices[b] inside boxes[b] = [y1, x1, y2, x2] (normalized: 0 and 1 are the first
// and last pixel centers; y1 > y2 flips the crop) resized to crop_size [height, width]
// by "bilinear" or "nearest" sampling; samples outside the image are
// extrapolation_value. Gives [num_boxes, height, width, C], float64 for float64 images
// and float32 otherwise, differentiable in the image and the boxes. Throws
// InvalidArgumentError naming the argument for bad shapes, dtypes, sizes or indices.
Tensor crop_and_resize(const Tensor& image, const Tensor& boxes, const Tensor& box_indices,
                       const std::vector<int64_t>& crop_size, const std::string& method = "bilinear",
                       double extrapolation_value = 0.0, CallSite where = CallSite::current());

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
