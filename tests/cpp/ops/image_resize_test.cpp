// resize_images and resize_images_grad: hand-checked values (TensorFlow 2's half-pixel
// geometry), errors, the adjoint identity, and check_gradients at both orders. Parity
// with PyTorch's interpolate: tests/python/test_image.py.
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
  // Nearest keeps integer images as they are.
  Tensor ints = reshape(constant({1, 2, 3, 4}), {1, 2, 2, 1});
  expect_meta(resize_images(ints, {4, 4}, "nearest"), {1, 4, 4, 1}, DType::Int32);
}

TEST(ResizeImages, TheGradientOpIsTheAdjoint) {
  // <resize(x), g> == <x, resize_grad(g)> for every shape and method.
  uint64_t seed = 1;
  for (const std::string method : {"bilinear", "nearest"}) {
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
  for (const std::string method : {"bilinear", "nearest"}) {
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

TEST(ResizeImages, BadArgumentsNameTheOpAndArgument) {
  Tensor x = zeros({1, 4, 4, 1});
  EXPECT_ERROR(resize_images(zeros({4, 4, 1}), {2, 2}), InvalidArgumentError, "resize_images", "'images'",
               "rank 4");
  EXPECT_ERROR(resize_images(x, {0, 2}), InvalidArgumentError, "resize_images", "'size'");
  EXPECT_ERROR(resize_images(x, {2}), InvalidArgumentError, "resize_images", "'size'");
  EXPECT_ERROR(resize_images(x, {2, 2}, "bicubic"), UnimplementedError, "resize_images", "bicubic");
  EXPECT_ERROR(resize_images(constant({{{{1}}}}), {2, 2}), InvalidArgumentError, "resize_images", "'images'");
  EXPECT_ERROR(resize_images(zeros({1, 0, 4, 1}), {2, 2}), InvalidArgumentError, "resize_images",
               "no pixels");
  EXPECT_ERROR(resize_images_grad({1, 4, 4, 1}, zeros({2, 2, 2, 1}), "bilinear"), InvalidArgumentError,
               "resize_images_grad", "'grad'");
}

}  // namespace
}  // namespace ef
