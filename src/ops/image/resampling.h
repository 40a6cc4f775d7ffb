// Separable image resampling, shared by resize_images and scale_and_translate and by
// their gradient ops. Every resize method is a linear map per axis: output pixel o of
// an axis is a weighted sum of some input pixels of that axis (an AxisMap). A 2-D resize
// applies the width map to each row and the height map to each column; its adjoint (the
// gradient) applies the transposed maps.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef::image {

// Output pixel o = sum of weight[e] * input[index[e]] for e in [offsets[o], offsets[o + 1]).
struct AxisMap {
  int64_t in = 0, out = 0;
  std::vector<int64_t> offsets{0}, index;
  std::vector<double> weight;

  void add(int64_t input, double w) {
    index.push_back(input);
    weight.push_back(w);
  }
  void end_pixel() { offsets.push_back(static_cast<int64_t>(index.size())); }
  // The adjoint map, from `out` pixels back to `in` pixels.
  AxisMap transposed() const;
};

// The methods of TensorFlow's ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic
// (half-pixel centers) and ResizeArea along one axis of `in` pixels resized to `out`.
// Throws InvalidArgumentError naming `op` for another method.
AxisMap resize_axis(std::string_view method, int64_t in, int64_t out, std::string_view op);

// TensorFlow's ScaleAndTranslate along one axis: output pixel o samples the input at
// (o + 0.5 - translate) / scale with kernel `kernel` ("lanczos1", "lanczos3",
// "lanczos5", "gaussian", "box", "triangle", "keyscubic", "mitchellcubic"), the taps
// inside the input renormalized to sum to 1; with `antialias` a downscaling kernel is
// widened by 1 / scale. Throws InvalidArgumentError naming `op` for another kernel.
AxisMap scale_and_translate_axis(std::string_view kernel, bool antialias, double scale, double translate,
                                 int64_t in, int64_t out, std::string_view op);

// Throws InvalidArgumentError naming `op` unless `method` is one of resize_axis's.
void check_resize_method(std::string_view method, std::string_view op);

// The dtype resized images come out in: float64 stays float64, every other dtype becomes
// float32 (TensorFlow gives float32 for all).
constexpr DType resized_dtype(DType images) {
  return images == DType::Float64 ? DType::Float64 : DType::Float32;
}

// y [N, rows.out, cols.out, C] = images x [N, rows.in, cols.in, C] mapped along the height
// axis by `rows` and the width axis by `cols`, in x's dtype (float; integers only for
// maps of one weight-1 tap per pixel, which copy).
void resample(const Tensor& x, Tensor& y, const AxisMap& rows, const AxisMap& cols);

}  // namespace ef::image
