// Gradients of the reductions and scans: check_gradients (float64 central differences,
// first and second order) on random inputs away from ties and zeros, plus hand-checked
// values at ties and zeros with GradientTape directly.
#include <eagerflow/autodiff/gradient_check.h>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
using testing::expect_gradients;

Tensor rand64(const Shape& shape, double lo, double hi, int64_t seed) {
  return random::uniform(shape, lo, hi, DType::Float64, seed);
}

Tensor f64(std::vector<double> v) { return constant(v, Shape{static_cast<int64_t>(v.size())}); }

// Fixed distinct weights 1, 1.1, 1.2, ... shaped like y: deterministic, unlike a seeded
// random op, which continues its stream on every call (Note [random seeds]).
Tensor weights_like(const Tensor& y) {
  return reshape(add(multiply(range(0, y.shape().num_elements(), 1, y.dtype()), 0.1), 1), y.shape());
}

// d(sum(w * f(x)))/dx for fixed weights w: a non-uniform upstream gradient.
Tensor weighted(const Tensor& y) {
  return reduce_sum(multiply(y, weights_like(y)));
}

TEST(ReductionGradient, ReduceSum) {
  Tensor x = rand64({2, 3, 4}, -1, 1, 1);
  // Squared so that the second derivative is not trivially zero.
  for (Axes axes : {Axes(), Axes(1), Axes(-1), Axes({0, 2}), Axes(std::vector<int64_t>{})})
    for (bool keep : {false, true})
      expect_gradients([&](const std::vector<Tensor>& in) { return weighted(reduce_sum(square(in[0]), axes, keep)); },
                       {x});
  expect_gradients([](const std::vector<Tensor>& in) { return reduce_sum(in[0]); }, {constant(2.5)});
}

TEST(ReductionGradient, SumToShapeOf) {
  const Tensor like = zeros({3, 1});
  expect_gradients(
      [&](const std::vector<Tensor>& in) { return weighted(sum_to_shape_of(square(in[0]), like)); },
      {rand64({2, 3, 4}, -1, 1, 2)});
}

TEST(ReductionGradient, ReduceSumValues) {
  Tensor x = reshape(f64({1, 2, 3, 4, 5, 6}), {2, 3});
  GradientTape tape;
  tape.watch(x);
  Tensor y = reduce_sum(x, 1);
  Tensor dx = tape.gradient(y, x, f64({10, 20}));
  expect_values(dx, {10, 10, 10, 20, 20, 20});
}

TEST(ReductionGradient, ReduceMaxMin) {
  Tensor x = rand64({3, 4, 2}, -1, 1, 2);  // continuous: no ties
  for (Axes axes : {Axes(), Axes(1), Axes({0, 2})})
    for (bool keep : {false, true}) {
      expect_gradients([&](const std::vector<Tensor>& in) { return weighted(reduce_max(in[0], axes, keep)); }, {x});
      expect_gradients([&](const std::vector<Tensor>& in) { return weighted(reduce_min(in[0], axes, keep)); }, {x});
    }
}

TEST(ReductionGradient, ReduceMaxTiesShareTheGradient) {
  Tensor x = reshape(f64({1, 3, 3, 5, 2, 5}), {2, 3});
  GradientTape tape(true);
  tape.watch(x);
  Tensor y = reduce_max(x, 1);
  expect_values(tape.gradient(y, x, f64({2, 4})), {0, 1, 1, 2, 0, 2});
  Tensor m = reduce_min(x);
  expect_values(tape.gradient(m, x), {1, 0, 0, 0, 0, 0});
}

TEST(ReductionGradient, ReduceProd) {
  Tensor x = rand64({3, 4, 2}, 0.5, 1.5, 3);
  for (Axes axes : {Axes(), Axes(1), Axes(0), Axes({0, 2}), Axes(std::vector<int64_t>{})})
    for (bool keep : {false, true})
      expect_gradients([&](const std::vector<Tensor>& in) { return weighted(reduce_prod(in[0], axes, keep)); },
                       {x});
}

TEST(ReductionGradient, ReduceProdWithZeros) {
  // The product of the other elements, without dividing by x.
  Tensor x = reshape(f64({2, 0, 3, 0, 0, 4}), {2, 3});
  GradientTape tape(true);
  tape.watch(x);
  expect_values(tape.gradient(reduce_prod(x, 1), x), {0, 6, 0, 0, 0, 0});
  expect_values(tape.gradient(reduce_prod(x, {0, 1}), x), {0, 0, 0, 0, 0, 0});
  Tensor z = f64({2, 0, 3, 5});
  GradientTape t2;
  t2.watch(z);
  expect_values(t2.gradient(reduce_prod(z), z), {0, 30, 0, 0});
  Tensor m = reshape(f64({0, 1.5, -2, 0.5, 0, 3, 1, 2, 0, 0, 2, 1}), {3, 2, 2});
  for (Axes axes : {Axes(), Axes(1), Axes({0, 2})})
    expect_gradients([&](const std::vector<Tensor>& in) { return weighted(reduce_prod(in[0], axes)); }, {m}, 1);
}

TEST(ReductionGradient, Cumsum) {
  Tensor x = rand64({3, 4}, -1, 1, 4);
  for (int64_t axis : {0, 1, -1})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true})
        expect_gradients(
            [&](const std::vector<Tensor>& in) { return weighted(square(cumsum(in[0], axis, exclusive, reverse))); },
            {x});
}

TEST(ReductionGradient, CumsumValues) {
  Tensor x = f64({1, 2, 3});
  GradientTape tape(true);
  tape.watch(x);
  Tensor w = f64({1, 10, 100});
  expect_values(tape.gradient(cumsum(x), x, w), {111, 110, 100});
  expect_values(tape.gradient(cumsum(x, 0, true), x, w), {110, 100, 0});
  expect_values(tape.gradient(cumsum(x, 0, false, true), x, w), {1, 11, 111});
  expect_values(tape.gradient(cumsum(x, 0, true, true), x, w), {0, 1, 11});
}

TEST(ReductionGradient, Cumprod) {
  // Away from zero: cumprod's gradient divides by x, as TensorFlow's.
  Tensor x = rand64({3, 4}, 0.5, 1.5, 5);
  for (int64_t axis : {0, 1})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true})
        expect_gradients(
            [&](const std::vector<Tensor>& in) { return weighted(cumprod(in[0], axis, exclusive, reverse)); },
            {x});
}

TEST(ReductionGradient, CumprodWithZeros) {
  // Exact at first order (TensorFlow's formula divides by zero here); cumprod is
  // multilinear, so central differences are exact at zeros too.
  Tensor x = f64({2, 0, 3, 0, 5});
  GradientTape tape(true);
  tape.watch(x);
  expect_values(tape.gradient(cumprod(x), x), {1, 8, 0, 0, 0});
  expect_values(tape.gradient(cumprod(x, 0, true), x), {1, 8, 0, 0, 0});
  Tensor r = f64({5, 0, 3, 0, 2});
  GradientTape t2(true);
  t2.watch(r);
  expect_values(t2.gradient(cumprod(r, 0, false, true), r), {0, 0, 0, 8, 1});
  expect_values(t2.gradient(cumprod(r, 0, true, true), r), {0, 0, 0, 8, 1});
  Tensor m = reshape(f64({0, 1.5, -2, 0.5, 0, 3, 1, 2, 0, 0, 2, 1}), {3, 4});
  for (int64_t axis : {0, 1})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true})
        expect_gradients(
            [&](const std::vector<Tensor>& in) { return weighted(cumprod(in[0], axis, exclusive, reverse)); },
            {m}, 1);
}

TEST(ReductionGradient, CumprodValues) {
  Tensor x = f64({2, 3, 4});
  GradientTape tape;
  tape.watch(x);
  // y = [2, 6, 24]; d(sum y)/dx = [1 + 3 + 12, 2 + 8, 6].
  expect_values(tape.gradient(cumprod(x), x), {16, 10, 6});
}

TEST(ReductionGradient, Composites) {
  Tensor x = rand64({3, 4}, -1, 1, 6);
  auto f = [](std::function<Tensor(const Tensor&)> g) {
    return [g](const std::vector<Tensor>& in) { return weighted(g(in[0])); };
  };
  expect_gradients(f([](const Tensor& t) { return reduce_mean(t, 1); }), {x});
  expect_gradients(f([](const Tensor& t) { return reduce_mean(t, {}, true); }), {x});
  expect_gradients(f([](const Tensor& t) { return reduce_logsumexp(t, 0); }), {x});
  expect_gradients(f([](const Tensor& t) { return reduce_logsumexp(t); }), {x});
  expect_gradients(f([](const Tensor& t) { return reduce_variance(t, 1); }), {x});
  expect_gradients(f([](const Tensor& t) { return reduce_std(t, 0, true); }), {x});
}

TEST(ReductionGradient, EmptyScalarAndFloat32) {
  Tensor e = zeros({0, 3}, DType::Float64);
  GradientTape tape(true);
  tape.watch(e);
  EXPECT_EQ(tape.gradient(reduce_sum(e, 0), e).shape(), e.shape());
  EXPECT_EQ(tape.gradient(reduce_prod(e), e).shape(), e.shape());
  EXPECT_EQ(tape.gradient(cumsum(e, 1), e).shape(), e.shape());
  Tensor s = constant(3.0);
  GradientTape t2(true);
  t2.watch(s);
  expect_values(t2.gradient(reduce_prod(s), s), {1});
  expect_values(t2.gradient(reduce_max(s), s), {1});
  Tensor x = constant(std::vector<float>{1, 2, 3, 4}, Shape{2, 2});
  GradientTape t3;
  t3.watch(x);
  Tensor dx = t3.gradient(reduce_prod(x, 1), x);
  EXPECT_EQ(dx.dtype(), DType::Float32);
  expect_values(dx, {2, 1, 4, 3});
}

TEST(ReductionGradient, NotDifferentiable) {
  for (const char* name : {"argmax", "argmin", "reduce_any", "reduce_all"}) {
    const OpDef& op = find_op(name);
    EXPECT_EQ(op.gradient, nullptr) << name;
    EXPECT_FALSE(op.not_differentiable.empty()) << name;
  }
  for (const char* name : {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "cumsum", "cumprod"})
    EXPECT_NE(find_op(name).gradient, nullptr) << name;
  // No gradient flows through an index.
  Tensor x = f64({1, 3, 2});
  GradientTape tape;
  tape.watch(x);
  Tensor y = multiply(x, cast(argmax(x), DType::Float64));
  expect_values(tape.gradient(reduce_sum(y), x), {1, 1, 1});
}

}  // namespace
}  // namespace ef
