// resize_images, scale_and_translate and their gradient ops: hand-checked values
// (TensorFlow 2's half-pixel geometry and kernels), errors, the adjoint identity, and
// check_gradients at both orders. Parity with PyTorch's interpolate and PIL's resize:
// tests/python/test_image.py.
#include <eagerflow/ops/image.h>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::expect_meta;
using testing::expect_values;
using testing::iota;
using testing::rand64;

TEST(ResizeImages, HandCheckedValues) {
  // One row [0, 1, 2, 3] to width 2: samples at s = (o + 0.5) * 2 - 0.5 = 0.5 and 2.5.
  Tensor row = reshape(iota({4}), {1, 1, 4, 1});
  expect_values(resize_images(row, {1, 2}), {0.5, 2.5});
  expect_values(resize_images(row, {1, 2}, "nearest"), {1, 3});
  // Upsampling [0, 2] to width 4: s = -0.25 (clamped: 0), 0.25, 0.75, 1.25 (clamped: 1).
  Tensor two = reshape(constant({0.0, 2.0}), {1, 1, 2, 1});
  expect_values(resize_images(two, {1, 4}), {0, 0.5, 1.5, 2});
  expect_values(resize_images(two, {1, 4}, "nearest"), {0, 0, 2, 2});
  // Both axes and channels at once: a 2x2 image with two channels to 3x3.
  Tensor img = reshape(iota({8}, DType::Float64), {1, 2, 2, 2});
  Tensor y = resize_images(img, {3, 3});
  expect_meta(y, {1, 3, 3, 2}, DType::Float64);
  // The center samples s = 0.5 on both axes: the mean of the four pixels.
  EXPECT_DOUBLE_EQ(y.to_vector<double>()[8], 3.0);
  EXPECT_DOUBLE_EQ(y.to_vector<double>()[9], 4.0);
  // Nearest keeps integer images as they are; the other methods give float32.
  Tensor ints = reshape(constant({1, 2, 3, 4}), {1, 2, 2, 1});
  expect_meta(resize_images(ints, {4, 4}, "nearest"), {1, 4, 4, 1}, DType::Int32);
  expect_meta(resize_images(ints, {4, 4}), {1, 4, 4, 1}, DType::Float32);
  // Rank 3: one image.
  expect_meta(resize_images(zeros({4, 6, 3}), {2, 3}, "area"), {2, 3, 3}, DType::Float32);
}

TEST(ResizeImages, AreaAveragesTheCoveredPixels) {
  Tensor row = reshape(iota({6}, DType::Float64), {1, 1, 6, 1});
  // Width 6 to 2: the means of [0, 1, 2] and [3, 4, 5].
  expect_values(resize_images(row, {1, 2}, "area"), {1, 4});
  // Width 6 to 4: each output covers 1.5 pixels, e.g. [0, 1.5) = 0 + half of 1.
  expect_values(resize_images(row, {1, 4}, "area"),
                {(0 + 0.5) / 1.5, (0.5 + 2) / 1.5, (3 + 0.5 * 4) / 1.5, (0.5 * 4 + 5) / 1.5});
}

TEST(ResizeImages, BicubicIsKeysCubicRenormalizedAtTheEdges) {
  // Downsampling [0..7] by 2: s = 0.5 + 2o. At s = 0.5 the taps -1, 0, 1, 2 have Keys
  // weights -0.0625, 0.5625, 0.5625, -0.0625; tap -1 is outside, so the rest divide by
  // their sum 1.0625.
  Tensor row = reshape(iota({8}, DType::Float64), {1, 1, 8, 1});
  const std::vector<double> y = resize_images(row, {1, 4}, "bicubic").to_vector<double>();
  EXPECT_NEAR(y[0], (0.5625 * 1 - 0.0625 * 2) / 1.0625, 1e-15);
  // Inside, a cubic reproduces a linear ramp.
  EXPECT_NEAR(y[1], 2.5, 1e-15);
  EXPECT_NEAR(y[2], 4.5, 1e-15);
}

TEST(ResizeImages, AntialiasingAveragesEveryInputPixel) {
  // Antialiased bilinear downsampling by 4 is a triangle of half-width 4 input pixels:
  // a constant image stays constant, and an alternating one averages out.
  Tensor alternating = reshape(constant({1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0}), {1, 1, 8, 1});
  const std::vector<double> plain = resize_images(alternating, {1, 2}, "bilinear").to_vector<double>();
  const std::vector<double> smooth = resize_images(alternating, {1, 2}, "bilinear", true).to_vector<double>();
  EXPECT_NEAR(std::abs(plain[0]), 0.0, 1e-15);  // samples at s = 1.5: halfway between 1 and -1
  for (double v : smooth) EXPECT_LT(std::abs(v), 0.2);
  for (const std::string method :
       {"bilinear", "bicubic", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"})
    for (bool antialias : {false, true}) {
      const std::vector<double> v =
          resize_images(fill({1, 9, 7, 2}, 3.0, DType::Float64), {4, 3}, method, antialias)
              .to_vector<double>();
      for (double e : v) EXPECT_NEAR(e, 3.0, 1e-12) << method << " " << antialias;
    }
}

TEST(ResizeImages, PreserveAspectRatioFitsInsideTheSize) {
  expect_meta(resize_images(zeros({1, 100, 50, 3}), {30, 30}, "bilinear", false, true), {1, 30, 15, 3},
              DType::Float32);
  expect_meta(resize_images(zeros({10, 20, 1}), {100, 100}, "nearest", false, true), {50, 100, 1},
              DType::Float32);
}

TEST(ScaleAndTranslate, ShiftsAndScales) {
  // Translating by a whole pixel with the box kernel shifts the image; samples past the
  // left edge are zero.
  Tensor row = reshape(constant({1.0, 2.0, 3.0, 4.0}), {1, 1, 4, 1});
  expect_values(scale_and_translate(row, {1, 4}, {1.0, 1.0}, {0.0, 1.0}, "box", false), {0, 1, 2, 3});
  // Scale 2 with the triangle kernel is half-pixel bilinear upsampling.
  expect_values(scale_and_translate(row, {1, 8}, {1.0, 2.0}, {0.0, 0.0}, "triangle", false),
                resize_images(row, {1, 8}).to_vector<double>());
}

TEST(ResizeImages, TheGradientOpIsTheAdjoint) {
  // <resize(x), g> == <x, resize_grad(g)> for every shape and method.
  uint64_t seed = 1;
  for (const std::string method : {"bilinear", "nearest", "bicubic", "area"}) {
    for (const auto& [in, out] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
             {{2, 3, 5, 2}, {7, 2}}, {{1, 4, 4, 3}, {4, 4}}, {{1, 1, 3, 1}, {5, 1}}}) {
      Tensor x = rand64(in, seed++);
      Tensor g = rand64(resize_images(x, out, method).shape(), seed++);
      const double lhs = reduce_sum(resize_images(x, out, method) * g).item<double>();
      const double rhs = reduce_sum(x * resize_images_grad(in, g, method)).item<double>();
      EXPECT_NEAR(lhs, rhs, 1e-12) << method << " " << in;
    }
  }
}

TEST(ResizeImages, GradientsAtBothOrders) {
  uint64_t seed = 10;
  for (const std::string method : {"bilinear", "nearest", "bicubic", "area"}) {
    Tensor x = rand64({2, 3, 4, 2}, seed++);
    expect_gradients(
        [&](const std::vector<Tensor>& a) {
          return square(resize_images(a[0], {5, 3}, method));
        },
        {x});
    Tensor g = rand64({2, 5, 3, 2}, seed++);
    expect_gradients(
        [&](const std::vector<Tensor>& a) {
          return square(resize_images_grad({2, 3, 4, 2}, a[0], method));
        },
        {g});
  }
}

TEST(ScaleAndTranslate, GradientsAtBothOrdersAndTheAdjoint) {
  uint64_t seed = 30;
  for (const std::string kernel : {"lanczos3", "keyscubic", "gaussian", "mitchellcubic", "box", "triangle"})
    for (bool antialias : {false, true}) {
      SCOPED_TRACE(kernel + (antialias ? " antialiased" : ""));
      const std::vector<double> scale{0.6, 1.7}, translate{0.3, -0.8};
      Tensor x = rand64({2, 5, 4, 2}, seed++);
      auto resample = [&](const Tensor& images) {
        return scale_and_translate(images, {3, 7}, scale, translate, kernel, antialias);
      };
      Tensor g = rand64({2, 3, 7, 2}, seed++);
      GradientTape tape;
      tape.watch(x);
      Tensor dx = tape.gradient(reduce_sum(resample(x) * g), x);
      EXPECT_NEAR(reduce_sum(resample(x) * g).item<double>(), reduce_sum(x * dx).item<double>(), 1e-12);
      expect_gradients([&](const std::vector<Tensor>& a) { return square(resample(a[0])); }, {x});
      expect_gradients(
          [&](const std::vector<Tensor>& a) {
            return square(scale_and_translate_grad({2, 5, 4, 2}, a[0], scale, translate, kernel, antialias));
          },
          {g});
    }
}

TEST(ResizeImages, BadArgumentsNameTheOpAndArgument) {
  Tensor x = zeros({1, 4, 4, 1});
  EXPECT_ERROR(resize_images(zeros({4, 1}), {2, 2}), InvalidArgumentError, "resize_images", "'images'",
               "rank 3");
  EXPECT_ERROR(resize_images(x, {0, 2}), InvalidArgumentError, "resize_images", "'size'");
  EXPECT_ERROR(resize_images(x, {2}), InvalidArgumentError, "resize_images", "'size'");
  EXPECT_ERROR(resize_images(x, {2, 2}, "cubic"), InvalidArgumentError, "resize_images", "'method'", "cubic");
  EXPECT_ERROR(resize_images(fill({1, 2, 2, 1}, true), {2, 2}), InvalidArgumentError, "resize_images",
               "bool");
  EXPECT_ERROR(scale_and_translate(x, {2, 2}, {0.5, 0.0}, {0, 0}), InvalidArgumentError,
               "scale_and_translate", "'scale'");
  EXPECT_ERROR(scale_and_translate(x, {2, 2}, {0.5}, {0, 0}), InvalidArgumentError, "scale_and_translate",
               "'scale'");
  EXPECT_ERROR(scale_and_translate(x, {2, 2}, {0.5, 0.5}, {0, 0}, "cubic"), InvalidArgumentError,
               "scale_and_translate", "'kernel_type'");
  EXPECT_ERROR(scale_and_translate(zeros({2, 2, 1}), {2, 2}, {1, 1}, {0, 0}), InvalidArgumentError,
               "scale_and_translate", "'images'", "rank 4");
  EXPECT_ERROR(resize_images(zeros({1, 0, 4, 1}), {2, 2}), InvalidArgumentError, "resize_images",
               "no pixels");
  EXPECT_ERROR(resize_images_grad({1, 4, 4, 1}, zeros({2, 2, 2, 1}), "bilinear"), InvalidArgumentError,
               "resize_images_grad", "'grad'");
}

}  // namespace
}  // namespace ef
