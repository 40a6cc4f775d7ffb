// grad, gradients_function and value_and_gradients_function, including the seed's
// "expensive factorial" by repeated differentiation.
#include "test_util.h"

namespace ef {
namespace {

TEST(FunctionTransforms, FactorialByComposingGrad) {
  double factorial = 1;
  for (int n = 1; n <= 6; ++n) {
    factorial *= n;
    UnaryFunction f = [n](const Tensor& x) { return pow(x, static_cast<double>(n)); };
    for (int i = 0; i < n; ++i) f = grad(f);
    EXPECT_DOUBLE_EQ(f(constant(1.0)).item<double>(), factorial) << "n = " << n;
  }
}

TEST(FunctionTransforms, GradBeyondTheDegreeIsZero) {
  UnaryFunction f = [](const Tensor& x) { return x * x; };
  EXPECT_EQ(grad(grad(grad(f)))(constant(3.0)).item<double>(), 0.0);
}

TEST(FunctionTransforms, GradientsFunctionSelectsParameters) {
  TensorFunction f = [](const std::vector<Tensor>& a) { return a[0] * a[1] + a[1]; };
  std::vector<Tensor> args = {constant(3.0), constant(4.0)};
  std::vector<Tensor> all = gradients_function(f)(args);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].item<double>(), 4.0);
  EXPECT_EQ(all[1].item<double>(), 4.0);
  std::vector<Tensor> second = gradients_function(f, {1})(args);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].item<double>(), 4.0);
  EXPECT_ERROR(gradients_function(f, {2})(args), InvalidArgumentError, "parameter index 2");
}

TEST(FunctionTransforms, ValueAndGradients) {
  TensorFunction f = [](const std::vector<Tensor>& a) { return reduce_sum(exp(a[0])); };
  auto [value, grads] = value_and_gradients_function(f)({constant({0.0, 1.0})});
  EXPECT_DOUBLE_EQ(value.item<double>(), 1 + std::exp(1.0));
  testing::expect_values(grads[0], {1, std::exp(1.0)});
}

TEST(FunctionTransforms, NoisySquareDescent) {
  // The seed's noisy_square loop without its custom gradient: x -= 0.9 * grad(x).
  UnaryFunction square = [](const Tensor& x) { return x * x; };
  UnaryFunction dsquare = grad(square);
  Tensor x = constant(2.0);
  for (int i = 0; i < 20; ++i) x = x - 0.9 * dsquare(x);
  EXPECT_NEAR(x.item<double>(), 2 * std::pow(-0.8, 20), 1e-12);
}

}  // namespace
}  // namespace ef
