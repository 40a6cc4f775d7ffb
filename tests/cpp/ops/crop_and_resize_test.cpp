// crop_and_resize: hand-checked samples (TensorFlow's geometry), extrapolation, both
// gradients (image and boxes) at both orders, and errors. Parity with a float64
// transcription of TensorFlow's kernel: tests/python/test_image.py.
#include <eagerflow/ops/image.h>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::expect_meta;
using testing::expect_values;
using testing::iota;
using testing::rand64;

TEST(CropAndResize, SamplesAtTheBoxesPixelCenters) {
  // A 3x3 image holding 0..8; the whole-image box at 3x3 gives the image back, a box at
  // its center gives pixel 4, and a box covering the upper left quarter samples halfway.
  Tensor image = reshape(iota({9}, DType::Float64), {1, 3, 3, 1});
  Tensor boxes = constant({{0.0, 0.0, 1.0, 1.0}, {0.5, 0.5, 0.5, 0.5}, {0.0, 0.0, 0.5, 0.5}});
  Tensor crops = crop_and_resize(image, boxes, constant({0, 0, 0}), {3, 3});
  expect_meta(crops, {3, 3, 3, 1}, DType::Float64);
  const std::vector<double> v = crops.to_vector<double>();
  for (int i = 0; i < 9; ++i) EXPECT_DOUBLE_EQ(v[static_cast<size_t>(i)], i);
  for (int i = 9; i < 18; ++i) EXPECT_DOUBLE_EQ(v[static_cast<size_t>(i)], 4.0);
  expect_values(slice(crops, {2, 0, 0, 0}, {1, -1, -1, -1}), {0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4});
  // A one-pixel crop samples the box's center; y1 > y2 flips the crop.
  expect_values(crop_and_resize(image, constant({{0.0, 0.0, 1.0, 1.0}}), constant({0}), {1, 1}), {4});
  expect_values(crop_and_resize(image, constant({{1.0, 0.0, 0.0, 0.0}}), constant({0}), {3, 1}), {6, 3, 0});
  // Nearest rounds half away from zero: 0.5 * 2 = 1 (pixel 1 of [0, 1, 2]).
  expect_values(crop_and_resize(image, constant({{0.0, 0.0, 0.0, 0.5}}), constant({0}), {1, 3}, "nearest"),
                {0, 1, 1});
}

TEST(CropAndResize, SamplesOutsideTheImageAreTheExtrapolationValue) {
  Tensor image = fill({2, 2, 2, 3}, 1.0, DType::Float32);
  Tensor crops =
      crop_and_resize(image, constant({{-1.0f, 0.0f, 1.0f, 1.0f}}), constant({1}), {3, 2}, "bilinear", -5);
  expect_meta(crops, {1, 3, 2, 3}, DType::Float32);
  // Row 0 samples y = -1, outside; rows 1 and 2 sample 0 and 1, inside.
  expect_values(slice(crops, {0, 0, 0, 0}, {1, 1, -1, -1}), std::vector<double>(6, -5.0));
  expect_values(slice(crops, {0, 1, 0, 0}, {1, 2, -1, -1}), std::vector<double>(12, 1.0));
  // Integer images compute in float32.
  expect_meta(crop_and_resize(constant({{{{1}}}}), constant({{0.f, 0.f, 1.f, 1.f}}), constant({0}), {2, 2}),
              {1, 2, 2, 1}, DType::Float32);
}

TEST(CropAndResize, GradientsForImageAndBoxesAtBothOrders) {
  Tensor image = rand64({2, 4, 5, 2}, 1);
  // Boxes whose sample points avoid pixel centers, where the boxes' gradient has a kink.
  Tensor boxes = constant({{0.11, 0.23, 0.87, 0.71}, {0.93, 0.05, 0.31, 0.64}, {0.4, 0.4, 0.43, 0.47}});
  Tensor indices = constant({1, 0, 1});
  for (const std::string method : {"bilinear", "nearest"}) {
    SCOPED_TRACE(method);
    expect_gradients(
        [&](const std::vector<Tensor>& a) {
          return square(crop_and_resize(a[0], boxes, indices, {3, 4}, method));
        },
        {image});
  }
  expect_gradients(
      [&](const std::vector<Tensor>& a) {
        return square(crop_and_resize(a[0], a[1], indices, {3, 4}));
      },
      {image, boxes});
}

TEST(CropAndResize, BadArgumentsNameTheArgument) {
  Tensor image = zeros({2, 3, 3, 1});
  Tensor box = constant({{0.f, 0.f, 1.f, 1.f}});
  EXPECT_ERROR(crop_and_resize(zeros({3, 3, 1}), box, constant({0}), {2, 2}), InvalidArgumentError,
               "crop_and_resize", "'image'", "rank 4");
  EXPECT_ERROR(crop_and_resize(image, constant({{0.f, 0.f, 1.f}}), constant({0}), {2, 2}),
               InvalidArgumentError, "crop_and_resize", "'boxes'");
  EXPECT_ERROR(crop_and_resize(image, constant({{0, 0, 1, 1}}), constant({0}), {2, 2}), InvalidArgumentError,
               "crop_and_resize", "'boxes'", "float");
  EXPECT_ERROR(crop_and_resize(image, box, constant({0, 1}), {2, 2}), InvalidArgumentError, "crop_and_resize",
               "'box_indices'", "different numbers");
  EXPECT_ERROR(crop_and_resize(image, box, constant({2}), {2, 2}), InvalidArgumentError, "crop_and_resize",
               "'box_indices'", "2", "[0, 2)");
  EXPECT_ERROR(crop_and_resize(image, box, constant({-1}), {2, 2}), InvalidArgumentError, "crop_and_resize",
               "'box_indices'", "-1");
  EXPECT_ERROR(crop_and_resize(image, box, constant({0}), {0, 2}), InvalidArgumentError, "crop_and_resize",
               "'crop_size'");
  EXPECT_ERROR(crop_and_resize(image, box, constant({0}), {2, 2}, "bicubic"), InvalidArgumentError,
               "crop_and_resize", "'method'");
  EXPECT_ERROR(crop_and_resize(zeros({1, 0, 3, 1}), box, constant({0}), {2, 2}), InvalidArgumentError,
               "crop_and_resize", "no pixels");
}

}  // namespace
}  // namespace ef
