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

TEST(FunctionTransforms, FactorialByComposingGradientsFunction) {
  // The seed's form: each gradients_function returns a list, which the next one
  // differentiates as the sum of its entries.
  double factorial = 1;
  for (int n = 1; n <= 6; ++n) {
    factorial *= n;
    TensorsFunction f = [n](const std::vector<Tensor>& a) {
      return std::vector<Tensor>{pow(a[0], static_cast<double>(n))};
    };
    for (int i = 0; i < n; ++i) f = gradients_function(f);
    EXPECT_DOUBLE_EQ(f({constant(1.0)}).at(0).item<double>(), factorial) << "n = " << n;
  }
}

TEST(FunctionTransforms, SeveralOutputsAreDifferentiatedAsTheirSum) {
  TensorsFunction f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{a[0] * a[1], square(a[0]), constant({1.0, 2.0}), cast(a[0], DType::Int32)};
  };
  std::vector<Tensor> grads = gradients_function(f)({constant(3.0), constant(4.0)});
  EXPECT_DOUBLE_EQ(grads[0].item<double>(), 4.0 + 6.0);  // y + 2x; constants and ints add nothing
  EXPECT_DOUBLE_EQ(grads[1].item<double>(), 3.0);
  auto [values, same] = value_and_gradients_function(f)({constant(3.0), constant(4.0)});
  ASSERT_EQ(values.size(), 4u);
  EXPECT_DOUBLE_EQ(values[0].item<double>(), 12.0);
  EXPECT_DOUBLE_EQ(same[0].item<double>(), 10.0);
}

TEST(FunctionTransforms, UnconnectedArgumentsAreUndefinedOrZeros) {
  TensorFunction f = [](const std::vector<Tensor>& a) { return a[0] * 2.0; };
  std::vector<Tensor> grads = gradients_function(f)({constant(3.0), constant(4.0)});
  EXPECT_EQ(grads[0].item<double>(), 2.0);
  EXPECT_FALSE(grads[1].defined());
  grads = gradients_function(f, {}, UnconnectedGradients::Zero)({constant(3.0), constant(4.0)});
  EXPECT_EQ(grads[1].item<double>(), 0.0);
  // x*x's third derivative: the second does not depend on x.
  TensorsFunction square_fn = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] * a[0]}; };
  EXPECT_FALSE(
      gradients_function(gradients_function(gradients_function(square_fn)))({constant(3.0)})[0].defined());
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

TEST(FunctionTransforms, ImplicitGradientsPairEachTrainableVariableWithItsGradient) {
  // The announcement's eager model: loss of W * x + b, gradients for every variable read.
  Variable W(constant(2.0), "W"), b(constant(0.5), "b"), unused(constant(1.0), "unused");
  Variable frozen(constant(10.0), "frozen", /*trainable=*/false);
  TensorFunction loss = [&](const std::vector<Tensor>& a) {
    Tensor scaled = W * a[0];  // W is read first (operands of one expression have no set order)
    Tensor prediction = scaled + b + frozen * 0;
    return reduce_sum(square(prediction - a[1]));
  };
  std::vector<Tensor> args = {constant({1.0, 2.0}), constant({3.0, 3.0})};
  VariableGradients grads = implicit_gradients(loss)(args);
  ASSERT_EQ(grads.size(), 2u);  // frozen is not trainable; unused is never read
  EXPECT_EQ(grads[0].second.name(), "W");
  EXPECT_EQ(grads[1].second.name(), "b");
  // residuals r = (2.5 - 3, 4.5 - 3) = (-0.5, 1.5): dW = sum 2 r x = 5, db = sum 2 r = 2
  EXPECT_DOUBLE_EQ(grads[0].first.item<double>(), 5.0);
  EXPECT_DOUBLE_EQ(grads[1].first.item<double>(), 2.0);

  auto [value, same] = implicit_value_and_gradients([&] { return loss(args); })();
  EXPECT_DOUBLE_EQ(value.item<double>(), 0.25 + 2.25);
  EXPECT_DOUBLE_EQ(same[0].first.item<double>(), 5.0);

  EXPECT_ERROR(implicit_gradients([] { return constant(1.0) * 2; })(), InvalidArgumentError,
               "read no trainable variables");

  // Several outputs: the gradients of their sum.
  auto [values, pairs] = implicit_value_and_gradients([&] {
    return std::vector<Tensor>{W * 3.0, square(W) + b};
  })();
  ASSERT_EQ(values.size(), 2u);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_DOUBLE_EQ(pairs[0].first.item<double>(), 3.0 + 2 * 2.0);
  EXPECT_DOUBLE_EQ(pairs[1].first.item<double>(), 1.0);
}

TEST(FunctionTransforms, ImplicitGradientsTrainALinearModel) {
  // A few steps of gradient descent on y = 3 x + 1 with the pairs applied as they come.
  Variable W(constant(0.0), "W"), b(constant(0.0), "b");
  Tensor x = constant({0.0, 1.0, 2.0, 3.0}), y = 3 * x + 1;
  auto step = implicit_value_and_gradients([&] { return reduce_mean(square(W * x + b - y)); });
  double first_loss = step().first.item<double>();
  for (int i = 0; i < 500; ++i)
    for (auto& [g, v] : step().second) v.assign_sub(0.1 * g);
  EXPECT_LT(step().first.item<double>(), 1e-8 * first_loss);
  EXPECT_NEAR(W.value().item<double>(), 3.0, 1e-4);
  EXPECT_NEAR(b.value().item<double>(), 1.0, 1e-4);
}

}  // namespace
}  // namespace ef
