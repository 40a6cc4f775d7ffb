// sigmoid_grad: values, broadcasting, dtypes, errors, and its own gradients (first and
// second order), which sigmoid's higher derivatives go through.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::expect_meta;
using testing::expect_values;

TEST(SigmoidGrad, ValuesMatchTheComposite) {
  Tensor y = constant({0.0, 0.25, 0.5, 0.9, 1.0});
  Tensor dy = constant({1.0, 2.0, -1.0, 0.5, 3.0});
  expect_values(sigmoid_grad(y, dy), {0, 2 * 0.1875, -0.25, 0.5 * 0.09, 0}, 1e-15);
  Tensor y32 = constant({0.3f, 0.7f}), dy32 = constant({1.5f, -2.0f});
  Tensor out = sigmoid_grad(y32, dy32);
  expect_meta(out, {2}, DType::Float32);
  std::vector<float> got = out.to_vector<float>();
  EXPECT_EQ(got[0], 1.5f * (0.3f * (1 - 0.3f)));  // bit for bit the composite's float32 result
  EXPECT_EQ(got[1], -2.0f * (0.7f * (1 - 0.7f)));
}

TEST(SigmoidGrad, BroadcastsScalarsAndEmpty) {
  expect_values(sigmoid_grad(constant({0.5, 0.25}), constant(4.0)), {1.0, 0.75});
  expect_values(sigmoid_grad(constant(0.5), constant({{1.0}, {2.0}})), {0.25, 0.5});
  expect_meta(sigmoid_grad(zeros({0, 3}, DType::Float64), ones({3}, DType::Float64)), {0, 3}, DType::Float64);
}

TEST(SigmoidGrad, IsSigmoidsGradient) {
  Tensor x = constant({-3.0, -0.5, 0.0, 2.0});
  GradientTape tape;
  tape.watch(x);
  Tensor y = sigmoid(x);
  Tensor g = tape.gradient(y * constant({1.0, 2.0, 3.0, 4.0}), x);
  std::vector<double> xs = x.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    double s = 1 / (1 + std::exp(-xs[i]));
    EXPECT_NEAR(g.to_vector<double>()[i], (i + 1.0) * s * (1 - s), 1e-15);
  }
}

TEST(SigmoidGrad, Gradients) {
  Tensor y = testing::rand64({3, 4}, 5, 0.05, 0.95), dy = testing::rand64({3, 4}, 6);
  expect_gradients([](const std::vector<Tensor>& a) { return sigmoid_grad(a[0], a[1]); }, {y, dy});
  // Broadcast dy: its gradient is reduced back to its shape.
  expect_gradients([](const std::vector<Tensor>& a) { return sigmoid_grad(a[0], a[1]); },
                   {y, testing::rand64({4}, 7)});
}

TEST(SigmoidGrad, Errors) {
  EXPECT_ERROR(sigmoid_grad(constant({1, 2}), constant({1, 2})), InvalidArgumentError, "sigmoid_grad",
               "int32");
  EXPECT_ERROR(sigmoid_grad(constant({0.5f}), constant({0.5})), InvalidArgumentError, "sigmoid_grad",
               "float64");
  EXPECT_ERROR(sigmoid_grad(constant({0.5, 0.5}), constant({1.0, 2.0, 3.0})), InvalidArgumentError,
               "[2] and [3]");
}

}  // namespace
}  // namespace ef
