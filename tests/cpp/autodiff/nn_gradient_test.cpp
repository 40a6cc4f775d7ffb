// Gradients of the activations, softmax / log_softmax and the softmax cross-entropy
// losses: check_gradients at first and second order on random float64 inputs away from
// kinks, plus hand-checked values (TensorFlow's choices at the kinks) with GradientTape.
#include <eagerflow/autodiff/gradient_check.h>

#include <cmath>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
using testing::expect_gradients;
using testing::rand64;

Tensor f64(std::vector<double> v) { return constant(v, Shape{static_cast<int64_t>(v.size())}); }

// Random values in [-3, -0.2] u [0.2, 3]: clear of the kinks at 0.
Tensor away_from_zero(const Shape& shape, int64_t seed) {
  Tensor u = rand64(shape, seed, -2.8, 2.8);
  return u + 0.2 * sign(u);
}

// Fixed distinct weights 1, 1.1, 1.2, ... shaped like y: deterministic, unlike a seeded
// random op, which continues its stream on every call (Note [random seeds]).
Tensor weights_like(const Tensor& y) {
  return reshape(add(multiply(range(0, y.shape().num_elements(), 1, y.dtype()), 0.1), 1), y.shape());
}

// sum(w * y) for fixed weights w (a non-uniform upstream gradient).
Tensor weighted(const Tensor& y) {
  return reduce_sum(multiply(y, weights_like(y)));
}

TEST(NnGradient, Activations) {
  Tensor x = away_from_zero({3, 5}, 1);
  std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> cases = {
      {"sigmoid", [](const Tensor& t) { return sigmoid(t); }},
      {"relu", [](const Tensor& t) { return relu(t); }},
      {"relu6", [](const Tensor& t) { return relu6(t); }},
      {"leaky_relu", [](const Tensor& t) { return leaky_relu(t, 0.3); }},
      {"elu", [](const Tensor& t) { return elu(t); }},
      {"selu", [](const Tensor& t) { return selu(t); }},
      {"gelu", [](const Tensor& t) { return gelu(t); }},
      {"gelu_approximate", [](const Tensor& t) { return gelu(t, true); }},
      {"softplus", [](const Tensor& t) { return softplus(t); }},
      {"softsign", [](const Tensor& t) { return softsign(t); }},
  };
  for (auto& [name, activation] : cases) {
    const auto& f = activation;  // clang 14 captures no structured bindings
    SCOPED_TRACE(name);
    // Plain and squared (so that second derivatives of piecewise-linear ones are not zero).
    expect_gradients([&](const std::vector<Tensor>& in) { return weighted(f(in[0])); }, {x});
    expect_gradients([&](const std::vector<Tensor>& in) { return weighted(square(f(in[0]))); }, {x});
  }
  // relu6 around its upper kink.
  expect_gradients([](const std::vector<Tensor>& in) { return weighted(square(relu6(in[0]))); },
                   {f64({5.5, 6.5, 5.9, 7})});
}

TEST(NnGradient, ActivationValuesAtKinks) {
  Tensor x = f64({-1, 0, 0.5, 6, 7});
  auto grad = [&](Tensor (*f)(const Tensor&, CallSite)) {
    GradientTape tape;
    tape.watch(x);
    return tape.gradient(f(x, CallSite::current()), x);
  };
  // TensorFlow: relu' (0) = 0, relu6' (0) = relu6' (6) = 0, leaky_relu' (0) = alpha.
  expect_values(grad(relu), {0, 0, 1, 1, 1});
  expect_values(grad(relu6), {0, 0, 1, 0, 0});
  GradientTape tape;
  tape.watch(x);
  expect_values(tape.gradient(leaky_relu(x, 0.1), x), {0.1, 0.1, 1, 1, 1});
  expect_values(grad(sigmoid), {0.19661193324148185, 0.25, 0.2350037122015945, 0.002466509291359931,
                                0.000910221180121784}, 1e-12);
  expect_values(grad(elu), {std::exp(-1.0), 1, 1, 1, 1}, 1e-12);
  expect_values(grad(softsign), {0.25, 1, 1 / 2.25, 1.0 / 49, 1.0 / 64}, 1e-12);
}

TEST(NnGradient, ThirdDerivativeOfSigmoid) {
  // Nested tapes: at 0 the derivatives of sigmoid are 1/4, 0 and -1/8.
  Tensor x = constant(0.0);
  GradientTape t3;
  t3.watch(x);
  Tensor d1, d2;
  {
    GradientTape t2;
    t2.watch(x);
    {
      GradientTape t1;
      t1.watch(x);
      d1 = t1.gradient(sigmoid(x), x);
    }
    d2 = t2.gradient(d1, x);
  }
  Tensor d3 = t3.gradient(d2, x);
  expect_values(d1, {0.25}, 1e-14);
  expect_values(d2, {0}, 1e-14);
  expect_values(d3, {-0.125}, 1e-14);
}

TEST(NnGradient, Softmax) {
  Tensor x = rand64({3, 4, 2}, 5, -2, 2);
  for (int64_t axis : {0, 1, -1}) {
    SCOPED_TRACE(axis);
    expect_gradients([=](const std::vector<Tensor>& in) { return weighted(softmax(in[0], axis)); }, {x});
    expect_gradients([=](const std::vector<Tensor>& in) { return weighted(log_softmax(in[0], axis)); }, {x});
  }
}

TEST(NnGradient, SoftmaxValues) {
  // The gradient of softmax summed over its axis is zero; of one component, y_i (e_i - y).
  Tensor x = f64({1, 2, 3});
  GradientTape tape(true);
  tape.watch(x);
  Tensor y = softmax(x);
  expect_values(tape.gradient(y, x), {0, 0, 0}, 1e-12);
  std::vector<double> p = y.to_vector<double>();
  expect_values(tape.gradient(y, x, f64({1, 0, 0})), {p[0] * (1 - p[0]), -p[0] * p[1], -p[0] * p[2]}, 1e-12);
  Tensor l = log_softmax(x);
  expect_values(tape.gradient(l, x, f64({1, 0, 0})), {1 - p[0], -p[1], -p[2]}, 1e-12);
}

TEST(NnGradient, SoftmaxCrossEntropy) {
  Tensor logits = rand64({3, 4}, 8, -2, 2);
  // Labels that are distributions, and labels that are not (the gradient stays exact).
  Tensor labels = softmax(rand64({3, 4}, 9, -1, 1));
  Tensor raw_labels = rand64({3, 4}, 10, 0, 1);
  for (const Tensor& z : {labels, raw_labels}) {
    expect_gradients(
        [](const std::vector<Tensor>& in) { return weighted(softmax_cross_entropy_with_logits(in[0], in[1])); },
        {z, logits});
    expect_gradients(
        [](const std::vector<Tensor>& in) { return weighted(softmax_cross_entropy_with_logits(in[0], in[1], 0)); },
        {z, logits});
  }
}

TEST(NnGradient, SoftmaxCrossEntropyValues) {
  Tensor logits = reshape(f64({1, 2, 3, 0, 0, 0}), {2, 3});
  Tensor labels = reshape(f64({0, 0, 1, 0.5, 0.5, 0}), {2, 3});
  GradientTape tape;
  tape.watch(labels);
  tape.watch(logits);
  Tensor loss = softmax_cross_entropy_with_logits(labels, logits);
  std::vector<Tensor> sources{labels, logits};
  std::vector<Tensor> d = tape.gradient(loss, sources, f64({1, 2}));
  std::vector<double> p = softmax(logits).to_vector<double>();
  std::vector<double> lp = log_softmax(logits).to_vector<double>();
  expect_values(d[1], {p[0], p[1], p[2] - 1, 2 * (p[3] - 0.5), 2 * (p[4] - 0.5), 2 * p[5]}, 1e-12);
  expect_values(d[0], {-lp[0], -lp[1], -lp[2], -2 * lp[3], -2 * lp[4], -2 * lp[5]}, 1e-12);
}

TEST(NnGradient, SparseSoftmaxCrossEntropy) {
  Tensor logits = rand64({4, 3}, 13, -2, 2);
  Tensor labels = testing::i64({2, 0, 1, 2});
  expect_gradients(
      [=](const std::vector<Tensor>& in) { return weighted(sparse_softmax_cross_entropy_with_logits(labels, in[0])); },
      {logits});
  // Batch of shape [2, 2] over 3 classes.
  Tensor labels2 = testing::i64({0, 2, 1, 1}, {2, 2});
  expect_gradients(
      [=](const std::vector<Tensor>& in) { return weighted(sparse_softmax_cross_entropy_with_logits(labels2, in[0])); },
      {reshape(logits, {2, 2, 3})});
}

TEST(NnGradient, SparseSoftmaxCrossEntropyValues) {
  Tensor logits = reshape(f64({1, 2, 3, 0, 0, 0}), {2, 3});
  Tensor labels = constant(std::vector<int32_t>{2, 0}, Shape{2});
  GradientTape tape;
  tape.watch(logits);
  Tensor d = tape.gradient(sparse_softmax_cross_entropy_with_logits(labels, logits), logits);
  std::vector<double> p = softmax(logits).to_vector<double>();
  expect_values(d, {p[0], p[1], p[2] - 1, p[3] - 1, p[4], p[5]}, 1e-12);
}

TEST(NnGradient, EveryPrimitiveHasAGradient) {
  for (const char* name : {"sigmoid", "relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "softplus", "softsign",
                           "softmax", "log_softmax", "softmax_cross_entropy_with_logits",
                           "sparse_softmax_cross_entropy_with_logits", "matmul"})
    EXPECT_NE(find_op(name).gradient, nullptr) << name;
}

TEST(NnGradient, Composites) {
  Tensor x = rand64({3, 4}, 16, -2, 2), z = rand64({3, 4}, 17, 0, 1), b = rand64({4}, 18);
  expect_gradients(
      [](const std::vector<Tensor>& in) { return weighted(sigmoid_cross_entropy_with_logits(in[0], in[1])); },
      {z, x});
  expect_gradients([](const std::vector<Tensor>& in) { return weighted(square(bias_add(in[0], in[1]))); }, {x, b});
  expect_gradients([](const std::vector<Tensor>& in) { return weighted(l2_normalize(in[0], 1)); }, {x});
}

}  // namespace
}  // namespace ef
