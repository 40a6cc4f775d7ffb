// conv1d and conv3d (composites of conv2d): values against a direct sum, SAME padding in
// depth, gradients at both orders, and errors. Parity with PyTorch: tests/python/test_conv_vs_torch.py.
#include <eagerflow/ops/conv.h>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::expect_meta;
using testing::rand64;

// conv3d by its definition, VALID, unit strides and dilations.
std::vector<double> direct_conv3d(const Tensor& x, const Tensor& w) {
  const Shape& s = x.shape();
  const Shape& k = w.shape();
  const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>();
  const int64_t od = s[1] - k[0] + 1, oh = s[2] - k[1] + 1, ow = s[3] - k[2] + 1;
  std::vector<double> out;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t d = 0; d < od; ++d)
      for (int64_t h = 0; h < oh; ++h)
        for (int64_t v = 0; v < ow; ++v)
          for (int64_t o = 0; o < k[4]; ++o) {
            double sum = 0;
            for (int64_t a = 0; a < k[0]; ++a)
              for (int64_t b = 0; b < k[1]; ++b)
                for (int64_t c = 0; c < k[2]; ++c)
                  for (int64_t i = 0; i < k[3]; ++i)
                    sum += xv[static_cast<size_t>(
                               (((n * s[1] + d + a) * s[2] + h + b) * s[3] + v + c) * s[4] + i)] *
                           wv[static_cast<size_t>((((a * k[1] + b) * k[2] + c) * k[3] + i) * k[4] + o)];
            out.push_back(sum);
          }
  return out;
}

TEST(Conv3d, MatchesTheDefinition) {
  Tensor x = rand64({2, 4, 5, 3, 2}, 1), w = rand64({2, 3, 2, 2, 3}, 2);
  Tensor y = conv3d(x, w, {1}, "VALID");
  expect_meta(y, {2, 3, 3, 2, 3}, DType::Float64);
  const std::vector<double> got = y.to_vector<double>(), want = direct_conv3d(x, w);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12);
  // SAME pads depth 5 with a 3-deep filter at stride 2 to three outputs, one zero slice
  // on each side: output depth 0 reads slices (pad, 0, 1).
  Tensor same = conv3d(rand64({1, 5, 4, 4, 1}, 3), rand64({3, 1, 1, 1, 1}, 4), {1, 2, 1, 1, 1}, "SAME");
  expect_meta(same, {1, 3, 4, 4, 1}, DType::Float64);
  expect_meta(conv3d(zeros({1, 7, 7, 7, 2}), zeros({3, 3, 3, 2, 4}), {2}, "VALID", {1, 2, 1}),
              {1, 3, 2, 3, 4}, DType::Float32);
}

TEST(Conv3d, GradientsAtBothOrders) {
  Tensor x = rand64({1, 4, 4, 3, 2}, 5), w = rand64({2, 2, 2, 2, 2}, 6);
  for (const std::string padding : {"SAME", "VALID"})
    expect_gradients(
        [&](const std::vector<Tensor>& a) {
          return square(conv3d(a[0], a[1], {1, 2, 1}, padding, {2, 1, 1}));
        },
        {x, w});
}

TEST(Conv1d, IsARowOfConv2d) {
  Tensor x = rand64({2, 9, 3}, 7), w = rand64({3, 3, 4}, 8);
  Tensor y = conv1d(x, w, 2, "SAME", 1);
  expect_meta(y, {2, 5, 4}, DType::Float64);
  Tensor row = conv2d(expand_dims(x, 1), expand_dims(w, 0), {1, 2}, "SAME");
  EXPECT_EQ(y.to_vector<double>(), row.to_vector<double>());
  expect_gradients([&](const std::vector<Tensor>& a) { return square(conv1d(a[0], a[1], 1, "VALID", 2)); },
                   {x, w});
}

TEST(Conv3d, BadArgumentsNameTheArgument) {
  Tensor x = zeros({1, 4, 4, 4, 2}), w = zeros({2, 2, 2, 2, 3});
  EXPECT_ERROR(conv3d(zeros({4, 4, 4, 2}), w, {1}, "SAME"), InvalidArgumentError, "conv3d", "'input'",
               "rank 5");
  EXPECT_ERROR(conv3d(x, zeros({2, 2, 2, 3}), {1}, "SAME"), InvalidArgumentError, "conv3d", "'filters'",
               "rank 5");
  EXPECT_ERROR(conv3d(x, zeros({2, 2, 2, 3, 3}), {1}, "SAME"), InvalidArgumentError, "conv3d", "channels");
  EXPECT_ERROR(conv3d(x, zeros({2, 2, 2, 2, 3}, DType::Float64), {1}, "SAME"), InvalidArgumentError, "conv3d",
               "dtype");
  EXPECT_ERROR(conv3d(x, w, {1, 1}, "SAME"), InvalidArgumentError, "conv3d", "'strides'");
  EXPECT_ERROR(conv3d(x, w, {2, 1, 1, 1, 1}, "SAME"), InvalidArgumentError, "conv3d", "'strides'");
  EXPECT_ERROR(conv3d(x, w, {1}, "SAME", {0}), InvalidArgumentError, "conv3d", "'dilations'");
  EXPECT_ERROR(conv3d(x, w, {1}, "same"), InvalidArgumentError, "conv3d", "padding");
  EXPECT_ERROR(conv3d(x, zeros({5, 2, 2, 2, 3}), {1}, "VALID"), InvalidArgumentError, "conv3d", "depth");
  EXPECT_ERROR(conv1d(zeros({4, 2}), zeros({2, 2, 1}), 1, "SAME"), InvalidArgumentError, "conv1d", "'input'");
  EXPECT_ERROR(conv1d(zeros({1, 4, 2}), zeros({2, 2}), 1, "SAME"), InvalidArgumentError, "conv1d",
               "'filters'");
}

}  // namespace
}  // namespace ef
