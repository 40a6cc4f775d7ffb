// Image ops (NHWC): tf.image's resizing.
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

}  // namespace ef
