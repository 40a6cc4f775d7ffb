// Every differentiable elementwise math op against float64 central differences, at
// first and second order, with broadcasting for the binary ones.
#include <functional>

#include "test_util.h"

namespace ef {
namespace {

using testing::check_gradients;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

Tensor uniform(const Shape& shape, double lo, double hi, int64_t seed) {
  return random::uniform(shape, lo, hi, DType::Float64, seed);
}

struct UnaryGradCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  double lo, hi;  // an input range away from non-differentiable points and poles
};

TEST(MathGradients, UnaryOps) {
  std::vector<UnaryGradCase> cases = {
      {"negative", [](auto& x) { return negative(x); }, -2, 2},
      {"abs", [](auto& x) { return abs(x); }, 0.2, 2},
      {"square", [](auto& x) { return square(x); }, -2, 2},
      {"reciprocal", [](auto& x) { return reciprocal(x); }, 0.5, 2},
      {"exp", [](auto& x) { return exp(x); }, -2, 2},
      {"expm1", [](auto& x) { return expm1(x); }, -2, 2},
      {"log", [](auto& x) { return log(x); }, 0.5, 3},
      {"log1p", [](auto& x) { return log1p(x); }, -0.5, 3},
      {"sqrt", [](auto& x) { return sqrt(x); }, 0.5, 3},
      {"rsqrt", [](auto& x) { return rsqrt(x); }, 0.5, 3},
      {"sin", [](auto& x) { return sin(x); }, -3, 3},
      {"cos", [](auto& x) { return cos(x); }, -3, 3},
      {"tan", [](auto& x) { return tan(x); }, -1, 1},
      {"asin", [](auto& x) { return asin(x); }, -0.8, 0.8},
      {"acos", [](auto& x) { return acos(x); }, -0.8, 0.8},
      {"atan", [](auto& x) { return atan(x); }, -2, 2},
      {"sinh", [](auto& x) { return sinh(x); }, -2, 2},
      {"cosh", [](auto& x) { return cosh(x); }, -2, 2},
      {"tanh", [](auto& x) { return tanh(x); }, -2, 2},
      {"erf", [](auto& x) { return erf(x); }, -2, 2},
  };
  int64_t seed = 1;
  for (const UnaryGradCase& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = uniform({2, 3}, c.lo, c.hi, seed++);
    Fn f = [&](const std::vector<Tensor>& in) { return c.op(in[0]); };
    auto result = check_gradients(f, {x});
    EXPECT_TRUE(result.ok) << result.message;
  }
}

TEST(MathGradients, BinaryOpsWithBroadcasting) {
  std::vector<std::pair<const char*, std::function<Tensor(const Tensor&, const Tensor&)>>> cases = {
      {"add", [](auto& a, auto& b) { return add(a, b); }},
      {"subtract", [](auto& a, auto& b) { return subtract(a, b); }},
      {"multiply", [](auto& a, auto& b) { return multiply(a, b); }},
      {"divide", [](auto& a, auto& b) { return divide(a, b); }},
      {"pow", [](auto& a, auto& b) { return pow(a, b); }},
      {"maximum", [](auto& a, auto& b) { return maximum(a, b); }},
      {"minimum", [](auto& a, auto& b) { return minimum(a, b); }},
      {"squared_difference", [](auto& a, auto& b) { return squared_difference(a, b); }},
      {"floormod", [](auto& a, auto& b) { return floormod(a, b); }},
  };
  int64_t seed = 100;
  for (auto& [name, binary_op] : cases) {
    SCOPED_TRACE(name);
    const auto& op = binary_op;  // clang 14 captures no structured bindings
    // Positive, well-separated ranges keep pow, divide, max/min and floormod smooth.
    Tensor a = uniform({2, 3}, 1.1, 1.9, seed++);
    Tensor b = uniform({3}, 2.1, 2.9, seed++);
    Fn f = [&](const std::vector<Tensor>& in) { return op(in[0], in[1]); };
    auto result = check_gradients(f, {a, b});
    EXPECT_TRUE(result.ok) << result.message;
    Fn swapped = [&](const std::vector<Tensor>& in) { return op(in[1], in[0]); };
    result = check_gradients(swapped, {a, b});
    EXPECT_TRUE(result.ok) << result.message;
  }
}

TEST(MathGradients, CastPassesGradientsBackInTheInputsDtype) {
  Tensor x = constant({1.0, 2.0});
  GradientTape tape;
  tape.watch(x);
  Tensor y = cast(x, DType::Float32) * 3.f;
  Tensor g = tape.gradient(y, x);
  testing::expect_meta(g, Shape{2}, DType::Float64);
  testing::expect_values(g, {3, 3});

  // Through float32 and back: the differences see float32 rounding of x ± h, hence the
  // loose tolerance (a wrong gradient is off by far more).
  auto through_float32 = [](const std::vector<Tensor>& a) {
    Tensor x32 = cast(a[0], DType::Float32);
    return cast(x32 * x32, DType::Float64);
  };
  testing::GradientCheckResult r = testing::check_gradients(through_float32, {constant({0.5, 1.5, -2.0})}, 2, 1e-2);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(MathGradients, ConventionsAtNonDifferentiablePoints) {
  Tensor x = constant({0.0, 1.0, 2.0});
  Tensor y = constant({0.0, 1.0, 1.0});
  GradientTape tape(true);
  tape.watch(x);
  tape.watch(y);
  // Ties in maximum/minimum send the gradient to the first argument (TensorFlow).
  Tensor m = maximum(x, y);
  std::vector<Tensor> g = tape.gradient(m, std::vector<Tensor>{x, y});
  testing::expect_values(g[0], {1, 1, 1});
  testing::expect_values(g[1], {0, 0, 0});
  // abs at 0 has gradient 0; pow's exponent gradient is 0 where the base is 0.
  testing::expect_values(tape.gradient(abs(x), x), {0, 1, 1});
  testing::expect_values(tape.gradient(pow(x, y), y), {0, 0, std::log(2.0) * 2});
}

// x^y at x == 0 is smooth in x for y in {0, 1, 2, 3}; its derivatives there reach
// 0 * 0^-1 (d/dx x^0), which must come out 0, not NaN, at every order.
TEST(MathGradients, PowAtZeroBaseHasExactHigherDerivatives) {
  Tensor y = constant({0.0, 1.0, 2.0, 3.0});
  Fn f = [&](const std::vector<Tensor>& in) { return pow(in[0], y); };
  testing::expect_gradients(f, {constant({0.0, 0.0, 0.0, 0.0})});
  testing::expect_gradients(f, {constant({0.0, 0.5, -1.5, 0.0})});
  // Third derivatives at 0: of x^2 it is 0, of x^3 it is 6.
  Tensor x = constant({0.0, 0.0});
  GradientTape t3, t2, t1;
  for (GradientTape* t : {&t3, &t2, &t1}) t->watch(x);
  Tensor z = pow(x, constant({2.0, 3.0}));
  Tensor d1 = t1.gradient(z, x);
  Tensor d2 = t2.gradient(d1, x);
  testing::expect_values(t3.gradient(d2, x), {0, 6});
  // The exponent's gradient where x == 0 stays 0 (TensorFlow's convention).
  GradientTape tape;
  tape.watch(y);
  testing::expect_values(tape.gradient(pow(constant({0.0, 0.0, 0.0, 0.0}), y), y), {0, 0, 0, 0});
}

TEST(MathGradients, CheckGradientsCatchesAWrongGradient) {
  // A function whose value and tape gradient disagree: stop_gradient hides a term.
  Fn f = [](const std::vector<Tensor>& in) { return in[0] * stop_gradient(in[0]); };
  auto result = check_gradients(f, {constant({1.0, 2.0})}, 1);
  EXPECT_FALSE(result.ok);
  EXPECT_THAT(result.message, ::testing::HasSubstr("order 1"));
}

}  // namespace
}  // namespace ef
