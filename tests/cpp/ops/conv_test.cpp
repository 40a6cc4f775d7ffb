// Tests of conv2d, conv2d_backprop_input / _filter and conv2d_transpose: hand-checked
// values, a naive reference loop over a table of strides / padding / dilations, errors,
// and check_gradients at first and second order for the whole family.
#include <cmath>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::expect_meta;
using testing::expect_values;
using testing::iota;
using testing::rand64;

struct ConvCase {
  Shape input, filter;
  std::vector<int64_t> strides;
  std::string padding;
  std::vector<int64_t> dilations;
};

// The same cases serve values and gradients: every stride / padding / dilation mix,
// the pointwise (1x1) fast path, and a strided 1x1.
const std::vector<ConvCase> kCases = {
    {{2, 5, 5, 3}, {3, 3, 3, 2}, {1, 1}, "SAME", {1, 1}},
    {{1, 6, 5, 2}, {2, 3, 2, 3}, {2, 1}, "VALID", {1, 1}},
    {{2, 7, 6, 2}, {3, 2, 2, 2}, {2, 2}, "SAME", {2, 1}},
    {{1, 7, 7, 1}, {2, 2, 1, 2}, {1, 1}, "VALID", {2, 3}},
    {{1, 6, 6, 2}, {4, 4, 2, 1}, {3, 3}, "SAME", {1, 1}},
    {{2, 4, 4, 3}, {1, 1, 3, 2}, {1, 1}, "VALID", {1, 1}},
    {{1, 5, 5, 2}, {1, 1, 2, 2}, {2, 2}, "SAME", {1, 1}},
};

// Direct six-loop convolution with TensorFlow's padding rule, in double.
std::vector<double> reference_conv(const std::vector<double>& x, const std::vector<double>& w, const ConvCase& c,
                                   Shape& out_shape) {
  const int64_t n = c.input[0], h = c.input[1], wd = c.input[2], ci = c.input[3];
  const int64_t kh = c.filter[0], kw = c.filter[1], co = c.filter[3];
  const int64_t sh = c.strides[0], sw = c.strides[1], dh = c.dilations[0], dw = c.dilations[1];
  const int64_t eh = (kh - 1) * dh + 1, ew = (kw - 1) * dw + 1;
  int64_t oh, ow, pt = 0, pl = 0;
  if (c.padding == "SAME") {
    oh = (h + sh - 1) / sh;
    ow = (wd + sw - 1) / sw;
    pt = std::max<int64_t>((oh - 1) * sh + eh - h, 0) / 2;
    pl = std::max<int64_t>((ow - 1) * sw + ew - wd, 0) / 2;
  } else {
    oh = (h - eh) / sh + 1;
    ow = (wd - ew) / sw + 1;
  }
  out_shape = Shape{n, oh, ow, co};
  std::vector<double> y(n * oh * ow * co, 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t o = 0; o < co; ++o) {
          double s = 0;
          for (int64_t p = 0; p < kh; ++p)
            for (int64_t q = 0; q < kw; ++q) {
              const int64_t y0 = i * sh - pt + p * dh, x0 = j * sw - pl + q * dw;
              if (y0 < 0 || y0 >= h || x0 < 0 || x0 >= wd) continue;
              for (int64_t k = 0; k < ci; ++k)
                s += x[((b * h + y0) * wd + x0) * ci + k] * w[((p * kw + q) * ci + k) * co + o];
            }
          y[((b * oh + i) * ow + j) * co + o] = s;
        }
  return y;
}

TEST(Conv2d, HandCheckedValues) {
  Tensor x = reshape(iota({9}) + 1.f, {1, 3, 3, 1});  // 1..9
  Tensor w = ones({2, 2, 1, 1});
  Tensor valid = conv2d(x, w, {1, 1}, "VALID");
  expect_meta(valid, {1, 2, 2, 1}, DType::Float32);
  expect_values(valid, {12, 16, 24, 28});
  // SAME: one row / column of zero padding, after (bottom / right).
  expect_values(conv2d(x, w, {1}, "SAME"), {12, 16, 9, 24, 28, 15, 15, 17, 9});
  expect_values(conv2d(x, w, {2, 2}, "SAME"), {12, 9, 15, 9});
  // Dilation 2 samples the four corners.
  expect_values(conv2d(x, w, {1, 1}, "VALID", {2, 2}), {20});
  // Strides and dilations as 4 NHWC values.
  expect_values(conv2d(x, w, {1, 2, 2, 1}, "SAME", {1, 1, 1, 1}), {12, 9, 15, 9});
}

TEST(Conv2d, MatchesReferenceLoop) {
  int64_t seed = 10;
  for (const ConvCase& c : kCases) {
    for (DType dt : {DType::Float32, DType::Float64}) {
      Tensor x = cast(rand64(c.input, seed++), dt), w = cast(rand64(c.filter, seed++), dt);
      Shape out_shape;
      std::vector<double> ref = reference_conv(x.to_vector<double>(), w.to_vector<double>(), c, out_shape);
      Tensor y = conv2d(x, w, c.strides, c.padding, c.dilations);
      SCOPED_TRACE(c.input.to_string() + " " + c.filter.to_string() + " " + c.padding);
      expect_meta(y, out_shape, dt);
      expect_values(y, ref, dt == DType::Float32 ? 1e-5 : 1e-12);
    }
  }
}

TEST(Conv2d, SeveralRowBlocksAndNonContiguousInput) {
  // 40 images of 6x6 span two GEMM row blocks (3 channels: im2col + GEMM; 1 channel:
  // the direct loops); a transposed view must be read right.
  int64_t seed = 3;
  for (int64_t c : {3, 1}) {
    Tensor x = rand64({40, 6, 6, c}, seed++), w = rand64({3, 3, c, 4}, seed++);
    Tensor xt = transpose(x, {0, 2, 1, 3});
    Tensor y = conv2d(xt, w, {1, 1}, "SAME");
    expect_values(y, conv2d(xt.contiguous(), w, {1, 1}, "SAME").to_vector<double>(), 0);
    ConvCase cc{{40, 6, 6, c}, {3, 3, c, 4}, {1, 1}, "SAME", {1, 1}};
    Shape s;
    expect_values(y, reference_conv(xt.contiguous().to_vector<double>(), w.to_vector<double>(), cc, s), 1e-12);
    // The filter gradient sums the blocks: compare with the adjoint identity.
    Tensor dy = rand64(y.shape(), seed++);
    EXPECT_NEAR(reduce_sum(w * conv2d_backprop_filter(xt, w.shape(), dy, {1, 1}, "SAME")).item<double>(),
                reduce_sum(y * dy).item<double>(), 1e-9);
  }
}

TEST(Conv2d, EmptyBatchAndZeroChannels) {
  expect_meta(conv2d(zeros({0, 4, 4, 2}), ones({3, 3, 2, 5}), {1, 1}, "SAME"), {0, 4, 4, 5}, DType::Float32);
  // No input channels: every output is an empty sum.
  expect_values(conv2d(zeros({1, 2, 2, 0}), ones({1, 1, 0, 2}), {1, 1}, "VALID"), std::vector<double>(8, 0.0));
  expect_values(conv2d_backprop_filter(zeros({0, 3, 3, 1}), Shape{2, 2, 1, 1}, zeros({0, 2, 2, 1}), {1, 1}, "VALID"),
                {0, 0, 0, 0});
}

TEST(Conv2d, BackpropOpsAreTheAdjoints) {
  // <conv2d(x, w), dy> = <x, backprop_input(w, dy)> = <w, backprop_filter(x, dy)>.
  int64_t seed = 100;
  for (const ConvCase& c : kCases) {
    Tensor x = rand64(c.input, seed++), w = rand64(c.filter, seed++);
    Tensor y = conv2d(x, w, c.strides, c.padding, c.dilations);
    Tensor dy = rand64(y.shape(), seed++);
    const double lhs = reduce_sum(y * dy).item<double>();
    Tensor dx = conv2d_backprop_input(x.shape(), w, dy, c.strides, c.padding, c.dilations);
    Tensor dw = conv2d_backprop_filter(x, w.shape(), dy, c.strides, c.padding, c.dilations);
    EXPECT_NEAR(reduce_sum(x * dx).item<double>(), lhs, 1e-10);
    EXPECT_NEAR(reduce_sum(w * dw).item<double>(), lhs, 1e-10);
    // conv2d_transpose is backprop_input with the arguments in TensorFlow's order.
    expect_values(conv2d_transpose(dy, w, x.shape(), c.strides, c.padding, c.dilations), dx.to_vector<double>(), 0);
  }
}

TEST(Conv2d, GradientsFirstAndSecondOrder) {
  int64_t seed = 200;
  for (const ConvCase& c : kCases) {
    SCOPED_TRACE(c.input.to_string() + " " + c.filter.to_string() + " " + c.padding);
    Tensor x = rand64(c.input, seed++), w = rand64(c.filter, seed++);
    // Squared so that the upstream gradient depends on x and w: second order then
    // runs through every gradient of the family.
    expect_gradients([&](const std::vector<Tensor>& a) { return square(conv2d(a[0], a[1], c.strides, c.padding,
                                                                              c.dilations)); },
                     {x, w});
    Tensor dy = rand64(conv2d(x, w, c.strides, c.padding, c.dilations).shape(), seed++);
    expect_gradients([&](const std::vector<Tensor>& a) {
      return square(conv2d_backprop_input(c.input, a[0], a[1], c.strides, c.padding, c.dilations));
    }, {w, dy});
    expect_gradients([&](const std::vector<Tensor>& a) {
      return square(conv2d_backprop_filter(a[0], c.filter, a[1], c.strides, c.padding, c.dilations));
    }, {x, dy});
  }
}

TEST(Conv2d, Errors) {
  Tensor x = zeros({1, 4, 4, 3}), w = zeros({3, 3, 3, 2});
  EXPECT_ERROR(conv2d(zeros({4, 4, 3}), w, {1, 1}, "SAME"), InvalidArgumentError, "conv2d", "'input'", "rank 4",
               "[4, 4, 3]");
  EXPECT_ERROR(conv2d(x, zeros({3, 3, 3}), {1, 1}, "SAME"), InvalidArgumentError, "conv2d", "'filters'");
  EXPECT_ERROR(conv2d(x, zeros({3, 3, 2, 2}), {1, 1}, "SAME"), InvalidArgumentError, "conv2d", "[1, 4, 4, 3]",
               "[3, 3, 2, 2]", "channels");
  EXPECT_ERROR(conv2d(x, w, {0, 1}, "SAME"), InvalidArgumentError, "conv2d", "'strides'", "positive");
  EXPECT_ERROR(conv2d(x, w, {1, 2, 3}, "SAME"), InvalidArgumentError, "conv2d", "'strides'", "1, 2 or 4");
  EXPECT_ERROR(conv2d(x, w, {2, 1, 1, 1}, "SAME"), InvalidArgumentError, "conv2d", "'strides'", "batch and channel");
  EXPECT_ERROR(conv2d(x, w, {1, 1}, "SAME", {1, -1}), InvalidArgumentError, "conv2d", "'dilations'");
  EXPECT_ERROR(conv2d(x, w, {1, 1}, "same"), InvalidArgumentError, "conv2d", "'padding'", "\"same\"");
  EXPECT_ERROR(conv2d(x, zeros({5, 5, 3, 2}), {1, 1}, "VALID"), InvalidArgumentError, "conv2d", "VALID", "4x4");
  EXPECT_ERROR(conv2d(x, w, {1, 1}, "VALID", {2, 2}), InvalidArgumentError, "conv2d", "dilated size 5x5");
  EXPECT_ERROR(conv2d(x, cast(w, DType::Float64), {1, 1}, "SAME"), InvalidArgumentError, "conv2d", "float32",
               "float64");
  EXPECT_ERROR(conv2d(cast(x, DType::Int32), cast(w, DType::Int32), {1, 1}, "SAME"), InvalidArgumentError, "conv2d",
               "int32");
  EXPECT_ERROR(conv2d_backprop_input(Shape{1, 4, 4, 3}, w, zeros({1, 3, 3, 2}), {1, 1}, "SAME"),
               InvalidArgumentError, "conv2d_backprop_input", "'out_backprop'", "[1, 3, 3, 2]", "[1, 4, 4, 2]");
  EXPECT_ERROR(conv2d_backprop_filter(x, Shape{3, 3, 3}, zeros({1, 4, 4, 2}), {1, 1}, "SAME"), InvalidArgumentError,
               "conv2d_backprop_filter", "'filter_sizes'");
  // Sizes whose element count overflows are rejected before anything is allocated.
  const int64_t huge = int64_t{1} << 40;
  EXPECT_ERROR(conv2d_backprop_input(Shape{huge, huge, 4, 3}, w, zeros({1, 4, 4, 2}), {1, 1}, "SAME"),
               ResourceExhaustedError, "conv2d_backprop_input", "'input_sizes'", "overflows");
  EXPECT_ERROR(conv2d_backprop_filter(x, Shape{huge, huge, 3, 2}, zeros({1, 4, 4, 2}), {1, 1}, "SAME"),
               ResourceExhaustedError, "conv2d_backprop_filter", "'filter_sizes'", "overflows");
  EXPECT_ERROR(conv2d_backprop_input(Shape{1, 4, 4, -3}, w, zeros({1, 4, 4, 2}), {1, 1}, "SAME"),
               InvalidArgumentError, "conv2d_backprop_input", "'input_sizes'", "negative");
}

}  // namespace
}  // namespace ef
