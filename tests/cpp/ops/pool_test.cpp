// Tests of max_pool2d, avg_pool2d, their gradient ops, batch_normalization and
// moments: hand-checked values, errors, and check_gradients at first and second order.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::expect_meta;
using testing::expect_values;
using testing::iota;
using testing::rand64;

struct PoolCase {
  Shape input;
  std::vector<int64_t> ksize, strides;
  std::string padding;
};

const std::vector<PoolCase> kPoolCases = {
    {{2, 4, 4, 3}, {2, 2}, {2, 2}, "VALID"},
    {{1, 5, 5, 2}, {3, 3}, {2, 2}, "SAME"},
    {{2, 5, 4, 2}, {3, 2}, {1, 1}, "SAME"},   // overlapping windows
    {{1, 6, 5, 1}, {2, 3}, {2, 1}, "VALID"},
    {{1, 3, 3, 2}, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME"},
};

TEST(Pool, HandCheckedValues) {
  Tensor x = reshape(iota({16}), {1, 4, 4, 1});  // 0..15
  Tensor m = max_pool2d(x, {2, 2}, {2, 2}, "VALID");
  expect_meta(m, {1, 2, 2, 1}, DType::Float32);
  expect_values(m, {5, 7, 13, 15});
  expect_values(avg_pool2d(x, {2}, {2}, "VALID"), {2.5, 4.5, 10.5, 12.5});
  // SAME on 3x3 with 2x2 windows, stride 2: padding after; the mean is over the
  // positions inside the input only (TensorFlow's rule).
  Tensor x3 = reshape(iota({9}, DType::Float64), {1, 3, 3, 1});  // 0..8
  expect_values(max_pool2d(x3, {2, 2}, {2, 2}, "SAME"), {4, 5, 7, 8});
  expect_values(avg_pool2d(x3, {2, 2}, {2, 2}, "SAME"), {2, 3.5, 6.5, 8});
  // Channels pool independently.
  Tensor xc = reshape(constant({1.0, -1.0, 3.0, -3.0, 2.0, -2.0, 0.0, 5.0}), {1, 2, 2, 2});
  expect_values(max_pool2d(xc, {2, 2}, {1, 1}, "VALID"), {3, 5});
  expect_values(avg_pool2d(xc, {2, 2}, {1, 1}, "VALID"), {1.5, -0.25});
}

TEST(Pool, MaxPoolGradRoutesToTheFirstMaximum) {
  // Ties: the first position in window order takes the gradient.
  Tensor x = reshape(constant({1.0, 1.0, 0.0, 1.0}), {1, 2, 2, 1});
  expect_values(max_pool2d_grad(x, reshape(constant({2.0}), {1, 1, 1, 1}), {2, 2}, {1, 1}, "VALID"), {2, 0, 0, 0});
  // Overlapping windows add up.
  Tensor y = reshape(constant({0.0, 9.0, 0.0, 0.0, 0.0, 0.0}), {1, 2, 3, 1});
  expect_values(max_pool2d_grad(y, reshape(constant({1.0, 10.0}), {1, 1, 2, 1}), {2, 2}, {1, 1}, "VALID"),
                {0, 11, 0, 0, 0, 0});
  expect_values(max_pool2d_grad_grad(y, reshape(constant({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}), {1, 2, 3, 1}), {2, 2},
                                     {1, 1}, "VALID"),
                {2, 2});
  // NaN propagates through max_pool2d.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_values(max_pool2d(reshape(constant({1.0, nan, 3.0, 2.0}), {1, 2, 2, 1}), {2, 2}, {2, 2}, "VALID"), {nan});
}

TEST(Pool, AdjointPairs) {
  int64_t seed = 1;
  for (const PoolCase& c : kPoolCases) {
    Tensor x = rand64(c.input, seed++);
    Tensor y = avg_pool2d(x, c.ksize, c.strides, c.padding);
    Tensor dy = rand64(y.shape(), seed++);
    EXPECT_NEAR(reduce_sum(y * dy).item<double>(),
                reduce_sum(x * avg_pool2d_grad(x.shape(), dy, c.ksize, c.strides, c.padding)).item<double>(), 1e-12);
    Tensor gx = rand64(c.input, seed++);
    EXPECT_NEAR(reduce_sum(max_pool2d_grad(x, dy, c.ksize, c.strides, c.padding) * gx).item<double>(),
                reduce_sum(dy * max_pool2d_grad_grad(x, gx, c.ksize, c.strides, c.padding)).item<double>(), 1e-12);
    // float32 agrees with float64.
    expect_values(max_pool2d(cast(x, DType::Float32), c.ksize, c.strides, c.padding),
                  max_pool2d(x, c.ksize, c.strides, c.padding).to_vector<double>(), 1e-6);
    expect_values(avg_pool2d(cast(x, DType::Float32), c.ksize, c.strides, c.padding), y.to_vector<double>(), 1e-6);
  }
}

TEST(Pool, GradientsFirstAndSecondOrder) {
  int64_t seed = 50;
  for (const PoolCase& c : kPoolCases) {
    SCOPED_TRACE(c.input.to_string() + " " + c.padding);
    // Distinct random values: no ties, so finite differences never move a maximum.
    Tensor x = rand64(c.input, seed++);
    expect_gradients([&](const std::vector<Tensor>& a) { return square(max_pool2d(a[0], c.ksize, c.strides,
                                                                                  c.padding)); },
                     {x});
    expect_gradients([&](const std::vector<Tensor>& a) { return square(avg_pool2d(a[0], c.ksize, c.strides,
                                                                                  c.padding)); },
                     {x});
    Tensor dy = rand64(max_pool2d(x, c.ksize, c.strides, c.padding).shape(), seed++);
    expect_gradients([&](const std::vector<Tensor>& a) {
      return square(max_pool2d_grad(a[0], a[1], c.ksize, c.strides, c.padding));
    }, {x, dy});
    expect_gradients([&](const std::vector<Tensor>& a) {
      return square(max_pool2d_grad_grad(a[0], a[1], c.ksize, c.strides, c.padding));
    }, {x, rand64(c.input, seed++)});
    expect_gradients([&](const std::vector<Tensor>& a) {
      return square(avg_pool2d_grad(c.input, a[0], c.ksize, c.strides, c.padding));
    }, {dy});
  }
}

TEST(Pool, Errors) {
  Tensor x = zeros({1, 4, 4, 2});
  EXPECT_ERROR(max_pool2d(zeros({4, 4, 2}), {2, 2}, {2, 2}, "VALID"), InvalidArgumentError, "max_pool2d",
               "'input'", "rank 4");
  EXPECT_ERROR(avg_pool2d(x, {0, 2}, {2, 2}, "VALID"), InvalidArgumentError, "avg_pool2d", "'ksize'", "positive");
  EXPECT_ERROR(max_pool2d(x, {2, 2}, {-1}, "VALID"), InvalidArgumentError, "max_pool2d", "'strides'");
  EXPECT_ERROR(max_pool2d(x, {2, 2, 2, 2}, {1}, "VALID"), InvalidArgumentError, "max_pool2d", "'ksize'");
  EXPECT_ERROR(avg_pool2d(x, {2, 2}, {2, 2}, "FULL"), InvalidArgumentError, "avg_pool2d", "'padding'", "FULL");
  EXPECT_ERROR(max_pool2d(x, {5, 5}, {1, 1}, "VALID"), InvalidArgumentError, "max_pool2d", "VALID", "4x4");
  EXPECT_ERROR(max_pool2d(cast(x, DType::Int64), {2, 2}, {1, 1}, "VALID"), InvalidArgumentError, "max_pool2d",
               "int64");
  EXPECT_ERROR(max_pool2d_grad(x, zeros({1, 3, 3, 2}), {2, 2}, {2, 2}, "VALID"), InvalidArgumentError,
               "max_pool2d_grad", "'grad'", "[1, 2, 2, 2]");
  EXPECT_ERROR(max_pool2d_grad(x, zeros({1, 2, 2, 2}, DType::Float64), {2, 2}, {2, 2}, "VALID"),
               InvalidArgumentError, "max_pool2d_grad", "float64");
  EXPECT_ERROR(avg_pool2d_grad(Shape{1, 4, 4}, zeros({1, 2, 2, 2}), {2, 2}, {2, 2}, "VALID"), InvalidArgumentError,
               "avg_pool2d_grad", "'input_sizes'");
  const int64_t huge = int64_t{1} << 40;
  EXPECT_ERROR(avg_pool2d_grad(Shape{huge, huge, 4, 2}, zeros({1, 2, 2, 2}), {2, 2}, {2, 2}, "VALID"),
               ResourceExhaustedError, "avg_pool2d_grad", "'input_sizes'", "overflows");
}

// A window declared far larger than the input (the fuzzer's INT64-sized ksize and
// strides) is clipped to the input: with SAME padding each output is the whole image.
TEST(Pool, WindowsLargerThanTheInput) {
  const Tensor x = reshape(range(0.0, 24.0, 1.0), {1, 3, 4, 2});
  const int64_t huge = int64_t{1} << 62;
  for (const std::vector<int64_t>& ksize : {std::vector<int64_t>{huge, 3 * (huge / 2)}, {INT64_MAX, INT64_MAX}}) {
    const Tensor avg = avg_pool2d(x, ksize, {huge, huge}, "SAME");
    ASSERT_EQ(avg.shape(), (Shape{1, 1, 1, 2}));
    EXPECT_EQ(avg.to_vector<double>(), (std::vector<double>{11.0, 12.0}));
    EXPECT_EQ(max_pool2d(x, ksize, {huge, huge}, "SAME").to_vector<double>(), (std::vector<double>{22.0, 23.0}));
    const Tensor dx = avg_pool2d_grad(x.shape(), ones({1, 1, 1, 2}, DType::Float64), ksize, {huge, huge}, "SAME");
    EXPECT_EQ(dx.to_vector<double>(), std::vector<double>(24, 1.0 / 12.0));
  }
}

TEST(BatchNormalization, ValuesAndMoments) {
  Tensor x = reshape(constant({1.0, 10.0, 3.0, 20.0, 5.0, 30.0, 7.0, 40.0}), {2, 2, 1, 2});
  auto [mean, variance] = moments(x, {0, 1, 2});
  expect_values(mean, {4, 25});
  expect_values(variance, {5, 125});
  Tensor y = batch_normalization(x, mean, variance, constant({1.0, -1.0}), constant({2.0, 0.5}), 0.0);
  const double s = std::sqrt(5.0), t = std::sqrt(125.0);
  expect_values(y, {1 - 6 / s, -1 - 7.5 / t, 1 - 2 / s, -1 - 2.5 / t, 1 + 2 / s, -1 + 2.5 / t, 1 + 6 / s,
                    -1 + 7.5 / t},
                1e-12);
  // No offset or scale: 0 and 1; epsilon is added to the variance.
  expect_values(batch_normalization(constant({3.0}), constant({1.0}), constant({3.0}), Tensor(), Tensor(), 1.0),
                {1.0}, 1e-12);
  auto [m2, v2] = moments(x, {0, 1, 2}, /*keepdims=*/true);
  expect_meta(m2, {1, 1, 1, 2}, DType::Float64);
  EXPECT_ERROR(batch_normalization(x, cast(mean, DType::Float32), variance, Tensor(), Tensor(), 1e-3),
               InvalidArgumentError, "batch_normalization", "'mean'", "float32");
  EXPECT_ERROR(batch_normalization(x, mean, variance, Tensor(), Tensor(), -1.0), InvalidArgumentError,
               "batch_normalization", "variance_epsilon");
}

TEST(BatchNormalization, TrainingModeGradients) {
  // Training mode: statistics of the batch itself, so the gradient flows through them.
  auto f = [](const std::vector<Tensor>& a) {
    auto [mean, variance] = moments(a[0], {0, 1, 2});
    return square(batch_normalization(a[0], mean, variance, a[1], a[2], 1e-3));
  };
  expect_gradients(f, {rand64({2, 3, 2, 3}, 7), rand64({3}, 8), rand64({3}, 9, 0.5, 1.5)});
}

}  // namespace
}  // namespace ef
